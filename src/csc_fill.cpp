// csc_fill.cpp: the values of a sparse column-compressed matrix (package
// Matrix's dgCMatrix: column pointers p, row indices i, values x) written
// into a dense double matrix of zeros, in place (R/matrix_sources.R).  Row
// blocks of a dgCMatrix cost a search of every column per block; this is
// one pass over the nonzero values.
#include <Rcpp.h>

#include <cstdint>

// out: an n x d double matrix of zeros, made by the caller and not shared
// (a fresh matrix, or a scratch mapping); p: d + 1 column offsets, i: row
// indices (0-based), x: the values.  Checks the structure first, so that a
// malformed object is an error, never a write out of bounds.
// [[Rcpp::export(rng = false)]]
void gk_fill_csc(SEXP out, Rcpp::IntegerVector p, Rcpp::IntegerVector i, Rcpp::NumericVector x) {
  if (TYPEOF(out) != REALSXP) Rcpp::stop("not a double matrix");
  SEXP dim = Rf_getAttrib(out, R_DimSymbol);
  if (Rf_length(dim) != 2) Rcpp::stop("not a matrix");
  const std::int64_t n = INTEGER(dim)[0], d = INTEGER(dim)[1];
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
