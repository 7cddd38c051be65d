#' Silhouette widths of a clustering, without a distance matrix
#'
#' `gpu_silhouette()` computes the silhouette width of every row (or of a
#' random sample of rows) of a clustering of `x`, on the GPU when there is
#' one, without forming the n x n matrix of distances that
#' [cluster::silhouette()] needs (`dist()` of 100,000 rows takes 40 GB).  It
#' returns an object of class `"silhouette"` as [cluster::silhouette()] does,
#' so cluster's `summary()` and `plot()` methods and
#' `factoextra::fviz_silhouette()` accept it.
#'
#' @section Methods:
#' `"exact"`: for each row i, a(i) is the mean Euclidean distance to the
#'   other rows of its cluster, b(i) the least mean distance to the rows of
#'   another cluster (that cluster is the `neighbor`), and the width is
#'   `(b(i) - a(i)) / max(a(i), b(i))`; a row alone in its cluster has width
#'   0, as in [cluster::silhouette()].  The n^2 distances are streamed in
#'   O(n^2 d) time with O(n d) memory (the design goal on an H200: 100,000
#'   rows of 16 columns in under a second, see `inst/bench/bench_sweep.R`);
#'   on the CPU engine it takes about n^2 (d + 8) / 2e10 seconds on two cores
#'   with AVX2 (20,000 rows of 16 columns: half a second).  The distances and
#'   sums are taken in double precision in the order R's [dist()] and
#'   cluster's C code take
#'   them (no fused multiply-add), so the widths equal those of
#'   `cluster::silhouette(cl, dist(x))` to the last bit on x86-64 and agree
#'   between the CPU and CUDA engines bit for bit.
#'
#' `"sampled"`: the exact widths of `sample_size` rows drawn at random
#'   ([sample.int()], so `set.seed()` makes them reproducible), each against
#'   all n rows: O(sample_size n d).  Their mean is an unbiased estimate of
#'   the exact average silhouette width with standard error about
#'   `sd(widths) / sqrt(sample_size)`.  When `sample_size >= n` every row is
#'   taken and nothing is drawn (the result is exact).
#'
#' `"simplified"`: the simplified silhouette (Hruschka et al. 2004): a(i) and
#'   b(i) are the distances to the row's own cluster center and to the nearest
#'   center of another cluster; O(n k d), for data too large for the others.
#'   It is a different index (usually larger than the exact average width),
#'   marked as such in `attr(, "method")`.  A row alone in its cluster again
#'   has width 0.  The centers are the fit's (`fit$centers`) or, when `fit`
#'   is a vector of labels, the cluster means.
#'
#' @param fit a clustering of the rows of `x`: a k-means fit (any object with
#'   a `cluster` component, e.g. from [gpu_kmeans()] or [stats::kmeans()]) or
#'   a vector of whole-number cluster labels, one per row.  The labels need
#'   not be 1..k (they are recoded as [cluster::silhouette()] does); there
#'   must be at least 2 clusters and fewer clusters than rows.
#' @param x the data that was clustered: a numeric matrix, data frame or (for
#'   1-D data) vector, one row per point; distances are Euclidean.
#' @param method `"exact"`, `"sampled"` or `"simplified"`; see Methods.
#' @param sample_size rows whose widths are computed with `method =
#'   "sampled"`.
#' @param backend `"auto"`, `"cuda"` or `"cpu"`, as in [gpu_kmeans()].
#' @param device the CUDA device: one ordinal, as listed by
#'   [gpukmeans_info()] (when `options(gpukmeans.device =)` lists several,
#'   or `"all"`, the first).
#' @return An object of class `"silhouette"`: a matrix with one row per row
#'   of `x` (or per sampled row, in increasing order) and columns `cluster`,
#'   `neighbor` and `sil_width`, with attributes `Ordered = FALSE`, `call`,
#'   `method` (`"exact"`, `"sampled"` or `"simplified"`), `rows` (the rows of
#'   `x` it describes), `backend`, `device` and `timing` (seconds).  Row names
#'   are those of `x`, if any.  `summary()` (with the cluster package) gives
#'   the average width, overall and per cluster.
#' @references
#' Rousseeuw, P. J. (1987) Silhouettes: a graphical aid to the interpretation
#' and validation of cluster analysis.  \emph{Journal of Computational and
#' Applied Mathematics} \bold{20}, 53--65.
#'
#' Hruschka, E. R., de Castro, L. N. and Campello, R. J. G. B. (2004)
#' Evolutionary algorithms for clustering gene-expression data.
#' \emph{Fourth IEEE International Conference on Data Mining}, 403--406.
#' @seealso [gpu_kmeans_sweep()] for the average width over a range of k;
#'   [cluster::silhouette()].
#' @examples
#' x <- scale(USArrests)
#' set.seed(1)
#' fit <- gpu_kmeans(x, 4, nstart = 10)
#' sil <- gpu_silhouette(fit, x)
#' head(sil)
#' mean(sil[, "sil_width"])
#' if (requireNamespace("cluster", quietly = TRUE)) {
#'   # the same widths as cluster::silhouette, which needs dist(x)
#'   ref <- cluster::silhouette(fit$cluster, dist(x))
#'   all.equal(sil[, "sil_width"], ref[, "sil_width"])
#'   summary(sil)$avg.width
#'   plot(sil)
#' }
#' # a sample of the rows, or the simplified silhouette (distances to centers)
#' set.seed(2)
#' mean(gpu_silhouette(fit, x, method = "sampled", sample_size = 20)[, "sil_width"])
#' mean(gpu_silhouette(fit, x, method = "simplified")[, "sil_width"])
#' @export
gpu_silhouette <- function(fit, x, method = c("exact", "sampled", "simplified"),
                           sample_size = 10000L,
                           backend = getOption("gpukmeans.backend", "auto"),
                           device = getOption("gpukmeans.device", 0L)) {
  cll <- match.call()
  t_begin <- Sys.time()
  if (missing(fit)) stop("'fit' is required: a k-means fit or a vector of cluster labels", call. = FALSE)
  if (missing(x)) stop("'x' is required: the data that was clustered (the fit does not keep it)", call. = FALSE)
  method <- match.arg(method)
  x <- as_data_matrix(x, "x")
  if (is_cosine(fit)) x <- cosine_rows(x)  # a spherical fit: distances between unit rows (R/cosine.R)
  n <- nrow(x)
  sample_size <- check_count(sample_size, "sample_size")
  device <- one_device(device, missing(device))
  part <- silhouette_partition(fit, x, need_centers = method == "simplified")
  engine <- resolve_backend(backend, device)

  rows <- integer(0)
  if (method == "sampled") {
    if (sample_size < n) rows <- sort(sample.int(n, sample_size)) else method <- "exact"
  }
  z <- gk_silhouette_cpp(x, part$cluster, part$k, part$centers, if (method == "simplified") 2L else 1L,
                         rows, engine, cpu_threads(), device, NULL, Inf, cuda_options())
  idx <- if (length(rows)) rows else seq_len(n)
  out <- cbind(cluster = part$labels[idx], neighbor = part$codes[z$neighbor], sil_width = z$width)
  if (!is.null(rn <- rownames(x))) rownames(out) <- rn[idx]
  attr(out, "Ordered") <- FALSE
  attr(out, "call") <- cll
  attr(out, "method") <- method
  attr(out, "rows") <- idx
  attr(out, "backend") <- engine
  attr(out, "device") <- z$device
  attr(out, "timing") <- c(compute = z$seconds,
                           total = seconds_since(t_begin))
  class(out) <- "silhouette"
  out
}

