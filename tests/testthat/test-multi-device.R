# Several devices of one host (gpu_kmeans(device = c(0, 1)) or "all"): the
# rows split into contiguous blocks, one engine per block, combined exactly
# (src/multi_engine.h).  Here on the CPU engine (the internal option
# gpukmeans.cpu_parts makes the composite over CPU engines), and on a GPU
# with a device repeated (device = c(0, 0): two engines on one GPU), which
# must give the fit of device = 0 bit for bit.

# A fit's components and its warnings, without the attributes that say how
# it ran (timing, device).
fit_value <- function(f) {
  v <- unclass(f$value)
  attr(v, "timing") <- attr(v, "device") <- NULL
  list(value = v, warnings = f$warnings, seed = f$seed)
}

# gpu_kmeans(...) after set.seed(seed), with its warnings and the generator
# after it; parts: the composite over that many CPU engines (NULL: one engine).
fit_with <- function(parts, seed, ...) {
  withr::local_options(gpukmeans.cpu_parts = parts)
  set.seed(seed)
  f <- with_warnings(gpu_kmeans(...))
  f$seed <- get_seed()
  f
}

# The cases every split must fit alike: given centers (one of them far from
# every point: an empty cluster), random starts with nstart > 1, k-means++
# and k-means||, a fit that does not converge.
multi_cases <- function(x) {
  far <- x[1:5, ]
  far[5, ] <- 1e3
  list(given = list(x, x[c(1, 50, 100, 150, 200), ]),
       empty = list(x, far, iter.max = 50),
       random = list(x, 5, nstart = 3),
       kmeanspp = list(x, 5, nstart = 2, init = "kmeans++"),
       kmeanspar = list(x, 6, init = "kmeans||"),
       short = list(x, 7, iter.max = 2))
}

# Nearest center (ties to the lowest) in R: what predict() must give.
predict.gk_one <- function(f, x) {
  d2 <- sapply(seq_len(nrow(f$centers)), function(c) rowSums((x - rep(f$centers[c, ], each = nrow(x)))^2))
  max.col(-d2, ties.method = "first")
}

multi_data <- function() {
  set.seed(161)
  make_blobs(2003, 3, 5, sd = 3, spread = 10) + 100
}

test_that("the composite over 2 to 4 CPU engines gives the same fit for any split, in double and single precision", {
  x <- multi_data()
  for (precision in c("double", "single")) {
    cases <- multi_cases(x)
    for (nm in names(cases)) {
      args <- c(cases[[nm]], precision = precision, backend = "cpu")
      ref <- do.call(fit_with, c(list(2L, 5L), args))
      expect_match(attr(ref$value, "device"), "^2 parts: CPU")
      for (P in 3:4) {
        got <- do.call(fit_with, c(list(P, 5L), args))
        expect_identical(fit_value(got), fit_value(ref), info = sprintf("%s, %s, %d parts", nm, precision, P))
        expect_match(attr(got$value, "device"), sprintf("^%d parts: CPU", P))
      }
      # the one-engine fit: the same labels, sizes, iterations, totss,
      # warnings and random numbers; the centers and within-SS of the CPU
      # engine's own Lloyd (not step by step) agree to rounding (on the CUDA
      # engine they are the same bits: the GPU tests below)
      one <- do.call(fit_with, c(list(NULL, 5L), args))
      info <- sprintf("%s, %s", nm, precision)
      expect_identical(one$value$cluster, ref$value$cluster, info = info)
      expect_identical(one$value$size, ref$value$size, info = info)
      expect_identical(one$value$iter, ref$value$iter, info = info)
      expect_identical(one$value$ifault, ref$value$ifault, info = info)
      expect_identical(one$value$totss, ref$value$totss, info = info)
      expect_identical(one$warnings, ref$warnings, info = info)
      expect_identical(one$seed, ref$seed, info = info)
      expect_equal(one$value$centers, ref$value$centers, tolerance = 1e-12, info = info)
      expect_equal(one$value$withinss, ref$value$withinss, tolerance = 1e-10, info = info)
    }
  }
  # the cases do what they are for
  e <- fit_with(3L, 1L, x, multi_cases(x)$empty[[2]], iter.max = 50, backend = "cpu")
  expect_true(any(grepl("empty cluster", e$warnings)))
  expect_true(any(e$value$size == 0L))
  s <- fit_with(3L, 1L, x, 7, iter.max = 2, backend = "cpu")
  expect_true(any(grepl("did not converge", s$warnings)))
  expect_identical(s$value$ifault, 2L)
})

