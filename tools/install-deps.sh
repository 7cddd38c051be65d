#!/bin/sh
# Install everything gpukmeans needs to build, check and document itself on a
# fresh Debian 12 machine, from Debian's own archive (no CRAN access needed).
# usage: sh tools/install-deps.sh            (as root, or with sudo available)
# (Rmpi, for gpu_kmeans(comm = ) over MPI, needs openmpi-bin and
# libopenmpi-dev besides r-cran-rmpi: it opens libmpi.so, and its tests run
# mpirun.)
set -eu
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
PKGS="r-base-dev r-cran-rcpp r-cran-rcpparmadillo
      r-cran-testthat r-cran-withr r-cran-knitr r-cran-rmarkdown pandoc
      r-cran-broom r-cran-ggplot2 r-cran-cli r-cran-roxygen2
      r-cran-clue r-cran-factoextra r-cran-tibble r-cran-parallelly r-cran-progressr
      r-cran-cluster r-cran-fpc r-bioc-bluster qpdf tidy devscripts
      r-cran-rmpi openmpi-bin libopenmpi-dev
      r-cran-bigmemory r-bioc-hdf5array"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
echo "install-deps: R $(Rscript -e 'cat(format(getRversion()))') and the package dependencies are installed"
