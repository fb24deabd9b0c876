#!/usr/bin/env python3
"""Profile a small GNN training loop with torch.profiler, in the form gnnprof reads best.

A two-layer GCN-style model (mean aggregation, no PyG needed) trains on mini-batches of seed
nodes with a neighbour sampler. Every phase of the step is a record_function region whose name
gnnprof maps to a role (sample, h2d, gather, augment, forward, backward, optimizer, eval), and
prof.step() marks each step. Each --plant switch plants one known bottleneck; without it the step
runs the fixed version, so running both measures what the fix recovers:

  readbacks  the augmentation decides node by node, reading each random draw back (.item())
             fixed: one random mask for the whole batch, nothing read back
  eval       validation and test accuracy, a forward pass over the whole graph each, inside
             every training step
             fixed: both once, after training
  sampler    the neighbour sampler loops over the frontier node by node
             fixed: each hop is a few vectorised tensor operations
  edgewise   aggregation gathers one message per edge and scatters it back onto the nodes
             (index_select + index_add_: E x H values materialised, forward and backward)
             fixed: one sparse-dense product per layer (torch.sparse.mm)

  python3 examples/torch/train_gnn.py --out runs/torch-fixed
  python3 examples/torch/train_gnn.py --plant readbacks --out runs/torch-readbacks
  gnnprof report runs/torch-readbacks
  gnnprof diff runs/torch-readbacks runs/torch-fixed

--out is a directory; the trace goes to rank<R>.pt.trace.json.gz in it (R is $RANK: 0 without
torchrun), so a multi-GPU run writes one file per rank into the same directory and `gnnprof
report DIR` reads them all. Under torchrun (WORLD_SIZE > 1) the model is wrapped in
DistributedDataParallel and each rank trains on its own share of the seed nodes.

--data is a generated graph, "sbm:nodes=2000,degree=10,features=16,classes=7" by default
(communities with mostly intra-class edges; any key may be left out). Runs are deterministic for
a given --seed. The script works with Debian's torch 1.13 (no Kineto: the trace is the legacy JSON
array) and with torch 2.x, on the GPU when there is one (a Kineto trace with the CUDA kernels and
copies).
"""
import argparse
import os
import sys
import time

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile, record_function, schedule

BOTTLENECKS = ("readbacks", "eval", "sampler", "edgewise")


def parse_args(argv):
    summary, details = __doc__.split("\n\n", 1)
    p = argparse.ArgumentParser(description=summary, epilog=details,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True,
                   help="directory for the trace (rank<R>.pt.trace.json.gz)")
    p.add_argument("--plant", action="append", default=[], choices=BOTTLENECKS,
                   help="plant this bottleneck (repeatable); without, the step is the fixed version")
    p.add_argument("--data", default="sbm",
                   help="the graph: sbm:nodes=N,degree=D,features=F,classes=C")
    p.add_argument("--batch", type=int, default=32, help="seed nodes per step")
    p.add_argument("--fanout", default="10,10",
                   help="neighbours sampled per node, per hop (all: every one)")
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--steps", type=int, default=10, help="profiled (active) steps")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch intra-op threads")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    return p.parse_args(argv)


# ---------------------------------------------------------------------------------------------
# The graph: CSR (rowptr, col) of in-neighbours, dense features, labels.

class Graph:
    def __init__(self, src, dst, x, y):
        n = x.shape[0]
        order = torch.argsort(dst * n + src)
        self.col = src[order]
        self.rowptr = torch.zeros(n + 1, dtype=torch.long)
        self.rowptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
        self.rowptr_list = self.rowptr.tolist()  # for the node-by-node sampler
        self.x, self.y = x, y
        self.num_nodes, self.num_classes = n, int(y.max()) + 1


