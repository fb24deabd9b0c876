package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// usageError marks errors caused by bad command-line usage (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usageErrorf is a usageError with a formatted message.
func usageErrorf(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// checkUsage makes every usage mistake in the tree below root a usageError, so that the exit code
// follows from the error's type: flag errors (through root's flag error function, which every
// command inherits), wrong positional arguments, missing required flags and conflicting flag
// groups (through each command's Args), and unknown subcommands (through a RunE on every command
// that only groups others). Call it once the tree is complete.
func checkUsage(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	walk(root, func(c *cobra.Command) {
		if c.HasSubCommands() && !c.Runnable() {
			c.Args = cobra.ArbitraryArgs
			c.RunE = runGroup
		}
		args := c.Args
		if args == nil {
			args = cobra.ArbitraryArgs
		}
		c.Args = func(c *cobra.Command, a []string) error {
			// cobra checks required flags and flag groups after the arguments, with plain
			// errors: check them here first so they are usage errors too.
			for _, check := range []func([]string) error{
				func(a []string) error { return args(c, a) },
				func([]string) error { return c.ValidateRequiredFlags() },
				func([]string) error { return c.ValidateFlagGroups() },
			} {
				if err := check(a); err != nil {
					return usageError{err}
				}
			}
			return nil
		}
	})
}

// runGroup runs a command that only groups subcommands: its help without arguments, a usage
// error naming the unknown subcommand otherwise.
func runGroup(c *cobra.Command, args []string) error {
	if len(args) == 0 {
		return c.Help()
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], c.CommandPath())
	c.SuggestionsMinimumDistance = max(c.SuggestionsMinimumDistance, 2)
	if s := c.SuggestionsFor(args[0]); len(s) > 0 {
		msg += " (did you mean " + strings.Join(s, " or ") + "?)"
	}
	return usageErrorf("%s; run '%s --help' for the commands", msg, c.CommandPath())
}

// walk calls fn on c and every command below it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}
