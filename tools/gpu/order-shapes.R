# Does the order of the rows change the speed?  bench.R's problems B-E with
# their rows as drawn (clusters mixed) and ordered by the cluster that drew
# them (as in data bound group after group, rbind()): ms an iteration
# (compute phase: iterations and the final within-SS, median of 3 fits of 10
# plain iterations) and whether the ordered fit (labels put back in the
# drawn order) equals the drawn one (double precision: it must).
#   Rscript tools/gpu/order-shapes.R [problems, default BCDE] [w]
# (w: weighted fits, each row's weight drawn from U(0.5, 2))
library(gpukmeans)
options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, 1L), gpukmeans.progress = FALSE)
cat("order-shapes |", gpukmeans_info()$devices$name[1], "|", format(Sys.Date()), "\n")
args <- commandArgs(trailingOnly = TRUE)
which <- strsplit(if (length(args)) args[1] else "BCDE", "")[[1]]
weighted <- length(args) >= 2 && args[2] == "w"
source(file.path("tools", "gpu", "blobs.R"))
problems <- list(B = c(1e6, 2, 100), C = c(1e6, 2, 1000), D = c(1e7, 16, 256), E = c(1e6, 128, 4096))
fit_of <- function(x, c0, prec, w, iters = 10L)
  suppressWarnings(gpu_kmeans(x, c0, iter.max = iters, precision = prec, backend = "cuda", weights = w))
ms_of <- function(x, c0, prec, w) {
  invisible(fit_of(x, c0, prec, w, 2L))
  median(sapply(1:3, function(i) {
    f <- fit_of(x, c0, prec, w)
    1000 * attr(f, "timing")[["compute"]] / min(10, f$iter)
  }))
}
for (id in which) {
  p <- problems[[id]]
  x <- bench_blobs(p[1], p[2], p[3], labels = TRUE)
  lab <- attr(x, "label")
  attr(x, "label") <- NULL
  set.seed(2)
  c0 <- x[sample.int(nrow(x), p[3]), , drop = FALSE]
  o <- order(lab)
  xo <- x[o, , drop = FALSE]
  w <- if (weighted) stats::runif(nrow(x), 0.5, 2)
  wo <- w[o]
  for (prec in c("single", "double")) {
    a <- fit_of(x, c0, prec, w)
    b <- fit_of(xo, c0, prec, wo)
    back <- integer(length(o)); back[o] <- b$cluster
    same <- identical(back, a$cluster) && identical(unname(a$centers), unname(b$centers))
    cat(sprintf("%s %-6s%s drawn order %8.4f  by cluster %8.4f ms/iter  same fit: %s\n", id, prec,
                if (weighted) " weighted" else "", ms_of(x, c0, prec, w), ms_of(xo, c0, prec, wo), same))
  }
  rm(x, xo); invisible(gc())
}
