package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"

	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/rundir"
	"github.com/gnnprof/gnnprof/trace"
	"github.com/gnnprof/gnnprof/web"
)

// TestMain lets the tests run the CLI as a child process: the test binary re-executed with
// GNNPROF_TEST_MAIN=1 is gnnprof itself, signal handling included.
func TestMain(m *testing.M) {
	if os.Getenv("GNNPROF_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// cli is gnnprof running as a child process, its stdout collected and its stderr read line by
// line.
type cli struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer // every line read so far
	lines  chan string
	exited chan error
}

func startCLI(t *testing.T, args ...string) *cli {
	t.Helper()
	c := &cli{cmd: exec.Command(os.Args[0], args...), lines: make(chan string, 1000), exited: make(chan error, 1)}
	c.cmd.Env = append(os.Environ(), "GNNPROF_TEST_MAIN=1")
	c.cmd.Stdout = &c.stdout
	pipe, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
		c.exited <- c.cmd.Wait()
	}()
	return c
}

// waitLine waits for a stderr line that re matches.
func (c *cli) waitLine(t *testing.T, re string) string {
	t.Helper()
	pattern := regexp.MustCompile(re)
	timeout := time.After(3 * time.Minute)
	for {
		select {
		case line, ok := <-c.lines:
			if !ok {
				t.Fatalf("gnnprof exited before printing a line matching %q; stderr:\n%s", re, c.stderr.String())
			}
			c.stderr.WriteString(line + "\n")
			if pattern.MatchString(line) {
				return line
			}
		case <-timeout:
			t.Fatalf("no line matching %q in 3 minutes; stderr:\n%s", re, c.stderr.String())
		}
	}
}

// wait waits for the exit and returns the exit status.
func (c *cli) wait(t *testing.T) int {
	t.Helper()
	for line := range c.lines {
		c.stderr.WriteString(line + "\n")
	}
	err := <-c.exited
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

// trainingLine is a piped progress line of training.
const trainingLine = `^gnnprof: training  [\d,]+/[\d,]+ epochs  loss \d+\.\d{4}  accuracy train \d\.\d{4}  val \d\.\d{4}  test \d\.\d{4}  \(\d+s, .* left\)$`

// TestInterruptRun sends SIGINT to a training run whose stderr is a pipe: the run prints plain
// progress lines, then stops after the epoch under way and still writes run.json (interrupted,
// with the epochs done, which the trace's steps match), the reports and a readable CPU profile,
// says where they are and exits 130.
func TestInterruptRun(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	c := startCLI(t, "run", "full", "sbm:nodes=4000,classes=4,degree=8,features=32", "--epochs", "100000", "--out", dir)
	c.waitLine(t, trainingLine)
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, c.stderr.String())
	}
	stderr, stdout := c.stderr.String(), c.stdout.String()
	for _, want := range []string{"stopping after the current step", "gnnprof: interrupted after "} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, want := range []string{"Where a step's time goes", "wrote " + dir + ": trace.json.gz, run.json, report.html, profile.pb.gz, cpu.pprof"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	run, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := len(run.Epochs)
	if !run.Interrupted || n == 0 || n >= 100000 || run.Final.Epochs != n || run.Config["epochs"] != 100000.0 {
		t.Errorf("run.json: interrupted %v, %d epochs (final %d), config epochs %v", run.Interrupted, n, run.Final.Epochs, run.Config["epochs"])
	}
	tbl, err := trace.ReadFile(filepath.Join(dir, rundir.TraceFile), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	steps := 0
	for i := range tbl.Len() {
		if tbl.Event(i).Role == role.Step {
			steps++
		}
	}
	if steps != n {
		t.Errorf("the trace has %d steps for %d epochs", steps, n)
	}
	f, err := os.Open(filepath.Join(dir, rundir.CPUProfileFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil || len(prof.Sample) == 0 {
		t.Errorf("cpu.pprof: %v, %d samples", err, len(prof.Sample))
	}
	for _, name := range []string{rundir.ReportFile, rundir.PprofFile} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	var js json.RawMessage
	if data, err := os.ReadFile(filepath.Join(dir, rundir.RunFile)); err != nil || json.Unmarshal(data, &js) != nil ||
		!bytes.Contains(data, []byte(`"interrupted": true`)) {
		t.Errorf("run.json does not say \"interrupted\": true:\n%s", data)
	}
}

// TestInterruptTwice: a second SIGINT while the first still finishes the epoch exits at once,
// with status 130, leaving no half-written file behind and the trace readable.
func TestInterruptTwice(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	c := startCLI(t, "run", "full", "sbm:nodes=30000,classes=4,degree=16,features=64", "--model", "gat",
		"--epochs", "100000", "--patience", "0", "--out", dir)
	c.waitLine(t, trainingLine)
	// An exit at once keeps what the writer goroutine has flushed at the end of a step: wait for
	// the first flush (a loaded machine can put it after both signals), then interrupt twice.
	tracePath := filepath.Join(dir, rundir.TraceFile)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if tbl, _ := trace.ReadFile(tracePath, trace.ReadOptions{}); tbl != nil && tbl.Len() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no event reached the trace in a minute of training")
		}
	}
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	c.waitLine(t, "stopping after the current step")
	if err := c.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := c.wait(t); code != 130 {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, c.stderr.String())
	}
	if !strings.Contains(c.stderr.String(), "exiting at once") {
		t.Errorf("stderr does not say it exits at once:\n%s", c.stderr.String())
	}
	partial, _ := filepath.Glob(filepath.Join(dir, "*.partial"))
	hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
	hidden = slices.DeleteFunc(hidden, func(p string) bool { return filepath.Base(p) == rundir.WriterFile })
	if len(partial)+len(hidden) > 0 {
		t.Errorf("half-written files left: %v %v", partial, hidden)
	}
	_, errRun := os.Stat(filepath.Join(dir, rundir.RunFile))
	if w := rundir.Writer(dir); os.IsNotExist(errRun) != (w == rundir.WriterGone) {
		t.Errorf("run.json written: %v, but the run's writer reads as %v", errRun == nil, w)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.CPUProfileFile)); os.IsNotExist(errRun) && err == nil {
		t.Error("an unfinished CPU profile was left behind")
	}
	t.Logf("run.json written before the second signal: %v", errRun == nil)
	tbl, err := trace.ReadFile(tracePath, trace.ReadOptions{})
	if err != nil && (!errors.Is(err, trace.ErrTruncated) || tbl.Len() == 0) {
		t.Errorf("trace after an exit at once: %v", err)
	}
}

