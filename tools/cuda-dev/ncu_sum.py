# Total GPU time by kernel from `ncu --metrics gpu__time_duration.sum --csv`
# output (iter_prof.sh, and ncu runs of tools/gpu/prof-dexact.R):
#   python3 ncu_sum.py FILE.csv [N]   (the N largest, default 25)
#   python3 ncu_sum.py FILE.csv seq   (every launch in order, two a line: the
#                                      passes of a kernel that runs in pairs)
import collections
import csv
import sys

t = collections.Counter()
c = collections.Counter()
seq = []
for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if len(r) > 14 and r[-3] == "gpu__time_duration.sum":
        k = r[4].split("(")[0][-60:]
        v = float(r[-1].replace(",", ""))
        u = r[-2]
        # (ncu names the unit "nsecond" or "ns", "usecond" or "us", ...)
        us = v * {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[u]
        t[k] += us
        c[k] += 1
        seq.append((k, us))
if len(sys.argv) > 2 and sys.argv[2] == "seq":
    for i in range(0, len(seq), 2):
        print("%-60s %9.1f + %9.1f us" % (seq[i][0], seq[i][1], seq[i + 1][1] if i + 1 < len(seq) else float("nan")))
    sys.exit(0)
for k, v in t.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 25):
    print("%10.1f us %5d  %s" % (v, c[k], k))
