#!/bin/sh
# On the GPU machine, from the repository root: unpack the carried R once
# (tools/gpu/pack.sh made it), then run Rscript with .gpu/lib first on the
# library path and the arguments given.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x /usr/lib/R/bin/Rscript ] || tar -C / -xJf "$root/.gpu/r-runtime.tar.xz"
export LD_LIBRARY_PATH=/opt/rlibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export R_LIBS="$root/.gpu/lib"
export NOT_CRAN=true
exec /usr/lib/R/bin/Rscript "$@"