// TestHangupAndKill: SIGHUP (a closed terminal, a dropped SSH session) stops a run as Ctrl-C does
// (run.json marked interrupted, exit 130), and serve lists it as interrupted; a run killed outright
// (SIGKILL) leaves a cut-off trace that serve lists as stopped, its process gone, not as running.
func TestHangupAndKill(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	args := func(name string) []string {
		return []string{"run", "full", "sbm:nodes=4000,classes=4,degree=8,features=32", "--epochs", "100000", "--no-report", "--out", filepath.Join(root, name)}
	}
	// A child inherits an ignored SIGHUP (tests run under nohup, or by a harness that ignores it)
	// and rightly keeps it ignored; one this process catches starts with the default instead, as
	// under a terminal.
	hups := make(chan os.Signal, 1)
	signal.Notify(hups, syscall.SIGHUP)
	defer signal.Stop(hups)
	hup, kill := startCLI(t, args("hup")...), startCLI(t, args("kill")...)
	hup.waitLine(t, trainingLine)
	kill.waitLine(t, trainingLine)
	must(t, hup.cmd.Process.Signal(syscall.SIGHUP))
	if code := hup.wait(t); code != 130 || !strings.Contains(hup.stderr.String(), "SIGHUP (the terminal closed): stopping after the current step") {
		t.Errorf("SIGHUP: exit %d; stderr:\n%s", code, hup.stderr.String())
	}
	if run, err := rundir.Read(filepath.Join(root, "hup")); err != nil || !run.Interrupted {
		t.Errorf("SIGHUP: run.json: %v", err)
	}
	tracePath := filepath.Join(root, "kill", rundir.TraceFile)
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		if tbl, _ := trace.ReadFile(tracePath, trace.ReadOptions{}); tbl != nil && tbl.Len() > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no event reached the trace in a minute of training")
		}
	}
	must(t, kill.cmd.Process.Kill())
	kill.wait(t)

	srv, err := web.New(root)
	if err != nil {
		t.Fatal(err)
	}
	h := httptest.NewServer(srv)
	defer h.Close()
	resp, err := http.Get(h.URL + "/runs.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var runs []web.RunSummary
	if err := json.NewDecoder(resp.Body).Decode(&runs); err != nil {
		t.Fatal(err)
	}
	status := map[string]string{}
	for _, r := range runs {
		status[r.Path] = r.Status + ": " + r.Note
	}
	if !strings.HasPrefix(status["hup"], web.StatusInterrupted) || !strings.HasPrefix(status["kill"], web.StatusStopped+": its process ended") {
		t.Errorf("serve lists %v", status)
	}
}

// TestStopSignals: SIGHUP stops a command like Ctrl-C and SIGTERM, except in a process started
// with it ignored (nohup), where it stays ignored.
func TestStopSignals(t *testing.T) {
	got := stopSignals()
	if !slices.Contains(got, os.Interrupt) || !slices.Contains(got, os.Signal(syscall.SIGTERM)) ||
		slices.Contains(got, os.Signal(syscall.SIGHUP)) == signal.Ignored(syscall.SIGHUP) {
		t.Fatalf("stop signals %v (SIGHUP ignored from the start: %v)", got, signal.Ignored(syscall.SIGHUP))
	}
	signal.Ignore(syscall.SIGHUP)
	defer signal.Reset(syscall.SIGHUP)
	if got := stopSignals(); slices.Contains(got, os.Signal(syscall.SIGHUP)) || len(got) != 2 {
		t.Fatalf("under nohup: stop signals %v", got)
	}
}
