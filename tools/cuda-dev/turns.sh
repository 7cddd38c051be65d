# turns.sh: sourced by patch_ab.sh and variants_ab.sh (on the GPU machine).
# take_turns DIR "NAMES" EACH n k [n k ...]: the card's name, then for each
# shape TURNS turns (default 3) in which every build DIR/ordfit_NAME runs
# `EACH BINARY n k` (a shell function of the caller), one after the other.
take_turns() {
  dir=$1; names=$2; each=$3; shift 3
  nvidia-smi --query-gpu=name --format=csv,noheader
  while [ $# -ge 2 ]; do
    n=$1; k=$2; shift 2
    t=1
    while [ "$t" -le "${TURNS:-3}" ]; do
      for b in $names; do
        echo "## n $n k $k, $b, turn $t"
        "$each" "$dir/ordfit_$b" "$n" "$k"
      done
      t=$((t + 1))
    done
  done
}
