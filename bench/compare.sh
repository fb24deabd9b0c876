#!/bin/sh
# Epoch-time comparison of gnnprof's full-batch trainer with plain PyTorch on the same data,
# model, settings and thread count.
#
#   bench/compare.sh DATA MODEL EPOCHS [THREADS]
#   e.g. bench/compare.sh ../shared/data/planetoid/ind.cora gcn 200 2
#
# Runs REPS times (default 3), alternating so machine load hits both alike: gnnprof (GOMAXPROCS=THREADS), torch with
# dense first-layer features (PyG's usual) and torch with sparse features. Set TORCH_BLAS_DIR to
# a folder holding an alternative libblas.so.3 (e.g. OpenBLAS's) to run torch on it. Prints each
# run's mean training-epoch time (forward + loss + backward + optimizer step, first epoch
# excluded).
set -eu
data=$1 model=$2 epochs=$3 threads=${4:-2}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$root"
go build -o "$work/gnnprof" ./cmd/gnnprof
go run ./bench/export --data "$data" --model "$model" --out "$work/data"
py=${PYTHON:-/usr/bin/python3}
torch() {
	if [ -n "${TORCH_BLAS_DIR:-}" ]; then
		LD_LIBRARY_PATH=$TORCH_BLAS_DIR OPENBLAS_NUM_THREADS=$threads "$py" bench/torch_fullbatch.py "$@"
	else
		"$py" bench/torch_fullbatch.py "$@"
	fi
}
for rep in $(seq "${REPS:-3}"); do
	GOMAXPROCS=$threads "$work/gnnprof" run full --data "$data" --model "$model" --epochs "$epochs" \
		--patience 0 --quiet --no-report --out "$work/run$rep"
	torch --data "$work/data" --model "$model" --epochs "$epochs" --threads "$threads" --features sparse 2>/dev/null
	torch --data "$work/data" --model "$model" --epochs "$epochs" --threads "$threads" --features dense 2>/dev/null
done
