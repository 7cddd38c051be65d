# Spherical k-means: gpu_kmeans(distance = "cosine") (Dhillon and Modha
# 2001).  The rows are scaled to unit length here (in C++, once) and the
# engines cluster the unit rows: src/spherical.h says how a fit runs on any
# engine and what is exact.  This file holds the R side: the checks, the
# unit rows and centers, the fit's `distance` attribute, its print line and
# predict()'s unit rows, called from small hooks in gpu_kmeans() and
# predict.gpu_kmeans().

#' Spherical k-means: gpu_kmeans(distance = "cosine")
#'
#' `gpu_kmeans(x, centers, distance = "cosine")` clusters the directions of
#' the rows of `x` (spherical k-means, Dhillon and Modha 2001; what the
#' skmeans package fits, and what embeddings of text or images are
#' clustered with), on the CPU or CUDA engine, and returns an object of the
#' shape of the Euclidean fit.
#'
#' @section The algorithm:
#' Every row is scaled to unit length, each row goes to the center of largest cosine similarity
#' (ties to the lowest index), each center is the mean of its rows scaled
#' back to unit length, and the loop stops when no row changes cluster.  The
#' rows' lengths do not matter: `x` and `x` with its rows multiplied by any
#' positive numbers give the same fit (to rounding; exactly for powers of
#' two).  A row of zeros has no direction and is an error naming the row, as
#' are rows with `NA`, `NaN` or infinite values; any other finite row is
#' fine, however large or small.
#'
#' @section The fit:
#' The fit has the components and shape of the Euclidean fit and its
#' attribute `distance` is `"cosine"` (print shows it; [predict()] scales
#' `newdata`'s rows to unit length and assigns them by cosine).  `centers`
#' are unit vectors (`NaN` for an empty cluster); `withinss[j]` is the sum
#' over the rows of cluster j of `1 - cos(x_i, center_j)`;
#' `tot.withinss` their sum; `totss` is the sum over all rows of
#' `1 - cos(x_i, m)`, m the normalised mean of all rows, which is the
#' `tot.withinss` of the one-cluster fit (and `n` when the rows add up to
#' zero); `betweenss = totss - tot.withinss`, never negative at convergence
#' (up to rounding).  `nstart > 1` keeps the start of smallest
#' `tot.withinss`, as for the Euclidean fit.
#'
#' @section What is exact:
#' The rows are scaled as `x_i / sqrt(sum(x_i^2))` in double
#' precision (the sum in column order, after an exact scaling by a power of
#' two so that no finite row overflows or underflows).  The engines then run
#' their exact Euclidean assignment on the unit rows (ties to the lowest
#' index): on the unit sphere
#' \eqn{|x - c|^2 = 2 - 2 \cos(x, c)}{|x - c|^2 = 2 - 2 cos(x, c)}, so the
#' nearest unit center is the one of largest cosine.  Computed, this rule
#' and the argmax of the rounded dot products \eqn{x \cdot c}{x.c} can
#' differ only where two cosines agree to within the rounding error of
#' either computation (at most about `d * 2e-16`, much less in practice);
#' and the distance keeps its accuracy for rows very close to their center,
#' where \eqn{1 - x \cdot c}{1 - x.c} cancels, which is also why
#' `withinss` are computed as half the squared distances.  In double
#' precision the CPU and CUDA engines give the same labels except for rows
#' within rounding of a tie, as for the Euclidean fit.
#'
#' @section Initial centers, empty clusters:
#' A matrix of `centers` is scaled to unit length (a row of
#' zeros, or two rows with the same direction, is an error).  With `init =
#' "random"` the rows are drawn exactly as [stats::kmeans()] draws them from
#' the unit rows (same calls to the random number generator: `set.seed(s)`
#' picks the same rows as `kmeans(x / sqrt(rowSums(x^2)), k)`).  `"kmeans++"`
#' and `"kmeans||"` run on the unit rows unchanged: their D^2 sampling by
#' the squared distance to the nearest chosen center is, on the unit sphere,
#' sampling by `2 - 2 cos`, i.e. by `1 -` the largest cosine, as in
#' spherical k-means++.  A cluster that empties keeps a `NaN` center and the
#' fit warns "empty cluster", as the Euclidean fit does; a cluster whose rows
#' add up to exactly zero (say a row and its opposite) has no direction
#' either and gets a `NaN` center, so its rows move to other clusters at the
#' next step and it ends empty.
#'
#' @section Engines, precision, memory:
#' Only `algorithm = "Lloyd"` (or `"Forgy"`) runs spherical k-means (the
#' others are an error); both engines and both precisions run it, with the
#' same engine code as Euclidean fits (the CPU engine with its distance
#' bounds; the CUDA engine through its exact assignment steps, one per
#' iteration, with the centers normalised on the host between steps).
#' Memory: the unit rows are a copy of `x` in double precision.
#' [gpu_silhouette()] of a spherical fit measures the Euclidean distances
#' between the unit rows, \eqn{\sqrt{2 - 2 \cos}}{sqrt(2 - 2 cos)} (a metric
#' that orders pairs as the cosine does).  `trace =
#' TRUE` prints tot.withinss as the sum of `1 - cos` (`NaN` on the CUDA
#' engine, whose steps do not report it).
#'
#' @references
#' Dhillon, I. S. and Modha, D. S. (2001) Concept decompositions for large
#' sparse text data using clustering.  \emph{Machine Learning} \bold{42},
#' 143--175.
#' @examples
#'
#' # spherical k-means: rows clustered by direction (cosine similarity)
#' set.seed(1)
#' dirs <- rbind(c(1, 0, 0), c(0, 1, 0), c(0, 0, 1))
#' emb <- dirs[rep(1:3, each = 20), ] + matrix(rnorm(180, sd = 0.2), 60)
#' emb <- emb * runif(60, 0.5, 5)   # lengths do not matter
#' sk <- gpu_kmeans(emb, 3, nstart = 5, distance = "cosine")
#' sk
#' rowSums(sk$centers^2)            # unit centers
#' predict(sk, rbind(c(10, 0, 1), c(0, 0.1, 0)))
#' @seealso [gpu_kmeans()], [predict.gpu_kmeans()]; the vignette
#'   "Spherical k-means for embeddings" (`vignette("cosine", package =
#'   "gpukmeans")`).
#' @name spherical_kmeans
NULL

