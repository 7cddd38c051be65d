skip_if_no_gpu <- function() {
  testthat::skip_if_not(isTRUE(nrow(gpukmeans::gpukmeans_info()$devices) > 0),
                        "no CUDA device")
}

has_gpu <- function() {
  isTRUE(tryCatch(nrow(gpukmeans::gpukmeans_info()$devices) > 0,
                  error = function(e) FALSE))
}

# The value of expr and the stages it marked (src/stage_log.h) whose names
# match `pattern`, in order: which way an engine ran something.
with_stages <- function(expr, pattern) {
  log <- withr::local_tempfile()
  withr::local_envvar(GPUKMEANS_STAGE_LOG = log)
  value <- force(expr)
  list(value = value, stages = if (file.exists(log)) sub(" .*", "", grep(pattern, readLines(log), value = TRUE)))
}
