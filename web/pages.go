package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
)

// assets are the server's own pages (templates, *.html) and the files they load from /static.
//
//go:embed assets
var assets embed.FS

// templates are the pages' templates, parsed on first use: every gnnprof command starts with this
// package linked in, and only serve uses them.
var templates = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("").Funcs(template.FuncMap{
		"runURL":   runURL,
		"pprofURL": pprofURL,
		"dur":      report.FormatDuration,
		"pct":      func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
		"name":     displayName,
		"ago":      func(t time.Time) string { return ago(time.Since(t)) },
		"stamp":    func(t time.Time) string { return t.Format("2006-01-02 15:04:05") },
	}).ParseFS(assets, "assets/*.html"))
})

// statics are the files under /static, ready to serve (compressed on first use, as templates).
var statics = sync.OnceValue(func() map[string]*blob {
	out := map[string]*blob{}
	entries, err := fs.ReadDir(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".html") {
			continue
		}
		data, err := assets.ReadFile("assets/" + e.Name())
		if err != nil {
			panic(err)
		}
		out[e.Name()] = newBlob(data, mime.TypeByExtension(path.Ext(e.Name())))
	}
	return out
})

func handleStatic(w http.ResponseWriter, r *http.Request) {
	b, ok := statics()[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b.serve(w, r)
}

// runURL is the page of the run at rel, each segment escaped.
func runURL(rel string) string { return "/run/" + escapeSegments(rel) }

// pprofURL is pprof's UI on a run's profile of the given kind (spans or cpu).
func pprofURL(kind, rel string) string { return "/pprof/" + kind + "/" + escapeSegments(rel) }

// escapeSegments escapes each segment of rel and ends it with a slash ("" stays "").
func escapeSegments(rel string) string {
	if rel == "" {
		return ""
	}
	segs := strings.Split(rel, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/") + "/"
}

// displayName names a run in pages: its path, or "." for the served directory itself.
func displayName(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// ago writes a duration as a short age: 12 s, 5 min, 3 h, 2 d.
func ago(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h", int(d.Hours()))
	}
	return fmt.Sprintf("%d d", int(d.Hours()/24))
}

// servePage renders a template of the server's own into a page served with pageCSP.
func servePage(w http.ResponseWriter, r *http.Request, name string, data any) error {
	var buf bytes.Buffer
	if err := templates().ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("rendering %s: %w", name, err)
	}
	w.Header().Set("Content-Security-Policy", pageCSP)
	newBlob(buf.Bytes(), htmlType).serve(w, r)
	return nil
}

// listPage is the run list's data.
type listPage struct {
	Dir  string
	Runs []RunSummary
}

func (s *Server) handleList(w http.ResponseWriter, r *http.Request) {
	runs, err := s.summaries()
	if err == nil {
		err = servePage(w, r, "list.html", listPage{Dir: s.root.dir, Runs: runs})
	}
	if err != nil {
		s.fail(w, r, err)
	}
}

func (s *Server) handleRunsJSON(w http.ResponseWriter, r *http.Request) {
	runs, err := s.summaries()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	serveJSON(w, r, runs)
}

func serveJSON(w http.ResponseWriter, r *http.Request, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	newBlob(data, jsonType).serve(w, r)
}

// handleRun serves a run's pages: the run itself (live view or report), its report, its live data.
func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	rel, resource := splitRun(r.PathValue("path"))
	dir, ok := s.runOrRedirect(w, r, rel, resource)
	if !ok {
		return
	}
	var err error
	switch resource {
	case "":
		if sum := s.summary(dir); sum.Status == StatusRunning {
			err = servePage(w, r, "live.html", sum)
			break
		}
		err = s.serveReport(w, r, dir)
	case "report":
		err = s.serveReport(w, r, dir)
	case "live.json":
		var b *blob
		if b, err = s.liveJSON(dir); err == nil {
			b.serve(w, r)
		}
	default:
		err = fmt.Errorf("%s: no such page of run %s: %w", resource, displayName(rel), fs.ErrNotExist)
	}
	if err != nil {
		s.fail(w, r, err)
	}
}

// serveReport serves the run's HTML report: its report.html when that is newer than the trace and
// run.json, else the report rendered now (and kept while the run's files stay the same).
func (s *Server) serveReport(w http.ResponseWriter, r *http.Request, dir string) error {
	inputs := s.inputs(dir)
	saved := filepath.Join(dir, rundir.ReportFile)
	b, err := s.pages.get("report\x00"+dir, stampOf(append(inputs, saved)...), func() (*blob, error) {
		if body := s.freshReport(dir, saved, inputs); body != nil {
			return newBlob(body, htmlType), nil
		}
		a, err := s.analyse(dir)
		if err != nil {
			return nil, err
		}
		var buf bytes.Buffer
		if err := report.WriteHTML(&buf, a.profile, a.table, a.run, report.HTMLOptions{Generated: time.Now()}); err != nil {
			return nil, err
		}
		return newBlob(buf.Bytes(), htmlType), nil
	})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Security-Policy", reportCSP)
	b.serve(w, r)
	return nil
}

// freshReport is the saved report at path when the run in dir is finished and the report, inside
// the root, is newer than every input; nil otherwise.
func (s *Server) freshReport(dir, path string, inputs []string) []byte {
	if _, err := os.Stat(filepath.Join(dir, rundir.RunFile)); err != nil {
		return nil
	}
	real, err := s.root.resolve(s.root.rel(path))
	if err != nil {
		return nil
	}
	fi, err := os.Stat(real)
	if err != nil || fi.ModTime().Before(latestChange(inputs)) {
		return nil
	}
	body, err := os.ReadFile(real)
	if err != nil {
		return nil
	}
	return body
}

// handleDiff serves the comparison of runs a (the baseline) and b.
func (s *Server) handleDiff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	relA, relB := q.Get("a"), q.Get("b")
	dirA, err := s.runDir(relA)
	if err != nil {
		s.fail(w, r, fmt.Errorf("run a: %w", err))
		return
	}
	dirB, err := s.runDir(relB)
	if err != nil {
		s.fail(w, r, fmt.Errorf("run b: %w", err))
		return
	}
	stamp := stampOf(s.inputs(dirA)...) + "|" + stampOf(s.inputs(dirB)...)
	b, err := s.pages.get("diff\x00"+dirA+"\x00"+dirB, stamp, func() (*blob, error) {
		a, err := s.analyse(dirA)
		if err != nil {
			return nil, fmt.Errorf("run a: %w", err)
		}
		bb, err := s.analyse(dirB)
		if err != nil {
			return nil, fmt.Errorf("run b: %w", err)
		}
		var buf bytes.Buffer
		d := analyze.Compare(a.profile, bb.profile)
		var runs *rundir.RunDiff
		if a.run != nil && bb.run != nil {
			runs = rundir.Compare(a.run, bb.run)
		}
		if err := report.WriteHTMLDiff(&buf, d, runs, a.profile, bb.profile, report.HTMLOptions{Generated: time.Now()}); err != nil {
			return nil, err
		}
		return newBlob(buf.Bytes(), htmlType), nil
	})
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Security-Policy", reportCSP)
	b.serve(w, r)
}
