package main

import (
	"context"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// commands lists every command of the CLI with its path ("gnnprof data info").
func commands() []*cobra.Command {
	var all []*cobra.Command
	walk(newRootCmd(), func(c *cobra.Command) { all = append(all, c) })
	return all
}

// shorthands are the one-letter flags the CLI has; a new one is a decision for this table.
var shorthands = map[string]string{"o": "output", "q": "quiet", "h": "help"}

// bannedNames are synonyms of the vocabulary's flags, with the flag to use instead.
var bannedNames = map[string]string{
	"json": "--format json", "html": "-o/--output", "fmt": "--format", "output-format": "--format",
	"dataset": "--data", "graph": "--data", "input": "--data or the argument", "in": "--data or the argument",
	"dir": "--out", "outdir": "--out", "out-dir": "--out", "output-dir": "--out",
	"file": "-o/--output", "outfile": "-o/--output", "out-file": "-o/--output", "output-file": "-o/--output",
	"silent": "--quiet", "no-progress": "--quiet", "random-seed": "--seed", "rng-seed": "--seed",
	"gen-seed": "--data-seed", "generator-seed": "--data-seed", "dataset-format": "--data-format",
	"method": "--partitioner", "algorithm": "--partitioner", "addr": "--http", "listen": "--http", "port": "--http",
}

var kebab = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)

// TestFlagVocabulary walks the whole command tree, so commands added later are checked too, and
// holds every flag to the CLI's one vocabulary (DESIGN.md): --data for a dataset (with
// --data-format and --data-seed), --seed for the command's own randomness, --out for a
// directory, -o/--output for a file, --format for the output format only, --quiet for progress.
func TestFlagVocabulary(t *testing.T) {
	for _, c := range commands() {
		path := c.CommandPath()
		fs := c.Flags()
		fs.AddFlagSet(c.InheritedFlags())
		if c.Runnable() && fs.Lookup("quiet") == nil {
			t.Errorf("%s: no --quiet", path)
		}
		has := func(name string) bool { return fs.Lookup(name) != nil }
		if has("data") != (has("data-format") && has("data-seed")) {
			t.Errorf("%s: --data, --data-format and --data-seed come together (datasetFlags)", path)
		}
		if has("data") && !strings.Contains(c.Use, "[PATH|SPEC]") {
			t.Errorf("%s: takes --data but its usage %q does not show the dataset argument [PATH|SPEC]", path, c.Use)
		}
		fs.VisitAll(func(f *pflag.Flag) {
			where := path + " --" + f.Name
			if f.Deprecated != "" {
				// An old name kept working: it must say what to use, and be hidden from help.
				if !strings.HasPrefix(f.Deprecated, "use --") || !f.Hidden {
					t.Errorf("%s: deprecated %q, hidden %v: say \"use --NEW\"", where, f.Deprecated, f.Hidden)
				}
				return
			}
			if !kebab.MatchString(f.Name) {
				t.Errorf("%s: flag names are lower-case words joined by dashes", where)
			}
			if use, ok := bannedNames[f.Name]; ok {
				t.Errorf("%s: use %s", where, use)
			}
			for _, suffix := range []string{"-file", "-path", "-dir", "-out", "-output"} {
				if strings.HasSuffix(f.Name, suffix) {
					t.Errorf("%s: a file to write is -o/--output, a directory --out, an input the argument or --data", where)
				}
			}
			if strings.HasSuffix(f.Name, "-format") && f.Name != "data-format" {
				t.Errorf("%s: --format is the output format; a dataset's format is --data-format", where)
			}
			if strings.HasSuffix(f.Name, "-seed") && f.Name != "data-seed" {
				t.Errorf("%s: --seed is the command's randomness, --data-seed the generator's", where)
			}
			if f.Shorthand != "" && f.ShorthandDeprecated == "" && shorthands[f.Shorthand] != f.Name {
				t.Errorf("%s: shorthand -%s (the shorthands are %v)", where, f.Shorthand, shorthands)
			}
			if f.Usage == "" {
				t.Errorf("%s: no usage text", where)
			}
			usage := strings.ToLower(f.Usage)
			check := func(ok bool, want string) {
				if !ok {
					t.Errorf("%s: %s (usage %q)", where, want, f.Usage)
				}
			}
			switch f.Name {
			case "output":
				check(f.Shorthand == "o" && f.Value.Type() == "string" && strings.Contains(usage, "file"), "-o/--output names a file to write")
			case "out":
				check(f.Value.Type() == "string" && strings.Contains(usage, "directory"), "--out names a directory")
			case "format":
				check(f.Value.Type() == "string" && strings.HasPrefix(usage, "output format:"), `--format is the output format ("output format: …")`)
			case "data":
				check(f.Value.Type() == "string" && strings.HasPrefix(usage, "dataset:"), `--data names a dataset ("dataset: …")`)
			case "data-seed":
				check(f.Value.Type() == "uint64", "--data-seed is a uint64 seed")
			case "seed":
				check(f.Value.Type() == "uint64" && !strings.Contains(usage, "dataset") && !strings.Contains(usage, "generat") &&
					!strings.Contains(usage, "split"), "--seed is the command's own randomness, not the dataset's (--data-seed)")
			case "quiet":
				check(f.Value.Type() == "bool", "--quiet is a switch")
			}
		})
	}
}

// TestUsageExitCodes: every usage mistake exits 2, on every command, decided by the error's
// type: an unknown flag, too many arguments, an unknown subcommand.
func TestUsageExitCodes(t *testing.T) {
	code := func(args ...string) int { return execute(context.Background(), args, io.Discard, io.Discard) }
	for _, c := range commands() {
		path := strings.Fields(c.CommandPath())[1:]
		if got := code(append(slices.Clone(path), "--no-such-flag")...); got != 2 {
			t.Errorf("%v --no-such-flag: exit %d, want 2", path, got)
		}
		if c.HasSubCommands() {
			if got := code(append(slices.Clone(path), "no-such-command")...); got != 2 {
				t.Errorf("%v no-such-command: exit %d, want 2", path, got)
			}
		}
		if c.Runnable() {
			if got := code(append(slices.Clone(path), "a1", "a2", "a3", "a4", "a5")...); got != 2 {
				t.Errorf("%v with five arguments: exit %d, want 2", path, got)
			}
		}
	}
}
