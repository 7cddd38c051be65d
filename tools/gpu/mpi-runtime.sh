#!/bin/sh
# Here (Debian 12 with r-cran-rmpi, openmpi-bin and libopenmpi-dev): packs
# Open MPI (its programs, libraries, plugins and help files, Debian's files at
# their own paths) and the Rmpi package into one tar.xz, to unpack at / on a
# GPU machine that has neither (inst/bench/bench_mpi.sh does), next to the R
# of tools/gpu/r-runtime.sh.  The libraries they link that the R runtime
# does not carry go to /opt/rlibs (on LD_LIBRARY_PATH there).
# usage: sh tools/gpu/mpi-runtime.sh OUT.tar.xz [R-RUNTIME.tar.xz]
# With the R runtime named, the libraries it carries are left out (the two
# are unpacked together: both must fit in one carry).
set -eu
out=$1
have=$(mktemp)
[ -n "${2:-}" ] && tar -tJf "$2" | sed -n 's|^\./opt/rlibs/||p; s|^opt/rlibs/||p' | grep -v '^$' > "$have" || true
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
  grep -qx "$name" "$have" && continue
  [ -e "$stage$path" ] || [ -e "$stage$(readlink -f "$path")" ] || cp -L "$path" "$stage/opt/rlibs/$name"
done
# the libraries of the list under their sonames (ldconfig is not run there)
for f in $(find "$stage/usr/lib/x86_64-linux-gnu" -maxdepth 1 -name 'lib*.so.*.*' -type f); do
  so=$(objdump -p "$f" 2>/dev/null | awk '$1 == "SONAME" {print $2}')
  [ -n "$so" ] && [ ! -e "$(dirname "$f")/$so" ] && ln -s "$(basename "$f")" "$(dirname "$f")/$so"
done
tar -C "$stage" -cJf "$out" .
rm -rf "$stage" "$list" "$have"
ls -la "$out"
