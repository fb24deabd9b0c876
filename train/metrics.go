package train

import "github.com/gnnprof/gnnprof/nn"

// Accuracy is the fraction of rows whose highest-scoring class equals their label (0 for no
// rows). Ties go to the lowest class index, as argmax does.
func Accuracy(scores *nn.Mat, labels []int32, rows []int32) float64 {
	if len(rows) == 0 {
		return 0
	}
	correct := 0
	for _, r := range rows {
		if argmax(scores.Row(int(r))) == int(labels[r]) {
			correct++
		}
	}
	return float64(correct) / float64(len(rows))
}

func argmax(v []float32) int {
	best := 0
	for j, x := range v {
		if x > v[best] {
			best = j
		}
	}
	return best
}
