# Shared by the probes of bench.R's problems (grid-shapes.R, grid-sorted.R,
# prof-dexact.R, order-shapes.R, b-rest.R):
# inst/bench/bench.R's blobs and an order of rows along a Z curve.  Sourced,
# not run.

# n points about k centers drawn uniformly in [0, 100]^d (seed 1), as bench.R draws them;
# attr(x, "label"): each point's center, where labels = TRUE.
bench_blobs <- function(n, d, k, labels = FALSE) {
  set.seed(1)
  ce <- matrix(runif(k * d, 0, 100), k, d)
  lab <- sample.int(k, n, TRUE)
  x <- ce[lab, , drop = FALSE]
  x <- x + rnorm(length(x))
  if (labels) attr(x, "label") <- lab
  x
}

# The rows of x (d = 1 or 2 used) in the order of a Z curve (Morton code of
# a 1024 x 1024 grid over the data's box): a warp's rows then lie close.
z_order <- function(x) {
  spread <- function(v) {  # the bits of v (< 2^10) to the even positions
    v <- bitwAnd(bitwOr(v, bitwShiftL(v, 8)), 0x00FF00FF)
    v <- bitwAnd(bitwOr(v, bitwShiftL(v, 4)), 0x0F0F0F0F)
    v <- bitwAnd(bitwOr(v, bitwShiftL(v, 2)), 0x33333333)
    bitwAnd(bitwOr(v, bitwShiftL(v, 1)), 0x55555555)
  }
  cell <- function(v) pmin(1023L, as.integer(1024 * (v - min(v)) / (max(v) - min(v))))
  key <- spread(cell(x[, 1]))
  if (ncol(x) > 1) key <- bitwOr(key, bitwShiftL(spread(cell(x[, 2])), 1))
  order(key)
}
