#!/usr/bin/env python3
"""Adds dev-only marks to a tree's src/cuda/lloyd.cu (never committed to the
engine): a hook `gk_dev_mark(stream, name)` called at the points of a fit
where the device may wait on the host (ordfit's `marks` mode records a CUDA
event and the host clock at each).  Usage: marks_apply.py TREE"""
import sys

path = sys.argv[1] + "/src/cuda/lloyd.cu"
s = open(path).read()


def at(anchor, text, after=True):
    global s
    if s.count(anchor) != 1:
        sys.exit("marks_apply: anchor found %d times: %r" % (s.count(anchor), anchor))
    s = s.replace(anchor, anchor + text if after else text + anchor)


at("using namespace gk;\n",
   '\nextern "C" void (*gk_dev_mark)(cudaStream_t, const char *);\n'
   'void (*gk_dev_mark)(cudaStream_t, const char *) = nullptr;\n'
   '#define GK_MARK(s, nm) do { if (gk_dev_mark) gk_dev_mark((s), (nm)); } while (0)\n')
at('  GK_CHECK(cudaEventRecord(D->ev0, f.s), "recording an event");\n', '  GK_MARK(f.s, "ev0");\n')
at('      GK_CHECK(prepare_ordered(D, f.s), "ordering the rows");\n', '      GK_MARK(f.s, "planned");\n',
   after=False)
at('      GK_CHECK(prepare_ordered(D, f.s), "ordering the rows");\n', '      GK_MARK(f.s, "sort enqueued");\n')
at('      GK_CHECK(plan_ordered(D, k, f.plan), "planning the assignment");\n', '      GK_MARK(f.s, "ord planned");\n')
at('    launched += b;\n', '    GK_MARK(f.s, "batch enqueued");\n')
at('  GK_CHECK(f.withinss(), "within-SS");\n  GK_CHECK(cudaEventRecord(D->ev1, f.s), "recording an event");\n',
   '  GK_MARK(f.s, "wss");\n', after=False)
at('  GK_CHECK(cudaEventRecord(D->ev1, f.s), "recording an event");\n', '  GK_MARK(f.s, "ev1");\n')
open(path, "w").write(s)
