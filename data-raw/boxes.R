# Makes data/boxes.rda: 12 box-shaped clusters in the plane, 21 600 points.
#
# A stand-in for the classic "boxes3" clustering exercise used to compare
# sequential and CUDA k-means at k = 12, 24, 48, 96.  The 12 boxes sit on a
# 4 x 3 grid of cells 10 units wide; each box is a uniform rectangle of its own
# width and height (between 3 and 7 units), shifted a little inside its cell,
# with 1 800 points.  Rows 1800 * (j - 1) + 1:1800 belong to box j (boxes are
# numbered along the rows of the grid from the bottom left), so the true
# labels are rep(1:12, each = 1800).  Coordinates are rounded to 3 decimals.
#
# Run from the package root:  Rscript data-raw/boxes.R
set.seed(20240612, kind = "Mersenne-Twister", normal.kind = "Inversion",
         sample.kind = "Rejection")
n_per_box <- 1800L
grid <- expand.grid(col = 0:3, row = 0:2)       # 12 cells, bottom-left first
k <- nrow(grid)
width  <- round(runif(k, 3, 7), 1)
height <- round(runif(k, 3, 7), 1)
# box centres: cell centre plus a shift that keeps the box inside its cell
shift_x <- round(runif(k, -1, 1) * (10 - width) / 2 * 0.5, 2)
shift_y <- round(runif(k, -1, 1) * (10 - height) / 2 * 0.5, 2)
mid_x <- 10 * grid$col + 5 + shift_x
mid_y <- 10 * grid$row + 5 + shift_y

box <- rep(seq_len(k), each = n_per_box)
x <- mid_x[box] + (runif(length(box)) - 0.5) * width[box]
y <- mid_y[box] + (runif(length(box)) - 0.5) * height[box]
boxes <- data.frame(x = round(x, 3), y = round(y, 3))

# Checks: the promised shape, and the true box means are a fixed point of
# Lloyd's algorithm (every point is nearest to the mean of its own box), so
# k-means started near the boxes finds them exactly.
stopifnot(nrow(boxes) == 21600L, ncol(boxes) == 2L)
means <- rowsum(as.matrix(boxes), box) / n_per_box
d2 <- sapply(seq_len(k), function(j) (boxes$x - means[j, 1])^2 + (boxes$y - means[j, 2])^2)
stopifnot(identical(max.col(-d2, ties.method = "first"), box))
fit <- kmeans(boxes, means, algorithm = "Lloyd")
stopifnot(identical(unname(fit$cluster), box), fit$iter <= 2L)

save(boxes, file = "data/boxes.rda", compress = "xz")
