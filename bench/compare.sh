#!/bin/sh
# Epoch-time comparison of gnnprof's full-batch trainer with plain PyTorch on the same data,
# model, settings and thread count.
#
#   bench/compare.sh DATA MODEL EPOCHS [THREADS]
#   e.g. bench/compare.sh ../shared/data/planetoid/ind.cora gcn 200 2
#
# Runs REPS times (default 3), alternating so machine load hits both alike: gnnprof
# (GOMAXPROCS=THREADS), then torch with dense first-layer features (PyG's usual) and with sparse
# ones, for GCN each with the adjacency in COO and in CSR layout for torch.sparse.mm. Prints each
# run's mean training-epoch time (forward + loss + backward + optimizer step, first epoch
# excluded) after the machine's load average when it started, then the fastest of each side.
#
# Torch gets exactly THREADS threads: OMP_NUM_THREADS, OPENBLAS_NUM_THREADS and MKL_NUM_THREADS
# cap its OpenMP and BLAS pools (torch.set_num_threads alone leaves OpenBLAS's own threads
# running), and OMP_WAIT_POLICY=PASSIVE stops idle OpenMP threads spin-waiting, which otherwise
# burns the cores gnnprof or another job need and collapses torch when one is taken. Set
# TORCH_BLAS_DIR to a folder holding an alternative libblas.so.3 (e.g. OpenBLAS's) to run torch
# on it. On a shared machine, compare runs taken at similar load only.
set -eu
data=$1 model=$2 epochs=$3 threads=${4:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/gnnprof" ./cmd/gnnprof
go run ./bench/export --data "$data" --model "$model" --out "$work/data"
py=${PYTHON:-/usr/bin/python3}
export OMP_NUM_THREADS=$threads OPENBLAS_NUM_THREADS=$threads MKL_NUM_THREADS=$threads OMP_WAIT_POLICY=PASSIVE
load() { cut -d' ' -f1-3 /proc/loadavg; }
# result LINE...: prints a run's result after the load average when it started ($start).
result() { echo "load $start | $*" | tee -a "$work/results"; }
torch() {
	start=$(load)
	if [ -n "${TORCH_BLAS_DIR:-}" ]; then
		out=$(LD_LIBRARY_PATH=$TORCH_BLAS_DIR "$py" bench/torch_fullbatch.py "$@" 2>/dev/null)
	else
		out=$("$py" bench/torch_fullbatch.py "$@" 2>/dev/null)
	fi
	result "$out"
}
layouts=coo
[ "$model" = gcn ] && layouts="coo csr"
for rep in $(seq "${REPS:-3}"); do
	start=$(load)
	result "$(GOMAXPROCS=$threads "$work/gnnprof" run full --data "$data" --model "$model" --epochs "$epochs" \
		--patience 0 --quiet --no-report --out "$work/run$rep" | head -1)"
	for adj in $layouts; do
		for features in sparse dense; do
			torch --data "$work/data" --model "$model" --epochs "$epochs" --threads "$threads" --features "$features" --adj "$adj"
		done
	done
done
echo "fastest:"
grep -v '^load [^|]*| torch' "$work/results" | sed 's/.*mean training epoch \([0-9.]*\) ms.*/\1 &/' | sort -n | head -1 | cut -d' ' -f2-
grep '| torch' "$work/results" | sed 's/.*mean_epoch_ms=\([0-9.]*\).*/\1 &/' | sort -n | head -1 | cut -d' ' -f2-