test_that("the composite's Lloyd is lloyd_parts() over one engine, bit for bit (what one CUDA engine computes)", {
  x <- multi_data()
  c0 <- x[c(3, 30, 300, 1000, 2000), ]
  ref <- gpukmeans:::gk_fit_parts_cpp(x, c0, 100L, 1L, FALSE, "cpu", 2L, 0L)
  for (P in 2:4) {
    f <- fit_with(P, 1L, x, c0, iter.max = 100, backend = "cpu")$value
    expect_identical(unname(f$centers), ref$centers)
    expect_identical(f$withinss, ref$withinss)
    expect_identical(unname(f$cluster), ref$cluster)
    expect_identical(f$iter, ref$iter)
  }
  # more parts than rows: the empty blocks get no engine
  small <- fit_with(9L, 1L, x[1:5, ], x[1:2, ], backend = "cpu")$value
  expect_identical(small$cluster, fit_with(2L, 1L, x[1:5, ], x[1:2, ], backend = "cpu")$value$cluster)
})

test_that("k-means++ and k-means|| on the composite choose one engine's rows, in both precisions", {
  x <- multi_data()
  k <- 6L
  L <- gpukmeans:::gk_greedy_candidates(k)
  set.seed(3)
  starts <- list(list(method = "kmeans++", k = k, unif = runif(1 + (k - 1) * L), L = L),
                 list(method = "kmeans||", k = k, seed = c(12345, 67890)),
                 list(method = "kmeans||", k = 40L, seed = c(1, 2)))
  fit <- function(x, device, single) {
    gpukmeans:::gk_fit_cpp(x, starts, 100L, single, "cpu", 2L, as.integer(device), FALSE, NULL, Inf, list())
  }
  # (x far from the origin, with details a float would lose: initialisations
  # on data other than the engine's choose other rows)
  set.seed(4)
  far <- make_blobs(2003, 3, 5, sd = 1e-3, spread = 1e-2) + 1e4
  for (data in list(x, far)) for (single in c(FALSE, TRUE)) {
    one <- fit(data, 0, single)
    expect_length(one$start_init_rows[[3]], 40L)
    for (P in 2:4) {
      got <- fit(data, rep(0, P), single)
      expect_identical(got$start_init_rows, one$start_init_rows)
      expect_identical(got$cluster, fit(data, rep(0, 2), single)$cluster)
    }
  }
  # fewer distinct points than centers: the same error
  dup <- x[rep(1:3, 100), ]
  for (init in c("kmeans++", "kmeans||")) {
    e1 <- tryCatch(fit_with(NULL, 1L, dup, 4, init = init, backend = "cpu"), error = conditionMessage)
    e3 <- tryCatch(fit_with(3L, 1L, dup, 4, init = init, backend = "cpu"), error = conditionMessage)
    expect_match(e1, "more cluster centers than distinct data points")
    expect_identical(e3, e1)
  }
})

test_that("predict() and distance = \"cosine\" on a fit over several engines", {
  x <- multi_data()
  f <- fit_with(3L, 2L, x, 5, nstart = 2, backend = "cpu")$value
  expect_identical(predict(f, x), f$cluster)
  expect_identical(predict(f, x[10:20, ]), f$cluster[10:20])
  # predict over several engines (their assign(), each on its rows)
  newx <- x[c(2003:1, 5:9), ] + 0.5
  ref <- predict(f, newx)
  expect_identical(ref, predict.gk_one(f, newx))
  for (P in c(2L, 4L, 40L)) {
    withr::with_options(list(gpukmeans.cpu_parts = P), expect_identical(predict(f, newx), ref))
  }
  withr::with_options(list(gpukmeans.cpu_parts = 3L), expect_identical(predict(f, newx[1:2, , drop = FALSE]), ref[1:2]))
  cs <- lapply(2:4, function(P) fit_value(fit_with(P, 4L, x - 100, 4, distance = "cosine", backend = "cpu")))
  expect_identical(cs[[2]], cs[[1]])
  expect_identical(cs[[3]], cs[[1]])
  one <- fit_with(NULL, 4L, x - 100, 4, distance = "cosine", backend = "cpu")$value
  expect_identical(one$cluster, cs[[1]]$value$cluster)
  expect_equal(one$totss, cs[[1]]$value$totss, tolerance = 1e-12)
})

