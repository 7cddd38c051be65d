"""Peer for the initialisation benchmark (bench_init.R): k-means++ and k-means||
written in PyTorch on the same GPU, the way a user of that library would write
them (dense torch.cdist distances, cumsum + searchsorted sampling).

  python3 inst/bench/peer_init_torch.py [OUTDIR] [B D E]

With OUTDIR, also writes OUTDIR/peer-init-torch-<date>.csv (date, card,
problem, n, d, k, precision, init, init_ms, potential), which the vignette
"Performance" shows beside bench_init.R's figures.

Same problems and data model as bench_init.R (blobs: k centers uniform in
[0, 100)^d, unit normal noise).  k-means++ is greedy with 2 + floor(log k)
candidates per step, as gpukmeans and scikit-learn; k-means|| takes 5 rounds of
oversampling factor 2k, then a weighted greedy k-means++ of the candidates (as
gpukmeans).  Prints one line per (problem, precision, method): the median wall
time of 3 runs (one when it takes over 3 s; CUDA synchronised) and the
potential (sum of squared distances to the nearest) of the chosen centers.
"""
import csv
import datetime
import math
import os
import sys
import time

import torch

dev = "cuda"
PROBLEMS = {"B": (1_000_000, 2, 100), "D": (10_000_000, 16, 256), "E": (1_000_000, 128, 4096)}
CELLS = 1 << 27  # distances per cdist block (512 MB in float)


def blobs(n, d, k, gen):
    centers = torch.rand(k, d, device=dev, generator=gen) * 100
    lab = torch.randint(0, k, (n,), device=dev, generator=gen)
    return centers[lab] + torch.randn(n, d, device=dev, generator=gen)


def min_dist2(x, c):
    """Per row of x, the least squared distance to the rows of c (and its index)."""
    best = torch.empty(x.shape[0], dtype=x.dtype, device=dev)
    arg = torch.empty(x.shape[0], dtype=torch.long, device=dev)
    rows = max(256, CELLS // c.shape[0])
    for s in range(0, x.shape[0], rows):
        dd = torch.cdist(x[s:s + rows], c).square_()
        v, j = dd.min(1)
        best[s:s + rows] = v
        arg[s:s + rows] = j
    return best, arg


def sample(weights, m, gen):
    """m indices drawn with probability proportional to weights."""
    cs = torch.cumsum(weights, 0)
    u = torch.rand(m, device=dev, dtype=weights.dtype, generator=gen) * cs[-1]
    return torch.searchsorted(cs, u).clamp_max_(weights.numel() - 1)


def kmeanspp(x, k, gen, w=None):
    n = x.shape[0]
    L = 2 + int(math.log(k))
    w = torch.ones(n, dtype=x.dtype, device=dev) if w is None else w
    first = sample(w, 1, gen)
    idx = [first]
    d2 = torch.cdist(x, x[first]).square_().squeeze(1)
    for _ in range(1, k):
        cand = sample(w * d2, L, gen)
        dc = torch.cdist(x, x[cand]).square_()              # n x L
        pot = (w.unsqueeze(1) * torch.minimum(dc, d2.unsqueeze(1))).sum(0)
        b = int(torch.argmin(pot))
        idx.append(cand[b:b + 1])
        d2 = torch.minimum(d2, dc[:, b])
    return torch.cat(idx)


def kmeans_par(x, k, gen, rounds=5):
    n = x.shape[0]
    l = 2.0 * k
    cand = torch.randint(0, n, (1,), device=dev, generator=gen)
    d2, _ = min_dist2(x, x[cand])
    for _ in range(rounds):
        phi = d2.sum()
        p = (l * d2 / phi).clamp_max_(1.0)
        new = torch.nonzero(torch.rand(n, device=dev, dtype=x.dtype, generator=gen) < p).squeeze(1)
        if new.numel() == 0:
            continue
        dn, _ = min_dist2(x, x[new])
        d2 = torch.minimum(d2, dn)
        cand = torch.cat([cand, new])
    _, near = min_dist2(x, x[cand])
    w = torch.bincount(near, minlength=cand.numel()).to(x.dtype)
    return cand[kmeanspp(x[cand], k, gen, w)]


def potential(x, c):
    return float(min_dist2(x, c)[0].sum())


def timed(fn, reps=3):
    """Median wall time (ms) of reps runs; one run when it takes over 3 s."""
    ts, out = [], None
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        out = fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
        if ts[0] > 3:
            break
    ts.sort()
    return ts[len(ts) // 2] * 1e3, out


def main():
    args = sys.argv[1:]
    outdir = args.pop(0) if args and os.path.isdir(args[0]) else None
    which = args or list(PROBLEMS)
    card = torch.cuda.get_device_name(0)
    today = datetime.date.today().isoformat()
    print("device", card, "torch", torch.__version__, flush=True)
    rows = []
    for pid in which:
        n, d, k = PROBLEMS[pid]
        gen = torch.Generator(device=dev)
        gen.manual_seed(1)
        x32 = blobs(n, d, k, gen)
        for dtype in (torch.float32, torch.float64):
            x = x32.to(dtype)
            prec = "single" if dtype == torch.float32 else "double"
            kmeanspp(x[:50000], min(k, 16), gen)  # warm-up
            for name, fn in (("kmeans++", lambda: kmeanspp(x, k, gen)), ("kmeans||", lambda: kmeans_par(x, k, gen))):
                ms, idx = timed(fn)
                pot = potential(x, x[idx])
                print(f"peer torch {pid} {prec:6s} {name:9s} init {ms:10.2f} ms | potential {pot:.6g}", flush=True)
                rows.append([today, card, pid, n, d, k, prec, name, round(ms, 3), f"{pot:.6g}"])
            del x
        del x32
        torch.cuda.empty_cache()
    if outdir:
        with open(os.path.join(outdir, f"peer-init-torch-{today}.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["date", "card", "problem", "n", "d", "k", "precision", "init", "init_ms", "potential"])
            w.writerows(rows)


if __name__ == "__main__":
    main()
