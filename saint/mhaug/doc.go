// Package mhaug implements MH-Aug (Park et al., NeurIPS 2021) as GraphSAINT training uses it: a
// Metropolis–Hastings chain of augmented graphs G^(0) = G, G^(1), … advanced once per epoch, whose
// states are edge and node masks over the original graph, and the losses that train on them.
//
// A proposal draws global change ratios Δe', Δv' from truncated normals centred on the current
// state's, drops exactly ⌊|E|Δe'⌋ edge entries and ⌊nΔv'⌋ nodes of the original graph, measures
// each node's 2-hop ego-graph change with the unit-weight aggregation (A+I)²·1 and accepts with
// the MH ratio of the entropy-scaled target. Two implementations run the same chain, bit for
// bit, for the same random stream: [Fast] caches the original graph's aggregation and the current
// state's, resets masks in O(dropped), and reduces the target in one pass with one read-back per
// proposal; [Naive] does what the profiled student code did — copies the graph for every proposal,
// aggregates the original and current graphs again, and reads every node's target term back one
// at a time.
package mhaug
