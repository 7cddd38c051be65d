#!/bin/sh
# ncu look at the small-d kernel (problems B and C, single and double).
OUT=${OUT:-/tmp/gk-out}; mkdir -p "$OUT"; cd "$(dirname "$0")" || exit 1
NCU=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for s in 1 0; do
  ./kbench 1000000 2 1000 $s
  timeout 120 $NCU --section SpeedOfLight --section Occupancy --section ComputeWorkloadAnalysis --section LaunchStats \
    --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active.ratio,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum \
    -k regex:k_assign_small --launch-skip 2 --launch-count 1 ./kbench 1000000 2 1000 $s > "$OUT/ncu_C$s.txt" 2>&1
  grep -E "k_assign_small|Duration|Registers Per|Achieved Occupancy|Issue Slots|Block Limit|pct_of_peak|inst_executed.sum|Grid Size|Shared Memory Config" "$OUT/ncu_C$s.txt" | cut -c1-120
  awk '$NF+0 > 0.1' "$OUT/ncu_C$s.txt" | grep stalled | sed -E 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '{print $1, $NF}'
done
