package saint

import (
	"fmt"
	"slices"

	"github.com/gnnprof/gnnprof/saint/mhaug"
	"github.com/gnnprof/gnnprof/train"
)

// Config is every setting of a GraphSAINT training run ([DefaultConfig] gives the standard ones).
type Config struct {
	// Model is the GNN: "gcn" (GCN layers on the GraphSAINT-normalized GCN adjacency) or "sage"
	// (GraphSAGE-mean layers, which are GraphSAINT's own order-1 layers with the hops summed).
	Model string `json:"model"`
	// Sampler is one of [SamplerKinds]; Budget its draws per subgraph (0: [DefaultBudget]) and
	// WalkLength the rw sampler's walk length.
	Sampler    string `json:"sampler"`
	Budget     int    `json:"budget"`
	WalkLength int    `json:"walk_length"`
	// Coverage is GraphSAINT's sample_coverage: subgraphs are pre-sampled for the normalization
	// until they hold Coverage times as many nodes as there are training nodes.
	Coverage float64 `json:"sample_coverage"`
	// BatchesPerEpoch is the number of mini-batches of an epoch (0: the official rule,
	// ⌈|V_train| / nodes budgeted per subgraph⌉).
	BatchesPerEpoch int `json:"batches_per_epoch"`
	// SamplerWorkers is the number of sampling goroutines (0: GOMAXPROCS).
	SamplerWorkers int `json:"sampler_workers"`
	// Batching is how many batches the loader builds ahead (1; 0: each batch is sampled and built
	// inline, on the step's thread) and the batches' memory cap (a subgraph that would pass it is
	// split into pieces, each a step).
	train.Batching

	// Options are the settings every trainer has; Seed also seeds the sampling and the MH chain.
	train.Options
	// ClipNorm clips the gradients' global norm before each step, as GraphSAINT does (0: off).
	ClipNorm float64 `json:"clip_norm"`
	// NormalizeFeatures scales each node's features to sum 1 (Planetoid preprocessing).
	NormalizeFeatures bool `json:"normalize_features"`

	// Aug is the augmentation: "none" or "mh" (MH-Aug, with MH's settings).
	Aug string       `json:"aug"`
	MH  mhaug.Config `json:"mhaug"`
}

// Augmentations names the values of Config.Aug.
var Augmentations = []string{"none", "mh"}

// TrainerModels names the models the GraphSAINT trainer takes.
var TrainerModels = []string{"gcn", "sage"}

// DefaultBudget is the budget the paper's configurations give a sampler on PPI, the smallest graph
// of its Table 2: 6,000 nodes (node), 4,000 edges (edge), 3,000 roots of 2-step walks (rw).
func DefaultBudget(sampler string) int {
	switch sampler {
	case "node":
		return 6000
	case "edge":
		return 4000
	}
	return 3000
}

// DefaultConfig returns the standard settings: a two-layer GCN with 64 hidden units trained on
// rw subgraphs by Adam (lr 0.01, weight decay 5e-4, dropout 0.5, gradient norm clipped to 5 as
// GraphSAINT does) for 100 epochs, with MH-Aug's official hyperparameters when it is on.
func DefaultConfig() Config {
	return Config{Model: "gcn", Sampler: "rw", Budget: DefaultBudget("rw"), WalkLength: 2, Coverage: 50,
		Options: train.Options{Epochs: 100, LR: 0.01, WeightDecay: 5e-4, Hidden: 64, Dropout: 0.5, Seed: 1}, ClipNorm: 5,
		Batching:          train.Batching{Prefetch: 1},
		NormalizeFeatures: true, Aug: "none", MH: mhaug.DefaultConfig()}
}

// Validate checks the settings.
func (c *Config) Validate() error {
	switch {
	case !slices.Contains(TrainerModels, c.Model):
		return fmt.Errorf("GraphSAINT: unknown model %q (known: gcn, sage)", c.Model)
	case !slices.Contains(SamplerKinds, c.Sampler):
		return fmt.Errorf("GraphSAINT: unknown sampler %q (known: node, edge, rw)", c.Sampler)
	case c.Budget < 0:
		return fmt.Errorf("GraphSAINT: budget %d is negative", c.Budget)
	case c.Sampler == "rw" && c.WalkLength < 1:
		return fmt.Errorf("GraphSAINT: walk length %d, want at least 1", c.WalkLength)
	case !(c.Coverage > 0):
		return fmt.Errorf("GraphSAINT: sample coverage %g, want a positive number", c.Coverage)
	case c.BatchesPerEpoch < 0 || c.SamplerWorkers < 0:
		return fmt.Errorf("GraphSAINT: batches per epoch %d and sampler workers %d must not be negative", c.BatchesPerEpoch, c.SamplerWorkers)
	case c.ClipNorm < 0:
		return fmt.Errorf("GraphSAINT: gradient clip norm %g is negative", c.ClipNorm)
	case !slices.Contains(Augmentations, c.Aug):
		return fmt.Errorf("GraphSAINT: unknown augmentation %q (known: none, mh)", c.Aug)
	}
	if err := c.Batching.Validate(); err != nil {
		return fmt.Errorf("GraphSAINT: %w", err)
	}
	fc := c.fullConfig()
	if err := fc.Validate(); err != nil {
		return fmt.Errorf("GraphSAINT: %w", err)
	}
	if c.Aug == "mh" {
		return c.MH.Validate()
	}
	return nil
}

// budget is the sampler's budget, its default when unset.
func (c *Config) budget() int {
	if c.Budget == 0 {
		return DefaultBudget(c.Sampler)
	}
	return c.Budget
}

// nodesPerSubgraph is the node budget of one subgraph by the official rule: the nodes drawn
// (node), twice the edges (edge), roots times walk length (rw).
func (c *Config) nodesPerSubgraph() int {
	switch c.Sampler {
	case "edge":
		return 2 * c.budget()
	case "rw":
		return c.budget() * c.WalkLength
	}
	return c.budget()
}

// fullConfig is the settings of the model, optimizer and evaluation that GraphSAINT shares with
// full-batch training.
func (c *Config) fullConfig() train.FullConfig {
	return train.FullConfig{Model: c.Model, Options: c.Options, NormalizeFeatures: c.NormalizeFeatures}
}
