# CUDA engine: the upload of x through pinned staging buffers filled by host
# threads (src/cuda/staged_copy.cu) gives the device the same bits as the
# plain copy: every fit is identical, and so is totss, whose column means
# the staged upload adds up in totss' chunks of 2^16 rows as it copies
# (column_sum.h; a chunk crossing from one block of rows into the next goes
# on there), and the host computes otherwise.  Staging mode (5th tuning
# value): 1 one pageable copy, 2 staging with 64 KiB buffers (many blocks
# of rows, buffers reused), 0 by size.  Each fit is a new handle that
# takes the staging buffers the previous fit's handle left on the device
# (larger or smaller, filled for the other precision): the fits below
# run one after another, so every one but the first reuses them.
local_edition(3)

fit_staged <- function(x, centers, staging, single = FALSE, threads = 0L, weights = NULL) {
  gpukmeans:::gk_fit_cpp(as.matrix(x), list(as.matrix(centers)), 30L, single, "cuda", as.integer(threads), 0L,
                         FALSE, NULL, Inf, list(tuning = c(0L, 0L, 0L, 0L, as.integer(staging))), weights = weights)
}

test_that("cuda: staged uploads give the plain upload's fit, bit for bit, in both precisions", {
  skip_if_no_gpu()
  set.seed(1)
  cases <- list(make_blobs(30011, 7, 12, sd = 2, spread = 10),           # 26 blocks in double, 13 in single
                make_blobs(20000, 16, 6, sd = 3, spread = 5) - 2,         # 16 columns, up to 16 threads
                make_blobs(8192, 1, 3),                                    # exactly one double chunk
                make_blobs(8193, 2, 4),                                    # one element past a chunk
                make_blobs(140001, 3, 5, sd = 2, spread = 10) + 300,       # three of totss' chunks, ending mid-block
                make_blobs(5000, 40, 9) + 1e6,                             # far from the origin (single: the shift)
                matrix(c(1, 2, 3), 3, 1))                                  # tiny
  for (x in cases) {
    k <- min(nrow(x), 5L)
    c0 <- x[seq_len(k), , drop = FALSE]
    for (single in c(FALSE, TRUE)) {
      plain <- fit_staged(x, c0, 1L, single)
      for (threads in c(1L, 3L, 16L, 0L)) {
        staged <- fit_staged(x, c0, 2L, single, threads)
        for (comp in c("cluster", "centers", "withinss", "size", "iter", "totss"))
          expect_identical(staged[[comp]], plain[[comp]],
                           label = sprintf("%d x %d, single %s, %d threads: %s", nrow(x), ncol(x), single, threads, comp))
      }
      # the upload's column sums one chunk at a time, or none (the host's
      # totss then makes the means itself): the same totss, bit for bit
      for (mode in c("1", "0")) {
        other <- withr::with_envvar(c(GPUKMEANS_STAGE_SUMS = mode), fit_staged(x, c0, 2L, single, 3L))
        expect_identical(other[c("cluster", "totss")], plain[c("cluster", "totss")],
                         label = sprintf("%d x %d, single %s, GPUKMEANS_STAGE_SUMS=%s", nrow(x), ncol(x), single, mode))
      }
      # the kept buffers freed (as at the end of the session): the next
      # staged upload makes new ones
      gpukmeans:::gk_cuda_release_kept_cpp()
      again <- fit_staged(x, c0, 2L, single, 3L)
      expect_identical(again[c("cluster", "centers", "totss")], plain[c("cluster", "centers", "totss")],
                       label = sprintf("%d x %d, single %s, after the kept buffers were freed", nrow(x), ncol(x), single))
    }
  }
})

test_that("cuda: several engines upload their blocks of x in place (strided staging) or copied, the one-GPU fit", {
  skip_if_no_gpu()
  # (blocks of 10007 / 3 rows: uneven; staging 2 reads each block in place,
  # columns n apart; staging 1 and streamed x take a contiguous copy first)
  set.seed(2)
  x <- make_blobs(10007, 9, 6, sd = 2, spread = 8) + 50
  c0 <- x[c(1, 2000, 4000, 6000, 8000, 10000), ]
  fit <- function(device, staging, single) {
    gpukmeans:::gk_fit_cpp(x, list(c0), 30L, single, "cuda", 3L, as.integer(device), FALSE, NULL, Inf,
                           list(tuning = c(0L, 0L, 0L, 0L, as.integer(staging))))
  }
  parts <- c("cluster", "centers", "withinss", "size", "iter", "totss")
  for (single in c(FALSE, TRUE)) {
    one <- fit(0L, 1L, single)
    for (staging in c(1L, 2L)) for (dev in list(c(0L, 0L), c(0L, 0L, 0L)))
      expect_identical(fit(dev, staging, single)[parts], one[parts],
                       label = sprintf("single %s, staging %d, %d engines", single, staging, length(dev)))
  }
})

