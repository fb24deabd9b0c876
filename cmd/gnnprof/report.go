package main

import (
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gnnprof/gnnprof/analyze"
	"github.com/gnnprof/gnnprof/internal/outfile"
	"github.com/gnnprof/gnnprof/internal/progress"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/rundir"
)

func newReportCmd() *cobra.Command {
	var format, htmlPath string
	var top int
	var noHTML bool
	cmd := &cobra.Command{
		Use:   "report PATH",
		Short: "Analyse a trace and report where each step's time goes and what to fix",
		Long: `Analyse PATH and print the profile: steps, the per-step time breakdown, operators, copies,
memory, device activity and findings (bottlenecks with evidence and a fix).

PATH is a trace file (gnnprof's trace.json.gz, a torch.profiler Kineto trace *.pt.trace.json[.gz],
or a legacy torch trace), a run directory holding trace.json.gz, or a directory of the per-rank
traces of one distributed job (each naming its rank in its metadata or file name). A folder of
separate runs is refused (exit 2): report one run at a time, diff two, or serve the folder.
It prints a compact summary (--format summary, the default), the whole analysis as text
(--format text) or the versioned JSON schema documented in analyze/SCHEMA.md (--format json),
and writes a single-file HTML report next to the input (report.html in a run directory, else
<trace>.report.html) unless --no-html; -o names another path, and -o - writes the HTML to stdout
(the analysis then goes to stderr).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "summary", "text", "json"); err != nil {
				return err
			}
			opt := analyze.Options{TopOps: top}
			defer lowGCForAnalysis(&opt)()
			ctx, p := cmd.Context(), progressOf(cmd)
			a, err := loadForReport(ctx, p, args[0], opt)
			if err != nil {
				return err
			}
			p.End()
			if err := writeProfile(messagesTo(cmd, htmlPath), a.p, format); err != nil {
				return err
			}
			if noHTML {
				return nil
			}
			if htmlPath == "" {
				htmlPath = rundir.ReportPath(args[0])
			}
			p.Report(progress.Update{Task: "writing " + htmlPath})
			if err := writeHTMLReport(ctx, htmlPath, a.p, a.t, rundir.DirOf(args[0])); err != nil {
				return fmt.Errorf("%w (the analysis above is complete: --no-html skips the HTML report, -o writes it elsewhere)", err)
			}
			p.End()
			if !outfile.IsStdout(htmlPath) {
				fmt.Fprintln(cmd.ErrOrStderr(), "wrote", htmlPath)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "summary", "output format: summary, text or json")
	cmd.Flags().StringVarP(&htmlPath, "output", "o", "", "HTML report file to write (default: next to the input)")
	cmd.Flags().BoolVar(&noHTML, "no-html", false, "do not write the HTML report")
	cmd.Flags().IntVar(&top, "top", 30, "operators and kernels to list")
	return cmd
}

// analysisGCPercent is the GC target while traces are analysed. On a 500 MiB Kineto trace, 2
// rather than 25 takes peak RSS from 182–192 to 158–162 MiB in the same time.
const analysisGCPercent = 2

// lowGCForAnalysis sets opt to lower the GC target to analysisGCPercent once a trace is read, and
// returns what restores the target. The analysis holds a few large, pointer-free columns, which the
// GC does not scan: a low target keeps peak memory near the live data at little CPU cost. Reading
// allocates the table once and little else, and keeps the target it had: at a low one, each of
// its large allocations would start a GC cycle.
func lowGCForAnalysis(opt *analyze.Options) (restore func()) {
	gcPercent := debug.SetGCPercent(analysisGCPercent)
	debug.SetGCPercent(gcPercent)
	opt.Analysing = func() { debug.SetGCPercent(analysisGCPercent) }
	return func() { debug.SetGCPercent(gcPercent) }
}

// checkFormat is a usage error unless format is one of those allowed.
func checkFormat(format string, allowed ...string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	return usageErrorf("--format must be %s, not %q", orList(allowed), format)
}

// orList joins words as "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func writeProfile(w io.Writer, p *analyze.Profile, format string) error {
	switch format {
	case "json":
		return report.WriteJSON(w, p)
	case "summary":
		return writeSummary(w, p)
	}
	return report.WriteText(w, p, report.TextOptions{})
}
