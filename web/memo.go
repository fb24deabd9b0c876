package web

import (
	"os"
	"strconv"
	"strings"
	"sync"
)

// memo keeps values computed from files, each under a stamp of those files (stampOf); a value is
// computed again when its files change. It holds at most max entries, dropping the least recently
// used. Failed computations are not kept.
type memo[T any] struct {
	mu      sync.Mutex
	max     int
	entries map[string]*memoEntry[T]
	clock   uint64
}

type memoEntry[T any] struct {
	stamp string
	val   T
	used  uint64
}

func newMemo[T any](max int) *memo[T] {
	return &memo[T]{max: max, entries: map[string]*memoEntry[T]{}}
}

// get returns the value kept under key if its stamp is stamp, else computes, keeps and returns it.
func (m *memo[T]) get(key, stamp string, compute func() (T, error)) (T, error) {
	m.mu.Lock()
	if e, ok := m.entries[key]; ok && e.stamp == stamp {
		m.clock++
		e.used = m.clock
		m.mu.Unlock()
		return e.val, nil
	}
	m.mu.Unlock()
	v, err := compute()
	if err != nil {
		return v, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.clock++
	m.entries[key] = &memoEntry[T]{stamp: stamp, val: v, used: m.clock}
	for len(m.entries) > m.max {
		oldest := ""
		for k, e := range m.entries {
			if oldest == "" || e.used < m.entries[oldest].used {
				oldest = k
			}
		}
		delete(m.entries, oldest)
	}
	return v, nil
}

// stampOf identifies the current state of files by their sizes and modification times; a
// missing file has its own mark, so its appearing changes the stamp.
func stampOf(paths ...string) string {
	var b strings.Builder
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			b.WriteString("-;")
			continue
		}
		b.WriteString(strconv.FormatInt(fi.Size(), 10))
		b.WriteByte('.')
		b.WriteString(strconv.FormatInt(fi.ModTime().UnixNano(), 10))
		b.WriteByte(';')
	}
	return b.String()
}
