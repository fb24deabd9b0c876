package train

import (
	"errors"
	"sync/atomic"
	"testing"
)

// TestPrefetch checks that items arrive in order, that the producer never fills a buffer set
// the consumer still holds, that an error stops production and reaches the consumer, and that
// Close stops a producer early.
func TestPrefetch(t *testing.T) {
	const n, sets = 50, 3
	var inUse [sets]atomic.Bool
	p := NewPrefetch(n, sets, func(i, set int) (int, error) {
		if inUse[set].Load() {
			t.Errorf("item %d fills set %d while the consumer holds it", i, set)
		}
		return i*sets + set, nil
	})
	held := -1
	for want := 0; ; want++ {
		if held >= 0 { // Next hands the held set back
			inUse[held].Store(false)
		}
		v, ok, err := p.Next()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			if want != n {
				t.Fatalf("got %d items, want %d", want, n)
			}
			break
		}
		if v != want*sets+want%sets {
			t.Fatalf("item %d: got %d", want, v)
		}
		held = v % sets
		inUse[held].Store(true)
	}
	p.Close()

	boom := errors.New("boom")
	p = NewPrefetch(10, 2, func(i, _ int) (int, error) {
		if i == 3 {
			return 0, boom
		}
		return i, nil
	})
	var got []int
	for {
		v, ok, err := p.Next()
		if errors.Is(err, boom) {
			break
		}
		if !ok || err != nil {
			t.Fatalf("the error never came (ok %v, err %v) after %v", ok, err, got)
		}
		got = append(got, v)
	}
	if len(got) != 3 {
		t.Errorf("items before the error: %v", got)
	}
	p.Close()

	var produced atomic.Int32
	p = NewPrefetch(1000, 2, func(i, _ int) (int, error) { produced.Add(1); return i, nil })
	if _, _, err := p.Next(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if n := produced.Load(); n > 3 {
		t.Errorf("the producer ran %d items ahead after Close", n)
	}
}

// TestPrefetchTake checks a consumer that holds two items at a time (Take, then Release of the
// older one): the producer never fills a set the consumer still holds, and every item arrives
// once, in order.
func TestPrefetchTake(t *testing.T) {
	const n, sets = 50, 3
	var inUse [sets]atomic.Bool
	p := NewPrefetch(n, sets, func(i, set int) (int, error) {
		if inUse[set].Load() {
			t.Errorf("item %d fills set %d while the consumer holds it", i, set)
		}
		return i, nil
	})
	defer p.Close()
	var held []int
	for want := range n {
		v, ok, err := p.Take()
		if err != nil || !ok || v != want {
			t.Fatalf("item %d: got %d, %v, %v", want, v, ok, err)
		}
		inUse[v%sets].Store(true)
		if held = append(held, v%sets); len(held) == 2 {
			inUse[held[0]].Store(false)
			held = held[1:]
			p.Release()
		}
	}
	if _, ok, _ := p.Take(); ok {
		t.Error("an item after the last")
	}
}
