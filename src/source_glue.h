// source_glue.h: a matrix source that R reads block by block (a large
// Matrix, DelayedArray or big.matrix x: R/matrix_sources.R, source_reader())
// as the engines' RowReader (engine.h), for the glue's entry points (a fit,
// src/fit_glue.cpp; its distinct rows, src/data_glue.cpp).
#ifndef GPUKMEANS_SOURCE_GLUE_H
#define GPUKMEANS_SOURCE_GLUE_H

#include <Rcpp.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "csc_reader.h"
#include "dense_reader.h"
#include "engine.h"

namespace gk {

// A matrix source that R reads block by block (R/matrix_sources.R,
// source_reader()) as the engines' RowReader:
//   structure(list(n, d, block_rows, block = function(first, rows),
//                  rows = function(idx)), class = "gk_reader"),
// each function returning a double matrix of those rows (1-based first and
// idx).  (An R error or an interrupt inside them unwinds as Rcpp's
// LongjumpException: the engine releases what it holds on the way.)  A
// dgCMatrix comes as its slots instead, list(..., csc = list(p, i, x)), read
// in place by gk::CscReader (src/csc_reader.h), without R.
class RReader : public gk::RowReader {
 public:
  explicit RReader(Rcpp::List r)
      : d_(Rcpp::as<int>(r["d"])),
        block_rows_(static_cast<std::int64_t>(Rcpp::as<double>(r["block_rows"]))),
        block_(Rcpp::Function(r["block"])),
        rows_(Rcpp::Function(r["rows"])) {}
  std::int64_t block_rows() const override { return block_rows_; }
  void block(std::int64_t first, std::int64_t rows, double* out) override {
    copy_out(block_(static_cast<double>(first + 1), static_cast<double>(rows)), rows, out);
  }
  void rows(const std::int64_t* idx, std::int64_t m, double* out) override {
    Rcpp::NumericVector i(m);
    for (std::int64_t q = 0; q < m; ++q) i[q] = static_cast<double>(idx[q] + 1);
    copy_out(rows_(i), m, out);
  }

 private:
  void copy_out(SEXP got, std::int64_t rows, double* out) const {
    SEXP dim = Rf_getAttrib(got, R_DimSymbol);
    if (TYPEOF(got) != REALSXP || Rf_length(dim) != 2 || INTEGER(dim)[0] != rows || INTEGER(dim)[1] != d_)
      throw gk::EngineError(gk::EngineError::Kind::kInvalid, "a source's block is not the double matrix asked for");
    std::copy(REAL(got), REAL(got) + rows * d_, out);
  }
  int d_;
  std::int64_t block_rows_;
  Rcpp::Function block_, rows_;
};

// The reader of a gk_reader list (above); keeps the R objects it reads.  A
// dgeMatrix comes as its values, list(..., dense = x@x): n x d doubles,
// column-major, which the engines read in place (`values`; the reader reads
// them too, gk::DenseReader).
struct SourceReader {
  std::int64_t n = 0;
  int d = 0;
  Rcpp::List from;
  std::unique_ptr<gk::RowReader> reader;
  const double* values = nullptr;  // a dgeMatrix's values, or nullptr
  SourceReader(Rcpp::List r, int threads)
      : n(static_cast<std::int64_t>(Rcpp::as<double>(r["n"]))), d(Rcpp::as<int>(r["d"])), from(r) {
    const std::int64_t block_rows = static_cast<std::int64_t>(Rcpp::as<double>(r["block_rows"]));
    if (r.containsElementNamed("dense")) {
      SEXP v = r["dense"];
      if (TYPEOF(v) != REALSXP || static_cast<double>(XLENGTH(v)) != static_cast<double>(n) * d)
        throw gk::EngineError(gk::EngineError::Kind::kInvalid, "a dense source's values are not n x d doubles");
      values = REAL_RO(v);
      reader.reset(new gk::DenseReader(values, n, d, block_rows, threads));
      return;
    }
    if (!r.containsElementNamed("csc")) {
      reader.reset(new RReader(r));
      return;
    }
    Rcpp::List csc = r["csc"];
    SEXP p = csc["p"], i = csc["i"], x = csc["x"];
    if (TYPEOF(p) != INTSXP || TYPEOF(i) != INTSXP || TYPEOF(x) != REALSXP || XLENGTH(i) != XLENGTH(x))
      throw gk::EngineError(gk::EngineError::Kind::kInvalid, "malformed column-compressed matrix");
    reader.reset(new gk::CscReader(n, d, INTEGER(p), XLENGTH(p), INTEGER(i), REAL(x), XLENGTH(x), block_rows,
                                   threads));
  }
};

}  // namespace gk

#endif
