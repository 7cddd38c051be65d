#!/bin/sh
# On the GPU machine, from the repository root (after tools/gpu/pack.sh here):
#   sh tools/gpu/sanitize.sh OUTDIR [memcheck racecheck initcheck synccheck]
# (GK_SANITIZE_SCRIPT=tools/gpu/sanitize-multi.R: that script instead)
# Runs tools/gpu/sanitize.R (every CUDA path on small data; racecheck on
# smaller data) under each
# compute-sanitizer tool; OUTDIR/sanitize-<tool>.txt, and the summaries last.
out=${1:?usage: sanitize.sh OUTDIR [tools...]}; shift
tools=${*:-memcheck racecheck initcheck synccheck}
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x /usr/lib/R/bin/Rscript ] || tar -C / -xJf "$root/.gpu/r-runtime.tar.xz"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
export LD_LIBRARY_PATH=/opt/rlibs R_LIBS="$root/.gpu/lib"
for t in $tools; do
  extra=""
  [ "$t" = memcheck ] && extra="--leak-check full"
  # racecheck runs the shared-memory kernels ~1000x slower: the small data
  quick=${GK_SANITIZE_QUICK:-}; [ "$t" = racecheck ] && [ -z "$quick" ] && quick=true
  GK_SANITIZE_QUICK=$quick timeout 300 "$CS" --tool "$t" $extra --target-processes all /usr/lib/R/bin/Rscript --vanilla \
    "$root/${GK_SANITIZE_SCRIPT:-tools/gpu/sanitize.R}" > "$out/sanitize-$t.txt" 2>&1
  echo "$t rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY' "$out/sanitize-$t.txt" | tr '\n' ' ') $(grep -c 'sanitize.*R: done' "$out/sanitize-$t.txt")"
done
