// Package outfile writes a command's output file (-o FILE) without harming what the name points
// at: a regular file is replaced whole or not at all (a temporary file beside it, renamed over
// it), a symbolic link keeps being a link to the file now replaced, and a device, a FIFO or
// standard output ("-") is written straight into, never replaced. Every -o writer goes through it.
package outfile
