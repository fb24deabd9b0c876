package train

import "sync"

// Prefetch runs a producer on a background goroutine ahead of its consumer: the mini-batch
// trainers build batch k+1 (sample its subgraph, gather its features into pinned memory, start
// its upload) while batch k trains.
//
// The producer fills one of sets buffer sets per item, set = item mod sets, so it can run
// sets−1 items ahead; an item's set is handed back when the consumer asks for the next item.
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
// The producer stops at its first error, which Next returns.
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

// Next hands back the previous item's buffer set and returns the next item; ok is false after
// the last one.
func (p *Prefetch[T]) Next() (v T, ok bool, err error) {
	if p.taken {
		p.tokens <- struct{}{}
		p.taken = false
	}
	it, ok := <-p.items
	if !ok {
		return v, false, nil
	}
	p.taken = true
	return it.v, true, it.err
}

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
