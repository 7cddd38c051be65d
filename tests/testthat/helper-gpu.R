skip_if_no_gpu <- function() {
  testthat::skip_if_not(isTRUE(nrow(gpukmeans::gpukmeans_info()$devices) > 0),
                        "no CUDA device")
}

# Whether the whole run plans as on a device with less shared memory a
# block than the card's (GPUKMEANS_SMEM_CAP set for the run: 101376 for the
# 99 KB of sm_86 and sm_89, 49152 for no opt-in: GPUKMEANS_SMEM_CAP=101376
# sh tools/gpu-session.sh OUT tests): every fit must stay right, but the kernels that need more
# give way to others, so the assertions that a given kernel ran (the
# filter's, the grid's, the tensor cores') are left out.
smem_capped <- function() nzchar(Sys.getenv("GPUKMEANS_SMEM_CAP"))

has_gpu <- function() {
  isTRUE(tryCatch(nrow(gpukmeans::gpukmeans_info()$devices) > 0,
                  error = function(e) FALSE))
}

# The value of expr and the stages it marked (src/stage_log.h) whose names
# match `pattern`, in order: which way an engine ran something.
with_stages <- function(expr, pattern) {
  log <- withr::local_tempfile()
  withr::local_envvar(GPUKMEANS_STAGE_LOG = log)
  value <- force(expr)
  list(value = value, stages = if (file.exists(log)) sub(" .*", "", grep(pattern, readLines(log), value = TRUE)))
}

# The engine's internal fit list (gk_fit_cpp) on the CUDA engine from fixed
# centers, with internal switches of the environment set (env: named
# values), the bounds mode of CudaTuning (1 plain, 2 forced from the second
# iteration, 3 where they pay) and the device ordinal(s).  The rows stay in
# their order (GPUKMEANS_ORDER=0) unless env says otherwise: the files that
# use it check given kernels (the grid, the filters, the bounds);
# test-ordered-cuda.R checks the ordered rows' kernel against them.
cuda_fit_raw <- function(x, centers, iter.max, single = FALSE, bounds = 1L, env = character(), device = 0L) {
  if (!"GPUKMEANS_ORDER" %in% names(env)) env <- c(env, GPUKMEANS_ORDER = "0")
  withr::local_envvar(env)
  gpukmeans:::gk_fit_cpp(as.matrix(x), list(as.matrix(centers)), as.integer(iter.max), single, "cuda", 0L,
                         as.integer(device), FALSE, NULL, Inf, list(tuning = c(0L, 0L, 0L, as.integer(bounds))))
}

# The small-d kernels' adversarial data at dimension d, n rows
# (test-grid-cuda.R, test-ordered-cuda.R), drawn from R's generator in this
# order: a lattice (points and centers on integers: many points exactly as
# far from two centers, ties to the lower index; duplicate centers, the
# first taken); points on the bisectors of center pairs and 2^-30 off them;
# a center far from the data (empty: NaN in the next iterations); heavy
# tails; longitude and latitude (far from the origin, a small spread; a
# case at d = 2 only); the uniform points and centers scaled by each of
# `scales`.  Named cases of x, centers, iter.max (and scale).
small_d_cases <- function(n, d, scales) {
  x <- matrix(floor(runif(n * d) * 24), ncol = d)
  cl <- matrix(floor(runif(70 * d) * 8) * 3, ncol = d)
  cl <- rbind(cl, cl[1:5, , drop = FALSE])
  u <- matrix(runif(n * d), ncol = d)
  cu <- u[seq_len(100), , drop = FALSE]
  a <- sample.int(100, n, TRUE)
  b <- sample.int(100, n, TRUE)
  xb <- (cu[a, , drop = FALSE] + cu[b, , drop = FALSE]) / 2 + (seq_len(n) %% 3) * 2^-30
  cf <- rbind(cu[1:60, , drop = FALSE], matrix(1e4, 1, d))
  xt <- matrix(rt(n * d, df = 1.2), ncol = d)
  ll <- cbind(-74.2 + 0.4 * runif(150), 40.5 + 0.4 * runif(150))
  xl <- ll[sample.int(150, n, TRUE), ] + rnorm(2 * n, sd = 0.01)
  cases <- list(lattice = list(x = x, centers = cl, iter.max = 15L),
                bisectors = list(x = xb, centers = cu, iter.max = 3L),
                "far, empty center" = list(x = u, centers = cf, iter.max = 15L),
                tails = list(x = xt, centers = xt[seq_len(80), , drop = FALSE], iter.max = 15L))
  if (d == 2) cases[["longitude, latitude"]] <- list(x = xl, centers = ll, iter.max = 5L)
  for (s in scales) cases[[paste("scale", s)]] <- list(x = u * s, centers = cu * s, iter.max = 5L, scale = s)
  cases
}
