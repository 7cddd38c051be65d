# CUDA engine: rows in the order of their clusters (data bound group after
# group, as rbind() leaves it).  Then every lane of a warp adds to the same
# cluster's sums, and the kernels add the warp's 32 values as one
# (src/cuda/detail/common.cuh, warp_same / limb_apply_warp) instead of 32
# atomics on one address.  The sums are exact integers either way, so in
# double precision a fit of the ordered rows is the fit of the same rows
# shuffled (its labels put back in order), bit for bit, and stats'; in single
# precision (the stored values depend on the column means, and so on the
# order) each fit's centers are the means of its clusters.
local_edition(3)

# Blobs whose rows come cluster by cluster, and a shuffle of them.
ordered_blobs <- function(n, d, k, seed) {
  set.seed(seed)
  x <- make_blobs(n, d, k, sd = 1, spread = 50, with_labels = TRUE)
  o <- order(attr(x, "label"))
  x <- x[o, , drop = FALSE]
  attr(x, "label") <- NULL
  list(x = x, perm = sample.int(n), c0 = x[sample.int(n, k), , drop = FALSE])
}

# The internal fit of the ordered rows, and of the shuffled rows with its
# per-row results put back in the ordered rows' order.
fit_both_orders <- function(b, iter.max, single, bounds, env = character()) {
  got <- cuda_fit_raw(b$x, b$c0, iter.max, single, bounds, env)
  shuf <- cuda_fit_raw(b$x[b$perm, , drop = FALSE], b$c0, iter.max, single, bounds, env)
  back <- integer(length(b$perm))
  back[b$perm] <- shuf$cluster
  shuf$cluster <- back
  list(ordered = got, shuffled = shuf)
}

# The four shapes: the small-d kernel in one cooperative launch (n < 2^18)
# and in separate ones, the grid of cells, the tiled path (d = 16) whose
# sums are carried (a moved warp leaves its old cluster as one) or made
# afresh.
order_cases <- list(
  list(label = "small d, persistent", n = 60000, d = 2, k = 10, env = character()),
  list(label = "small d", n = 300000, d = 2, k = 12, env = c(GPUKMEANS_GRID = "0")),
  list(label = "grid of cells", n = 300000, d = 2, k = 200, env = c(GPUKMEANS_GRID = "1")),
  list(label = "tiled, carried sums", n = 120000, d = 16, k = 24, env = character()),
  list(label = "tiled, fresh sums", n = 120000, d = 16, k = 24, env = c(GPUKMEANS_DELTA_SUMS = "0"))
)

test_that("cuda, rows ordered by cluster: double fits equal the shuffled rows' fits bit for bit", {
  skip_if_no_gpu()
  for (i in seq_along(order_cases)) {
    cs <- order_cases[[i]]
    b <- ordered_blobs(cs$n, cs$d, cs$k, seed = 40 + i)
    for (bounds in c(1L, 3L)) {
      f <- fit_both_orders(b, 25L, FALSE, bounds, cs$env)
      lab <- paste(cs$label, if (bounds == 1L) "plain" else "bounded")
      for (comp in c("cluster", "centers", "withinss", "size", "iter"))
        expect_identical(f$ordered[[comp]], f$shuffled[[comp]], label = paste(lab, comp))
      expect_equal(f$ordered$totss, f$shuffled$totss, tolerance = 1e-13, label = paste(lab, "totss"))
      expect_identical(f$ordered$size, tabulate(f$ordered$cluster, cs$k), label = paste(lab, "sizes"))
    }
  }
})

test_that("cuda, rows ordered by cluster: double fits are stats::kmeans's", {
  skip_if_no_gpu()
  for (i in c(2L, 3L, 4L)) {
    cs <- order_cases[[i]]
    b <- ordered_blobs(cs$n, cs$d, cs$k, seed = 40 + i)
    ref <- suppressWarnings(stats::kmeans(b$x, b$c0, iter.max = 25L, algorithm = "Lloyd"))
    got <- withr::with_envvar(cs$env, suppressWarnings(gpu_kmeans(b$x, b$c0, iter.max = 25L, backend = "cuda")))
    expect_identical(got$cluster, ref$cluster, label = paste(cs$label, "labels"))
    expect_identical(got$size, ref$size, label = paste(cs$label, "sizes"))
    expect_identical(got$iter, ref$iter, label = paste(cs$label, "iter"))
    expect_equal(got$centers, ref$centers, tolerance = 1e-13, label = paste(cs$label, "centers"))
    expect_equal(got$withinss, ref$withinss, tolerance = 1e-12, label = paste(cs$label, "withinss"))
  }
})

test_that("cuda, rows ordered by cluster: single-precision centers are their clusters' means", {
  skip_if_no_gpu()
  for (i in seq_along(order_cases)) {
    cs <- order_cases[[i]]
    b <- ordered_blobs(cs$n, cs$d, cs$k, seed = 40 + i)
    f <- fit_both_orders(b, 25L, TRUE, 1L, cs$env)
    for (way in names(f)) {
      g <- f[[way]]
      lab <- paste(cs$label, way)
      expect_identical(g$size, tabulate(g$cluster, cs$k), label = paste(lab, "sizes"))
      full <- g$size > 0
      means <- rowsum(b$x, g$cluster, reorder = TRUE) / g$size[full]
      expect_equal(unname(g$centers[full, , drop = FALSE]), unname(means), tolerance = 1e-6,
                   label = paste(lab, "centers"))
      # (the within-SS of the fit's own labels and centers, in double)
      wss <- as.vector(rowsum(rowSums((b$x - g$centers[g$cluster, , drop = FALSE])^2), g$cluster, reorder = TRUE))
      expect_equal(g$withinss[full], wss, tolerance = 1e-5, label = paste(lab, "withinss"))
    }
  }
})

test_that("cuda, rows ordered by cluster: weighted double fits equal the shuffled rows' fits bit for bit", {
  skip_if_no_gpu()
  for (cs in order_cases[c(2L, 4L)]) {
    b <- ordered_blobs(cs$n, cs$d, cs$k, seed = 60 + cs$d)
    set.seed(61)
    weights <- list(whole = sample.int(3L, cs$n, TRUE), fractional = stats::runif(cs$n, 0.5, 2))
    for (kind in names(weights)) {
      w <- as.numeric(weights[[kind]])
      fit <- function(rows) {
        withr::with_envvar(cs$env, suppressWarnings(
          gpu_kmeans(b$x[rows, , drop = FALSE], b$c0, iter.max = 20L, weights = w[rows], backend = "cuda")))
      }
      got <- fit(seq_len(cs$n))
      shuf <- fit(b$perm)
      back <- integer(cs$n)
      back[b$perm] <- shuf$cluster
      lab <- paste(cs$label, "weighted,", kind, "weights")
      expect_identical(got$cluster, back, label = paste(lab, "labels"))
      for (comp in c("centers", "withinss", "size", "iter"))
        expect_identical(got[[comp]], shuf[[comp]], label = paste(lab, comp))
    }
  }
})
