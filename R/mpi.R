# gpu_kmeans(x, centers, ..., comm = ): k-means over MPI ranks (SPMD).
#
# Every rank of the communicator calls gpu_kmeans() at the same point of the
# same script with its own block of rows; the blocks, in rank order, are the
# data.  Each rank runs the engine R chose for its block (its GPU, or the
# CPU engine) through a handle (src/engine_handle_glue.cpp,
# src/block_driver.h), and the ranks combine what their engines compute
# with MPI collectives, in R, through Rmpi (Suggests: the package neither
# links MPI nor needs it).
#
# What is exact, and how (the ranks' results are identical, and do not
# depend on the number of ranks or on how the rows are split):
# - Lloyd: one MPI_Allreduce per iteration adds every rank's packet: the
#   points that changed cluster, the counts and the 128-bit fixed-point sums
#   of the assignment step, the sums as four 32-bit limbs each, which MPI
#   adds exactly in doubles (up to 2^20 ranks; src/exact_reduce.h).  The
#   centers are then those of lloyd_parts() over the concatenated rows, bit
#   for bit: on CUDA engines, those of a one-process fit; on the CPU engine,
#   whose own Lloyd adds in stats' order, the same labels, iter and size and
#   centers equal to rounding.  withinss: two more reductions (max, then
#   sum).  totss: the same passes with one center, the global mean.
# - Random starts: rank 0 draws from its R generator what stats draws for
#   the concatenated rows (sample.int(N, k); with duplicate rows, or
#   nstart >= 2, from the distinct rows in order of first occurrence) and
#   the ranks that hold the drawn rows send them.  The distinct rows: each
#   rank's own (gk_unique_rows), 64-bit hashes exchanged so that the rows
#   whose hash occurs on more than one rank are found, and those rows alone
#   gathered on rank 0 and compared exactly (memory: the rows that occur on
#   more than one rank).
# - k-means++ and k-means||: every sum that decides a choice is the fixed
#   arity-32 tree of src/parity.h over the N rows; each rank sends the
#   largest nodes it can compute alone (src/block_tree.h) and every rank
#   rebuilds the nodes that straddle ranks in the same order, so the rows
#   chosen are a one-process fit's (gk_init_rows()).
# - Errors: every collective carries a status from each rank; a rank whose
#   local work fails (bad input, out of memory, an interrupt, an engine
#   error) says so in the next collective, the ranks exchange the messages
#   and every rank stops with the same error (class gpukmeans_mpi_error).
#   Interrupts are held (suspendInterrupts()) except while a rank works on
#   its own block, so an interrupt never leaves a rank outside a collective
#   that the others have entered.

# ---- the communicator ---------------------------------------------------------

# An internal stand-in for a communicator of one process (no MPI): runs the
# code of gpu_kmeans(comm = ) in this process (tests, and machines without
# Rmpi).
local_comm <- function() structure(list(), class = "gk_local_comm")

