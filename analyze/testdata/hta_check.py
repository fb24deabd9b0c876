"""Independent computation of Holistic Trace Analysis's analyses on a Kineto trace.

Reads the trace with the json module only and computes, from the definitions in analyze/SCHEMA.md
(which follow HTA's analyzers), the numbers gnnprof's analyzer reports under "gpu" and
"critical_path". analyze/hta_check_test.go compares the analyzer's profile with this output.

    python3 hta_check.py kineto_gpu_benchmark.pt.trace.json.gz > hta_check.kineto_gpu_benchmark.json
    python3 hta_check.py dlrm_like.pt.trace.json.gz > hta_check.dlrm_like.json

All times are integer nanoseconds (the trace's microseconds × 1000). The scope is the whole trace
when it has fewer than two ProfilerStep spans, else the device work whose launching runtime call
lies inside a step. The critical path is computed for the step given by --window START END (ns on
the trace's clock), or by default the measured ProfilerStep closest to the median.
"""
import gzip
import json
import sys
from collections import defaultdict
from decimal import Decimal

CONSECUTIVE_KERNEL_DELAY = 30
RUNTIME_CUTOFF = 50_000
DELAY_CUTOFF = 100_000
SHORT_KERNEL = 10_000
QUEUE_FULL = 1024


def ns(us):
    """Microseconds as written (an integer, or a decimal with ns precision) to integer nanoseconds."""
    return int((Decimal(us) * 1000).to_integral_value())


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f, parse_float=Decimal)  # exact: timestamps exceed a double's precision


def union(ivs):
    out = []
    for s, e in sorted(ivs):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def length(ivs):
    return sum(e - s for s, e in ivs)


