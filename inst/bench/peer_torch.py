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
"""
import torch

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


def main():
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
