#!/bin/sh
# Several builds of the CUDA engine taking turns on one card in one device
# call: ordfit (the working tree's tools) on the engine (src/) of each git
# ref named, every tree given the dev marks
# (marks_apply.py), so that `ordfit marks` reads where each one's device
# waits on the host.
#
# Here (no GPU needed): the first ref is built in full, the others from a
# copy of its objects with only their changed files rebuilt; the binaries,
# stripped, go to .gpu/ab/variants.tar.xz (it travels with .gpu):
#   sh tools/cuda-dev/variants_ab.sh build NAME=REF [NAME=REF ...]
# On the GPU machine, from the repository root (TURNS turns, default 3;
# shapes "n k" pairs, default B's):
#   sh tools/cuda-dev/variants_ab.sh run [n k [n k ...]]
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
case "${1:-}" in
build)
  shift
  work=$(mktemp -d)
  mkdir -p "$work/bin" "$root/.gpu/ab"
  first=
  names=
  for spec in "$@"; do
    name=${spec%%=*}; ref=${spec#*=}
    mkdir -p "$work/new"
    # (the engine of the ref, the tools of the working tree: every build
    # measures alike)
    (cd "$root" && git archive "$ref" src) | tar -x -C "$work/new"
    (cd "$root" && tar -cf - tools) | tar -x -C "$work/new"
    python3 "$root/tools/cuda-dev/marks_apply.py" "$work/new"
    if [ -z "$first" ]; then
      mv "$work/new" "$work/$name"
      first=$name
    else
      cp -a "$work/$first" "$work/$name"
      # (only the files that differ get a new time: make rebuilds just them)
      (cd "$work/new" && find . -type f) | while read -r f; do
        cmp -s "$work/new/$f" "$work/$name/$f" || cp "$work/new/$f" "$work/$name/$f"
      done
      rm -rf "$work/new"
    fi
    make -C "$work/$name/tools/cuda-dev" -j2 ordfit > "$work/$name.log" 2>&1 || { tail -20 "$work/$name.log"; exit 1; }
    cp "$work/$name/tools/cuda-dev/ordfit" "$work/bin/ordfit_$name"
    strip "$work/bin/ordfit_$name" 2>/dev/null || true
    names="$names $name"
    echo "variants_ab: $name = $ref ($(cd "$root" && git rev-parse --short "$ref"))"
  done
  echo "$names" > "$work/bin/names"
  tar -C "$work/bin" -cJf "$root/.gpu/ab/variants.tar.xz" .
  rm -rf "$work"
  ;;
run)
  shift
  dir=$(mktemp -d)
  tar -C "$dir" -xJf "$root/.gpu/ab/variants.tar.xz"
  each() {
    "$1" "$2" "$3" marks 10 | grep -E "^(single|double):" || true
    "$1" "$2" "$3" | grep -E "iter.max +(10|500) " || true
  }
  . "$root/tools/cuda-dev/turns.sh"
  take_turns "$dir" "$(cat "$dir/names")" each ${*:-1000000 100}
  ;;
*)
  echo "usage: variants_ab.sh build NAME=REF ... | run [n k ...]" >&2
  exit 2
  ;;
esac
