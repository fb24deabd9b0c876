package gas

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gnnprof/gnnprof/train"
)

// Config is every setting of a GNNAutoScale run ([DefaultConfig] gives the reference's).
type Config struct {
	Model string `json:"model"`
	// Options are the settings every trainer has. Hidden is per head for GAT; Dropout is the
	// feature dropout and GAT's attention dropout; WeightDecay applies to the regularised layers.
	train.Options
	Layers int `json:"layers"` // message-passing layers; APPNP: propagation steps K
	// Heads and OutHeads are GAT's attention heads in the hidden layers (concatenated) and the
	// last (averaged).
	Heads    int     `json:"heads,omitempty"`
	OutHeads int     `json:"out_heads,omitempty"`
	Alpha    float64 `json:"alpha,omitempty"` // APPNP's teleport probability, GCNII's initial residual
	Theta    float64 `json:"theta,omitempty"` // GCNII's identity-mapping strength

	Parts       int    `json:"parts"`       // graph partitions
	BatchParts  int    `json:"batch_parts"` // partitions per mini-batch
	Partitioner string `json:"partitioner"` // builtin, gpmetis or random
	// PartitionSeed seeds the partitioner. It is not the run's seed: as in the reference, every
	// run on a dataset trains on the same partitions.
	PartitionSeed uint64 `json:"partition_seed"`

	NonRegWeightDecay float64 `json:"nonreg_weight_decay"` // weight decay of the layers not regularised
	GradNorm          float64 `json:"grad_norm,omitempty"` // clip the gradients' norm to it; 0: no clipping

	// PoolSize is the number of pull slots (0: one per history); BufferRows their initial rows
	// (0: the largest inference batch). A slot grows when a pull needs more.
	PoolSize   int `json:"pool_size"`
	BufferRows int `json:"buffer_rows"`
	// SyncTransfers makes every history and batch transfer synchronous (no pool), for the
	// paper's I/O experiment; its runs build batches inline unless told to prefetch.
	SyncTransfers bool `json:"sync_transfers"`
	// Batching is how many batches are built ahead (2, as the reference's loader does; 0 with
	// SyncTransfers) and the batches' memory cap.
	train.Batching

	// NormalizeFeatures scales each node's features to sum 1 (Planetoid preprocessing).
	NormalizeFeatures bool `json:"normalize_features"`
	// DenseInput feeds dense features even when the dataset has sparse ones.
	DenseInput bool `json:"dense_input"`
}

// DefaultConfig returns the reference's settings for model on dataset (pyg_autoscale's
// small_benchmark for Cora, CiteSeer and PubMed; gas.md §8), and moderate settings elsewhere.
// Training never stops early (Patience 0), as in the reference.
func DefaultConfig(model, dataset string) Config {
	c := Config{Model: model, Options: train.Options{Epochs: 30, LR: 0.01, WeightDecay: 5e-4, Hidden: 64, Dropout: 0.5, Seed: 1},
		Layers: 2, Parts: 40, BatchParts: 10, Partitioner: "builtin", PartitionSeed: 1, NormalizeFeatures: true,
		Batching: train.Batching{Prefetch: DefaultPrefetch}}
	switch model {
	case "gat":
		c.Hidden, c.Heads, c.OutHeads, c.Dropout, c.LR = 8, 8, 1, 0.6, 0.005
	case "appnp":
		c.Layers, c.Alpha = 10, 0.1
	case "gcn2":
		c.Layers, c.Alpha, c.Theta, c.NonRegWeightDecay = 4, 0.1, 0.5, 5e-4
	}
	if r, ok := smallBenchmark[strings.ToLower(dataset)+"/"+model]; ok {
		c.Layers, c.Hidden, c.Dropout, c.Parts, c.BatchParts = r.layers, r.hidden, r.dropout, r.parts, r.batchParts
		c.LR, c.WeightDecay, c.NonRegWeightDecay, c.GradNorm, c.Epochs = r.lr, r.weightDecay, r.nonRegWeightDecay, r.gradNorm, r.epochs
		c.OutHeads = max(c.OutHeads, r.outHeads)
		if r.alpha > 0 {
			c.Alpha, c.Theta = r.alpha, r.theta
		}
	}
	return c
}

// reference is a model's settings on a dataset in the reference's configuration.
type reference struct {
	layers, hidden, parts, batchParts, outHeads, epochs                 int
	dropout, lr, weightDecay, nonRegWeightDecay, gradNorm, alpha, theta float64
}

