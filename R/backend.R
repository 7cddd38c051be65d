# Which engine runs a fit: backend resolution, the CUDA probe and threads.

# Session state: the CUDA probe result (probed lazily, never at load) and
# whether the CPU-fallback message was shown already.
.gk_state <- new.env(parent = emptyenv())

# At the end of the session, the pinned buffers that large CUDA fits keep
# for the next fit are freed (src/cuda/staged_copy.cu), while the CUDA
# runtime is still there.
.onLoad <- function(libname, pkgname) {
  reg.finalizer(.gk_state, function(e) try(gk_cuda_release_kept_cpp(), silent = TRUE), onexit = TRUE)
}

# Probe CUDA once per process (or again with refresh = TRUE): a forked
# child (mclapply) probes again, and is told that it may not use CUDA when its
# parent did (src/process_guard.h).
cuda_probe <- function(refresh = FALSE) {
  if (refresh || is.null(.gk_state$probe) || !identical(.gk_state$probe_pid, Sys.getpid())) {
    .gk_state$probe <- gk_cuda_info_cpp()
    .gk_state$probe_pid <- Sys.getpid()
  }
  .gk_state$probe
}

# NULL when device `device` can run a fit, else the reason as a string.
cuda_unavailable_reason <- function(device = 0L) {
  p <- cuda_probe()
  if (!isTRUE(p$built))
    return("gpukmeans was built without CUDA (no nvcc when it was installed; reinstall with the CUDA toolkit, see ?gpukmeans)")
  if (p$device_count < 1L)
    return(sprintf("no usable CUDA device (%s)", p$message))
  if (device >= p$device_count)
    return(sprintf("device %d requested but only %d CUDA device%s found",
                   device, p$device_count, if (p$device_count == 1L) " is" else "s are"))
  # (the columns indexed, not the data frame's row: 68 -> a few us a call)
  i <- device + 1L
  if (!isTRUE(p$devices$usable[i]))
    return(sprintf("CUDA device %d (%s) cannot be used: %s", device, p$devices$name[i], p$devices$why[i]))
  NULL
}

# The engine that runs a fit of `work` multiply-adds per iteration
# (n * k * d).  backend = "auto" takes the CPU engine, without probing CUDA,
# when the work is below gpu_min_work(): there the GPU's fixed costs (upload,
# launches, synchronisation) exceed what it saves.
resolve_backend <- function(backend, device, work = Inf) {
  check_backend(backend)
  if (backend == "cpu") return("cpu")
  if (backend == "auto" && work < gpu_min_work()) return("cpu")
  reason <- cuda_unavailable_reason(device)
  if (is.null(reason)) return("cuda")
  if (backend == "cuda")
    stop(sprintf("backend = \"cuda\" is not available: %s", reason), call. = FALSE)
  if (!isTRUE(.gk_state$fallback_told)) {
    .gk_state$fallback_told <- TRUE
    msg <- sprintf("gpukmeans: using the CPU engine: %s.\n(This message is shown once per session; set options(gpukmeans.backend = \"cpu\") to silence it.)",
                   reason)
    cond <- structure(class = c("gpukmeans_fallback", "message", "condition"),
                      list(message = paste0(msg, "\n"), call = NULL))
    message(cond)
  }
  "cpu"
}

