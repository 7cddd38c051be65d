# Building the returned object: a stats "kmeans" object, component for
# component, plus the attributes that say how it was computed.
new_gpu_kmeans <- function(x, z, k, ifault, engine, nstart, t_begin) {
  centers <- z$centers
  dimnames(centers) <- list(1L:k, dimnames(x)[[2L]])
  cluster <- z$cluster
  if (!is.null(rn <- rownames(x))) names(cluster) <- rn
  best <- sum(z$withinss)
  fit <- structure(list(cluster = cluster, centers = centers, totss = z$totss,
                        withinss = z$withinss, tot.withinss = best,
                        betweenss = z$totss - best, size = z$size,
                        iter = z$iter, ifault = ifault),
                   class = c("gpu_kmeans", "kmeans"))
  attr(fit, "backend") <- engine
  attr(fit, "device") <- z$device
  if (nstart > 1L && length(z$start_tot_withinss) > 1L)
    attr(fit, "start_tot_withinss") <- z$start_tot_withinss
  attr(fit, "timing") <- c(z$timing, total = seconds_since(t_begin))
  fit
}

# Seconds from t (a Sys.time()) to now: the arithmetic of difftime(units =
# "secs") without its method dispatch (tens of microseconds a call, which a
# fit of a few milliseconds notices).
seconds_since <- function(t) as.numeric(Sys.time()) - as.numeric(t)
