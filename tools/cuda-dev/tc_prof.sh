#!/bin/sh
# ncu look at the packed tensor-core kernels (problems D and E, single and
# double): per-kernel times (kbench), then the D kernel's pipes, stalls and
# its hottest SASS lines.
OUT=${OUT:-/tmp/gk-out}; mkdir -p "$OUT"; cd "$(dirname "$0")" || exit 1
NCU=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for a in "10000000 16 256" "1000000 128 4096"; do for s in 1 0; do ./kbench $a $s; done; done
for s in 1 0; do
  timeout 150 $NCU --set full --import-source yes -k regex:k_assign_tc --launch-skip 1 --launch-count 1 \
    -o "/tmp/ncu_D$s" ./kbench 10000000 16 256 $s > /dev/null 2>&1
  $NCU --import "/tmp/ncu_D$s.ncu-rep" --page details > "$OUT/ncu_D$s.txt" 2>&1
  grep -E "k_assign_tc|Duration|Registers Per|Achieved Occupancy|Issue Slots|Executed Ipc|Block Limit|Warp Cycles Per Issued|No Eligible|Theoretical Occ" "$OUT/ncu_D$s.txt" | cut -c1-120
  $NCU --import "/tmp/ncu_D$s.ncu-rep" --page source --csv --print-source sass > "$OUT/sass_D$s.csv" 2>&1
  head -c 600 "$OUT/sass_D$s.csv"; echo
done
