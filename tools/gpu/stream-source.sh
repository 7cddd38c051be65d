#!/bin/sh
# On a GPU machine, from the repository root, after `sh tools/gpu/pack.sh`
# here filled .gpu/: the test files of sources and streamed data with the
# GPU present, then inst/bench/bench_sources.R on device 0 with x streamed
# at every pass (GK_SOURCES_STREAM=1: from host memory, from the scratch
# file's pages, from the dgCMatrix's slots), in double and single
# precision.  Writes OUTDIR/info.txt, tests.txt, stream-double.txt,
# stream-single.txt.
#   sh tools/gpu/stream-source.sh OUTDIR [n] [d] [density]
set -u
out=${1:?usage: stream-source.sh OUTDIR [n] [d] [density]}
n=${2:-1e7}; d=${3:-50}; density=${4:-0.1}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$out/info.txt" 2>&1
R="sh tools/gpu/run-r.sh"
sh tools/gpu/source-tests.sh "$out" test-source-reader.R test-stream-cuda.R test-nonfinite.R test-matrix-sources.R \
  test-multi-device.R test-labels-out.R
for p in double single; do
  GK_SOURCES_STREAM=1 $R inst/bench/bench_sources.R "$n" "$d" "$density" cuda $p 0 > "$out/stream-$p.txt" 2>&1
  cat "$out/stream-$p.txt"
done
