#!/bin/sh
# On a GPU machine with two GPUs (device tool kind nvidia-h200-x2), from the
# repository root, after `sh tools/gpu/pack.sh` here filled .gpu/: the tests
# of matrix sources and of several devices with both GPUs present, then
# inst/bench/bench_sources.R on device 0 and on devices 0 and 1 (a large
# dgCMatrix read into memory, into a scratch file, or block by block by the
# fit itself).  Writes OUTDIR/info.txt, tests2.txt, src0.txt, src01.txt.
#   sh tools/gpu/two-gpu-sources.sh OUTDIR [n] [d] [density]
set -u
out=${1:?usage: two-gpu-sources.sh OUTDIR [n] [d] [density]}
n=${2:-1e7}; d=${3:-50}; density=${4:-0.1}
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total --format=csv > "$out/info.txt" 2>&1
R="sh tools/gpu/run-r.sh"
$R -e 'library(testthat); library(gpukmeans)
  for (f in c("test-source-reader.R", "test-multi-device.R")) {
    r <- as.data.frame(test_file(file.path("tests/testthat", f), package = "gpukmeans", load_package = "installed",
                                 reporter = "summary"))
    cat(sprintf("%s: %d expectations, %d failed, %d skipped, %d errors\n", f, sum(r$nb), sum(r$failed),
                sum(r$skipped), sum(r$error)))
  }' > "$out/tests2.txt" 2>&1
grep -a "expectations" "$out/tests2.txt"
$R inst/bench/bench_sources.R "$n" "$d" "$density" cuda double 0 > "$out/src0.txt" 2>&1
$R inst/bench/bench_sources.R "$n" "$d" "$density" cuda double 0,1 > "$out/src01.txt" 2>&1
cat "$out/src0.txt" "$out/src01.txt"
