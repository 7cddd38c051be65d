// dense_fill.cpp: a matrix source's values written into the dense double
// matrix that R/matrix_sources.R reads it into (a fresh matrix in memory,
// or a scratch mapping, src/mapped_matrix.cpp), in place: R's `[<-` would
// copy the matrix first wherever it is referenced twice.
#include <Rcpp.h>

#include <cstdint>

#include "row_block.h"
#include "threads.h"

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
// dgCMatrix cost a search of every column per block; the columns by up to
// `threads` OpenMP threads (each writes its own columns: the first touch
// of a fresh matrix's pages, or of a scratch mapping's, is most of the
// time).  Checks the structure first, so that a malformed object is an
// error, never a write out of bounds.
// [[Rcpp::export(rng = false)]]
void gk_fill_csc(SEXP out, Rcpp::IntegerVector p, Rcpp::IntegerVector i, Rcpp::NumericVector x, int threads = 1) {
  const Dims m = dims_of(out);
  const std::int64_t n = m.n, d = m.d;
  if (p.size() != d + 1 || p[0] != 0 || p[d] != i.size() || i.size() != x.size())
    Rcpp::stop("malformed column-compressed matrix");
  for (std::int64_t j = 0; j < d; ++j)
    if (p[j + 1] < p[j]) Rcpp::stop("malformed column-compressed matrix");
  const int *pp = p.begin(), *ii = i.begin();
  const double* xx = x.begin();
  const int nt = gk::threads_for(threads, d);
  int bad = 0;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(| : bad)
  for (std::int64_t j = 0; j < d; ++j)
    for (int q = pp[j]; q < pp[j + 1]; ++q) bad |= ii[q] < 0 || ii[q] >= n;
  if (bad) Rcpp::stop("malformed column-compressed matrix");
  double* v = REAL(out);
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1)
  for (std::int64_t j = 0; j < d; ++j)
    for (int q = pp[j]; q < pp[j + 1]; ++q) v[j * n + ii[q]] = xx[q];
}
