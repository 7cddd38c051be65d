# One test body, run once per engine: "desc [cpu]" and "desc [cuda]" (the
# latter skipped without a CUDA device).  The body is a function of the
# backend; gpukmeans.backend is set to it for the body, so every
# gpu_kmeans() call inside runs on that engine.
test_backends <- function(desc, code, backends = c("cpu", "cuda")) {
  for (backend in backends) {
    testthat::test_that(sprintf("%s [%s]", desc, backend), {
      if (backend == "cuda") skip_if_no_gpu()
      withr::local_options(gpukmeans.backend = backend)
      code(backend)
    })
  }
}
