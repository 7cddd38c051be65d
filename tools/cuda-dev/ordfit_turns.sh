#!/bin/sh
# Before/after of the ordered fit on one card, the builds taking turns:
# ordfit_base (built from an earlier commit, say git worktree add /tmp/base
# REV && make -C /tmp/base/tools/cuda-dev ordfit, copied here) against
# ordfit (the working tree), TURNS turns (default 2) of the timeline (the
# 10 iterations' kernels) and the fits (fresh and reused handles).
# BUILDS: the binaries to take turns (default "ordfit_base ordfit"; a
# third, say, from a copy built with make EXTRA=-D...).
#   sh tools/cuda-dev/ordfit_turns.sh [n] [k]
cd "$(dirname "$0")" || exit 1
n=${1:-1000000}; k=${2:-100}
nvidia-smi --query-gpu=name --format=csv,noheader
t=1
while [ "$t" -le "${TURNS:-2}" ]; do
  for b in ${BUILDS:-ordfit_base ordfit}; do
    echo "## $b turn $t"
    ./$b "$n" "$k" timeline | grep -E "^(single|double): (ordering|sums)"
    ./$b "$n" "$k" | grep -E "iter.max +(10|500) "
  done
  t=$((t + 1))
done
