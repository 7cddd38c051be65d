# The small device blocks freed handles leave for the next one
# (src/cuda/kept_memory.cu): a handle that takes a block an earlier, larger
# one wrote must fit exactly as on fresh memory.  Each sequence of fits runs
# with the blocks kept and with none kept (the internal
# GPUKMEANS_KEEP_DEVICE=0), and the fits must agree in every component; the
# bytes gk_cuda_release_kept() frees say that blocks were kept (else the
# comparison would prove nothing) and that none are with the switch off.

release_kept <- function() gpukmeans:::gk_cuda_release_kept_cpp()

kept_sequence <- function(keep) {
  withr::local_envvar(GPUKMEANS_KEEP_DEVICE = if (keep) "" else "0")
  shapes <- list(c(n = 30000, d = 3, k = 9), c(n = 20000, d = 3, k = 9), c(n = 21000, d = 2, k = 12),
                 c(n = 500, d = 5, k = 4), c(n = 30000, d = 3, k = 30), c(n = 16000, d = 4, k = 7))
  fits <- list()
  for (i in seq_along(shapes)) {
    s <- shapes[[i]]
    set.seed(100 + i)
    x <- matrix(rnorm(s[["n"]] * s[["d"]], sd = 10), ncol = s[["d"]]) + rep(seq_len(s[["d"]]) * 3, each = s[["n"]])
    for (prec in c("double", "single")) {
      set.seed(7)
      f <- suppressWarnings(gpu_kmeans(x, s[["k"]], iter.max = 15L, nstart = 2L, precision = prec, backend = "cuda"))
      attr(f, "timing") <- NULL
      fits[[sprintf("%d %s", i, prec)]] <- f
    }
  }
  fits
}

test_that("fits on kept device blocks are the fits on fresh memory, component by component", {
  skip_if_no_gpu()
  release_kept()
  kept <- kept_sequence(TRUE)
  freed <- release_kept()
  expect_gt(freed, 0)
  fresh <- kept_sequence(FALSE)
  expect_identical(release_kept(), 0)
  expect_identical(names(kept), names(fresh))
  for (nm in names(kept)) expect_identical(kept[[nm]], fresh[[nm]], info = nm)
})

test_that("a kept block serves the next handle of a similar size, and release frees it once", {
  skip_if_no_gpu()
  release_kept()
  set.seed(3)
  x <- matrix(rnorm(4e4), ncol = 2)
  a <- gpu_kmeans(x, x[1:5, ], iter.max = 50L, backend = "cuda")
  b <- gpu_kmeans(x, x[1:5, ], iter.max = 50L, backend = "cuda")  # (on a's blocks)
  expect_identical(a$cluster, b$cluster)
  expect_identical(a$centers, b$centers)
  expect_identical(a$withinss, b$withinss)
  freed <- release_kept()
  # x (2e4 x 2 doubles) and its labels at least
  expect_gte(freed, 2e4 * 2 * 8 + 2e4 * 4)
  expect_identical(release_kept(), 0)
})

test_that("without CUDA, release_kept frees nothing", {
  skip_if(has_gpu())
  expect_identical(release_kept(), 0)
})
