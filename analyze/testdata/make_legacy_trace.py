"""Writes legacy_torch.trace.json.gz: a small GNN training loop under torch.profiler.

Debian's python3-torch has no Kineto, so torch.profiler writes the legacy trace format (a bare JSON
array, no categories). Run with the system python: /usr/bin/python3 make_legacy_trace.py
The loop trains a 2-layer GCN on a random graph with mini-batches: each iteration samples a batch
of seed nodes ("sample"), gathers their features ("gather"), runs forward, backward and the
optimizer, and reads the loss back with .item(). prof.step() marks each iteration.
"""
import gzip
import os
import shutil
import tempfile

import torch
from torch.profiler import ProfilerActivity, profile, record_function, schedule

torch.manual_seed(0)
torch.set_num_threads(1)
N, F, H, C, E = 2000, 64, 32, 7, 20000
src = torch.randint(0, N, (E,))
dst = torch.randint(0, N, (E,))
adj = torch.sparse_coo_tensor(torch.stack([dst, src]), torch.ones(E), (N, N)).coalesce()
x = torch.randn(N, F)
y = torch.randint(0, C, (N,))
w1 = torch.nn.Linear(F, H)
w2 = torch.nn.Linear(H, C)
params = list(w1.parameters()) + list(w2.parameters())
opt = torch.optim.Adam(params, lr=0.01)

STEPS = 6
here = os.path.dirname(os.path.abspath(__file__))
tmp = tempfile.mkdtemp()
raw = os.path.join(tmp, "trace.json")
# A schedule makes prof.step() record ProfilerStep#N spans; the trace is written when the active
# window ends.
with profile(activities=[ProfilerActivity.CPU], record_shapes=True,
             schedule=schedule(wait=0, warmup=0, active=STEPS, repeat=1),
             on_trace_ready=lambda p: p.export_chrome_trace(raw)) as prof:
    for it in range(STEPS):
        with record_function("sample"):
            seeds = torch.randperm(N)[:256]
        with record_function("gather"):
            feats = x  # full-graph propagation, loss on the seeds
            labels = y[seeds]
        with record_function("forward"):
            h = torch.relu(w1(torch.sparse.mm(adj, feats)))
            out = w2(torch.sparse.mm(adj, h))
            loss = torch.nn.functional.cross_entropy(out[seeds], labels)
        with record_function("backward"):
            opt.zero_grad()
            loss.backward()
        with record_function("optimizer"):
            opt.step()
        loss.item()
        prof.step()

with open(raw, "rb") as f, gzip.open(os.path.join(here, "legacy_torch.trace.json.gz"), "wb") as out:
    shutil.copyfileobj(f, out)
shutil.rmtree(tmp)
print("wrote legacy_torch.trace.json.gz")
