# Shared by test-silhouette.R and test-sweep.R.

# The exact silhouette: cluster::silhouette(cl, dist(x)) when cluster is
# installed, else the same rules in plain R (the GPU machines' R has no
# cluster).
sil_ref <- function(cl, x, use_cluster = requireNamespace("cluster", quietly = TRUE)) {
  if (use_cluster) return(cluster::silhouette(cl, dist(x)))
  x <- as.matrix(x)
  D <- as.matrix(dist(x))
  codes <- sort(unique(cl))
  g <- match(cl, codes)
  size <- tabulate(g, length(codes))
  S <- sapply(seq_along(codes), function(c) rowSums(D[, g == c, drop = FALSE]))
  S <- matrix(S, nrow = nrow(x))
  own <- cbind(seq_len(nrow(x)), g)
  a <- ifelse(size[g] > 1, S[own] / (size[g] - 1), 0)
  M <- sweep(S, 2, size, "/")
  M[own] <- Inf
  nb <- apply(M, 1L, which.min)
  b <- M[cbind(seq_len(nrow(x)), nb)]
  w <- ifelse(size[g] > 1 & a != b, (b - a) / pmax(a, b), 0)
  cbind(cluster = cl, neighbor = codes[nb], sil_width = w)
}
