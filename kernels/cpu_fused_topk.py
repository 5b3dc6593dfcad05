"""Fused logical top-k on the CPU: postfix programs and per-query top-k in one compiled loop (numba).

The CPU twin of :mod:`fused_logical_topk` for one chunk of documents whose similarities
``sims = vectors @ chunk.T`` (V x C, float32) the BLAS has already computed.  For query q
with postfix program P_q over literals x'_i = a_i * sims[operand_i] + b_i (the
:class:`~itlr_gpu.scoring.LinearScoring` form; a = 1, b = 0 without options)::

    L_qn     = P_q(x'_*n)                                  (AND/OR/NOT element-wise, float32)
    score_qn = m0_q * L_qn + m1_q * sims[w_q, n] + m2_q    (hybrid epilogue, when given)
    top-k_q  = the k largest score_qn over every chunk so far, ties to the lower row n

Why: in torch the same work is one tensor op per opcode and shape group over the whole
chunk (hundreds of small ops, each a pass over memory and a thread-pool hand-over with
the BLAS), which costs about as much as the matmul itself on a 2-core machine
(benchmarks/results/cpu_search.md).  Here each query runs its program over a block of
documents held in a small stack that stays in L1, and a document enters the query's
top-k only when it beats the current k-th score: one pass over the similarities, no
Q x C score matrix.

Arithmetic is float32 in the reference's order (``x * a + b``, ``1 - x``,
``1 / max(x, floor)``, products and sums left to right), without fused multiply-adds,
so the results equal :func:`itlr_gpu.backends.reference.search_linear` bit for bit.
Each query's top-k is a binary heap whose root is its worst entry (lowest score, then highest
row), so a document costs one comparison unless it enters, and then O(log k); a block of 256
documents none of which beats the root is skipped after one vectorised count; the result
is sorted by (score desc, row asc) once at the end (the tie rule).
"""

from __future__ import annotations

import numpy as np

try:
    import numba
except ImportError:  # the torch path serves without numba (pip install numba)
    numba = None

__all__ = ["available", "family_codes", "TopKState", "fused_chunk_topk"]

PUSH, AND, OR, NOT = 0, 1, 2, 3          # itlr_gpu.compiler's opcodes
BINARY = {"product": 0, "sum": 1, "min": 2, "max": 3}
UNARY = {"one_minus": 0, "reciprocal": 1}
BLOCK = 256                              # documents per stack block: S x 256 float32 stays in L1


def available() -> bool:
    return numba is not None


def family_codes(ops) -> tuple[int, int, int]:
    """(AND, OR, NOT) family codes of an :class:`~itlr_gpu.ops.Ops`."""
    return BINARY[ops.and_], BINARY[ops.or_], UNARY[ops.not_]


def _inline(f):
    return numba.njit(inline="always", cache=True)(f) if numba is not None else f


@_inline
def _max(a, b):
    """max as torch.maximum: a NaN on either side is the result (Python's max(a, nan) is a)."""
    return a if a != a or a >= b else b


@_inline
def _min(a, b):
    """min as torch.minimum: a NaN on either side is the result."""
    return a if a != a or a <= b else b


@_inline
def _worse(s1, r1, s2, r2):
    """(s1, r1) ranks below (s2, r2): a lower score, or an equal score and a higher row."""
    return s1 < s2 or (s1 == s2 and r1 > r2)


@_inline
def _offer(top_s, top_r, q, k, n_kept, s, row):
    """Offer document ``row`` with score ``s`` to query q's heap of ``n_kept`` entries; the new count."""
    if n_kept < k:              # room left: push, sift up
        pos = n_kept
        while pos > 0:
            parent = (pos - 1) >> 1
            if not _worse(s, row, top_s[q, parent], top_r[q, parent]):
                break
            top_s[q, pos] = top_s[q, parent]
            top_r[q, pos] = top_r[q, parent]
            pos = parent
        top_s[q, pos] = s
        top_r[q, pos] = row
        return n_kept + 1
    if s > top_s[q, 0]:         # beats the worst kept (an equal score has a higher row: worse)
        pos = 0
        while True:
            child = 2 * pos + 1
            if child >= k:
                break
            if child + 1 < k and _worse(top_s[q, child + 1], top_r[q, child + 1], top_s[q, child], top_r[q, child]):
                child += 1
            if not _worse(top_s[q, child], top_r[q, child], s, row):
                break
            top_s[q, pos] = top_s[q, child]
            top_r[q, pos] = top_r[q, child]
            pos = child
        top_s[q, pos] = s
        top_r[q, pos] = row
    return n_kept


