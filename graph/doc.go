// Package graph owns the datasets a trainer learns from: graphs in CSR form with node features,
// labels and splits; loaders for the dataset formats people keep on disk (Planetoid pickles, NumPy
// npz, LINQS, MUSAE CSV/JSON, OGB raw folders); seeded synthetic generators (stochastic block
// model, R-MAT); and a multilevel k-way partitioner with GNNAutoScale's perm/ptr output.
//
// Everything is stored in flat arrays (int32 node ids, int64 offsets, float32 values), so memory
// use is close to the size of the arrays themselves.
package graph
