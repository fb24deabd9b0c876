package report

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/gnnprof/gnnprof/trace"
)

// writeTestPprof writes t's span profile to a temporary file and returns its path.
func writeTestPprof(t *testing.T, tb *trace.Table) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profile.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := WritePprof(f, tb); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// goPprof runs `go tool pprof args... path` and returns its output.
func goPprof(t *testing.T, path string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append(append([]string{"tool", "pprof"}, args...), path)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof %v: %v\n%s", args, err, out)
	}
	return string(out)
}

var (
	totalRE = regexp.MustCompile(`of (\d+)(ns|B)? total`)
	shownRE = regexp.MustCompile(`accounting for (\d+)(ns|B)?,`)
)

// pprofTotal parses the "of N total" of a -top report run with -unit=ns or -unit=B.
func pprofTotal(t *testing.T, out string) int64 {
	t.Helper()
	return pprofMatch(t, totalRE, out)
}

// pprofShown parses the "accounting for N" of a -top report: what its filters kept.
func pprofShown(t *testing.T, out string) int64 {
	t.Helper()
	return pprofMatch(t, shownRE, out)
}

func pprofMatch(t *testing.T, re *regexp.Regexp, out string) int64 {
	t.Helper()
	m := re.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no total in pprof output:\n%s", out)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// pprofFlat parses the flat column of -top's rows, by function name.
func pprofFlat(out string) map[string]int64 {
	flat := map[string]int64{}
	rows := false
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "flat%") {
			rows = true
			continue
		}
		f := strings.Fields(line)
		if !rows || len(f) < 6 {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimRight(f[0], "nsB"), 10, 64)
		if err == nil {
			flat[strings.Join(f[5:], " ")] = n
		}
	}
	return flat
}

// pprofTags parses -tags output: tag key → value → amount.
func pprofTags(out string) map[string]map[string]int64 {
	tags := map[string]map[string]int64{}
	var cur map[string]int64
	row := regexp.MustCompile(`^\s+(\d+)(ns|B)?\s+\(\s*[\d.]+%\):\s+(.*)$`)
	head := regexp.MustCompile(`^\s*(\w+): Total`)
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if m := head.FindStringSubmatch(line); m != nil {
			cur = map[string]int64{}
			tags[m[1]] = cur
			continue
		}
		if m := row.FindStringSubmatch(line); m != nil && cur != nil {
			n, _ := strconv.ParseInt(m[1], 10, 64)
			cur[m[3]] = n
		}
	}
	return tags
}

// tableTruth computes, straight from the events, what the span profile must add up to.
type tableTruth struct {
	wall, self, bytes, count int64
	roleWall, roleCount      map[string]int64
	stepWall                 map[string]int64
}

func truthOf(tb *trace.Table) tableTruth {
	tr := tableTruth{roleWall: map[string]int64{}, roleCount: map[string]int64{}, stepWall: map[string]int64{}}
	type iv struct{ s, e int64 }
	perLane := map[int32][]iv{}
	for i := range tb.Len() {
		if !isInterval(tb, i) {
			continue
		}
		d := tb.Dur[i]
		tr.wall += d
		tr.bytes += tb.Bytes[i]
		tr.count++
		tr.roleWall[tb.Role[i].String()] += d
		tr.roleCount[tb.Role[i].String()]++
		tr.stepWall[strconv.Itoa(int(tb.Step[i]))] += d
		perLane[tb.Lane[i]] = append(perLane[tb.Lane[i]], iv{tb.Start[i], tb.Start[i] + d})
	}
	// Self time over a lane of nested spans adds up to the union of its spans.
	for _, ivs := range perLane {
		var covered, reach int64 = 0, -1 << 62
		for _, v := range sortedIvs(ivs) {
			if v.e <= reach {
				continue
			}
			covered += v.e - max(v.s, reach)
			reach = v.e
		}
		tr.self += covered
	}
	return tr
}