# The CUDA engine's options (src/fit_glue.cpp, make_engine()):
# - device_memory: options(gpukmeans.device_memory = bytes), the device
#   memory a fit may take (NULL: all that is free);
# - stream: options(gpukmeans.stream =) NA (default): x that does not fit
#   in that memory stays in host memory and is streamed to the device in
#   chunks at every pass over the rows; FALSE: it is an error of class
#   gpukmeans_out_of_memory naming both sizes instead; TRUE: always
#   streamed (benchmarks, tests); stream_rows: the rows of a chunk
#   (internal, tests: options(gpukmeans.stream_rows =); 0 or unset: chunks
#   of about 256 MiB); stream_copy: how streamed x is copied (internal,
#   tests and benchmarks: options(gpukmeans.stream_copy =) "auto", the
#   default: a pinned float image in single precision where host memory
#   allows, else x page-locked in place, else staged; "staged": through
#   pinned buffers filled by host threads; "registered": x page-locked);
# - together: several devices run k-means++ and the k-means|| rounds
#   together, each over its rows (internal, tests of the other path:
#   options(gpukmeans.init_together = FALSE) makes one engine over all the
#   rows do them, as where the devices cannot reach each other's memory);
# - tuning: its kernel choices for benchmarks and tests (internal:
#   options(gpukmeans.cuda_tuning = c(assign_kernel, init_filter,
#   sample_room, bounds[, staging])) as src/engine.h's CudaTuning; unset
#   for the defaults, which choose by shape).  Every choice gives the same
#   fit in double precision.
cuda_options <- function(tuning = getOption("gpukmeans.cuda_tuning")) {
  if (!is.null(tuning) && (!is.numeric(tuning) || !length(tuning) %in% 4:5 || anyNA(tuning)))
    stop("'gpukmeans.cuda_tuning' must be 4 or 5 whole numbers (or NULL)", call. = FALSE)
  mem <- getOption("gpukmeans.device_memory")
  if (!is.null(mem) && (!is.numeric(mem) || length(mem) != 1L || is.na(mem) || mem <= 0))
    stop("options(gpukmeans.device_memory =) must be a number of bytes > 0 (or NULL for all free memory), not ",
         describe_value(mem), call. = FALSE)
  stream <- getOption("gpukmeans.stream", NA)
  if (!is.logical(stream) || length(stream) != 1L)
    stop("options(gpukmeans.stream =) must be NA (stream x from host memory when it does not fit on the device), ",
         "TRUE (always) or FALSE (never), not ", describe_value(stream), call. = FALSE)
  rows <- getOption("gpukmeans.stream_rows", 0)
  if (!is.numeric(rows) || length(rows) != 1L || is.na(rows) || rows < 0 || rows != floor(rows))
    stop("options(gpukmeans.stream_rows =) must be a whole number of rows >= 0, not ", describe_value(rows),
         call. = FALSE)
  copy <- getOption("gpukmeans.stream_copy", "auto")
  modes <- c("auto", "staged", "registered")
  if (!is.character(copy) || length(copy) != 1L || !copy %in% modes)
    stop("options(gpukmeans.stream_copy =) must be \"auto\", \"staged\" or \"registered\", not ",
         describe_value(copy), call. = FALSE)
  list(tuning = as.integer(tuning %||% integer(0)), device_memory = as.numeric(mem %||% Inf),
       stream = if (is.na(stream)) 0L else if (stream) 2L else 1L, stream_rows = as.numeric(rows),
       stream_copy = match(copy, modes) - 1L, together = !isFALSE(getOption("gpukmeans.init_together")))
}

check_backend <- function(backend) {
  if (!is.character(backend) || length(backend) != 1L || is.na(backend) ||
      !backend %in% c("auto", "cuda", "cpu"))
    stop("'backend' must be one of \"auto\", \"cuda\" or \"cpu\", not ", describe_value(backend),
         call. = FALSE)
  invisible(backend)
}

# With backend = "auto", problems with fewer multiply-adds per iteration
# (n * k * d) than this run on the CPU engine:
# options(gpukmeans.gpu_min_work =), default 5e4.  Where it comes from: on
# an H100 (2026-11-23) a start costs the GPU about 0.1 ms of fixed costs plus
# ~7-10 us an iteration (iris, nstart = 100: 15 ms; problem A, 21 600 x 2,
# k = 12: 0.011 ms an iteration), the CPU engine about 0.5 ns a multiply-add
# on one thread; for fits of 5 to 20 iterations they break even between 3e4
# and 7e4 multiply-adds an iteration.
gpu_min_work <- function() {
  w <- getOption("gpukmeans.gpu_min_work", 5e4)
  if (!is.numeric(w) || length(w) != 1L || is.na(w) || w < 0)
    stop("options(gpukmeans.gpu_min_work =) must be a single number >= 0, not ",
         describe_value(w), call. = FALSE)
  w
}