def _kernel(sims, opcodes, operands, offsets, lit_a, lit_b, and_f, or_f, not_f, floor,
            mix, whole, first_row, top_s, top_r, top_n, depth):
    # Inner loops run over 1-D views indexed from 0 (``blk[j]``, not ``sims[row, b0 + j]``): only that
    # form does LLVM vectorise here (4x on a block count, measured), with the same float32 operations.
    q_count = offsets.shape[0] - 1
    c = sims.shape[1]
    k = top_s.shape[1]
    one = np.float32(1.0)
    zero = np.float32(0.0)
    inf = np.float32(np.inf)
    for q in numba.prange(q_count):
        n_kept = top_n[q]
        if offsets[q + 1] - offsets[q] == 1 and mix.shape[0] == 0:
            # a one-term query: its literal straight from the similarities, no stack
            i = offsets[q]
            a = lit_a[i]
            b = lit_b[i]
            for b0 in range(0, c, BLOCK):
                nb = min(BLOCK, c - b0)
                blk = sims[operands[i], b0:b0 + nb]
                if n_kept == k:
                    # Most blocks hold no document above the k-th score: a branch-free count that SIMD
                    # vectorises skips them.  Exact: the threshold only rises within a block.
                    thr = top_s[q, 0]
                    hits = 0
                    for j in range(nb):
                        v = blk[j] * a + b
                        hits += (v > thr) | (v - v != zero)   # (a NaN or inf similarity counts, as below)
                    if hits == 0:
                        continue
                for j in range(nb):
                    x = blk[j] * a + b
                    if x - x != zero:
                        x = inf                  # as in the general loop: a non-finite score ranks first
                    if n_kept < k or x > top_s[q, 0]:   # the common case is one comparison
                        n_kept = _offer(top_s, top_r, q, k, n_kept, x, first_row + b0 + j)
            top_n[q] = n_kept
            continue
        stack = np.empty((depth, BLOCK), dtype=np.float32)
        for b0 in range(0, c, BLOCK):
            nb = min(BLOCK, c - b0)
            sp = 0
            for i in range(offsets[q], offsets[q + 1]):
                op = opcodes[i]
                if op == PUSH:
                    src = sims[operands[i], b0:b0 + nb]
                    dst = stack[sp]
                    a = lit_a[i]
                    b = lit_b[i]
                    for j in range(nb):
                        dst[j] = src[j] * a + b
                    sp += 1
                elif op == NOT:
                    t = stack[sp - 1]
                    if not_f == 0:
                        for j in range(nb):
                            t[j] = one - t[j]
                    else:
                        for j in range(nb):
                            t[j] = one / _max(t[j], floor)
                else:
                    fam = and_f if op == AND else or_f
                    x = stack[sp - 2]
                    y = stack[sp - 1]
                    if fam == 0:
                        for j in range(nb):
                            x[j] = x[j] * y[j]
                    elif fam == 1:
                        for j in range(nb):
                            x[j] = x[j] + y[j]
                    elif fam == 2:
                        for j in range(nb):
                            x[j] = _min(x[j], y[j])
                    else:
                        for j in range(nb):
                            x[j] = _max(x[j], y[j])
                    sp -= 1
            top = stack[0]
            if mix.shape[0] > 0:
                m0 = mix[q, 0]
                m1 = mix[q, 1]
                m2 = mix[q, 2]
                w = sims[whole[q], b0:b0 + nb]
                for j in range(nb):
                    top[j] = top[j] * m0 + w[j] * m1 + m2
            if n_kept == k:              # as above: skip a block with no score above the k-th
                thr = top_s[q, 0]
                hits = 0
                for j in range(nb):
                    hits += (top[j] > thr) | (top[j] - top[j] != zero)   # (x - x is NaN for inf and NaN)
                if hits == 0:
                    continue
            for j in range(nb):
                x = top[j]
                if x - x != zero:
                    x = inf                  # a score out of float32's range ranks first, whatever k, so it is seen
                if n_kept < k or x > top_s[q, 0]:   # the common case is one comparison
                    n_kept = _offer(top_s, top_r, q, k, n_kept, x, first_row + b0 + j)
        top_n[q] = n_kept


_compiled: dict[bool, object] = {}


