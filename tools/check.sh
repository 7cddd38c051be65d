#!/bin/sh
# The project's test command (run by .ci/run):
#  1. R CMD build, then R CMD check --as-cran --no-manual on the tarball
#     (with the CUDA engine when nvcc is present): fails on any ERROR or WARNING;
#  2. a CPU-only build (--without-cuda) installed on its own and the testthat
#     suite run against it, ending with an "N passed, N failed" line.
set -eu
cd "$(dirname "$0")/.."
export _R_CHECK_CRAN_INCOMING_REMOTE_=false _R_CHECK_SYSTEM_CLOCK_=0
export _R_CHECK_FORCE_SUGGESTS_=false NOT_CRAN=false
work=$(mktemp -d /tmp/gpukmeans-check.XXXXXX)
echo "== R CMD build"
R CMD build . >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
tarball=$(ls -t gpukmeans_*.tar.gz | head -n 1)
mv "$tarball" "$work/"
echo "== R CMD check --as-cran --no-manual $tarball"
status=0
R CMD check --as-cran --no-manual --output="$work" "$work/$tarball" || status=$?
log="$work/gpukmeans.Rcheck/00check.log"
grep -E "^\* (checking|using).*(NOTE|WARNING|ERROR)$" "$log" || true
grep -A 12 -E "\.\.\. (NOTE|WARNING|ERROR)$" "$log" || true
tail -n 3 "$log"
if [ "$status" -ne 0 ] || grep -qE "^Status: .*(ERROR|WARNING)" "$log"; then
  echo "R CMD check failed: see above"
  [ -f "$work/gpukmeans.Rcheck/tests/testthat.Rout.fail" ] && tail -n 60 "$work/gpukmeans.Rcheck/tests/testthat.Rout.fail"
  exit 1
fi
echo "== CPU-only build (--without-cuda) and its test suite"
mkdir -p "$work/cpu-lib"
R CMD INSTALL --configure-args=--without-cuda -l "$work/cpu-lib" "$work/$tarball" >"$work/cpu-install.log" 2>&1 ||
  { cat "$work/cpu-install.log"; exit 1; }
grep "gpukmeans: building" "$work/cpu-install.log"
R_LIBS="$work/cpu-lib" Rscript -e '
  library(testthat)
  library(gpukmeans)
  stopifnot(!gpukmeans_info()$cuda_built)
  options(gpukmeans.threads = 2)
  res <- as.data.frame(test_dir("tests/testthat", package = "gpukmeans",
                                load_package = "installed", stop_on_failure = FALSE,
                                reporter = ProgressReporter$new(show_praise = FALSE)))
  failed <- sum(res$failed) + sum(res$error)
  passed <- sum(res$nb) - sum(res$failed) - sum(res$skipped)
  cat(sprintf("%d passed, %d failed, %d skipped\n", passed, failed, sum(res$skipped)))
  quit(status = if (failed > 0) 1 else 0)
'