# The communicator's rank, size and collective operations on doubles.
mpi_context <- function(comm) {
  ctx <- new.env(parent = emptyenv())
  ctx$seconds <- 0
  if (inherits(comm, "gk_local_comm")) {
    ctx$rank <- 0L
    ctx$size <- 1L
    ctx$allreduce <- function(x, op) x
    ctx$allgather <- function(x) x
    ctx$gatherv <- function(x, counts, root) x
    ctx$scatterv <- function(x, counts, root) x
    ctx$allgatherv <- function(x, counts) x
    ctx$strings <- function(s) s
    return(ctx)
  }
  comm <- check_count(comm, "comm", lower = 0L,
                      message = "'comm' must be an Rmpi communicator number (0 for MPI_COMM_WORLD) or NULL")
  # (options(gpukmeans.rmpi = FALSE): internal, the tests' stand-in for a
  # machine without Rmpi)
  if (!isTRUE(getOption("gpukmeans.rmpi", TRUE)) || !requireNamespace("Rmpi", quietly = TRUE))
    stop("'comm' needs the Rmpi package (gpu_kmeans over MPI); install it (on Debian: r-cran-rmpi, ",
         "openmpi-bin and libopenmpi-dev), or leave 'comm' NULL for a fit in this process", call. = FALSE)
  # Rmpi's functions from its namespace, not as Rmpi::f: R CMD check would
  # load Rmpi to look them up, and loading Rmpi starts MPI.
  mpi <- asNamespace("Rmpi")
  size <- mpi$mpi.comm.size(comm)
  if (!isTRUE(size >= 1))
    stop(sprintf("'comm' = %d is not a communicator of this process (Rmpi::mpi.comm.size(%d) is 0); ", comm, comm),
         "in a script run by mpirun or srun, comm = 0 is MPI_COMM_WORLD", call. = FALSE)
  ctx$rank <- as.integer(mpi$mpi.comm.rank(comm))
  ctx$size <- as.integer(size)
  timed <- function(expr) {
    t0 <- proc.time()[["elapsed"]]
    on.exit(ctx$seconds <- ctx$seconds + proc.time()[["elapsed"]] - t0)
    expr
  }
  ctx$allreduce <- function(x, op) timed(mpi$mpi.allreduce(x, type = 2L, op = op, comm = comm))
  ctx$allgather <- function(x) timed(mpi$mpi.allgather(x, type = 2L, rdata = double(length(x) * size), comm = comm))
  ctx$gatherv <- function(x, counts, root) {
    timed(mpi$mpi.gatherv(x, type = 2L, rdata = double(if (ctx$rank == root) sum(counts) else 1L),
                            rcounts = as.integer(counts), root = root, comm = comm))
  }
  ctx$scatterv <- function(x, counts, root) {
    timed(mpi$mpi.scatterv(if (ctx$rank == root) x else double(1L), scounts = as.integer(counts), type = 2L,
                             rdata = double(counts[ctx$rank + 1L]), root = root, comm = comm))
  }
  ctx$allgatherv <- function(x, counts) {
    timed(mpi$mpi.allgatherv(as.double(x), type = 2L, rdata = double(sum(counts)), rcounts = as.integer(counts),
                               comm = comm))
  }
  ctx$strings <- function(s) timed({
    b <- charToRaw(enc2utf8(s))
    len <- mpi$mpi.allgather(length(b), type = 1L, rdata = integer(size), comm = comm)
    all <- mpi$mpi.allgatherv(b, type = 4L, rdata = raw(sum(len)), rcounts = len, comm = comm)
    ends <- cumsum(len)
    vapply(seq_len(size), function(r) rawToChar(all[seq_len(len[r]) + ends[r] - len[r]]), "")
  })
  ctx
}

# ---- this rank's work and the collectives that carry its status ---------------

# The local work of this rank: list(ok = TRUE, value) or list(ok = FALSE,
# cond) for the error or interrupt that stopped it, held until every rank
# has heard of it (the next co_*() call).  Interrupts are allowed here only.
local_step <- function(ctx, phase, expr) {
  tryCatch(allowInterrupts({
    gk_poll_interrupts()  # one that came while this rank waited in a collective
    hook <- getOption("gpukmeans.mpi_fault")  # internal: the tests' fault injection
    if (is.function(hook)) hook(ctx$rank, phase)
    value <- expr
    gk_poll_interrupts()  # one that came while it worked
    list(ok = TRUE, value = value)
  }), error = function(e) list(ok = FALSE, cond = e), interrupt = function(e) list(ok = FALSE, cond = e))
}

# A step's status with another value (the value of a failed step is NULL).
with_value <- function(st, value) list(ok = st$ok, value = if (st$ok) value, cond = st$cond)

# The error that ends the collective call on every rank: each failed rank's
# message, in rank order.
co_fail <- function(ctx, st) {
  msg <- if (st$ok) "" else {
    m <- if (inherits(st$cond, "interrupt")) "interrupted" else conditionMessage(st$cond)
    if (nzchar(m)) m else "an error without a message"
  }
  msgs <- ctx$strings(msg)
  failed <- which(nzchar(msgs))
  text <- paste(sprintf("rank %d: %s", failed - 1L, msgs[failed]), collapse = "; ")
  stop(structure(class = c("gpukmeans_mpi_error", "gpukmeans_error", "error", "condition"),
                 list(message = paste0("gpu_kmeans over MPI stopped on every rank (", text, ")"),
                      call = NULL, ranks = failed - 1L, errors = msgs[failed],
                      local = if (!st$ok) st$cond)))
}

# The values of local steps, checked: a failed step on any rank stops every
# rank.  `len` is the length of st$value on every rank.
co_reduce <- function(ctx, st, len, op = c("sum", "max")) {
  op <- match.arg(op)
  x <- if (st$ok) as.double(st$value) else double(len)
  if (st$ok && length(x) != len) {
    st <- list(ok = FALSE, cond = simpleError(sprintf("internal: %d values where %d were expected", length(x), len)))
    x <- double(len)
  }
  y <- ctx$allreduce(c(if (st$ok) 0 else 1, x), op)
  if (y[1L] > 0) co_fail(ctx, st)
  y[-1L]
}

