# CUDA engine, double precision: the certified filters of the assignment
# (src/cuda/detail/dfilter.cuh: distances on the tensor cores from a float
# image, a rigorous bound, exact distances for the points it cannot prove;
# small_dfilter.cuh: the same bound on float distances of the small-d
# kernel, d <= 8, from 2^18 rows) give the exact kernel's fit bit for bit.
# The internal switch GPUKMEANS_DFILTER (read at each fit): 0 the exact
# kernel, 1 the filter wherever it is sound, 2 its TF32-image variant (the
# small-d filter has none: 2 is 1 there); unset, by shape (k >= 128 on the
# tiled path; on the small-d one k (5d - 1.6) >= 800, so k >= 96 at d = 2).
# The points the bound cannot settle get exact distances: with
# GPUKMEANS_DF_PAIR (default: from 32 columns where there is no candidate
# pass) to their two nearest centers where the image proves every other
# center farther; with GPUKMEANS_DF_CAND (default: by shape, from k d =
# 16384) the rest to the few candidates whose image bound does not rule
# them out (df_candidates.cuh); with neither, and GPUKMEANS_DF_SETTLE
# (default: on, k <= 1024), to the centers near their lowest that float
# distances in the difference form do not rule out (df_settle.cuh); else
# to every center.  All give the exact kernel's fit.  The internal list's
# screen_exact is the share of point-iterations the filter left to exact
# distances, screen_every the share given every center's (-1: no filter).
local_edition(3)

fit_parts <- c("cluster", "centers", "withinss", "size", "iter", "totss")

# How the points the bound leaves are settled (see above; the default: by
# shape).
# (none: also without the filter's tree of a tile's two least values,
# GPUKMEANS_DF_TOP2, by shape where k <= 512 and the pair is off; cand and
# none without the settle pass, so that their shares compare)
# On an H100 / H200 the filter without the pair, and the candidate pass,
# run their products through wgmma (src/cuda/detail/wgmma.cuh); wgmma = "0"
# (GPUKMEANS_TC_WGMMA) keeps mma.sync, what other GPUs run.
screens <- list(both = c(pair = "1", cand = "1", top2 = NA, settle = "0", wgmma = NA),
                pair = c(pair = "1", cand = "0", top2 = NA, settle = "0", wgmma = NA),
                cand = c(pair = "0", cand = "1", top2 = NA, settle = "0", wgmma = NA),
                cand_mma = c(pair = "0", cand = "1", top2 = NA, settle = "0", wgmma = "0"),
                none = c(pair = "0", cand = "0", top2 = "0", settle = "0", wgmma = NA),
                settle = c(pair = "0", cand = "0", top2 = NA, settle = "1", wgmma = NA),
                default_mma = c(pair = NA, cand = NA, top2 = NA, settle = NA, wgmma = "0"),
                default = c(pair = NA, cand = NA, top2 = NA, settle = NA, wgmma = NA))

# (without the grid of cells, which replaces the small-d filter at d <= 2
# from k = 160: test-grid-cuda.R)
dfilter_fit <- function(x, centers, mode, iter.max = 30L, bounds = 0L, screen = screens$default) {
  withr::local_envvar(GPUKMEANS_GRID = "0", GPUKMEANS_ORDER = "0", GPUKMEANS_DFILTER = mode, GPUKMEANS_DF_PAIR = screen[["pair"]],
                      GPUKMEANS_DF_CAND = screen[["cand"]], GPUKMEANS_DF_TOP2 = screen[["top2"]],
                      GPUKMEANS_DF_SETTLE = screen[["settle"]], GPUKMEANS_TC_WGMMA = screen[["wgmma"]])
  gpukmeans:::gk_fit_cpp(as.matrix(x), list(as.matrix(centers)), as.integer(iter.max), FALSE, "cuda", 0L, 0L,
                         FALSE, NULL, Inf, list(tuning = c(0L, 0L, 0L, as.integer(bounds))))
}

