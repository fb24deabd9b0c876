// Package train owns what every gnnprof trainer shares: the epoch loop with best-validation
// tracking and early stopping, accuracy, run.json's config (RunConfig), and the full-batch
// training driver that is both a baseline and the reference for the mini-batch trainers.
package train
