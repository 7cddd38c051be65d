# CUDA engine on devices with less shared memory a block than the H100's
# 227 KB: 99 KB on sm_86 and sm_89 (RTX 30 and 40 series, L4, A10), 163 KB
# on sm_80 (A100).  Every plan asks for its kernels' shared memory through
# one function, and where the device refuses it takes another kernel.  The
# internal GPUKMEANS_SMEM_CAP (bytes) makes the engine plan as on such a
# device, so these fallbacks run on the card the tests have.
local_edition(3)

smem_sm86 <- "101376"  # 99 KB: cudaDevAttrMaxSharedMemoryPerBlockOptin of sm_86 and sm_89

test_that("cuda: with 99 KB a block, the small-d kernels that need more give way to others with the same fit", {
  skip_if_no_gpu()
  skip_if(smem_capped(), "the run has a shared-memory cap of its own (its 'full' fits would be capped too)")
  # d = 2, k = 1960 in double: the grid's small-d kernel keeps its sums and
  # centers in 52 k + 64 = 101984 bytes, above 99 KB and below the 100 KB
  # the plan allows; n >= 2^18, so not the persistent kernel
  set.seed(61)
  x <- make_blobs(270000, 2, 980, sd = 1, spread = 400)
  c0 <- x[seq_len(1960), ]
  full <- cuda_fit_raw(x, c0, 6L, env = c(GPUKMEANS_GRID = "1"))
  capped <- cuda_fit_raw(x, c0, 6L, env = c(GPUKMEANS_GRID = "1", GPUKMEANS_SMEM_CAP = smem_sm86))
  expect_gte(full$grid_share, 0)
  expect_identical(capped$grid_share, -1)  # (the grid's kernel refused)
  for (comp in c("cluster", "centers", "withinss", "size", "iter", "totss"))
    expect_identical(capped[[comp]], full[[comp]], label = comp)
  # ... and below 2^18 rows, where the persistent kernel (same shared
  # memory) would run: graph batches
  small <- x[seq_len(60000), ]
  full <- cuda_fit_raw(small, c0, 6L)
  capped <- cuda_fit_raw(small, c0, 6L, env = c(GPUKMEANS_SMEM_CAP = smem_sm86))
  for (comp in c("cluster", "centers", "withinss", "size", "iter", "totss"))
    expect_identical(capped[[comp]], full[[comp]], label = paste("60000 rows", comp))
})

test_that("cuda: with 99 KB a block, k-means|| at d > 192 filters without the tensor cores and picks the same rows", {
  skip_if_no_gpu()
  # the tensor-core filter's block holds 128 rows' images: 128 (200 + 4) 4
  # = 104448 bytes at d = 200 (d <= 192 fits in 99 KB); the engine used to
  # stop with an error there
  set.seed(62)
  x <- make_blobs(3000, 200, 12, sd = 1, spread = 10)
  set.seed(7); cpu <- gpukmeans:::gk_init_rows(x, 24, "kmeans||", nstart = 1, backend = "cpu")
  for (cap in c(NA, smem_sm86)) {
    withr::local_envvar(GPUKMEANS_SMEM_CAP = cap)
    set.seed(7)
    gpu <- gpukmeans:::gk_init_rows(x, 24, "kmeans||", nstart = 1, backend = "cuda")
    expect_identical(gpu, cpu, label = paste("cap", cap))
  }
  withr::local_envvar(GPUKMEANS_SMEM_CAP = smem_sm86)
  set.seed(7)
  fit <- gpu_kmeans(x, 12, init = "kmeans||", backend = "cuda", iter.max = 30L)
  set.seed(7)
  ref <- gpu_kmeans(x, 12, init = "kmeans||", backend = "cpu", iter.max = 30L)
  expect_identical(fit$cluster, ref$cluster)
  expect_identical(fit$iter, ref$iter)
  expect_equal(fit$centers, ref$centers, tolerance = 1e-14)
})

test_that("cuda: a cap at 48 KB a block (no opt-in) leaves every plan without opted-in shared memory, same fits", {
  skip_if_no_gpu()
  # (no device of ours has less than 99 KB; the cap at the default 48 KB
  # makes every plan that would opt in take its fallback at once: the
  # sums' global atomics, the tiled assignment, graph batches)
  set.seed(63)
  for (sh in list(c(30000, 2, 1000), c(20000, 16, 700), c(8000, 40, 1500))) {
    x <- make_blobs(sh[1], sh[2], sh[3] %/% 2, sd = 1, spread = 50)
    c0 <- x[seq_len(sh[3]), , drop = FALSE]
    w <- rep_len(1:3, nrow(x))
    for (single in c(FALSE, TRUE)) {
      full <- cuda_fit_raw(x, c0, 8L, single = single)
      capped <- cuda_fit_raw(x, c0, 8L, single = single, env = c(GPUKMEANS_SMEM_CAP = "49152"))
      lab <- paste(paste(sh, collapse = "x"), if (single) "single" else "double")
      if (single) {  # (another kernel: single precision's labels may differ at near ties)
        expect_gt(mean(capped$cluster == full$cluster), 0.999, label = lab)
      } else {
        for (comp in c("cluster", "centers", "withinss", "size", "iter", "totss"))
          expect_identical(capped[[comp]], full[[comp]], label = paste(lab, comp))
      }
    }
  }
})
