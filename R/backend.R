# Which engine runs a fit: backend resolution, the CUDA probe and threads.

# Session state: the CUDA probe result (probed lazily, never at load) and
# whether the CPU-fallback message was shown already.
.gk_state <- new.env(parent = emptyenv())

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
  dev <- p$devices[device + 1L, ]
  if (!isTRUE(dev$usable))
    return(sprintf("CUDA device %d (%s) cannot be used: %s", device, dev$name, dev$why))
  NULL
}

resolve_backend <- function(backend, device) {
  if (!is.character(backend) || length(backend) != 1L || is.na(backend) ||
      !backend %in% c("auto", "cuda", "cpu"))
    stop("'backend' must be one of \"auto\", \"cuda\" or \"cpu\"", call. = FALSE)
  if (backend == "cpu") return("cpu")
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

# The CUDA engine's kernel choices for benchmarks and tests (internal:
# options(gpukmeans.cuda_tuning = c(assign_kernel, init_filter, sample_room,
# bounds)) as src/engine.h's CudaTuning; unset for the defaults, which
# choose by shape).  Every choice gives the same fit in double precision.
cuda_tuning <- function() {
  t <- getOption("gpukmeans.cuda_tuning")
  if (is.null(t)) return(integer(0))
  if (!is.numeric(t) || length(t) != 4L || anyNA(t))
    stop("'gpukmeans.cuda_tuning' must be 4 whole numbers (or NULL)", call. = FALSE)
  as.integer(t)
}

check_device <- function(device) {
  check_count(device, "device", lower = 0L,
              message = "'device' must be a single non-negative whole number (a CUDA device ordinal)")
}

# Threads for the CPU engine: options(gpukmeans.threads =) if set, else all
# cores (0 lets the engine ask OpenMP), but at most 2 under R CMD check.
cpu_threads <- function() {
  t <- getOption("gpukmeans.threads")
  if (!is.null(t)) return(check_count(t, "gpukmeans.threads"))
  limit <- Sys.getenv("_R_CHECK_LIMIT_CORES_", "")
  if (nzchar(limit) && !identical(toupper(limit), "FALSE")) return(2L)
  0L
}
