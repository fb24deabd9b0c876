package train

import "fmt"

// Options are the training settings every trainer has, declared once: [FullConfig], and the
// configurations of package gas and package saint, embed them, so that run.json names them alike
// whatever the trainer ("epochs", "lr", …) and `gnnprof run` registers their flags once. Each
// trainer's default configuration (such as [DefaultFullConfig]) gives the model's values.
type Options struct {
	Epochs int `json:"epochs"` // at most
	// Patience is the number of epochs in which neither validation accuracy nor validation loss
	// improves before training stops early; 0: it never does.
	Patience    int     `json:"patience"`
	LR          float64 `json:"lr"`           // Adam's learning rate
	WeightDecay float64 `json:"weight_decay"` // L2 penalty on the model's regularised layers
	Hidden      int     `json:"hidden"`       // hidden width, per head for GAT
	Dropout     float64 `json:"dropout"`      // feature dropout
	// Seed seeds the run's random numbers: initialization, dropout, and the trainer's own
	// (sampling, batch order).
	Seed uint64 `json:"seed"`
}

// Validate checks the options.
func (o *Options) Validate() error {
	switch {
	case o.Epochs <= 0:
		return fmt.Errorf("epochs must be positive, got %d", o.Epochs)
	case o.Patience < 0:
		return fmt.Errorf("patience must not be negative, got %d", o.Patience)
	case !(o.LR > 0):
		return fmt.Errorf("learning rate must be positive, got %g", o.LR)
	case !(o.WeightDecay >= 0):
		return fmt.Errorf("weight decay must not be negative, got %g", o.WeightDecay)
	case o.Hidden <= 0:
		return fmt.Errorf("hidden width must be positive, got %d", o.Hidden)
	case !(o.Dropout >= 0 && o.Dropout < 1):
		return fmt.Errorf("dropout must be in [0, 1), got %g", o.Dropout)
	}
	return nil
}

// Batching are the settings of the mini-batch trainers' batches (GNNAutoScale and GraphSAINT
// embed them), named alike in run.json and registered once as flags.
type Batching struct {
	// Prefetch is the number of batches built ahead of the one training, by a loader goroutine
	// (sampled, gathered into pinned memory, their upload queued), so that building batch k+1 hides
	// behind training batch k; 0: each batch is built inline, on the step's thread.
	Prefetch int `json:"prefetch"`
	// BatchMemory caps a batch's predicted peak device memory: "" no cap, "auto" (from the device
	// memory limit or the typical batch: [BatchMemory.SetAutoCap]) or a size such as "256MiB".
	// Batches predicted to pass it are split.
	BatchMemory string `json:"batch_memory"`
}

// MaxPrefetch bounds Batching.Prefetch: every batch built ahead holds its own buffers.
const MaxPrefetch = 16

// Validate checks the settings.
func (b *Batching) Validate() error {
	if b.Prefetch < 0 || b.Prefetch > MaxPrefetch {
		return fmt.Errorf("prefetch must be in [0, %d] batches, got %d", MaxPrefetch, b.Prefetch)
	}
	_, err := ParseBatchMemory(b.BatchMemory)
	return err
}
