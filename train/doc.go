// Package train owns what every gnnprof trainer shares, so that the trainers (the full-batch
// [FullBatch] here, GNNAutoScale in package gas, GraphSAINT in package saint) train and record
// alike:
//
//   - the training options every trainer has ([Options]) and run.json's config ([RunConfig]);
//   - the epoch loop with best-validation tracking and early stopping ([Loop]), and a mini-batch
//     trainer's step loop ([Steps]);
//   - the phases of a step, each a span with its CPU-profile label ([Phase]: forward, loss,
//     backward, then [OptimizerStep] with its gradient clipping), and the scoring of an
//     evaluation ([Score], [Device.ReadScores]), so that every trainer's trace has the same shape;
//   - the device a trainer runs on ([Device]) with its buffers ([Buf], [Staged], [SparseBuf]) and
//     the read-back of values computed there ([Device.ReadBack]);
//   - the pipeline that builds batches ahead of training ([Prefetch]).
//
// The full-batch trainer is both a baseline and the reference for the mini-batch trainers.
package train
