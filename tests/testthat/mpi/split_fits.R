# Run by test-mpi.R under mpirun (every rank runs it): fits of random splits
# of data sets over the ranks, compared with one-process fits of the
# concatenated rows, and collective errors.  Each rank saves its checks to
# <out>/rank-<r>.rds: a named list of TRUE/FALSE (or messages).
args <- commandArgs(trailingOnly = TRUE)
out <- args[1]
lib <- Sys.getenv("GK_TEST_LIB")
if (nzchar(lib)) .libPaths(c(strsplit(lib, .Platform$path.sep)[[1]], .libPaths()))
suppressMessages({
  library(Rmpi)
  library(gpukmeans)
})
options(gpukmeans.threads = 1L, gpukmeans.backend = "cpu", warn = 1)
rank <- mpi.comm.rank(0)
P <- mpi.comm.size(0)
checks <- list()
check <- function(name, ok) checks[[name]] <<- if (isTRUE(ok)) TRUE else paste(format(ok), collapse = " ")

# The rows of rank `rank` when n rows are cut at random points drawn from a
# seed every rank shares, or at the P - 1 points list(cuts) gives.
block_of <- function(n, seed) {
  if (is.list(seed)) {
    cuts <- seed[[1L]]
  } else {
    old <- .Random.seed
    set.seed(seed)
    cuts <- sort(sample(0:n, P - 1L, replace = TRUE))
    .Random.seed <<- old
  }
  lo <- c(0, cuts)[rank + 1L]
  hi <- c(cuts, n)[rank + 1L]
  seq_len(hi - lo) + lo
}

blobs <- function(n, d, k, seed) {
  set.seed(seed)
  ctr <- matrix(rnorm(k * d, sd = 8), k, d)
  x <- ctr[sample.int(k, n, replace = TRUE), , drop = FALSE] + matrix(rnorm(n * d), n, d)
  colnames(x) <- paste0("v", seq_len(d))
  x
}

quiet <- function(expr) suppressWarnings(expr)

# One scenario: the distributed fit of this rank's block against the
# one-process fit of all rows, from the same seed.
compare <- function(name, x, centers, split_seed, seed = 1, ..., exact = NULL) {
  rows <- block_of(nrow(x), split_seed)
  set.seed(seed)
  f <- quiet(gpu_kmeans(x[rows, , drop = FALSE], centers, ..., comm = 0))
  seed_mpi <- .Random.seed
  set.seed(seed)
  g <- quiet(gpu_kmeans(x, centers, ...))
  seed_one <- .Random.seed
  check(paste(name, "cluster"), identical(unname(f$cluster), unname(g$cluster[rows])))
  check(paste(name, "size"), identical(f$size, g$size))
  check(paste(name, "iter"), identical(f$iter, g$iter))
  check(paste(name, "ifault"), identical(f$ifault, g$ifault))
  check(paste(name, "centers"), all.equal(f$centers, g$centers, tolerance = 1e-13))
  check(paste(name, "withinss"), all.equal(f$withinss, g$withinss, tolerance = 1e-12))
  check(paste(name, "totss"), all.equal(f$totss, g$totss, tolerance = 1e-12))
  if (rank == 0L) check(paste(name, "generator"), identical(seed_mpi, seed_one))
  check(paste(name, "predict"), identical(unname(predict(f, x[rows, , drop = FALSE])), unname(f$cluster)))
  invisible(f)
}

# Split-independence: the shared components of a fit, gathered, must be
# bitwise the same on every rank.
same_on_all <- function(name, f) {
  v <- c(f$centers, f$withinss, f$totss, f$size, f$iter)
  mx <- mpi.allreduce(v, type = 2, op = "max", comm = 0)
  mn <- mpi.allreduce(v, type = 2, op = "min", comm = 0)
  check(paste(name, "same on every rank"), identical(mx, mn) && identical(mx, v))
}