# Every rank's value, as the columns of a len x size matrix.
co_gather <- function(ctx, st, len) {
  x <- if (st$ok) as.double(st$value) else double(len)
  if (st$ok && length(x) != len) {
    st <- list(ok = FALSE, cond = simpleError(sprintf("internal: %d values where %d were expected", length(x), len)))
    x <- double(len)
  }
  y <- matrix(ctx$allgather(c(if (st$ok) 0 else 1, x)), nrow = len + 1L)
  if (any(y[1L, ] > 0)) co_fail(ctx, st)
  y[-1L, , drop = FALSE]
}

# A status check alone.
co_check <- function(ctx, st) invisible(co_reduce(ctx, with_value(st, double(0)), 0L, "max"))

# The owner's values as every rank's: the others add -0, which leaves every
# double as it is (-0 included) in any order of addition.
co_share <- function(ctx, st, len, owner = rep(0L, len)) {
  if (st$ok && length(st$value) == len) st$value <- ifelse(owner == ctx$rank, st$value, -0)
  co_reduce(ctx, st, len, "sum")
}

# Rows of the concatenated data (0-based global indices) as a matrix, sent
# by the ranks that hold them.
co_rows <- function(ctx, B, idx) {
  st <- local_step(ctx, "rows", {
    M <- matrix(-0, length(idx), B$d)
    own <- idx >= B$offset & idx < B$offset + B$n
    if (any(own)) M[own, ] <- B$x[idx[own] - B$offset + 1, , drop = FALSE]
    as.vector(M)
  })
  matrix(co_reduce(ctx, st, length(idx) * B$d, "sum"), length(idx), B$d)
}

# ---- the fit -----------------------------------------------------------------

# gpu_kmeans(comm = ): the arguments as gpu_kmeans() got them (dots: the
# number of arguments in `...`; device NULL: by local rank).
mpi_gpu_kmeans <- function(x, centers, iter.max, nstart, algorithm, trace, dots, precision, backend, device,
                           init, comm, t_begin) {
  ctx <- mpi_context(comm)
  suspendInterrupts(mpi_fit(ctx, environment(), t_begin))
}

