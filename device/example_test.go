package device_test

import (
	"fmt"
	"log"
	"sync"

	"github.com/gnnprof/gnnprof/device"
	"github.com/gnnprof/gnnprof/trace"
)

// The asynchronous history pull of GNNAutoScale: worker goroutines gather rows into pinned
// buffers, a side stream copies each to the device, and the compute stream waits for the copy's
// event before it aggregates the rows.
func Example_asyncPull() {
	sink, _ := trace.NewMemorySink()
	rec := trace.NewRecorder(sink)
	defer rec.Close()
	dev, err := device.NewCPU(device.CPUConfig{MemoryLimit: 1 << 30, Recorder: rec})
	check(err)
	defer dev.Close()
	host := rec.Lane("main")

	const rows, dim, batches = 4, 8, 3
	history := make([]float32, 100*dim) // the history: pageable host memory
	for i := range history {
		history[i] = float32(i / dim) // row r holds r
	}
	pull, err := dev.NewStream("history pull")
	check(err)
	compute, err := dev.NewStream("compute")
	check(err)

	var wg sync.WaitGroup
	sums := make([]float32, batches)
	for b := range batches {
		staging, err := dev.AllocPinned(rows*dim*4, fmt.Sprintf("staging %d", b))
		check(err)
		onDev, err := dev.Alloc(rows*dim*4, fmt.Sprintf("pulled %d", b))
		check(err)
		wg.Add(1)
		go func() { // gather rows 10b, 10b+1, … into pinned memory
			defer wg.Done()
			dst, err := staging.Float32s()
			check(err)
			for r := range rows {
				copy(dst[r*dim:(r+1)*dim], history[(10*b+r)*dim:])
			}
		}()
		wg.Wait()
		check(pull.CopyAsync(onDev.All(), staging.All()))
		copied, err := pull.Record()
		check(err)
		check(compute.WaitEvent(copied)) // aggregate only once the rows have arrived
		check(compute.Launch("aggregate", func() error {
			x, err := onDev.Float32s()
			for _, v := range x {
				sums[b] += v
			}
			return err
		}))
	}
	check(dev.Synchronize(host))
	fmt.Println(sums)
	m := dev.MemInfo()
	fmt.Printf("device %d B, pinned %d B in use\n", m.Used, m.PinnedUsed)
	// Output:
	// [48 368 688]
	// device 384 B, pinned 384 B in use
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
