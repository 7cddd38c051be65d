# tools/cuda-dev/rot_sums_model.py: a host model of the rotating sums protocol
# (src/cuda/detail/common.cuh RotSlots, rot_step; wbox_kernels.cuh; k_rot_settle):
# batches whose positions restart at a multiple of 6, kernels that leave once the
# fit has converged, the first iteration in a graph.  Every iteration must see the
# sums of the labels before it, the settle the last ones.  python3 rot_sums_model.py
# Kernels run one after another; each reads its slots at its start and adds its
# moves at its end.
import random
def step(p):
    return dict(in_b=('b', p & 1), in_d=('d', (p + 2) % 3), out_b=('b', (p + 1) & 1), zero=('d', (p + 1) % 3),
                chg_in=(p + 2) % 3, chg_out=p % 3, chg_zero=(p + 1) % 3, cen0=(p == 0), out=('d', p % 3))
def run(max_iter, bsz, conv_at, seed, first_in_graph=False):
    rnd = random.Random(seed)
    slots = {('d', i): rnd.randint(-99, 99) for i in range(3)}  # garbage
    slots.update({('b', i): rnd.randint(-99, 99) for i in range(2)})
    slots[('d', 0)] = 0  # clear_sums
    st = dict(blocks=0, chg=[0, 0, 0], flag=0, iter_done=0, conv_iter=0)
    true_S = [0]  # S_{-1} = 0 ; true_S[q+1] = S_q
    seen = []
    def kernel(p, first):
        s = step(p)
        it = st['blocks']
        fin = st['flag'] or it >= max_iter or it % 6 != p % 6 or (it > 0 and st['chg'][s['chg_in']] == 0)
        if first:
            S = None; keep = 0
        else:
            S = slots[s['in_b']] + slots[s['in_d']]
            if s['cen0'] and it == 0: S = None; keep = 0
            else: keep = S
        if fin: return
        seen.append((it, S))
        slots[s['out_b']] = keep
        slots[s['zero']] = 0
        # moves of iteration it
        moves = 0 if it >= conv_at else rnd.randint(1, 50) * rnd.choice([-1, 1])
        changed = 0 if it >= conv_at else rnd.randint(1, 9)
        if it == 0: changed = 10
        slots[s['out']] += moves
        st['chg'][s['chg_out']] += changed
        st['chg'][s['chg_zero']] = 0
        true_S.append(true_S[-1] + moves)
        st['blocks'] += 1
    def settle():
        it = st['blocks']
        if it == 0: return None
        q = (it - 1) % 3; b = it & 1
        ch = st['chg'][q]
        st['iter_done'] = it
        if ch == 0: st['flag'] = 1; st['conv_iter'] = it
        return slots[('b', b)] + slots[('d', q)]
    launched = 0; final = None
    while launched < max_iter:
        b = min(bsz, max_iter - launched)
        for i in range(b):
            first = launched == 0 and i == 0 and not first_in_graph
            # (positions from the batch's start: the fit's direct launches count on
            # from a multiple of 6, the same slots)
            kernel(i, first)
        final = settle()
        launched += b
        if st['flag']: break
    # checks: each iteration it saw S_{it-1} (None for it = 0)
    for it, S in seen:
        assert (S is None) == (it == 0), (it, S)
        if it: assert S == true_S[it], (it, S, true_S[it])
    n = st['blocks']
    assert final == true_S[n], (final, true_S[n])
    exp_conv = conv_at + 1 if conv_at < max_iter else None  # iteration conv_at (0-based) changed nothing
    if exp_conv is not None and exp_conv <= max_iter:
        assert st['flag'] == 1 and st['conv_iter'] == exp_conv and n == exp_conv, (st, exp_conv, n)
    else:
        assert st['flag'] == 0 and n == max_iter, (st, n)
    return n
cases = 0
for max_iter in [1, 2, 3, 5, 6, 7, 10, 13, 37, 100, 150]:
    for bsz in sorted({b for b in [6, 12, 18, 66] if b < max_iter} | {max_iter}):
        for conv_at in [1, 2, 3, 5, 6, 11, 12, 35, 36, 65, 66, 67, 99, 1000]:
            for fig in [False, True]:
                for seed in range(3):
                    run(max_iter, bsz, conv_at, seed, fig); cases += 1
print("ok", cases)
