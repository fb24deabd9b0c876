// Package train owns what every gnnprof trainer shares: the epoch loop with best-validation
// tracking and early stopping, accuracy, the run's configuration as run.json records it, and the
// full-batch training driver that is both a baseline and the reference for the mini-batch
// trainers.
package train
