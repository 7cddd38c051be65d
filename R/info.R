#' What gpukmeans can use on this machine
#'
#' Reports whether the CUDA engine was built in, the CUDA runtime and driver
#' versions, and every visible device with its name, compute capability,
#' memory and multiprocessors.  On a machine without an NVIDIA driver it says
#' so (and lists no devices) rather than failing.  Nothing is probed when the
#' package is loaded; this function probes afresh each time.
#'
#' @return A list of class `gpukmeans_info` with `cuda_built` (logical),
#'   `runtime_version` and `driver_version` (character, `NA` when unknown),
#'   `message` (why there is no device, if none), `devices` (a data frame with
#'   columns `id`, `name`, `compute_capability`, `memory_total_gb`,
#'   `memory_free_gb`, `multiprocessors`, `usable` (whether this build's
#'   kernels run on the device: compute capability 8.0 or later, and code
#'   built for it) and `why` (the reason when not)), `cpu_threads` (the
#'   most threads the CPU engine uses: see the Backends section of
#'   [gpu_kmeans()]) and `stream` (what a CUDA fit does with data larger
#'   than the device memory it may take, from `options(gpukmeans.stream)`:
#'   `"when x does not fit"`, `"always"` or `"never"`: an error instead;
#'   see the Limits section of [gpu_kmeans()]).  A fit's own `device`
#'   attribute says which GPUs it ran on and whether its data was streamed.
#' @examples
#' gpukmeans_info()
#' @export
gpukmeans_info <- function() {
  p <- cuda_probe(refresh = TRUE)
  ver <- function(v) if (is.null(v) || v <= 0) NA_character_ else
    sprintf("%d.%d", v %/% 1000L, (v %% 1000L) %/% 10L)
  dev <- p$devices
  devices <- data.frame(id = dev$id, name = dev$name,
                        compute_capability = dev$compute_capability,
                        memory_total_gb = dev$memory_total / 2^30,
                        memory_free_gb = dev$memory_free / 2^30,
                        multiprocessors = dev$multiprocessors,
                        usable = dev$usable, why = dev$why,
                        stringsAsFactors = FALSE)
  structure(list(cuda_built = isTRUE(p$built),
                 runtime_version = ver(p$runtime_version),
                 driver_version = ver(p$driver_version),
                 message = p$message, devices = devices,
                 cpu_threads = cpu_threads(),
                 stream = c("when x does not fit", "never", "always")[cuda_options()$stream + 1L]),
            class = "gpukmeans_info")
}

#' @export
print.gpukmeans_info <- function(x, ...) {
  cat("gpukmeans ", format(utils::packageVersion("gpukmeans")), "\n", sep = "")
  cat("  CUDA engine built:  ", if (x$cuda_built) "yes" else "no", "\n", sep = "")
  if (x$cuda_built) {
    cat("  CUDA runtime:       ", x$runtime_version %||% NA, "\n", sep = "")
    cat("  NVIDIA driver:      ", if (is.na(x$driver_version)) "none found" else x$driver_version, "\n", sep = "")
  }
  cat("  CPU engine threads: ", x$cpu_threads, "\n", sep = "")
  if (x$cuda_built)
    cat("  x streamed from host memory: ", x$stream %||% NA, " (options(gpukmeans.stream))\n", sep = "")
  if (nrow(x$devices)) {
    d <- x$devices
    tab <- data.frame(id = d$id, name = d$name, `compute capability` = d$compute_capability,
                      `memory (GiB)` = sprintf("%.1f", d$memory_total_gb),
                      `free (GiB)` = sprintf("%.1f", d$memory_free_gb),
                      SMs = d$multiprocessors, usable = ifelse(d$usable, "yes", "no"),
                      check.names = FALSE)
    cat("  Devices:\n")
    print(tab, row.names = FALSE)
    for (i in which(!d$usable)) cat("  device ", d$id[i], ": ", d$why[i], "\n", sep = "")
  } else {
    cat("  Devices:            none", if (nzchar(x$message)) paste0(" (", x$message, ")"), "\n", sep = "")
  }
  invisible(x)
}