def main():
    args = sys.argv[1:]
    window = None
    if "--window" in args:
        k = args.index("--window")
        window = (int(args[k + 1]), int(args[k + 2]))
        del args[k:k + 3]
    trace = load(args[0])
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    dev_cats = {"kernel", "gpu_memcpy", "gpu_memset"}
    work = []  # device work: kernels, copies, memsets
    runtime_by_corr = {}
    for e in events:
        cat = e.get("cat", "")
        e["_s"] = ns(e["ts"])
        e["_e"] = e["_s"] + ns(e["dur"])
        if cat in dev_cats:
            if cat == "kernel":
                e["_type"] = "communication" if "nccl" in e["name"].lower() else "computation"
            else:
                e["_type"] = "memory"
            work.append(e)
        elif cat in ("cuda_runtime", "cuda_driver") and e.get("args", {}).get("correlation"):
            runtime_by_corr[e["args"]["correlation"]] = e
    host = [e for e in events if e.get("cat", "") not in dev_cats | {"gpu_user_annotation", "cuda_sync", "Trace", "python_function"}]

    steps = sorted((e for e in host if e["name"].startswith("ProfilerStep#")), key=lambda e: e["_s"])
    if len(steps) >= 2:
        def launched_in_step(w):
            r = runtime_by_corr.get(w.get("args", {}).get("correlation"))
            t = r["_s"] if r else w["_s"]
            return any(st["_s"] <= t < st["_e"] for st in steps)
        work = [w for w in work if launched_in_step(w)]
        scope = "steps"
    else:
        scope = "trace"

    out = {"scope": scope}

    # Temporal breakdown and comm–comp overlap, per device.
    by_dev = defaultdict(list)
    for w in work:
        by_dev[int(w["pid"])].append(w)
    temporal = []
    for dev in sorted(by_dev):
        ws = by_dev[dev]
        span = max(w["_e"] for w in ws) - min(w["_s"] for w in ws)
        comp = union([(w["_s"], w["_e"]) for w in ws if w["_type"] == "computation"])
        comm = union([(w["_s"], w["_e"]) for w in ws if w["_type"] == "communication"])
        comp_comm = union(comp + comm)
        busy = union([(w["_s"], w["_e"]) for w in ws])
        comm_exposed = length(comp_comm) - length(comp)
        temporal.append({
            "device": dev, "span_ns": span, "compute_ns": length(comp), "comm_ns": comm_exposed,
            "memory_ns": length(busy) - length(comp_comm), "idle_ns": span - length(busy),
            "comm_total_ns": length(comm), "comm_overlap_ns": length(comm) - comm_exposed,
        })
    out["temporal"] = temporal

    # Idle time per stream.
    by_stream = defaultdict(list)
    for w in work:
        by_stream[(int(w["pid"]), int(w["tid"]))].append(w)
    idle = []
    for key in sorted(by_stream):
        ws = sorted(by_stream[key], key=lambda w: (w["_s"], -(w["_e"] - w["_s"])))
        prev_end = ws[0]["_e"]
        host_wait = kernel_wait = other = 0
        for w in ws[1:]:
            gap = w["_s"] - prev_end
            if gap > 0:
                r = runtime_by_corr.get(w.get("args", {}).get("correlation"))
                if r is not None and r["_s"] > prev_end:
                    host_wait += gap
                elif gap < CONSECUTIVE_KERNEL_DELAY:
                    kernel_wait += gap
                else:
                    other += gap
            prev_end = max(prev_end, w["_e"])
        idle.append({"device": key[0], "stream": key[1], "ops": len(ws),
                     "span_ns": prev_end - ws[0]["_s"], "host_wait_ns": host_wait,
                     "kernel_wait_ns": kernel_wait, "other_ns": other})
    out["idle"] = idle

    # Kernel breakdown by type, and each type's top kernels (80% of its time, at most 10).
    totals, counts, groups = defaultdict(int), defaultdict(int), defaultdict(list)
    for w in work:
        d = w["_e"] - w["_s"]
        totals[w["_type"]] += d
        counts[w["_type"]] += 1
        name = w["name"]
        if w["_type"] == "memory":
            name = "Memset" if w["cat"] == "gpu_memset" else "Memcpy " + w["name"].split()[1]
        groups[(w["_type"], name)].append(d)
    out["kernel_types"] = [{"type": t, "count": counts[t], "total_ns": totals[t]}
                           for t in ("computation", "communication", "memory") if counts[t]]
    top = []
    for typ in ("computation", "communication", "memory"):
        names = sorted(((sum(v), n) for (t, n), v in groups.items() if t == typ), key=lambda x: (-x[0], x[1]))
        covered = 0
        for k, (total, name) in enumerate(names):
            if k >= 10 or covered >= 0.8 * totals[typ]:
                break
            v = groups[(typ, name)]
            top.append({"type": typ, "name": name, "count": len(v), "total_ns": total, "min_ns": min(v), "max_ns": max(v)})
            covered += total
    out["top_kernels"] = top

    # Launch statistics: device ops joined to their runtime call by correlation id.
    launches = {"count": 0, "kernels": 0, "kernels_under_10us": 0, "short_kernels": 0,
                "runtime_outliers": 0, "delay_outliers": 0}
    delays = []
    for w in work:
        d = w["_e"] - w["_s"]
        if w["_type"] != "memory":
            launches["kernels"] += 1
            if d < SHORT_KERNEL:
                launches["kernels_under_10us"] += 1
        r = runtime_by_corr.get(w.get("args", {}).get("correlation"))
        if r is None:
            continue
        cpu = r["_e"] - r["_s"]
        delay = w["_s"] - r["_e"]
        launches["count"] += 1
        launches["short_kernels"] += d < cpu
        launches["runtime_outliers"] += cpu > RUNTIME_CUTOFF
        launches["delay_outliers"] += delay > DELAY_CUTOFF
        delays.append(delay)
    delays.sort()
    if delays:
        launches["delay_max_ns"] = delays[-1]
        launches["delay_p50_ns"] = delays[max(0, -(-len(delays) * 50 // 100) - 1)]
    out["launches"] = launches

    # Queue length per stream: +1 when the launch call starts, -1 when the op ends.
    queues = []
    for key in sorted(by_stream):
        ev = []
        for w in by_stream[key]:
            r = runtime_by_corr.get(w.get("args", {}).get("correlation"))
            enq = min(r["_s"], w["_s"]) if r else w["_s"]
            ev += [(enq, 1), (w["_e"], -1)]
        ev.sort()
        q = mx = 0
        area = full = 0
        for k, (t, d) in enumerate(ev):
            q += d
            mx = max(mx, q)
            if k + 1 < len(ev):
                area += q * (ev[k + 1][0] - t)
                if q >= QUEUE_FULL:
                    full += ev[k + 1][0] - t
        queues.append({"device": key[0], "stream": key[1], "max": mx, "mean": area / (ev[-1][0] - ev[0][0]), "full_ns": full})
    out["queues"] = queues

    # Memory bandwidth per device and kind.
    bw = defaultdict(lambda: {"count": 0, "bytes": 0, "iv": [], "steps": []})
    for w in work:
        if w["_type"] != "memory":
            continue
        kind = "Memset" if w["cat"] == "gpu_memset" else "Memcpy " + w["name"].split()[1]
        g = bw[(int(w["pid"]), kind)]
        b = int(w.get("args", {}).get("bytes", 0))
        g["count"] += 1
        g["bytes"] += b
        d = w["_e"] - w["_s"]
        if d > 0:
            g["iv"].append((w["_s"], w["_e"]))
            g["steps"] += [(w["_s"], int(b) / d), (w["_e"], -int(b) / d)]
    bandwidth = []
    for (dev, kind) in sorted(bw):
        g = bw[(dev, kind)]
        level = peak = 0.0
        for t, d in sorted(g["steps"], key=lambda x: (x[0], x[1])):
            level += d
            peak = max(peak, level)
        active = length(union(g["iv"]))
        bandwidth.append({"device": dev, "kind": kind, "count": g["count"], "bytes": g["bytes"],
                          "active_ns": active, "peak_gbs": peak})
    out["bandwidth"] = bandwidth

    out["patterns"] = patterns(host, work, runtime_by_corr, scope == "steps")

    host_end = None
    if window is None and steps:
        window, host_end = typical_step(steps, work, runtime_by_corr)
    if window is not None:
        out["critical_path"] = critical_path(events, host, window, host_end or window[1])
    json.dump(out, sys.stdout, indent=1, sort_keys=True)
    print()


def typical_step(steps, work, runtime_by_corr):
    """The device-extended window of the step whose wall time is closest to the (lower) median, and
    its host end. A step extends to the end of the device work whose runtime call lies in it. The
    traces checked have no warm-up steps and no cut tail."""
    dev_end = [None] * len(steps)
    for w in work:
        r = runtime_by_corr.get(w.get("args", {}).get("correlation"))
        if r is None:
            continue
        for k, st in enumerate(steps):
            if st["_s"] <= r["_s"] and r["_e"] <= st["_e"]:
                dev_end[k] = max(dev_end[k] or w["_e"], w["_e"])
    walls, prev = [], None
    for k, st in enumerate(steps):
        s = st["_s"] if prev is None else max(prev, st["_s"])
        e = max(st["_e"], dev_end[k] or st["_e"], s)
        walls.append((s, e))
        prev = e
    lengths = sorted(e - s for s, e in walls)
    med = lengths[(len(lengths) - 1) // 2]
    k = min(range(len(walls)), key=lambda k: (abs(walls[k][1] - walls[k][0] - med), k))
    return walls[k], steps[k]["_e"]


def patterns(host, work, runtime_by_corr, in_steps):
    """Frequent kernel sequences per operator: each operator call's kernels (its own and its
    descendants'), in launch order; calls whose caller launched exactly the same kernels are the
    caller's; sequences of at least 3 kernels seen at least twice, the 5 with the most device time."""
    def is_op(e):
        if e["name"].startswith("ProfilerStep#"):
            return False
        if e.get("cat") in ("cuda_runtime", "cuda_driver"):
            return "Synchronize" in e["name"] or "StreamWaitEvent" in e["name"]  # sync calls count as ops
        return True

    ops = [e for e in host if is_op(e)]
    by_ext = {}
    for e in sorted(ops, key=lambda e: (e["pid"], e["tid"], e["_s"], -(e["_e"] - e["_s"]))):
        x = e.get("args", {}).get("External id")
        if x:
            by_ext.setdefault(x, e)
    # Nesting per thread: each op's parent is the innermost op containing it (children cut to it).
    parent = {}
    children = defaultdict(list)
    threads = defaultdict(list)
    op_ids = {id(e) for e in ops}
    for e in ops + [r for r in runtime_by_corr.values() if id(r) not in op_ids]:
        threads[(e["pid"], e["tid"])].append(e)
    for lane, evs in threads.items():
        evs.sort(key=lambda e: (e["_s"], -(e["_e"] - e["_s"])))
        stack = []
        for e in evs:
            while stack and stack[-1]["_cut"] <= e["_s"]:
                stack.pop()
            p = stack[-1] if stack else None
            parent[id(e)] = p
            e["_cut"] = min(e["_e"], p["_cut"]) if p else e["_e"]
            if is_op(e):
                if p is not None:
                    children[id(p)].append(e)
                stack.append(e)
    own = defaultdict(list)
    for w in work:
        if w["cat"] != "kernel":
            continue
        if in_steps and not w.get("_in_steps", True):
            continue
        op = by_ext.get(w.get("args", {}).get("External id"))
        r = runtime_by_corr.get(w.get("args", {}).get("correlation"))
        if op is None and r is not None:
            op = by_ext.get(r.get("args", {}).get("External id")) or parent.get(id(r))
        if op is not None:
            own[id(op)].append(w)
    seqs = {}

    def seq_of(e):
        if id(e) not in seqs:
            s = list(own[id(e)])
            for c in children[id(e)]:
                s += seq_of(c)
            seqs[id(e)] = s
        return seqs[id(e)]

    groups = {}
    for e in ops:
        s = seq_of(e)
        if len(s) < 3:
            continue
        p = parent.get(id(e))
        if p is not None and len(seq_of(p)) == len(s):
            continue
        s = sorted(s, key=lambda w: w["_s"])
        key = (e["name"], tuple(w["name"] for w in s))
        g = groups.setdefault(key, {"op": e["name"], "kernels": len(s), "count": 0, "gpu_ns": 0})
        g["count"] += 1
        g["gpu_ns"] += sum(w["_e"] - w["_s"] for w in s)
    out = sorted((g for g in groups.values() if g["count"] >= 2), key=lambda g: (-g["gpu_ns"], g["op"], g["kernels"]))
    return out[:5]


def host_role(e):
    """The breakdown role of a host event, for the data-loading category (trace/roles.go's names)."""
    name = e["name"].lower()
    for keys, role in ((("dataloader", "dataload", "datapipe", "loader"), "dataload"),
                       (("optimizer", "optim"), "optimizer"), (("backward", "autograd"), "backward"),
                       (("forward",), "forward"), (("sampl",), "sample"), (("gather",), "gather")):
        if any(k in name for k in keys):
            if e.get("cat") == "cpu_op" and role != "sample":
                return "cpu"
            return role
    return "cpu" if e.get("cat") == "cpu_op" else "other"


def is_host_sync(e):
    name, cat = e["name"], e.get("cat")
    if cat in ("cuda_runtime", "cuda_driver"):
        if "WaitEvent" in name:
            return False
        return "Synchronize" in name or (name.startswith("cudaMemcpy") and "Async" not in name)
    if cat == "cpu_op":
        return name in ("aten::item", "aten::_local_scalar_dense")
    return cat == "user_annotation" and "sync" in name.lower()


def critical_path(events, host, window, host_end):
    """The critical path of the step [window): walked back from its end (see analyze/critpath.go)."""
    ws, we = window
    # The step thread: the host thread with the most spans in the window.
    lanes = defaultdict(int)
    for e in host:
        if e["_s"] < we and e["_e"] > ws:
            lanes[(e["pid"], e["tid"])] += 1
    step_lane = max(lanes, key=lambda k: lanes[k])
    spans = sorted((e for e in host if (e["pid"], e["tid"]) == step_lane and e["_s"] < we and e["_e"] > ws
                    and not e["name"].startswith("ProfilerStep#")),
                   key=lambda e: (e["_s"], -(e["_e"] - e["_s"])))
    # The thread's timeline as stretches of the innermost span (children cut to their parent).
    segs, stack, cursor = [], [], ws

    def emit(t):
        nonlocal cursor
        t = min(t, we)
        if t > cursor:
            segs.append((cursor, t, stack[-1] if stack else None))
            cursor = t

    for e in spans:
        while stack and stack[-1]["_cut"] <= e["_s"]:
            emit(stack[-1]["_cut"])
            stack.pop()
        emit(e["_s"])
        e["_cut"] = min(e["_e"], stack[-1]["_cut"]) if stack else e["_e"]
        stack.append(e)
    while stack:
        emit(stack[-1]["_cut"])
        stack.pop()
    emit(we)

    dev = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and e["_s"] < we and e["_e"] > ws]
    streams, pos = defaultdict(list), {}
    for e in sorted(dev, key=lambda e: (e["_s"], -(e["_e"] - e["_s"]))):
        pos[id(e)] = len(streams[(e["pid"], e["tid"])])
        streams[(e["pid"], e["tid"])].append(e)
    by_end = sorted(dev, key=lambda e: e["_e"])
    runtime = {e["args"]["correlation"]: e for e in events
               if e.get("cat") in ("cuda_runtime", "cuda_driver") and e.get("args", {}).get("correlation")}
    sync_lane, waits = {}, defaultdict(list)
    for e in events:
        if e.get("cat") == "cuda_sync" and e["_s"] < we and e["_e"] > ws:
            if "Wait Event" in e["name"] or "WaitEvent" in e["name"]:
                waits[(e["pid"], e["tid"])].append(e["_s"])
            elif e.get("args", {}).get("correlation"):
                sync_lane[e["args"]["correlation"]] = (e["pid"], e["tid"])

    # Copies whose launch call blocks until they end: all but cudaMemcpy*Async of pinned memory
    # (or device to device).
    blocking_copy = {}
    for d in dev:
        r = runtime.get(d.get("args", {}).get("correlation"))
        if d["cat"] == "gpu_memcpy" and r is not None:
            asynchronous = "Async" in r["name"] and ("Pinned" in d["name"] or "DtoD" in d["name"] or "PtoP" in d["name"])
            if not asynchronous:
                blocking_copy[d["args"]["correlation"]] = d

    cats = defaultdict(int)

    def add(s, e, cat):
        s = max(s, ws)
        if e > s:
            cats[cat] += e - s

    def dtype(d):
        if d["cat"] != "kernel":
            return "gpu_memory_bound"
        return "gpu_communication_bound" if "nccl" in d["name"].lower() else "gpu_compute_bound"

    at, cur = we, None
    if by_end and by_end[-1]["_e"] >= host_end:
        cur = by_end[-1]
    while at > ws:
        if cur is not None:
            d = cur
            add(d["_s"], at, dtype(d))
            start = d["_s"]
            if start <= ws:
                break
            ops = streams[(d["pid"], d["tid"])]
            i = pos[id(d)]
            prev = None
            for o in ops[max(0, i - 64):i]:
                if o["_e"] <= start and (prev is None or o["_e"] > prev["_e"]):
                    prev = o
            prev_end = prev["_e"] if prev else -(1 << 62)
            r = runtime.get(d.get("args", {}).get("correlation"))
            launch_at = r["_s"] if r and r["_s"] <= start else -(1 << 62)
            def issued(o):
                ro = runtime.get(o.get("args", {}).get("correlation"))
                return ro["_s"] if ro else o["_s"]
            since = max(prev_end, launch_at)
            lo, hi = (issued(prev) if prev else -(1 << 62)), issued(d)
            other = None
            if any(lo <= t <= hi for t in waits[(d["pid"], d["tid"])]):
                for o in reversed(by_end):
                    if o["_e"] <= start and (o["pid"], o["tid"]) != (d["pid"], d["tid"]) and o["pid"] == d["pid"] and o["_e"] > o["_s"]:
                        other = o
                        break
            if other is not None and other["_e"] > since:
                add(other["_e"], start, "gpu_kernel_kernel_overhead")
                at, cur = other["_e"], other
            elif r is not None and launch_at >= prev_end:
                back = min(r["_e"], start)
                add(back, start, "gpu_kernel_launch_overhead")
                at, cur = back, None
            elif prev is not None and (r is not None or start - prev_end < CONSECUTIVE_KERNEL_DELAY):
                add(prev_end, start, "gpu_kernel_kernel_overhead")
                at, cur = prev_end, prev
            else:
                at, cur = start, None
            continue
        seg = next(s for s in segs if s[0] < at <= s[1])
        ev = seg[2]
        cp = blocking_copy.get(ev.get("args", {}).get("correlation")) if ev is not None and ev.get("cat") == "cuda_runtime" else None
        if cp is not None and at == seg[1] == ev["_e"]:
            if ev["_s"] <= cp["_e"] <= at and cp["_e"] > cp["_s"]:
                add(cp["_e"], at, "sync_overhead")
                at, cur = cp["_e"], cp
                continue
        elif ev is not None and at == seg[1] == ev["_e"] and is_host_sync(ev):
            lane = sync_lane.get(ev.get("args", {}).get("correlation"))
            if lane is not None and int(lane[1]) < 0:
                lane = None
            rel = None
            for o in reversed(by_end):
                if o["_e"] > at:
                    continue
                if o["_e"] < ev["_s"]:
                    break
                if o["_e"] > o["_s"] and (lane is None or (o["pid"], o["tid"]) == lane):
                    rel = o
                    break
            if rel is not None:
                add(rel["_e"], at, "sync_overhead")
                at, cur = rel["_e"], rel
                continue
        cat = "cpu_bound"
        if ev is not None and host_role(ev) in ("dataload", "sample", "gather"):
            cat = "data_loading"
        add(seg[0], at, cat)
        at = seg[0]
    return {"start_ns": ws, "wall_ns": we - ws, "categories": dict(sorted(cats.items()))}


if __name__ == "__main__":
    main()