x <- blobs(2003, 3, 6, 11)
for (s in 1:3) {
  # Given centers: bit for bit lloyd_parts() over the concatenated rows.
  c0 <- x[c(5, 80, 400, 900, 1500, 2000), ]
  f <- compare(sprintf("given/%d", s), x, c0, 100 + s)
  p <- gpukmeans:::gk_fit_parts_cpp(x, c0, 1000L, 1L, FALSE, "cpu", 1L, 0L)
  rows <- block_of(nrow(x), 100 + s)
  check(sprintf("given/%d parts centers bitwise", s), identical(unname(f$centers), p$centers))
  check(sprintf("given/%d parts withinss bitwise", s), identical(f$withinss, p$withinss))
  check(sprintf("given/%d parts cluster", s), identical(unname(f$cluster), p$cluster[rows]))
  same_on_all(sprintf("given/%d", s), f)
  # Random starts (stats' draws), one and several.
  compare(sprintf("random/%d", s), x, 6, 200 + s, seed = s)
  compare(sprintf("random nstart 3/%d", s), x, 6, 300 + s, seed = s, nstart = 3)
  # Seeded inits: the rows one process chooses.
  for (init in c("kmeans++", "kmeans||")) {
    f <- compare(sprintf("%s/%d", init, s), x, 6, 400 + s, seed = s, init = init, nstart = 2)
    set.seed(s)
    ref <- gpukmeans:::gk_init_rows(x, 6, init, nstart = 2)
    check(sprintf("%s/%d rows", init, s), identical(lapply(attr(f, "mpi")$init_rows, as.integer), ref))
  }
}
# Splits with ranks that hold no rows, or a few (less than one node of the
# sum trees, 32 rows).
n <- nrow(x)
splits <- list(first_empty = c(0, floor(n * seq_len(P - 2L) / (P - 1L))),
               last_empty = c(floor(n * seq_len(P - 2L) / (P - 1L)), n),
               tiny = seq_len(P - 1L) * 7 + 25,
               middle_empty = rep(c(33, 1000), length.out = P - 1L)[order(seq_len(P - 1L))])
if (P >= 3L) splits$middle_empty <- c(33, 33, 1000)[seq_len(P - 1L)]
for (sp in names(splits)) {
  cuts <- splits[sp]
  f <- compare(paste("given", sp), x, x[c(5, 80, 400, 900, 1500, 2000), ], cuts)
  same_on_all(paste("given", sp), f)
  compare(paste("random", sp), x, 6, cuts, seed = 21, nstart = 2)
  for (init in c("kmeans++", "kmeans||")) {
    f <- compare(paste(init, sp), x, 6, cuts, seed = 22, init = init)
    set.seed(22)
    ref <- gpukmeans:::gk_init_rows(x, 6, init)
    check(paste(init, sp, "rows"), identical(lapply(attr(f, "mpi")$init_rows, as.integer), ref))
  }
}

# A deeper tree (40 000 rows: 4 levels above the rows).
xl <- blobs(40000, 2, 8, 14)
for (init in c("kmeans++", "kmeans||")) {
  f <- compare(paste("larger", init), xl, 8, 800 + nchar(init), seed = 23, init = init)
  set.seed(23)
  check(paste("larger", init, "rows"),
        identical(lapply(attr(f, "mpi")$init_rows, as.integer), gpukmeans:::gk_init_rows(xl, 8, init)))
}

# Many duplicate rows: random starts draw from the distinct rows in order of
# first occurrence, across ranks.
xd <- round(blobs(1500, 2, 4, 12) / 4)
compare("duplicates nstart 1", xd, 5, 501, seed = 7)
compare("duplicates nstart 4", xd, 5, 502, seed = 8, nstart = 4)
compare("duplicates k-means||", xd, 5, 503, seed = 9, init = "kmeans||")
compare("duplicates k-means++", xd, 5, 504, seed = 10, init = "kmeans++")
# k = 1, a 1-column data set, iter.max reached, single precision.
compare("k = 1", x, 1, 601, seed = 2)
x1 <- blobs(999, 1, 3, 13)
compare("one column", x1, 3, 602, seed = 3, nstart = 2)
compare("not converged", x, 6, 603, seed = 4, iter.max = 2)
rows <- block_of(nrow(x), 604)
set.seed(5)
fs <- quiet(gpu_kmeans(x[rows, ], 6, precision = "single", comm = 0))
set.seed(5)
gs <- quiet(gpu_kmeans(x, 6, precision = "single"))
check("single size", identical(fs$size, gs$size))
check("single centers", all.equal(fs$centers, gs$centers, tolerance = 1e-5))
same_on_all("single", fs)
# More centers than distinct rows: stats' error on every rank.
xs <- x[rep(1:3, 100), ]
rows <- block_of(nrow(xs), 605)
e <- tryCatch(gpu_kmeans(xs[rows, ], 4, comm = 0), error = conditionMessage)
check("distinct error", identical(e, "more cluster centers than distinct data points."))
for (init in c("kmeans++", "kmeans||")) {  # (the degenerate rule across ranks, then stats' error)
  e <- tryCatch(gpu_kmeans(xs[rows, ], 4, init = init, comm = 0), error = conditionMessage)
  check(paste("distinct error", init), identical(e, "more cluster centers than distinct data points."))
}
xt <- rbind(matrix(0, 40, 2), matrix(1, 45, 2))
for (init in c("random", "kmeans++", "kmeans||")) compare(paste("two values", init), xt, 2, 606, seed = 9, init = init, nstart = 2)

