# Total GPU time by kernel from `ncu --metrics gpu__time_duration.sum --csv`
# output (iter_prof.sh, and ncu runs of tools/gpu/prof-dexact.R):
#   python3 ncu_sum.py FILE.csv [N]   (the N largest, default 25)
import collections
import csv
import sys

t = collections.Counter()
c = collections.Counter()
for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')):
    if len(r) > 14 and r[-3] == "gpu__time_duration.sum":
        k = r[4].split("(")[0][-60:]
        v = float(r[-1].replace(",", ""))
        u = r[-2]
        # (ncu names the unit "nsecond" or "ns", "usecond" or "us", ...)
        t[k] += v * {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[u]
        c[k] += 1
for k, v in t.most_common(int(sys.argv[2]) if len(sys.argv) > 2 else 25):
    print("%10.1f us %5d  %s" % (v, c[k], k))
