#!/bin/sh
# Here (no GPU, nvcc present), from the repository root: fill the git-ignored
# folder .gpu/ to carry to the GPU machine (CUDA, no R):
#   .gpu/r-runtime.tar.xz  R and the packages the runs need (made once, ~48 MB)
#   .gpu/lib/              gpukmeans installed with its CUDA code (GPUKMEANS_CUDA_ARCHS)
# then, there:  sh tools/gpu/run-r.sh -e 'library(gpukmeans); ...'
# usage: sh tools/gpu/pack.sh [extra R packages for the runtime ...]
set -eu
cd "$(dirname "$0")/../.."
command -v Rscript >/dev/null || { echo "pack.sh: R is not installed here (sh tools/install-deps.sh)" >&2; exit 1; }
mkdir -p .gpu
grep -qx '/.gpu/' .git/info/exclude 2>/dev/null || { mkdir -p .git/info; echo '/.gpu/' >> .git/info/exclude; }
[ -s .gpu/r-runtime.tar.xz ] || sh tools/gpu/r-runtime.sh .gpu/r-runtime.tar.xz "$@"
rm -rf .gpu/lib && mkdir -p .gpu/lib
R CMD INSTALL --no-docs --no-multiarch -l .gpu/lib . > .gpu/install.log 2>&1 || { tail -40 .gpu/install.log; exit 1; }
grep "gpukmeans: building" .gpu/install.log
# R builds with -g: the debug information is four fifths of the library and
# would push what a device call carries past its 64 MiB
strip --strip-debug .gpu/lib/gpukmeans/libs/*.so
du -sh .gpu
