package trace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/gnnprof/gnnprof/internal/jsonscan"
)

// ReadOptions choose what the reader keeps.
type ReadOptions struct {
	KeepFlows  bool // keep flow events (ph s, t, f) as instants; dropped by default (~30% of Kineto events)
	KeepPython bool // keep python_function events; dropped by default
	// Workers is how many goroutines parse events (default GOMAXPROCS).
	Workers int

	slowEvents bool // every event read key by key (fastevent.go's walk off), for tests to compare
}

// ErrTruncated is wrapped by the error [Read] returns when the events stop early: the file ends in
// the middle of its events, or what follows cannot be read (corrupt compressed data, a failing
// disk). The table returned with it holds every complete event before the cut.
var ErrTruncated = errors.New("trace is truncated")

// errNoEvents is wrapped by the error Read returns for a trace without a single usable event.
var errNoEvents = errors.New("trace has no usable events")

// maxDur bounds a credible event duration: about 11.6 days.
const maxDur = 1_000_000_000_000_000

// maxWarnings bounds the distinct warnings kept; further ones are counted.
const maxWarnings = 50

// Read reads a trace from r: gnnprof's own, torch.profiler's Kineto JSON, or torch's legacy JSON
// array, each plain or gzip-compressed. On damaged input it returns what it could read together
// with an error that says where (the byte offset) and what; [ErrTruncated] when the events stop
// early.
func Read(r io.Reader, opt ReadOptions) (*Table, error) {
	return read(r, "trace", opt, 0)
}

// ReadFile reads the trace file at path as [Read] does; its errors name the file. The file's size
// lets it size the table once.
func ReadFile(path string, opt ReadOptions) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading trace: %w", err)
	}
	defer f.Close()
	return read(f, path, opt, uncompressedSize(f))
}

// uncompressedSize returns the size of f's JSON: its size, or for gzip the size its trailer
// records (modulo 4 GiB, as gzip keeps it). 0 when unknown.
func uncompressedSize(f *os.File) int64 {
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return 0
	}
	var head [2]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0
	}
	if head[0] != 0x1f || head[1] != 0x8b {
		return fi.Size()
	}
	var tail [4]byte
	if fi.Size() < 18 {
		return 0
	}
	if _, err := f.ReadAt(tail[:], fi.Size()-4); err != nil {
		return 0
	}
	n := int64(tail[0]) | int64(tail[1])<<8 | int64(tail[2])<<16 | int64(tail[3])<<24
	// A cut file's "trailer" is arbitrary bytes, and the field wraps past 4 GiB: keep the guess
	// between 1:1 and 40:1 (trace JSON compresses 10–30:1).
	if n < fi.Size() {
		n = fi.Size() * 10
	}
	return min(n, fi.Size()*40)
}

