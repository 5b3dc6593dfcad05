"""Plain reference evaluations shared by several test modules (oracles, not fast paths)."""

from __future__ import annotations

import numpy as np


def eval_linear(docs, lin, vectors=None) -> np.ndarray:
    """Q x N scores of a LinearScoring, evaluated instruction by instruction in float64 (its own definition);
    ``vectors`` replaces ``lin.vectors`` (e.g. rounded to the documents' dtype, as a kernel's dot sees them)."""
    from itlr_gpu.compiler import AND as AND_OP, NOT as NOT_OP, PUSH as PUSH_OP

    docs = docs.astype(np.float64)
    vec = np.asarray(lin.vectors if vectors is None else vectors, dtype=np.float64)
    prog, ops = lin.program, lin.ops
    out = []
    for q in range(prog.num_queries):
        lo, hi = prog.offsets[q], prog.offsets[q + 1]
        stack = []
        for i in range(lo, hi):
            op = prog.opcodes[i]
            if op == PUSH_OP:
                stack.append(lin.lit_a[i] * (docs @ vec[prog.operands[i]]) + lin.lit_b[i])
            elif op == NOT_OP:
                stack.append(ops.apply_not(stack.pop()))
            else:
                y, x = stack.pop(), stack.pop()
                stack.append(ops.apply_and(x, y) if op == AND_OP else ops.apply_or(x, y))
        s = stack[0]
        if lin.mix is not None:
            s = lin.mix[q, 0] * s + lin.mix[q, 1] * (docs @ vec[lin.whole_arg[q]]) + lin.mix[q, 2]
        out.append(s)
    return np.stack(out)


def assert_topk_matches(got, want, docs, terms, program, ops, rtol, atol):
    """Rows equal up to (near-)ties; scores within tolerance; order (score desc, row asc)."""
    gs, gr = got
    ws, wr = want
    assert gs.shape == ws.shape and gr.shape == wr.shape, (gs.shape, ws.shape)
    assert gs.dtype == np.float32 and gr.dtype == np.int64
    n = docs.shape[0]
    np.testing.assert_allclose(gs, ws, rtol=rtol, atol=atol)
    if gr.size == 0:
        return
    from itlr_gpu.backends.reference import search_reference

    all_s, all_r = search_reference(docs, terms, program, ops, n)      # every document's reference score
    ref = np.empty_like(all_s)
    np.put_along_axis(ref, all_r, all_s, axis=1)
    for q in range(gs.shape[0]):
        rows = gr[q]
        assert len(set(rows.tolist())) == len(rows), f"query {q}: duplicate rows"
        assert rows.min() >= 0 and rows.max() < n
        # every returned score is that document's score
        np.testing.assert_allclose(gs[q], ref[q, rows], rtol=rtol, atol=atol, err_msg=f"query {q}")
        # sorted by score desc, then row asc among exactly equal scores
        assert np.all(np.diff(gs[q]) <= 0), f"query {q}: not sorted"
        eq = gs[q][1:] == gs[q][:-1]
        assert np.all(rows[1:][eq] > rows[:-1][eq]), f"query {q}: ties not by ascending row"
        # rows differ from the reference only among near-ties of the k-th score
        kth = ws[q, -1]
        tol = atol + rtol * abs(kth)
        must = set(np.nonzero(ref[q] > kth + tol)[0].tolist())
        assert must <= set(rows.tolist()), f"query {q}: missing clear winners {sorted(must - set(rows.tolist()))}"
        assert np.all(ref[q, rows] >= kth - tol), f"query {q}: returned a clear loser"
        for g, w, gsc, wsc in zip(rows, wr[q], gs[q], ws[q]):
            if g != w:
                assert abs(ref[q, g] - ref[q, w]) <= atol + rtol * abs(wsc) * 2, f"query {q}: swap {g}<->{w}"
