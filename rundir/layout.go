package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The files of a run directory.
const (
	TraceFile      = "trace.json.gz"          // the trace, written while training
	RunFile        = "run.json"               // the run's record (Run), written at the end
	ReportFile     = "report.html"            // the HTML report
	PprofFile      = "profile.pb.gz"          // the span tree as a pprof profile
	CPUProfileFile = "cpu.pprof"              // the Go CPU profile, labelled by role
	PerfettoFile   = "trace.perfetto.json.gz" // gnnprof export chrome's output beside the trace
)

// artefactPatterns match every file a run directory's run writes or derives from its trace: the
// files above, an uncompressed trace, the Perfetto export's parts (trace.perfetto.partN.json.gz),
// and the lock a run whose process died leaves.
var artefactPatterns = []string{TraceFile, "trace.json", RunFile, ReportFile, PprofFile, CPUProfileFile,
	"trace.perfetto*.json*", WriterFile}

// Artefacts lists the run files in dir (see artefactPatterns), sorted; none when dir is absent.
func Artefacts(dir string) []string {
	var found []string
	for _, p := range artefactPatterns {
		m, _ := filepath.Glob(filepath.Join(dir, p)) // the patterns are well formed
		found = append(found, m...)
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// Clear removes the run files from dir (only those: other files stay), so that a new run can be
// written there without stale reports beside its trace. It refuses a run still being recorded.
func Clear(dir string) error {
	if Writer(dir) == WriterAlive {
		who, _ := os.ReadFile(filepath.Join(dir, WriterFile))
		return fmt.Errorf("clearing run directory: %s is being written by another process (%s)", dir, trimNL(who))
	}
	for _, f := range Artefacts(dir) {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("clearing run directory: %w", err)
		}
	}
	return nil
}

// traceNames are the names a run directory's trace may have, in order of preference: ours, then
// an uncompressed copy.
var traceNames = []string{TraceFile, "trace.json"}

// DefaultPath is runs/<timestamp>, the directory a run writes to when not told otherwise.
func DefaultPath(now time.Time) string {
	return filepath.Join("runs", now.Format("20060102-150405"))
}

// TracePath is the trace a path names: for a directory, the run trace in it (trace.json.gz, else
// trace.json); anything else is taken as the trace file itself.
func TracePath(path string) (string, error) {
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		return path, nil
	}
	if p, ok := runTrace(path); ok {
		return p, nil
	}
	return "", fmt.Errorf("%s: no %s in this directory", path, strings.Join(traceNames, " or "))
}

// runTrace is the run trace in dir, if it holds one.
func runTrace(dir string) (string, bool) {
	for _, n := range traceNames {
		if p := filepath.Join(dir, n); isFile(p) {
			return p, true
		}
	}
	return "", false
}

// Traces lists the traces in dir: its run trace, else every trace file in it (names ending in
// .pt.trace.json[.gz], or trace*.json[.gz], or naming a rank), else the run trace of each
// subdirectory (one per rank). The list is sorted.
func Traces(dir string) ([]string, error) {
	if p, ok := runTrace(dir); ok {
		return []string{p}, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", dir, err)
	}
	var files, sub []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() {
			if p, ok := runTrace(filepath.Join(dir, name)); ok {
				sub = append(sub, p)
			}
			continue
		}
		if isTraceName(name) {
			files = append(files, filepath.Join(dir, name))
		}
	}
	if len(files) == 0 {
		files = sub
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no trace in %s: expected %s, *.pt.trace.json[.gz] files, or rank subdirectories holding %s", dir, TraceFile, TraceFile)
	}
	slices.Sort(files)
	return files, nil
}

func isTraceName(name string) bool {
	base := strings.TrimSuffix(name, ".gz")
	if !strings.HasSuffix(base, ".json") {
		return false
	}
	return strings.HasSuffix(base, ".pt.trace.json") || strings.HasPrefix(base, "trace") || strings.Contains(base, "rank")
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// DirOf is the run directory of path (a run directory, or a file in one): the directory that
// holds run.json, or "" when there is none.
func DirOf(path string) string {
	dir := path
	if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
		dir = filepath.Dir(path)
	}
	if _, err := os.Stat(filepath.Join(dir, RunFile)); err != nil {
		return ""
	}
	return dir
}

// ReportPath is where the HTML report of input goes by default: report.html in a run directory
// (or beside a run's trace.json[.gz]), else beside the trace file, named after it
// (w0.pt.trace.json.gz gives w0.report.html).
func ReportPath(input string) string {
	if fi, err := os.Stat(input); err == nil && fi.IsDir() {
		return filepath.Join(input, ReportFile)
	}
	stem := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(input), ".gz"), ".json")
	if stem == "trace" {
		return filepath.Join(filepath.Dir(input), ReportFile)
	}
	return filepath.Join(filepath.Dir(input), strings.TrimSuffix(stem, ".pt.trace")+".report.html")
}
