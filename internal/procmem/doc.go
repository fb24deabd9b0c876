// Package procmem owns reading processes' peak resident memory (Linux's VmHWM): this process's, to
// put in run.json and partitioning reports, and a child's, such as gpmetis, while it runs.
// Elsewhere it reports 0.
package procmem
