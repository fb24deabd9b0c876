package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// stopping says what the command does when interrupted; record sets it while training.
var stopping atomic.Pointer[string]

func init() { setStopping("stopping; nothing half-written is left") }

func setStopping(what string) { stopping.Store(&what) }

// errInterrupted is the cause of a command's context being cancelled by SIGINT, SIGTERM or
// SIGHUP. A command that stops for it exits with status exitInterrupted.
var errInterrupted = errors.New("interrupted")

// exitInterrupted is the exit status after an interrupt, as shells report a SIGINT (128 + 2).
const exitInterrupted = 130

// stopSignals are the signals that stop a command: Ctrl-C, SIGTERM, and SIGHUP (its terminal
// closed, its SSH session dropped: how long runs usually die). SIGHUP stays ignored when the
// process was started with it ignored: a run started under nohup keeps running as its user asked.
func stopSignals() []os.Signal {
	sigs := []os.Signal{os.Interrupt, syscall.SIGTERM}
	if !signal.Ignored(syscall.SIGHUP) {
		sigs = append(sigs, syscall.SIGHUP)
	}
	return sigs
}

// interruptContext returns a context that the first stop signal (stopSignals) cancels with cause
// errInterrupted, saying on stderr what happens next; a second one exits at once with status
// exitInterrupted, removing the files still being written. stop releases the signals.
func interruptContext(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, stopSignals()...)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(stderr, "\ngnnprof: %s: %s (Ctrl-C again to exit at once)\n", signalName(s), *stopping.Load())
			cancel(errInterrupted)
		case <-done:
			return
		}
		select {
		case s := <-sig:
			removePartialFiles()
			fmt.Fprintf(stderr, "\ngnnprof: %s again: exiting at once\n", signalName(s))
			os.Exit(exitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(nil)
	}
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP (the terminal closed)"
	}
	return "Ctrl-C (SIGINT)"
}

// interruptible runs work and returns its result, or as soon as ctx is cancelled its cause
// (errInterrupted for a signal): for work that cannot watch ctx itself (loading a dataset, analysing a trace),
// which then goes on in the background until the process exits.
func interruptible[T any](ctx context.Context, work func() (T, error)) (T, error) {
	if ctx.Done() == nil {
		return work()
	}
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := work()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, context.Cause(ctx)
	}
}

// partialFiles are the temporary files being written (see writeFile), which an exit at once
// removes.
var partialFiles struct {
	sync.Mutex
	paths map[string]bool
}

func trackPartial(path string, writing bool) {
	partialFiles.Lock()
	defer partialFiles.Unlock()
	if partialFiles.paths == nil {
		partialFiles.paths = map[string]bool{}
	}
	if writing {
		partialFiles.paths[path] = true
	} else {
		delete(partialFiles.paths, path)
	}
}

func removePartialFiles() {
	partialFiles.Lock()
	defer partialFiles.Unlock()
	for p := range partialFiles.paths {
		os.RemoveAll(p)
	}
}

// ctxWriter fails writes once ctx is cancelled, so that a file being written stops there.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if c.ctx.Err() != nil {
		return 0, context.Cause(c.ctx)
	}
	return c.w.Write(p)
}
