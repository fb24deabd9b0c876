package web

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/pprof/driver"
	"github.com/google/pprof/profile"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
)

// PprofOptions tune [PprofHandler].
type PprofOptions struct {
	// Confined keeps the UI to the profile itself: no source files read (the profile's file
	// names are dropped), no binaries opened for disassembly, no settings saved. gnnprof serve
	// confines every UI it mounts, so nothing outside its directory can be reached through one.
	Confined bool
}

// pprofMu serialises driver.PProf calls: the driver keeps its settings in package variables.
var pprofMu sync.Mutex

// PprofHandler serves pprof's own web UI on p, as `go tool pprof -http` does: the flame graph
// (its start page), top, graph, peek, source and disassembly views, at the root of wherever it is
// mounted (strip the mount's prefix, and give the prefix a final slash: the UI's links are
// relative). name labels the profile in pprof's messages. It never opens a browser.
func PprofHandler(p *profile.Profile, name string, opt PprofOptions) (http.Handler, error) {
	var handlers map[string]http.Handler
	o := &driver.Options{
		// -http with port 0 and our HTTPServer: the driver hands over its handlers and listens
		// nowhere itself.
		Flagset: &pprofFlags{args: []string{"-http=localhost:0", "-no_browser", "-symbolize=none", name}},
		UI:      pprofUI{},
		HTTPServer: func(a *driver.HTTPServerArgs) error {
			handlers = a.Handlers
			return nil
		},
	}
	if opt.Confined {
		p = p.Copy()
		for _, fn := range p.Function {
			fn.Filename = ""
		}
		o.Obj = noObjects{}
	}
	o.Fetch = fetcher{p}
	pprofMu.Lock()
	err := driver.PProf(o)
	pprofMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("starting pprof's web UI on %s: %w", name, err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			http.Error(w, "read-only", http.StatusMethodNotAllowed)
			return
		}
		if opt.Confined && (r.URL.Path == "/saveconfig" || r.URL.Path == "/deleteconfig") {
			http.Error(w, "read-only: pprof settings cannot be saved here", http.StatusForbidden)
			return
		}
		h, ok := handlers[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}), nil
}

// fetcher hands the driver a profile already in memory. It returns no source URL, so the driver
// neither saves a copy nor looks for the profile's binaries remotely.
type fetcher struct{ p *profile.Profile }

func (f fetcher) Fetch(string, time.Duration, time.Duration) (*profile.Profile, string, error) {
	return f.p.Copy(), "", nil
}

// pprofUI is the driver's user interface when it only serves the web UI: messages go to the log.
type pprofUI struct{}

func (pprofUI) ReadLine(string) (string, error)     { return "", io.EOF }
func (pprofUI) Print(args ...any)                   { slog.Debug("pprof: " + strings.TrimSpace(fmt.Sprint(args...))) }
func (pprofUI) PrintErr(args ...any)                { slog.Warn("pprof: " + strings.TrimSpace(fmt.Sprint(args...))) }
func (pprofUI) IsTerminal() bool                    { return false }
func (pprofUI) WantBrowser() bool                   { return false }
func (pprofUI) SetAutoComplete(func(string) string) {}

// pprofFlags gives the driver a fixed command line.
type pprofFlags struct {
	args  []string
	fs    *flag.FlagSet
	usage []string
}

func (f *pprofFlags) set() *flag.FlagSet {
	if f.fs == nil {
		f.fs = flag.NewFlagSet("pprof", flag.ContinueOnError)
		f.fs.SetOutput(io.Discard)
	}
	return f.fs
}

func (f *pprofFlags) Bool(name string, def bool, usage string) *bool {
	return f.set().Bool(name, def, usage)
}
func (f *pprofFlags) Int(name string, def int, usage string) *int {
	return f.set().Int(name, def, usage)
}
func (f *pprofFlags) Float64(name string, def float64, usage string) *float64 {
	return f.set().Float64(name, def, usage)
}
func (f *pprofFlags) String(name, def, usage string) *string {
	return f.set().String(name, def, usage)
}
func (f *pprofFlags) StringList(name, def, usage string) *[]*string {
	return &[]*string{f.set().String(name, def, usage)}
}
func (f *pprofFlags) ExtraUsage() string      { return strings.Join(f.usage, "\n") }
func (f *pprofFlags) AddExtraUsage(eu string) { f.usage = append(f.usage, eu) }
func (f *pprofFlags) Parse(usage func()) []string {
	if err := f.set().Parse(f.args); err != nil {
		usage()
		return nil
	}
	return f.set().Args()
}

