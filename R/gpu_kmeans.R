#' K-means clustering on the GPU, a drop-in for stats::kmeans
#'
#' `gpu_kmeans()` runs Lloyd's algorithm on an NVIDIA GPU through CUDA, or on
#' a multi-threaded CPU engine where there is no GPU, and returns an object of
#' class `c("gpu_kmeans", "kmeans")` that every tool made for
#' [stats::kmeans()] fits accepts (`print`, `fitted`, broom's `tidy`/`glance`/
#' `augment`, factoextra, clue).
#'
#' @section Drop-in rules (what is identical to kmeans(), what differs):
#' \strong{Identical.}  `gpu_kmeans(x, centers, iter.max, nstart)` returns
#' what `stats::kmeans(x, centers, iter.max, nstart, algorithm = "Lloyd")`
#' returns: the same components, cluster labels, `iter`, `size` and `ifault`,
#' the same warnings ("did not converge in N iterations", "empty cluster: try
#' a better set of initial centers"), and it uses the random number generator
#' in the same order and leaves it in the same state, also when it stops with
#' an error (the checks that stats makes after drawing its first start, of
#' `iter.max` and of the data, come after the same draws).  The rules are
#' those of stats' C code: each point goes to the nearest center (squared
#' Euclidean distance, ties to the lowest index), the loop stops when no point
#' changes cluster, an empty cluster keeps a `NaN` center, and `k = 1`
#' reports `iter = 1`.  Arguments are read as stats reads them: `centers =
#' 2.5` is 2 clusters (so `sqrt(nrow(x) / 2)` works), `nstart = 2.5` is 2
#' starts, `iter.max = 2.7` is 2, `algorithm = "Hart"` is `"Hartigan-Wong"`;
#' the first six arguments are stats' in stats' order, and an argument that
#' matches none is an error ("unused argument"), as in stats.
#' `algorithm = "Hartigan-Wong"` (stats' default) and `"MacQueen"` run
#' [stats::kmeans()] itself, on the CPU, so that `gpu_kmeans` can replace
#' `kmeans` in any code: the fit's `backend` attribute is `"stats"`, and a
#' message of class `gpukmeans_stats` says so once per session.
#'
#' \strong{How identical.}  The CPU engine in double precision gives the
#' labels, `iter`, `size` and warnings of stats on all data, R's own
#' regression data for PR#15364 included (points 1 and 2 units in the last
#' place apart): its centers are bitwise stats' with one thread, and equal up
#' to the last bits with more (partial sums are added in a fixed order, so a
#' given number of threads always gives the same result).  The CUDA engine in
#' double precision gives the same labels except on data whose points lie
#' within a few units in the last place of each other, where centers that
#' differ in the last bits can send such a point to the other side; its
#' centers equal stats' up to rounding.  (Why: stats adds a cluster's points
#' one after another in double precision, so its mean carries the rounding of
#' that order; the GPU adds them as exact fixed-point integers, in any order,
#' which gives the mean rounded once.  Following stats' order would make each
#' cluster's sum a sequential loop, and only data with points a few units in
#' the last place apart can tell the two apart.  For stats' bits on such data
#' use `backend = "cpu"` with `options(gpukmeans.threads = 1)`.)
#' `precision = "single"` equals stats only up to single-precision rounding.
#'
#' \strong{Differences, and why.}  The default `iter.max` is 1000, not 10,
#' so that a fit converges by default: with 10, Lloyd's algorithm from one
#' random start stopped unfinished in 89\% of seeds on [boxes] (k = 12), and
#' iterations cost microseconds.  Measured over 5 910 single random starts
#' without a cap (boxes with k = 12 to 96; [simulate_blobs()] with n = 1e3 to
#' 1e5, d = 2 and 10, k = 5 to 100; CPU engine, 2026-11-23), the hardest case
#' (n = 1e5, d = 2, k = 100) needed at most 660 iterations (99th percentile
#' 533) and none needed more than 1000.  Pass `iter.max = 10` for stats'
#' default and its result, warning included.  An `iter.max` of
#' `.Machine$integer.max` or more (`Inf`) means no limit (stats fails).  Some
#' values stats accepts with a wrong or surprising result are errors here,
#' with a message naming the problem: character or complex data (stats turns
#' them into `NA` or drops the imaginary part), `centers = TRUE`, `iter.max`
#' given as a string, `1 < nstart < 2` (an error in stats too) and more than
#' a million starts.  The fit has class `c("gpu_kmeans", "kmeans")` and the
#' attributes `backend`, `device` and `timing`, which [all.equal()] ignores
#' (see [all.equal.gpu_kmeans()]); it has a [predict()] method.
#'
#' @section Initialisation:
#' When `centers` is a number, `init` chooses how each start's initial centers
#' are found (a matrix of centers is always used as given).
#'
#' `"random"` (the default): k rows at random, drawn exactly as
#'   [stats::kmeans()] draws them.  Prefer it for parity with stats: same
#'   seed, same fit.
#'
#' `"kmeans++"`: greedy k-means++ (Arthur and Vassilvitskii 2007): the first
#'   center is a random row, each further one the best, by the resulting
#'   potential, of `2 + floor(log(k))` rows drawn with probability
#'   proportional to their squared distance to the nearest chosen center
#'   (D^2 sampling).  Costs about `k * (2 + log(k))` passes over the data and
#'   usually gives a much better fit than random starts, with fewer
#'   iterations and less need for `nstart > 1`.  Prefer it for quality.
#'
#' `"kmeans||"`: scalable k-means++ (Bahmani et al. 2012): 5 rounds (more
#'   if needed to have k distinct candidates) in which every row is sampled
#'   independently with probability `min(1, 2k D^2 / potential)`, then the
#'   candidates, weighted by the rows nearest to them, are reduced to k
#'   centers by weighted greedy k-means++.  About as good as k-means++ with a
#'   handful of passes over the data instead of k: prefer it for large n and
#'   large k.
#'
#' Both draw their random numbers from R's generator (k-means++: the
#' uniforms themselves; k-means||: a 64-bit seed from two [runif()] draws
#' for a counter-based generator), start by start, so `set.seed()` makes the
#' fit reproducible, and in double precision the CPU and CUDA engines choose
#' the same rows (sums are taken in a fixed order on both).  Neither
#' consumes the random numbers that stats would, so they do not reproduce
#' [stats::kmeans()] fits.  A row that coincides with a chosen center has
#' probability 0, so duplicate rows never give duplicate centers; with fewer
#' than k distinct rows the fit stops with an error, as in stats.
#' `attr(fit, "timing")[["init"]]` is the time spent choosing centers.
#'
#' @section Backends:
#' `backend = "auto"` (the default, or `options(gpukmeans.backend =)`) uses
#' the CUDA engine when the package was built with CUDA and a usable device is
#' present, and otherwise the CPU engine, saying so once per session with a
#' message of class `gpukmeans_fallback` (silence it with
#' [suppressMessages()] or by choosing `backend = "cpu"`).  `backend = "cuda"`
#' is an error when no GPU can be used, with the reason.  [gpukmeans_info()]
#' shows what was built and which devices are visible.
#'
#' With `backend = "auto"`, a problem with fewer than 5e4 multiply-adds per
#' iteration (`n * k * d`, e.g. `iris` with 3 clusters: 1 800) runs on the
#' CPU engine without looking for a GPU, as the GPU's fixed costs (upload,
#' launches, synchronisation: about 0.1 ms a start, against 0.5 ns a
#' multiply-add for the CPU engine) exceed what it saves there (`iris` with
#' `nstart = 100` took 15 ms on an H100 and 6 ms on the CPU engine);
#' `options(gpukmeans.gpu_min_work =)` changes the threshold and
#' `attr(fit, "backend")` says what ran.
#'
#' The CPU engine's threads: at most `options(gpukmeans.threads =)` when set
#' (a whole number >= 1; larger than OpenMP allows, `Inf` included, is
#' clamped to OpenMP's thread limit and processor count), else the cores
#' this R process may use: [parallelly::availableCores()] when parallelly is
#' installed (it honours `mc.cores`, the one core of a future worker,
#' cgroups, job schedulers and `R CMD check`), else
#' [parallel::detectCores()] and `getOption("mc.cores")`; never more than
#' `OMP_NUM_THREADS` and `OMP_THREAD_LIMIT`.  Of these, a fit takes one
#' thread per 2^17 (131 072) multiply-adds of an iteration (`n * k * d`), at
#' least one: below that, starting and synchronising threads costs more than
#' they save, and far more on a machine whose cores are busy (a 4 096
#' multiply-add fit on two threads took 13 ms against 0.14 ms on one beside
#' another busy process).  `options(gpukmeans.work_per_thread =)` sets this
#' grain (0: always all threads).  With more than one thread the partial
#' sums are combined in a fixed order, so results are reproducible for a
#' given number of threads and differ from stats only by rounding.  The work
#' is split by that number, not by the threads OpenMP actually starts: where
#' it starts fewer (`OMP_DYNAMIC=true` on a busy machine, a call from inside
#' another parallel region) the result is the same, only slower.
#'
#' @section Precision:
#' `precision = "double"` (default) is exact as described above.
#' `precision = "single"` stores the data in single precision and computes
#' distances in single precision (sums are still accumulated in double): about
#' twice as fast on the GPU and half the memory, with labels that can differ
#' from double precision for points almost equidistant from two centers.
#' Single precision stores `x` minus its column means (of up to 4096 evenly
#' spaced rows), on both engines, so data far from the origin (`iris + 1e8`)
#' keeps its resolution.  Data that single precision cannot represent (values
#' beyond about 3.4e38 from the column means, squared distances that would
#' overflow or underflow) are an error of class `gpukmeans_data_error` that
#' says to use `precision = "double"`; in double precision, data whose squared
#' distances would overflow (values beyond about 1e153) are such an error too,
#' rather than a meaningless fit.
#'
#' @section Exact acceleration (distance bounds):
#' Once few points change cluster, both engines skip most point-center
#' distances by keeping, per point, an upper bound on the distance to its own
#' center and lower bounds on the distances to the others, loosened each
#' iteration by how far the centers moved (Hamerly 2010; Yinyang, Ding et al.
#' 2015).  The bounds are rounded outward, and a point whose label they do not
#' prove gets the exact distances with the usual tie rule, so in double
#' precision the labels, centers and `iter` are those of plain Lloyd at every
#' iteration: only the time changes (for example, 1e7 x 16 blobs with k = 256
#' converge in about 1/20 of the compute time on an H100).  Each engine
#' chooses by shape and stops using the bounds where they stop paying.  Extra
#' memory: on the CPU engine 28 bytes per point (Hamerly, small k) or 20 + 4 G
#' bytes per point (Yinyang, G groups of centers, at most the size of the
#' point's data or 64 MiB in all); on the CUDA engine 12 bytes per point plus
#' O(k d), taken only when free device memory allows (plain Lloyd otherwise).
#' In single precision the bounded path may take a slightly different route
#' to a fit of the same quality, as single precision may anyway.
#'
#' From k = 32 centers the CPU engine also screens every iteration that
#' computes all distances: it computes |c|^2 - 2 x.c for a tile of points and
#' centers with fused multiply-adds in SIMD registers (AVX-512 or AVX2 where
#' the processor has them), and a rigorous bound on the error of that
#' shortcut proves the nearest center of most points; only the points it
#' cannot prove (ties, near ties, data far from the origin or at extreme
#' scales) get every exact distance. Labels, centers and `iter` are again
#' those of the exact rule, bit for bit (on 1e5 x 64 data with k = 256 an
#' iteration costs about a third of the exact one).
#'
#' With one to three columns (from 2^15 points, 2^18 with three, and 8
#' centers, `iter.max` of 3 or more, no weights) the CPU engine instead sorts the points along a Z
#' curve (once, at the first fit that wants it; the starts of `nstart` share
#' it), so that each block of 64 neighbouring points lies in a
#' small box, and every iteration computes exact distances only to the
#' centers that box can need (a rounding-error bound keeps the exact rule's
#' choice on the list); a block whose points all keep one label, the only
#' center its box can need, computes nothing.  Labels, centers and `iter`
#' are again those of the exact rule, bit for bit (1e6 x 2 points, k = 100:
#' about a third of the time an iteration takes with the distance bounds;
#' 1e6 x 3, k = 8 to 256: 0.2 to 0.7 of it).
#' Extra memory: a copy of the points and three integers per point, in
#' place of the bounds, for the duration of the call.
#'
#' @section Limits:
#' `n` (rows) up to 2^31 - 1 (R's limit for the rows of a matrix, and the
#' labels are R integers); `k` up to `n`; `d` and `n * d` as memory allows
#' (indices are 64-bit: `n * d` may exceed 2^31).  Memory: the CPU engine
#' reads a double `x` in place (single precision: a float copy, 4 bytes per
#' value) plus O(k d); the CUDA engine holds `x` on the device (8 or 4 bytes
#' per value), 4 bytes per row for the labels and O(k d) for centers and
#' sums, checked against the free device memory (or
#' `options(gpukmeans.device_memory = bytes)`) before anything is copied.
#' When `x` does not fit there, it stays in host memory and is *streamed*:
#' the device keeps only the labels (4 bytes per row) and three chunk
#' buffers of about 256 MiB, and every pass over the rows (an iteration, the
#' final within-SS, `predict()`) copies `x` to it chunk by chunk, each
#' chunk's copy overlapped with the previous chunk's kernels (in double
#' precision from `x` itself, page-locked for the fit; in single precision
#' from a pinned float copy of `x`, 4 bytes a value, where a quarter of the
#' host's memory holds it).  The fit is
#' the one of resident data, bit for bit (its sums are exact, whatever the
#' chunks); an iteration then costs at least the time to move `x` over the
#' host link.  The rounds of k-means|| and the steps of k-means++ run on
#' the device, each a pass over the chunks (the rows resident data gives;
#' k-means++ on the host where its distances and sum trees, about 9 bytes a
#' row, do not fit beside the chunks); the quality indices of streamed data
#' run on the host, with the CPU engine's code (in double precision the
#' values the GPU would give); observation weights are not supported
#' with streamed data yet.  The device string of the fit says when `x` was
#' streamed.  `options(gpukmeans.stream = FALSE)` makes data that does not
#' fit an error of class `gpukmeans_out_of_memory` naming the bytes needed
#' and available instead, `TRUE` streams any data.  Data of 256 MiB or more is copied
#' to the device through three pinned host buffers of 32 MiB, filled by up to
#' 32 host threads (in single precision converted to float on the host, so
#' half the bytes cross the link).  Threads: at most OpenMP's thread
#' limit (`OMP_THREAD_LIMIT`) and the cores R may use.  The buffers stay
#' allocated after the fit, one set per GPU, for the next fit there (pinning
#' and unpinning 96 MiB costs tens of milliseconds): a session that has fit
#' such data holds 96 MiB of page-locked host memory per GPU until it ends.  A Lloyd fit reads
#' `x` on the host once: the threads that copy it also check that it has no
#' `NA`, `NaN` or infinite value (the error names the first, as for any
#' fit) and add up its columns for `totss`.  Data of 8 MiB to 256 MiB goes
#' through three pinned buffers of 4 MiB in the same way, kept as well (12
#' MiB per GPU, unless a set of 32 MiB buffers is kept there), while `totss`
#' is computed on other host threads beside the copy; smaller data is one
#' plain copy, with `totss` beside it too.
#'
#' @section Processes and forks:
#' Fits can run inside other parallel code.  A process forked after the
#' package was loaded (`parallel::mclapply()`, BiocParallel's
#' `MulticoreParam`, future's multicore plan) runs the CPU engine on one
#' thread, since OpenMP's threads do not survive `fork()`; and if the parent
#' used CUDA, the child cannot (a CUDA context does not survive `fork()`
#' either): `backend = "auto"` then takes the CPU engine, and
#' `backend = "cuda"` is an error saying why.  Socket clusters
#' (`parallel::makePSOCKcluster()`, future's multisession plan) start fresh
#' processes, which can use the GPU.  A GPU whose compute capability is below
#' 8.0, or that this build has no code for, is reported by
#' [gpukmeans_info()] and not used.
#'
#' @section Determinism:
#' Both engines give bitwise-identical results when a fit is repeated on the
#' same machine (the CPU engine for a given number of threads).  The CUDA
#' engine adds cluster sums as fixed-point integers (2^-60 of each column's
#' range), so the order in which the GPU adds them cannot change the result;
#' this costs nothing measurable, so there is no faster non-deterministic mode.
#'
#' @section Timing:
#' `attr(fit, "timing")` is a named vector of seconds: `compute` (all
#' iterations; on the GPU measured with CUDA events), `total` (the whole call,
#' from R) and, for the CUDA engine, `transfer_to_device` and
#' `transfer_to_host`, and `init` (the time spent finding initial centers
#' with `init = "kmeans++"` or `"kmeans||"`, summed over starts; 0 otherwise).  `attr(fit, "backend")` is `"cpu"` or `"cuda"` and
#' `attr(fit, "device")` names the card (or the CPU threads).
#'
#' @section Several GPUs of one host:
#' `device = c(0, 1)` (any ordinals [gpukmeans_info()] lists, in any order;
#' a repeated one runs several engines on that GPU) or `device = "all"`
#' (every usable device) splits the rows of `x` into as many contiguous
#' blocks, in order, and keeps each block resident on its GPU (uploaded
#' from `x` in place: no host copy of the block).  Each GPU runs the
#' iterations of the one-GPU fit on its rows (the certified filter in double
#' precision, distance bounds once few points move); after each assignment
#' step the GPUs exchange their partial sums, 128-bit fixed point, and each
#' adds them all up exactly before its update, without the host in between.
#' The fit is therefore the same, bit for bit, for any number of GPUs:
#' `cluster`, `centers`, `withinss`, `totss`, `size`, `iter`, the warnings
#' and the random numbers are those of `device = 0` (`totss` is computed on
#' the host, as the CPU engine computes it, on one GPU too).
#' `init = "kmeans++"` and `"kmeans||"` choose the rows one GPU chooses:
#' every GPU computes the distances of its own rows (each k-means++ step's
#' pass, each k-means|| round), and the first GPU draws the candidates,
#' reading the other GPUs' rows directly (peer access).  Where the GPUs
#' cannot reach each other's memory, the initialisation runs on the first
#' GPU over all the rows where `x` fits there beside that GPU's block (a
#' copy of `x` gathered from the GPUs' blocks, device to device, freed
#' after it), else on the host with the CPU engine's code (slower); in
#' single precision all read the values the GPUs store (`float(x -
#' shift)`).  A fit that reports every iteration (`trace`, or a progress bar
#' drawn from the start) and a cosine fit exchange the sums through the host
#' instead, step by step, with the same result.  Several devices need the CUDA engine: with `backend = "cpu"` they
#' are an error; with `backend = "auto"` and no usable GPU at all the fit
#' falls back to the CPU engine as for one device (an ordinal that does not
#' exist next to ones that do is an error).  Not yet on several devices:
#' observation weights (an error of class `gpukmeans_unsupported`), the
#' sweep over k and the silhouette (one device).  [predict()] runs on the
#' devices of `getOption("gpukmeans.device")` (set it to `c(0, 1)` or
#' `"all"` to split `newdata` too).
#' `attr(fit, "device")` lists the devices, e.g. `"2 GPUs: 0 NVIDIA H100
#' 80GB HBM3, 1 NVIDIA H100 80GB HBM3"`.
#'
#' @section Several hosts (MPI):
#' When the data outgrow one host, run the same R script on every rank of an
#' MPI job (`mpirun -np 4 Rscript fit.R`, or `srun` under Slurm), each rank
#' with its own block of rows, and call `gpu_kmeans(x_block, centers, ...,
#' comm = 0)` on every rank (the Rmpi package, with Open MPI on Debian:
#' `r-cran-rmpi`, `openmpi-bin`, `libopenmpi-dev`).  The blocks, in rank
#' order, are the data; a rank may hold no rows.  Every rank gets the same
#' `centers`, `size`, `withinss`, `totss`, `iter` and `ifault`, and
#' `cluster` for its own rows; [predict()] works on each rank.  Each rank
#' runs its engine (`device` defaults to the rank's local rank on its host,
#' modulo the GPUs it sees; the CPU engine where there is none) and one MPI
#' allreduce per iteration combines the ranks' partial sums exactly (128-bit
#' fixed point sent as 32-bit limbs, which MPI adds exactly in doubles), so
#' the result does not depend on the number of ranks or on how the rows are
#' split, bit for bit.  Compared with a fit of the concatenated rows in one
#' process: with CUDA engines the fit is the same to the last bit (the GPU
#' adds the same fixed-point sums); with the CPU engine, whose one-process
#' sums follow stats' order, the labels, `iter` and `size` are the same
#' (except on data with points within a few units in the last place of a
#' boundary between clusters, as for the CUDA engine against stats) and the
#' centers, `withinss` and `totss` equal to rounding (the distributed fit
#' adds split-independent fixed-point sums instead).  Random starts draw
#' what stats draws for the concatenated rows, from rank 0's generator
#' (the other ranks' generators are not used), `"kmeans++"` and
#' `"kmeans||"` choose the rows one process chooses (in double precision;
#' in single precision those of the CPU engine; their passes run on the
#' host CPU of each rank for now, also with the CUDA engine), and given
#' centers must be the same on every rank.  An error on one rank (bad input,
#' out of memory, an interrupt) stops the call on every rank with an error of
#' class `gpukmeans_mpi_error` naming the rank, never a hang; every rank must
#' pass the same arguments apart from `x` (and `device`).  `trace` prints on
#' rank 0; there is no progress bar.  `attr(fit, "timing")[["mpi"]]` is the
#' time spent in MPI calls.  The vignette "Several hosts: k-means over MPI"
#' shows an SPMD script and a Slurm batch file.
#'
#' @section Progress and interrupts:
#' `trace = TRUE` prints one line per iteration: the iteration, the number of
#' points that changed cluster and tot.withinss.  A fit that runs longer than
#' `getOption("cli.progress_show_after")` seconds (cli's own setting, 2 by
#' default; `options(gpukmeans.progress_after =)` overrides it) shows its
#' progress: the start, the iteration and the points that changed cluster.
#' `options(gpukmeans.progress = FALSE)` never shows it, `TRUE` always.  The
#' progress goes to progressr when the user listens to it (global handlers,
#' [progressr::with_progress()], or a future running the fit: that is how
#' progress reaches the user from future workers; they see it while the fit
#' runs), and otherwise to a cli progress bar; where the console cannot
#' redraw a line (Rscript writing to a log), at most one line every 5
#' seconds.  Ctrl-C stops a fit, also while the progress is drawn, between
#' iterations and inside long initialisations; memory (device memory too) is
#' released, and the next fit works.
#'
#' @param x numeric matrix of data, or an object that can be coerced to one
#'   (a data frame of numeric columns, a numeric vector for 1-D data, an
#'   integer matrix).  No `NA`, `NaN` or infinite values.  A dense or sparse
#'   matrix of package \pkg{Matrix}, a \pkg{bigmemory} `big.matrix` (in
#'   memory or file-backed) or a \pkg{DelayedArray} matrix (such as an
#'   \pkg{HDF5Array} file) is read in blocks of rows into one dense double
#'   matrix (what `stats::kmeans()` fits through `as.matrix()`, without a
#'   second dense copy); the engines then read that matrix.  When it would
#'   take more than `getOption("gpukmeans.source_memory")` bytes (default 1
#'   GiB; `Inf`: never), `gpu_kmeans()` and [gpu_kmeans_sweep()] on CUDA
#'   devices read it block by block straight to the devices instead (each
#'   of several devices its rows; random starts take their rows from it; a
#'   `dgCMatrix` is read from its slots): host memory then holds about one
#'   block, and nothing goes to disk.  In `gpu_kmeans()` and `predict()` a
#'   `dgCMatrix` too large for its device (or a part too large for its
#'   device, on several) is streamed from its slots: every pass over the
#'   rows reads them again, chunk by chunk, into the chunk buffers of
#'   streamed data (see Details), and nothing else of `x` is held.  The CPU
#'   engine reads a large `dgCMatrix` from its slots in the same way, block
#'   by block at every pass over the rows (the fit it gives `x` in memory,
#'   bit for bit, distance bounds included; `options(gpukmeans.stream =
#'   FALSE)`: through a scratch file instead, below).  Every engine reads a large `dgeMatrix`'s
#'   values in place, as a matrix's: no copy at all.  Where a fit needs all
#'   of `x` on the host (another source on the CPU engine or too large for
#'   the devices, observation weights, the quality indices of a sweep), it
#'   lives in a scratch file in
#'   `getOption("gpukmeans.scratch_dir")` (default [tempdir()], or
#'   `/var/tmp` where that is a RAM-backed tmpfs), mapped into
#'   memory and unlinked at once, so that the kernel may page it out: reading
#'   the source then holds about one block of anonymous memory.  A double
#'   `big.matrix` in a file or in shared memory is mapped, not read.
#' @param centers either the number of clusters k, or a matrix (or data frame)
#'   of k distinct initial centers with as many columns as `x`.  As in stats, a
#'   single number is always k.
#' @param iter.max the maximum number of iterations (default 1000; see
#'   Compatibility).  A value of `.Machine$integer.max` or more, `Inf`
#'   included, means no limit (it is taken as `.Machine$integer.max - 1`).
#' @param nstart if `centers` is a number, how many random sets of centers to
#'   try (at most 1e6); the fit with the smallest `tot.withinss` is returned.
#' @param algorithm `"Lloyd"` (default) or its synonym `"Forgy"` run on the
#'   GPU or CPU engine; `"Hartigan-Wong"` and `"MacQueen"` run
#'   [stats::kmeans()] itself (see Compatibility).
#' @param precision `"double"` (exact) or `"single"` (faster, see Precision).
#' @param backend `"auto"`, `"cuda"` or `"cpu"`; see Backends.
#' @param ... must be empty: as in [stats::kmeans()], an argument that
#'   matches none is an error ("unused argument").  The arguments after it
#'   must be named in full.
#' @param trace logical: print one line per iteration (for Hartigan-Wong,
#'   passed to [stats::kmeans()], where a number is a level of detail).
#' @param device the CUDA device to use (an ordinal as listed by
#'   [gpukmeans_info()]); several ordinals, e.g. `c(0, 1)`, or `"all"` (every
#'   usable device) split the rows across those GPUs, with the same fit bit
#'   for bit (see Several GPUs of one host); default
#'   `getOption("gpukmeans.device", 0)`.
#' @param init how to choose the initial centers when `centers` is a number:
#'   `"random"` (as stats), `"kmeans++"` or `"kmeans||"`; see Initialisation.
#' @param comm `NULL` (default): a fit in this process.  An Rmpi communicator
#'   number (`0` for `MPI_COMM_WORLD`): a fit over MPI ranks, where `x` is
#'   this rank's block of rows and every rank calls `gpu_kmeans()`
#'   collectively; see Several hosts (MPI).  Needs the Rmpi package.
#'
#' @references
#' Arthur, D. and Vassilvitskii, S. (2007) k-means++: the advantages of
#' careful seeding.  \emph{Proceedings of the 18th ACM-SIAM Symposium on
#' Discrete Algorithms}, 1027--1035.
#'
#' Bahmani, B., Moseley, B., Vattani, A., Kumar, R. and Vassilvitskii, S.
#' (2012) Scalable k-means++.  \emph{Proceedings of the VLDB Endowment}
#' \bold{5}(7), 622--633.
#'
#' Ding, Y., Zhao, Y., Shen, X., Musuvathi, M. and Mytkowicz, T. (2015)
#' Yinyang k-means: a drop-in replacement of the classic k-means with
#' consistent speedup.  \emph{Proceedings of the 32nd International
#' Conference on Machine Learning}, 579--587.
#'
#' Hamerly, G. (2010) Making k-means even faster.  \emph{Proceedings of the
#' 2010 SIAM International Conference on Data Mining}, 130--140.
#'
#' @return An object of class `c("gpu_kmeans", "kmeans")`: a list with
#'   components `cluster`, `centers`, `totss`, `withinss`, `tot.withinss`,
#'   `betweenss`, `size`, `iter` and `ifault` as documented in
#'   [stats::kmeans()], and attributes `backend`, `device`, `timing` and, when
#'   `nstart > 1`, `start_tot_withinss` (the tot.withinss of every start).
#'
#' @seealso [stats::kmeans()], [predict.gpu_kmeans()], [gpukmeans_info()].
#' @examples
#' fit <- gpu_kmeans(faithful, centers = 2)
#' fit
#' attr(fit, "timing")
#'
#' # identical to stats::kmeans with the same seed
#' set.seed(1); a <- gpu_kmeans(iris[, 1:4], 3, nstart = 5)
#' set.seed(1); b <- kmeans(iris[, 1:4], 3, nstart = 5, algorithm = "Lloyd")
#' all.equal(a$centers, b$centers)
#' identical(a$cluster, b$cluster)
#'
#' # k-means++ / k-means|| starts: reproducible with set.seed()
#' set.seed(2); pp <- gpu_kmeans(iris[, 1:4], 3, init = "kmeans++")
#' set.seed(2); par <- gpu_kmeans(iris[, 1:4], 3, init = "kmeans||")
#' c(pp$tot.withinss, par$tot.withinss)
#' @export
gpu_kmeans <- function(x, centers, iter.max = 1000L, nstart = 1L,
                       algorithm = c("Lloyd", "Forgy", "Hartigan-Wong", "MacQueen"),
                       trace = FALSE, ...,
                       precision = c("double", "single"),
                       backend = getOption("gpukmeans.backend", "auto"),
                       device = getOption("gpukmeans.device", 0L),
                       init = c("random", "kmeans++", "kmeans||"),
                       distance = c("euclidean", "cosine"), comm = NULL, weights = NULL) {
  t_begin <- Sys.time()
  if (!is.null(comm) && !is.null(weights)) weights_with_comm()  # R/weights.R: not yet
  if (!is.null(comm)) {  # every rank of an MPI job, each with its block of rows (R/mpi.R)
    if (choose_one(distance, c("euclidean", "cosine"), "distance") == "cosine")
      stop("distance = \"cosine\" (spherical k-means) does not run over MPI yet: comm must be NULL", call. = FALSE)
    return(mpi_gpu_kmeans(x, centers, iter.max, nstart, algorithm, trace, ...length(), precision, backend,
                          if (missing(device)) NULL else device, init, comm, t_begin))
  }
  # stats::kmeans() has no `...`: what lands here is an error there too.
  # (The arguments after `trace` must be named in full.)
  if (...length())
    stop(sprintf("unused argument%s (%s)", if (...length() > 1L) "s" else "",
                 paste(deparse_dots(...), collapse = ", ")), call. = FALSE)
  # Checks that stats::kmeans() makes before it draws random numbers (or
  # that it does not make at all) come first and draw nothing.
  if (missing(centers)) stop("'centers' must be a number or a matrix", call. = FALSE)
  algorithm <- choose_one(algorithm, c("Lloyd", "Forgy", "Hartigan-Wong", "MacQueen"), "algorithm")
  precision <- choose_one(precision, c("double", "single"), "precision")
  init <- choose_one(init, c("random", "kmeans++", "kmeans||"), "init")
  cosine <- choose_one(distance, c("euclidean", "cosine"), "distance") == "cosine"
  if (cosine) cosine_check_algorithm(algorithm)  # R/cosine.R
  trace <- check_trace(trace)
  device <- check_devices(device)
  check_backend(backend)
  nstart <- check_nstart(nstart)
  lloyd <- algorithm %in% c("Lloyd", "Forgy")
  if (!lloyd) {
    other <- if (init != "random") sprintf("init = \"%s\"", init) else
      if (precision == "single") "precision = \"single\"" else
      if (!missing(backend) && identical(backend, "cuda")) "backend = \"cuda\""
    if (!is.null(other))
      stop(sprintf("%s is for algorithm = \"Lloyd\" only: algorithm = \"%s\" runs stats::kmeans() on the CPU",
                   other, algorithm), call. = FALSE)
  }
  if (!lloyd && !is.null(weights))
    stop(sprintf("'weights' are for algorithm = \"Lloyd\" only: algorithm = \"%s\" runs stats::kmeans(), which has no weights",
                 algorithm), call. = FALSE)
  # A Lloyd fit on an engine leaves the check that x is finite to the
  # engine, which reads all of x anyway (the CUDA engine's staged upload
  # checks the values it copies: one pass over a large x less); a value
  # that is not finite is then reported as if found here (below).
  # (With another problem to raise first, x is checked here.)
  iter <- check_iter_max(iter.max)
  engine_checks <- lloyd && !cosine && is.null(iter$problem)
  # (a large matrix source stays where it is: its view, R/matrix_sources.R)
  data <- data_matrix(x, check_finite = !engine_checks, view = engine_checks && is.null(weights))
  centers <- as_centers(centers)
  if (length(centers) == 1L)
    check_k(as.vector(centers), if (is.null(data$x)) NROW(x) else nrow(data$x))

  # stats raises these only after drawing its first start: draw as it does,
  # then stop, so that the generator ends where stats leaves it.
  problem <- iter$problem %||% data$problem
  if (!is.null(problem))
    stop_as_stats(problem, is.null(data$problem), x, data$x, centers, nstart, init)
  x_given <- x
  x <- data$x
  iter.max <- iter$value
  if (!lloyd) {  # (weights are NULL: refused above)
    if (length(centers) != 1L) initial_centers(x, centers, nstart)  # checks only: no draws
    return(stats_kmeans(x, centers, iter.max, nstart, algorithm, trace, t_begin))
  }
  # x not checked yet (engine_checks): a value that is not finite, found by
  # the engine or, when something else fails first, here, stops the fit as
  # it would have before any draw, the generator wound back to where it was
  seed <- if (engine_checks) rng_state()
  nonfinite <- function(index) {
    rng_restore(seed)
    stop_as_stats(nonfinite_problem(x, index), FALSE, x_given, x, centers, nstart, init)
  }
  unless_nonfinite <- function(e) {
    bad <- first_nonfinite(x)
    if (bad > 0) nonfinite(bad)
    stop(e)
  }
  checked <- function(expr) {
    if (!engine_checks) return(expr)
    tryCatch(expr, gpukmeans_nonfinite = function(e) nonfinite(e$index), error = unless_nonfinite)
  }
  # (one handler around the weights, the starts and the engine's choice:
  # a tryCatch() costs ~20 us)
  checked({
    w <- check_weights(weights, nrow(x))  # R/weights.R: NULL for none (or all 1)
    if (cosine && !is.null(w)) weights_with_cosine()  # R/weights.R: not yet
    if (cosine) x <- cosine_rows(x)  # unit rows: the engines' data

    st <- weighted_initial_centers(x, centers, nstart, init, w)
    if (cosine) st <- cosine_starts(st)
    k <- st$k
    work <- as.numeric(nrow(x)) * k * ncol(x)
    if (length(device) > 1L && !is.null(w))
      engine_error("unsupported", sprintf(
        "'weights' are not supported on several devices (device = %s) yet: fit on one device", format_devices(device)))
    engine <- if (length(device) > 1L) resolve_backend_devices(backend, device, work)
              else weighted_backend(backend, device, work, w)
  })
  # stats runs MacQueen's algorithm for k = 1: one assignment and one update,
  # reported as iteration 1 and never "not converged".
  engine_iter <- if (k == 1L) 2L else iter.max

  nst <- start_count(st$starts)
  progress <- new_progress(iter.max, nst, t_begin, choosing = !st$given && init != "random")
  on.exit(progress$done(), add = TRUE)
  fit_on <- function(data) checked(withCallingHandlers(
    gk_fit_cpp(data, st$starts, engine_iter, precision == "single", engine,
               cpu_threads(work), engine_devices(engine, device), isTRUE(trace > 0), progress$update, progress$after,
               cuda_options(), spherical = cosine, weights = w, finite = !engine_checks),
    gpukmeans_probe = progress$probe))
  # (a source's view: block by block to the CUDA devices where its rows fit
  # there, else, having drawn nothing, from memory)
  z <- fit_on(engine_data(x, engine, engine_devices(engine, device)))
  if (!is.null(z$not_resident)) z <- fit_on(source_dense(x))
  if (k == 1L) z$iter <- z$start_iter[] <- 1L
  z <- weighted_sums_unscaled(z, w)

  # The warnings of stats' do_one(), start by start.
  ifault <- NULL
  for (s in seq_len(nst)) {
    if (z$start_empty[s]) warning("empty cluster: try a better set of initial centers", call. = FALSE)
    if (z$start_iter[s] > iter.max) {
      warning(sprintf(ngettext(iter.max, "did not converge in %d iteration",
                               "did not converge in %d iterations"), iter.max),
              call. = FALSE, domain = NA)
      if (s == z$best_start) ifault <- 2L
    }
    if (z$start_empty[s]) warning("empty cluster: try a better set of initial centers", call. = FALSE)
  }
  fit <- new_gpu_kmeans(x, z, k, ifault, engine, nstart, t_begin)
  if (cosine) cosine_fit(fit) else fit
}

