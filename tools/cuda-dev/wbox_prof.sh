#!/bin/sh
# ncu on B's ordered fit (ordfit's timeline, 1e6 x 2, k = 100): every
# kernel's duration in the first fits, then the warp boxes' kernel in
# single precision at iterations 1, 2 and 10, or those of ITS (details,
# and per-SASS-line instructions and stall samples in OUT/wbox-it<N>.csv);
# DURATIONS=0 leaves out the first part.  Binaries built on this machine
# (make ordfit) and carried.
OUT=${OUT:-/tmp/gk-out}; mkdir -p "$OUT"; cd "$(dirname "$0")" || exit 1
NCU=$(ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
[ -n "$NCU" ] || { echo "no ncu"; exit 1; }
if [ "${DURATIONS:-1}" != 0 ]; then
  timeout 150 $NCU --clock-control none --metrics gpu__time_duration.sum --csv ./ordfit 1000000 100 timeline \
    > "$OUT/durations.csv" 2>&1
  python3 ncu_sum.py "$OUT/durations.csv" 2>&1 | head -40
fi
for it in ${ITS:-1 2 10}; do
  timeout 120 $NCU --clock-control none --set full --import-source yes -k regex:k_assign_wbox \
    --launch-skip $((it - 1)) --launch-count 1 -f -o "/tmp/wbox-it$it" ./ordfit 1000000 100 timeline > /dev/null 2>&1
  $NCU --import "/tmp/wbox-it$it.ncu-rep" --page details > "$OUT/wbox-it$it.txt" 2>&1
  echo "== iteration $it"
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occ|Issue Slots|Warp Cycles Per Issued|Executed Ipc A|Memory Throughput|Block Limit|Grid Size|Waves Per" \
    "$OUT/wbox-it$it.txt" | cut -c1-120
  $NCU --import "/tmp/wbox-it$it.ncu-rep" --page source --csv --print-source sass > "$OUT/wbox-it$it.csv" 2>&1
done