// noObjects refuses to open binaries: a confined UI disassembles nothing.
type noObjects struct{}

var errNoObjects = errors.New("binaries are not read here")

func (noObjects) Open(string, uint64, uint64, uint64, string) (driver.ObjFile, error) {
	return nil, errNoObjects
}
func (noObjects) Disasm(string, uint64, uint64, bool) ([]driver.Inst, error) {
	return nil, errNoObjects
}

// Profile kinds a run's pprof UI shows.
const (
	pprofSpans = "spans" // the span profile: profile.pb.gz, or built from the trace
	pprofCPU   = "cpu"   // the Go CPU profile, cpu.pprof
)

// handlePprof serves pprof's UI on one of a run's profiles: /pprof/KIND/RUN/VIEW.
func (s *Server) handlePprof(w http.ResponseWriter, r *http.Request) {
	kind := r.PathValue("kind")
	rel, view := splitRun(r.PathValue("path"))
	dir, ok := s.runOrRedirect(w, r, rel, view)
	if !ok {
		return
	}
	h, err := s.pprofUI(dir, kind)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = "/"+view, ""
	h.ServeHTTP(w, r2)
}

// pprofUI is pprof's UI on the run's profile of the given kind, kept while the run's files stay
// the same.
func (s *Server) pprofUI(dir, kind string) (http.Handler, error) {
	var files []string
	switch kind {
	case pprofSpans:
		files = append(s.inputs(dir), filepath.Join(dir, rundir.PprofFile))
	case pprofCPU:
		files = []string{filepath.Join(dir, rundir.CPUProfileFile)}
	default:
		return nil, fmt.Errorf("no %q profile (there are %s and %s): %w", kind, pprofSpans, pprofCPU, fs.ErrNotExist)
	}
	return s.pprofs.get(kind+"\x00"+dir, stampOf(files...), func() (http.Handler, error) {
		p, err := s.runProfile(dir, kind)
		if err != nil {
			return nil, err
		}
		return PprofHandler(p, displayName(s.root.rel(dir))+" "+kind, PprofOptions{Confined: true})
	})
}

// runProfile reads the run's profile of the given kind. The span profile is the run's
// profile.pb.gz when it is newer than the trace, else built from the trace now (a run still
// training, or a directory of foreign traces).
func (s *Server) runProfile(dir, kind string) (*profile.Profile, error) {
	if kind == pprofCPU {
		return s.cpuProfile(dir)
	}
	traces, err := s.traceFiles(dir)
	if err != nil {
		return nil, err
	}
	if saved := filepath.Join(dir, rundir.PprofFile); !latestChange([]string{saved}).Before(latestChange(traces)) {
		if p, err := s.readProfile(dir, rundir.PprofFile); err == nil {
			return p, nil
		}
	}
	t, err := analyze.ReadTrace(traces[0], analyze.Options{})
	if t == nil {
		return nil, err
	}
	return report.Pprof(t)
}

// cpuProfile reads the run's Go CPU profile. The profiler writes cpu.pprof only when the run ends:
// until then the file is empty, which is said plainly (as not found: there is nothing to show yet).
func (s *Server) cpuProfile(dir string) (*profile.Profile, error) {
	path, err := s.root.file(dir, rundir.CPUProfileFile)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() == 0 {
		name := displayName(s.root.rel(dir))
		if rundir.Writer(dir) == rundir.WriterAlive {
			return nil, notFound("the CPU profile of " + name + " is written when the run ends, and it is still training: come back then")
		}
		return nil, notFound("the CPU profile of " + name + " is empty: the run ended without writing it")
	}
	return s.readProfile(dir, rundir.CPUProfileFile)
}

// notFound is an error that answers 404 Not Found with its message alone.
type notFound string

func (e notFound) Error() string        { return string(e) }
func (e notFound) Is(target error) bool { return target == fs.ErrNotExist }

// readProfile parses the profile file name in the run directory dir.
func (s *Server) readProfile(dir, name string) (*profile.Profile, error) {
	path, err := s.root.file(dir, name)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", s.root.rel(path), err)
	}
	return p, nil
}