def _get(parallel: bool):
    """The kernel compiled serial (queries one after another) or parallel (queries over numba's threads)."""
    if parallel not in _compiled:
        if numba is None:
            raise ImportError("numba is not installed: pip install numba")
        # cache=True: the machine code is kept on disk (next to this file, or in the user's cache folder
        # when that is read-only), so only the first process on a machine pays the compilation.
        _compiled[parallel] = numba.njit(parallel=parallel, cache=True, nogil=True)(_kernel)
    return _compiled[parallel]


class TopKState:
    """The running top-k of ``num_queries`` queries: scores (Q x k, float32), rows (Q x k, int64)
    and how many entries each query holds so far."""

    def __init__(self, num_queries: int, k: int):
        if k < 1:
            raise ValueError("k must be >= 1")
        self.scores = np.full((num_queries, k), -np.inf, dtype=np.float32)
        self.rows = np.full((num_queries, k), -1, dtype=np.int64)
        self.count = np.zeros(num_queries, dtype=np.int64)

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(scores, rows), each Q x min(k, entries held), sorted by (score desc, row asc); every query
        holds the same number of entries."""
        n = int(self.count.min()) if len(self.count) else 0
        scores, rows = self.scores[:, :n], self.rows[:, :n]
        order = np.lexsort((rows, -scores), axis=-1)
        return np.take_along_axis(scores, order, 1), np.take_along_axis(rows, order, 1)


def fused_chunk_topk(sims: np.ndarray, opcodes: np.ndarray, operands: np.ndarray, offsets: np.ndarray,
                     lit_a: np.ndarray, lit_b: np.ndarray, families: tuple[int, int, int], max_depth: int,
                     state: TopKState, first_row: int, mix: np.ndarray | None = None,
                     whole: np.ndarray | None = None, floor: float = 1e-3, parallel: bool = False) -> None:
    """Fold one chunk (``sims``: V x C float32, C-contiguous; its first document is row ``first_row``)
    into ``state``.  Program arrays as in :class:`~itlr_gpu.compiler.Program`; ``lit_a``/``lit_b``
    aligned with ``opcodes``; ``mix`` (Q x 3) and ``whole`` (Q,) for the hybrid epilogue.
    ``parallel``: queries spread over numba's threads (worth it only with cores the BLAS can spare)."""
    empty_mix = np.zeros((0, 3), dtype=np.float32)
    _get(bool(parallel))(np.ascontiguousarray(sims, dtype=np.float32), np.ascontiguousarray(opcodes, dtype=np.int8),
           np.ascontiguousarray(operands, dtype=np.int64), np.ascontiguousarray(offsets, dtype=np.int64),
           np.ascontiguousarray(lit_a, dtype=np.float32), np.ascontiguousarray(lit_b, dtype=np.float32),
           int(families[0]), int(families[1]), int(families[2]), np.float32(floor),
           empty_mix if mix is None else np.ascontiguousarray(mix, dtype=np.float32),
           np.zeros(0, dtype=np.int64) if whole is None else np.ascontiguousarray(whole, dtype=np.int64),
           int(first_row), state.scores, state.rows, state.count, max(1, int(max_depth)))


if __name__ == "__main__":
    # Check against the torch reference and time one chunk (python kernels/cpu_fused_topk.py).
    import time

    import torch

    from itlr_gpu import Ops, compile_queries
    from itlr_gpu.backends.reference import search_reference

    rng = np.random.default_rng(0)
    n, d = 20_000, 384
    docs = rng.standard_normal((n, d), dtype=np.float32)
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    program = compile_queries(['"a" AND NOT ("b" OR "c")', '"d" OR "a"', 'NOT "e"'])
    terms = rng.standard_normal((len(program.terms), d), dtype=np.float32)
    terms /= np.linalg.norm(terms, axis=1, keepdims=True)
    ref_s, ref_r = search_reference(docs, terms, program, Ops(), 10)
    state = TopKState(program.num_queries, 10)
    ones = np.ones(len(program.opcodes), np.float32)
    sims = terms @ docs.T
    t0 = time.perf_counter()
    fused_chunk_topk(sims, program.opcodes, program.operands, program.offsets, ones, 0 * ones,
                     family_codes(Ops()), program.max_depth, state, 0)
    s, r = state.result()
    print("equal to the reference:", np.array_equal(s, ref_s) and np.array_equal(r, ref_r),
          f"({time.perf_counter() - t0:.2f} s with compilation, torch {torch.__version__})")
