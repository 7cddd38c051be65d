skip_if_no_gpu <- function() {
  testthat::skip_if_not(isTRUE(nrow(gpukmeans::gpukmeans_info()$devices) > 0),
                        "no CUDA device")
}

has_gpu <- function() {
  isTRUE(tryCatch(nrow(gpukmeans::gpukmeans_info()$devices) > 0,
                  error = function(e) FALSE))
}
