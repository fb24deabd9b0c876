#!/usr/bin/env python3
"""PyTorch Geometric on the GPU, on the graphs gnnprof trains: the baseline of scripts/gpu-check.

It reads a folder written by bench/export (the normalized adjacency with its self loops, the
features as gnnprof prepares them, labels and split) and trains on CUDA:

  gcn: dropout 0.5 -> GCNConv(F, hidden) -> ReLU -> dropout 0.5 -> GCNConv(hidden, C); Adam lr 0.01,
       weight decay 5e-4 on the first layer. The convolutions take the exported normalized weights
       (normalize=False, add_self_loops=False): the same propagation as gnnprof's.
  gat: dropout 0.6 -> GATConv(F, 8, heads=8) -> ELU -> dropout 0.6 -> GATConv(64, C, heads=1);
       attention dropout 0.6; Adam lr 0.005, weight decay 5e-4 (on the exported pattern, which has
       its self loops: add_self_loops=False).

Each epoch is forward, loss, backward, the optimizer step and the loss read back (loss.item()),
as gnnprof's trainers do; the time is the mean after the warm-up epochs, with the GPU synchronized
at each epoch's end. Evaluation (not timed) picks the test accuracy at the best validation epoch.
Prints one JSON line: {"model", "data", "nodes", "edges", "epoch_ms", "epoch_ms_min",
"test_acc", "peak_mib"}.

  python3 scripts/pyg_gpu.py --data DIR --model gcn --hidden 16 --epochs 200 [--eval]
"""
import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch_geometric.nn import GATConv, GCNConv


def load(folder, dev):
    ld = lambda n: np.load(os.path.join(folder, n + ".npy"))
    meta = json.load(open(os.path.join(folder, "meta.json")))
    n = meta["nodes"]
    indptr, indices, val = ld("adj_indptr"), ld("adj_indices"), ld("adj_val")
    rows = np.repeat(np.arange(n), np.diff(indptr))
    # gnnprof's row i sums over its sources indices[e]: PyG's messages flow source -> target.
    edge_index = torch.from_numpy(np.stack([indices.astype(np.int64), rows])).to(dev)
    weight = torch.from_numpy(val).to(dev)
    if os.path.exists(os.path.join(folder, "x.npy")):
        x = torch.from_numpy(ld("x"))
    else:
        xp, xi, xv = ld("x_indptr"), ld("x_indices"), ld("x_val")
        xr = np.repeat(np.arange(n), np.diff(xp))
        x = torch.sparse_coo_tensor(torch.from_numpy(np.stack([xr, xi.astype(np.int64)])),
                                    torch.from_numpy(xv), (n, meta["features"])).to_dense()
    labels = torch.from_numpy(ld("labels").astype(np.int64)).clamp(min=0).to(dev)
    split = [torch.from_numpy(ld(s).astype(np.int64)).to(dev) for s in ("train", "val", "test")]
    return meta, edge_index, weight, x.to(dev), labels, split


class GCN(torch.nn.Module):
    def __init__(self, fin, hidden, classes):
        super().__init__()
        self.c1 = GCNConv(fin, hidden, normalize=False, add_self_loops=False)
        self.c2 = GCNConv(hidden, classes, normalize=False, add_self_loops=False)

    def forward(self, x, ei, w):
        x = F.dropout(x, 0.5, self.training)
        x = F.relu(self.c1(x, ei, w))
        x = F.dropout(x, 0.5, self.training)
        return self.c2(x, ei, w)

    def groups(self, wd):
        return [{"params": self.c1.parameters(), "weight_decay": wd}, {"params": self.c2.parameters(), "weight_decay": 0}]


class GAT(torch.nn.Module):
    def __init__(self, fin, classes):
        super().__init__()
        self.c1 = GATConv(fin, 8, heads=8, dropout=0.6, add_self_loops=False)
        self.c2 = GATConv(64, classes, heads=1, dropout=0.6, add_self_loops=False)

    def forward(self, x, ei, w):
        x = F.dropout(x, 0.6, self.training)
        x = F.elu(self.c1(x, ei))
        x = F.dropout(x, 0.6, self.training)
        return self.c2(x, ei)

    def groups(self, wd):
        return [{"params": self.parameters(), "weight_decay": wd}]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--model", choices=["gcn", "gat"], default="gcn")
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval", action="store_true", help="evaluate each epoch (untimed) for the test accuracy")
    a = ap.parse_args()
    torch.manual_seed(a.seed)
    dev = torch.device("cuda")
    meta, ei, w, x, y, (train, val, test) = load(a.data, dev)
    if a.model == "gcn":
        model, lr = GCN(x.shape[1], a.hidden, meta["classes"]), 0.01
    else:
        model, lr = GAT(x.shape[1], meta["classes"]), 0.005
    model = model.to(dev)
    opt = torch.optim.Adam(model.groups(5e-4), lr=lr)
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times, best_val, test_at_best = [], -1.0, 0.0
    for epoch in range(a.warmup + a.epochs):
        torch.cuda.synchronize()
        start = time.perf_counter()
        model.train()
        opt.zero_grad()
        loss = F.cross_entropy(model(x, ei, w)[train], y[train])
        loss.backward()
        opt.step()
        loss.item()
        torch.cuda.synchronize()
        if epoch >= a.warmup:
            times.append((time.perf_counter() - start) * 1e3)
        if a.eval:
            model.eval()
            with torch.no_grad():
                pred = model(x, ei, w).argmax(1)
            accs = [(pred[s] == y[s]).float().mean().item() for s in (val, test)]
            if accs[0] > best_val:
                best_val, test_at_best = accs[0], accs[1]
    print(json.dumps({"model": a.model, "data": meta.get("name", a.data), "nodes": meta["nodes"], "edges": int(ei.shape[1]),
                      "hidden": a.hidden, "epoch_ms": float(np.mean(times)), "epoch_ms_min": float(np.min(times)),
                      "test_acc": test_at_best if a.eval else None,
                      "peak_mib": torch.cuda.max_memory_allocated() / 2**20, "torch": torch.__version__}))


if __name__ == "__main__":
    main()
