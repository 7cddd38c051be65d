# The labels' destination (src/labels.h, Engine::lloyd's `into`): the fit
# driver gives the result's integer vector to each start's engine while it
# does not hold the best start's labels, and copies the best's labels there
# where they landed elsewhere.  Whichever start is best, and in whatever
# order better starts come, the result's cluster must be that start's
# labels.  One body, run on each engine and way of fitting.

labels_out_configs <- list(
  "cpu, double" = list(engine = "cpu", single = FALSE),
  "cpu, single" = list(engine = "cpu", single = TRUE),
  "cpu, spherical" = list(engine = "cpu", single = FALSE, spherical = TRUE),
  "cuda, double" = list(engine = "cuda", single = FALSE),
  "cuda, single" = list(engine = "cuda", single = TRUE),
  # x streamed from host memory: the fit runs step by step (lloyd_parts)
  "cuda, streamed" = list(engine = "cuda", single = FALSE,
                          options = list(gpukmeans.stream = TRUE, gpukmeans.stream_rows = 1000)),
  "cuda, two devices" = list(engine = "cuda", single = FALSE, device = c(0L, 1L))
)

# gk_fit_cpp over a list of starts (k x d center matrices), 3 iterations
fit_starts_raw <- function(x, starts, cfg) {
  if (length(cfg$options)) withr::local_options(cfg$options)
  gpukmeans:::gk_fit_cpp(x, starts, 3L, cfg$single, cfg$engine, 0L, if (is.null(cfg$device)) 0L else cfg$device, FALSE, NULL, Inf,
                         gpukmeans:::cuda_options(), isTRUE(cfg$spherical))
}

for (cfg_name in names(labels_out_configs)) {
  cfg <- labels_out_configs[[cfg_name]]
  test_that(sprintf("the best start's labels are the result's, wherever the best start lies [%s]", cfg_name), {
    if (cfg$engine == "cuda") skip_if_no_gpu()
    if (length(cfg$device) > 1L)
      skip_if_not(nrow(gpukmeans::gpukmeans_info()$devices) >= 2L, "fewer than 2 CUDA devices")
    x <- simulate_blobs(6000, 3, 5, sd = 1, spread = 12, seed = 5)
    truth <- attr(x, "centers")
    attributes(x) <- list(dim = dim(x))
    if (isTRUE(cfg$spherical)) {
      x <- x + 20  # directions that differ
      x <- x / sqrt(rowSums(x^2))
      truth <- truth + 20
      truth <- truth / sqrt(rowSums(truth^2))
    }
    # three starts that end in three different partitions after 3
    # iterations: the blobs' own centers, two centers in one blob (none in
    # another), all five near one blob; named by their tot.withinss
    fair <- truth
    fair[5, ] <- truth[4, ] + 0.5
    poor <- truth[rep(1L, 5L), ] + outer(seq(0, 0.04, length.out = 5), rep(1, 3))
    starts <- list(truth, fair, poor)
    alone <- lapply(starts, function(s) fit_starts_raw(x, list(s), cfg))
    wss <- vapply(alone, function(f) sum(f$withinss), numeric(1))
    # (the test means something only where the three differ)
    expect_identical(length(unique(wss)), 3L)
    rank <- order(wss)
    good <- starts[[rank[1]]]
    fair <- starts[[rank[2]]]
    poor <- starts[[rank[3]]]
    alone <- alone[rank]
    wss <- setNames(wss[rank], c("good", "fair", "poor"))
    names(alone) <- names(wss)
    expect_false(identical(alone$good$cluster, alone$fair$cluster))
    expect_false(identical(alone$good$cluster, alone$poor$cluster))
    orders <- list(c("good", "poor", "fair"),   # the best first: it stays in the destination
                   c("poor", "good", "fair"),   # the best in a buffer of its own: copied at the end
                   c("poor", "fair", "good"),   # each start better: the destination, a buffer, the destination
                   c("fair", "poor", "good"),   # a worse start in a buffer, then the best in one too
                   c("poor", "fair", "poor", "good", "fair"))
    for (o in orders) {
      f <- fit_starts_raw(x, lapply(o, function(s) get(s)), cfg)
      best <- match("good", o)
      expect_identical(f$best_start, best)
      expect_identical(f$cluster, alone$good$cluster)
      expect_identical(f$size, alone$good$size)
      expect_identical(f$start_tot_withinss, unname(wss[o]))
    }
  })
}

test_backends("a destination of 32 MiB or more holds stats' labels", function(backend) {
  n <- 2^23 + 5  # (32 MiB of labels and 20 bytes)
  set.seed(3)
  x <- matrix(c(rnorm(n %/% 2, 0), rnorm(n - n %/% 2, 6)), n, 1)
  c0 <- x[c(1, 2, n), , drop = FALSE]
  # (3 iterations do not converge here: stats' warning, from both)
  expect_warning(ref <- kmeans(x, c0, iter.max = 3, algorithm = "Lloyd"), "did not converge in 3 iterations")
  expect_warning(got <- gpu_kmeans(x, c0, iter.max = 3), "did not converge in 3 iterations")
  expect_identical(got$cluster, ref$cluster)
  expect_identical(got$iter, ref$iter)
})
