// Package gas is GNNAutoScale (Fey et al., ICML 2021), a port of its reference implementation
// pyg_autoscale (see ../shared/research/gas.md): mini-batch training of message-passing GNNs on
// METIS-class graph partitions, where a batch's out-of-batch neighbours (its halo) are
// represented by historical embeddings instead of being recomputed, so that device memory per
// step does not grow with the graph.
//
// Everything a GPU would hold lives on a [train.Device]: parameters, optimizer state, the batch's
// adjacency, features, activations and gradients, the pulled history rows. The histories
// themselves are [N × width] tables in pinned host memory. A [Pool] moves their rows: pulls
// (gathered on a worker goroutine, copied on a transfer stream) issued before the forward pass
// needs them, pushes copied back asynchronously, one wait per step; with SyncTransfers the same
// copies are synchronous, which is the paper's I/O experiment. Layer-wise inference over
// consecutive parts computes exact outputs for every node and refreshes every history.
//
// Under a memory cap (--batch-memory) a batch takes the parts that fit, and a part that alone
// passes the cap — a skewed graph's hub part — is split into pieces of its nodes in order, each a
// step that reads the rest of the part from the histories, as any out-of-batch node is read; the
// pieces' gradients, each weighted by its share of the part's training nodes, add up to one
// optimizer step, so the part trains as one batch.
//
// Models: GCN, GAT, APPNP, GCNII and GIN ([Models]), built from nn's layers, with the reference's
// per-dataset settings for Cora, CiteSeer and PubMed ([DefaultConfig]). A [Trainer] trains them
// (`gnnprof run gas`), recording the phases every gnnprof trainer records (package train), its
// forward pass broken by each history exchange.
package gas
