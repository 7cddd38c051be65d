#!/bin/sh
# ncu look at the packed tensor-core kernel of D and the cluster sums of D
# and E (k_accumulate; kbench's uniform data, single precision): per-kernel
# times (kbench), then each one's details and per-SASS-line samples
# (OUT/<name>.csv: instructions executed and stall samples a line).
OUT=${OUT:-/tmp/gk-out}; mkdir -p "$OUT"; cd "$(dirname "$0")" || exit 1
NCU=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
make -j16 kbench > "$OUT/build.log" 2>&1 || { tail -20 "$OUT/build.log"; exit 1; }
for a in "10000000 16 256" "1000000 128 4096"; do ./kbench $a 1; done
prof() {  # name kernel-regex kbench-args
  timeout 200 $NCU --set full --import-source yes -k "regex:$2" --launch-skip 1 --launch-count 1 -o "/tmp/$1" ./kbench $3 > /dev/null 2>&1
  $NCU --import "/tmp/$1.ncu-rep" --page details > "$OUT/$1.txt" 2>&1
  grep -E "^  [a-zA-Z_:<>]|Duration|Registers Per|Achieved Occupancy|Issue Slots|Warp Cycles Per Issued|Theoretical Occ|Memory Throughput|highest-utilized" "$OUT/$1.txt" | cut -c1-130
  $NCU --import "/tmp/$1.ncu-rep" --page source --csv --print-source sass > "$OUT/$1.csv" 2>&1
}
prof accE k_accumulate "1000000 128 4096 1"
prof accD k_accumulate "10000000 16 256 1"
prof tcD '^k_assign_tc$' "10000000 16 256 1"
