#!/bin/sh
# Here (Debian 12 with r-cran-rmpi, openmpi-bin and libopenmpi-dev): packs
# Open MPI (its programs, libraries, plugins and help files, Debian's files at
# their own paths) and the Rmpi package into one tar.xz, to unpack at / on a
# GPU machine that has neither (inst/bench/bench_mpi.sh does), next to the R
# of tools/gpu/r-runtime.sh.  The libraries they link that the R runtime
# does not carry go to /opt/rlibs (on LD_LIBRARY_PATH there).
# usage: sh tools/gpu/mpi-runtime.sh OUT.tar.xz
# (Made for the two-GPU benchmark; not run on a GPU machine yet.)
set -eu
out=$1
stage=$(mktemp -d)
list=$(mktemp)
pkgs="openmpi-bin openmpi-common libopenmpi3 libpmix2 libhwloc15 libhwloc-plugins libevent-2.1-7
      libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libpsm-infinipath1 libpsm2-2 libibverbs1
      librdmacm1 ibverbs-providers"
for p in $pkgs; do
  dpkg -L "$p" 2>/dev/null | grep -v -E '^/usr/share/(doc|man|lintian)' || true
done | while read -r f; do [ -f "$f" ] || [ -L "$f" ] && echo "${f#/}"; done > "$list"
# the alternatives that name mpirun, mpiexec and libmpi.so (Rmpi opens it)
for f in usr/bin/mpirun usr/bin/mpiexec etc/alternatives/mpirun etc/alternatives/mpiexec \
         usr/lib/x86_64-linux-gnu/libmpi.so etc/alternatives/libmpi.so-x86_64-linux-gnu; do
  [ -e "/$f" ] || [ -L "/$f" ] && echo "$f" >> "$list"
done
tar -C / -cf - -T "$list" | tar -C "$stage" -xf -
mkdir -p "$stage/usr/lib/R/site-library" "$stage/opt/rlibs"
tar -C /usr/lib/R/site-library --exclude=Rmpi/html --exclude=Rmpi/doc -chf - Rmpi | tar -C "$stage/usr/lib/R/site-library" -xf -
# libraries all of it links that are not in the list (except the C and C++ runtimes)
find "$stage" -type f \( -name '*.so*' -o -perm -u+x \) | while read -r f; do
  ldd "$f" 2>/dev/null | awk '$3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
  case $name in libc.so*|libm.so*|libstdc++*|libgcc_s*|libdl.so*|libpthread*|librt.so*|ld-linux*|libresolv*|libR.so) continue ;; esac
  [ -e "$stage$path" ] || cp -L "$path" "$stage/opt/rlibs/$name"
done
tar -C "$stage" -cJf "$out" .
rm -rf "$stage" "$list"
ls -la "$out"
