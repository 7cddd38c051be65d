#!/bin/sh
# Packs this machine's R (Debian's r-base-core), the R packages the GPU runs
# need and the shared libraries they load into one tar.xz, to unpack at / on
# a GPU machine that has no R (tools/gpu/run-r.sh does that).
# usage: sh tools/gpu/r-runtime.sh OUT.tar.xz [more site-library packages ...]
set -eu
out=$1; shift
# testthat and what it loads, Rcpp and cli (gpukmeans imports them), the
# suggested packages the GPU suite and benchmarks use that are small enough
# to carry (cluster, Matrix with lattice, clue, progressr, bigmemory with
# bigmemory.sri and uuid: the mapped and streamed big.matrix), and extras
pkgs="Rcpp cli testthat withr brio callr crayon desc diffobj digest ellipsis evaluate fansi fs glue jsonlite
      lifecycle magrittr pillar pkgconfig pkgload praise processx ps R6 rematch2 rlang rprojroot tibble utf8
      vctrs waldo clue progressr globals bigmemory bigmemory.sri uuid $*"
skip="translations tcltk mgcv survival nlme MASS KernSmooth boot class codetools foreign nnet
      rpart spatial"
stage=$(mktemp -d)
mkdir -p "$stage/usr/lib/R/site-library" "$stage/opt/rlibs" "$stage/usr/share/R/doc" "$stage/etc"
excl=""
for p in $skip; do excl="$excl --exclude=usr/lib/R/library/$p"; done
# (no help pages, manuals or HTML: the runs never read them, and a device
# call carries at most 64 MiB in all)
# shellcheck disable=SC2086
tar -C / --exclude=usr/lib/R/site-library $excl --exclude='*/html' --exclude='*/doc' --exclude='*/help' \
    --exclude=usr/lib/R/modules/R_X11.so --exclude=usr/lib/R/modules/R_de.so \
    --exclude=usr/lib/R/library/grDevices/libs/cairo.so -cf - usr/lib/R | tar -C "$stage" -xf -
cp -a /usr/share/R/share /usr/share/R/include "$stage/usr/share/R/"
cp -aL /etc/R "$stage/etc/"
for p in $pkgs; do
  [ -d "/usr/lib/R/site-library/$p" ] || continue
  tar -C /usr/lib/R/site-library --exclude="$p/html" --exclude="$p/doc" --exclude="$p/help" --exclude="$p/include" -chf - "$p" |
    tar -C "$stage/usr/lib/R/site-library" -xf -
done
# the shared libraries all of it links, except the C and C++ runtimes
find "$stage" -name '*.so' -o -path '*/bin/exec/R' | while read -r f; do
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  case $name in libc.so*|libm.so*|libstdc++*|libgcc_s*|libdl.so*|libpthread*|librt.so*|ld-linux*|libresolv*|libR.so) continue ;; esac
  cp -L "$path" "$stage/opt/rlibs/$name"
done
tar -C "$stage" -cJf "$out" .
rm -rf "$stage"
ls -la "$out"