test_that("cuda: gpu_kmeans with staging forced equals the default upload and stats", {
  skip_if_no_gpu()
  x <- simulate_blobs(20000, 6, 8, seed = 3)
  set.seed(4); a <- gpu_kmeans(x, 8, nstart = 3, backend = "cuda")
  withr::local_options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 0L, 2L))
  set.seed(4); b <- gpu_kmeans(x, 8, nstart = 3, backend = "cuda")
  expect_identical(b$cluster, a$cluster)
  expect_identical(b$centers, a$centers)
  expect_identical(b$totss, a$totss)
  set.seed(4); s <- stats::kmeans(x, 8, nstart = 3, algorithm = "Lloyd", iter.max = 1000)
  expect_identical(unname(b$cluster), unname(s$cluster))
  expect_equal(b$tot.withinss, s$tot.withinss, tolerance = 1e-12)
})

# A mid-sized x (8 MiB to 256 MiB of doubles) is staged by size too, in
# 4 MiB buffers, without the column sums: totss then runs beside the upload
# (stage "totss_early").  The internal GPUKMEANS_MID_STAGING=0 copies it the
# plain way, as before.  The rows: 5e5 x 3 (12 MB, three buffers and a
# part in double, two in single), and a block that ends mid-chunk.
test_that("cuda: a mid-sized x staged in small buffers gives the plain copy's fit, bit for bit", {
  skip_if_no_gpu()
  set.seed(5)
  x <- make_blobs(5e5 + 77, 3, 9, sd = 2, spread = 10) + 40
  centers <- x[seq(1, nrow(x), length.out = 9), ]
  for (single in c(FALSE, TRUE)) {
    staged <- with_stages(fit_staged(x, centers, 0L, single), "^totss_early|^upload_staged")
    plain <- local({
      withr::local_envvar(GPUKMEANS_MID_STAGING = "0")
      with_stages(fit_staged(x, centers, 0L, single), "^totss_early|^upload_staged")
    })
    expect_identical(staged$stages, c("upload_staged_small", "totss_early"))
    expect_identical(plain$stages, "totss_early")
    f <- staged$value
    g <- plain$value
    expect_identical(f$cluster, g$cluster)
    expect_identical(f$centers, g$centers)
    expect_identical(f$withinss, g$withinss)
    expect_identical(f$iter, g$iter)
    expect_identical(f$totss, g$totss)
    expect_identical(f$totss, fit_staged(x, centers, 2L, single)$totss)
    expect_equal(f$totss, sum(scale(x, scale = FALSE)^2), tolerance = 1e-12)
  }
  # a value that is not finite, found by the staged copy's check
  y <- x
  y[400000, 3] <- -Inf
  e <- tryCatch(gpukmeans:::gk_fit_cpp(y, list(centers), 5L, FALSE, "cuda", 0L, 0L, FALSE, NULL, Inf,
                                       list(tuning = c(0L, 0L, 0L, 0L, 0L)), finite = FALSE),
                error = identity)
  expect_s3_class(e, "gpukmeans_nonfinite")
  expect_identical(e$index, 2 * nrow(y) + 400000)
})

test_that("the CUDA tuning option takes 4 or 5 numbers", {
  expect_identical(gpukmeans:::cuda_options(c(0, 0, 0, 0, 2))$tuning, c(0L, 0L, 0L, 0L, 2L))
  expect_identical(gpukmeans:::cuda_options(c(0, 0, 0, 1))$tuning, c(0L, 0L, 0L, 1L))
  expect_error(gpukmeans:::cuda_options(c(0, 0, 0)), "4 or 5 whole numbers")
  expect_error(gpukmeans:::cuda_options(c(0, 0, 0, 0, NA)), "4 or 5 whole numbers")
})
