# Where the end-to-end time of a small GPU fit goes (run on the GPU machine).
suppressPackageStartupMessages(library(gpukmeans))
options(gpukmeans.progress = FALSE)
set.seed(1)
n <- 1e6; k <- 100
ctr <- matrix(runif(k * 2, 0, 100), k)
x <- ctr[sample.int(k, n, TRUE), ] + rnorm(2 * n)
c0 <- x[sample.int(n, k), ]
med <- function(f, reps = 15) { f(); median(vapply(seq_len(reps), function(i) { t <- Sys.time(); f(); as.numeric(Sys.time() - t, units = "secs") }, 1)) * 1000 }
cat(sprintf("as_data_matrix        %7.3f ms\n", med(function() gpukmeans:::as_data_matrix(x))))
cat(sprintf("initial_centers       %7.3f ms\n", med(function() gpukmeans:::initial_centers(x, c0, 1L))))
cat(sprintf("gk_fit_cpp (cuda)     %7.3f ms\n", med(function() gpukmeans:::gk_fit_cpp(x, list(c0), 10L, FALSE, "cuda", 0L, 0L, FALSE, NULL, Inf, list()))))
cat(sprintf("gpu_kmeans total      %7.3f ms\n", med(function() suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, backend = "cuda")))))
fit <- suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, backend = "cuda"))
print(attr(fit, "timing") * 1000)
cat(sprintf("predict (cuda)        %7.3f ms\n", med(function() predict(fit, x))))
cat(sprintf("gpukmeans_info        %7.3f ms\n", med(function() gpukmeans_info())))
t <- system.time(s <- kmeans(x, c0, iter.max = 10L, algorithm = "Lloyd"))[["elapsed"]]
g <- med(function() suppressWarnings(gpu_kmeans(x, c0, iter.max = 10L, backend = "cuda")))
cat(sprintf("stats %.3f s, gpu_kmeans %.3f ms: %.0fx\n", t, g, 1000 * t / g))