# Modes 1 (under every screen where d > 8), 2 and the default give mode 0's fit, plain
# and with bounds; the filter ran when `filtered` (its exact share in
# [0, 1)); returns mode 1's shares (exact, and every center's) by screen.
expect_dfilter_exact <- function(x, centers, iter.max = 30L, filtered = TRUE, label = "") {
  shares <- list()
  for (bounds in c(1L, 0L)) {
    ref <- dfilter_fit(x, centers, "0", iter.max, bounds)
    expect_identical(ref$screen_exact, -1, label = paste(label, "mode 0 runs no filter"))
    for (mode in c("1", "2", NA)) for (sc in if (identical(mode, "1") && ncol(x) > 8) names(screens) else "default") {
      got <- dfilter_fit(x, centers, mode, iter.max, bounds, screens[[sc]])
      for (comp in fit_parts)
        expect_identical(got[[comp]], ref[[comp]],
                         label = paste(label, "mode", mode, "bounds", bounds, "screen", sc, comp))
      if (identical(mode, "1")) {
        if (filtered && !smem_capped()) {  # (helper-gpu.R: the filter's kernels may not fit a cap)
          expect_gte(got$screen_exact, 0)
          expect_lt(got$screen_exact, 1)
          expect_gte(got$screen_every, 0)
          expect_lte(got$screen_every, got$screen_exact)
        } else if (!filtered) {
          expect_identical(got$screen_exact, -1, label = paste(label, "outside the filter's range"))
        }
        if (bounds == 0L) shares[[sc]] <- c(exact = got$screen_exact, every = got$screen_every)
      }
    }
  }
  invisible(shares)
}

test_that("cuda dfilter: blobs and uniform data at several d and k", {
  skip_if_no_gpu()
  set.seed(1)
  # (d = 520: the exact pass reads its points' rows from x, 4 points a block;
  # k = 700: the settle pass's lists sorted by blocks of 1024 threads; d =
  # 24: the settle pass's images in registers for up to 32 columns, two
  # chunks of the packed image)
  for (sh in list(c(20000, 3, 256), c(20000, 16, 128), c(8000, 64, 300), c(5000, 130, 129), c(4099, 300, 200),
                  c(2000, 520, 130), c(6000, 16, 700), c(6000, 24, 160))) {
    x <- make_blobs(sh[1], sh[2], sh[3] %/% 2, sd = 2, spread = 10)
    # (d = 3 on 20000 rows runs the persistent small-d kernel, which has no filter)
    tiled <- sh[2] > 8
    shs <- expect_dfilter_exact(x, x[seq_len(sh[3]), , drop = FALSE], 40L, filtered = tiled,
                                label = paste(sh, collapse = "x"))
    if (tiled && !smem_capped()) expect_lt(shs$default[["exact"]], 0.2)
    # (up to 32 columns the settle pass ran: it leaves fewer points to every
    # center than the screen without it)
    if (tiled && sh[2] <= 32 && !smem_capped()) {
      expect_gt(shs$none[["every"]], 0, label = paste(sh, collapse = "x"))
      expect_lt(shs$settle[["every"]], shs$none[["every"]], label = paste(sh, collapse = "x"))
    }
    u <- matrix(runif(sh[1] * sh[2]), ncol = sh[2])
    expect_dfilter_exact(u, u[seq_len(sh[3]), , drop = FALSE], 15L, filtered = tiled,
                         label = paste("uniform", paste(sh, collapse = "x")))
  }
})

