#' gpukmeans: fast k-means on NVIDIA GPUs, a drop-in for stats::kmeans
#'
#' [gpu_kmeans()] clusters data with Lloyd's algorithm on an NVIDIA GPU
#' through CUDA, or on a multi-threaded CPU engine, and returns a `kmeans`
#' object identical to what [stats::kmeans()] returns for the same start.
#'
#' @section Options:
#' Every option is checked when it is used: a value that makes no sense is
#' an error naming the option.
#' \describe{
#'   \item{`gpukmeans.backend`}{default backend: `"auto"`, `"cuda"` or `"cpu"`.}
#'   \item{`gpukmeans.device`}{default CUDA device ordinal (0).}
#'   \item{`gpukmeans.threads`}{the most threads of the CPU engine, a whole
#'     number >= 1 (clamped to what OpenMP allows); default: the cores R may
#'     use (see the Backends section of [gpu_kmeans()]).}
#'   \item{`gpukmeans.work_per_thread`}{multiply-adds per iteration
#'     (`n * k * d`) per thread of the CPU engine: smaller fits use fewer
#'     threads (default 2^17; 0 for all threads always).}
#'   \item{`gpukmeans.gpu_min_work`}{with `backend = "auto"`, problems with
#'     fewer multiply-adds per iteration run on the CPU engine (default 5e4).}
#'   \item{`gpukmeans.progress`}{`NA` (default: progress for fits longer
#'     than `gpukmeans.progress_after` seconds), `TRUE` or `FALSE`.}
#'   \item{`gpukmeans.progress_after`}{seconds before progress shows; by
#'     default cli's `cli.progress_show_after` (2).}
#'   \item{`gpukmeans.device_memory`}{bytes of device memory a CUDA fit may
#'     take (default `NULL`: all that is free).}
#'   \item{`gpukmeans.stream`}{`NA` (default): `x` that does not fit in the
#'     device memory stays in host memory and is streamed to the device
#'     chunk by chunk at every pass (the same fit); `FALSE`: such data is
#'     an error of class `gpukmeans_out_of_memory`; `TRUE`: always streamed.
#'     On the CPU engine a large `dgCMatrix` is read from its slots at
#'     every pass unless this is `FALSE` (then: a scratch file).}
#'   \item{`gpukmeans.source_memory`}{the most bytes of memory a
#'     \pkg{Matrix}, \pkg{DelayedArray} or \pkg{bigmemory} `x` is read into
#'     (default 2^30); a larger one goes block by block to the devices of a
#'     fit on CUDA devices, a `dgCMatrix` on the CPU engine is read from
#'     its slots at every pass, and elsewhere it goes to a scratch file,
#'     mapped into memory (`Inf`: never).}
#'   \item{`gpukmeans.scratch_dir`}{the directory of those scratch files
#'     (default [tempdir()], or `/var/tmp` where that is a RAM-backed tmpfs);
#'     each is unlinked as soon as it is made.}
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
