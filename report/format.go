package report

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/gnnprof/gnnprof/role"
)

// fmtDur writes nanoseconds with a unit that keeps three significant digits: 812 ns, 12.4 µs,
// 3.27 ms, 1.50 s.
func fmtDur(ns int64) string {
	neg := ""
	if ns < 0 {
		neg, ns = "-", -ns
	}
	f := float64(ns)
	switch {
	case ns < 1000:
		return fmt.Sprintf("%s%d ns", neg, ns)
	case ns < 1_000_000:
		return neg + sig3(f/1e3) + " µs"
	case ns < 1_000_000_000:
		return neg + sig3(f/1e6) + " ms"
	}
	return neg + sig3(f/1e9) + " s"
}

// sig3 formats x (≥ 1) with three significant digits.
func sig3(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// fmtBytes writes a byte count in binary units: 512 B, 4.00 KiB, 1.50 GiB.
func fmtBytes(b int64) string {
	neg := ""
	if b < 0 {
		neg, b = "-", -b
	}
	if b < 1024 {
		return fmt.Sprintf("%s%d B", neg, b)
	}
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	f := float64(b) / 1024
	u := 0
	for f >= 1024 && u < len(units)-1 {
		f /= 1024
		u++
	}
	return neg + sig3(f) + " " + units[u]
}

// Commas writes an integer with thousands separators ("1,234,567").
func Commas(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// fmtPct writes a percentage with one decimal.
func fmtPct(p float64) string {
	if math.IsNaN(p) || math.IsInf(p, 0) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", p)
}

// fmtSigned writes a change with its sign: +1.20 ms, -3.0%.
func fmtSignedDur(ns int64) string {
	if ns > 0 {
		return "+" + fmtDur(ns)
	}
	return fmtDur(ns)
}

func fmtSignedPct(p float64) string {
	if p > 0 {
		return "+" + fmtPct(p)
	}
	return fmtPct(p)
}

// fmtMetric writes a finding's metric in its unit.
func fmtMetric(v float64, unit string) string {
	switch unit {
	case "%":
		return fmtPct(v)
	case "ns":
		return fmtDur(int64(math.Round(v)))
	case "bytes":
		return fmtBytes(int64(math.Round(v)))
	case "count": // rounded as the findings' sentences round it (%.0f)
		return Commas(int64(math.Round(v)))
	case "x":
		return fmt.Sprintf("%.2f×", v)
	case "GB/s":
		return fmt.Sprintf("%.2f GB/s", v)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%d %s", int64(v), unit)
	}
	return strings.TrimSpace(fmt.Sprintf("%.3g %s", v, unit))
}

// truncRunes cuts s to n runes, marking the cut with an ellipsis.
func truncRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// ms converts nanoseconds to milliseconds for charts.
func ms(ns int64) float64 { return math.Round(float64(ns)/1e3) / 1e3 }

// mib converts bytes to MiB for charts.
func mib(b int64) float64 { return math.Round(float64(b)/(1<<20)*1000) / 1000 }

// roleColor is the colour a role has in every chart and the timeline, so that forward looks the
// same everywhere.
func roleColor(r role.Role) string {
	if r < role.Count {
		return roleColors[r]
	}
	return "#9aa5b1"
}

// roleColors has a colour for every role (TestRoleColors).
var roleColors = [role.Count]string{
	role.Forward:   "#4e79a7",
	role.Backward:  "#f28e2b",
	role.Optimizer: "#e15759",
	role.Sample:    "#76b7b2",
	role.Gather:    "#59a14f",
	role.H2D:       "#edc948",
	role.D2H:       "#b07aa1",
	role.D2D:       "#ff9da7",
	role.Sync:      "#9c755f",
	role.History:   "#8cd17d",
	role.Augment:   "#86bcb6",
	role.Eval:      "#d37295",
	role.Dataload:  "#fabfd2",
	role.Kernel:    "#499894",
	role.Memset:    "#79706e",
	role.Runtime:   "#d4a6c8",
	role.CPU:       "#a0cbe8",
	role.Comm:      "#bcbd22",
	role.Other:     "#d3d3d3",
	role.Step:      "#e9edf2",
}

// FormatDuration writes nanoseconds as every report does: three significant digits and a unit
// (812 ns, 12.4 µs, 3.27 ms, 1.50 s). Other renderings (the web UI) use it to agree with them.
func FormatDuration(ns int64) string { return fmtDur(ns) }

// RoleColor is the colour r has in every chart and timeline.
func RoleColor(r role.Role) string { return roleColor(r) }

// Plural writes a count with the noun in the right number: "1 step", "2 steps", "1,204 copies".
func Plural(n int, one, many string) string {
	if n == 1 || n == -1 {
		return Commas(int64(n)) + " " + one
	}
	return Commas(int64(n)) + " " + many
}
