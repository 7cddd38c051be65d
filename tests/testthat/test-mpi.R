# gpu_kmeans(comm = ): k-means over MPI ranks (R/mpi.R, src/block_driver.h).

test_that("the sum tree over blocks of rows is the one-process tree, bit for bit, for any split", {
  set.seed(1)
  for (N in c(1, 2, 31, 32, 33, 64, 65, 1000, 1025, 32769, 70001)) {
    for (rep in 1:4) {
      v <- runif(N)^3 * 10^runif(N, -8, 8)
      v[sample.int(N, N %/% 3)] <- 0
      starts <- c(0, sort(sample(0:N, sample(0:6, 1), replace = TRUE)))  # blocks may be empty
      r <- gpukmeans:::gk_tree_split_test(v, starts, c(runif(40), 0, 1 - 1e-16))
      expect_identical(r$total_split, r$total_ref)
      expect_identical(r$sample_split, r$sample_ref)
    }
  }
  # a tree of 5 levels, blocks across its upper nodes
  v <- runif(1.1e6)^4
  for (starts in list(c(0, 32768, 65537, 1048576, 1048577), c(0, 17, 1048575), c(0, 1, 1.1e6 - 1))) {
    r <- gpukmeans:::gk_tree_split_test(v, starts, runif(30))
    expect_identical(r$total_split, r$total_ref)
    expect_identical(r$sample_split, r$sample_ref)
  }
  # nothing to sample
  r <- gpukmeans:::gk_tree_split_test(rep(0, 100), c(0, 50), 0.5)
  expect_identical(r$sample_split, -1)
})

test_that("a communicator of one process (no MPI) runs the distributed code: lloyd_parts() and one process's choices", {
  set.seed(2)
  x <- matrix(rnorm(3000), 1000, 3) + rep(c(0, 6, 12, 18), length.out = 1000)
  lc <- gpukmeans:::local_comm()
  c0 <- x[c(1, 2, 3, 4), ]
  f <- gpu_kmeans(x, c0, comm = lc)
  p <- gpukmeans:::gk_fit_parts_cpp(x, c0, 1000L, 1L, FALSE, "cpu", 1L, 0L)
  expect_identical(unname(f$centers), p$centers)
  expect_identical(f$withinss, p$withinss)
  expect_identical(unname(f$cluster), p$cluster)
  g <- gpu_kmeans(x, c0)
  expect_true(isTRUE(all.equal(f, g, tolerance = 1e-13)))
  expect_identical(f$cluster, g$cluster)
  expect_identical(attr(f, "mpi")[c("rank", "size", "rows", "offset")], list(rank = 0L, size = 1L, rows = 1000, offset = 0))
  for (init in c("random", "kmeans++", "kmeans||")) {
    set.seed(3); f <- gpu_kmeans(x, 4, nstart = 3, init = init, comm = lc); s1 <- .Random.seed
    set.seed(3); g <- gpu_kmeans(x, 4, nstart = 3, init = init); s2 <- .Random.seed
    expect_identical(s1, s2)
    expect_identical(f$cluster, g$cluster)
    expect_true(isTRUE(all.equal(f, g, tolerance = 1e-13)))
    if (init != "random") {
      set.seed(3)
      expect_identical(lapply(attr(f, "mpi")$init_rows, as.integer), gpukmeans:::gk_init_rows(x, 4, init, nstart = 3))
    }
  }
  set.seed(4); f <- gpu_kmeans(x, 4, precision = "single", comm = lc)
  set.seed(4); g <- gpu_kmeans(x, 4, precision = "single")
  expect_identical(f$size, g$size)
  expect_equal(f$centers, g$centers, tolerance = 1e-6)
  expect_identical(predict(f, x[0, ]), integer(0))
})

test_that("comm: errors say what is wrong, collectively", {
  x <- matrix(rnorm(200), 100, 2)
  expect_error(gpu_kmeans(x, 3, comm = "a"), "'comm' must be an Rmpi communicator number")
  expect_error(gpu_kmeans(x, 3, comm = -1), "'comm' must be an Rmpi communicator number")
  withr::local_options(gpukmeans.rmpi = FALSE)
  expect_error(gpu_kmeans(x, 3, comm = 0), "'comm' needs the Rmpi package")
  lc <- gpukmeans:::local_comm()
  e <- expect_error(gpu_kmeans(x, 3, algorithm = "Hartigan-Wong", comm = lc), class = "gpukmeans_mpi_error")
  expect_match(conditionMessage(e), "rank 0: comm = is for algorithm = \"Lloyd\" only")
  x[3, 1] <- NaN
  expect_error(gpu_kmeans(x, 3, comm = lc), "rank 0: 'x' must not contain NA", class = "gpukmeans_mpi_error")
  expect_error(gpu_kmeans(x[0, ], 3, comm = lc), "'x' has no rows on any rank")
  expect_error(gpu_kmeans(x[1:2, ], 3, comm = lc), "more cluster centers than data points")
})

test_that("gpu_kmeans over MPI: random splits on 2 and 3 ranks give the one-process fit (CPU engine)", {
  # (not skip_if_not_installed(): loading Rmpi here would start MPI in this
  # process, and the mpirun below would fail inside it)
  skip_if(!nzchar(system.file(package = "Rmpi")), "Rmpi is not installed")
  mpirun <- Sys.which("mpirun")
  skip_if(!nzchar(mpirun), "no mpirun")
  script <- normalizePath(test_path("mpi", "split_fits.R"))
  # The children load this gpukmeans (R CMD check's library, or the one the
  # suite runs against) first.
  lib <- paste(c(dirname(find.package("gpukmeans")), .libPaths()), collapse = .Platform$path.sep)
  env <- c(sprintf("GK_TEST_LIB=%s", lib),
           # Open MPI: run as root in containers, more ranks than cores, and
           # yield the cores while waiting (oversubscribed).
           "OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
           "OMPI_MCA_rmaps_base_oversubscribe=1", "OMPI_MCA_mpi_yield_when_idle=1")
  rscript <- file.path(R.home("bin"), "Rscript")
  for (np in 2:3) {
    out <- tempfile("gk-mpi-")
    dir.create(file.path(out, "tmp"), recursive = TRUE)
    withr::defer(unlink(out, recursive = TRUE))
    # (Open MPI's session files go to TMPDIR: into `out`, removed below)
    log <- suppressWarnings(system2(mpirun, c("-np", np, shQuote(rscript), shQuote(script), shQuote(out)),
                                    stdout = TRUE, stderr = TRUE, timeout = 240,
                                    env = c(env, sprintf("TMPDIR=%s", file.path(out, "tmp")))))
    status <- attr(log, "status")
    if (is.null(status)) status <- 0L
    files <- file.path(out, sprintf("rank-%d.rds", seq_len(np) - 1L))
    if (status != 0L || !all(file.exists(files))) {
      fail(sprintf("mpirun -np %d failed (status %s):\n%s", np, status, paste(utils::tail(log, 40), collapse = "\n")))
      next
    }
    for (f in files) {
      checks <- readRDS(f)
      expect_gt(length(checks), 300)
      bad <- checks[!vapply(checks, isTRUE, NA)]
      expect(length(bad) == 0L,
             sprintf("-np %d, %s: %s", np, basename(f),
                     paste(names(bad), unlist(bad), sep = ": ", collapse = "\n")))
    }
  }
})