func read(r io.Reader, name string, opt ReadOptions, size int64) (*Table, error) {
	var head [2]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	in := io.MultiReader(bytes.NewReader(head[:n]), r)
	compressed := n == 2 && head[0] == 0x1f && head[1] == 0x8b
	if compressed {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		defer zr.Close()
		in = zr
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pl := startPipeline(in, opt, workers)
	m := newMerger(name, opt, size, pl, compressed)
	err = m.run()
	pl.stop()
	return m.t, err
}

// The input is cut into blocks that readers parse at the same time. Blocks start small, so a
// small trace still spreads over the readers, and grow to max bytes. Each block carries a copy of
// the first overlap bytes after it, so the event that straddles its end parses in place. (Tests
// make them tiny, to put block boundaries everywhere.)
var blockSizes = struct{ first, max, overlap int }{64 << 10, 1 << 20, 64 << 10}

// block is a stretch of the input: data[:n] are the bytes at stream offsets [off, off+n), and
// data[n:] the overlap.
type block struct {
	k    int
	off  int64
	n    int
	data []byte
	last bool  // the input ends after it
	err  error // why the input ended there, if not at its end (a read error, corrupt gzip)
}

func (b *block) end() int64 { return b.off + int64(b.n) }

// pipeline runs the producer (reading blocks in order) and the readers (one chunk per block).
// Tokens bound the blocks alive, from their read until the merger releases them.
type pipeline struct {
	blocks  chan *block
	results chan *chunk
	tokens  chan struct{}
	done    chan struct{}
	free    chan []byte // block buffers of the largest size, for reuse
	chunks  chan *chunk // chunks for reuse
	readers []*reader
	wg      sync.WaitGroup
	stopped bool
}

func startPipeline(in io.Reader, opt ReadOptions, workers int) *pipeline {
	live := workers + 4 // a block per reader, the merger's two, the one being read, one queued
	pl := &pipeline{
		blocks:  make(chan *block, workers),
		results: make(chan *chunk, live),
		tokens:  make(chan struct{}, live),
		done:    make(chan struct{}),
		free:    make(chan []byte, live),
		chunks:  make(chan *chunk, live),
	}
	var readers sync.WaitGroup
	for w := range workers {
		rd := newReader(w, opt)
		pl.readers = append(pl.readers, rd)
		readers.Add(1)
		go func() {
			defer readers.Done()
			pl.work(rd)
		}()
	}
	pl.wg.Add(2)
	go func() {
		defer pl.wg.Done()
		pl.produce(in)
	}()
	go func() {
		defer pl.wg.Done()
		readers.Wait()
		close(pl.results)
	}()
	return pl
}

// stop ends the pipeline's goroutines and waits for them.
func (pl *pipeline) stop() {
	if !pl.stopped {
		pl.stopped = true
		close(pl.done)
	}
	for range pl.results { // let the readers finish
	}
	pl.wg.Wait()
}

// produce reads the input into blocks, in order.
func (pl *pipeline) produce(in io.Reader) {
	defer close(pl.blocks)
	size := blockSizes.first
	cur := pl.fill(in, 0, 0, size)
	for cur != nil {
		if cur.last {
			pl.send(cur)
			return
		}
		size = min(2*size, blockSizes.max)
		next := pl.fill(in, cur.k+1, cur.end(), size)
		if next == nil {
			return
		}
		cur.data = append(cur.data[:cur.n], next.data[:min(blockSizes.overlap, next.n)]...)
		if !pl.send(cur) {
			return
		}
		cur = next
	}
}

// fill reads block k of up to size bytes at stream offset off; nil when the pipeline stopped.
func (pl *pipeline) fill(in io.Reader, k int, off int64, size int) *block {
	select {
	case pl.tokens <- struct{}{}:
	case <-pl.done:
		return nil
	}
	var buf []byte
	if size == blockSizes.max {
		select {
		case buf = <-pl.free:
		default:
		}
	}
	if buf == nil {
		buf = make([]byte, size, size+blockSizes.overlap)
	}
	n, err := io.ReadFull(in, buf[:size])
	b := &block{k: k, off: off, n: n, data: buf[:n]}
	switch err {
	case nil:
	case io.EOF, io.ErrUnexpectedEOF:
		b.last = true
	default:
		b.last, b.err = true, err
	}
	return b
}

func (pl *pipeline) send(b *block) bool {
	select {
	case pl.blocks <- b:
		return true
	case <-pl.done:
		return false
	}
}

// work parses blocks: from the first separator in the block that starts an object to the first
// separator at or past the block's end. Where that start is right, the chunk is what reading
// the whole input in order gives for that stretch; the merger checks it.
func (pl *pipeline) work(rd *reader) {
	for b := range pl.blocks {
		c := pl.chunk()
		c.b = b
		rd.begin(c)
		// Block 0 holds the top level's start, which the merger parses itself, on into the events.
		if q := jsonscan.NextElement(b.data, 0); q >= 0 && b.k > 0 {
			c.from = b.off + int64(q)
			rd.parse(b.data, b.off, q, b.n, false, b.last)
		}
		pl.results <- rd.end()
	}
}

// chunk returns an empty chunk, reusing one the merger is done with if it can.
func (pl *pipeline) chunk() *chunk {
	select {
	case c := <-pl.chunks:
		c.reset()
		return c
	default:
		c := &chunk{}
		c.reset()
		return c
	}
}

// release gives back a block (and its chunk) the merger is done with.
func (pl *pipeline) release(c *chunk) {
	if cap(c.b.data) >= blockSizes.max+blockSizes.overlap {
		select {
		case pl.free <- c.b.data[:0]:
		default:
		}
	}
	c.b = nil
	pl.recycle(c)
	<-pl.tokens
}

// recycle keeps a chunk for reuse.
func (pl *pipeline) recycle(c *chunk) {
	select {
	case pl.chunks <- c:
	default:
	}
}