test_that("cuda dfilter: ties, duplicates, bisectors and empty clusters", {
  skip_if_no_gpu()
  # in 16 columns, and in 40 (from 32 columns on, the filter keeps each
  # listed point's two nearest centers and k_df_pair decides most ties)
  for (extra in c(0L, 24L)) {
    set.seed(2)
    wide <- function(m) cbind(m, matrix(0, nrow(m), extra))
    g <- as.matrix(expand.grid(0:12, 0:12, 0:12)) + 0  # a lattice: many exact ties
    g16 <- wide(cbind(g, matrix(0, nrow(g), 13)))       # the same ties in more columns (the tiled path)
    lab <- paste(ncol(g16), "columns:")
    expect_dfilter_exact(g16, g16[seq(1, nrow(g16), length.out = 150), ], 40L, label = paste(lab, "lattice"))
    xd <- rbind(g16, g16)                               # every point twice
    expect_dfilter_exact(xd, xd[seq(3, nrow(g16), length.out = 140), ], 40L, label = paste(lab, "duplicates"))
    # points on the bisector of two centers, the other centers far away
    b <- wide(cbind(0, matrix(rnorm(6000 * 15), ncol = 15)))
    c0 <- wide(rbind(c(-1, rep(0, 15)), c(1, rep(0, 15)), matrix(rnorm(128 * 16, 50), ncol = 16)))
    expect_dfilter_exact(b, c0, 20L, label = paste(lab, "bisector"))
    # centers far from every point: their clusters empty at once (NaN centers)
    y <- wide(make_blobs(10000, 16, 60, sd = 1, spread = 5))
    c1 <- rbind(y[1:120, ], wide(matrix(1e6 + seq_len(16 * 10), ncol = 16, byrow = TRUE)))
    expect_dfilter_exact(y, c1, 30L, label = paste(lab, "empty clusters"))
    # a starting center outside the float image's box: that iteration exact
    c3 <- rbind(y[1:120, ], 1e12)
    expect_dfilter_exact(y, c3, 10L, label = paste(lab, "a center far outside"))
    # two starting centers in each blob: many points between two close centers
    z <- wide(make_blobs(8000, 16, 100, sd = 1, spread = 20))
    expect_dfilter_exact(z, z[1:200, ], 30L, label = paste(lab, "two centers a blob"))
  }
})

test_that("cuda dfilter: points between several close centers get a few candidates' exact distances", {
  skip_if_no_gpu()
  # four starting centers in each blob, the blobs far apart for their size
  # (the bound's slack grows with the data's spread): the bound settles few
  # points of a blob, the pair (40 columns) not those near three or four
  # centers; the candidate pass and the settle pass leave almost none to
  # every center's exact distance
  for (extra in c(0L, 24L)) {
    set.seed(5)
    z <- make_blobs(8000, 16, 100, sd = 1, spread = 200)
    z <- cbind(z, matrix(0, nrow(z), extra))
    sh <- expect_dfilter_exact(z, z[1:400, ], 30L, label = paste(ncol(z), "columns: four centers a blob"))
    if (smem_capped()) next
    expect_gt(sh$none[["every"]], 0.05)
    expect_identical(sh$none[["every"]], sh$none[["exact"]])
    for (sc in c("both", "cand", "settle", if (extra == 0) "default"))
      expect_lt(sh[[sc]][["every"]], sh$none[["every"]] / 10, label = sc)
    # (by shape, k d = 6400 and 16000 here: no candidate pass; the pair from
    # 32 columns, else the settle pass)
    expect_identical(sh$default[["every"]], if (extra > 0) sh$pair[["every"]] else sh$settle[["every"]])
    for (sc in names(screens))  # (the same points listed: the screens only settle them)
      expect_identical(sh[[sc]][["exact"]], sh$none[["exact"]], label = sc)
    if (extra > 0) expect_lt(sh$pair[["every"]], sh$none[["every"]])
  }
})

test_that("cuda dfilter: more tied candidates than the candidate pass keeps go to every center", {
  skip_if_no_gpu()
  # twenty copies of one starting center: the points nearest to it have 20
  # equal candidates, more than the 16 the pass keeps (the copies after the
  # first lose their points at once: NaN centers from the second iteration)
  set.seed(7)
  x <- make_blobs(6000, 40, 30, sd = 1, spread = 20)
  c0 <- rbind(x[rep(1, 20), ], x[2:140, ])
  sh <- expect_dfilter_exact(x, c0, 20L, label = "twenty equal centers")
  skip_if(smem_capped(), "the filter's kernels need more shared memory than the run allows")
  expect_gt(sh$cand[["every"]], 0)
  expect_lte(sh$cand[["every"]], sh$none[["every"]])
  # (the settle pass keeps 16 near centers a point: more go to every center)
  expect_gt(sh$settle[["every"]], 0)
  expect_lte(sh$settle[["every"]], sh$none[["every"]])
})

