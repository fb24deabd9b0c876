package train

import "sync"

// Prefetch runs a producer on a background goroutine ahead of its consumer: the mini-batch
// trainers build batch k+1 (sample its subgraph, gather its features into pinned memory, start
// its upload) while batch k trains.
//
// The producer fills one of sets buffer sets per item, set = item mod sets, so it can run
// sets−1 items ahead; an item's set is handed back when the consumer asks for the next item with
// [Prefetch.Next]. A consumer that holds more than one item at a time (batch k+1 fetched while batch
// k still trains) takes items with [Prefetch.Take] and hands their sets back, oldest first, with
// [Prefetch.Release].
type Prefetch[T any] struct {
	items  chan prefetched[T]
	tokens chan struct{} // one per buffer set not in use
	stop   chan struct{}
	done   sync.WaitGroup
	taken  bool // the consumer holds an item
	closed bool
}

type prefetched[T any] struct {
	v   T
	err error
}

// NewPrefetch starts producing items 0 … n−1 with produce(i, set), using sets ≥ 2 buffer sets.
// The producer stops at its first error, which [Prefetch.Next] returns.
func NewPrefetch[T any](n, sets int, produce func(i, set int) (T, error)) *Prefetch[T] {
	sets = max(sets, 2)
	p := &Prefetch[T]{items: make(chan prefetched[T], sets), tokens: make(chan struct{}, sets), stop: make(chan struct{})}
	for range sets {
		p.tokens <- struct{}{}
	}
	p.done.Add(1)
	go func() {
		defer p.done.Done()
		defer close(p.items)
		for i := range n {
			select {
			case <-p.tokens:
			case <-p.stop:
				return
			}
			v, err := produce(i, i%sets)
			p.items <- prefetched[T]{v, err}
			if err != nil {
				return
			}
		}
	}()
	return p
}

// Next hands back the previous item's buffer set (the item Next returned last) and returns the
// next item; ok is false after the last one.
func (p *Prefetch[T]) Next() (v T, ok bool, err error) {
	if p.taken {
		p.Release()
		p.taken = false
	}
	v, ok, err = p.Take()
	p.taken = ok
	return v, ok, err
}

// Take returns the next item, waiting for the producer if need be; ok is false after the last
// one. The item's buffer set stays the consumer's until it calls [Prefetch.Release].
func (p *Prefetch[T]) Take() (v T, ok bool, err error) {
	it, ok := <-p.items
	if !ok {
		return v, false, nil
	}
	return it.v, true, it.err
}

// Release hands back the buffer set of the oldest item the consumer took with [Prefetch.Take].
func (p *Prefetch[T]) Release() { p.tokens <- struct{}{} }

// Close stops the producer and waits for it to finish the item it is producing.
func (p *Prefetch[T]) Close() {
	if p.closed {
		return
	}
	p.closed = true
	close(p.stop)
	for range p.items { // unblock a producer waiting to hand over an item
	}
	p.done.Wait()
}
