#' gpukmeans: fast k-means on NVIDIA GPUs, a drop-in for stats::kmeans
#'
#' [gpu_kmeans()] clusters data with Lloyd's algorithm on an NVIDIA GPU
#' through CUDA, or on a multi-threaded CPU engine, and returns a `kmeans`
#' object identical to what [stats::kmeans()] returns for the same start.
#'
#' @section Options:
#' \describe{
#'   \item{`gpukmeans.backend`}{default backend: `"auto"`, `"cuda"` or `"cpu"`.}
#'   \item{`gpukmeans.device`}{default CUDA device ordinal (0).}
#'   \item{`gpukmeans.threads`}{threads of the CPU engine (default: all cores).}
#'   \item{`gpukmeans.progress`}{`NA` (default: a bar for fits longer than
#'     `gpukmeans.progress_after` seconds, 2 by default), `TRUE` or `FALSE`.}
#' }
#'
#' @section Installation with CUDA:
#' `configure` looks for `nvcc` in `--with-cuda=DIR`, `CUDA_HOME`, the `PATH`
#' and `/usr/local/cuda`; `--without-cuda` (or the environment variable
#' `GPUKMEANS_CUDA=no`) builds the CPU engine only.  The CUDA runtime is
#' linked statically, so the package loads on machines without a GPU.
#'
#' @keywords internal
#' @useDynLib gpukmeans, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom stats predict fitted
"_PACKAGE"
