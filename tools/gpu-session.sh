#!/bin/sh
# On the GPU machine (no R there: the R that tools/gpu/pack.sh carried), from
# the repository root, after `sh tools/gpu/pack.sh` here filled .gpu/:
#   sh tools/gpu-session.sh OUTDIR [tests] [bench] [init] [sweep] [convergence] [cosine] [stream]
# Writes OUTDIR/info.txt, tests.txt (the testthat suite with the GPU present),
# peer.txt (the PyTorch peer, inst/bench/peer_torch.py), bench.txt,
# init.txt, sweep.txt (inst/bench/bench_sweep.R), convergence.txt
# (inst/bench/bench_convergence.R: the CUDA bounds vs plain Lloyd) and
# cosine.txt with peer-cosine.txt (inst/bench/bench_cosine.R beside
# peer_torch.py --cosine), stream.txt (inst/bench/bench_stream.R: streamed
# x against resident x, and a double matrix larger than the card, beside
# the pinned copy rate of peer_torch.py --ceilings) plus the benchmark CSVs.
# With GPUKMEANS_SMEM_CAP=101376 (or 49152) in the environment, the suite
# runs as on a device with 99 KB (48 KB) of shared memory a block: sm_86 and
# sm_89, RTX 30 / 40, L4, A10 (tests/testthat/helper-gpu.R, smem_capped).
set -u
out=${1:?usage: gpu-session.sh OUTDIR [tests] [bench] [init] [sweep] [convergence] [cosine] [stream]}; shift
what=${*:-tests bench}
mkdir -p "$out"
R="sh tools/gpu/run-r.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv > "$out/info.txt" 2>&1
$R -e 'print(gpukmeans::gpukmeans_info())' >> "$out/info.txt" 2>&1
case " $what " in *" tests "*)
  $R -e '
    library(testthat); library(gpukmeans); testthat::set_max_fails(Inf)
    res <- as.data.frame(test_dir("tests/testthat", package = "gpukmeans", load_package = "installed",
                                  stop_on_failure = FALSE, reporter = ProgressReporter$new(show_praise = FALSE)))
    cat(sprintf("\nGPU test run: %d expectations passed, %d failed, %d skipped (%s)\n",
                sum(res$nb) - sum(res$failed) - sum(res$skipped), sum(res$failed) + sum(res$error),
                sum(res$skipped), gpukmeans_info()$devices$name[1]))
    print(res[res$failed > 0 | res$error | res$skipped > 0, c("file", "test", "failed", "skipped", "error")])
  ' > "$out/tests.txt" 2>&1
  tail -n 25 "$out/tests.txt" ;;
esac
case " $what " in *" bench "*)
  PYTHONUNBUFFERED=1 python3 inst/bench/peer_torch.py > "$out/peer.txt" 2>&1
  $R inst/bench/bench.R "$out" "$out/peer.txt" > "$out/bench.txt" 2>&1
  tail -n 30 "$out/bench.txt" ;;
esac
case " $what " in *" init "*)
  $R inst/bench/bench_init.R "$out" > "$out/init.txt" 2>&1
  tail -n 20 "$out/init.txt" ;;
esac
case " $what " in *" sweep "*)
  $R inst/bench/bench_sweep.R "$out" > "$out/sweep.txt" 2>&1
  tail -n 40 "$out/sweep.txt" ;;
esac
case " $what " in *" convergence "*)
  $R inst/bench/bench_convergence.R "$out" > "$out/convergence.txt" 2>&1
  tail -n 40 "$out/convergence.txt" ;;
esac
case " $what " in *" cosine "*)
  PYTHONUNBUFFERED=1 python3 inst/bench/peer_torch.py --cosine > "$out/peer-cosine.txt" 2>&1
  $R inst/bench/bench_cosine.R gpu "$out" "$out/peer-cosine.txt" > "$out/cosine.txt" 2>&1
  tail -n 30 "$out/cosine.txt" ;;
esac
case " $what " in *" stream "*)
  PYTHONUNBUFFERED=1 python3 inst/bench/peer_torch.py --ceilings > "$out/ceilings.txt" 2>&1
  $R inst/bench/bench_stream.R "$out" "$out/ceilings.txt" big > "$out/stream.txt" 2>&1
  tail -n 12 "$out/stream.txt" ;;
esac
