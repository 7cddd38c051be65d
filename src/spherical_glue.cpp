// spherical_glue.cpp: the R entry points of spherical k-means
// (gpu_kmeans(distance = "cosine"), R/cosine.R): the rows scaled to unit
// length, and (internal, for the tests) the device-agnostic fit over parts
// of the rows.
#include <Rcpp.h>

#include <memory>
#include <string>
#include <vector>

#include "engine.h"
#include "engine_glue.h"
#include "fit_driver.h"
#include "r_boundary.h"
#include "spherical.h"

// The rows of x scaled to unit length (gk::normalize_rows), with x's
// dimnames, and the first (1-based) row of zeros, 0 when none:
// list(x = , zero = ).
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_normalize_rows_cpp(Rcpp::NumericMatrix x, int threads) {
  return gk::guarded([&] {
    Rcpp::NumericMatrix out(x.nrow(), x.ncol());
    const std::int64_t zero = gk::normalize_rows(x.begin(), x.nrow(), x.ncol(), out.begin(), threads);
    SEXP dn = Rf_getAttrib(x, R_DimNamesSymbol);
    if (!Rf_isNull(dn)) Rf_setAttrib(out, R_DimNamesSymbol, dn);
    return Rcpp::List::create(Rcpp::_["x"] = out, Rcpp::_["zero"] = static_cast<double>(zero + 1));
  });
}

// Spherical k-means from unit `centers` on the unit rows x split into
// `parts` contiguous blocks, each held by an engine of its own, over their
// step() (gk::lloyd_parts with gk::sphere_map): the path of every engine
// without one of its own (the CUDA engine's).  Internal: the tests check it
// against the CPU engine's own path and that the split changes nothing.
// (Single precision: every part stores its rows less the shift of all the
// rows, as in gk_fit_parts_cpp.)
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_spherical_parts_cpp(Rcpp::NumericMatrix x, Rcpp::NumericMatrix centers, int iter_max, int parts,
                                  bool single, std::string engine, int threads, int device) {
  return gk::guarded([&] {
    const int d = x.ncol(), k = centers.nrow();
    const gk::PartEngines pe = gk::part_engines(x, parts, engine, single, threads, device);
    gk::LloydFit fit = gk::lloyd_parts(pe.engines, centers.begin(), k, iter_max, nullptr, gk::sphere_map(d));
    for (double& w : fit.withinss) w *= 0.5;
    Rcpp::NumericMatrix cen(k, d);
    std::copy(fit.centers.begin(), fit.centers.end(), cen.begin());
    return Rcpp::List::create(Rcpp::_["cluster"] = gk::int_vector(fit.cluster), Rcpp::_["centers"] = cen,
                              Rcpp::_["withinss"] = Rcpp::wrap(fit.withinss), Rcpp::_["size"] = Rcpp::wrap(fit.size),
                              Rcpp::_["iter"] = fit.iter);
  });
}
