// Package progress is how long-running work (loading and generating datasets, partitioning,
// training) says how far it has come without knowing how that is shown: the work reports
// Updates to a Func it is given, nil meaning nobody is listening, and the command line renders
// them (a bar on a terminal, periodic lines on stderr otherwise, nothing with --quiet).
package progress
