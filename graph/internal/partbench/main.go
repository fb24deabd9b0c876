package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/internal/procmem"
	"github.com/gnnprof/gnnprof/internal/shareddata"
)

func main() {
	ks := flag.String("k", "8,64", "comma-separated part counts")
	seeds := flag.Int("seeds", 5, "runs per method and k, with seeds 1..seeds")
	rmat := flag.String("rmat", "rmat:scale=17,edges=16,features=0", "R-MAT generator spec")
	flag.Parse()
	if err := run(*ks, *seeds, *rmat); err != nil {
		fmt.Fprintln(os.Stderr, "partbench:", err)
		os.Exit(1)
	}
}

// stats accumulates one method's runs.
type stats struct {
	cut, imb float64 // sums
	secs     []float64
	peak     int64
}

func (s *stats) add(p *graph.Partitioning, secs float64, peak int64) {
	s.cut += float64(p.EdgeCut)
	s.imb += p.Imbalance
	s.secs = append(s.secs, secs)
	s.peak = max(s.peak, peak)
}

func (s *stats) median() float64 {
	slices.Sort(s.secs)
	return s.secs[len(s.secs)/2]
}

func run(ksFlag string, seeds int, rmat string) error {
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
	fmt.Printf("%d seeds per row; cut and imbalance are means, time the median, peak RSS the largest.\n\n", seeds)
	fmt.Println("| graph | nodes | edges | k | method | edge cut | cut ratio | imbalance | time (s) | time ratio | peak RSS (MiB) |")
	fmt.Println("| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, d := range datasets {
		ds, err := graph.Open(d.path, graph.LoadOptions{Seed: 1})
		if err != nil {
			return err
		}
		g := ds.Graph
		ds = nil
		for _, k := range ks {
			var metis, builtin stats
			for seed := uint64(1); seed <= uint64(seeds); seed++ {
				opt := graph.PartitionOptions{Seed: seed}
				m, err := graph.PartitionGpmetis(context.Background(), g, k, opt)
				if err != nil {
					return err
				}
				metis.add(m.Partitioning, m.Seconds, m.PeakRSS)

				runtime.GC()
				debug.FreeOSMemory()
				procmem.ResetPeakRSS()
				start := time.Now()
				p, err := graph.Partition(g, k, opt)
				if err != nil {
					return err
				}
				builtin.add(p, time.Since(start).Seconds(), procmem.PeakRSS())
			}
			n := float64(seeds)
			mt := metis.median()
			for _, r := range []struct {
				method string
				s      *stats
			}{{"gpmetis", &metis}, {"builtin", &builtin}} {
				cutRatio, timeRatio := "", ""
				if r.s == &builtin {
					cutRatio = fmt.Sprintf("%.3f", builtin.cut/max(metis.cut, 1))
					timeRatio = fmt.Sprintf("%.2f", builtin.median()/max(mt, 1e-3))
				}
				fmt.Printf("| %s | %d | %d | %d | %s | %.0f | %s | %.2f%% | %.3f | %s | %.1f |\n",
					d.name, g.N, g.NumEdges()/2, k, r.method, r.s.cut/n, cutRatio, 100*r.s.imb/n, r.s.median(), timeRatio, float64(r.s.peak)/(1<<20))
			}
		}
	}
	return nil
}
