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
