#!/bin/sh
# Regenerate NAMESPACE, man/ and src/RcppExports.cpp, R/RcppExports.R.
set -eu
Rscript -e 'Rcpp::compileAttributes(".")'
Rscript -e 'roxygen2::roxygenise(".", roclets = c("rd", "namespace"), load_code = "source")'
