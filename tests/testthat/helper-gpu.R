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
