package docs

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/role"
	"github.com/gnnprof/gnnprof/trace"
)

var update = flag.Bool("update", false, "rewrite the generated sections of the guides")

// TestTorchGuide: docs/torch.md's table of region names is the trace reader's (trace/roles.go's
// nameRoles, each role described by its comment in the role package), every name in it gets its
// role when a legacy torch trace is read, and the priority it quotes is the analyzer's.
func TestTorchGuide(t *testing.T) {
	rows := nameRoles(t)
	docs := roleDocs(t)
	checkRoles(t, rows)

	var b strings.Builder
	b.WriteString("| a region whose name contains | gets the role | which is |\n| --- | --- | --- |\n")
	fmt.Fprintf(&b, "| `ProfilerStep#` (what `prof.step()` writes) | `%s` | %s |\n", role.Step, docs[role.Step])
	for _, r := range rows {
		keys := make([]string, len(r.keys))
		for k, key := range r.keys {
			keys[k] = "`" + key + "`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | %s |\n", strings.Join(keys, ", "), r.role, docs[r.role])
	}
	fmt.Fprintf(&b, "\nWhere regions nest, the breakdown gives each instant to the first of %s that covers it.\n",
		strings.Join(regionPriority(t, rows), " › "))
	checkSection(t, "torch.md", "region names", b.String())
}

// A nameRole is a row of trace/roles.go's nameRoles: the substrings that give a name a role.
type nameRole struct {
	keys []string
	role role.Role
}

// nameRoles reads the table nameRoles from trace/roles.go's source.
func nameRoles(t *testing.T) []nameRole {
	t.Helper()
	file := parse(t, "../trace/roles.go")
	var rows []nameRole
	ast.Inspect(file, func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || len(spec.Names) != 1 || spec.Names[0].Name != "nameRoles" || len(spec.Values) != 1 {
			return true
		}
		table, ok := spec.Values[0].(*ast.CompositeLit)
		if !ok {
			t.Fatal("trace/roles.go: nameRoles is not a composite literal")
		}
		for _, e := range table.Elts {
			row, ok := e.(*ast.CompositeLit)
			if !ok || len(row.Elts) != 2 {
				t.Fatalf("trace/roles.go: nameRoles row %d is not {keys, role}", len(rows))
			}
			var nr nameRole
			keys, ok := row.Elts[0].(*ast.CompositeLit)
			if !ok {
				t.Fatalf("trace/roles.go: nameRoles row %d: keys are not a []string literal", len(rows))
			}
			for _, k := range keys.Elts {
				lit, ok := k.(*ast.BasicLit)
				s, err := strconv.Unquote(lit.Value)
				if !ok || err != nil {
					t.Fatalf("trace/roles.go: nameRoles row %d: key %v is not a string", len(rows), k)
				}
				nr.keys = append(nr.keys, s)
			}
			sel, ok := row.Elts[1].(*ast.SelectorExpr)
			if !ok {
				t.Fatalf("trace/roles.go: nameRoles row %d: the role is not role.Name", len(rows))
			}
			if nr.role, ok = role.Parse(strings.ToLower(sel.Sel.Name)); !ok {
				t.Fatalf("trace/roles.go: nameRoles row %d: role.%s has no role name", len(rows), sel.Sel.Name)
			}
			rows = append(rows, nr)
		}
		return false
	})
	if len(rows) == 0 {
		t.Fatal("trace/roles.go: no table nameRoles")
	}
	return rows
}

// roleDocs reads the line comment of each role constant in role/role.go.
func roleDocs(t *testing.T) map[role.Role]string {
	t.Helper()
	docs := map[role.Role]string{}
	ast.Inspect(parse(t, "../role/role.go"), func(n ast.Node) bool {
		spec, ok := n.(*ast.ValueSpec)
		if !ok || spec.Comment == nil || len(spec.Names) != 1 {
			return true
		}
		if r, ok := role.Parse(strings.ToLower(spec.Names[0].Name)); ok {
			docs[r] = strings.TrimSpace(spec.Comment.Text())
		}
		return true
	})
	for r := range role.Count {
		if docs[r] == "" {
			t.Errorf("role/role.go: role %s has no line comment", r)
		}
	}
	return docs
}