check_device <- function(device) {
  check_count(device, "device", lower = 0L,
              message = "'device' must be a single non-negative whole number (a CUDA device ordinal)")
}

# gpu_kmeans()'s device: one ordinal, several (the rows split across them,
# src/multi_engine.h; repeats allowed: several engines on one GPU), or "all"
# (every usable device the CUDA probe sees; device 0 when there is none, so
# that backend resolution says why).  Returns the integer ordinals.
check_devices <- function(device) {
  if (is.character(device) && length(device) == 1L && identical(device, "all")) {
    p <- cuda_probe()
    ids <- if (isTRUE(p$built) && p$device_count > 0L) p$devices$id[p$devices$usable %in% TRUE]
    return(if (length(ids)) as.integer(ids) else 0L)
  }
  msg <- "'device' must be non-negative whole numbers (CUDA device ordinals, as gpukmeans_info() lists them) or \"all\""
  if (!is.numeric(device) || is.factor(device) || length(device) == 0L)
    stop(msg, ", not ", describe_value(device), call. = FALSE)
  bad <- is.na(device) | !is.finite(device) | device < 0 | device != round(device) | device > .Machine$integer.max
  if (any(bad))
    stop(msg, ", not ", if (length(device) == 1L) describe_value(device) else
      sprintf("%s (element %d is %s)", describe_value(device), which(bad)[1L], describe_value(device[which(bad)[1L]])),
      call. = FALSE)
  as.integer(device)
}

# The device of a function that runs on one GPU (the sweep over k, the
# silhouette): one ordinal when given; from options(gpukmeans.device =),
# which gpu_kmeans() and predict() read as several devices or "all", the
# first of them.
one_device <- function(device, from_option) {
  if (!from_option) return(check_device(device))
  check_devices(device)[1L]
}

# The engine of a fit on `devices` (check_devices()).  One device:
# resolve_backend().  Several: the CUDA engine on each (an explicit request:
# no small-work shortcut); backend = "cpu" is an error; backend = "auto"
# falls back to the CPU engine as for one device only when there is no usable
# GPU at all (a listed device that does not exist next to others that do is
# an error, as with backend = "cuda").
resolve_backend_devices <- function(backend, devices, work = Inf) {
  check_backend(backend)
  if (length(devices) == 1L) return(resolve_backend(backend, devices, work))
  if (backend == "cpu")
    stop(sprintf("device = %s asks for several GPUs, but backend = \"cpu\" runs on the CPU: use backend = \"cuda\" or \"auto\", or a single device",
                 format_devices(devices)), call. = FALSE)
  reasons <- lapply(unique(devices), cuda_unavailable_reason)
  bad <- !vapply(reasons, is.null, NA)
  if (!any(bad)) return("cuda")
  p <- cuda_probe()
  none <- !isTRUE(p$built) || p$device_count < 1L
  if (backend == "auto" && none) return(resolve_backend(backend, devices[1L], work))
  stop(sprintf("device = %s: %s", format_devices(devices), reasons[[which(bad)[1L]]]), call. = FALSE)
}

format_devices <- function(devices) {
  if (length(devices) == 1L) as.character(devices) else sprintf("c(%s)", paste(devices, collapse = ", "))
}

# The devices handed to the engine: with the CPU engine, one entry, or, for
# the tests of the composite engine (internal:
# options(gpukmeans.cpu_parts = P)), P entries, one CPU engine per block of
# rows (src/engine_glue.h, make_fit_engine()).
engine_devices <- function(engine, devices) {
  if (engine == "cuda") return(devices)
  parts <- getOption("gpukmeans.cpu_parts")
  if (is.null(parts)) return(0L)
  if (!is.numeric(parts) || length(parts) != 1L || is.na(parts) || parts < 1 || parts != round(parts))
    stop("options(gpukmeans.cpu_parts =) must be a whole number >= 1 (or NULL)", call. = FALSE)
  rep(0L, parts)
}

