#' Twelve box-shaped clusters in the plane
#'
#' A data set of 21 600 points in 12 well separated clusters, each a uniform
#' rectangle ("box") of its own width and height, standing in for the classic
#' `boxes3` clustering exercise used to compare sequential and CUDA k-means
#' at k = 12, 24, 48 and 96.
#'
#' @format A data frame with 21 600 rows and 2 numeric columns:
#' \describe{
#'   \item{x}{horizontal coordinate, between about 1.5 and 39.1.}
#'   \item{y}{vertical coordinate, between about 1.2 and 28.7.}
#' }
#' The rows come box by box: rows `1800 * (j - 1) + 1:1800` are box `j`, so
#' the true labels are `rep(1:12, each = 1800)`.  Boxes are numbered along the
#' rows of a 4 x 3 grid, from the bottom left.
#'
#' @source Simulated by `data-raw/boxes.R` in the package sources with
#'   `set.seed(20240612)`: the boxes sit on a 4 x 3 grid of cells 10 units
#'   wide, each box is 3 to 7 units wide and high (drawn uniformly), shifted a
#'   little inside its cell, and holds 1 800 points drawn uniformly inside it;
#'   coordinates are rounded to 3 decimals.  The script checks that the box
#'   means are a fixed point of Lloyd's algorithm, so k-means started near the
#'   boxes recovers them exactly.
#' @seealso [simulate_blobs()] for Gaussian clusters of any size,
#'   [plot.gpu_kmeans()].
#' @examples
#' str(boxes)
#' set.seed(1)
#' fit <- gpu_kmeans(boxes, 12, nstart = 20, iter.max = 100)
#' fit$size
#' # how the clusters found match the true boxes
#' table(found = fit$cluster, box = rep(1:12, each = 1800))
#' plot(fit, boxes)
#' @docType data
#' @keywords datasets
#' @name boxes
NULL
