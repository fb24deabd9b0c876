package rundir

import "github.com/gnnprof/gnnprof/trace"

// Counter names under which RecordEpoch writes an epoch's metrics into the trace: run.json's
// epoch field names.
const (
	counterEpoch    = "epoch"
	counterLoss     = "loss"
	counterTrainAcc = "train_acc"
	counterValAcc   = "val_acc"
	counterTestAcc  = "test_acc"
	counterSeconds  = "seconds"
)

// RecordEpoch records e's metrics on lane as counters, so that a run can be followed from its
// trace while it trains (run.json is written only at the end). Call it before the epoch's step
// ends: the step's end flushes the trace.
func RecordEpoch(lane *trace.Lane, e Epoch) {
	lane.Counter(counterEpoch, float64(e.Epoch))
	lane.Counter(counterLoss, e.Loss)
	lane.Counter(counterTrainAcc, e.TrainAcc)
	lane.Counter(counterValAcc, e.ValAcc)
	lane.Counter(counterTestAcc, e.TestAcc)
	lane.Counter(counterSeconds, e.Seconds)
}

// TraceEpochs reads back the epochs RecordEpoch wrote into t, in the order recorded.
func TraceEpochs(t *trace.Table) []Epoch {
	var epochs []Epoch
	lane := int32(-1) // the lane of the epoch being filled
	for i := range t.Len() {
		if t.Kind[i] != trace.KindCounter {
			continue
		}
		v := t.Value[i]
		name := t.NameOf(i)
		if name == counterEpoch {
			epochs = append(epochs, Epoch{Epoch: int(v)})
			lane = t.Lane[i]
			continue
		}
		if len(epochs) == 0 || t.Lane[i] != lane {
			continue
		}
		e := &epochs[len(epochs)-1]
		switch name {
		case counterLoss:
			e.Loss = v
		case counterTrainAcc:
			e.TrainAcc = v
		case counterValAcc:
			e.ValAcc = v
		case counterTestAcc:
			e.TestAcc = v
		case counterSeconds:
			e.Seconds = v
		}
	}
	return epochs
}
