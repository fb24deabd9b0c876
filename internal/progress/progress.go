package progress

import "io"

// Update is how far a task has come.
type Update struct {
	Task   string // what is being done: "training", "loading cora.npz", "partitioning"
	Done   int64  // units done so far
	Total  int64  // units in all; 0 when not known
	Unit   string // what Done counts, plural: "epochs", "bytes", "levels"
	Status string // the latest figures or phase: "loss 0.4120  val 0.8010", "coarsening"
}

// Func receives updates. Work may call it from several goroutines, so implementations must be
// safe for concurrent use; they should also be cheap (the renderer throttles, not the caller).
type Func func(Update)

// Report passes u to f; a nil f drops it.
func (f Func) Report(u Update) {
	if f != nil {
		f(u)
	}
}

// Reader wraps r so that reading it reports the bytes read so far: u with Done counting them
// and Unit "bytes" (u.Total: the bytes expected, 0 when unknown). With a nil f it returns r.
func (f Func) Reader(r io.Reader, u Update) io.Reader {
	if f == nil {
		return r
	}
	u.Unit = "bytes"
	return &reader{r: r, f: f, u: u}
}

type reader struct {
	r io.Reader
	f Func
	u Update
}

func (r *reader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.u.Done += int64(n)
		r.f(r.u)
	}
	return n, err
}

// End says that no task is running any more: a renderer clears its display (before the
// command prints its results).
func (f Func) End() { f.Report(Update{}) }