mpi_fit <- function(ctx, args, t_begin) {
  P <- ctx$size
  # Arguments and this rank's block, checked here, then once more against
  # every rank's in the first collective.
  st <- local_step(ctx, "arguments", with(args, {
    if (dots > 0L) stop("unused arguments in gpu_kmeans()", call. = FALSE)
    algorithm <- choose_one(algorithm, c("Lloyd", "Forgy", "Hartigan-Wong", "MacQueen"), "algorithm")
    if (!algorithm %in% c("Lloyd", "Forgy"))
      stop(sprintf("comm = is for algorithm = \"Lloyd\" only, not \"%s\"", algorithm), call. = FALSE)
    precision <- choose_one(precision, c("double", "single"), "precision")
    init <- choose_one(init, c("random", "kmeans++", "kmeans||"), "init")
    trace <- check_trace(trace)
    check_backend(backend)
    if (!is.null(device)) device <- check_device(device)
    nstart <- check_nstart(nstart)
    it <- check_iter_max(iter.max)
    if (!is.null(it$problem)) stop(it$problem, call. = FALSE)
    x <- block_matrix(x)
    cen <- as_centers(centers)
    given <- length(cen) != 1L
    if (given) {
      cen <- check_centers_matrix(cen, Inf)
      if (ncol(x) != ncol(cen)) stop("must have same number of columns in 'x' and 'centers'", call. = FALSE)
      size <- nrow(cen)
    } else {
      size <- as.vector(cen)
      check_k(size, Inf)
    }
    list(x = x, cen = cen, given = given, size = size, k = as.integer(size), iter = it$value,
         nstart = if (given) 1L else nstart, init = init, precision = precision, trace = trace,
         backend = backend, device = device,
         sig = c(ncol(x), size, given, it$value, nstart, match(init, c("random", "kmeans++", "kmeans||")),
                 match(precision, c("double", "single")), isTRUE(trace > 0)),
         host = host_hash())
  }))
  a <- st$value
  head <- co_gather(ctx, with_value(st, c(nrow(a$x), a$host, a$sig)), 10L)
  n_all <- head[1L, ]
  sig <- head[-(1:2), , drop = FALSE]
  what <- c("the number of columns of x", "centers", "whether centers are given", "iter.max", "nstart",
            "init", "precision", "trace")
  differ <- which(apply(sig, 1L, function(v) any(v != v[1L])))
  if (length(differ))
    stop(sprintf("gpu_kmeans over MPI: the ranks disagree on %s (every rank must pass the same arguments)",
                 paste(what[differ], collapse = ", ")), call. = FALSE)
  N <- sum(n_all)
  offsets <- c(0, cumsum(n_all))[seq_len(P)]
  d <- ncol(a$x)
  k <- a$k
  if (N == 0) stop("'x' has no rows on any rank", call. = FALSE)
  if (!a$given) check_k(a$size, N)
  if (a$given && k > N) stop("more cluster centers than data points", call. = FALSE)
  local_rank <- sum(head[2L, seq_len(ctx$rank)] == head[2L, ctx$rank + 1L])
  B <- list(x = a$x, n = nrow(a$x), d = d, offset = offsets[ctx$rank + 1L], N = N, offsets = offsets,
            counts = n_all)

  # Given centers: the same on every rank.
  if (a$given) {
    both <- co_reduce(ctx, list(ok = TRUE, value = c(a$cen, -a$cen)), 2L * k * d, "max")
    if (any(both[seq_len(k * d)] != -both[k * d + seq_len(k * d)]))
      stop("gpu_kmeans over MPI: the ranks disagree on the centers (every rank must pass the same matrix)",
           call. = FALSE)
  }

  # The single-precision shift of one process holding every row.
  single <- a$precision == "single"
  shift <- NULL
  if (single) {
    m <- min(N, 4096)
    rows <- floor((seq_len(m) - 1) * N / m)
    shift <- gk_single_shift_rows(co_rows(ctx, B, rows))
  }

  # This rank's engine and the column maxima of all ranks.
  st <- local_step(ctx, "engine", {
    threads <- cpu_threads(as.numeric(B$n) * k * d)
    engine <- if (B$n == 0) "none" else resolve_backend(a$backend, device_by_rank(a$device, local_rank), B$n * k * d)
    dev <- device_by_rank(a$device, local_rank)
    h <- gk_block_new(a$x, B$offset, N, if (engine == "none") "cpu" else engine, single, threads, dev,
                      cuda_options(), shift)
    list(h = h, engine = engine, maxabs = gk_block_maxabs(h))
  })
  h <- st$value$h
  if (!is.null(h)) on.exit(gk_block_free(h), add = TRUE)
  engine <- st$value$engine
  maxabs <- co_reduce(ctx, with_value(st, st$value$maxabs), d, "max")
  gk_check_range(maxabs, single)
  scale <- gk_step_scales(maxabs)
  shift_cols <- if (single) shift else rep(0, d)
  info <- gk_block_info(h)

  # totss: the step with one center gives the global mean, the within-SS
  # about it the total sum of squares.
  t_comp <- proc.time()[["elapsed"]]
  st <- local_step(ctx, "totss", gk_block_step(h, matrix(0, 1L, d), scale, TRUE))
  mean <- gk_step_unpack(co_reduce(ctx, st, 2L + 4L * d, "sum"), 1L, scale)$centers
  totss <- block_withinss(ctx, h, mean, 1L, scale, d)$withinss
  seconds_compute <- proc.time()[["elapsed"]] - t_comp

  # The starts, drawn and fitted one after the other as stats does.
  starts <- mpi_starts(ctx, B, a, N)
  iter_engine <- if (k == 1L) 2L else a$iter
  best <- NULL
  start_wss <- double(a$nstart)
  start_iter <- integer(a$nstart)
  start_empty <- logical(a$nstart)
  init_rows <- vector("list", a$nstart)
  seconds_init <- 0
  for (s in seq_len(a$nstart)) {
    t0 <- proc.time()[["elapsed"]]
    c0 <- starts$next_start(h)
    seconds_init <- seconds_init + proc.time()[["elapsed"]] - t0
    init_rows[s] <- list(c0$rows)
    t0 <- proc.time()[["elapsed"]]
    fit <- mpi_lloyd(ctx, h, c0$centers, k, iter_engine, scale, shift_cols, d, a$trace, s, a$nstart)
    seconds_compute <- seconds_compute + proc.time()[["elapsed"]] - t0
    start_wss[s] <- sum(fit$withinss)
    start_iter[s] <- fit$iter
    start_empty[s] <- any(fit$size == 0L)
    if (s == 1L || start_wss[s] < sum(best$withinss)) {
      best <- fit
      best$start <- s
    }
  }
  if (k == 1L) best$iter <- start_iter[] <- 1L

  timing <- c(compute = seconds_compute, init = seconds_init, mpi = ctx$seconds)
  if (engine == "cuda") timing <- c(transfer_to_device = info$seconds_upload, timing)
  z <- list(cluster = best$labels, centers = best$centers, totss = totss, withinss = best$withinss,
            size = best$size, iter = best$iter, best_start = best$start, start_tot_withinss = start_wss,
            start_iter = start_iter, start_empty = start_empty, start_init_rows = init_rows,
            timing = timing, device = sprintf("%s; MPI rank %d of %d", info$device, ctx$rank, P))
  # The warnings of stats' do_one(), start by start (on every rank).
  ifault <- NULL
  for (s in seq_len(a$nstart)) {
    if (z$start_empty[s]) warning("empty cluster: try a better set of initial centers", call. = FALSE)
    if (z$start_iter[s] > a$iter) {
      warning(sprintf(ngettext(a$iter, "did not converge in %d iteration",
                               "did not converge in %d iterations"), a$iter),
              call. = FALSE, domain = NA)
      if (s == z$best_start) ifault <- 2L
    }
    if (z$start_empty[s]) warning("empty cluster: try a better set of initial centers", call. = FALSE)
  }
  fit <- new_gpu_kmeans(a$x, z, k, ifault, if (engine == "none") "cpu" else engine, a$nstart, t_begin)
  attr(fit, "mpi") <- list(rank = ctx$rank, size = P, rows = N, offset = B$offset,
                           init_rows = if (!a$given && a$init != "random") z$start_init_rows)
  fit
}

