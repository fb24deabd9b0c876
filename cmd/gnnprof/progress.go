package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
)

// How often progress is written when stderr is not a terminal: a line when there is news at
// most every lineEvery (so every epoch, or every 2 s, whichever is rarer), and one every
// heartbeatEvery while a task runs without news; tasks shorter than lineEvery print nothing.
const (
	lineEvery      = 2 * time.Second
	heartbeatEvery = 10 * time.Second
	barEvery       = 100 * time.Millisecond // on a terminal, the bar's redraws
)

// progressView renders the progress updates of a command on stderr: a bar on a terminal, plain
// periodic lines otherwise. It is safe for concurrent use.
type progressView struct {
	out io.Writer
	tty bool
	now func() time.Time // time.Now; tests step it

	mu       sync.Mutex
	cur      progress.Update // the task running; Task "" when none
	began    time.Time       // when cur.Task began
	lastLine time.Time       // when the last line was written (lines mode)
	lastDraw time.Time       // when the bar was last drawn (terminal)
	news     bool            // cur changed since the last line
	bar      *progressbar.ProgressBar
	stop     chan struct{} // closes the heartbeat (lines mode)
}

// newProgressView renders on out, as a bar when out is a terminal.
func newProgressView(out io.Writer) *progressView {
	v := &progressView{out: out, tty: isTerminal(out), now: time.Now}
	if !v.tty {
		v.stop = make(chan struct{})
		go v.heartbeat(v.stop)
	}
	return v
}

// report is the view's progress.Func.
func (v *progressView) report(u progress.Update) {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	if u.Task != v.cur.Task || u.Unit != v.cur.Unit || u.Total != v.cur.Total {
		v.endTask() // a new bar for a new task, or for a new count within one
	}
	if u.Task != v.cur.Task {
		v.began = now
	}
	v.cur, v.news = u, true
	if u.Task == "" {
		return
	}
	if v.tty {
		if v.bar == nil || now.Sub(v.lastDraw) >= barEvery || u.Done == u.Total {
			v.drawBar()
			v.lastDraw = now
		}
		return
	}
	if now.Sub(v.began) >= lineEvery && now.Sub(v.lastLine) >= lineEvery {
		v.writeLine(now)
	}
}

// drawBar shows cur on the terminal's bar, starting one for a new task.
func (v *progressView) drawBar() {
	u := v.cur
	if v.bar == nil {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(v.out),
			progressbar.OptionSetWidth(30),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionClearOnFinish(),
		}
		total := u.Total
		if total > 0 {
			opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true),
				progressbar.OptionShowBytes(u.Unit == "bytes"), progressbar.OptionUseIECUnits(true))
		} else {
			total = -1 // a spinner with the elapsed time
			opts = append(opts, progressbar.OptionSetPredictTime(false))
		}
		v.bar = progressbar.NewOptions64(total, opts...)
	}
	desc := u.Task
	if u.Status != "" {
		desc += "  " + u.Status
	}
	v.bar.Set64(u.Done)
	v.bar.Describe(desc) // redraws: the count and the figures of the same update
}

// endTask clears the bar of the task that ends (a later line or bar replaces it). Finishing,
// rather than abandoning, the bar also stops a spinner's redraws.
func (v *progressView) endTask() {
	if v.bar != nil {
		v.bar.Finish() // cleared: OptionClearOnFinish
		v.bar = nil
	}
}

// heartbeat ticks every second until stop closes.
func (v *progressView) heartbeat(stop <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			v.tick()
		}
	}
}

// tick writes the news held back by lineEvery once that has passed, and a line every
// heartbeatEvery while a task runs without news.
func (v *progressView) tick() {
	v.mu.Lock()
	defer v.mu.Unlock()
	now := v.now()
	since := now.Sub(v.lastLine)
	if v.cur.Task != "" && now.Sub(v.began) >= lineEvery && (since >= heartbeatEvery || v.news && since >= lineEvery) {
		v.writeLine(now)
	}
}

// writeLine writes cur as one line: task, count, status, elapsed time and estimated time left.
func (v *progressView) writeLine(now time.Time) {
	fmt.Fprintln(v.out, "gnnprof:", progressLine(v.cur, now.Sub(v.began)))
	v.lastLine, v.news = now, false
}

// progressLine is u as a line of text, elapsed into its task: "training  12/200 epochs  loss
// 0.4120  (12s, 3m8s left)".
func progressLine(u progress.Update, elapsed time.Duration) string {
	parts := []string{u.Task}
	count := ""
	switch {
	case u.Unit == "bytes" && u.Total > 0:
		count = fmt.Sprintf("%s of %s", mib(u.Done), mib(u.Total))
	case u.Unit == "bytes":
		count = mib(u.Done)
	case u.Total > 0:
		count = fmt.Sprintf("%s/%s %s", report.Commas(u.Done), report.Commas(u.Total), u.Unit)
	case u.Done > 0:
		count = fmt.Sprintf("%s %s", report.Commas(u.Done), u.Unit)
	}
	if count != "" {
		parts = append(parts, count)
	}
	if u.Status != "" {
		parts = append(parts, u.Status)
	}
	times := elapsed.Round(time.Second).String()
	if u.Total > 0 && u.Done > 0 && u.Done < u.Total {
		left := time.Duration(float64(elapsed) * float64(u.Total-u.Done) / float64(u.Done))
		times += ", " + left.Round(time.Second).String() + " left"
	}
	return strings.Join(parts, "  ") + "  (" + times + ")"
}

// close ends the view: it clears the bar and stops the heartbeat.
func (v *progressView) close() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.endTask()
	v.cur = progress.Update{}
	if v.stop != nil {
		close(v.stop)
		v.stop = nil
	}
}

type progressKey struct{}

// progressOf is the progress.Func of the command running: nil with --quiet.
func progressOf(cmd *cobra.Command) progress.Func {
	if v, ok := cmd.Context().Value(progressKey{}).(*progressView); ok {
		return v.report
	}
	return nil
}

// withProgress runs run with a progress view on cmd's stderr (none with --quiet) that
// progressOf finds, closing it when run returns.
func withProgress(cmd *cobra.Command, run func() error) error {
	if quiet, _ := cmd.Flags().GetBool("quiet"); quiet {
		return run()
	}
	// The view's heartbeat writes from its own goroutine to the stderr the command writes to.
	stderr := &lockedWriter{w: cmd.ErrOrStderr()}
	cmd.SetErr(stderr)
	v := newProgressView(stderr)
	defer v.close()
	cmd.SetContext(context.WithValue(cmd.Context(), progressKey{}, v))
	return run()
}

// lockedWriter serialises the writes to w of several goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
