# gpu_kmeans over MPI: 2 ranks with one GPU each against 1 rank, same data.
#
# Every rank runs this script (inst/bench/bench_mpi.sh runs it under mpirun
# with 1 and with 2 ranks, then compares):
#   Rscript bench_mpi.R OUT/npP [n] [d] [k] [iter.max]       (under mpirun -np P)
#   Rscript bench_mpi.R --compare OUT                        (after both)
# The data (default 1e8 x 16, k = 256) are made in chunks of 2^20 rows, each
# from its own seed, so every split of the rows has the same data; each rank
# makes only its block.  The fit: random starts drawn on rank 0
# (set.seed(7)), iter.max iterations at most (default 30), double precision,
# the CUDA engine (device = the local rank).  Each rank saves its timings,
# the fit's shared components and digests of its labels to OUT/npP/rank-R.rds;
# with one rank the one-process fit without MPI (the engine's own Lloyd) is
# saved too, to check that the MPI fit is that fit, bit for bit.
args <- commandArgs(trailingOnly = TRUE)

if (identical(args[1], "--compare")) {
  out <- args[2]
  read <- function(p) lapply(sort(list.files(file.path(out, p), "^rank-.*\\.rds$", full.names = TRUE)), readRDS)
  one <- read("np1")
  two <- read("np2")
  stopifnot(length(one) == 1L, length(two) == 2L)
  same <- function(a, b) identical(a[c("centers", "withinss", "size", "totss", "iter")],
                                   b[c("centers", "withinss", "size", "totss", "iter")])
  digest <- function(r) Reduce(`+`, lapply(r, `[[`, "digest"))
  cat(sprintf("data: %s x %d, k = %d, %d iterations (%s)\n", format(one[[1]]$n, big.mark = ","), one[[1]]$d,
              one[[1]]$k, one[[1]]$fit$iter, one[[1]]$device))
  cat(sprintf("2 ranks vs 1 rank: centers, withinss, size, totss, iter identical: %s; labels (digests): %s\n",
              same(one[[1]]$fit, two[[1]]$fit) && same(two[[1]]$fit, two[[2]]$fit),
              identical(digest(one), digest(two))))
  if (!is.null(one[[1]]$plain))
    cat(sprintf("1 rank vs the one-process fit without MPI (engine's own Lloyd): identical: %s; labels: %s\n",
                same(one[[1]]$fit, one[[1]]$plain), identical(one[[1]]$digest, one[[1]]$plain_digest)))
  t1 <- one[[1]]$timing
  t2 <- two[[1]]$timing  # the same on both ranks up to the collectives' wait
  row <- function(name, a, b) cat(sprintf("%-34s %10.3f %10.3f %8.2fx\n", name, a, b, a / b))
  cat(sprintf("%-34s %10s %10s %9s\n", "seconds", "1 rank", "2 ranks", "speed-up"))
  row("Lloyd (compute, with MPI)", t1[["compute"]], t2[["compute"]])
  row("Lloyd per iteration", t1[["compute"]] / one[[1]]$fit$iter, t2[["compute"]] / two[[1]]$fit$iter)
  if ("transfer_to_device" %in% names(t1))
    row("upload to the device", t1[["transfer_to_device"]], t2[["transfer_to_device"]])
  row("gpu_kmeans() call", one[[1]]$wall, max(vapply(two, `[[`, 0, "wall")))
  cat(sprintf("time in MPI calls: 1 rank %.3f s, 2 ranks %.3f s\n", t1[["mpi"]], t2[["mpi"]]))
  if (!is.null(one[[1]]$plain_timing))
    cat(sprintf("one-process fit without MPI: compute %.3f s (%d iterations), call %.3f s\n",
                one[[1]]$plain_timing[["compute"]], one[[1]]$plain$iter, one[[1]]$plain_wall))
  quit(status = 0)
}

out <- args[1]
num <- function(i, default) if (length(args) >= i) as.numeric(args[i]) else default
n <- num(2, 1e8)
d <- as.integer(num(3, 16))
k <- as.integer(num(4, 256))
iter_max <- as.integer(num(5, 30))
backend <- Sys.getenv("GK_BENCH_BACKEND", "cuda")  # "cpu": a dry run on a machine without GPUs
suppressMessages({
  library(Rmpi)
  library(gpukmeans)
})
rank <- mpi.comm.rank(0)
P <- mpi.comm.size(0)
dir.create(out, recursive = TRUE, showWarnings = FALSE)

# This rank's block: rows [lo, hi) of n, from chunks of 2^20 rows.
lo <- floor(n * rank / P)
hi <- floor(n * (rank + 1) / P)
chunk <- 2^20
set.seed(1)
ctr <- matrix(runif(k * d, -20, 20), k, d)
x <- matrix(0, hi - lo, d)
t0 <- proc.time()[["elapsed"]]
for (c in seq(floor(lo / chunk), ceiling(hi / chunk) - 1)) {
  a <- c * chunk
  b <- min(n, a + chunk)
  set.seed(1000 + c)
  lab <- sample.int(k, b - a, replace = TRUE)
  block <- ctr[lab, , drop = FALSE] + matrix(rnorm((b - a) * d, sd = 2), b - a, d)
  keep <- max(a, lo):(min(b, hi) - 1)
  x[keep - lo + 1, ] <- block[keep - a + 1, , drop = FALSE]
}
rm(block, lab)
invisible(gc())
t_data <- proc.time()[["elapsed"]] - t0

# Digest of the labels of rows [lo, hi): position-weighted sums, exact in
# doubles, that add over ranks.
digest <- function(cl) {
  idx <- lo + seq_along(cl) - 1
  c(sum(as.numeric(cl) * (idx %% 997 + 1)), sum(as.numeric(cl) * (idx %% 1009 + 1)), length(cl))
}
shared <- function(f) list(centers = unname(f$centers), withinss = f$withinss, size = f$size, totss = f$totss,
                           iter = f$iter)

mpi.barrier(0)
set.seed(7)
t0 <- proc.time()[["elapsed"]]
f <- gpu_kmeans(x, k, iter.max = iter_max, backend = backend, comm = 0)
wall <- proc.time()[["elapsed"]] - t0
res <- list(n = n, d = d, k = k, ranks = P, rank = rank, data_seconds = t_data, wall = wall,
            timing = attr(f, "timing"), device = attr(f, "device"), fit = shared(f), digest = digest(f$cluster))
if (P == 1L) {
  # The one-process fit without MPI, from the same seed.
  rm(f)
  invisible(gc())
  set.seed(7)
  t0 <- proc.time()[["elapsed"]]
  g <- gpu_kmeans(x, k, iter.max = iter_max, backend = backend)
  res$plain_wall <- proc.time()[["elapsed"]] - t0
  res$plain <- shared(g)
  res$plain_timing <- attr(g, "timing")
  res$plain_digest <- digest(g$cluster)
}
saveRDS(res, file.path(out, sprintf("rank-%d.rds", rank)))
cat(sprintf("rank %d of %d: %s rows, data %.1f s, gpu_kmeans %.2f s (compute %.2f s, %d iterations, MPI %.3f s)\n",
            rank, P, format(hi - lo, big.mark = ","), t_data, wall, res$timing[["compute"]], res$fit$iter,
            res$timing[["mpi"]]))
mpi.barrier(0)
invisible(mpi.finalize())
