# Several GPUs of one host (issue 16): gpu_kmeans(device = 0) against
# device = c(0, 1) (and c(0, 0): two engines on one GPU), same data and
# starts, both precisions: identical fits, and the time of the call and of
# its Lloyd iterations.  Not a test: run on a machine with two GPUs
#   sh tools/gpu/run-r.sh inst/bench/bench_multigpu.R [n] [iterations] [init]
# and commit the output with the date and the cards.  With "init" it also
# times init = "kmeans||" and "kmeans++" (k = 256) on one GPU and on all of
# them.  Every time is the faster of two calls.
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
args <- commandArgs(trailingOnly = TRUE)
n <- if (length(args) >= 1L) as.numeric(args[1]) else 1e8
iters <- if (length(args) >= 2L) as.integer(args[2]) else 20L
with_init <- length(args) >= 3L && args[3] == "init"
d <- 16L
k <- 256L
devs <- gpukmeans_info()$devices
cat(sprintf("gpukmeans several-GPU benchmark | %s | %d GPU(s): %s | n = %g, d = %d, k = %d, %d iterations at most\n",
            format(Sys.Date()), nrow(devs), paste(devs$name, collapse = ", "), n, d, k, iters))
# n x d data from n / 10 x d uniform values, each block of n / 10 rows
# shifted by its own tiny offset (cheap to make; every row distinct)
t0 <- Sys.time()
set.seed(1)
m <- n / 10
x <- matrix(0, n, d)
for (j in seq_len(d)) x[, j] <- rep(stats::runif(m), 10) + rep((0:9) * 1e-7, each = m)
c0 <- x[sample.int(n, k), ]
cat(sprintf("(data made in %.1f s)\n", as.numeric(Sys.time() - t0, units = "secs")))
parts <- c("cluster", "centers", "totss", "withinss", "size", "iter")
# The faster of two calls (the first on a set of devices pays once for what
# the process keeps: peer access between the GPUs, their contexts).
best_of_two <- function(call) {
  a <- call()
  b <- call()
  if (b$wall < a$wall) b else a
}
run <- function(device, prec) best_of_two(function() {
  t <- Sys.time()
  f <- suppressWarnings(gpu_kmeans(x, c0, iter.max = iters, precision = prec, backend = "cuda", device = device))
  list(fit = f, wall = as.numeric(Sys.time() - t, units = "secs"))
})
for (prec in c("double", "single")) {
  one <- run(0L, prec)
  cases <- list(`c(0, 0)` = c(0L, 0L))
  if (nrow(devs) >= 2L) cases[["c(0, 1)"]] <- c(0L, 1L)
  tm <- attr(one$fit, "timing")
  cat(sprintf("%s device = 0       : call %.3f s | upload %.3f | Lloyd %.3f s (%d iterations, %.2f ms/iter) | %s\n",
              prec, one$wall, tm[["transfer_to_device"]], tm[["compute"]], one$fit$iter,
              1000 * tm[["compute"]] / min(one$fit$iter, iters), attr(one$fit, "device")))
  for (nm in names(cases)) {
    r <- run(cases[[nm]], prec)
    t2 <- attr(r$fit, "timing")
    same <- identical(unclass(r$fit)[parts], unclass(one$fit)[parts])
    cat(sprintf("%s device = %-8s: call %.3f s (%.2fx) | upload %.3f | Lloyd %.3f s (%.2f ms/iter, %.2fx) | identical to device = 0: %s | %s\n",
                prec, nm, r$wall, one$wall / r$wall, t2[["transfer_to_device"]], t2[["compute"]],
                1000 * t2[["compute"]] / min(r$fit$iter, iters), tm[["compute"]] / t2[["compute"]], same,
                attr(r$fit, "device")))
  }
}
if (with_init) {
  all <- gpukmeans:::check_devices("all")
  for (init in c("kmeans||", "kmeans++")) for (prec in c("double", "single")) {
    fits <- lapply(list(0L, all), function(dev) best_of_two(function() {
      set.seed(2)
      t <- Sys.time()
      f <- suppressWarnings(gpu_kmeans(x, k, init = init, iter.max = iters, precision = prec, backend = "cuda",
                                       device = dev))
      list(fit = f, wall = as.numeric(Sys.time() - t, units = "secs"))
    }))
    same <- identical(unclass(fits[[2]]$fit)[parts], unclass(fits[[1]]$fit)[parts])
    for (i in 1:2) {
      tm <- attr(fits[[i]]$fit, "timing")
      cat(sprintf("%s init = \"%s\" device = %-8s: call %.3f s | init %.3f s | upload %.3f | Lloyd %.3f s%s\n", prec,
                  init, if (i == 1L) "0" else paste(all, collapse = ","), fits[[i]]$wall, tm[["init"]],
                  tm[["transfer_to_device"]], tm[["compute"]],
                  if (i == 2L) sprintf(" | identical to device = 0: %s", same) else ""))
    }
  }
}
