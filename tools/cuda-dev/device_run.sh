#!/bin/sh
# One device call: build, correctness tests, benchmarks, then memcheck on the tests.
#   sh tools/cuda-dev/device_run.sh [quick]     (logs under $OUT when set)
OUT=${OUT:-/tmp/gk-out}
mkdir -p "$OUT"
cd "$(dirname "$0")" || exit 1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
make -j8 > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
for a in "1000000 2 100" "1000000 2 1000" "10000000 16 256" "1000000 128 4096"; do
  for s in 1 0; do ./kbench $a $s; done
done > "$OUT/kbench.log" 2>&1
cat "$OUT/kbench.log"
cuobjdump -sass build/update.o | grep -oE "ATOMS[.A-Z0-9]*" | sort | uniq -c
for f in $(cuobjdump -sass build/persistent.o | grep -oE "Function : \S+" | awk '{print $3}' | grep "IfLi2E"); do
  echo "SASS $f"; cuobjdump -sass -fun "$f" build/persistent.o | grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9.]+" | awk '{print $2}' | sort | uniq -c | sort -rn | head -25
done > "$OUT/sass.txt" 2>&1
./harness test > "$OUT/test.log" 2>&1; echo "test rc=$?"
grep -E "FAIL|tests:" "$OUT/test.log" | tail -20
./harness bench > "$OUT/bench.log" 2>&1; echo "bench rc=$?"
cat "$OUT/bench.log"
if [ "$1" != quick ]; then
  timeout 230 compute-sanitizer --tool memcheck --leak-check full ./harness test > "$OUT/memcheck.log" 2>&1
  echo "memcheck rc=$?"; grep -E "ERROR SUMMARY|LEAK SUMMARY|tests:" "$OUT/memcheck.log" | tail -5
fi
