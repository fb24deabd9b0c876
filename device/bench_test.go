package device

import (
	"fmt"
	"testing"

	"github.com/gnnprof/gnnprof/trace"
)

// discard is a Sink that drops events, so benchmarks measure recording, not writing files.
type discard struct{}

func (discard) Write([]trace.LaneInfo, []trace.Event) error { return nil }
func (discard) Flush() error                                { return nil }
func (discard) Close() error                                { return nil }

// benchDevice returns a device, recording into a discarding recorder if record is set, and a
// host lane for the caller (nil with recording off).
func benchDevice(b *testing.B, record bool) (*CPU, *trace.Lane) {
	b.Helper()
	var rec *trace.Recorder
	if record {
		rec = trace.NewRecorder(discard{})
		b.Cleanup(func() { rec.Close() })
	}
	dev := newCPU(b, CPUConfig{Recorder: rec})
	if rec == nil {
		return dev, nil
	}
	return dev, rec.Lane("main")
}

var benchSizes = []int64{4 << 10, 256 << 10, 4 << 20, 64 << 20}

// BenchmarkCopy measures copy bandwidth (the MB/s column) host→device and device→host,
// synchronous and asynchronous, from pinned and pageable memory, and asynchronous on two streams
// at once. Recording is on, as in a profiled run.
func BenchmarkCopy(b *testing.B) {
	for _, size := range benchSizes {
		for _, mode := range []string{"sync", "async", "async2streams"} {
			for _, host := range []MemKind{Pinned, Pageable} {
				for _, dir := range []trace.Dir{trace.DirH2D, trace.DirD2H} {
					if mode != "sync" && (host == Pageable || dir == trace.DirD2H) {
						continue // pageable async copies are synchronous; D2H async is H2D's twin
					}
					name := fmt.Sprintf("%s/%s/%s/%s", mode, dir, host, formatBytes(size))
					b.Run(name, func(b *testing.B) { benchCopy(b, mode, host, dir, size) })
				}
			}
		}
	}
}

func benchCopy(b *testing.B, mode string, host MemKind, dir trace.Dir, size int64) {
	dev, lane := benchDevice(b, true)
	nStreams := 1
	if mode == "async2streams" {
		nStreams = 2
	}
	type pair struct{ dst, src Mem }
	var pairs []pair
	var streams []Stream
	for i := range nStreams {
		h := Host(make([]byte, size))
		if host == Pinned {
			h = allocPinned(b, dev, size, "host").All()
		} else {
			fill(h.host, 1) // touch the pages, as allocation does for device memory
		}
		d := alloc(b, dev, size, "device").All()
		p := pair{dst: d, src: h}
		if dir == trace.DirD2H {
			p = pair{dst: h, src: d}
		}
		pairs = append(pairs, p)
		streams = append(streams, newStream(b, dev, fmt.Sprintf("copy %d", i)))
	}
	b.SetBytes(size)
	b.ResetTimer()
	// A b.N loop, not b.Loop: the timer must keep running through the final Synchronize.
	for i := range b.N {
		p := pairs[i%nStreams]
		var err error
		if mode == "sync" {
			err = dev.Copy(lane, p.dst, p.src)
		} else {
			err = streams[i%nStreams].CopyAsync(p.dst, p.src)
			if i%1024 == 1023 { // bound the queue
				err = dev.Synchronize(lane)
			}
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := dev.Synchronize(lane); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkTinyCopy measures the per-copy overhead (ns/op) of a 64-byte pinned host-to-device
// copy, with recording off and on. Async copies are queued and synchronized every 256 copies.
func BenchmarkTinyCopy(b *testing.B) {
	for _, mode := range []string{"sync", "async"} {
		for _, record := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/record=%v", mode, record), func(b *testing.B) {
				dev, lane := benchDevice(b, record)
				src, dst := allocPinned(b, dev, 64, "src").All(), alloc(b, dev, 64, "dst").All()
				s := newStream(b, dev, "side")
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N { // not b.Loop: the final Synchronize is part of the work
					var err error
					if mode == "sync" {
						err = dev.Copy(lane, dst, src)
					} else {
						err = s.CopyAsync(dst, src)
						if i%256 == 255 {
							err = s.Synchronize(lane)
						}
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Synchronize(lane); err != nil {
					b.Fatal(err)
				}
			})
		}
	}
}

// BenchmarkAllocFree measures an accounted, recorded allocation and free of 64 KiB of device
// memory (the pages are touched on allocation).
func BenchmarkAllocFree(b *testing.B) {
	for _, record := range []bool{false, true} {
		b.Run(fmt.Sprintf("record=%v", record), func(b *testing.B) {
			dev, _ := benchDevice(b, record)
			b.ReportAllocs()
			for b.Loop() {
				buf, err := dev.Alloc(64<<10, "activations")
				if err != nil {
					b.Fatal(err)
				}
				if err := dev.Free(buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEventRoundTrip measures recording an event after one queued tiny copy and waiting on
// it from the host: the cost of one cross-goroutine handoff.
func BenchmarkEventRoundTrip(b *testing.B) {
	dev, lane := benchDevice(b, true)
	src, dst := allocPinned(b, dev, 64, "src").All(), alloc(b, dev, 64, "dst").All()
	s := newStream(b, dev, "side")
	b.ReportAllocs()
	for b.Loop() {
		if err := s.CopyAsync(dst, src); err != nil {
			b.Fatal(err)
		}
		ev, err := s.Record()
		if err != nil {
			b.Fatal(err)
		}
		if err := ev.Wait(lane); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyLinkModel measures 4 MiB host-to-device copies on a device with the PCIe 4.0 x16
// link model: the MB/s column should show the model's pinned and pageable bandwidths (less the
// per-copy latency), not memory speed.
func BenchmarkCopyLinkModel(b *testing.B) {
	for _, host := range []MemKind{Pinned, Pageable} {
		b.Run(host.String(), func(b *testing.B) {
			dev := newCPU(b, CPUConfig{Link: PCIe4x16()})
			const size = 4 << 20
			src := Host(make([]byte, size))
			if host == Pinned {
				src = allocPinned(b, dev, size, "host").All()
			}
			dst := alloc(b, dev, size, "device").All()
			b.SetBytes(size)
			for b.Loop() {
				if err := dev.Copy(nil, dst, src); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