# This rank's block as a double matrix (no rows allowed: a rank may hold
# none), checked as gpu_kmeans() checks x.
block_matrix <- function(x) {
  if ((is.matrix(x) || is.data.frame(x) || is.atomic(x)) && NROW(x) == 0L) {
    if (!(is.numeric(as.matrix(x)) || is.logical(as.matrix(x))))
      stop("'x' must be numeric, not ", describe_type(x), call. = FALSE)
    x <- as.matrix(x)
    storage.mode(x) <- "double"
    if (ncol(x) == 0L) stop("'x' has no columns", call. = FALSE)
    return(x)
  }
  as_data_matrix(x)
}

# A number for this host's name (ranks on one host share it: the local rank
# chooses the GPU).
host_hash <- function() {
  h <- 0
  for (b in utf8ToInt(Sys.info()[["nodename"]])) h <- (h * 131 + b) %% 35184372088777  # exact: < 2^53
  h
}

# The CUDA device of this rank: as given, else the local rank modulo the
# devices this process sees.
device_by_rank <- function(device, local_rank) {
  if (!is.null(device)) return(device)
  p <- cuda_probe()
  count <- if (isTRUE(p$built)) p$device_count else 0L
  if (count > 0L) as.integer(local_rank %% count) else 0L
}

# The within-SS of the last step's labels w.r.t. centers (stored
# coordinates), as lloyd_parts() computes it; the labels too when asked.
block_withinss <- function(ctx, h, centers, k, scale, d, labels = FALSE) {
  st <- local_step(ctx, "withinss", gk_block_wss_maxterm(h, centers))
  maxterm <- co_reduce(ctx, st, k, "max")
  st <- local_step(ctx, "withinss", list(sums = gk_block_wss_sums(h, centers, maxterm),
                                         labels = if (labels) gk_block_labels(h)))
  sums <- co_reduce(ctx, with_value(st, st$value$sums), 4L * k, "sum")
  list(withinss = gk_wss_unpack(sums, maxterm), labels = st$value$labels)
}