// smallBenchmark is pyg_autoscale's small_benchmark configuration (gas.md §8.1) by dataset/model:
// layers (APPNP: K), hidden width (per head for GAT, with 8 heads), dropout, parts per batch,
// learning rate, weight decay of the regularised and the other layers, gradient clipping, epochs.
var smallBenchmark = map[string]reference{
	"cora/gcn":       {layers: 2, hidden: 16, dropout: 0.5, parts: 40, batchParts: 10, lr: 0.01, weightDecay: 5e-4, gradNorm: 1, epochs: 200},
	"citeseer/gcn":   {layers: 2, hidden: 16, dropout: 0.5, parts: 24, batchParts: 8, lr: 0.01, weightDecay: 5e-4, epochs: 200},
	"pubmed/gcn":     {layers: 2, hidden: 16, dropout: 0.5, parts: 8, batchParts: 4, lr: 0.01, weightDecay: 5e-4, gradNorm: 1, epochs: 200},
	"cora/gat":       {layers: 2, hidden: 8, dropout: 0.6, parts: 40, batchParts: 10, lr: 0.005, weightDecay: 5e-4, gradNorm: 1, epochs: 400},
	"citeseer/gat":   {layers: 2, hidden: 8, dropout: 0.6, parts: 24, batchParts: 8, lr: 0.005, weightDecay: 5e-4, epochs: 400},
	"pubmed/gat":     {layers: 2, hidden: 8, dropout: 0.6, parts: 4, batchParts: 1, lr: 0.01, weightDecay: 1e-3, epochs: 400, outHeads: 8},
	"cora/appnp":     {layers: 10, hidden: 64, dropout: 0.5, parts: 4, batchParts: 2, lr: 0.01, weightDecay: 5e-3, epochs: 600},
	"citeseer/appnp": {layers: 10, hidden: 64, dropout: 0.5, parts: 24, batchParts: 6, lr: 0.01, weightDecay: 5e-3, gradNorm: 1, epochs: 600},
	"pubmed/appnp":   {layers: 10, hidden: 64, dropout: 0.5, parts: 4, batchParts: 2, lr: 0.01, weightDecay: 5e-3, gradNorm: 1, epochs: 600},
	"cora/gcn2": {layers: 64, hidden: 64, dropout: 0.6, parts: 2, batchParts: 1, lr: 0.01, weightDecay: 0.01, nonRegWeightDecay: 5e-4,
		epochs: 1000, alpha: 0.1, theta: 0.5},
	"citeseer/gcn2": {layers: 32, hidden: 256, dropout: 0.7, parts: 40, batchParts: 20, lr: 0.01, weightDecay: 0.01, nonRegWeightDecay: 5e-4,
		gradNorm: 1, epochs: 1000, alpha: 0.1, theta: 0.6},
	"pubmed/gcn2": {layers: 16, hidden: 256, dropout: 0.5, parts: 4, batchParts: 2, lr: 0.01, weightDecay: 5e-4, nonRegWeightDecay: 5e-4,
		epochs: 1000, alpha: 0.1, theta: 0.4},
}

// DefaultPrefetch is the batches built ahead with asynchronous transfers (none with synchronous
// ones): the one whose upload is queued after the step's forward pass, and one more.
const DefaultPrefetch = 2

// Validate checks the settings.
func (c *Config) Validate() error {
	if err := errors.Join(c.Options.Validate(), c.Batching.Validate()); err != nil {
		return err
	}
	switch {
	case !slices.Contains(Models, c.Model):
		return fmt.Errorf("unknown model %q (known: %s)", c.Model, strings.Join(Models, ", "))
	case !slices.Contains(Partitioners, c.Partitioner):
		return fmt.Errorf("unknown partitioner %q (known: %s)", c.Partitioner, strings.Join(Partitioners, ", "))
	case c.Layers < 1 || c.Layers > 256:
		return fmt.Errorf("layers must be in [1, 256], got %d", c.Layers)
	case c.Model == "gat" && (c.Heads <= 0 || c.OutHeads <= 0):
		return fmt.Errorf("GAT heads %d and output heads %d must be positive", c.Heads, c.OutHeads)
	case c.Alpha < 0 || c.Alpha > 1:
		return fmt.Errorf("alpha must be in [0, 1], got %g", c.Alpha)
	case c.Theta < 0:
		return fmt.Errorf("theta must not be negative, got %g", c.Theta)
	case c.Parts < 1:
		return fmt.Errorf("parts must be positive, got %d", c.Parts)
	case c.BatchParts < 1 || c.BatchParts > c.Parts:
		return fmt.Errorf("batch parts must be in [1, parts = %d], got %d", c.Parts, c.BatchParts)
	case c.NonRegWeightDecay < 0 || c.GradNorm < 0:
		return fmt.Errorf("weight decay and gradient norm must not be negative")
	case c.PoolSize < 0 || c.BufferRows < 0:
		return fmt.Errorf("pool size and buffer rows must not be negative")
	}
	return nil
}