#' @name gpu_kmeans
#' @rdname gpu_kmeans
#' @param distance `"euclidean"` (default: k-means) or `"cosine"`: spherical
#'   k-means, the rows' directions clustered by cosine similarity; see
#'   [spherical_kmeans].
NULL

# distance = "cosine" runs Lloyd's algorithm only.
cosine_check_algorithm <- function(algorithm) {
  if (!algorithm %in% c("Lloyd", "Forgy"))
    stop(sprintf(paste0("distance = \"cosine\" (spherical k-means) runs algorithm = \"Lloyd\" only, not \"%s\" ",
                        "(which is stats::kmeans()'s Euclidean algorithm)"), algorithm), call. = FALSE)
  invisible(algorithm)
}

# The rows of the double matrix x (checked finite) scaled to unit length,
# with x's dimnames; a row of zeros is an error naming it.
cosine_rows <- function(x, arg = "x") {
  z <- gk_normalize_rows_cpp(x, cpu_threads(as.numeric(nrow(x)) * ncol(x)))
  if (z$zero > 0) {
    i <- as.integer(z$zero)
    rn <- rownames(x)
    stop(sprintf(paste0("row %d%s of '%s' is all zeros: with distance = \"cosine\" every row needs a direction ",
                        "(remove it, or cluster it apart)"),
                 i, if (!is.null(rn) && nzchar(rn[i])) sprintf(" (\"%s\")", rn[i]) else "", arg), call. = FALSE)
  }
  z$x
}

# The starts of initial_centers(), given centers scaled to unit length (a
# row of zeros, or two rows with the same direction, is an error); starts
# drawn from the unit rows (random rows, k-means++ / k-means|| specs) are
# unit already.
cosine_starts <- function(st) {
  if (!isTRUE(st$given)) return(st)
  centers <- cosine_rows(st$starts[[1L]], "centers")
  if ((j <- anyDuplicated(centers)) > 0L) {
    i <- which(colSums(t(centers) == centers[j, ]) == ncol(centers))[1L]
    stop(sprintf("initial centers are not distinct: rows %d and %d of 'centers' have the same direction", i, j),
         call. = FALSE)
  }
  st$starts <- list(centers)
  st
}

# A spherical fit: the distance recorded (print, predict).
cosine_fit <- function(fit) {
  attr(fit, "distance") <- "cosine"
  fit
}

is_cosine <- function(fit) identical(attr(fit, "distance"), "cosine")

# print.gpu_kmeans()'s line for a spherical fit.
cosine_print <- function(x) {
  if (is_cosine(x))
    cat("Distance: cosine (spherical k-means; unit centers, withinss = sums of 1 - cosine)\n")
  invisible(x)
}