# Lloyd's algorithm from centers (original coordinates) over every rank's
# rows, as lloyd_parts(): one allreduce per iteration.
mpi_lloyd <- function(ctx, h, centers, k, iter_max, scale, shift, d, trace, start, nstart) {
  cen <- centers - rep(shift, each = k)
  len <- 1L + k + 4L * k * d
  iter <- iter_max + 1L
  size <- integer(k)
  for (it in seq_len(iter_max)) {
    st <- local_step(ctx, "step", gk_block_step(h, cen, scale, it == 1L))
    u <- gk_step_unpack(co_reduce(ctx, st, len, "sum"), k, scale)
    size <- u$size
    if (isTRUE(trace > 0) && ctx$rank == 0L)
      cat(sprintf("iter %3d%s: %.0f points changed cluster\n", it,
                  if (nstart > 1L) sprintf(" (start %d)", start) else "", u$changed))
    if (u$changed == 0) {
      iter <- it
      break
    }
    cen <- u$centers
  }
  w <- block_withinss(ctx, h, cen, k, scale, d, labels = TRUE)
  list(centers = cen + rep(shift, each = k), size = size, withinss = w$withinss, iter = iter, labels = w$labels)
}

# ---- starts ------------------------------------------------------------------

# The starts of the fit: next_start(h) gives the next start's centers
# (original coordinates) and, for seeded inits, the rows chosen (1-based,
# global), drawing from rank 0's generator what a one-process fit draws.
mpi_starts <- function(ctx, B, a, N) {
  k <- a$k
  if (a$given) return(list(next_start = function(h) list(centers = unname(a$cen))))
  if (a$init != "random") {
    return(list(next_start = function(h) {
      rows <- if (a$init == "kmeans++") mpi_kmeanspp(ctx, B, h, k) else mpi_kmeanspar(ctx, B, h, k, a)
      centers <- rows$centers
      if (length(gk_unique_rows(centers)) < k)
        engine_error("data_error", "more cluster centers than distinct data points.")
      list(centers = centers, rows = rows$rows + 1)
    }))
  }
  # Random starts, as stats draws them on the concatenated rows.
  size <- a$size
  draw_rank0 <- function(len, draw) {
    st <- local_step(ctx, "draw", if (ctx$rank == 0L) as.double(draw()) else double(len))
    co_share(ctx, st, len)
  }
  first <- NULL
  if (a$nstart == 1L) {
    idx <- draw_rank0(k, function() sample.int(N, size))
    first <- co_rows(ctx, B, idx - 1)
  }
  if (a$nstart >= 2L || any_duplicated_rows(first)) {
    distinct <- mpi_distinct(ctx, B)
    mm <- sum(distinct$counts)
    if (mm < size) stop("more cluster centers than distinct data points.", call. = FALSE)
    ends <- cumsum(distinct$counts)
    return(list(next_start = function(h) {
      pos <- draw_rank0(k, function() sample.int(mm, size))
      owner <- findInterval(pos - 1, ends)  # the rank whose distinct rows hold position pos
      st <- local_step(ctx, "rows", {
        M <- matrix(-0, k, B$d)
        mine <- owner == ctx$rank
        if (any(mine)) {
          before <- if (ctx$rank > 0L) ends[ctx$rank] else 0
          M[mine, ] <- B$x[distinct$rows[pos[mine] - before], , drop = FALSE]
        }
        as.vector(M)
      })
      list(centers = matrix(co_reduce(ctx, st, k * B$d, "sum"), k, B$d))
    }))
  }
  list(next_start = function(h) list(centers = first))
}