# The clustering `fit` of the n rows of x as the engines take it: labels
# recoded to 1..k in increasing order of the original codes (as
# cluster::silhouette does), the codes, and (when asked) k x d centers: the
# fit's, else the cluster means.
silhouette_partition <- function(fit, x, need_centers) {
  n <- nrow(x)
  centers <- NULL
  if (is.list(fit) && !is.null(fit$cluster)) {
    centers <- fit$centers
    fit <- fit$cluster
  } else if (is.list(fit)) {
    stop("'fit' must be a k-means fit (with a 'cluster' component) or a vector of cluster labels", call. = FALSE)
  }
  if (is.factor(fit) || !(is.numeric(fit) || is.logical(fit)) || !is.null(dim(fit)) && length(dim(fit)) > 1L)
    stop("the cluster labels must be a numeric vector of whole numbers", call. = FALSE)
  if (length(fit) != n)
    stop(sprintf("the clustering has %d labels but 'x' has %d rows: pass the data that was clustered",
                 length(fit), n), call. = FALSE)
  if (anyNA(fit) || any(!is.finite(fit)) || any(fit != round(fit)))
    stop("the cluster labels must be whole numbers, without NA", call. = FALSE)
  labels <- as.integer(fit)
  codes <- sort(unique(labels))
  k <- length(codes)
  if (k < 2L)
    stop("silhouette widths need at least 2 clusters (cluster::silhouette returns NA)", call. = FALSE)
  if (k >= n)
    stop("silhouette widths need fewer clusters than rows (cluster::silhouette returns NA)", call. = FALSE)
  cluster <- match(labels, codes)
  cen <- NULL
  if (need_centers) {
    if (!is.null(centers)) {
      centers <- as.matrix(centers)
      if (!is.numeric(centers) || ncol(centers) != ncol(x))
        stop(sprintf("the fit's centers have %d columns but 'x' has %d: pass the data that was clustered",
                     ncol(centers), ncol(x)), call. = FALSE)
      if (min(codes) < 1L || max(codes) > nrow(centers))
        stop("the fit's cluster labels do not index its centers", call. = FALSE)
      cen <- centers[codes, , drop = FALSE]
      if (any(!is.finite(cen)))
        stop("the fit's centers of non-empty clusters must be finite", call. = FALSE)
    } else {
      cen <- rowsum(x, cluster, reorder = TRUE) / as.vector(table(cluster))
    }
    cen <- unname(cen)
    storage.mode(cen) <- "double"
  }
  list(cluster = cluster, labels = labels, codes = codes, k = k, centers = cen)
}
