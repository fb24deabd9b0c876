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
	set := func(layers, hidden int, dropout float64, parts, batch int, lr, wd, wd2, gradNorm float64, epochs int) {
		c.Layers, c.Hidden, c.Dropout, c.Parts, c.BatchParts = layers, hidden, dropout, parts, batch
		c.LR, c.WeightDecay, c.NonRegWeightDecay, c.GradNorm, c.Epochs = lr, wd, wd2, gradNorm, epochs
	}
	switch strings.ToLower(dataset) + "/" + model {
	case "cora/gcn":
		set(2, 16, 0.5, 40, 10, 0.01, 5e-4, 0, 1, 200)
	case "citeseer/gcn":
		set(2, 16, 0.5, 24, 8, 0.01, 5e-4, 0, 0, 200)
	case "pubmed/gcn":
		set(2, 16, 0.5, 8, 4, 0.01, 5e-4, 0, 1, 200)
	case "cora/gat":
		set(2, 8, 0.6, 40, 10, 0.005, 5e-4, 0, 1, 400)
	case "citeseer/gat":
		set(2, 8, 0.6, 24, 8, 0.005, 5e-4, 0, 0, 400)
	case "pubmed/gat":
		set(2, 8, 0.6, 4, 1, 0.01, 1e-3, 0, 0, 400)
		c.OutHeads = 8
	case "cora/appnp":
		set(10, 64, 0.5, 4, 2, 0.01, 5e-3, 0, 0, 600)
	case "citeseer/appnp":
		set(10, 64, 0.5, 24, 6, 0.01, 5e-3, 0, 1, 600)
	case "pubmed/appnp":
		set(10, 64, 0.5, 4, 2, 0.01, 5e-3, 0, 1, 600)
	case "cora/gcn2":
		set(64, 64, 0.6, 2, 1, 0.01, 0.01, 5e-4, 0, 1000)
		c.Alpha, c.Theta = 0.1, 0.5
	case "citeseer/gcn2":
		set(32, 256, 0.7, 40, 20, 0.01, 0.01, 5e-4, 1, 1000)
		c.Alpha, c.Theta = 0.1, 0.6
	case "pubmed/gcn2":
		set(16, 256, 0.5, 4, 2, 0.01, 5e-4, 5e-4, 0, 1000)
		c.Alpha, c.Theta = 0.1, 0.4
	}
	return c
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