# Threads for the CPU engine (decided here, passed to C++ as a count >= 1).
#
# The most threads a fit may use is options(gpukmeans.threads =) when set
# (checked: a whole number >= 1), else the cores this R process may use:
# parallelly::availableCores() (mc.cores, future workers, cgroups, Slurm,
# R CMD check's limit of 2, ...) or, without parallelly, detectCores() and
# getOption("mc.cores"), and never more than OpenMP's max threads
# (OMP_NUM_THREADS).  Both are then clamped to OpenMP's thread limit
# (OMP_THREAD_LIMIT) and the processors OpenMP sees.
#
# A fit then takes one thread per `gpukmeans.work_per_thread` (default
# 2^17 = 131072) multiply-adds of one iteration (n * k * d), at least one:
# below that, starting and synchronising threads costs more than it saves,
# and much more on a machine whose cores are busy.
cpu_threads <- function(work = Inf) {
  cap <- max_threads_allowed()
  grain <- work_per_thread()
  if (grain > 0 && is.finite(work)) cap <- min(cap, max(1, floor(work / grain)))
  as.integer(cap)
}

# The threads options(gpukmeans.threads) or the machine allows, before the
# work of a given fit is considered.
max_threads_allowed <- function() {
  lim <- gk_openmp_limits_cpp()
  hard <- max(1L, min(lim[["thread_limit"]], lim[["num_procs"]]))
  t <- getOption("gpukmeans.threads")
  if (!is.null(t)) {
    if (!is.numeric(t) || length(t) != 1L || is.na(t) || t < 1 || t != round(t))
      stop(sprintf("options(gpukmeans.threads =) must be a whole number of threads >= 1 (or NULL for the default), not %s",
                   describe_value(t)), call. = FALSE)
    return(as.integer(min(t, hard)))
  }
  as.integer(max(1L, min(available_cores(), lim[["max_threads"]], hard)))
}

# Cores this process may use.  parallelly::availableCores() reads cgroup
# files (milliseconds), so its answer is kept for the session, asked again
# when options(mc.cores) changes (future and parallel set it in workers).
available_cores <- function() {
  mc <- getOption("mc.cores")
  key <- list(mc, Sys.getenv("_R_CHECK_LIMIT_CORES_", ""))
  if (!is.null(.gk_state$cores) && identical(.gk_state$cores_key, key))
    return(.gk_state$cores)
  n <- if (requireNamespace("parallelly", quietly = TRUE)) {
    suppressWarnings(as.numeric(parallelly::availableCores()))
  } else cores_without_parallelly(mc, key[[2L]])
  if (length(n) != 1L || is.na(n) || n < 1) n <- 1
  n <- as.integer(min(n, .Machine$integer.max))
  .gk_state$cores <- n
  .gk_state$cores_key <- key
  n
}

# What parallelly::availableCores() would say, roughly: detectCores(), at
# most getOption("mc.cores"), at most 2 under R CMD check.
cores_without_parallelly <- function(mc = getOption("mc.cores"),
                                     check_limit = Sys.getenv("_R_CHECK_LIMIT_CORES_", "")) {
  n <- suppressWarnings(as.numeric(parallel::detectCores()))
  if (length(n) != 1L || is.na(n)) n <- 1
  if (is.numeric(mc) && length(mc) == 1L && !is.na(mc) && mc >= 1) n <- min(n, floor(mc))
  if (nzchar(check_limit) && !identical(toupper(check_limit), "FALSE")) n <- min(n, 2)
  n
}

# Multiply-adds of one iteration per thread below which a thread is not
# worth starting: options(gpukmeans.work_per_thread =), 0 for "always all".
work_per_thread <- function() {
  g <- getOption("gpukmeans.work_per_thread", 2^17)
  if (!is.numeric(g) || length(g) != 1L || is.na(g) || g < 0)
    stop(sprintf("options(gpukmeans.work_per_thread =) must be a single number >= 0, not %s",
                 describe_value(g)), call. = FALSE)
  g
}
