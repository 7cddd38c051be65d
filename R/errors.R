# Errors of the engines (src/r_boundary.cpp calls engine_error() for every
# failure of engine code, in one place): a condition of class
# c("gpukmeans_<kind>", "gpukmeans_error", "error", "condition"), where kind
# is one of "not_built", "no_device", "out_of_memory", "device_error",
# "invalid", "data_error" or "unsupported" (a capability the engine does not
# have yet, e.g. observation weights on the CUDA engine) or "nonfinite" (x
# holds NA, NaN or an infinite value, found by an engine that R left the
# check to; the condition's `index` is the first such value's 1-based place
# in x: R/gpu_kmeans.R turns it into R's own message), so that callers can
# catch e.g. running out of device memory with
# tryCatch(..., gpukmeans_out_of_memory = ...).
engine_error <- function(kind, message, index = NULL) {
  stop(structure(class = c(paste0("gpukmeans_", kind), "gpukmeans_error", "error", "condition"),
                 list(message = message, call = NULL, index = index)))
}
