package gas

import (
	"fmt"
	"slices"
	"strings"
)

// Config is every setting of a GNNAutoScale run.
type Config struct {
	Model  string `json:"model"`
	Layers int    `json:"layers"` // message-passing layers; APPNP: propagation steps K
	Hidden int    `json:"hidden"` // per head for GAT
	// Heads and OutHeads are GAT's attention heads in the hidden layers (concatenated) and the
	// last (averaged).
	Heads    int     `json:"heads,omitempty"`
	OutHeads int     `json:"out_heads,omitempty"`
	Dropout  float64 `json:"dropout"`         // feature dropout, and GAT's attention dropout
	Alpha    float64 `json:"alpha,omitempty"` // APPNP's teleport probability, GCNII's initial residual
	Theta    float64 `json:"theta,omitempty"` // GCNII's identity-mapping strength

	Parts       int    `json:"parts"`       // graph partitions
	BatchParts  int    `json:"batch_parts"` // partitions per mini-batch
	Partitioner string `json:"partitioner"` // builtin, gpmetis or random
	// PartitionSeed seeds the partitioner. It is not the run's seed: as in the reference, every
	// run on a dataset trains on the same partitions.
	PartitionSeed uint64 `json:"partition_seed"`

	Epochs            int     `json:"epochs"`
	LR                float64 `json:"lr"`
	WeightDecay       float64 `json:"weight_decay"`        // on the regularised layers
	NonRegWeightDecay float64 `json:"nonreg_weight_decay"` // on the others
	GradNorm          float64 `json:"grad_norm,omitempty"` // clip the gradients' norm to it; 0: no clipping

	// PoolSize is the number of pull slots (0: one per history); BufferRows their initial rows
	// (0: the largest inference batch). A slot grows when a pull needs more.
	PoolSize   int `json:"pool_size"`
	BufferRows int `json:"buffer_rows"`
	// SyncTransfers makes every history and batch transfer synchronous (no pool, no prefetch),
	// for the paper's I/O experiment.
	SyncTransfers bool `json:"sync_transfers"`

	Seed uint64 `json:"seed"`
	// NormalizeFeatures scales each node's features to sum 1 (Planetoid preprocessing).
	NormalizeFeatures bool `json:"normalize_features"`
	// DenseInput feeds dense features even when the dataset has sparse ones.
	DenseInput bool `json:"dense_input"`
}

// DefaultConfig returns the reference's settings for model on dataset (pyg_autoscale's
// small_benchmark for Cora, CiteSeer and PubMed; gas.md §8), and moderate settings elsewhere.
func DefaultConfig(model, dataset string) Config {
	c := Config{Model: model, Layers: 2, Hidden: 64, Dropout: 0.5, Parts: 40, BatchParts: 10, Partitioner: "builtin",
		PartitionSeed: 1, Epochs: 30, LR: 0.01, WeightDecay: 5e-4, Seed: 1, NormalizeFeatures: true}
	switch model {
	case "gat":
		c.Hidden, c.Heads, c.OutHeads, c.Dropout, c.LR = 8, 8, 1, 0.6, 0.005
	case "appnp":
		c.Layers, c.Alpha = 10, 0.1
	case "gcn2":
		c.Layers, c.Alpha, c.Theta, c.NonRegWeightDecay = 4, 0.1, 0.5, 5e-4
	}
	if r, ok := smallBenchmark[strings.ToLower(dataset)+"/"+model]; ok {
		c.Layers, c.Hidden, c.Dropout, c.Parts, c.BatchParts = r.Layers, r.Hidden, r.Dropout, r.Parts, r.BatchParts
		c.LR, c.WeightDecay, c.NonRegWeightDecay, c.GradNorm, c.Epochs = r.LR, r.WeightDecay, r.NonRegWeightDecay, r.GradNorm, r.Epochs
		c.OutHeads = max(c.OutHeads, r.OutHeads)
		if r.Alpha > 0 {
			c.Alpha, c.Theta = r.Alpha, r.Theta
		}
	}
	return c
}

