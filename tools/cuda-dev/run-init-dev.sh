#!/bin/sh
# On the GPU machine (device tool), from the repository root, with
# tools/cuda-dev/init_harness carried:  sh tools/cuda-dev/run-init-dev.sh [test] [bench] [prof]
# Writes logs to $OUT.
H=tools/cuda-dev/init_harness
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv > "$OUT/gpu.txt" 2>&1
for w in "$@"; do
  case "$w" in
    test) $H test > "$OUT/test.txt" 2>&1; tail -3 "$OUT/test.txt" ;;
    bench) $H bench > "$OUT/bench.txt" 2>&1; cat "$OUT/bench.txt" ;;
    prof)
      NCU=$(ls /usr/local/cuda/bin/ncu /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
      S="--section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
      $NCU $S -k regex:k_pp_pass --launch-skip 10 --launch-count 1 $H prof > "$OUT/ncu_pp.txt" 2>&1
      $NCU $S --kernel-name-base demangled -k regex:"k_pp_pass<double" --launch-skip 10 --launch-count 1 $H prof > "$OUT/ncu_ppd.txt" 2>&1
      $NCU $S -k regex:k_par_filter --launch-skip 1 --launch-count 2 $H prof > "$OUT/ncu_par.txt" 2>&1
      grep -E "k_pp_pass|k_par_filter|Duration|Registers|Achieved Occupancy|Issue Slots Busy|Compute \(SM\) Throughput|DRAM Throughput|Executed Ipc A" "$OUT"/ncu_*.txt ;;
  esac
done
# sass: per-instruction counts of one k_par_filter launch and one k_pp_pass launch
case " $* " in *" sass "*)
  NCU=$(ls /usr/local/cuda/bin/ncu /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  $NCU --metrics sass__inst_executed_per_opcode,smsp__sass_inst_executed.sum -k regex:k_par_filter --launch-skip 1 --launch-count 1 $H prof > "$OUT/op_par.txt" 2>&1
  $NCU --set full --import-source no -k regex:k_par_filter --launch-skip 1 --launch-count 1 -o /tmp/rep_par $H prof > /dev/null 2>&1
  $NCU -i /tmp/rep_par.ncu-rep --page source --csv --print-source sass > "$OUT/sass_par.csv" 2>&1
  $NCU --metrics sass__inst_executed_per_opcode,smsp__sass_inst_executed.sum -k regex:k_pp_pass --launch-skip 10 --launch-count 1 $H prof > "$OUT/op_pp.txt" 2>&1
  ls -la "$OUT"; head -c 1500 "$OUT/sass_par.csv" ;;
esac
# small: durations of the small kernels of k-means|| (one prof run)
case " $* " in *" small "*)
  NCU=$(ls /usr/local/cuda/bin/ncu /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  $NCU --metrics gpu__time_duration.sum -k regex:"k_par|k_tree|k_gather|k_fill" --launch-count 60 $H prof > "$OUT/small.txt" 2>&1
  grep -E "^  [a-z].*\(|gpu__time_duration" "$OUT/small.txt" | sed -E 's/\(const.*//; s/ +/ /g' | paste - - | awk '{print $2, $(NF)}' | sort | awk '{s[$1]+=$2; c[$1]++} END {for (k in s) print k, c[k], s[k]}' ;;
esac