test_that("observation weights and the quality indices are refused on several engines", {
  x <- multi_data()
  w <- rep(c(1, 2), length.out = nrow(x))
  expect_error(fit_with(2L, 1L, x, 3, weights = w, backend = "cpu"), class = "gpukmeans_unsupported")
  expect_error(gpu_kmeans(x, 3, weights = w, device = c(0, 1), backend = "auto"),
               "not supported on several devices", class = "gpukmeans_unsupported")
})

test_that("device: several ordinals or \"all\", with clear errors for bad values", {
  x <- multi_data()
  bad <- list(NA, NA_real_, -1, 1.5, Inf, "gpu", "ALL", integer(0), NULL, c(0, NA), c(0, -2), list(0), factor(0),
              TRUE, c("all", "all"))
  for (b in bad)
    expect_error(gpu_kmeans(x, 3, device = b), "'device' must be non-negative whole numbers", info = deparse(b))
  expect_error(gpu_kmeans(x, 3, device = c(0, 2.5)), "element 2 is 2.5")
  expect_error(gpu_kmeans(x, 3, device = c(0, 1), backend = "cpu"),
               "several GPUs, but backend = \"cpu\" runs on the CPU")
  expect_error(gpu_kmeans(x, 3, device = c(0, 0), backend = "cpu"), "backend = \"cpu\"")
  # the sweep and the silhouette run on one device: several given are an
  # error; from options(gpukmeans.device =), the first is taken
  expect_error(gpu_kmeans_sweep(x, 2:3, device = c(0, 1)), "single non-negative whole number")
  withr::with_options(list(gpukmeans.device = c(0L, 1L)), {
    expect_s3_class(gpu_kmeans_sweep(x, 2:3, backend = "cpu"), "gpu_kmeans_sweep")
    f <- gpu_kmeans(x, 3, backend = "cpu", device = 0)
    expect_s3_class(gpu_silhouette(f, x, backend = "cpu"), "silhouette")
  })
  # one device behaves as before
  expect_s3_class(gpu_kmeans(x, 3, device = 0, backend = "cpu"), "gpu_kmeans")
  expect_identical(gpukmeans:::check_devices(c(1, 0, 1)), c(1L, 0L, 1L))
  expect_identical(gpukmeans:::check_devices(3), 3L)
  p <- gpukmeans:::cuda_probe()
  usable <- if (isTRUE(p$built) && p$device_count > 0L) as.integer(p$devices$id[p$devices$usable %in% TRUE])
  expect_identical(gpukmeans:::check_devices("all"), if (length(usable)) usable else 0L)
  # an ordinal no device has: an error with backend = "cuda", and with
  # several devices when there is a GPU; the CPU fallback when there is none
  expect_error(gpu_kmeans(x, 3, device = c(0, 99), backend = "cuda"), "device 99|not available|without CUDA|no usable")
  if (!has_gpu()) {
    a <- suppressMessages(gpu_kmeans(x, 3, device = c(0, 1), backend = "auto"))
    expect_identical(attr(a, "backend"), "cpu")
    a <- suppressMessages(gpu_kmeans(x, 3, device = "all", backend = "auto"))
    expect_identical(attr(a, "backend"), "cpu")
  } else {
    expect_error(gpu_kmeans(x, 3, device = c(0, 99), backend = "auto"), "device 99")
  }
})

# ---- on a GPU: a device repeated is one GPU's fit, bit for bit ---------------

gpu_fit <- function(device, seed, ...) {
  set.seed(seed)
  f <- with_warnings(gpu_kmeans(..., backend = "cuda", device = device))
  f$seed <- get_seed()
  f
}

test_that("device = c(0, 0) and c(0, 0, 0) give the fit of device = 0 bit for bit [cuda]", {
  skip_if_no_gpu()
  x <- multi_data()
  for (precision in c("double", "single")) {
    cases <- multi_cases(x)
    for (nm in names(cases)) {
      args <- c(cases[[nm]], precision = precision)
      one <- do.call(gpu_fit, c(list(0L, 5L), args))
      for (dev in list(c(0L, 0L), c(0L, 0L, 0L))) {
        got <- do.call(gpu_fit, c(list(dev, 5L), args))
        expect_identical(fit_value(got), fit_value(one), info = sprintf("%s, %s, %d engines", nm, precision, length(dev)))
        expect_match(attr(got$value, "device"), sprintf("^%d engines on 1 GPU: 0 ", length(dev)))
        expect_identical(attr(got$value, "backend"), "cuda")
      }
    }
  }
  # totss is the CPU engine's sum, on one GPU and on several
  f <- gpu_fit(c(0L, 0L), 1L, x, 4)$value
  expect_identical(f$totss, gpu_kmeans(x, 4, backend = "cpu")$totss)
  # predict, on one device and on the device repeated
  expect_identical(predict(f, x), f$cluster)
  for (dev in list(c(0L, 0L), c(0L, 0L, 0L))) {
    withr::with_options(list(gpukmeans.device = dev), expect_identical(predict(f, x, backend = "cuda"), f$cluster))
  }
})