test_that("cuda dfilter: offsets and scales, and the exact fallback beyond them", {
  skip_if_no_gpu()
  set.seed(3)
  x <- make_blobs(6000, 16, 80, sd = 2, spread = 10)
  c0 <- x[1:160, ]
  expect_dfilter_exact(x + 1e8, c0 + 1e8, 20L, label = "offset 1e8")
  expect_dfilter_exact(x * 1e-3 + 1e4, c0 * 1e-3 + 1e4, 20L, label = "offset 1e4, spread 1e-3")
  for (sc in c(1e-20, 1e20)) expect_dfilter_exact(x * sc, c0 * sc, 20L, label = paste("scale", sc))
  x40 <- cbind(x, x[, 1:16] * 0.5, 0, 0, 0, 0, 0, 0, 0, 0)  # 40 columns: k_df_pair's scales too
  for (sc in c(1e-20, 1, 1e20))
    expect_dfilter_exact((x40 + 1e3) * sc, (x40[1:160, ] + 1e3) * sc, 20L, label = paste("40 columns, scale", sc))
  # beyond 2^400 or below 2^-400 the bound is not used: the exact kernel
  for (sc in c(1e-150, 1e140)) expect_dfilter_exact(x * sc, c0 * sc, 10L, filtered = FALSE, label = paste("scale", sc))
})

test_that("cuda dfilter: the fit equals the CPU engine's and stats' (labels, iter)", {
  skip_if_no_gpu()
  x <- simulate_blobs(20000, 24, 150, seed = 4)
  set.seed(4)
  c0 <- x[sample.int(20000, 150), ]
  g <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 50, backend = "cuda"))
  p <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 50, backend = "cpu"))
  s <- suppressWarnings(stats::kmeans(x, c0, iter.max = 50, algorithm = "Lloyd"))
  expect_identical(g$cluster, p$cluster)
  expect_identical(g$cluster, s$cluster)
  expect_identical(g$iter, s$iter)
  expect_equal(unname(g$centers), unname(s$centers), tolerance = 1e-12)
  # options(gpukmeans.device_memory) leaves no room for the filter's image:
  # the exact kernel, the same fit
  withr::local_options(gpukmeans.device_memory = 20000 * 24 * 8 + 20000 * 4 + 2^20)
  m <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 50, backend = "cuda"))
  expect_identical(unclass(m)[c("cluster", "centers", "withinss", "iter")], unclass(g)[c("cluster", "centers", "withinss", "iter")])
})

# The small-d filter runs in the graph batches of 2^18 rows or more (fewer
# rows: the persistent kernel, exact).
small_n <- 262144L

test_that("cuda dfilter, small d: blobs and uniform data at d = 1 .. 8", {
  skip_if_no_gpu()
  set.seed(5)
  for (sh in list(c(1, 64), c(2, 100), c(3, 256), c(5, 40), c(8, 128))) {
    d <- sh[1]
    k <- sh[2]
    x <- make_blobs(small_n, d, k %/% 2, sd = 1, spread = 20)
    share <- expect_dfilter_exact(x, x[seq_len(k), , drop = FALSE], 15L, label = paste("small d", d, "k", k))
    expect_lt(share$default[["exact"]], 0.2)
    expect_identical(share$default[["every"]], share$default[["exact"]])  # (the small-d filter: every center)
    u <- matrix(runif(small_n * d), ncol = d)
    expect_dfilter_exact(u, u[seq_len(k), , drop = FALSE], 8L, label = paste("small d uniform", d, "k", k))
  }
  # below 2^18 rows (the persistent kernel), and by shape below 96 centers
  # at d = 2 (and 44 at d = 4): exact
  x <- make_blobs(small_n - 1L, 2, 20, sd = 1, spread = 20)
  expect_identical(dfilter_fit(x, x[1:40, ], "1", 10L)$screen_exact, -1)
  x <- make_blobs(small_n, 4, 30, sd = 1, spread = 20)
  expect_identical(dfilter_fit(x[, 1:2], x[1:95, 1:2], NA, 10L)$screen_exact, -1)
  expect_gte(dfilter_fit(x[, 1:2], x[1:96, 1:2], NA, 10L)$screen_exact, 0)
  expect_identical(dfilter_fit(x, x[1:43, ], NA, 10L)$screen_exact, -1)
  expect_gte(dfilter_fit(x, x[1:44, ], NA, 10L)$screen_exact, 0)
})

