#!/usr/bin/env python3
"""Plain-PyTorch full-batch GCN / GAT training, the reference gnnprof's epoch times are compared to.

It trains on a dataset exported by `go run ./bench/export` (identical adjacency normalization,
row-normalized features, labels and split), with the same models and settings as
`gnnprof run full`:

  GCN: dropout 0.5 -> GCNConv(F, 16) -> ReLU -> dropout -> GCNConv(16, C); Adam lr 0.01,
       weight decay 5e-4 on the first layer; A_hat @ (X @ W) with torch.sparse.mm.
  GAT: dropout 0.6 -> GAT(F, 8 heads x 8, concat) -> ELU -> dropout -> GAT(64, C, 1 head);
       attention dropout 0.6; Adam lr 0.005, weight decay 5e-4 (PyG GATConv's computation:
       per-node attention projections, per-edge gather, scatter softmax, index_add aggregation).

Usage:
  python3 bench/torch_fullbatch.py --data /tmp/cora-gcn --model gcn --epochs 200 --threads 2
      [--features dense|sparse] [--adj coo|csr]

--adj picks the layout of the GCN's adjacency for torch.sparse.mm: COO (torch's default sparse
tensor) or CSR, which is often faster on CPU; bench/compare.sh tries both and reports the faster.

Prints one line per run: model, data, mean training-epoch wall time and process CPU time (forward
+ loss + backward + optimizer step, excluding the first epoch), and the test accuracy at the best
validation epoch.
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F


def load(folder, features, layout="coo"):
    ld = lambda n: np.load(os.path.join(folder, n + ".npy"))
    meta = json.load(open(os.path.join(folder, "meta.json")))
    n = meta["nodes"]
    indptr, indices, val = ld("adj_indptr"), ld("adj_indices"), ld("adj_val")
    rows = np.repeat(np.arange(n), np.diff(indptr))
    idx = torch.from_numpy(np.stack([rows, indices.astype(np.int64)]))
    adj = torch.sparse_coo_tensor(idx, torch.from_numpy(val), (n, n)).coalesce()
    if layout == "csr":
        adj = adj.to_sparse_csr()
    if os.path.exists(os.path.join(folder, "x.npy")):
        x = torch.from_numpy(ld("x"))
        if features == "sparse":
            x = x.to_sparse().coalesce()
    else:
        xp, xi, xv = ld("x_indptr"), ld("x_indices"), ld("x_val")
        xr = np.repeat(np.arange(n), np.diff(xp))
        xs = torch.sparse_coo_tensor(torch.from_numpy(np.stack([xr, xi.astype(np.int64)])),
                                     torch.from_numpy(xv), (n, meta["features"])).coalesce()
        x = xs if features == "sparse" else xs.to_dense()
    labels = torch.from_numpy(ld("labels").astype(np.int64))
    split = [torch.from_numpy(ld(s).astype(np.int64)) for s in ("train", "val", "test")]
    return meta, adj, x, labels, split


def glorot(*shape, fan=None):
    fan_in, fan_out = fan if fan else (shape[0], shape[-1])
    a = (6.0 / (fan_in + fan_out)) ** 0.5
    return torch.nn.Parameter(torch.empty(*shape).uniform_(-a, a))


def dropout_input(x, p, training):
    if not x.is_sparse:
        return F.dropout(x, p, training)
    if not training:
        return x
    return torch.sparse_coo_tensor(x.indices(), F.dropout(x.values(), p, True), x.shape)


def mm(x, w):
    return torch.sparse.mm(x, w) if x.is_sparse else x @ w


class GCN(torch.nn.Module):
    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.w0, self.b0 = glorot(fin, hidden), torch.nn.Parameter(torch.zeros(hidden))
        self.w1, self.b1 = glorot(hidden, classes), torch.nn.Parameter(torch.zeros(classes))

    def forward(self, adj, x):
        x = dropout_input(x, 0.5, self.training)
        h = F.relu(torch.sparse.mm(adj, mm(x, self.w0)) + self.b0)
        h = F.dropout(h, 0.5, self.training)
        return torch.sparse.mm(adj, h @ self.w1) + self.b1

    def groups(self, wd):
        return [dict(params=[self.w0, self.b0], weight_decay=wd), dict(params=[self.w1, self.b1], weight_decay=0)]


class GATConv(torch.nn.Module):
    def __init__(self, fin, ch, heads, concat):
        super().__init__()
        self.h, self.c, self.concat = heads, ch, concat
        self.w = glorot(fin, heads * ch)
        self.att_src = glorot(1, heads, ch, fan=(heads, ch))
        self.att_dst = glorot(1, heads, ch, fan=(heads, ch))
        self.bias = torch.nn.Parameter(torch.zeros(heads * ch if concat else ch))

    def forward(self, src, dst, n, x, training):
        h = mm(x, self.w).view(-1, self.h, self.c)
        a_s = (h * self.att_src).sum(-1)
        a_d = (h * self.att_dst).sum(-1)
        e = F.leaky_relu(a_s[src] + a_d[dst], 0.2)
        idx = dst.unsqueeze(-1).expand_as(e)
        e_max = torch.full((n, self.h), -1e30).scatter_reduce(0, idx, e.detach(), "amax", include_self=True)
        e = (e - e_max[dst]).exp()
        denom = torch.zeros(n, self.h).index_add(0, dst, e)
        alpha = F.dropout(e / denom[dst], 0.6, training)
        out = torch.zeros(n, self.h, self.c).index_add(0, dst, h[src] * alpha.unsqueeze(-1))
        out = out.reshape(n, -1) if self.concat else out.mean(1)
        return out + self.bias


class GAT(torch.nn.Module):
    def __init__(self, fin, classes):
        super().__init__()
        self.c0 = GATConv(fin, 8, 8, True)
        self.c1 = GATConv(64, classes, 1, False)

    def forward(self, adj, x):
        src, dst, n = adj.indices()[1], adj.indices()[0], adj.shape[0]
        x = dropout_input(x, 0.6, self.training)
        h = F.elu(self.c0(src, dst, n, x, self.training))
        h = F.dropout(h, 0.6, self.training)
        return self.c1(src, dst, n, h, self.training)

    def groups(self, wd):
        return [dict(params=list(self.parameters()), weight_decay=wd)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True, help="folder written by go run ./bench/export")
    ap.add_argument("--model", choices=["gcn", "gat"], default="gcn")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--features", choices=["dense", "sparse"], default="dense",
                    help="first-layer input: dense matrix (PyG's usual) or torch sparse COO")
    ap.add_argument("--adj", choices=["coo", "csr"], default="coo",
                    help="GCN adjacency layout for torch.sparse.mm (GAT gathers by edge index: always COO)")
    a = ap.parse_args()
    if a.model == "gat":
        a.adj = "coo"
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    meta, adj, x, y, (train, val, test) = load(a.data, a.features, a.adj)
    if a.model == "gcn":
        model, lr = GCN(meta["features"], 16, meta["classes"]), 0.01
    else:
        model, lr = GAT(meta["features"], meta["classes"]), 0.005
    opt = torch.optim.Adam(model.groups(5e-4), lr=lr)
    times, cpu, best_val, best_test = [], [], -1.0, 0.0
    for epoch in range(a.epochs):
        t0, c0 = time.perf_counter(), time.process_time()
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(adj, x)[train], y[train])
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        model.eval()
        with torch.no_grad():
            pred = model(adj, x).argmax(1)
        va = (pred[val] == y[val]).float().mean().item()
        if va > best_val:
            best_val, best_test = va, (pred[test] == y[test]).float().mean().item()
    mean = sum(times[1:]) / max(len(times) - 1, 1)
    mean_cpu = sum(cpu[1:]) / max(len(cpu) - 1, 1)
    print(f"torch {a.model} {meta['name']} features={a.features} adj={a.adj} threads={a.threads} "
          f"epochs={a.epochs} mean_epoch_ms={mean*1e3:.2f} cpu_ms={mean_cpu*1e3:.2f} test_acc={best_test:.4f}")


if __name__ == "__main__":
    main()
