library(testthat)
library(gpukmeans)

test_check("gpukmeans")