// smallBenchmark is pyg_autoscale's small_benchmark configuration (gas.md §8.1) by dataset/model:
// layers (APPNP: K), hidden width (per head for GAT, with 8 heads), dropout, parts per batch,
// learning rate, weight decay of the regularised and the other layers, gradient clipping, epochs.
var smallBenchmark = map[string]Config{
	"cora/gcn":       {Layers: 2, Hidden: 16, Dropout: 0.5, Parts: 40, BatchParts: 10, LR: 0.01, WeightDecay: 5e-4, GradNorm: 1, Epochs: 200},
	"citeseer/gcn":   {Layers: 2, Hidden: 16, Dropout: 0.5, Parts: 24, BatchParts: 8, LR: 0.01, WeightDecay: 5e-4, Epochs: 200},
	"pubmed/gcn":     {Layers: 2, Hidden: 16, Dropout: 0.5, Parts: 8, BatchParts: 4, LR: 0.01, WeightDecay: 5e-4, GradNorm: 1, Epochs: 200},
	"cora/gat":       {Layers: 2, Hidden: 8, Dropout: 0.6, Parts: 40, BatchParts: 10, LR: 0.005, WeightDecay: 5e-4, GradNorm: 1, Epochs: 400},
	"citeseer/gat":   {Layers: 2, Hidden: 8, Dropout: 0.6, Parts: 24, BatchParts: 8, LR: 0.005, WeightDecay: 5e-4, Epochs: 400},
	"pubmed/gat":     {Layers: 2, Hidden: 8, Dropout: 0.6, Parts: 4, BatchParts: 1, LR: 0.01, WeightDecay: 1e-3, Epochs: 400, OutHeads: 8},
	"cora/appnp":     {Layers: 10, Hidden: 64, Dropout: 0.5, Parts: 4, BatchParts: 2, LR: 0.01, WeightDecay: 5e-3, Epochs: 600},
	"citeseer/appnp": {Layers: 10, Hidden: 64, Dropout: 0.5, Parts: 24, BatchParts: 6, LR: 0.01, WeightDecay: 5e-3, GradNorm: 1, Epochs: 600},
	"pubmed/appnp":   {Layers: 10, Hidden: 64, Dropout: 0.5, Parts: 4, BatchParts: 2, LR: 0.01, WeightDecay: 5e-3, GradNorm: 1, Epochs: 600},
	"cora/gcn2": {Layers: 64, Hidden: 64, Dropout: 0.6, Parts: 2, BatchParts: 1, LR: 0.01, WeightDecay: 0.01, NonRegWeightDecay: 5e-4,
		Epochs: 1000, Alpha: 0.1, Theta: 0.5},
	"citeseer/gcn2": {Layers: 32, Hidden: 256, Dropout: 0.7, Parts: 40, BatchParts: 20, LR: 0.01, WeightDecay: 0.01, NonRegWeightDecay: 5e-4,
		GradNorm: 1, Epochs: 1000, Alpha: 0.1, Theta: 0.6},
	"pubmed/gcn2": {Layers: 16, Hidden: 256, Dropout: 0.5, Parts: 4, BatchParts: 2, LR: 0.01, WeightDecay: 5e-4, NonRegWeightDecay: 5e-4,
		Epochs: 1000, Alpha: 0.1, Theta: 0.4},
}

// Validate checks the settings.
func (c *Config) Validate() error {
	switch {
	case !slices.Contains(Models, c.Model):
		return fmt.Errorf("unknown model %q (known: %s)", c.Model, strings.Join(Models, ", "))
	case !slices.Contains(Partitioners, c.Partitioner):
		return fmt.Errorf("unknown partitioner %q (known: %s)", c.Partitioner, strings.Join(Partitioners, ", "))
	case c.Layers < 1 || c.Layers > 256:
		return fmt.Errorf("layers must be in [1, 256], got %d", c.Layers)
	case c.Hidden <= 0:
		return fmt.Errorf("hidden width must be positive, got %d", c.Hidden)
	case c.Model == "gat" && (c.Heads <= 0 || c.OutHeads <= 0):
		return fmt.Errorf("GAT heads %d and output heads %d must be positive", c.Heads, c.OutHeads)
	case c.Dropout < 0 || c.Dropout >= 1:
		return fmt.Errorf("dropout must be in [0, 1), got %g", c.Dropout)
	case c.Alpha < 0 || c.Alpha > 1:
		return fmt.Errorf("alpha must be in [0, 1], got %g", c.Alpha)
	case c.Theta < 0:
		return fmt.Errorf("theta must not be negative, got %g", c.Theta)
	case c.Parts < 1:
		return fmt.Errorf("parts must be positive, got %d", c.Parts)
	case c.BatchParts < 1 || c.BatchParts > c.Parts:
		return fmt.Errorf("batch parts must be in [1, parts = %d], got %d", c.Parts, c.BatchParts)
	case c.Epochs <= 0:
		return fmt.Errorf("epochs must be positive, got %d", c.Epochs)
	case c.LR <= 0:
		return fmt.Errorf("learning rate must be positive, got %g", c.LR)
	case c.WeightDecay < 0 || c.NonRegWeightDecay < 0 || c.GradNorm < 0:
		return fmt.Errorf("weight decay and gradient norm must not be negative")
	case c.PoolSize < 0 || c.BufferRows < 0:
		return fmt.Errorf("pool size and buffer rows must not be negative")
	}
	return nil
}
