#!/bin/sh
# On a GPU machine, from the repository root, after `sh tools/gpu/pack.sh`
# here filled .gpu/: the test files of matrix sources, several devices and
# streamed data with the GPU present, each file's counts on a line.
# Writes OUTDIR/tests.txt.
#   sh tools/gpu/source-tests.sh OUTDIR [test files ...]
set -u
out=${1:?usage: source-tests.sh OUTDIR [test files ...]}; shift
files=${*:-"test-source-reader.R test-multi-device.R test-stream-cuda.R test-matrix-sources.R"}
mkdir -p "$out"
GK_FILES="$files" sh tools/gpu/run-r.sh -e 'library(testthat); library(gpukmeans)
  for (f in strsplit(Sys.getenv("GK_FILES"), " ")[[1]]) {
    r <- as.data.frame(test_file(file.path("tests/testthat", f), package = "gpukmeans", load_package = "installed",
                                 reporter = "summary"))
    cat(sprintf("%s: %d expectations, %d failed, %d skipped, %d errors (%s)\n", f, sum(r$nb), sum(r$failed),
                sum(r$skipped), sum(r$error), gpukmeans_info()$devices$name[1]))
  }' > "$out/tests.txt" 2>&1
grep -a "expectations" "$out/tests.txt"