# Errors on one rank end the call on every rank, and the next call works.
bad <- x[block_of(nrow(x), 700), ]
if (rank == P - 1L && nrow(bad)) bad[1, 2] <- NA
if (rank == P - 1L && !nrow(bad)) bad <- "not data"
e <- tryCatch(gpu_kmeans(bad, 3, comm = 0), error = identity)
check("bad input: mpi error", inherits(e, "gpukmeans_mpi_error"))
check("bad input: names the rank", grepl(sprintf("rank %d:", P - 1L), conditionMessage(e)))
for (phase in c("step", "init", "withinss", "distinct")) {
  options(gpukmeans.mpi_fault = function(r, p) if (r == 1L && p == phase) stop("injected fault"))
  e <- tryCatch(gpu_kmeans(x[block_of(nrow(x), 701), ], 4, nstart = 2, init = if (phase == "init") "kmeans++" else "random",
                           comm = 0), error = identity)
  options(gpukmeans.mpi_fault = NULL)
  check(paste("fault in", phase), inherits(e, "gpukmeans_mpi_error") &&
          grepl("rank 1: injected fault", conditionMessage(e)))
}
n_step <- 0
options(gpukmeans.mpi_fault = function(r, p) {
  if (r == 0L && p == "step" && (n_step <<- n_step + 1) == 3) tools::pskill(Sys.getpid(), tools::SIGINT)
})
e <- tryCatch(gpu_kmeans(x[block_of(nrow(x), 702), ], 4, comm = 0), error = identity)
options(gpukmeans.mpi_fault = NULL)
check("interrupt", inherits(e, "gpukmeans_mpi_error") && grepl("rank 0: interrupted", conditionMessage(e)))
e <- tryCatch(gpu_kmeans(x[block_of(nrow(x), 703), ], if (rank == 0L) 3 else 4, comm = 0), error = conditionMessage)
check("arguments differ", grepl("disagree on centers", e))
f <- compare("after the errors", x, 6, 704, seed = 6)

# With GPUs (the ranks share them by local rank): the CUDA engine's fit over
# MPI is its one-process fit, bit for bit (totss: to rounding, the
# one-process totss adds blocks of doubles).
if (isTRUE(nrow(gpukmeans_info()$devices) > 0)) {
  options(gpukmeans.backend = "cuda")
  for (sp in names(splits)) {
    rows <- block_of(nrow(x), splits[sp])
    for (init in c("random", "kmeans++", "kmeans||")) {
      set.seed(31)
      f <- quiet(gpu_kmeans(x[rows, ], 6, init = init, nstart = 2, comm = 0))
      set.seed(31)
      g <- quiet(gpu_kmeans(x, 6, init = init, nstart = 2, device = 0))
      name <- paste("cuda", sp, init)
      check(paste(name, "backend"), identical(attr(f, "backend"), "cuda") || nrow(x[rows, ]) == 0L)
      check(paste(name, "centers bitwise"), identical(unname(f$centers), unname(g$centers)))
      check(paste(name, "withinss bitwise"), identical(f$withinss, g$withinss))
      check(paste(name, "size, iter"), identical(list(f$size, f$iter), list(g$size, g$iter)))
      check(paste(name, "cluster"), identical(unname(f$cluster), unname(g$cluster[rows])))
      check(paste(name, "totss"), all.equal(f$totss, g$totss, tolerance = 1e-12))
    }
  }
  options(gpukmeans.backend = "cpu")
}

saveRDS(checks, file.path(out, sprintf("rank-%d.rds", rank)))
mpi.barrier(0)
invisible(mpi.finalize())
