#!/bin/sh
# Every kernel of the harness's benchmark fits of one problem (GK_BENCH_ONLY,
# default E), by total GPU time: what a whole iteration spends beyond the
# kernels kbench times.  nsys where the machine has it, else ncu's durations.
OUT=${OUT:-/tmp/gk-out}; mkdir -p "$OUT"; cd "$(dirname "$0")" || exit 1
make -j16 harness > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
export GK_BENCH_ONLY=${GK_BENCH_ONLY:-E}
NSYS=$(ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys /usr/local/cuda/nsight-systems*/bin/nsys 2>/dev/null | head -1)
if [ -n "$NSYS" ]; then
  $NSYS profile --trace=cuda -o /tmp/iter -f true ./harness bench > "$OUT/harness.txt" 2>&1
  $NSYS stats --report cuda_gpu_kern_sum --report cuda_gpu_mem_time_sum /tmp/iter.nsys-rep 2>&1 | cut -c1-160 | head -70
else
  NCU=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  timeout 400 $NCU --metrics gpu__time_duration.sum --csv ./harness bench > "$OUT/ncu.csv" 2>&1
  python3 - "$OUT/ncu.csv" <<'PY'
import csv, sys, collections
t = collections.Counter(); c = collections.Counter()
for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if len(r) > 14 and r[-3] == "gpu__time_duration.sum":
        k = r[4].split("(")[0][-60:]; v = float(r[-1].replace(",", "")); u = r[-2]
        t[k] += v / (1e3 if u == "nsecond" else 1 if u == "usecond" else 1e-3); c[k] += 1
for k, v in t.most_common(25): print("%10.1f us %5d  %s" % (v, c[k], k))
PY
fi
