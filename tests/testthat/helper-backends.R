# test_backends("name", function(backend) { ... }) runs the body once per
# engine, as "name [cpu]" and "name [cuda]"; the CUDA one is skipped where
# there is no CUDA device.
test_backends <- function(desc, code) {
  for (backend in c("cpu", "cuda")) {
    testthat::test_that(sprintf("%s [%s]", desc, backend), {
      if (backend == "cuda") skip_if_no_gpu()
      code(backend)
    })
  }
}
