package train

import (
	"errors"
	"sync/atomic"
	"testing"
)

// TestPrefetch checks that items arrive in order, that the producer never fills a buffer set
// the consumer still holds (here two at a time, as a trainer that fetches batch k+1 while batch k
// trains), that an error stops production and reaches the consumer, and that Close stops a
// producer early.
func TestPrefetch(t *testing.T) {
	const n, sets = 50, 3
	var inUse [sets]atomic.Bool
	p := NewPrefetch(n, sets, func(i, set int) (int, error) {
		if inUse[set].Load() {
			t.Errorf("item %d fills set %d while the consumer holds it", i, set)
		}
		return i*sets + set, nil
	})
	var held []int
	for want := 0; ; want++ {
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
		inUse[v%sets].Store(true)
		if held = append(held, v%sets); len(held) == 2 {
			inUse[held[0]].Store(false)
			held = held[1:]
			p.Release()
		}
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
		p.Release()
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
	p.Release()
	p.Close()
	if n := produced.Load(); n > 3 {
		t.Errorf("the producer ran %d items ahead after Close", n)
	}
}