test_that("cuda dfilter, small d: ties, duplicates, bisectors, empty clusters, far centers", {
  skip_if_no_gpu()
  set.seed(6)
  g <- as.matrix(expand.grid(0:63, 0:63, 0:63)) + 0  # 2^18 points of a lattice: exact ties
  expect_dfilter_exact(g, g[seq(1, nrow(g), length.out = 150), ], 30L, label = "small d lattice")
  gd <- rbind(g, g)                                   # every point twice
  expect_dfilter_exact(gd, gd[seq(3, nrow(g), length.out = 140), ], 30L, label = "small d duplicates")
  # duplicate centers: every point ties between two
  c2 <- g[rep(seq(5, nrow(g), length.out = 40), each = 2), ]
  expect_dfilter_exact(g, c2, 10L, label = "small d duplicate centers")
  # points on the bisector of two centers, and 2^-10 .. 2^-50 off it
  b <- cbind(0, rnorm(small_n))
  b[seq(2, small_n, 2), 1] <- 2^-(10 + seq_len(small_n / 2) %% 41) * c(-1, 1)
  c0 <- rbind(c(-1, 0), c(1, 0), matrix(rnorm(128 * 2, 50), ncol = 2))
  expect_dfilter_exact(b, c0, 20L, label = "small d bisector")
  # centers far from every point: their clusters empty at once (NaN centers)
  y <- make_blobs(small_n, 4, 60, sd = 1, spread = 5)
  c1 <- rbind(y[1:120, ], matrix(1e6 + seq_len(4 * 10), ncol = 4, byrow = TRUE))
  expect_dfilter_exact(y, c1, 30L, label = "small d empty clusters")
  # a starting center outside the float image's box: that iteration exact
  c3 <- rbind(y[1:60, ], 1e12)
  expect_dfilter_exact(y, c3, 10L, label = "small d a center far outside")
  # two starting centers in each blob: many points between two close centers
  z <- make_blobs(small_n, 2, 100, sd = 1, spread = 20)
  expect_dfilter_exact(z, z[1:200, ], 30L, label = "small d two centers a blob")
})

test_that("cuda dfilter, small d: offsets and scales, and the exact fallback beyond them", {
  skip_if_no_gpu()
  set.seed(7)
  x <- make_blobs(small_n, 3, 40, sd = 2, spread = 10)
  c0 <- x[1:80, ]
  expect_dfilter_exact(x + 1e8, c0 + 1e8, 20L, label = "small d offset 1e8")
  expect_dfilter_exact(x * 1e-3 + 1e4, c0 * 1e-3 + 1e4, 20L, label = "small d offset 1e4, spread 1e-3")
  for (sc in c(1e-20, 1e20, 1e-110, 1e110))
    expect_dfilter_exact(x * sc, c0 * sc, 10L, label = paste("small d scale", sc))
  for (sc in c(1e-150, 1e140))
    expect_dfilter_exact(x * sc, c0 * sc, 5L, filtered = FALSE, label = paste("small d scale", sc))
})

test_that("cuda dfilter, small d: the fit equals stats' (labels, iter, centers), and predict's labels", {
  skip_if_no_gpu()
  x <- simulate_blobs(small_n, 2, 60, seed = 8)
  set.seed(8)
  c0 <- x[sample.int(small_n, 100), ]
  g <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 50, backend = "cuda"))
  s <- suppressWarnings(stats::kmeans(x, c0, iter.max = 50, algorithm = "Lloyd"))
  expect_identical(g$cluster, s$cluster)
  expect_identical(g$iter, s$iter)
  expect_equal(unname(g$centers), unname(s$centers), tolerance = 1e-12)
  # predict: new points between the centers, exact and filtered alike
  y <- x + matrix(rnorm(length(x), sd = 0.5), ncol = 2)
  withr::with_envvar(c(GPUKMEANS_DFILTER = "0"), exact <- predict(g, y, backend = "cuda"))
  withr::with_envvar(c(GPUKMEANS_DFILTER = "1"), filtered <- predict(g, y, backend = "cuda"))
  expect_identical(filtered, exact)
  expect_identical(filtered, predict(g, y, backend = "cpu"))
})
