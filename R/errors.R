# Errors of the engines (src/r_boundary.cpp calls engine_error() for every
# failure of engine code, in one place): a condition of class
# c("gpukmeans_<kind>", "gpukmeans_error", "error", "condition"), where kind
# is one of "not_built", "no_device", "out_of_memory", "device_error",
# "invalid", "data_error" or "unsupported" (a capability the engine does not
# have yet, e.g. observation weights on the CUDA engine), so that callers can
# catch e.g. running out of device memory with
# tryCatch(..., gpukmeans_out_of_memory = ...).
engine_error <- function(kind, message) {
  stop(structure(class = c(paste0("gpukmeans_", kind), "gpukmeans_error", "error", "condition"),
                 list(message = message, call = NULL)))
}
