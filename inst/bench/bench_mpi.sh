#!/bin/sh
# gpu_kmeans over MPI on a machine with two GPUs: 2 ranks (one GPU each)
# against 1 rank, same data (default 1e8 x 16, k = 256; inst/bench/bench_mpi.R),
# then the comparison: identical fits and the speed-up.
#
# On the two-GPU machine (CUDA, no R, no MPI), from the repository root,
# after, here:
#   sh tools/gpu/pack.sh                                  # .gpu/r-runtime.tar.xz, .gpu/lib (CUDA build)
#   sh tools/gpu/mpi-runtime.sh .gpu/mpi-runtime.tar.xz .gpu/r-runtime.tar.xz   # Open MPI, Rmpi
# there:
#   sh inst/bench/bench_mpi.sh OUTDIR [n] [d] [k] [iter.max]
# Writes OUTDIR/np1, OUTDIR/np2 (per-rank results), OUTDIR/bench_mpi.txt.
# Any machine with R, Rmpi and mpirun: GK_BENCH_BACKEND=cpu and a small n
# make a dry run on the CPU engine.
set -eu
out=${1:?usage: bench_mpi.sh OUTDIR [n] [d] [k] [iter.max]}; shift
root=$(pwd)
if [ -f "$root/.gpu/r-runtime.tar.xz" ]; then
  [ -x /usr/lib/R/bin/Rscript ] || tar -C / -xJf "$root/.gpu/r-runtime.tar.xz"
  [ -d /usr/lib/R/site-library/Rmpi ] || tar -C / -xJf "$root/.gpu/mpi-runtime.tar.xz"
  export LD_LIBRARY_PATH=/opt/rlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export R_LIBS="$root/.gpu/lib"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RSCRIPT=${RSCRIPT:-$(command -v Rscript || echo /usr/lib/R/bin/Rscript)}
mkdir -p "$out"
nvidia-smi --query-gpu=index,name,memory.total --format=csv > "$out/gpus.txt" 2>&1 || true
# one rank (GPU 0), then two ranks (local ranks 0 and 1: GPUs 0 and 1)
for np in 1 2; do
  mpirun -np $np --bind-to none -x LD_LIBRARY_PATH -x R_LIBS -x GK_BENCH_BACKEND \
    "$RSCRIPT" inst/bench/bench_mpi.R "$out/np$np" "$@" > "$out/np$np.log" 2>&1 ||
    { tail -n 30 "$out/np$np.log"; exit 1; }
  grep "^rank" "$out/np$np.log"
done
"$RSCRIPT" inst/bench/bench_mpi.R --compare "$out" | tee "$out/bench_mpi.txt"
