# The fuzz test of tests/testthat/test-fuzz.R with many more seeds, on the
# GPU machine: every case through the CUDA engine in both precisions against
# the CPU engine in double.
#   sh tools/gpu/run-r.sh tools/gpu/fuzz.R [first_seed] [count]
suppressPackageStartupMessages({ library(gpukmeans); library(testthat) })
args <- as.integer(commandArgs(trailingOnly = TRUE))
first <- if (length(args) >= 1) args[1] else 1000L
count <- if (length(args) >= 2) args[2] else 2000L
source("tests/testthat/helper-gpukmeans.R")
`%||%` <- function(a, b) if (is.null(a)) b else a
env <- new.env()
env$test_backends <- function(...) invisible()  # only the case generator is wanted
sys.source("tests/testthat/test-fuzz.R", envir = env, keep.source = FALSE)
bad <- 0L
for (seed in seq(first, length.out = count)) {
  cs <- env$fuzz_case(seed)
  ref <- env$fuzz_fit(cs, "cpu", "double", seed)
  for (precision in c("double", "single")) {
    g <- env$fuzz_fit(cs, "cuda", precision, seed)
    ok <- if (!is.null(ref$error) || !is.null(g$error)) {
      precision == "single" || identical(g$message, ref$message)
    } else if (precision == "double") {
      identical(unname(g$cluster), unname(ref$cluster)) && identical(g$iter, ref$iter)
    } else sum(g$size) == nrow(cs$x)
    if (!ok) {
      bad <- bad + 1L
      cat(sprintf("MISMATCH seed %d (%s, %d x %d, %s)\n", seed, cs$kind, nrow(cs$x), ncol(cs$x), precision))
    }
  }
}
cat(sprintf("fuzz: %d seeds from %d, %d mismatches\n", count, first, bad))