test_that("the small-d filter in each part's graph batches: several engines give one GPU's fit and stats' [cuda]", {
  skip_if_no_gpu()
  # 2^18 rows or more a part (graph batches, not the persistent kernel),
  # d = 2 and k = 120: the certified filter by shape in every part
  set.seed(162)
  x <- make_blobs(2^19 + 7, 2, 50, sd = 1, spread = 20)
  c0 <- x[1:120, ]
  one <- gpu_fit(0L, 1L, x, c0, iter.max = 20)
  devs <- list(c(0L, 0L))
  if (length(gpukmeans:::check_devices("all")) > 1L) devs <- c(devs, list(c(0L, 1L)))
  for (dev in devs)
    expect_identical(fit_value(gpu_fit(dev, 1L, x, c0, iter.max = 20)), fit_value(one), info = deparse(dev))
  s <- suppressWarnings(stats::kmeans(x, c0, iter.max = 20, algorithm = "Lloyd"))
  expect_identical(one$value$cluster, s$cluster)
  expect_identical(one$value$iter, s$iter)
  expect_equal(unname(one$value$centers), unname(s$centers), tolerance = 1e-12)
})

test_that("k-means++ and k-means|| on repeated devices choose device 0's rows, in both precisions [cuda]", {
  skip_if_no_gpu()
  x <- multi_data()
  k <- 6L
  L <- gpukmeans:::gk_greedy_candidates(k)
  set.seed(3)
  starts <- list(list(method = "kmeans++", k = k, unif = runif(1 + (k - 1) * L), L = L),
                 list(method = "kmeans||", k = k, seed = c(12345, 67890)),
                 list(method = "kmeans||", k = 40L, seed = c(1, 2)))
  fit <- function(x, device, single) {
    gpukmeans:::gk_fit_cpp(x, starts, 100L, single, "cuda", 2L, as.integer(device), FALSE, NULL, Inf,
                           gpukmeans:::cuda_options())
  }
  set.seed(4)
  far <- make_blobs(2003, 3, 5, sd = 1e-3, spread = 1e-2) + 1e4
  for (data in list(x, far)) for (single in c(FALSE, TRUE)) {
    one <- fit(data, 0, single)
    for (P in 2:3) {
      got <- fit(data, rep(0, P), single)
      expect_identical(got$start_init_rows, one$start_init_rows, info = sprintf("single = %s, %d engines", single, P))
      expect_identical(got[c("cluster", "centers", "withinss", "size", "iter", "totss")],
                       one[c("cluster", "centers", "withinss", "size", "iter", "totss")])
    }
  }
})

test_that("k-means++ and k-means|| together over blocks of whole tree nodes: small data, empty blocks, the first pick and the degenerate rule in any block [cuda]", {
  skip_if_no_gpu()
  # which way the composite's initialisation ran
  stages_of <- function(expr) with_stages(expr, "^init_(engine|pp|par)_")
  together <- c("kmeans++" = "init_pp_together", "kmeans||" = "init_par_together")
  devs <- list(c(0L, 0L), c(0L, 0L, 0L), c(0L, 0L, 0L, 0L))
  if (length(gpukmeans:::check_devices("all")) > 1L) devs <- c(devs, list(c(0L, 1L), c(1L, 0L, 1L)))
  set.seed(31)
  for (n in c(70L, 97L, 1000L, 4099L)) for (precision in c("double", "single")) for (init in names(together)) {
    x <- make_blobs(n, 5, 7, sd = 2, spread = 6)
    for (seed in 1:3) {
      info <- sprintf("%s, n = %d, %s, seed %d", init, n, precision, seed)
      # (k = 30 on 70 rows: k-means|| needs more than its 5 rounds)
      for (k in c(7L, 30L)) {
        one <- gpu_fit(0L, seed, x, k, init = init, precision = precision)
        for (dev in devs) {
          got <- stages_of(gpu_fit(dev, seed, x, k, init = init, precision = precision))
          expect_identical(fit_value(got$value), fit_value(one), info = paste(info, "k =", k))
          # blocks of whole nodes: n = 70 on 4 engines leaves two of them empty
          expect_identical(got$stages, together[[init]], info = info)
        }
      }
    }
  }
  # fewer distinct rows than centers: the degenerate rule scans the chosen
  # flags of every block, and R stops as stats does
  dup <- matrix(rep(c(1, 2, 3), length.out = 300 * 2), ncol = 2)
  for (init in names(together)) for (dev in list(0L, c(0L, 0L, 0L))) {
    expect_error(gpu_kmeans(dup, 5, init = init, backend = "cuda", device = dev),
                 "more cluster centers than distinct data points")
  }
})

