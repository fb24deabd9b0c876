package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gnnprof/gnnprof/graph"
	"github.com/gnnprof/gnnprof/report"
	"github.com/gnnprof/gnnprof/saint"
	"github.com/gnnprof/gnnprof/saint/mhaug"
	"github.com/gnnprof/gnnprof/train"
)

func init() { runTrainers = append(runTrainers, newRunSaintCmd) }

func newRunSaintCmd() *cobra.Command { return saintCommand(&saintOptions{cfg: saint.DefaultConfig()}) }

// saintCommand is `gnnprof run saint` with the options o, whose cfg holds the settings flags left
// unset keep.
func saintCommand(o *saintOptions) *cobra.Command {
	return trainerCommand(&cobra.Command{
		Use:   "saint [PATH|SPEC]",
		Short: "GraphSAINT mini-batch training, optionally with MH-Aug augmentation",
		Long: `GraphSAINT (Zeng et al., ICLR 2020): every step trains a complete GNN on a node-induced
subgraph drawn by a node, edge or random-walk sampler, with the loss and aggregator
normalization computed from pre-sampled subgraphs (--coverage). Training is transductive:
walks start at training nodes and evaluation runs on the whole graph.

With --aug mh, MH-Aug (Park et al., NeurIPS 2021) augments the graphs: a Metropolis-Hastings
chain of edge and node drops takes one step per epoch, and each batch is trained on its
subgraph seen through the original graph and the chain's last two states. --impl naive runs the
chain as the profiled student code did (a graph copy per proposal, the original graph
aggregated again, every per-node value read back from the device one at a time); --impl fast
caches and reads back one value per proposal. Both give the same chain for the same seed.

Everything runs on the device (the CPU standing in, with the --link model for its copies).
Defaults: a 2-layer GCN, 64 hidden units, rw sampler with 3,000 roots and walks of 2 steps
(PPI's settings in the paper), sample coverage 50, Adam lr 0.01 with weight decay 5e-4,
dropout 0.5, gradient norm clipped to 5, 100 epochs; MH-Aug's official hyperparameters.`,
		Example: `  gnnprof run saint ../shared/data/planetoid/ind.cora --out runs/cora-saint
  gnnprof run saint --data ../shared/data/facebook --aug mh --impl naive --epochs 5 --out runs/fb-naive
  gnnprof run saint --data "sbm:nodes=1000000,degree=10" --sampler rw --epochs 2 --no-report`,
	}, o)
}

// saintOptions are the flags of a GraphSAINT run: its own settings bound to cfg, which holds
// the defaults; the training options follow trainingFlags' rule.
type saintOptions struct {
	trainerFlags
	batching batchingFlags
	impl     string
	noNorm   bool
	cfg      saint.Config
	rerun    bool // cfg is a recorded run's (gnnprof fix)
}

func (o *saintOptions) register(f *pflag.FlagSet) {
	o.trainerFlags.register(f)
	c, mh := &o.cfg, &o.cfg.MH
	f.StringVar(&c.Model, "model", c.Model, "model: "+strings.Join(saint.TrainerModels, " or "))
	f.StringVar(&c.Sampler, "sampler", c.Sampler, "subgraph sampler: "+strings.Join(saint.SamplerKinds, ", "))
	// A budget and batch count left unset follow the sampler, unless a recorded run's settings are
	// rerun: their defaults are then the run's.
	budget, batches := 0, 0
	if o.rerun {
		budget, batches = c.Budget, c.BatchesPerEpoch
	}
	f.IntVar(&c.Budget, "budget", budget, "draws per subgraph: nodes (node), edges (edge) or walk roots (rw) (default: 6000, 4000 or 3000)")
	f.IntVar(&c.WalkLength, "walk-length", c.WalkLength, "steps of each random walk (rw sampler)")
	f.Float64Var(&c.Coverage, "coverage", c.Coverage, "sample coverage of the normalization: pre-sample subgraphs holding this many times the training nodes")
	f.IntVar(&c.BatchesPerEpoch, "batches", batches, "mini-batches per epoch (default ⌈training nodes / nodes budgeted per subgraph⌉)")
	f.IntVar(&c.SamplerWorkers, "sampler-workers", 0, "sampling goroutines (default GOMAXPROCS)")
	o.batching.register(f, strconv.Itoa(c.Prefetch))
	f.BoolVar(&o.noNorm, "no-normalize", !c.NormalizeFeatures, "do not row-normalize the features")
	f.Float64Var(&c.ClipNorm, "clip-norm", c.ClipNorm, "clip the gradients' global norm to this (0 = off)")
	f.StringVar(&c.Aug, "aug", c.Aug, "augmentation: none or mh (MH-Aug)")
	f.StringVar(&o.impl, "impl", mh.Impl.String(), "MH-Aug implementation: naive or fast (the same chain)")
	f.IntVar(&mh.MaxTries, "max-tries", mh.MaxTries, "MH-Aug: proposals per epoch before the chain stays where it is")
	for _, p := range []struct {
		v           *float64
		name, usage string
	}{
		{&mh.KL, "kl", "weight of the consistency loss"},
		{&mh.Entropy, "entropy", "weight of the entropy loss"},
		{&mh.MuE, "mu-e", "preferred ego-graph edge change"},
		{&mh.MuV, "mu-v", "preferred ego-graph node change"},
		{&mh.SigmaE, "sigma-e", "proposal deviation of the edge change ratio"},
		{&mh.SigmaV, "sigma-v", "proposal deviation of the node change ratio"},
		{&mh.AE, "a-e", "target width's growth with uncertainty (edges)"},
		{&mh.AV, "a-v", "target width's growth with uncertainty (nodes)"},
	} {
		f.Float64Var(p.v, p.name, *p.v, "MH-Aug: "+p.usage)
	}
}

// config returns the run's settings: the defaults, overridden by the flags given.
func (o *saintOptions) config(f *pflag.FlagSet) (saint.Config, error) {
	cfg := o.cfg
	o.training.apply(f, &cfg.Options)
	o.batching.apply(f, &cfg.Batching)
	cfg.NormalizeFeatures = !o.noNorm
	impl, err := mhaug.ParseImpl(o.impl)
	if err != nil {
		return cfg, err
	}
	cfg.MH.Impl = impl
	return cfg, cfg.Validate()
}

func (o *saintOptions) run(cmd *cobra.Command, args []string) error {
	if err := o.resolve(cmd, args); err != nil {
		return err
	}
	cfg, err := o.config(cmd.Flags())
	if err != nil {
		return usageError{err}
	}
	return o.recordOn(cmd, func(ds *graph.Dataset) (*trainerRun, error) {
		tr, err := saint.New(cfg, ds)
		if err != nil {
			return nil, err
		}
		return o.placedRun(tr, func(res *train.Result) string {
			aug := "no augmentation"
			if cfg.Aug == "mh" {
				proposals, accepted := 0, 0
				for _, t := range tr.Transitions {
					proposals += len(t.Proposals)
					if t.Accepted {
						accepted++
					}
				}
				aug = fmt.Sprintf("MH-Aug (%s): %d of %d chain steps accepted, %d proposals", cfg.MH.Impl, accepted, len(tr.Transitions), proposals)
			}
			return outcome(fmt.Sprintf("GraphSAINT %s (%s sampler, %s)", cfg.Model, cfg.Sampler, aug), ds.Name, res,
				report.Plural(tr.BatchesPerEpoch(), "batch", "batches")+" per epoch")
		})
	})
}
