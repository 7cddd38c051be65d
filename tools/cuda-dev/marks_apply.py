#!/usr/bin/env python3
"""Adds dev-only marks to a tree's src/cuda/lloyd.cu (never committed to the
engine): a hook `gk_dev_mark(stream, name)` called at the points of a fit
where the device may wait on the host (ordfit's `marks` mode records a CUDA
event and the host clock at each).  Usage: marks_apply.py TREE"""
import sys

path = sys.argv[1] + "/src/cuda/lloyd.cu"
s = open(path).read()


def at(anchor, text, after=True, optional=False):
    global s
    if optional and s.count(anchor) == 0:
        return
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
# the plans' steps (each mark's host time after the last is that step's)
for line, name in [('  GK_CHECK(prepare_assign(D, k, f.s), "preparing the assignment");\n', "prepare_assign"),
                   ('  GK_CHECK(plan_assign(D, k, !D->weighted, f.plan), "planning the assignment");\n', "plan_assign"),
                   ('  GK_CHECK(plan_update(D, k, f.plan), "planning the update");\n', "plan_update"),
                   ('  GK_CHECK(prepare_dfilter(D, k, f.plan, f.df, f.s), "preparing the filter");\n', "prepare_dfilter"),
                   ('GK_CHECK(plan_persistent(D, k, pp), "planning the persistent kernel");\n', "plan_persistent"),
                   ('if (!pp.ok) GK_CHECK(plan_delta(D, f.plan, f.s), "planning the sums");\n', "plan_delta")]:
    at(line, '  GK_MARK(f.s, "%s");\n' % name)
# the sort before the plans (where the tree has it)
early = '  if (!traced && ordered_early(D, k, max_iter)) GK_CHECK(prepare_ordered(D, f.s), "ordering the rows");\n'
at(early, '  GK_MARK(f.s, "early sort");\n', after=False, optional=True)
at(early, '  GK_MARK(f.s, "early sorted");\n', optional=True)
open(path, "w").write(s)
