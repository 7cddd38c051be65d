// threads_glue.cpp: what OpenMP allows this process, for the R side's choice
// of the CPU engine's thread count (R/backend.R, cpu_threads()), and a test
// of the CPU engine under a smaller OpenMP team than it asked for.
#include <Rcpp.h>

#include <exception>
#include <memory>

#include "engine_glue.h"
#include "r_boundary.h"

#ifdef _OPENMP
#include <omp.h>
#endif

// c(thread_limit = omp_get_thread_limit(), max_threads = omp_get_max_threads(),
//   num_procs = omp_get_num_procs()); all 1 without OpenMP.
// [[Rcpp::export(rng = false)]]
Rcpp::IntegerVector gk_openmp_limits_cpp() {
#ifdef _OPENMP
  const int limit = omp_get_thread_limit();
  const int max_threads = omp_get_max_threads();
  const int procs = omp_get_num_procs();
#else
  const int limit = 1, max_threads = 1, procs = 1;
#endif
  return Rcpp::IntegerVector::create(Rcpp::_["thread_limit"] = limit,
                                     Rcpp::_["max_threads"] = max_threads,
                                     Rcpp::_["num_procs"] = procs);
}

// Internal, for the tests: Lloyd's algorithm from `centers` on the CPU
// engine with `threads` slots, run inside an active OpenMP region whose
// nesting is off, so that each of the engine's parallel regions gets a team
// of one thread (as OMP_DYNAMIC can give on a busy machine).  The result must
// be that of a normal fit with `threads` threads.
// [[Rcpp::export(rng = false)]]
Rcpp::List gk_fit_small_team_cpp(Rcpp::NumericMatrix x, Rcpp::NumericMatrix centers, int iter_max, int threads) {
  return gk::guarded([&] {
    std::unique_ptr<gk::Engine> e = gk::make_engine(gk::host_data(x), "cpu", false, threads, 0);
    gk::LloydFit fit;
#ifdef _OPENMP
    const int levels = omp_get_max_active_levels();
    omp_set_max_active_levels(1);
    std::exception_ptr error;
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) {  // the calling thread
        try {
          fit = e->lloyd(centers.begin(), centers.nrow(), iter_max, nullptr, gk::Labels());
        } catch (...) {
          error = std::current_exception();
        }
      }
    }
    omp_set_max_active_levels(levels);
    if (error) std::rethrow_exception(error);
#else
    fit = e->lloyd(centers.begin(), centers.nrow(), iter_max, nullptr, gk::Labels());
#endif
    return Rcpp::List::create(Rcpp::_["cluster"] = gk::int_vector(fit.cluster), Rcpp::_["size"] = Rcpp::wrap(fit.size),
                              Rcpp::_["iter"] = fit.iter,
                              Rcpp::_["centers"] = Rcpp::NumericVector(fit.centers.begin(), fit.centers.end()));
  });
}