# The rows unique() keeps of the concatenated data, in order of first
# occurrence: list(rows = this rank's (1-based, local), counts = every
# rank's count).  A row is kept on the first rank that holds it.
mpi_distinct <- function(ctx, B) {
  P <- ctx$size
  st <- local_step(ctx, "distinct", {
    keep <- if (B$n > 0L) gk_unique_rows(B$x) else integer(0)
    hs <- gk_row_hashes(B$x, keep)
    dest <- as.integer(hs$lo %% P)
    list(keep = keep, hs = hs, dest = dest, counts = tabulate(dest + 1L, P))
  })
  loc <- st$value
  if (P == 1L) {
    counts <- co_reduce(ctx, with_value(st, length(loc$keep)), 1L, "sum")
    return(list(rows = loc$keep, counts = counts))
  }
  # 1. Each hash to the rank that owns it (hash mod P), which finds the
  #    hashes that occur on more than one rank.
  sent <- co_gather(ctx, with_value(st, loc$counts), P)  # sent[r + 1, q + 1]: q to r
  mine <- NULL
  for (o in seq_len(P) - 1L) {
    sel <- loc$dest == o
    got <- ctx$gatherv(c(loc$hs$hi[sel], loc$hs$lo[sel]), 2 * sent[o + 1L, ], o)
    if (ctx$rank == o) mine <- got
  }
  st <- local_step(ctx, "distinct", {
    cnt <- sent[ctx$rank + 1L, ]
    ends <- cumsum(2 * cnt)
    by_rank <- lapply(seq_len(P), function(q) {
      v <- mine[seq_len(2 * cnt[q]) + ends[q] - 2 * cnt[q]]
      list(hi = v[seq_len(cnt[q])], lo = v[cnt[q] + seq_len(cnt[q])])
    })
    as.double(unlist(gk_shared_hashes(by_rank)))
  })
  co_check(ctx, st)
  flags <- st$value
  shared <- logical(length(loc$keep))
  for (o in seq_len(P) - 1L) {
    got <- ctx$scatterv(flags, sent[o + 1L, ], o)
    shared[loc$dest == o] <- got > 0
  }
  # 2. The rows with a shared hash to rank 0, compared exactly there.
  st <- local_step(ctx, "distinct", B$x[loc$keep[shared], , drop = FALSE])
  m <- co_gather(ctx, with_value(st, nrow(st$value)), 1L)[1L, ]
  got <- ctx$gatherv(as.vector(st$value), m * B$d, 0L)
  st <- local_step(ctx, "distinct", if (ctx$rank == 0L) {
    ends <- cumsum(m * B$d)
    mats <- lapply(seq_len(P), function(q) matrix(got[seq_len(m[q] * B$d) + ends[q] - m[q] * B$d], m[q], B$d))
    as.double(unlist(gk_rows_seen_before(mats)))
  })
  co_check(ctx, st)
  seen <- ctx$scatterv(st$value, m, 0L) > 0
  rows <- loc$keep
  if (any(seen)) rows <- rows[-which(shared)[seen]]
  counts <- co_gather(ctx, list(ok = TRUE, value = length(rows)), 1L)[1L, ]
  list(rows = rows, counts = counts)
}

# k-means++ over every rank's rows: list(rows = the chosen rows (0-based,
# global), centers), the choices of gk::Engine::greedy() over the
# concatenated rows (src/cpu_init.cpp, Greedy), with the sums of its trees
# from the ranks' covers.
mpi_kmeanspp <- function(ctx, B, h, k) {
  P <- ctx$size
  N <- B$N
  d <- B$d
  L <- gk_greedy_candidates(k)
  unif <- co_share(ctx, local_step(ctx, "draw", if (ctx$rank == 0L) init_spec("kmeans++", k)$unif
                                   else double(1L + (k - 1L) * L)), 1L + (k - 1L) * L)
  clen <- gk_cover_length(N)
  picks <- gk_uniform_row(unif[1L], N, NULL)
  centers <- co_rows(ctx, B, picks)
  on.exit(gk_block_init_end(h), add = TRUE)
  if (k > 1L) {
    st <- local_step(ctx, "init", {
      gk_block_init_begin(h)
      gk_block_init_add(h, centers)
      gk_block_init_d2_cover(h)
    })
    tree <- co_gather(ctx, st, clen)
    which_tree <- 0L
    per <- 1L
  }
  for (s in seq_len(k - 1L)) {
    u <- unif[1L + (s - 1L) * L + seq_len(L)]
    ent <- gk_cover_descend(as.vector(tree), P, per, which_tree, N, u)
    # Each candidate from the rank whose cover node the descent entered;
    # with nothing to sample (every D2 is 0), the lowest row not chosen.
    owner <- ent[, 1L]
    lowest <- setdiff(seq_len(length(picks) + 1L) - 1, picks)[1L]
    st <- local_step(ctx, "init", {
      g <- rep(lowest, L)
      rows <- matrix(-0, L, d)
      for (j in which(owner == ctx$rank)) g[j] <- gk_block_init_descend(h, ent[j, 2L], ent[j, 3L], ent[j, 4L], ent[j, 5L])
      mine <- (owner == ctx$rank) | (owner < 0 & lowest >= B$offset & lowest < B$offset + B$n)
      if (any(mine)) rows[mine, ] <- B$x[g[mine] - B$offset + 1, , drop = FALSE]
      c(ifelse(owner == ctx$rank, g, -0), as.vector(rows))
    })
    cand <- co_reduce(ctx, st, L + L * d, "sum")
    g <- ifelse(owner < 0, lowest, cand[seq_len(L)])
    rows <- matrix(cand[L + seq_len(L * d)], L, d)
    # The candidates' potentials, and the first of the least.
    st <- local_step(ctx, "init", gk_block_init_potentials(h, rows))
    tree <- co_gather(ctx, st, L * clen)
    pot <- gk_cover_totals(as.vector(tree), P, L, N)
    best <- 1L
    for (j in seq_len(L)[-1L]) if (pot[j] < pot[best]) best <- j
    picks <- c(picks, g[best])
    centers <- rbind(centers, rows[best, , drop = FALSE])
    if (s + 1L < k) {
      # D2 with the new center: its leaves are the chosen candidate's
      # potential terms, so its tree is that candidate's.
      st <- local_step(ctx, "init", gk_block_init_add(h, rows[best, , drop = FALSE]))
      co_check(ctx, st)
      which_tree <- best - 1L
      per <- L
    }
  }
  list(rows = picks, centers = unname(centers))
}