func parse(t *testing.T, path string) *ast.File {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// legacyEvent is one event of a legacy torch.profiler trace (Debian's python3-torch writes these).
type legacyEvent struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	Ts   int            `json:"ts"`
	Dur  int            `json:"dur"`
	Tid  int            `json:"tid"`
	Pid  string         `json:"pid"`
	Args map[string]any `json:"args"`
}

// legacyTrace writes a legacy trace of two steps, each holding one region per name in turn.
func legacyTrace(t *testing.T, names []string) string {
	t.Helper()
	var events []legacyEvent
	ts := 10
	for step := range 2 {
		stepAt := ts
		ts++
		for _, name := range names {
			events = append(events, legacyEvent{Name: name, Ph: "X", Ts: ts, Dur: 10, Tid: 1, Pid: "CPU functions", Args: map[string]any{}})
			ts += 11
		}
		events = append(events, legacyEvent{Name: fmt.Sprintf("ProfilerStep#%d", step), Ph: "X", Ts: stepAt, Dur: ts - stepAt, Tid: 1, Pid: "CPU functions", Args: map[string]any{}})
		ts += 5
	}
	data, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "legacy.trace.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// checkRoles reads a legacy trace with a region named by each key, and one that names a phase
// the way users do ("Sample neighbours"), and checks the role each gets.
func checkRoles(t *testing.T, rows []nameRole) {
	t.Helper()
	want := map[string]role.Role{}
	var names []string
	for _, r := range rows {
		for _, k := range r.keys {
			if _, seen := want[k]; !seen { // a key some earlier row's key contains gets that row's role
				want[k], names = r.role, append(names, k)
			}
			phrase := strings.ToUpper(k[:1]) + k[1:] + " of the batch"
			want[phrase], names = roleOf(rows, phrase), append(names, phrase)
		}
	}
	tab, err := trace.ReadFile(legacyTrace(t, names), trace.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range tab.Len() {
		name := tab.NameOf(i)
		if r, ok := want[name]; ok && tab.Role[i] != r {
			t.Errorf("a legacy trace's region %q gets the role %s; docs/torch.md says %s", name, tab.Role[i], r)
		}
	}
}

// roleOf is the role the table gives name: its first row with a key name contains, ignoring case.
func roleOf(rows []nameRole, name string) role.Role {
	for _, r := range rows {
		if slices.ContainsFunc(r.keys, func(k string) bool { return strings.Contains(strings.ToLower(name), k) }) {
			return r.role
		}
	}
	return role.Other
}

// regionPriority is the analyzer's breakdown priority among the roles regions get.
func regionPriority(t *testing.T, rows []nameRole) []string {
	t.Helper()
	var names []string
	for _, r := range rows {
		names = append(names, r.keys[0])
	}
	p, err := analyze.Load(legacyTrace(t, names), analyze.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, class := range p.Breakdown.Priority {
		if slices.ContainsFunc(rows, func(r nameRole) bool { return r.role.String() == class }) {
			out = append(out, "`"+class+"`")
		}
	}
	return out
}

// checkSection compares the generated section name of the guide file with want, or with -update
// writes want into it. A section lies between the lines
// "<!-- generated: NAME (…) -->" and "<!-- end generated: NAME -->".
func checkSection(t *testing.T, file, name, want string) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	begin := []byte("<!-- generated: " + name + " ")
	end := []byte("<!-- end generated: " + name + " -->")
	i := bytes.Index(data, begin)
	j := bytes.Index(data, end)
	if i < 0 || j < i {
		t.Fatalf("%s: no generated section %q (between %q… and %q)", file, name, begin, end)
	}
	i += bytes.IndexByte(data[i:], '\n') + 1
	if got := string(data[i:j]); got == want {
		return
	} else if !*update {
		t.Fatalf("%s: the generated section %q is stale (go test ./docs -update rewrites it):\n--- in the file\n%s--- from the code\n%s", file, name, got, want)
	}
	out := slices.Concat(data[:i], []byte(want), data[j:])
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: rewrote the generated section %q", file, name)
}
