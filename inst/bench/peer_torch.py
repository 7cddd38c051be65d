"""The PyTorch peer of bench.R, run on the same card in the same session.

One Lloyd iteration written the way a PyTorch user writes it (and the way
FAISS-style GPU k-means does it): distances as ||c||^2 - 2 x c^T through a
matrix product, argmin over the centers, cluster sums with index_add_.  Timed
with CUDA events (median), in fp32 and with TF32 matrix products, on the five
standard problems.  Also prints the card's ceilings: device copy bandwidth,
fp32 / TF32 GEMM rate, and host-to-device copy bandwidth from pageable and
pinned memory.

Output lines (parsed by bench.R):
  torch tf32=<bool> <id> n=<n> d=<d> k=<k> ms_per_iter <ms>
  ceiling <name> <value>

With --cosine: the PyTorch recipe of spherical k-means instead (the peer of
bench_cosine.R, same session): rows normalised once, one iteration = the
argmax of x c^T (chunked), cluster sums with index_add_, the sums normalised
(F.normalize), on embeddings-like data, in fp32, TF32 and fp64.  Lines:
  torch-cosine mode=<fp32|tf32|fp64> <id> n=<n> d=<d> k=<k> ms_per_iter <ms>
  torch-cosine-normalise mode=<...> <id> n=<n> d=<d> ms <ms>
"""
import sys

import torch
import torch.nn.functional as F

DEV = "cuda"
PROBLEMS = [("A", 21_600, 2, 12), ("B", 1_000_000, 2, 100), ("C", 1_000_000, 2, 1000),
            ("D", 10_000_000, 16, 256), ("E", 1_000_000, 128, 4096)]


def median_ms(fn, reps=15, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2]


def blobs(n, d, k):
    centers = torch.rand(k, d, device=DEV) * 100
    return centers[torch.randint(0, k, (n,), device=DEV)] + torch.randn(n, d, device=DEV)


def lloyd_step(x, c, rows_per_chunk=1 << 18):
    k = c.shape[0]
    c2 = (c * c).sum(1)
    labels = torch.empty(x.shape[0], dtype=torch.long, device=DEV)
    for s in range(0, x.shape[0], rows_per_chunk):  # bounded n x k scratch
        part = x[s:s + rows_per_chunk]
        labels[s:s + rows_per_chunk] = (c2.unsqueeze(0) - 2.0 * (part @ c.T)).argmin(1)
    sums = torch.zeros_like(c).index_add_(0, labels, x)
    counts = torch.bincount(labels, minlength=k).clamp_min(1).unsqueeze(1)
    return sums / counts


def ceilings():
    src = torch.empty(1 << 30, dtype=torch.uint8, device=DEV)
    dst = torch.empty_like(src)
    print(f"ceiling copy_GBps {2 * src.numel() / median_ms(lambda: dst.copy_(src)) / 1e6:.0f}", flush=True)
    del src, dst
    for pinned in (False, True):
        host = torch.empty(1 << 30, dtype=torch.uint8, pin_memory=pinned)
        dev = torch.empty(1 << 30, dtype=torch.uint8, device=DEV)
        ms = median_ms(lambda: dev.copy_(host, non_blocking=pinned), reps=5, warmup=1)
        print(f"ceiling h2d_{'pinned' if pinned else 'pageable'}_GBps {host.numel() / ms / 1e6:.1f}", flush=True)
        del host, dev
    a = torch.randn(8192, 8192, device=DEV)
    b = torch.randn(8192, 8192, device=DEV)
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        ms = median_ms(lambda: a @ b, reps=10)
        print(f"ceiling gemm_{'tf32' if tf32 else 'fp32'}_TFLOPs {2 * 8192 ** 3 / ms / 1e9:.0f}", flush=True)


COSINE_PROBLEMS = [("s", 100_000, 384, 64), ("S", 1_000_000, 384, 1024)]


def embeddings(n, d, k, dtype):
    """Rows around k unit topics with a common direction, lengths in [0.5, 2] (as bench_cosine.R)."""
    topics = F.normalize(torch.randn(k, d, device=DEV, dtype=dtype), dim=1)
    common = F.normalize(torch.randn(d, device=DEV, dtype=dtype), dim=0)
    x = torch.randn(n, d, device=DEV, dtype=dtype) * 0.06
    x += topics[torch.randint(0, k, (n,), device=DEV)]
    x += 0.3 * common
    return x * (0.5 + 1.5 * torch.rand(n, 1, device=DEV, dtype=dtype))


def cosine_step(xn, c, rows_per_chunk=1 << 18):
    labels = torch.empty(xn.shape[0], dtype=torch.long, device=DEV)
    for s in range(0, xn.shape[0], rows_per_chunk):  # bounded n x k scratch
        labels[s:s + rows_per_chunk] = (xn[s:s + rows_per_chunk] @ c.T).argmax(1)
    sums = torch.zeros_like(c).index_add_(0, labels, xn)
    return F.normalize(sums, dim=1)


def cosine_main():
    torch.manual_seed(0)
    print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
    for mode in ("fp32", "tf32", "fp64"):
        torch.backends.cuda.matmul.allow_tf32 = mode == "tf32"
        dtype = torch.float64 if mode == "fp64" else torch.float32
        for name, n, d, k in COSINE_PROBLEMS:
            x = embeddings(n, d, k, dtype)
            ms = median_ms(lambda: F.normalize(x, dim=1), reps=5)
            print(f"torch-cosine-normalise mode={mode} {name} n={n} d={d} ms {ms:.4f}", flush=True)
            xn = F.normalize(x, dim=1)
            del x
            c = xn[torch.randperm(n, device=DEV)[:k]].clone()
            ms = median_ms(lambda: cosine_step(xn, c), reps=10)
            print(f"torch-cosine mode={mode} {name} n={n} d={d} k={k} ms_per_iter {ms:.4f}", flush=True)
            del xn, c
            torch.cuda.empty_cache()


def main():
    if "--cosine" in sys.argv[1:]:
        cosine_main()
        return
    if "--ceilings" in sys.argv[1:]:  # the card's copy rates only (bench_upload.R)
        print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
        ceilings()
        return
    torch.manual_seed(0)
    print("device", torch.cuda.get_device_name(0), "torch", torch.__version__, flush=True)
    ceilings()
    for tf32 in (False, True):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for name, n, d, k in PROBLEMS:
            x = blobs(n, d, k)
            c = x[torch.randperm(n, device=DEV)[:k]].clone()
            ms = median_ms(lambda: lloyd_step(x, c), reps=10)
            print(f"torch tf32={tf32} {name} n={n} d={d} k={k} ms_per_iter {ms:.4f}", flush=True)
            del x, c
            torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
