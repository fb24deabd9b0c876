#!/bin/sh
# GNNAutoScale's I/O experiment with gnnprof's own profiler: the same GAS training with the
# asynchronous history pool and with --sync-transfers, then `gnnprof report` on each trace.
#
#   bench/gas_io.sh [DATA] [LINK] [EXTRA FLAGS…]
#   e.g. bench/gas_io.sh "sbm:nodes=100000,classes=8,blocks=100,degree=20,homophily=0.9,features=128" 500MB/s --layers 3 --hidden 128
#
# The default link, 1 GB/s, makes a step's transfers about 60 % of its compute: slow enough to
# matter, and hideable. Over 500 MB/s the default model's copies take nearly as long as its whole
# step, and at most about 70 % of them can run alongside compute.
#
# Runs REPS times (default 2), alternating the two modes so machine load hits both alike, EPOCHS
# epochs each (default 5). Prints per run: the mean training epoch (run.json, first epoch
# excluded), the mean step, the time a step's host waits on transfers (the breakdown's sync, h2d
# and d2h parts), the copy time inside steps and the share of it that ran alongside compute, and
# the transfer findings.
set -eu
data=${1:-"sbm:nodes=100000,classes=8,blocks=100,degree=20,homophily=0.9,features=128"}
link=${2:-1GB/s}
[ $# -gt 2 ] && shift 2 || set --
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/gnnprof" ./cmd/gnnprof
for rep in $(seq "${REPS:-2}"); do
	for mode in async sync; do
		flags=""
		[ "$mode" = sync ] && flags=--sync-transfers
		# shellcheck disable=SC2086
		"$work/gnnprof" run gas --data "$data" --link "$link" --epochs "${EPOCHS:-5}" --parts 100 --batch-parts 10 \
			--quiet --no-report --out "$work/$mode$rep" $flags "$@" >/dev/null
		"$work/gnnprof" report "$work/$mode$rep" --no-html --format json | python3 -c '
import json, sys
mode, run = sys.argv[1], json.load(open(sys.argv[2]))
p = json.load(sys.stdin)
steps = [s for s in p["steps"]["steps"] if not s["warmup"]]
epochs = [e["seconds"] for e in run["epochs"][1:]]
parts = {x["role"]: x["mean_ns"] for x in p["breakdown"]["parts"]}
copy = overlap = 0
for d in p["copies"]["directions"]:
    for k, s in enumerate(d["per_step"]):
        if not p["steps"]["steps"][k]["warmup"]:
            copy, overlap = copy + s["total_ns"], overlap + s["overlap_ns"]
waits = sum(parts.get(r, 0) for r in ("sync", "h2d", "d2h"))
found = [f["id"] for f in p["findings"] if f["id"] in ("history-exposed", "copies-not-overlapped", "transfer-bound")]
print("%-5s epoch %7.1f ms  step %6.1f ms  host waits on transfers %6.2f ms/step  copies %6.2f ms/step, %5.1f%% overlapped  %s" % (
    mode, 1e3 * sum(epochs) / len(epochs), p["breakdown"]["mean_ns"] / 1e6, waits / 1e6, copy / 1e6 / len(steps),
    100 * overlap / max(copy, 1), " ".join(found) or "-"))
' "$mode" "$work/$mode$rep/run.json"
	done
done
