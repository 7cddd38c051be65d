#!/bin/sh
# One device call: build, per-call overhead (seq), kernel timings, tests, benchmarks,
# then memcheck on the tests.
#   sh tools/cuda-dev/device_run.sh [quick|nomemcheck]     (logs under $OUT when set)
# PREBUILT=1: use the harness/kbench built on the host (carried), no make.
# harness_old (optional, carried): the previous version, for before/after seq numbers.
OUT=${OUT:-/tmp/gk-out}
mkdir -p "$OUT"
cd "$(dirname "$0")" || exit 1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
if [ -z "$PREBUILT" ]; then make -j8 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }; fi
{
  [ -x ./harness_old ] && { echo "== before"; ./harness_old seq; }
  echo "== after"; ./harness seq
} > "$OUT/seq.log" 2>&1
for a in "1000000 2 100" "1000000 2 1000" "10000000 16 256" "1000000 128 4096" "1000000 32 1024" "1000000 12 64"; do
  for s in 1 0; do ./kbench $a $s; done
done > "$OUT/kbench.log" 2>&1
./harness test > "$OUT/test.log" 2>&1; echo "test rc=$?"
./harness bench > "$OUT/bench.log" 2>&1; echo "bench rc=$?"
if [ "$1" != quick ] && [ "$1" != nomemcheck ]; then
  timeout 230 compute-sanitizer --tool memcheck --leak-check full ./harness test > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|tests:" "$OUT/memcheck.log" | tail -5
fi
grep -E "FAIL|tests:" "$OUT/test.log" | tail -20
grep -E "^n=|ms$" "$OUT/kbench.log"
grep -vE "^(runtime|device 0)" "$OUT/seq.log"
cat "$OUT/bench.log"
