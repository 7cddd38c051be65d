# On a GPU machine (sh tools/gpu/run-r.sh tools/gpu/put-fused.R [n] [d]
# [density] [precision] [ways]): a large dgCMatrix read block by block to
# device 0 (src/cuda_engine.cpp take_rows), the copies checking and adding
# up each block as they fill the staging buffers (fused), against the
# host's passes of their own before each copy (host: GPUKMEANS_PUT_FUSED=0
# with GPUKMEANS_STAGE_SUMS=0), taking turns in one warm process after a
# first fit that starts the CUDA context; ways "fused" for a library
# without the switch (the one before 2026-11-28, whose stage log has no
# put_* lines).  Prints each fit's seconds, its stage log (src/stage_log.h:
# read, host check and sums, put, and inside put the waits for a free
# buffer, the fills and the copies' calls) and its tot.withinss and
# labels, which must not differ.
suppressPackageStartupMessages({ library(gpukmeans); library(Matrix) })
`%||%` <- function(a, b) if (is.null(a) || is.na(a)) b else a
args <- commandArgs(trailingOnly = TRUE)
n <- as.numeric(args[1] %||% 1e7); d <- as.integer(args[2] %||% 50); density <- as.numeric(args[3] %||% 0.1)
precision <- args[4] %||% "double"
which_ways <- strsplit(args[5] %||% "fused,host", ",", fixed = TRUE)[[1]]
options(gpukmeans.progress = FALSE, gpukmeans.source_memory = 0)
set.seed(1); nnz <- round(n * d * density)
m <- sparseMatrix(i = sample.int(n, nnz, replace = TRUE), j = sample.int(d, nnz, replace = TRUE), x = rnorm(nnz),
                  dims = c(n, d))
centers <- unique(as.matrix(m[1:1000, ]))[1:16, ]
cat(sprintf("put-fused.R | %s | %s | %g x %d dgCMatrix, density %g | %s | host threads %d, cores %d | OMP_WAIT_POLICY=%s | library %s\n",
            format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), gpukmeans_info()$devices$name[1], n, d, density,
            precision, gpukmeans:::cpu_threads(n * 16 * d), parallel::detectCores(), Sys.getenv("OMP_WAIT_POLICY", "(unset)"),
            find.package("gpukmeans")))
ways <- list(fused = character(), host = c(GPUKMEANS_PUT_FUSED = "0", GPUKMEANS_STAGE_SUMS = "0"))[which_ways]
fit_logged <- function(env) {
  f <- tempfile()
  withr::local_envvar(c(env, GPUKMEANS_STAGE_LOG = f))
  t <- system.time(z <- suppressWarnings(gpu_kmeans(m, centers, iter.max = 10, precision = precision)))[["elapsed"]]
  log <- read.table(f, col.names = c("stage", "seconds"))
  list(t = t, z = z, log = log)
}
invisible(fit_logged(character()))  # (the CUDA context, the kept staging buffers)
stages <- c("source_read", "source_check_sums", "source_put", "source_put_wait", "source_put_fill", "source_put_copy",
            "source_totss", "engine", "lloyd_cuda")
ref <- NULL
for (round in 1:3) for (w in names(ways)) {
  r <- fit_logged(ways[[w]])
  key <- c(r$z$tot.withinss, sum(as.numeric(r$z$cluster) * seq_along(r$z$cluster)))
  if (is.null(ref)) ref <- key
  s <- vapply(stages, function(st) sum(r$log$seconds[r$log$stage == st]), 0)
  cat(sprintf("%-5s round %d: fit %.3f s | %s | same fit: %s\n", w, round, r$t,
              paste(sprintf("%s %.3f", sub("^source_", "", stages), s), collapse = ", "), identical(key, ref)))
}
