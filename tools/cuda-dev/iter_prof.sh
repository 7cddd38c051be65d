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
  python3 ncu_sum.py "$OUT/ncu.csv"
fi