test_that("device = \"all\" runs on every usable GPU and gives the one-GPU fit [cuda]", {
  skip_if_no_gpu()
  x <- multi_data()
  all <- gpukmeans:::check_devices("all")
  got <- gpu_fit("all", 2L, x, 5, nstart = 2, init = "kmeans++")
  one <- gpu_fit(all[1L], 2L, x, 5, nstart = 2, init = "kmeans++")
  expect_identical(fit_value(got), fit_value(one))
  if (length(all) > 1L)
    expect_match(attr(got$value, "device"), sprintf("^%d GPUs: 0 ", length(all)))
  # cosine on several engines is the one-GPU spherical fit too
  a <- gpu_fit(c(0L, 0L), 3L, x - 100, 4, distance = "cosine")
  b <- gpu_fit(0L, 3L, x - 100, 4, distance = "cosine")
  expect_identical(fit_value(a), fit_value(b))
})

test_that("several CUDA engines iterate together (plain, bounded, filtered): one GPU's fit and profile, bit for bit [cuda]", {
  skip_if_no_gpu()
  # large enough for distance bounds (n k >= 2^22 point-center pairs) and
  # the tiled kernels (d = 16: the double filter, the tensor cores in single)
  set.seed(8)
  x <- make_blobs(60000, 16, 40, sd = 2, spread = 6)
  k <- 80L
  L <- gpukmeans:::gk_greedy_candidates(k)
  set.seed(9)
  starts <- list(list(method = "kmeans++", k = k, unif = runif(1 + (k - 1) * L), L = L))
  fit <- function(device, single, iter_max) {
    gpukmeans:::gk_fit_cpp(x, starts, iter_max, single, "cuda", 2L, as.integer(device), FALSE, NULL, Inf,
                           gpukmeans:::cuda_options())
  }
  parts <- c("cluster", "centers", "withinss", "size", "iter", "totss", "start_init_rows")
  devs <- list(c(0L, 0L), c(0L, 0L, 0L))
  if (length(gpukmeans:::check_devices("all")) > 1L) devs <- c(devs, list(c(0L, 1L), c(1L, 0L, 1L)))
  # bounds: never, from the second iteration (the same iterations bounded on
  # one GPU and on several: the same profile), where they pay
  for (bounds in c(1L, 2L, 3L)) for (single in c(FALSE, TRUE)) for (iter_max in c(4L, 100L)) {
    withr::local_options(gpukmeans.cuda_tuning = c(0L, 0L, 0L, bounds))
    one <- fit(0L, single, iter_max)
    info <- sprintf("bounds %d, single = %s, iter.max = %d", bounds, single, iter_max)
    if (iter_max == 4L) expect_identical(one$iter, 5L)
    for (dev in devs) {
      got <- fit(dev, single, iter_max)
      info2 <- paste(info, "device", paste(dev, collapse = ","))
      expect_identical(got[parts], one[parts], info = info2)
      # (the profile says the parts ran their own iterations: lloyd_parts() has none)
      expect_length(got$exact_fraction, min(one$iter, iter_max))
      if (bounds == 1L) expect_true(all(got$exact_fraction == 1), info = info2)
      if (bounds == 2L) {  # (the first two iterations plain, the later ones bounded)
        expect_identical(got$exact_fraction, one$exact_fraction, info = info2)
        expect_identical(got$exact_fraction[1:2], c(1, 1), info = info2)
        if (iter_max == 100L) expect_lt(min(got$exact_fraction), 0.5)
      }
    }
  }
  # an empty cluster (a center far from every point) on several engines
  far <- x[1:6, ]
  far[6, ] <- 1e4
  a <- gpu_fit(0L, 1L, x, far, iter.max = 30)
  for (dev in devs) expect_identical(fit_value(gpu_fit(dev, 1L, x, far, iter.max = 30)), fit_value(a))
  expect_true(any(a$value$size == 0L))
})