func sortedIvs[T interface{ ~struct{ s, e int64 } }](ivs []T) []struct{ s, e int64 } {
	out := make([]struct{ s, e int64 }, len(ivs))
	for i, v := range ivs {
		out[i] = struct{ s, e int64 }(v)
	}
	for i := 1; i < len(out); i++ { // insertion sort: test sizes are small
		for j := i; j > 0 && out[j].s < out[j-1].s; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func TestPprofTotalsWithGoToolPprof(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	tb := synthTable(5, "spmm")
	truth := truthOf(tb)
	path := writeTestPprof(t, tb)

	for _, c := range []struct {
		index, unit string
		want        int64
	}{
		{"self", "ns", truth.self},
		{"wall", "ns", truth.wall},
		{"bytes", "B", truth.bytes},
	} {
		out := goPprof(t, path, "-top", "-nodefraction=0", "-unit="+c.unit, "-sample_index="+c.index)
		if got := pprofTotal(t, out); got != c.want {
			t.Errorf("-sample_index=%s total = %d, want %d\n%s", c.index, got, c.want, out)
		}
	}

	// Self time per function: gemm runs 800 µs in forward and 600 µs in backward per step and has
	// no children; backward's own time is its 3000 µs minus spmm_backward and gemm.
	top := pprofFlat(goPprof(t, path, "-top", "-nodefraction=0", "-unit=ns", "-sample_index=self"))
	for name, want := range map[string]int64{
		"gemm":                           5 * 1_400_000,
		"backward":                       5 * (3_000_000 - 1_900_000 - 600_000),
		"Memcpy HtoD [Pinned -> Device]": 5 * (400_000 + 100_000),
		"ProfilerStep#3":                 9_500_000 - 1_900_000 - 1_000_000 - 1_900_000 - 3_000_000 - 500_000 - 500_000 - 100_000,
	} {
		if top[name] != want {
			t.Errorf("self time of %q = %d, want %d", name, top[name], want)
		}
	}

	tags := pprofTags(goPprof(t, path, "-tags", "-unit=ns", "-sample_index=wall"))
	for role, want := range truth.roleWall {
		if got := tags["role"][role]; got != want {
			t.Errorf("-tags role=%s wall = %d, want %d", role, got, want)
		}
	}
	if got := tags["step"]["0"]; got != truth.stepWall["0"] {
		t.Errorf("-tags step 0 wall = %d, want %d (step 0 must survive encoding)", got, truth.stepWall["0"])
	}
	counts := pprofTags(goPprof(t, path, "-tags", "-sample_index=count"))
	for role, want := range truth.roleCount {
		if got := counts["role"][role]; got != want {
			t.Errorf("-tags role=%s count = %d, want %d", role, got, want)
		}
	}
	if got := counts["lane"]["stream 7"]; got != 5*4 {
		t.Errorf("-tags lane=stream 7 count = %d, want %d", got, 5*4)
	}

	// -tagfocus keeps one role's samples.
	out := goPprof(t, path, "-top", "-nodefraction=0", "-unit=ns", "-sample_index=wall", "-tagfocus=role=kernel")
	if got := pprofShown(t, out); got != truth.roleWall["kernel"] {
		t.Errorf("-tagfocus=role=kernel total = %d, want %d", got, truth.roleWall["kernel"])
	}
}

func TestPprofStacksLeafFirst(t *testing.T) {
	p, err := Pprof(synthTable(2, "spmm"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, s := range back.Sample {
		var names []string
		for _, l := range s.Location {
			names = append(names, l.Line[0].Function.Name)
		}
		if names[0] == "spmm" {
			found = true
			if len(names) != 3 || names[1] != "forward" || !strings.HasPrefix(names[2], "ProfilerStep#") {
				t.Errorf("spmm's stack = %v, want [spmm forward ProfilerStep#N]", names)
			}
		}
	}
	if !found {
		t.Error("no sample with spmm as its leaf")
	}
}

// Foreign traces do not record steps on events: the profile finds them from the step spans.
func TestPprofStepsFromStepSpans(t *testing.T) {
	tb := synthTable(3, "spmm")
	for i := range tb.Step {
		tb.Step[i] = -1
	}
	p, err := Pprof(tb)
	if err != nil {
		t.Fatal(err)
	}
	perStep := map[int64]int64{}
	for _, s := range p.Sample {
		if st, ok := s.NumLabel[LabelStep]; ok {
			perStep[st[0]] += s.Value[valCount]
		}
	}
	// Every host event of a step starts inside its span; the device lane's events too.
	want := int64((tb.Len() - 3*2) / 3) // memory events are not intervals
	for n := range int64(3) {
		if perStep[n] != want {
			t.Errorf("step %d has %d events, want %d", n, perStep[n], want)
		}
	}
}

// The span profile's flat numbers per name are the analyzer's operator table: wall = host total,
// self = host self.
func TestPprofMatchesAnalyzer(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go command not on PATH")
	}
	p, tb := analyzed(t, 8, "spmm")
	path := writeTestPprof(t, tb)
	wall := pprofFlat(goPprof(t, path, "-top", "-nodefraction=0", "-nodecount=1000", "-unit=ns", "-sample_index=wall"))
	self := pprofFlat(goPprof(t, path, "-top", "-nodefraction=0", "-nodecount=1000", "-unit=ns", "-sample_index=self"))
	if len(p.Ops.ByName) == 0 {
		t.Fatal("the analyzer found no operators")
	}
	// The analyzer's host self time counts only child spans; in the profile a copy made inside a
	// span is its child too (its own frame, carrying the bytes). gather_features holds the
	// synthetic step's 400 µs host-to-device copy.
	copyInside := map[string]int64{"gather_features": 8 * 400_000}
	for _, op := range p.Ops.ByName {
		name := pprofName(op.Name)
		if wall[name] != op.HostTotalNs {
			t.Errorf("%s: pprof wall %d, analyzer host total %d", op.Name, wall[name], op.HostTotalNs)
		}
		if self[name] != op.HostSelfNs-copyInside[op.Name] {
			t.Errorf("%s: pprof self %d, analyzer host self %d minus copies %d", op.Name, self[name], op.HostSelfNs, copyInside[op.Name])
		}
	}
	// Copy bytes add up to the analyzer's.
	out := goPprof(t, path, "-top", "-nodefraction=0", "-unit=B", "-sample_index=bytes")
	if got := pprofTotal(t, out); got != p.Copies.TotalBytes {
		t.Errorf("pprof bytes total %d, analyzer copies %d", got, p.Copies.TotalBytes)
	}
}