# k-means|| over every rank's rows: the oversampling rounds of
# par_candidates() (src/init_driver.cpp: the same loop) with D2 and the
# potential from the ranks' covers, the candidates gathered on every rank,
# then the reduction of par_reduce() on them.
mpi_kmeanspar <- function(ctx, B, h, k, a) {
  P <- ctx$size
  N <- B$N
  d <- B$d
  seed <- co_share(ctx, local_step(ctx, "draw", if (ctx$rank == 0L) init_spec("kmeans||", k)$seed else double(2L)), 2L)
  set <- gk_par_settings(k)
  clen <- gk_cover_length(N)
  cand <- gk_uniform_row(0, N, seed)
  rows <- co_rows(ctx, B, cand)
  st <- local_step(ctx, "init", {
    gk_block_init_begin(h)
    gk_block_init_add(h, rows)
    gk_block_init_d2_cover(h)
  })
  on.exit(gk_block_init_end(h), add = TRUE)
  phi <- gk_cover_totals(as.vector(co_gather(ctx, st, clen)), P, 1L, N)
  rounds <- 0L
  round <- function() {
    rounds <<- rounds + 1L
    st <- local_step(ctx, "init", {
      sel <- gk_block_init_select(h, seed, rounds, set$l, phi)
      c(sel, as.vector(B$x[sel - B$offset + 1, , drop = FALSE]))
    })
    m <- co_gather(ctx, with_value(st, length(st$value) / (1 + d)), 1L)[1L, ]
    got <- all_gatherv(ctx, st$value, m * (1 + d))
    idx <- unlist(lapply(got, function(v) v[seq_len(length(v) / (1 + d))]))
    add <- do.call(rbind, lapply(got, function(v) {
      q <- length(v) / (1 + d)
      matrix(v[q + seq_len(q * d)], q, d)
    }))
    cand <<- c(cand, idx)
    rows <<- rbind(rows, add)
    if (length(idx)) {
      st <- local_step(ctx, "init", {
        gk_block_init_add(h, add)
        gk_block_init_d2_cover(h)
      })
      phi <<- gk_cover_totals(as.vector(co_gather(ctx, st, clen)), P, 1L, N)
    }
  }
  repeat {
    while (phi > 0 && rounds < set$max_rounds && (rounds < set$rounds || length(cand) < k)) round()
    weight <- co_reduce(ctx, local_step(ctx, "init", gk_block_init_counts(h, length(cand))), length(cand), "sum")
    if (sum(weight > 0) >= k || !(phi > 0) || rounds >= set$max_rounds) break
    round()
  }
  st <- local_step(ctx, "init", gk_par_reduce_gathered(rows, weight, k, seed, cpu_threads(length(cand) * k * d)))
  co_check(ctx, st)
  pick <- st$value + 1
  out <- cand[pick]
  centers <- rows[pick, , drop = FALSE]
  if (length(out) < k) {
    # The degenerate rule: the lowest rows not taken yet.
    need <- k - length(out)
    free <- setdiff(seq_len(min(N, length(out) + need)) - 1, out)
    fill <- c(free, rep(0, need))[seq_len(need)]
    out <- c(out, fill)
    centers <- rbind(centers, co_rows(ctx, B, fill))
  }
  list(rows = out, centers = unname(centers))
}

# Every rank's vector (lengths known: counts), as a list in rank order.
all_gatherv <- function(ctx, x, counts) {
  got <- ctx$allgatherv(x, counts)
  ends <- cumsum(counts)
  lapply(seq_along(counts), function(q) got[seq_len(counts[q]) + ends[q] - counts[q]])
}
