package graph

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"github.com/gnnprof/gnnprof/internal/procmem"
)

// ErrNoGpmetis is returned by PartitionGpmetis when the gpmetis program is not on PATH.
var ErrNoGpmetis = errors.New("gpmetis not found on PATH (install METIS, e.g. the Debian package \"metis\")")

// GpmetisResult is a partition computed by METIS's gpmetis program with its own timing.
type GpmetisResult struct {
	*Partitioning
	// Seconds is the partitioning time gpmetis reports (without file input/output), or 0 if it
	// printed none.
	Seconds float64
	// PeakRSS is gpmetis's peak resident memory in bytes (0 where the OS does not report it).
	PeakRSS int64
}

// PartitionGpmetis partitions g into k parts with METIS's command-line program gpmetis (k-way,
// default options, allowed imbalance opt.Imbalance, seed opt.Seed, where 0 leaves gpmetis's own
// default seed). It writes g in METIS's graph format to a temporary folder, runs gpmetis and
// reads the part file back.
func PartitionGpmetis(ctx context.Context, g *CSR, k int, opt PartitionOptions) (*GpmetisResult, error) {
	bin, err := exec.LookPath("gpmetis")
	if err != nil {
		return nil, ErrNoGpmetis
	}
	if k < 1 || (k > g.N && g.N > 0) {
		return nil, fmt.Errorf("gpmetis: k = %d for %d nodes", k, g.N)
	}
	if !g.IsSymmetric() || g.NumSelfLoops() > 0 {
		g = g.Symmetrize()
	}
	if k == 1 {
		p, err := NewPartitioning(g, 1, make([]int32, g.N))
		return &GpmetisResult{Partitioning: p}, err
	}
	dir, err := os.MkdirTemp("", "gnnprof-gpmetis-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "graph")
	if err := WriteMETIS(file, g); err != nil {
		return nil, err
	}
	eps := opt.Imbalance
	if eps == 0 {
		eps = 0.03
	}
	args := []string{"-ptype=kway", fmt.Sprintf("-ufactor=%d", int(eps*1000+0.5))}
	if opt.Seed != 0 {
		// Seed 0 leaves gpmetis its own default seed, the partition its users get.
		args = append(args, fmt.Sprintf("-seed=%d", opt.Seed%(1<<31)))
	}
	args = append(args, file, strconv.Itoa(k))
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("gpmetis: %w", err)
	}
	stop := make(chan struct{})
	peak := procmem.WatchPeakRSS(cmd.Process.Pid, stop)
	err = cmd.Wait()
	close(stop)
	peakRSS := <-peak
	if err != nil {
		return nil, fmt.Errorf("gpmetis %v: %w\n%s", args, err, out.Bytes())
	}
	partFile := fmt.Sprintf("%s.part.%d", file, k)
	parts, err := readPartFile(partFile, g.N, k)
	if err != nil {
		return nil, err
	}
	p, err := NewPartitioning(g, k, parts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", partFile, err)
	}
	return &GpmetisResult{Partitioning: p, Seconds: gpmetisSeconds(out.Bytes()), PeakRSS: peakRSS}, nil
}

// WriteMETIS writes a symmetric graph without self loops in METIS's graph file format: a header
// "n m" (m undirected edges), then one line of 1-based neighbour ids per node.
func WriteMETIS(path string, g *CSR) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, "%d %d\n", g.N, g.NumEdges()/2)
	var buf []byte
	for u := 0; u < g.N; u++ {
		buf = buf[:0]
		for i, v := range g.Neighbors(u) {
			if i > 0 {
				buf = append(buf, ' ')
			}
			buf = strconv.AppendInt(buf, int64(v)+1, 10)
		}
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// readPartFile reads gpmetis's output: one 0-based part id per line.
func readPartFile(path string, n, k int) ([]int32, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	parts := make([]int32, 0, n)
	for i, line := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		v, err := strconv.Atoi(string(bytes.TrimSpace(line)))
		if err != nil || v < 0 || v >= k {
			return nil, fmt.Errorf("%s: line %d: %q is not a part id in [0, %d)", path, i+1, line, k)
		}
		parts = append(parts, int32(v))
	}
	if len(parts) != n {
		return nil, fmt.Errorf("%s: %d lines for %d nodes", path, len(parts), n)
	}
	return parts, nil
}

// gpmetisSeconds extracts "Partitioning: x sec" from gpmetis's timing report.
func gpmetisSeconds(out []byte) float64 {
	for _, line := range bytes.Split(out, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if rest, ok := bytes.CutPrefix(line, []byte("Partitioning:")); ok {
			var s float64
			if _, err := fmt.Sscanf(string(bytes.TrimSpace(rest)), "%g", &s); err == nil {
				return s
			}
		}
	}
	return 0
}
