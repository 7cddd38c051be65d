#!/bin/sh
# Before/after of a patch of the CUDA engine (say tools/cuda-dev/patches/
# warp-records.patch) on one card, the two builds taking turns in one
# device call.
#
# Here (no GPU needed, ~5 min on 2 cores): ordfit built from HEAD and from
# HEAD with the patch applied (EXTRA: nvcc flags added to the patched
# build), both stripped into .gpu/ab/ab.tar.xz, which travels with .gpu
# (about 9 MB):
#   sh tools/cuda-dev/patch_ab.sh build PATCH [EXTRA]
# On the GPU machine, from the repository root (TURNS turns, default 3, of
# ordfit's timeline and fits; shapes "n k" pairs, default B's and C's):
#   sh tools/cuda-dev/patch_ab.sh run [n k [n k ...]]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
case "${1:-}" in
build)
  patch=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
  extra=${3:-}
  work=$(mktemp -d)
  for b in base patched; do
    mkdir -p "$work/$b"
    (cd "$root" && git archive HEAD src tools tests) | tar -x -C "$work/$b"
  done
  (cd "$work/patched" && git apply "$patch")
  make -C "$work/base/tools/cuda-dev" -j2 ordfit > "$work/base.log" 2>&1 || { tail -20 "$work/base.log"; exit 1; }
  make -C "$work/patched/tools/cuda-dev" -j2 EXTRA="$extra" ordfit > "$work/patched.log" 2>&1 ||
    { tail -20 "$work/patched.log"; exit 1; }
  mkdir -p "$work/bin" "$root/.gpu/ab"
  for b in base patched; do
    cp "$work/$b/tools/cuda-dev/ordfit" "$work/bin/ordfit_$b"
    strip "$work/bin/ordfit_$b" 2>/dev/null || true
  done
  tar -C "$work/bin" -cJf "$root/.gpu/ab/ab.tar.xz" ordfit_base ordfit_patched
  echo "patch_ab: $(basename "$patch")${extra:+ ($extra)} against $(cd "$root" && git rev-parse --short HEAD) in .gpu/ab/ab.tar.xz"
  rm -rf "$work"
  ;;
run)
  shift
  dir=$(mktemp -d)
  tar -C "$dir" -xJf "$root/.gpu/ab/ab.tar.xz"
  each() {
    "$1" "$2" "$3" timeline | grep -E "^(single|double): (ordering|sums)" || true
    "$1" "$2" "$3" | grep -E "iter.max +(10|500) " || true
  }
  . "$root/tools/cuda-dev/turns.sh"
  # (shapes default: B's and C's)
  take_turns "$dir" "base patched" each ${*:-1000000 100 1000000 1000}
  ;;
*)
  echo "usage: patch_ab.sh build PATCH [EXTRA] | run [n k ...]" >&2
  exit 2
  ;;
esac
