#!/bin/sh
# The CPU engine of the packed build (.gpu/lib, tools/gpu/pack.sh) against a
# CPU-only build of an older commit, on the GPU machine's host cores, in one
# device call: nstart-spatial.R and spatial-shapes.R for each, the builds
# one after the other.
#
# Here, after tools/gpu/pack.sh (about 1 min; the older build is ~7 MB of
# .gpu, within what a call carries):
#   sh tools/cpu-dev/device-cpu-ab.sh build REV
# On the GPU machine, from the repository root (THREADS: default all the
# host's cores; SHAPES=0 leaves spatial-shapes.R out; DIMS: its columns,
# default "2,1"):
#   sh tools/cpu-dev/device-cpu-ab.sh run OUTDIR
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
case "${1:-}" in
build)
  rev=${2:?usage: device-cpu-ab.sh build REV}
  work=$(mktemp -d)
  (cd "$root" && git archive "$rev") | tar -x -C "$work"
  rm -f "$work/src/Makevars"
  rm -rf "$root/.gpu/base"
  mkdir -p "$root/.gpu/base"
  R CMD INSTALL --no-docs --no-html --configure-args=--without-cuda -l "$root/.gpu/base" "$work" > "$work.log" 2>&1 ||
    { tail -20 "$work.log"; exit 1; }
  strip --strip-debug "$root/.gpu/base/gpukmeans/libs/"*.so 2>/dev/null || true
  (cd "$root" && git rev-parse --short "$rev") > "$root/.gpu/base/REV"
  echo "device-cpu-ab: $(cat "$root/.gpu/base/REV") in .gpu/base ($(du -sh "$root/.gpu/base" | cut -f1))"
  rm -rf "$work" "$work.log"
  ;;
run)
  out=${2:?usage: device-cpu-ab.sh run OUTDIR}
  mkdir -p "$out"
  th=${THREADS:-$(nproc)}
  R="sh $root/tools/gpu/run-r.sh"
  for b in base new; do
    lib="$root/.gpu/lib"
    [ "$b" = base ] && lib="$root/.gpu/base"
    $R "$root/tools/cpu-dev/nstart-spatial.R" "$lib" "$th" > "$out/nstart-$b.txt" 2>&1 || true
    if [ "${SHAPES:-1}" != 0 ]; then
      # (the arguments after the expression, without --args: Rscript would
      # hand the script "--args" as its first)
      $R -e '.libPaths(c(commandArgs(TRUE)[3], .libPaths())); source(commandArgs(TRUE)[4])' \
        "$th" "${DIMS:-2,1}" "$lib" "$root/tools/cpu-dev/spatial-shapes.R" > "$out/shapes-$b.txt" 2>&1 || true
    fi
  done
  echo "base: $(cat "$root/.gpu/base/REV" 2>/dev/null || echo '?'), new: the packed build; $th threads"
  for f in "$out"/nstart-base.txt "$out"/nstart-new.txt "$out"/shapes-base.txt "$out"/shapes-new.txt; do
    [ -f "$f" ] && { echo "== $(basename "$f")"; cat "$f"; }
  done
  ;;
*)
  echo "usage: device-cpu-ab.sh build REV | run OUTDIR" >&2
  exit 2
  ;;
esac
