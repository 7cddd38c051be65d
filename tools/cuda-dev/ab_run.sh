#!/bin/sh
# Before/after on one card: builds kbench and harness from the working tree
# (new) and from a copy with the headers of tools/cuda-dev/old_hdr (old),
# then D and E per kernel (kbench) and A-E whole iterations (harness bench).
#   OUT=... sh tools/cuda-dev/ab_run.sh [check]
OUT=${OUT:-/tmp/gk-out}; mkdir -p "$OUT"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf /tmp/ab_old && mkdir -p /tmp/ab_old && cp -r "$ROOT/src" "$ROOT/tools" /tmp/ab_old/
for f in "$ROOT"/tools/cuda-dev/old_hdr/*; do  # (old_hdr, not committed: the old versions of the changed files, say from git show)
  case "$f" in
    */kbench.cu|*/harness.cpp) cp "$f" /tmp/ab_old/tools/cuda-dev/ ;;  # (the dev tools of the old build)
    *.cuh|*.hpp) cp "$f" /tmp/ab_old/src/cuda/detail/ ;;
    *.cu|*.h) cp "$f" /tmp/ab_old/src/cuda/ ;;
  esac
done
(cd "$ROOT/tools/cuda-dev" && make -j16 kbench harness > "$OUT/build_new.log" 2>&1) || { tail -20 "$OUT/build_new.log"; exit 1; }
(cd /tmp/ab_old/tools/cuda-dev && rm -rf build kbench harness && make -j16 kbench harness > "$OUT/build_old.log" 2>&1) || { tail -20 "$OUT/build_old.log"; exit 1; }
N="$ROOT/tools/cuda-dev"; O=/tmp/ab_old/tools/cuda-dev
# V3_FLAGS (optional): a third build, the working tree with these nvcc flags added (say -DGK_TC_STAGES=3)
if [ -n "$V3_FLAGS" ]; then
  rm -rf /tmp/ab_v3 && mkdir -p /tmp/ab_v3 && cp -r "$ROOT/src" "$ROOT/tools" /tmp/ab_v3/
  (cd /tmp/ab_v3/tools/cuda-dev && rm -rf build kbench harness && make -j16 EXTRA="$V3_FLAGS" kbench harness > "$OUT/build_v3.log" 2>&1) || { tail -20 "$OUT/build_v3.log"; exit 1; }
fi
V=/tmp/ab_v3/tools/cuda-dev
nvidia-smi --query-gpu=name --format=csv,noheader
# KB_ARGS: kbench argument sets, one a line; KB_PAT: the lines of its output to show
KB_ARGS=${KB_ARGS:-"10000000 16 256 1
1000000 128 4096 1
1000000 32 1024 1"}
for r in 1 2; do echo "$KB_ARGS" | while read -r a; do
  echo "== $a old"; $O/kbench $a | grep -E "${KB_PAT:-labels only}"
  echo "== $a new"; $N/kbench $a | grep -E "${KB_PAT:-labels only}"
  [ -n "$V3_FLAGS" ] && { echo "== $a v3 ($V3_FLAGS)"; $V/kbench $a | grep -E "${KB_PAT:-labels only}"; }
done; done
for v in O N ${V3_FLAGS:+V}; do eval dir=\$$v; echo "== harness bench $v"; (cd $dir && ./harness bench 2>&1 | tail -12); done
if [ "$1" = check ]; then (cd "$N" && ./harness tcpack 2>&1 | tail -3; ./harness dfilter 2>&1 | tail -3; timeout 240 ./harness test 2>&1 | grep -E "FAIL|tests:" | tail -8); fi
