// Package saint implements GraphSAINT (Zeng et al., ICLR 2020): samplers that draw node-induced
// training subgraphs (node, edge and random-walk samplers), the normalization that makes
// mini-batch estimates unbiased (loss weights λ_v and aggregator weights α_uv from coverage
// counts), and a pipeline that samples ahead on other goroutines, deterministically per seed.
// Sub-package mhaug holds the MH-Aug augmentation chain that runs on top of it, and [Trainer] trains
// a GNN with both on a device ([train.Device]): `gnnprof run saint`.
//
// A subgraph keeps the map back to the original graph: its nodes' original ids and, for every
// local adjacency entry, the position of the original CSR entry it came from. Per-edge arrays over
// the original graph (the aggregator weights, MH-Aug's edge mask) are indexed through it.
package saint