# Stops with `problem` (of x, or of iter.max) where stats::kmeans() would:
# after drawing its first start as it does, so that the generator ends where
# stats leaves it.  data_ok: the problem is not one of x (then dx is x as a
# double matrix); x: the data as given.
stop_as_stats <- function(problem, data_ok, x, dx, centers, nstart, init) {
  if (length(centers) == 1L && init == "random") {
    # (With data stats cannot use, its own error may come from these
    # draws, "more cluster centers than distinct data points": the
    # generator is the same, and the message here names the real problem.)
    if (data_ok) initial_centers(dx, centers, nstart, n_draw = 1L)
    else stats_draws_before_error(x, as.vector(centers), nstart)
  } else if (length(centers) != 1L && !is.null(dx)) {
    initial_centers(dx, centers, nstart)  # its errors (no draws) first, as in stats
  }
  stop(problem, call. = FALSE)
}

# algorithm = "Hartigan-Wong" or "MacQueen": stats::kmeans() itself, on the
# checked arguments (so the same random numbers, warnings and result), as a
# gpu_kmeans object whose backend is "stats".
stats_kmeans <- function(x, centers, iter.max, nstart, algorithm, trace, t_begin) {
  if (!isTRUE(.gk_state$stats_told)) {
    .gk_state$stats_told <- TRUE
    msg <- sprintf("gpukmeans: algorithm = \"%s\" runs stats::kmeans() itself, on the CPU (the GPU and CPU engines of gpukmeans run Lloyd's algorithm).\n(This message is shown once per session.)",
                   algorithm)
    message(structure(class = c("gpukmeans_stats", "message", "condition"),
                      list(message = paste0(msg, "\n"), call = NULL)))
  }
  t0 <- Sys.time()
  fit <- stats::kmeans(x, if (length(centers) == 1L) as.vector(centers) else centers,
                       iter.max = iter.max, nstart = nstart, algorithm = algorithm,
                       trace = trace)
  compute <- seconds_since(t0)
  class(fit) <- c("gpu_kmeans", "kmeans")
  attr(fit, "backend") <- "stats"
  attr(fit, "device") <- sprintf("CPU, 1 thread (stats::kmeans, %s)", algorithm)
  attr(fit, "timing") <- c(compute = compute,
                           total = seconds_since(t_begin))
  fit
}
