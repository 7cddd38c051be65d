// dense_fill.cpp: a matrix source's values written into the dense double
// matrix that R/matrix_sources.R reads it into (a fresh matrix in memory,
// or a scratch mapping, src/mapped_matrix.cpp), in place: R's `[<-` would
// copy the matrix first wherever it is referenced twice.
#include <Rcpp.h>

#include <cstdint>

#include "row_block.h"

namespace {

struct Dims {
  std::int64_t n, d;
};

// The dimensions of `out`, a double matrix (else an error).
Dims dims_of(SEXP out) {
  if (TYPEOF(out) != REALSXP) Rcpp::stop("not a double matrix");
  SEXP dim = Rf_getAttrib(out, R_DimSymbol);
  if (Rf_length(dim) != 2) Rcpp::stop("not a matrix");
  return Dims{INTEGER(dim)[0], INTEGER(dim)[1]};
}

}  // namespace

// Writes the rows of `block` into out from row `first` (1-based) on.
// [[Rcpp::export(rng = false)]]
void gk_write_rows(SEXP out, double first, Rcpp::NumericMatrix block) {
  const Dims m = dims_of(out);
  const std::int64_t rows = block.nrow();
  if (block.ncol() != m.d || !(first >= 1) || first - 1 + rows > m.n) Rcpp::stop("rows out of the matrix");
  gk::put_row_block(block.begin(), rows, static_cast<int>(m.d), REAL(out), m.n, static_cast<std::int64_t>(first - 1));
}

// The values of a sparse column-compressed matrix (package Matrix's
// dgCMatrix: column pointers p, row indices i, values x) into out, a matrix
// of zeros: one pass over the nonzero values, where row blocks of a
// dgCMatrix cost a search of every column per block.  Checks the structure
// first, so that a malformed object is an error, never a write out of
// bounds.
// [[Rcpp::export(rng = false)]]
void gk_fill_csc(SEXP out, Rcpp::IntegerVector p, Rcpp::IntegerVector i, Rcpp::NumericVector x) {
  const Dims m = dims_of(out);
  const std::int64_t n = m.n, d = m.d;
  if (p.size() != d + 1 || p[0] != 0 || p[d] != i.size() || i.size() != x.size())
    Rcpp::stop("malformed column-compressed matrix");
  for (std::int64_t j = 0; j < d; ++j)
    if (p[j + 1] < p[j]) Rcpp::stop("malformed column-compressed matrix");
  for (R_xlen_t q = 0; q < i.size(); ++q)
    if (i[q] < 0 || i[q] >= n) Rcpp::stop("malformed column-compressed matrix");
  double* v = REAL(out);
  for (std::int64_t j = 0; j < d; ++j)
    for (int q = p[j]; q < p[j + 1]; ++q) v[j * n + i[q]] = x[q];
}
