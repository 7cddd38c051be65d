#!/bin/sh
# On a GPU machine, from the repository root, after `sh tools/gpu/pack.sh`
# here filled .gpu/: the test files of sources, uploads and non-finite
# values with the GPU present, then tools/gpu/put-fused.R taking turns
# between this library (new) and, where .gpu/old.so.xz holds the shared
# library of an earlier build of the same R code, that one (old), in fresh
# processes, double and single precision, then inst/bench/bench_sources.R
# on device 0 with the new one.  Writes OUTDIR/info.txt, tests.txt,
# fused.txt, sources.txt.
#   sh tools/gpu/put-fused.sh OUTDIR [n] [d] [density]
set -u
out=${1:?usage: put-fused.sh OUTDIR [n] [d] [density]}
n=${2:-1e7}; d=${3:-50}; density=${4:-0.1}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$out/info.txt" 2>&1
R="sh tools/gpu/run-r.sh"
sh tools/gpu/source-tests.sh "$out" test-source-reader.R test-upload-cuda.R test-nonfinite.R test-matrix-sources.R \
  test-multi-device.R test-stream-cuda.R
old=""
if [ -f .gpu/old.so.xz ]; then
  rm -rf /tmp/gk-old && mkdir -p /tmp/gk-old && cp -r .gpu/lib/gpukmeans /tmp/gk-old/ &&
    xz -dc .gpu/old.so.xz > /tmp/gk-old/gpukmeans/libs/gpukmeans.so && old=/tmp/gk-old
fi
: > "$out/fused.txt"
for p in double single; do for round in 1 2; do
  $R tools/gpu/put-fused.R "$n" "$d" "$density" $p fused,host >> "$out/fused.txt" 2>&1
  [ -n "$old" ] && LD_LIBRARY_PATH=/opt/rlibs R_LIBS=$old NOT_CRAN=true /usr/lib/R/bin/Rscript \
    tools/gpu/put-fused.R "$n" "$d" "$density" $p fused >> "$out/fused.txt" 2>&1
done; done
$R inst/bench/bench_sources.R "$n" "$d" "$density" cuda double 0 > "$out/sources.txt" 2>&1
cat "$out/fused.txt" "$out/sources.txt"
