// threads_glue.cpp: what OpenMP allows this process, for the R side's choice
// of the CPU engine's thread count (R/backend.R, cpu_threads()).
#include <Rcpp.h>

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
