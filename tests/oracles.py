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