test_that("k-means++ and k-means|| over several resident engines run on all of them; over streamed parts on the first device (a second upload) where all of x fits there, else on the host: device 0's fit [cuda]", {
  skip_if_no_gpu()
  set.seed(12)
  x <- make_blobs(20000, 8, 10, sd = 2, spread = 8)
  # caps under which each half of x fits on the device but an upload of the
  # whole does not (double: 1.3 MB of x, 0.7 MB a half; single: the floats
  # and the staged doubles, 2.0 MB and 1.0 MB).  A gather of the parts'
  # rows needs x as stored and no staging: over that cap in double (1.3
  # MB), under it in single (0.7 MB of floats and labels).
  cap <- c(double = 1.0e6, single = 1.5e6)
  # which engine initialised (src/stage_log.h): the parts together
  # (resident parts), one gathered from the parts' device copies, a second
  # upload of x, or the host's
  init_engine <- function(expr) with_stages(expr, "^init_(engine|pp|par)_")
  together <- c("kmeans++" = "init_pp_together", "kmeans||" = "init_par_together")
  for (init in c("kmeans++", "kmeans||")) for (precision in c("double", "single")) {
    info <- paste(init, precision)
    one <- gpu_fit(0L, 3L, x, 10, init = init, precision = precision)
    fit_on <- function(dev, stream = NULL, cap = NULL, together = NULL)
      init_engine(withr::with_options(list(gpukmeans.stream = stream, gpukmeans.device_memory = cap,
                                           gpukmeans.init_together = together),
                                      gpu_fit(dev, 3L, x, 10, init = init, precision = precision)))
    for (dev in list(c(0L, 0L), c(0L, 0L, 0L))) {
      two <- fit_on(dev)
      expect_identical(fit_value(two$value), fit_value(one), info = info)
      expect_identical(two$stages, together[[init]], info = info)
      # the way where the devices cannot reach each other's memory: one
      # engine gathered from the parts' device copies
      two <- fit_on(dev, together = FALSE)
      expect_identical(fit_value(two$value), fit_value(one), info = info)
      expect_identical(two$stages, "init_engine_gathered", info = info)
    }
    # parts that stream x hold no device copy of it: a second upload, or the
    # host where that does not fit
    streamed <- fit_on(c(0L, 0L), stream = TRUE)
    expect_identical(fit_value(streamed$value), fit_value(one), info = info)
    expect_identical(streamed$stages, "init_engine_uploaded", info = info)
    streamed <- fit_on(c(0L, 0L), stream = TRUE, cap = cap[[precision]])
    expect_identical(fit_value(streamed$value), fit_value(one), info = info)
    expect_identical(streamed$stages, "init_engine_host", info = info)
    gathered <- fit_on(c(0L, 0L), cap = cap[[precision]], together = FALSE)
    expect_identical(fit_value(gathered$value), fit_value(one), info = info)
    expect_identical(gathered$stages, if (precision == "double") "init_engine_host" else "init_engine_gathered",
                     info = info)
    capped <- fit_on(c(0L, 0L), cap = cap[[precision]])
    expect_identical(capped$stages, together[[init]], info = info)
    capped <- capped$value
    expect_identical(fit_value(capped), fit_value(one), info = info)
    expect_match(attr(capped$value, "device"), "^2 engines on 1 GPU: [^,]*, 0 [^,]*$", info = info)  # (not streamed)
    # (all of x under that cap, never streamed: out of memory)
    expect_error(withr::with_options(list(gpukmeans.device_memory = cap[[precision]], gpukmeans.stream = FALSE),
                                     gpu_kmeans(x, 10, backend = "cuda", device = 0, precision = precision)),
                 class = "gpukmeans_out_of_memory")
  }
})

test_that("a traced fit over several CUDA engines (its sums through the host) gives the one-GPU fit [cuda]", {
  skip_if_no_gpu()
  x <- multi_data()
  c0 <- x[c(1, 50, 100, 150, 200), ]
  changed <- function(out) sub(",.*", "", grep("^iter", out, value = TRUE))  # (the points changed per iteration)
  out1 <- capture.output(one <- gpu_fit(0L, 1L, x, c0, trace = 1))
  for (dev in list(c(0L, 0L), c(0L, 0L, 0L))) {
    out2 <- capture.output(two <- gpu_fit(dev, 1L, x, c0, trace = 1))
    expect_identical(fit_value(two), fit_value(one))
    expect_identical(changed(out2), changed(out1))
  }
  expect_length(changed(out1), one$value$iter)
})