def sbm(gen, nodes=2000, degree=10, features=16, classes=7, homophily=0.8):
    """Communities: most edges join nodes of one class; features are noisy class centroids."""
    y = torch.randint(0, classes, (nodes,), generator=gen)
    src = torch.randint(0, nodes, (nodes * degree // 2,), generator=gen)
    dst = torch.randint(0, nodes, (src.numel(),), generator=gen)
    same = torch.rand(src.numel(), generator=gen) < homophily
    for c in range(classes):  # an intra-class partner for the homophilous edges
        pick, members = same & (y[src] == c), torch.nonzero(y == c).flatten()
        dst[pick] = members[torch.randint(0, members.numel(), (int(pick.sum()),), generator=gen)]
    src, dst = src[src != dst], dst[src != dst]
    centroids = torch.randn(classes, features, generator=gen)
    x = centroids[y] + 2.0 * torch.randn(nodes, features, generator=gen)
    return Graph(torch.cat([src, dst]), torch.cat([dst, src]), x, y)


def load_graph(spec, gen):
    """The graph --data names: sbm:nodes=N,degree=D,features=F,classes=C (any may be left out)."""
    name, _, params = spec.partition(":")
    if name != "sbm":
        sys.exit(f"--data {spec}: want sbm:key=value,…")
    return sbm(gen, **{k: int(v) for k, v in (kv.split("=") for kv in params.split(",") if kv)})


# ---------------------------------------------------------------------------------------------
# Neighbour sampling: the seeds' sampled in-neighbours, then theirs, as one subgraph. A Batch is
# the subgraph's nodes (n_id, global ids, the seeds at seed_pos), its edges in local ids
# (src -> dst, with a self loop per node) and their mean-aggregation weights as a sparse matrix.

class Batch:
    def __init__(self, n_id, src, dst, seed_pos):
        n = n_id.numel()
        loops = torch.arange(n)
        self.n_id, self.seed_pos, self.num_nodes = n_id, seed_pos, n
        self.src, self.dst = torch.cat([src, loops]), torch.cat([dst, loops])
        self.degree = torch.bincount(self.dst, minlength=n).float().unsqueeze(1)  # with the loop
        self.inv_deg = self.degree.reciprocal()
        weight = self.inv_deg.flatten().index_select(0, self.dst)
        self.adj = torch.sparse_coo_tensor(torch.stack([self.dst, self.src]), weight, (n, n)).coalesce()

    def to(self, device):
        for name in ("n_id", "seed_pos", "src", "dst", "degree", "inv_deg", "adj"):
            setattr(self, name, getattr(self, name).to(device, non_blocking=True))
        return self


def sample_vectorised(g, seeds, fanouts, gen):
    """k neighbours per node with replacement (every one for k = -1), a hop at a time."""
    frontier, srcs, dsts = seeds, [], []
    for k in fanouts:
        start = g.rowptr.index_select(0, frontier)
        deg = g.rowptr.index_select(0, frontier + 1) - start
        has = deg.nonzero().flatten()  # nodes without neighbours end here
        frontier, start, deg = (t.index_select(0, has) for t in (frontier, start, deg))
        if k < 0:  # every neighbour: position j of the concatenated neighbour lists
            first = torch.repeat_interleave(start - (torch.cumsum(deg, 0) - deg), deg)
            nbr = g.col.index_select(0, first + torch.arange(first.numel()))
            owner = frontier.repeat_interleave(deg)
        else:
            pick = (torch.rand(frontier.numel(), k, generator=gen) * deg.unsqueeze(1)).long()
            nbr = g.col.index_select(0, (start.unsqueeze(1) + pick).flatten())
            owner = frontier.repeat_interleave(k)
        srcs.append(nbr)
        dsts.append(owner)
        frontier = nodes_of(g, nbr)
    return relabel(g, seeds, torch.cat(srcs), torch.cat(dsts))


def sample_per_node(g, seeds, fanouts, gen):
    """The same sampling node by node (without replacement): the slow sampler."""
    frontier, srcs, dsts = seeds, [], []
    for k in fanouts:
        hop = []
        for v in frontier.tolist():
            nbrs = g.col[g.rowptr_list[v]:g.rowptr_list[v + 1]]
            picked = nbrs[torch.randperm(nbrs.numel(), generator=gen)[:k if k >= 0 else None]]
            hop.append(picked)
            dsts.append(torch.full_like(picked, v))
        srcs += hop
        frontier = nodes_of(g, torch.cat(hop))
    return relabel(g, seeds, torch.cat(srcs), torch.cat(dsts))


def nodes_of(g, *ids):
    """The distinct nodes among ids, in order."""
    mark = torch.zeros(g.num_nodes, dtype=torch.bool)
    for i in ids:
        mark.index_fill_(0, i, True)
    return mark.nonzero().flatten()


def relabel(g, seeds, src, dst):
    """The subgraph of the edges src -> dst in local node ids."""
    n_id = nodes_of(g, seeds, src)
    local = torch.empty(g.num_nodes, dtype=torch.long)
    local.index_copy_(0, n_id, torch.arange(n_id.numel()))
    src, dst, seed_pos = (local.index_select(0, t) for t in (src, dst, seeds))
    return Batch(n_id, src, dst, seed_pos)


# ---------------------------------------------------------------------------------------------
# The model: two layers of mean aggregation over in-neighbours (self loop included).

def aggregate(h, batch, edgewise):
    if edgewise:  # one message per edge, E x H values, summed onto its destination node
        msg = h.index_select(0, batch.src)
        total = torch.zeros(batch.num_nodes, h.shape[1], device=h.device)
        return total.index_add_(0, batch.dst, msg) * batch.inv_deg
    return torch.sparse.mm(batch.adj, h)


class GCN(torch.nn.Module):
    def __init__(self, features, hidden, classes, edgewise):
        super().__init__()
        self.lin1 = torch.nn.Linear(features, hidden)
        self.lin2 = torch.nn.Linear(hidden, classes)
        self.edgewise = edgewise

    def forward(self, x, batch):
        h = F.relu(aggregate(self.lin1(x), batch, self.edgewise))  # transform, then aggregate
        return self.lin2(aggregate(h, batch, self.edgewise))  # aggregate, then classify


# ---------------------------------------------------------------------------------------------
# Augmentation: drop each node's input features with a probability that falls with its degree
# (DropNode that spares hubs): p / (1 + degree / mean degree).

def drop_nodes_readbacks(x, batch, p, gen):
    """Node by node, reading the node's degree and a random draw back to Python: on a GPU, two
    syncs per node."""
    x, deg = x.clone(), batch.degree / batch.degree.mean()
    for i in range(x.shape[0]):
        if torch.rand(1, generator=gen, device=x.device).item() < p / (1 + deg[i].item()):
            x[i] = 0
    return x


def drop_nodes(x, batch, p, gen):
    draw = torch.rand(x.shape[0], 1, generator=gen, device=x.device)
    return x * (draw >= p / (1 + batch.degree / batch.degree.mean()))


def evaluate(model, whole, x, y, nodes):
    """Accuracy on nodes, from one forward pass over the whole graph without gradients."""
    model.eval()
    with torch.no_grad():
        pred = model(x, whole).index_select(0, nodes).argmax(1)
        acc = (pred == y.index_select(0, nodes)).float().mean().item()
    model.train()
    return acc


# ---------------------------------------------------------------------------------------------

def main(argv=None):
    args = parse_args(argv)
    plant = set(args.plant)
    fanouts = [-1 if k == "all" else int(k) for k in args.fanout.split(",")]
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(args.seed)  # the sampler's, on the host
    device = torch.device(args.device)

    world, rank = int(os.environ.get("WORLD_SIZE", "1")), int(os.environ.get("RANK", "0"))
    if world > 1:
        torch.distributed.init_process_group("nccl" if device.type == "cuda" else "gloo")
        if device.type == "cuda":
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(device)
    dgen = gen if device.type == "cpu" else torch.Generator(device=device).manual_seed(args.seed)

    g = load_graph(args.data, gen)
    perm = torch.randperm(g.num_nodes, generator=gen)
    train, val, test = perm.tensor_split([g.num_nodes * 6 // 10, g.num_nodes * 8 // 10])
    train = train[rank::world]  # each rank its share of the seeds
    # Features and labels go to the device once; a step copies only its subgraph's indices and
    # gathers the rows it needs there.
    x, y = g.x.to(device), g.y.to(device)
    whole = sample_vectorised(g, torch.arange(g.num_nodes), [-1], gen).to(device)  # for validation
    val, test = val.to(device), test.to(device)

    model = GCN(g.x.shape[1], args.hidden, g.num_classes, "edgewise" in plant).to(device)
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)

    activities = [ProfilerActivity.CPU]
    if device.type == "cuda":
        activities.append(ProfilerActivity.CUDA)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, f"rank{rank}.pt.trace.json.gz")
    wait, warmup = 1, 1
    steps_per_epoch = max(1, train.numel() // args.batch)
    losses = []
    began = time.perf_counter()
    # The first step (allocator, lazy initialisation) is not recorded (wait), the second records
    # but is dropped (warmup), the next --steps are recorded, and the trace is written once, when
    # the last of them ends.
    with profile(activities=activities, record_shapes=True, profile_memory=True,
                 schedule=schedule(wait=wait, warmup=warmup, active=args.steps, repeat=1),
                 on_trace_ready=lambda prof: prof.export_chrome_trace(path)) as prof:
        for step in range(wait + warmup + args.steps):
            k = step % steps_per_epoch
            if k == 0:
                order = train[torch.randperm(train.numel(), generator=gen)]
            seeds = order[k * args.batch:(k + 1) * args.batch]
            with record_function("sample"):
                if "sampler" in plant:
                    batch = sample_per_node(g, seeds, fanouts, gen)
                else:
                    batch = sample_vectorised(g, seeds, fanouts, gen)
            with record_function("h2d"):
                batch = batch.to(device)
            with record_function("gather"):
                feats, labels = x[batch.n_id], y[batch.n_id[batch.seed_pos]]
            with record_function("augment"):
                if "readbacks" in plant:
                    feats = drop_nodes_readbacks(feats, batch, 0.2, dgen)
                else:
                    feats = drop_nodes(feats, batch, 0.2, dgen)
            with record_function("forward"):
                out = model(feats, batch)
                loss = F.cross_entropy(out[batch.seed_pos], labels)
            with record_function("backward"):
                opt.zero_grad()
                loss.backward()
            with record_function("optimizer"):
                opt.step()
            losses.append(loss.detach())  # read back once, after training: no sync per step
            if "eval" in plant:
                with record_function("eval"):
                    for split in (val, test):
                        evaluate(model, whole, x, y, split)
            prof.step()
    seconds = time.perf_counter() - began
    val_acc, test_acc = (evaluate(model, whole, x, y, split) for split in (val, test))
    print(f"rank {rank}: {wait + warmup + args.steps} steps in {seconds:.2f} s "
          f"(planted: {', '.join(sorted(plant)) or 'none'}); "
          f"mean loss {torch.stack(losses).mean().item():.3f}, "
          f"validation accuracy {val_acc:.3f}, test {test_acc:.3f}; trace {path}", file=sys.stderr)
    if world > 1:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
