// Command partbench compares gnnprof's builtin partitioner with METIS's gpmetis on the shared
// real graphs and an R-MAT graph, and prints a Markdown table: edge cut (and its ratio to
// METIS), imbalance, time (and its ratio) and peak memory.
//
//	go run ./graph/internal/partbench [-k 8,64] [-seed 1] [-rmat rmat:scale=17,edges=16]
//
// Builtin times are measured in-process around graph.Partition; gpmetis times are the
// "Partitioning" time gpmetis itself reports (file input/output excluded). Peak memory is the
// resident high-water mark: for builtin, of this process during partitioning (reset after the
// dataset is loaded, so it covers the graph plus the partitioner's work arrays); for gpmetis, of
// the gpmetis process.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/shareddata"
)

func main() {
	ks := flag.String("k", "8,64", "comma-separated part counts")
	seed := flag.Uint64("seed", 1, "seed for both partitioners")
	rmat := flag.String("rmat", "rmat:scale=17,edges=16,features=0", "R-MAT generator spec")
	reps := flag.Int("reps", 3, "runs per method; the fastest time is reported")
	flag.Parse()
	if err := run(*ks, *seed, *rmat, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "partbench:", err)
		os.Exit(1)
	}
}

func run(ksFlag string, seed uint64, rmat string, reps int) error {
	var ks []int
	for _, s := range strings.Split(ksFlag, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || k < 1 {
			return fmt.Errorf("-k: %q is not a part count", s)
		}
		ks = append(ks, k)
	}
	shared := shareddata.Dir()
	if shared == "" {
		return fmt.Errorf("shared data folder not found (set GNNPROF_SHARED)")
	}
	datasets := []struct{ name, path string }{
		{"Cora", filepath.Join(shared, "data", "cora", "cora.npz")},
		{"Facebook", filepath.Join(shared, "data", "facebook")},
		{"Twitch-DE", filepath.Join(shared, "data", "twitch-de")},
		{"R-MAT", rmat},
	}
	fmt.Println("| graph | nodes | edges | k | method | edge cut | cut ratio | imbalance | time (s) | time ratio | peak RSS (MiB) |")
	fmt.Println("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, d := range datasets {
		ds, err := graph.Open(d.path, graph.LoadOptions{Seed: seed})
		if err != nil {
			return err
		}
		g := ds.Graph
		ds = nil
		for _, k := range ks {
			opt := graph.PartitionOptions{Seed: seed}
			var metis *graph.GpmetisResult
			var metisPeak int64
			for r := 0; r < reps; r++ {
				m, err := graph.PartitionGpmetis(context.Background(), g, k, opt)
				if err != nil {
					return err
				}
				if metis == nil || m.Seconds < metis.Seconds {
					metis = m
				}
				metisPeak = max(metisPeak, m.PeakRSS)
			}
			var best *graph.Partitioning
			bestTime := time.Duration(1 << 62)
			var peak int64
			for r := 0; r < reps; r++ {
				runtime.GC()
				debug.FreeOSMemory()
				graph.ResetPeakRSS()
				start := time.Now()
				p, err := graph.Partition(g, k, opt)
				if err != nil {
					return err
				}
				el := time.Since(start)
				peak = max(peak, graph.PeakRSS())
				bestTime = min(bestTime, el)
				best = p
			}
			row := func(method string, p *graph.Partitioning, secs float64, peak int64, ratio bool) {
				cutRatio, timeRatio := "", ""
				if ratio {
					cutRatio = fmt.Sprintf("%.3f", float64(p.EdgeCut)/float64(max(metis.EdgeCut, 1)))
					timeRatio = fmt.Sprintf("%.2f", secs/max(metis.Seconds, 1e-3))
				}
				fmt.Printf("| %s | %d | %d | %d | %s | %d | %s | %.2f%% | %.3f | %s | %.1f |\n",
					d.name, g.N, g.NumEdges()/2, k, method, p.EdgeCut, cutRatio, 100*p.Imbalance, secs, timeRatio, float64(peak)/(1<<20))
			}
			row("gpmetis", metis.Partitioning, metis.Seconds, metisPeak, false)
			row("builtin", best, bestTime.Seconds(), peak, true)
		}
	}
	return nil
}
