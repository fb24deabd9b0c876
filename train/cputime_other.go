//go:build !unix

package train

func processCPUSeconds() float64 { return 0 }
