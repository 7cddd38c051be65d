#' Plot the clusters and centers of a gpu_kmeans fit
#'
#' Draws the data coloured by cluster with the centers marked (base
#' graphics).  Two-dimensional data are drawn as they are; data with more
#' than two columns are projected, with the centers, onto two principal
#' components of `data` (those [prcomp()] finds, without scaling, as k-means
#' uses unscaled distances), the axes saying how much of the variance each
#' explains; one-dimensional data are drawn as a strip plot of the values
#' against their cluster, with the centers as vertical bars.
#'
#' The fit does not keep the data, so `data` must be given: the data the fit
#' was made from, or any data with as many rows as the fit has points.
#'
#' Other plots: factoextra's `fviz_cluster(fit, data = x)` and
#' `fviz_nbclust(x, gpu_kmeans, method = "wss")` (an elbow plot of
#' tot.withinss against k) accept gpu_kmeans fits and the function itself,
#' as they accept [stats::kmeans()] ones.
#'
#' @param x a `gpu_kmeans` fit (or any `kmeans` fit).
#' @param data the data that was clustered: a numeric matrix, data frame or
#'   (for 1-D fits) vector with one row per point of the fit and as many
#'   columns as the centers.
#' @param which the two columns (for 2-D data) or principal components (for
#'   data with more than two columns) to draw; ignored for 1-D data.
#' @param col colours of the clusters, recycled to the number of clusters;
#'   by default a qualitative palette from [grDevices::hcl.colors()].
#' @param pch plotting symbol of the points.
#' @param main title of the plot.
#' @param max_points at most this many points are drawn (evenly spaced rows,
#'   so no random numbers are used); the centers and principal components are
#'   always computed from all of `data`.  `Inf` draws every point.
#' @param ... further graphical parameters passed to [plot.default()] (for
#'   example `cex`, `xlab`, `xlim`).
#' @return `x`, invisibly.
#' @seealso [gpu_kmeans()], [boxes], [simulate_blobs()].
#' @examples
#' set.seed(1)
#' fit <- gpu_kmeans(boxes, 12, nstart = 20, iter.max = 100)
#' plot(fit, boxes)
#'
#' # more than two columns: the first two principal components
#' fit4 <- gpu_kmeans(iris[, 1:4], 3, nstart = 5)
#' plot(fit4, iris[, 1:4])
#'
#' # one column: a strip plot
#' plot(gpu_kmeans(precip, 3, nstart = 5), precip)
#'
#' if (requireNamespace("factoextra", quietly = TRUE)) {
#'   x <- scale(USArrests)
#'   print(factoextra::fviz_cluster(gpu_kmeans(x, 4, nstart = 5), data = x))
#'   print(factoextra::fviz_nbclust(x, gpu_kmeans, method = "wss",
#'                                  k.max = 8, nstart = 10))
#' }
#' @importFrom graphics plot points segments axis
#' @export
plot.gpu_kmeans <- function(x, data, which = c(1, 2), col = NULL, pch = 20,
                            main = sprintf("k-means, %d clusters", k),
                            max_points = 1e5, ...) {
  if (missing(data))
    stop("'data' is required: the fit does not keep the data, so pass the data that was clustered, as in plot(fit, x)",
         call. = FALSE)
  centers <- x$centers
  if (is.null(centers) || is.null(x$cluster))
    stop("'x' must be a k-means fit with 'centers' and 'cluster'", call. = FALSE)
  centers <- as.matrix(centers)
  k <- nrow(centers)
  d <- ncol(centers)
  data <- as_data_matrix(data, "data")
  if (ncol(data) != d)
    stop(sprintf("'data' has %d column%s but the fit's centers have %d: pass the data that was clustered",
                 ncol(data), if (ncol(data) == 1L) "" else "s", d), call. = FALSE)
  cluster <- as.integer(x$cluster)
  if (nrow(data) != length(cluster))
    stop(sprintf("'data' has %d rows but the fit has %d points: pass the data that was clustered",
                 nrow(data), length(cluster)), call. = FALSE)
  if (is.null(col)) col <- cluster_palette(k)
  col <- rep_len(col, k)
  if (!is.numeric(max_points) || length(max_points) != 1L || is.na(max_points) || max_points < 1)
    stop("'max_points' must be a positive number (or Inf)", call. = FALSE)
  rows <- if (nrow(data) > max_points)
    unique(round(seq(1, nrow(data), length.out = max_points))) else seq_len(nrow(data))
  ok <- stats::complete.cases(centers)   # empty clusters have NaN centers
  force(main)

  if (d == 1L) {
    v <- data[rows, 1L]
    y <- cluster[rows] + (((seq_along(rows) * 0.6180339887) %% 1) - 0.5) * 0.5
    graphics::plot(v, y, col = col[cluster[rows]], pch = pch, yaxt = "n",
                   ylim = c(0.5, k + 0.5), main = main,
                   xlab = colnames(data) %||% "value", ylab = "cluster", ...)
    graphics::axis(2, at = seq_len(k), las = 1)
    idx <- base::which(ok)
    graphics::segments(centers[idx, 1L], idx - 0.4, centers[idx, 1L], idx + 0.4, lwd = 3)
    return(invisible(x))
  }

  if (!is.numeric(which) || length(which) != 2L || anyNA(which) ||
      any(which != round(which)) || any(which < 1) || any(which > d) || which[1] == which[2])
    stop(sprintf("'which' must be two different whole numbers between 1 and %d", d), call. = FALSE)
  which <- as.integer(which)
  if (d == 2L) {
    xy <- data[rows, which, drop = FALSE]
    cxy <- centers[, which, drop = FALSE]
    labs <- colnames(data)[which] %||% paste0("column ", which)
  } else {
    pc <- principal_axes(data)
    xy <- sweep(data[rows, , drop = FALSE], 2L, pc$center) %*% pc$rotation[, which]
    cxy <- sweep(centers, 2L, pc$center) %*% pc$rotation[, which]
    labs <- sprintf("PC%d (%.1f%% of the variance)", which, 100 * pc$share[which])
  }
  graphics::plot(xy[, 1L], xy[, 2L], col = col[cluster[rows]], pch = pch,
                 main = main, xlab = labs[1L], ylab = labs[2L], ...)
  graphics::points(cxy[ok, 1L], cxy[ok, 2L], pch = 23, bg = col[ok], col = "black",
                   cex = 1.8, lwd = 1.5)
  invisible(x)
}

# Principal axes of the (centred, unscaled) data, as prcomp() finds them, from
# the d x d covariance matrix so that millions of rows cost one pass.  Signs
# follow prcomp's SVD convention only up to a flip, which does not matter here.
principal_axes <- function(data) {
  center <- colMeans(data)
  e <- eigen(stats::cov(data), symmetric = TRUE)
  values <- pmax(e$values, 0)
  list(center = center, rotation = e$vectors,
       share = if (sum(values) > 0) values / sum(values) else rep(0, length(values)))
}

cluster_palette <- function(k) {
  if (k <= 1L) return("#1B9E77")
  grDevices::hcl.colors(k, palette = if (k <= 12L) "Dark 3" else "Dynamic")
}
