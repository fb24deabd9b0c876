package graph

// maxQueue is an indexed binary max-heap of vertices keyed by an int64 gain, supporting
// update and delete by vertex. pos[v] is v's heap slot or -1.
type maxQueue struct {
	heap []int32
	key  []int64 // per vertex
	pos  []int32 // per vertex
}

func newMaxQueue(n int) *maxQueue {
	q := &maxQueue{heap: make([]int32, 0, 64), key: make([]int64, n), pos: make([]int32, n)}
	for i := range q.pos {
		q.pos[i] = -1
	}
	return q
}

func (q *maxQueue) len() int { return len(q.heap) }

func (q *maxQueue) contains(v int32) bool { return q.pos[v] >= 0 }

// reset empties the queue in time proportional to its size.
func (q *maxQueue) reset() {
	for _, v := range q.heap {
		q.pos[v] = -1
	}
	q.heap = q.heap[:0]
}

func (q *maxQueue) push(v int32, key int64) {
	q.key[v] = key
	q.pos[v] = int32(len(q.heap))
	q.heap = append(q.heap, v)
	q.up(len(q.heap) - 1)
}

func (q *maxQueue) pop() int32 {
	v := q.heap[0]
	q.remove(v)
	return v
}

func (q *maxQueue) remove(v int32) {
	i := int(q.pos[v])
	last := len(q.heap) - 1
	q.swap(i, last)
	q.heap = q.heap[:last]
	q.pos[v] = -1
	if i < last {
		q.down(i)
		q.up(i)
	}
}

func (q *maxQueue) update(v int32, key int64) {
	old := q.key[v]
	q.key[v] = key
	i := int(q.pos[v])
	if key > old {
		q.up(i)
	} else {
		q.down(i)
	}
}

func (q *maxQueue) swap(i, j int) {
	q.heap[i], q.heap[j] = q.heap[j], q.heap[i]
	q.pos[q.heap[i]] = int32(i)
	q.pos[q.heap[j]] = int32(j)
}

func (q *maxQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if q.key[q.heap[p]] >= q.key[q.heap[i]] {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *maxQueue) down(i int) {
	n := len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && q.key[q.heap[r]] > q.key[q.heap[l]] {
			c = r
		}
		if q.key[q.heap[i]] >= q.key[q.heap[c]] {
			return
		}
		q.swap(i, c)
		i = c
	}
}
