#!/bin/sh
# One device call for the packed tensor-core tiles (issue 15): correctness
# (tcpack, dfilter), per-kernel times (kbench), A-E (bench), and one ncu
# look at the new kernels.  PREBUILT binaries carried; logs under $OUT.
#   sh tools/cuda-dev/tc_run.sh [tests] [kbench] [bench] [ncu]
OUT=${OUT:-/tmp/gk-out}
mkdir -p "$OUT"
cd "$(dirname "$0")" || exit 1
nvidia-smi --query-gpu=name,memory.total,clocks.max.sm,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
for w in "$@"; do
  case "$w" in
    tests)
      timeout 200 ./harness tcpack > "$OUT/tcpack.log" 2>&1; echo "tcpack rc=$?"
      grep -E "FAIL|MISMATCH|tests:" "$OUT/tcpack.log" | head -20; rm -f "$OUT/tcpack.log"
      timeout 300 ./harness dfilter > "$OUT/dfilter.log" 2>&1; echo "dfilter rc=$?"
      grep -E "FAIL|MISMATCH|tests:|exact share over" "$OUT/dfilter.log" | head -20 ;;
    kbench)
      for a in "10000000 16 256" "1000000 128 4096" "1000000 32 1024" "1000000 12 64" "200000 300 1000"; do
        ./kbench $a 1
      done > "$OUT/kbench.log" 2>&1; cat "$OUT/kbench.log" ;;
    bench)
      timeout 400 ./harness bench > "$OUT/bench.log" 2>&1; echo "bench rc=$?"; cat "$OUT/bench.log" ;;
    sass)
      cuobjdump -sass build/assign.o > "$OUT/assign.sass" 2>&1; grep -c HMMA "$OUT/assign.sass" ;;
    ncu)
      NCU=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      S="--section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis"
      timeout 200 $NCU $S -k regex:k_assign_tc --launch-count 1 ./kbench 1000000 128 4096 1 > "$OUT/ncu_E.txt" 2>&1
      timeout 100 $NCU $S -k regex:k_assign_tc --launch-count 1 ./kbench 10000000 16 256 1 > "$OUT/ncu_D.txt" 2>&1
      timeout 100 $NCU --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active -k regex:k_assign_tc --launch-count 1 ./kbench 1000000 128 4096 1 > "$OUT/ncu_stall_E.txt" 2>&1
      timeout 100 $NCU --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active -k regex:k_assign_tc --launch-count 1 ./kbench 10000000 16 256 1 > "$OUT/ncu_stall_D.txt" 2>&1
      for f in "$OUT"/ncu_stall_*.txt; do echo "$f"; awk '$NF+0 > 0.05' "$f" | grep -E "stalled|hmma" | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '{print $1, $NF}'; done
      grep -E "k_assign|Duration|Registers Per|Achieved Occupancy|Issue Slots Busy|Compute \(SM\) Throughput|DRAM Throughput|Executed Ipc A|Stall|L1/TEX Hit|Shared" "$OUT"/ncu_*.txt | cut -c1-150 | head -60 ;;
  esac
done
