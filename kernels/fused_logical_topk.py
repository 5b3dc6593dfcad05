"""Fused logical top-k: similarities, postfix programs and per-query top-k in one Triton kernel.

For documents x_n (rows of the N x d matrix, L2-normalised, resident on the GPU)
and the batch's terms t_j, query q's score is its postfix program P_q evaluated
on the cosine similarities with a fuzzy operator family (``itlr_gpu.ops``)::

    s_nj = <x_n, t_j>                 (tl.dot on the tensor cores, fp32 accumulate)
    score_qn = P_q(s_n*)              (AND/OR/NOT element-wise, float32, in registers)
    top-k_q = the k largest score_qn, ties to the lower row n

Neither the N x T similarity matrix nor the N x Q score matrix ever reaches
global memory.

Design
------
* Host: queries are sorted by (program length, PUSH count) and packed into
  query blocks of BLOCK_Q lanes; each block gets padded instruction arrays
  ``op[step, lane]`` / ``arg[step, lane]`` (padding: NOP=4, a no-op), as many
  steps as its longest program.  Grid = (query blocks, NSPLIT document
  splits), query block fastest, so programs running together stream the same
  document tiles (L2 reuse).  Split s owns a contiguous range of tiles.
* Kernel, per tile of BLOCK_N documents: run the block's steps; at a step where
  some lane PUSHes, ``v = docs[tile] @ terms[arg[step, :]].T`` (BLOCK_N x
  BLOCK_Q) with tl.dot over d in BLOCK_D chunks (the d tail and the N tail are
  masked).  Push-batched form (PUSHES > 0, the default where a block's queries
  have 2-4 terms): before the steps, one pass over d computes PUSHES such
  accumulators, the i-th with each lane's i-th term (``push_rows``), so each
  chunk of the documents is loaded once for all of them; a PUSH step then picks
  accumulator ``arg[step, lane]`` (1.32-1.34x the per-step form on one H200,
  docs/gpu.md).  The evaluation stack is a (S, BLOCK_N, BLOCK_Q) register tensor, S
  = next power of two >= max_depth, with a per-lane stack pointer; slot reads
  are a where-sum over S (exact: one non-zero term), writes a where.
* Top-k keys: (score, row) -> one int64 that orders like (score desc, row asc):
  ``key = ord32(score) << 32 | (0xFFFFFFFF - row)`` where ord32 maps the float
  bits to an order-preserving int32 (negative floats get their magnitude bits
  flipped; -0.0 is made +0.0 first).  Keys are unique, so every comparison and
  every sort below is exact and deterministic and the tie rule comes for free.
  Padded lanes and rows past N get KEY_MIN, below every real key.
* Per (lane, split) the kernel owns a slice of a global int64 buffer:
  ``[0, L)`` its current best keys sorted descending (L = max(next_pow2(k),
  2 * BLOCK_N)), then ``CAP`` (BLOCK_N <= CAP <= L) append slots.  A per-lane
  threshold (its k-th best key so far) lives in registers; keys of a tile that
  beat it are compacted (tl.cumsum) and appended.  A lane whose append area
  holds more than CAP - BLOCK_N keys after a tile (so the next tile could
  overflow it), and every lane once at the end, is merged: sort the appended
  keys ascending, take ``max(best_desc, appended_asc)`` (the top L of the union:
  the first half-cleaner of a bitonic merge), finish the bitonic merge
  descending (log L rounds), store, and read the new threshold at position k-1.
  Appending before merging means nothing tile-sized is live during a merge.
  After warm-up almost no tile has a candidate, so the fast path is one
  compare and one reduction per tile.
* Registers: every tile-sized float32 value costs BLOCK_N * BLOCK_Q / (32 *
  num_warps) registers per thread and per-lane vectors live across the tile
  loop cost a few each, so ``default_config`` sizes the tiles for ptxas's
  report on sm_90 (no spills for depth <= 4, k <= 1000; tests/test_triton_compile.py,
  benchmarks/results/kernel_registers.md).
* Host: one torch.topk over the NSPLIT sorted lists of each query (int64 keys
  are unique, so it is exact), then decode scores and rows.
* Scoring options (``itlr_gpu.scoring``: calibration, negation guard, hybrid,
  OR as max) arrive as plain arrays (``scoring.linearize``): with ``AFFINE`` a
  PUSH pushes ``a[step, lane] * s + b[step, lane]``; with ``HYBRID`` the score
  becomes ``mix_l * score + mix_w * <doc, whole_q> + mix_c`` per lane, one more
  dot per tile.  Both are constexpr: the plain kernel is unchanged.

Limits
------
* k <= K_MAX = 2048 (as FAISS GPU).  A merge holds two L-long int64 vectors in
  registers and sorts them (bitonic, O(L log^2 L)); the buffer grows as
  Q * NSPLIT * (L + CAP) * 8 bytes.  Larger k: use the torch backend
  (``--backend auto`` already sends k > 1024 there).
* N < 2**32 - 1 (the row lives in the key's low 32 bits).
* Extra GPU memory: the key buffer (above), the term matrix in the document
  dtype, the outputs (Q x k x 12 bytes) and small merge temporaries.  The host
  picks CAP, then NSPLIT, then splits the query batch into launches so that the
  buffer fits ``mem_budget`` (default: 4.5 % of the document matrix minus the
  rest, at least 16 MiB; ``plan_launch``).  The planner keeps the full append
  area and gives up splits first: 1,024 queries at k = 1,000 on 1M x 768 fp16 get
  2 splits and ran 74 ms on one H200 (3.3x faster than torch; the former planner's
  smallest append area took 672 ms).  Plans that still starve go to torch under
  ``--backend auto`` (docs/gpu.md).

Precision: the dot takes the documents' dtype (fp16/bf16: the term embeddings
are rounded to it, one tensor-core pass; fp32: ``tf32x3``, three TF32 passes,
about fp32 accuracy).  The logic is float32 with IEEE division, no FMA
contraction, like the torch reference.  Under Triton's interpreter (no GPU) the
dot operands are converted to float32 first (the interpreter's bf16 arithmetic
is wrong), so interpreter scores equal fp32 math on the dtype-rounded inputs.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.standard import _bitonic_merge_hypercube  # tl.sort's own merge step (triton 3.6-3.9)

from itlr_gpu.compiler import AND, NOT, OR, PUSH, Program
from itlr_gpu.ops import RECIPROCAL_FLOOR, Ops

NOP = 4
K_MAX = 2048
PUSH_BATCH_MAX = 4    # most PUSHes per query that the push-batched form (PUSHES > 0) holds in accumulators
MERGE_GROUP = 256  # queries per host-merge step (bounds its temporaries)
KEY_MIN = -(2**63)
AND_CODES = {"product": 0, "sum": 1, "min": 2}
OR_CODES = {"sum": 0, "max": 1}
NOT_CODES = {"one_minus": 0, "reciprocal": 1}
RECIP_FLOOR = tl.constexpr(RECIPROCAL_FLOOR)
assert (PUSH, AND, OR, NOT) == (0, 1, 2, 3)


@triton.jit
def _merge_lane(base, n_new, k_eff, L: tl.constexpr, LOG_L: tl.constexpr):
    """Merge the n_new appended keys at base[L:] into the sorted best list base[:L]; return the k-th best key."""
    idx = tl.arange(0, L)
    kmin = tl.full([L], -9223372036854775808, tl.int64)
    best = tl.load(base + idx)                                     # descending
    new = tl.load(base + L + idx, mask=idx < n_new, other=kmin)
    new = tl.sort(new)                                             # ascending
    # max(descending, ascending) is the top L of the union and bitonic: one bitonic merge (log L
    # compare-and-swap rounds) sorts it, instead of a second full sort (log L (log L + 1) / 2 rounds).
    best = tl.reshape(_bitonic_merge_hypercube(tl.reshape(tl.maximum(best, new), [2] * LOG_L), LOG_L, 1), [L])
    tl.store(base + idx, best)
    return tl.max(tl.where(idx == k_eff - 1, best, kmin), axis=0)


@triton.jit
def _key_score(key):
    """The score of a key, as a float pre-filter bound: -inf for KEY_MIN or a NaN score."""
    bits = (key >> 32).to(tl.int32)
    bits = tl.where(bits >= 0, bits, bits ^ 0x7FFFFFFF)
    s = bits.to(tl.float32, bitcast=True)
    return tl.where(s == s, s, float("-inf"))


@triton.jit
def _tile_dot(doc_rows, row_ok, terms_ptr, arg, stride_term, D, offs_d,
              BLOCK_N: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_D: tl.constexpr,
              DOT_FP32: tl.constexpr, DOT_PRECISION: tl.constexpr):
    """(BLOCK_N x BLOCK_Q) float32 dot products of a document tile with one vector per lane (rows ``arg``)."""
    v = tl.zeros([BLOCK_N, BLOCK_Q], tl.float32)
    term_cols = terms_ptr + arg.to(tl.int64)[None, :] * stride_term
    for dd in range(0, D, BLOCK_D):
        d_ok = (dd + offs_d) < D
        a = tl.load(doc_rows + (dd + offs_d)[None, :], mask=row_ok[:, None] & d_ok[None, :], other=0.0)
        b = tl.load(term_cols + (dd + offs_d)[:, None], mask=d_ok[:, None], other=0.0)
        if DOT_FP32:
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        v = tl.dot(a, b, v, input_precision=DOT_PRECISION)
    return v


@triton.jit
def _dot_chunk(a, cols, dd, offs_d, d_ok, acc, DOT_FP32: tl.constexpr, DOT_PRECISION: tl.constexpr):
    """``acc + a @ b``, b the d chunk at ``dd`` of the term columns ``cols`` (one pointer per lane)."""
    b = tl.load(cols + (dd + offs_d)[:, None], mask=d_ok[:, None], other=0.0)
    if DOT_FP32:
        b = b.to(tl.float32)
    return tl.dot(a, b, acc, input_precision=DOT_PRECISION)


@triton.jit
def _tile_push_dots(doc_rows, row_ok, terms_ptr, rows_ptr, whole_ptr, lanes, stride_term, D, offs_d,
                    BLOCK_N: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_D: tl.constexpr, PUSHES: tl.constexpr,
                    WHOLE: tl.constexpr, DOT_FP32: tl.constexpr, DOT_PRECISION: tl.constexpr):
    """Every PUSH of a tile in one pass over d: accumulator i holds the dot of the document tile with each
    lane's i-th term (``rows_ptr[i * BLOCK_Q + lane]``), i < PUSHES <= 4, and with WHOLE (HYBRID's epilogue)
    a fifth the dot with each lane's whole-query vector (``whole_ptr[lane]``).  Each chunk of the documents
    is loaded once for all of them (``_tile_dot`` per PUSH step reloads it at every step)."""
    acc0 = tl.zeros([BLOCK_N, BLOCK_Q], tl.float32)
    acc1 = tl.zeros([BLOCK_N, BLOCK_Q], tl.float32)
    acc2 = tl.zeros([BLOCK_N, BLOCK_Q], tl.float32)
    acc3 = tl.zeros([BLOCK_N, BLOCK_Q], tl.float32)
    accw = tl.zeros([BLOCK_N, BLOCK_Q], tl.float32)
    col0 = terms_ptr + tl.load(rows_ptr + lanes).to(tl.int64)[None, :] * stride_term
    col1 = col0
    col2 = col0
    col3 = col0
    colw = col0
    if WHOLE:
        colw = terms_ptr + tl.load(whole_ptr + lanes).to(tl.int64)[None, :] * stride_term
    if PUSHES > 1:
        col1 = terms_ptr + tl.load(rows_ptr + BLOCK_Q + lanes).to(tl.int64)[None, :] * stride_term
    if PUSHES > 2:
        col2 = terms_ptr + tl.load(rows_ptr + 2 * BLOCK_Q + lanes).to(tl.int64)[None, :] * stride_term
    if PUSHES > 3:
        col3 = terms_ptr + tl.load(rows_ptr + 3 * BLOCK_Q + lanes).to(tl.int64)[None, :] * stride_term
    for dd in range(0, D, BLOCK_D):
        d_ok = (dd + offs_d) < D
        a = tl.load(doc_rows + (dd + offs_d)[None, :], mask=row_ok[:, None] & d_ok[None, :], other=0.0)
        if DOT_FP32:
            a = a.to(tl.float32)
        acc0 = _dot_chunk(a, col0, dd, offs_d, d_ok, acc0, DOT_FP32, DOT_PRECISION)
        if PUSHES > 1:
            acc1 = _dot_chunk(a, col1, dd, offs_d, d_ok, acc1, DOT_FP32, DOT_PRECISION)
        if PUSHES > 2:
            acc2 = _dot_chunk(a, col2, dd, offs_d, d_ok, acc2, DOT_FP32, DOT_PRECISION)
        if PUSHES > 3:
            acc3 = _dot_chunk(a, col3, dd, offs_d, d_ok, acc3, DOT_FP32, DOT_PRECISION)
        if WHOLE:
            accw = _dot_chunk(a, colw, dd, offs_d, d_ok, accw, DOT_FP32, DOT_PRECISION)
    return acc0, acc1, acc2, acc3, accw


@triton.jit(do_not_specialize=["N", "k_eff", "cap", "tiles_per_split"])  # one binary for any N and k (warm-ups in other processes hit the cache)
def fused_logical_topk_kernel(
    docs_ptr, terms_ptr, op_ptr, arg_ptr, block_steps_ptr, block_lanes_ptr, buf_ptr,
    lit_a_ptr, lit_b_ptr, mix_ptr, whole_arg_ptr, push_rows_ptr,
    N, D, stride_doc, stride_term, k_eff, cap, tiles_per_split,
    AND_OP: tl.constexpr, OR_OP: tl.constexpr, NOT_OP: tl.constexpr,
    S: tl.constexpr, L: tl.constexpr, LOG_L: tl.constexpr,
    BLOCK_N: tl.constexpr, BLOCK_Q: tl.constexpr, BLOCK_D: tl.constexpr,
    DOT_FP32: tl.constexpr, DOT_PRECISION: tl.constexpr,
    AFFINE: tl.constexpr, HYBRID: tl.constexpr, PUSHES: tl.constexpr,
):
    pid_q = tl.program_id(0)
    pid_s = tl.program_id(1)
    nsplit = tl.num_programs(1)

    step_lo = tl.load(block_steps_ptr + pid_q)
    step_hi = tl.load(block_steps_ptr + pid_q + 1)
    n_lanes = tl.load(block_lanes_ptr + pid_q)
    lanes = tl.arange(0, BLOCK_Q)
    lane_ok = lanes < n_lanes
    stride_slot = L + cap
    # Per-lane vectors live across the tile loop cost BLOCK_Q / (columns per thread) registers each in the
    # tile's column layout, so only thr and cnt stay live; the rest is reloaded or recomputed per tile.
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, BLOCK_D)
    slots = tl.arange(0, S)[:, None, None]
    low_all = tl.full([BLOCK_N], 4294967295, tl.int64)
    kmin_tile = tl.full([BLOCK_N, BLOCK_Q], -9223372036854775808, tl.int64)
    thr = tl.full([BLOCK_Q], -9223372036854775808, tl.int64)     # per-lane k-th best key so far
    cnt = tl.zeros([BLOCK_Q], tl.int32)                           # per-lane appended keys

    num_tiles = tl.cdiv(N, BLOCK_N)
    t_lo = pid_s * tiles_per_split
    t_hi = tl.minimum(t_lo + tiles_per_split, num_tiles)
    for t in range(t_lo, t_hi):
        rows = t * BLOCK_N + offs_n
        row_ok = rows < N
        doc_rows = docs_ptr + rows.to(tl.int64)[:, None] * stride_doc

        # ---- evaluate every lane's program on this tile --------------------------------------
        if PUSHES > 0:   # every PUSH of the block's programs (and HYBRID's whole-query dot) in one pass over d
            acc0, acc1, acc2, acc3, accw = _tile_push_dots(
                doc_rows, row_ok, terms_ptr, push_rows_ptr + pid_q * (PUSHES * BLOCK_Q),
                whole_arg_ptr + pid_q * BLOCK_Q, lanes, stride_term, D, offs_d,
                BLOCK_N, BLOCK_Q, BLOCK_D, PUSHES, HYBRID, DOT_FP32, DOT_PRECISION)
        stack = tl.zeros([S, BLOCK_N, BLOCK_Q], tl.float32)
        sp = tl.zeros([BLOCK_Q], tl.int32)
        for step in range(step_lo, step_hi):
            op = tl.load(op_ptr + step * BLOCK_Q + lanes).to(tl.int32)
            arg = tl.load(arg_ptr + step * BLOCK_Q + lanes)
            v = tl.zeros([BLOCK_N, BLOCK_Q], tl.float32)
            if PUSHES > 0:   # arg is the PUSH's ordinal in its program: pick that accumulator
                v = acc0
                if PUSHES > 1:
                    v = tl.where(arg[None, :] == 1, acc1, v)
                if PUSHES > 2:
                    v = tl.where(arg[None, :] == 2, acc2, v)
                if PUSHES > 3:
                    v = tl.where(arg[None, :] == 3, acc3, v)
                if AFFINE:
                    la = tl.load(lit_a_ptr + step * BLOCK_Q + lanes)
                    lb = tl.load(lit_b_ptr + step * BLOCK_Q + lanes)
                    v = v * la[None, :] + lb[None, :]
            elif tl.max((op == 0).to(tl.int32), axis=0) > 0:
                v = _tile_dot(doc_rows, row_ok, terms_ptr, arg, stride_term, D, offs_d,
                              BLOCK_N, BLOCK_Q, BLOCK_D, DOT_FP32, DOT_PRECISION)
                if AFFINE:  # calibrated literal: a * dot + b (per instruction and lane)
                    la = tl.load(lit_a_ptr + step * BLOCK_Q + lanes)
                    lb = tl.load(lit_b_ptr + step * BLOCK_Q + lanes)
                    v = v * la[None, :] + lb[None, :]
            top = tl.sum(tl.where(slots == (sp - 1)[None, None, :], stack, 0.0), axis=0)
            sec = tl.sum(tl.where(slots == (sp - 2)[None, None, :], stack, 0.0), axis=0)
            # min/max propagate a NaN as torch's do (tl.maximum alone returns the other operand), so an
            # overflowing composition reaches the top k as +inf and is refused, as on every backend
            if NOT_OP == 0:
                not_v = 1.0 - top
            else:
                not_v = tl.math.div_rn(tl.full([BLOCK_N, BLOCK_Q], 1.0, tl.float32),
                                       tl.maximum(top, RECIP_FLOOR, propagate_nan=tl.PropagateNan.ALL))
            if AND_OP == 0:
                and_v = sec * top
            elif AND_OP == 1:
                and_v = sec + top
            else:
                and_v = tl.minimum(sec, top, propagate_nan=tl.PropagateNan.ALL)
            if OR_OP == 0:
                or_v = sec + top
            else:
                or_v = tl.maximum(sec, top, propagate_nan=tl.PropagateNan.ALL)
            op2 = op[None, :]
            new = tl.where(op2 == 0, v, tl.where(op2 == 3, not_v, tl.where(op2 == 1, and_v, or_v)))
            dest = tl.where(op == 0, sp, tl.where(op == 3, sp - 1, tl.where(op <= 2, sp - 2, -1)))
            stack = tl.where(slots == dest[None, None, :], new[None, :, :], stack)
            sp = sp + tl.where(op == 0, 1, tl.where((op == 1) | (op == 2), -1, 0))
        score = tl.sum(tl.where(slots == 0, stack, 0.0), axis=0)
        if HYBRID:  # per-lane epilogue: score = mix_l * L + mix_w * <doc, whole vector> + mix_c
            lane_g = pid_q * BLOCK_Q + lanes
            if PUSHES > 0:
                w = accw
            else:
                whole_arg = tl.load(whole_arg_ptr + lane_g)
                w = _tile_dot(doc_rows, row_ok, terms_ptr, whole_arg, stride_term, D, offs_d,
                              BLOCK_N, BLOCK_Q, BLOCK_D, DOT_FP32, DOT_PRECISION)
            mix_l = tl.load(mix_ptr + lane_g * 3)
            mix_w = tl.load(mix_ptr + lane_g * 3 + 1)
            mix_c = tl.load(mix_ptr + lane_g * 3 + 2)
            score = score * mix_l[None, :] + w * mix_w[None, :] + mix_c[None, :]

        # ---- fold the tile into the per-lane running top-k -------------------------------------
        # A score out of float32's range (NaN, +-inf: an overflowing composition) ranks first as +inf,
        # whatever k, so the result shows it and the host refuses the search, as on every backend.
        score = tl.where(score - score == 0.0, score, float("inf"))
        # Fast float pre-filter (thr_s <= the score of the lane's threshold key), then the exact
        # int64 keys only for tiles where some lane may have a candidate.
        thr_s = _key_score(thr)
        maybe = (score >= thr_s[None, :]) & row_ok[:, None] & lane_ok[None, :]
        if tl.max(tl.max(maybe.to(tl.int32), axis=1), axis=0) > 0:
            # (score, row) -> order-preserving unique int64 key
            bits = score.to(tl.int32, bitcast=True)
            bits = tl.where(score == 0.0, 0, bits)                   # -0.0 == +0.0
            bits = tl.where(bits >= 0, bits, bits ^ 0x7FFFFFFF)
            low = low_all - rows.to(tl.int64)
            key = (bits.to(tl.int64) << 32) | low[:, None]
            key = tl.where(row_ok[:, None] & lane_ok[None, :], key, kmin_tile)
            cand = key > thr[None, :]
            n_cand = tl.sum(cand.to(tl.int32), axis=0)
            if tl.max(n_cand, axis=0) > 0:
                # Append first (cnt <= cap - BLOCK_N before, so it fits), merge after: no tile-sized
                # value (key, score, the stack) is live across a merge, which keeps the registers down.
                pos = cnt[None, :] + tl.cumsum(cand.to(tl.int32), axis=0) - 1
                lane_base = ((pid_q * BLOCK_Q + lanes).to(tl.int64) * nsplit + pid_s) * stride_slot
                tl.store(buf_ptr + lane_base[None, :] + L + pos.to(tl.int64), key, mask=cand)
                cnt = cnt + n_cand
                full = cnt > cap - BLOCK_N
                if tl.max(full.to(tl.int32), axis=0) > 0:
                    tl.debug_barrier()                                   # appended keys visible to all threads
                    for j in range(BLOCK_Q):
                        full_j = tl.sum(tl.where(lanes == j, full.to(tl.int32), 0), axis=0)
                        if full_j > 0:
                            cnt_j = tl.sum(tl.where(lanes == j, cnt, 0), axis=0)
                            base_j = buf_ptr + ((pid_q * BLOCK_Q + j).to(tl.int64) * nsplit + pid_s) * stride_slot
                            thr_j = _merge_lane(base_j, cnt_j, k_eff, L, LOG_L)
                            thr = tl.where(lanes == j, thr_j, thr)
                            cnt = tl.where(lanes == j, 0, cnt)
                    tl.debug_barrier()

    # ---- final merge of whatever is still appended ---------------------------------------------
    tl.debug_barrier()
    for j in range(BLOCK_Q):
        cnt_j = tl.sum(tl.where(lanes == j, cnt, 0), axis=0)
        if cnt_j > 0:
            base_j = buf_ptr + ((pid_q * BLOCK_Q + j).to(tl.int64) * nsplit + pid_s) * stride_slot
            _merge_lane(base_j, cnt_j, k_eff, L, LOG_L)


INTERPRETED = type(fused_logical_topk_kernel).__name__ == "InterpretedFunction"


# ------------------------------------------------------------------------------------------------
# Host side
# ------------------------------------------------------------------------------------------------

def next_pow2(x: int) -> int:
    return 1 << max(0, int(x) - 1).bit_length()


def encode_keys(scores: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """The kernel's key, on the host (for tests): int64 ordering like (score desc, row asc)."""
    scores = scores.to(torch.float32).contiguous()
    bits = scores.view(torch.int32).to(torch.int64)
    bits = torch.where(scores == 0, torch.zeros_like(bits), bits)
    bits = torch.where(bits >= 0, bits, bits ^ 0x7FFFFFFF)
    return (bits << 32) | (0xFFFFFFFF - rows.to(torch.int64))


def decode_keys(keys: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """int64 keys -> (scores float32, rows int64)."""
    bits = (keys >> 32).to(torch.int32)
    bits = torch.where(bits >= 0, bits, bits ^ 0x7FFFFFFF)
    rows = 0xFFFFFFFF - (keys & 0xFFFFFFFF)
    return bits.view(torch.float32), rows


def push_counts(program: Program) -> np.ndarray:
    """The PUSH instructions (terms) of each query of ``program``."""
    qid = np.repeat(np.arange(program.num_queries), np.diff(np.asarray(program.offsets, dtype=np.int64)))
    return np.bincount(qid[np.asarray(program.opcodes) == PUSH], minlength=program.num_queries)


def batch_pushes(program: Program) -> int:
    """PUSHES for the push-batched form of ``program``: the most PUSH instructions (terms) of any query
    with at most PUSH_BATCH_MAX of them (queries with more run the per-step form, in launches of their
    own); 0 if there is none."""
    counts = push_counts(program)
    small = counts[counts <= PUSH_BATCH_MAX]
    return int(small.max()) if small.size else 0


def push_batched(push_batch: bool, pushes: int) -> bool:
    """Whether a batch whose queries have at most ``pushes`` terms runs the push-batched form (one PUSH:
    nothing to batch; more than PUSH_BATCH_MAX: more accumulators than the registers hold)."""
    return bool(push_batch) and 2 <= int(pushes) <= PUSH_BATCH_MAX


def plan_blocks(program: Program, block_q: int, order: np.ndarray | None = None, values: tuple = (),
                pushes: int = 0):
    """Sort queries by (length, PUSH count), pack them into blocks of block_q lanes.

    Returns (order, op int8[steps, block_q], arg int32[steps, block_q], block_steps int32[nb+1],
    block_lanes int32[nb], laid-out values, push_rows, batched bool[nb]); lane l of block b runs query order[b * block_q + l].
    ``values``: float32 arrays aligned with ``program.opcodes``, laid out like ``arg`` (0 in padding).
    ``pushes`` > 0 (the kernel's PUSHES): queries with at most ``pushes`` PUSHes come first (the order's
    other keys unchanged), and in every block whose lanes all have at most ``pushes`` PUSHes (``batched``,
    a prefix of the blocks) a PUSH's ``arg`` is its ordinal i in its program and ``push_rows``
    int32[nb, pushes, block_q] holds lane l's i-th term row (0 where the lane has none); elsewhere ``arg``
    is the term row.  With ``pushes`` = 0, ``push_rows`` is None and ``batched`` all False.
    """
    offsets = np.asarray(program.offsets, dtype=np.int64)
    opcodes = np.asarray(program.opcodes, dtype=np.int8)
    operands = np.asarray(program.operands, dtype=np.int32)
    q = len(offsets) - 1
    lengths = np.diff(offsets)
    qid = np.repeat(np.arange(q), lengths)
    counts = push_counts(program)
    if order is None:
        over = counts > pushes if pushes > 0 else np.zeros(q, dtype=bool)
        order = np.lexsort((np.arange(q), counts, lengths, over))
    order = np.asarray(order, dtype=np.int64)
    nq = len(order)
    nb = -(-nq // block_q)
    pos = np.empty(q, dtype=np.int64)
    pos[order] = np.arange(nq)
    padded = np.zeros(nb * block_q, dtype=np.int64)
    padded[:nq] = lengths[order]
    steps = padded.reshape(nb, block_q).max(axis=1)
    block_steps = np.zeros(nb + 1, dtype=np.int64)
    block_steps[1:] = np.cumsum(steps)
    op = np.full((int(block_steps[-1]), block_q), NOP, dtype=np.int8)
    arg = np.zeros((int(block_steps[-1]), block_q), dtype=np.int32)
    sel = np.zeros(q, dtype=bool)
    sel[order] = True
    inst = np.nonzero(sel[qid])[0]
    qi = qid[inst]
    r = block_steps[pos[qi] // block_q] + (inst - offsets[qi])
    c = pos[qi] % block_q
    op[r, c] = opcodes[inst]
    arg[r, c] = np.maximum(operands[inst], 0)
    push_rows = None
    batched = np.zeros(nb, dtype=bool)
    if pushes > 0:
        lane_pushes = np.zeros(nb * block_q, dtype=np.int64)
        lane_pushes[:nq] = counts[order]
        batched = lane_pushes.reshape(nb, block_q).max(axis=1) <= pushes
        is_push = opcodes == PUSH
        before = np.concatenate(([0], np.cumsum(is_push)))     # PUSHes before each instruction
        ordinal = before[1:] - 1 - before[offsets[:-1]][qid]     # a PUSH's ordinal within its query
        blk = pos[qi] // block_q
        p = is_push[inst] & batched[blk]
        push_rows = np.zeros((nb, pushes, block_q), dtype=np.int32)
        push_rows[blk[p], ordinal[inst[p]], c[p]] = operands[inst[p]]
        arg[r[p], c[p]] = ordinal[inst[p]]
    laid = []
    for v in values:
        out = np.zeros((int(block_steps[-1]), block_q), dtype=np.float32)
        out[r, c] = np.asarray(v, dtype=np.float32)[inst]
        laid.append(out)
    block_lanes = np.minimum(block_q, nq - np.arange(nb) * block_q)
    return order, op, arg, block_steps.astype(np.int32), block_lanes.astype(np.int32), laid, push_rows, batched


def default_config(docs: torch.Tensor, max_depth: int, k: int = 10, hybrid: bool = False, affine: bool = False,
                   pushes: int = PUSH_BATCH_MAX) -> dict:
    """The launch configuration for a batch of stack depth ``max_depth`` and top-``k`` over ``docs``' dtype.

    Chosen so that no specialisation spills registers on sm_90 for stack depth <= 4 and k <= 1000
    (ptxas's report, checked by tests/test_triton_compile.py; the table per depth, k, dtype and option
    is benchmarks/results/kernel_registers.md).  Every tile-sized float32 value (each of the S stack
    slots, the dot accumulator, the score) costs BLOCK_N * BLOCK_Q / (32 * num_warps) registers per
    thread: 64 x 64 tiles on 8 warps make that 16 (S <= 2), 64 x 32 tiles 8 (S = 8), and S >= 16
    gets 16 lanes.  S = 4 on 16-bit documents takes 128 x 32 tiles (16 per value): on one H200 they ran
    1.43x faster than 64 x 32 at N = 1M and 1.58x at 10M (k = 10, depth 3; the "autotune_by_n" rows of
    benchmarks/results/gpu-run2/gpu_kernel.json), spill-free up to 255 registers except with HYBRID's extra dot
    (180-264 bytes at depth 4, benchmarks/results/kernel_registers-128x32.md), which keeps 64 x 32.  fp32
    documents take d in chunks of 16 and at most 32 lanes: their tf32x3 dot splits both operands in registers.  (Measured with AFFINE + HYBRID, the heaviest form: S = 4 at 64 lanes
    spills ~250 bytes at k = 1000, at 32 lanes it needs 244 registers and spills nothing; fp32 at S = 2,
    k = 1000 and 64 lanes spills 16 bytes.)  The push-batched form (``pushes``: the batch's most terms in one
    query, 2-4; ``push_batch``, default on) holds up to 4 more tile values: with HYBRID the 64-lane tiles
    take 32 lanes (188-236 bytes of spills at S = 2 otherwise), and 4 accumulators beside AFFINE take 64 x 32
    (88 bytes at 128 x 32); float32 documents with HYBRID and 4 terms keep the per-step form (HYBRID's
    whole-query dot is a fifth accumulator of the batched pass: 32 bytes of spills at k = 1000); 128 x 32
    push-batched was the fastest of eight tiles at 1M and 10M (gpu-run4).
    ``k`` > 128 (a list of 1024) takes the 32-lane tiles for four PUSHes beside AFFINE at S <= 2.
    (These budgets are Triton 3.9's ptxas;
    Triton 3.6's spills more: benchmarks/results/kernel_registers-triton36.md.)
    """
    s = next_pow2(max(1, max_depth))
    half = docs.element_size() <= 2
    wide = s <= 2 and half
    # float32 documents (tf32x3 splits both operands) with HYBRID's fifth accumulator beside four PUSHes spill
    # (32 bytes at k = 1000): the per-step form there
    push_batch = push_batch_default() and not (not half and hybrid and pushes >= PUSH_BATCH_MAX)
    batched = push_batched(push_batch, pushes)
    # PUSH accumulators beside HYBRID's whole-query dot do not fit 64-lane tiles (188-236 bytes of spills at
    # S = 2), nor four of them beside AFFINE's per-literal maps 128 x 32 tiles (88 bytes)
    heavy_push = batched and pushes >= PUSH_BATCH_MAX and affine
    # nor, since min and max propagate NaN, four beside AFFINE's maps at a list of 1024 (k > 128): 16 bytes
    block_q = 64 if wide and not (batched and hybrid) and not (heavy_push and k > 128) else 32 if s <= 8 else 16
    block_n = 128 if s == 4 and half and not hybrid and not heavy_push else 64
    block_d = 64 if half else 16
    return dict(block_n=block_n, block_q=block_q, block_d=block_d, num_warps=8, num_stages=3,
                push_batch=push_batch)


def push_batch_default() -> bool:
    """Whether launches use the push-batched form unless told otherwise: yes, or ITLR_PUSH_BATCH=0/1 (a
    switch for comparing the two forms on a GPU: benchmarks/gpu_check.sh runs the GPU tests under both)."""
    value = os.environ.get("ITLR_PUSH_BATCH", "1")
    if value not in ("0", "1"):
        from itlr_gpu.errors import InputError   # a ValueError too: one "itlr: error:" line on the command line

        raise InputError(f"unknown value {value!r}", "ITLR_PUSH_BATCH", "0 or 1")
    return value == "1"


def list_len(k: int, block_n: int) -> int:
    """L, the length of a lane's sorted best list: a power of two >= k and >= 2 * BLOCK_N (so that the
    append area, CAP <= L slots, can take a tile's candidates several times between merges)."""
    return max(next_pow2(k), 2 * block_n)


def specialisation(dtype: torch.dtype, ops: Ops, max_depth: int, k: int, *, affine: bool = False,
                   hybrid: bool = False, interpreted: bool = False, pushes: int = 0,
                   **config) -> tuple[dict, dict]:
    """(constexprs, launch options) of the kernel for one batch: what ``fused_search`` launches, and what
    the sm_90 compile tests and benchmarks/kernel_registers.py compile.  ``config`` overrides
    ``default_config`` (block_n, block_q, block_d, num_warps, num_stages, push_batch).  ``pushes``: the
    batch's most PUSHes in one query; with ``push_batch`` and 1 <= pushes <= PUSH_BATCH_MAX the kernel
    computes all of a tile's PUSHes in one pass over d (PUSHES = pushes), else one dot per PUSH step."""
    cfg = default_config(torch.empty(0, dtype=dtype), max_depth, k, hybrid=hybrid, affine=affine, pushes=pushes)
    cfg.update({key: v for key, v in config.items() if v is not None})
    L = list_len(k, cfg["block_n"])
    batched = push_batched(cfg.get("push_batch"), pushes)
    constexprs = dict(
        AND_OP=AND_CODES[ops.and_], OR_OP=OR_CODES[ops.or_], NOT_OP=NOT_CODES[ops.not_],
        S=next_pow2(max(1, max_depth)), L=L, LOG_L=L.bit_length() - 1,
        BLOCK_N=cfg["block_n"], BLOCK_Q=cfg["block_q"], BLOCK_D=cfg["block_d"],
        DOT_FP32=interpreted, DOT_PRECISION="tf32x3" if dtype == torch.float32 else "tf32",
        AFFINE=bool(affine), HYBRID=bool(hybrid), PUSHES=int(pushes) if batched else 0,
    )
    return constexprs, dict(num_warps=cfg["num_warps"], num_stages=cfg["num_stages"], enable_fp_fusion=False)


@dataclass(frozen=True)
class LaunchPlan:
    """How :func:`fused_search` lays a batch out: ``nsplit`` document splits per query block, ``cap`` append
    slots per (lane, split), queries per launch.  ``starved``: the memory budget cut the plan below what
    keeps the kernel fast -- the append area under half the sorted list (a merge after nearly every tile
    with a candidate) or several launches; ``--backend auto`` sends such batches to the torch path.  The
    planner until 12-04 shrank the append area before the splits: N = 1M, k = 1000, 1,024 queries got
    cap = BLOCK_N and 4 splits and ran 672 ms on one H200, 2.7x slower than torch; now 2 splits with the full
    area ran 74 ms (benchmarks/results/gpu-run2/, gpu-run4/)."""

    L: int
    cap: int
    nsplit: int
    tiles_per_split: int
    queries_per_launch: int
    launches: int
    mem_budget: int
    starved: bool


def tile_steps(blocks: int, nsplit: int, num_tiles: int, sms: int) -> int:
    """The launch's critical path in document tiles: ``blocks`` x ``nsplit`` programs of up to
    ceil(num_tiles / nsplit) tiles each, on ``sms`` multiprocessors that run one program each at a time."""
    return -(-blocks * nsplit // sms) * -(-num_tiles // nsplit)


def plan_launch(n: int, d: int, itemsize: int, q: int, k: int, num_terms: int, block_n: int, block_q: int,
                L: int, *, sms: int, nsplit: int | None = None, cap: int | None = None,
                mem_budget: int | None = None, max_queries_per_launch: int | None = None) -> LaunchPlan:
    """The launch plan for ``q`` queries, top-``k`` over ``n`` x ``d`` documents of ``itemsize`` bytes on a GPU
    with ``sms`` multiprocessors (explicit arguments override the planner's choices)."""
    num_tiles = -(-n // block_n)
    if mem_budget is None:
        # Everything beyond the documents within ~4.5 % of them: the key buffer gets what is left after
        # the term matrix, the outputs (Q x k x 12 bytes) and the host-merge temporaries.
        fixed = num_terms * d * itemsize + q * k * 12 + 5 * min(q, MERGE_GROUP) * k * 8
        mem_budget = max(16 << 20, int(0.045 * n * d * itemsize) - fixed)
    nb_total = -(-q // block_q)
    if nsplit is None:
        # One program per multiprocessor at a time (8 warps x ~255 registers fill one): among the split
        # counts (up to ~8 waves) whose key buffer fits the budget with a full append area, the fewest within
        # 3 % of the shortest critical path (``tile_steps``).  (Two programs per multiprocessor, the rule until
        # 12-04, gave 288 programs on 132 multiprocessors: 3 rounds for 2.18 rounds of work, ncu's "2 full
        # waves and a partial wave"; 4 splits instead of 9 ran 1.29x faster on one H200.)
        limit = max(1, min(num_tiles, -(-8 * sms // nb_total)))
        fits = [s for s in range(1, limit + 1) if nb_total * block_q * s * 2 * L * 8 <= mem_budget] or [1]
        best = min(tile_steps(nb_total, s, num_tiles, sms) for s in fits)
        nsplit = min(s for s in fits if tile_steps(nb_total, s, num_tiles, sms) <= 1.03 * best)
    nsplit = max(1, min(int(nsplit), num_tiles))
    if cap is None:
        # Largest append area (fewer merges) that keeps the buffer in budget; shrink it before the splits.
        cap = L
        while cap > block_n and nb_total * block_q * nsplit * (L + cap) * 8 > mem_budget:
            cap //= 2
    cap = int(min(L, max(block_n, cap)))
    # Each program owns block_q * (L + cap) keys: the budget bounds the programs in flight.
    programs_max = max(1, mem_budget // (block_q * (L + cap) * 8))
    if nb_total * nsplit > programs_max:
        # Fewer splits first (one launch); if even one split per block does not fit, several launches.
        nsplit = max(1, programs_max // nb_total)
    if max_queries_per_launch is None:
        max_queries_per_launch = max(1, programs_max // nsplit) * block_q
    blocks_per_launch = max(1, max_queries_per_launch // block_q)
    launches = -(-nb_total // blocks_per_launch)
    # Starved: a merge after nearly every tile with a candidate (append area under half the list) or several
    # launches.  (Few programs alone are not: 1,024 queries at k = 1000 on 1M documents in 32 programs, 2 splits
    # of 16 blocks, ran 1.7x faster than the torch path on one H200; benchmarks/results/gpu-run4/.)
    starved = cap < L // 2 or launches > 1
    tiles_per_split = -(-num_tiles // nsplit)
    nsplit = -(-num_tiles // tiles_per_split)     # no empty split
    return LaunchPlan(L, cap, nsplit, tiles_per_split, max_queries_per_launch, launches, mem_budget, starved)


def batch_plan(dtype: torch.dtype, max_depth: int, k: int, n: int, d: int, q: int, num_terms: int, *, sms: int,
               hybrid: bool = False, affine: bool = False, pushes: int = 0, **overrides) -> LaunchPlan:
    """The plan :func:`fused_search` makes with the default tiles for ``q`` queries of stack depth ``max_depth``
    (``num_terms`` terms; ``pushes``: :func:`batch_pushes` of the program; ``hybrid``, ``affine``: the scoring
    options' epilogue and literal maps), top-``k`` over ``n`` x ``d`` documents of ``dtype`` (``overrides``:
    plan_launch's)."""
    k = min(int(k), int(n))
    const, _ = specialisation(dtype, Ops(), max_depth, k, hybrid=hybrid, affine=affine, pushes=pushes)
    return plan_launch(int(n), int(d), torch.empty(0, dtype=dtype).element_size(), int(q), k, int(num_terms),
                       const["BLOCK_N"], const["BLOCK_Q"], const["L"], sms=sms, **overrides)


def fused_search(
    docs: torch.Tensor,
    term_embeddings: torch.Tensor | np.ndarray,
    program: Program,
    ops: Ops,
    k: int,
    *,
    block_n: int | None = None,
    block_q: int | None = None,
    block_d: int | None = None,
    num_warps: int | None = None,
    num_stages: int | None = None,
    nsplit: int | None = None,
    cap: int | None = None,
    mem_budget: int | None = None,
    max_queries_per_launch: int | None = None,
    push_batch: bool | None = None,
    lit_affine: tuple[np.ndarray, np.ndarray] | None = None,
    epilogue: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k (scores float32 (Q, k'), rows int64 (Q, k')), k' = min(k, N), on ``docs.device``.

    ``docs``: (N, d) float16/bfloat16/float32 tensor, rows L2-normalised, on the GPU
    (or on the CPU when this module runs under TRITON_INTERPRET=1).  Sorted by score
    descending, ties to the lower row, like ``search_reference``.

    Scoring options (``itlr_gpu.scoring.LinearScoring``): ``lit_affine = (a, b)``, float32
    arrays aligned with ``program.opcodes``, makes PUSH i push ``a[i] * s + b[i]``;
    ``epilogue = (mix (Q, 3), whole_arg (Q,))`` makes query q's score
    ``mix[q,0] * L + mix[q,1] * <doc, terms[whole_arg[q]]> + mix[q,2]`` (one more dot per tile).
    """
    if docs.dim() != 2 or docs.dtype not in (torch.float16, torch.bfloat16, torch.float32):
        raise ValueError("docs must be an (N, d) float16/bfloat16/float32 tensor")
    if not INTERPRETED and docs.device.type != "cuda":
        raise ValueError("the compiled kernel needs docs on a CUDA device (or load it with TRITON_INTERPRET=1)")
    device = docs.device
    docs = docs if docs.stride(1) == 1 else docs.contiguous()
    n, d = docs.shape
    q = program.num_queries
    k_eff = min(int(k), n)
    if k_eff > K_MAX:
        raise ValueError(f"k={k} is above the kernel's limit K_MAX={K_MAX}")
    if n >= 2**32 - 1:
        raise ValueError("N must be below 2**32 - 1")
    if q == 0 or k_eff == 0:
        return (torch.empty((q, k_eff), dtype=torch.float32, device=device),
                torch.empty((q, k_eff), dtype=torch.int64, device=device))
    terms = torch.as_tensor(np.asarray(term_embeddings, dtype=np.float32)
                            if not isinstance(term_embeddings, torch.Tensor) else term_embeddings)
    terms = terms.to(device=device, dtype=docs.dtype).contiguous()
    if terms.shape != (len(program.terms), d):
        raise ValueError(f"term_embeddings has shape {tuple(terms.shape)}, expected ({len(program.terms)}, {d})")

    constexprs, launch = specialisation(
        docs.dtype, ops, program.max_depth, k_eff, affine=lit_affine is not None, hybrid=epilogue is not None,
        interpreted=INTERPRETED, pushes=batch_pushes(program), block_n=block_n, block_q=block_q,
        block_d=block_d, num_warps=num_warps, num_stages=num_stages, push_batch=push_batch)
    block_n, block_q, L = constexprs["BLOCK_N"], constexprs["BLOCK_Q"], constexprs["L"]

    plan = plan_launch(n, d, docs.element_size(), q, k_eff, len(terms), block_n, block_q, L,
                       sms=1 if INTERPRETED else torch.cuda.get_device_properties(device).multi_processor_count,
                       nsplit=1 if nsplit is None and INTERPRETED else nsplit,   # splits run one by one there
                       cap=cap, mem_budget=mem_budget, max_queries_per_launch=max_queries_per_launch)
    nsplit, cap, tiles_per_split = plan.nsplit, plan.cap, plan.tiles_per_split
    max_queries_per_launch = plan.queries_per_launch

    n_inst = len(program.opcodes)
    if lit_affine is not None and any(np.shape(x) != (n_inst,) for x in lit_affine):
        raise ValueError(f"lit_affine must be two arrays of {n_inst} values (one per instruction)")
    pushes = constexprs["PUSHES"]
    order_all, op_all, arg_all, steps_all, lanes_all, laid, push_rows_all, batched = plan_blocks(
        program, block_q, values=tuple(lit_affine) if lit_affine is not None else (), pushes=pushes)
    lane_mix = lane_whole = None
    if epilogue is not None:
        mix, whole_arg = np.asarray(epilogue[0], dtype=np.float32), np.asarray(epilogue[1], dtype=np.int32)
        if mix.shape != (q, 3) or whole_arg.shape != (q,):
            raise ValueError(f"epilogue must be (mix ({q}, 3), whole_arg ({q},))")
        if whole_arg.min() < 0 or whole_arg.max() >= len(terms):
            raise ValueError("epilogue whole_arg indexes outside term_embeddings")
        lane_mix = np.zeros((len(lanes_all) * block_q, 3), dtype=np.float32)
        lane_whole = np.zeros(len(lanes_all) * block_q, dtype=np.int32)
        lane_mix[:q], lane_whole[:q] = mix[order_all], whole_arg[order_all]
    scores = torch.empty((q, k_eff), dtype=torch.float32, device=device)
    rows = torch.empty((q, k_eff), dtype=torch.int64, device=device)
    blocks_per_launch = max(1, max_queries_per_launch // block_q)
    nb_all = len(lanes_all)
    # Launches never mix push-batched blocks (PUSHES > 0) with per-step ones (PUSHES = 0).
    edges = [0] + [int(b) for b in np.nonzero(np.diff(batched.astype(np.int8)))[0] + 1] + [nb_all]
    segments = [(b0, min(hi, b0 + blocks_per_launch)) for lo, hi in zip(edges, edges[1:])
                for b0 in range(lo, hi, blocks_per_launch)]
    # Triton launches on the current CUDA device, not on the tensors': cuda:1's matrix needs cuda:1 current
    import contextlib

    with torch.cuda.device(device) if device.type == "cuda" else contextlib.nullcontext():
        for b0, b1 in segments:
            r0, r1 = int(steps_all[b0]), int(steps_all[b1])
            op = torch.from_numpy(op_all[r0:r1]).to(device)
            arg = torch.from_numpy(arg_all[r0:r1]).to(device)
            block_steps = torch.from_numpy(steps_all[b0:b1 + 1] - steps_all[b0]).to(device)
            block_lanes = torch.from_numpy(lanes_all[b0:b1]).to(device)
            # unused pointers (feature off) get any tensor: the constexpr branch that reads them is not compiled
            lit_a, lit_b = ((torch.from_numpy(x[r0:r1]).to(device) for x in laid) if laid else (block_lanes,) * 2)
            mix_t, whole_t = ((torch.from_numpy(lane_mix[b0 * block_q:b1 * block_q]).to(device),
                               torch.from_numpy(lane_whole[b0 * block_q:b1 * block_q]).to(device))
                              if lane_mix is not None else (block_lanes, block_lanes))
            push_rows = (torch.from_numpy(push_rows_all[b0:b1]).to(device) if batched[b0] else block_lanes)
            nb = b1 - b0
            buf = torch.full((nb * block_q, nsplit, L + cap), KEY_MIN, dtype=torch.int64, device=device)
            fused_logical_topk_kernel[(nb, nsplit)](
                docs, terms, op, arg, block_steps, block_lanes, buf, lit_a, lit_b, mix_t, whole_t, push_rows,
                n, d, docs.stride(0), terms.stride(0), k_eff, cap, tiles_per_split,
                **launch, **dict(constexprs, PUSHES=pushes if batched[b0] else 0),
            )
            nq = int(lanes_all[b0:b1].sum())
            dest = torch.from_numpy(order_all[b0 * block_q:b0 * block_q + nq]).to(device)
            # Merge the splits' sorted lists pairwise (small temporaries; keys are unique, so topk is exact).
            for g0 in range(0, nq, MERGE_GROUP):
                g1 = min(nq, g0 + MERGE_GROUP)
                keys = buf[g0:g1, 0, :k_eff]
                for split in range(1, nsplit):
                    keys = torch.topk(torch.cat((keys, buf[g0:g1, split, :k_eff]), dim=1), k_eff, dim=1,
                                      sorted=True).values
                sc, rw = decode_keys(keys.contiguous())
                scores[dest[g0:g1]] = sc
                rows[dest[g0:g1]] = rw
                del keys, sc, rw
            del buf
    return scores, rows


# ------------------------------------------------------------------------------------------------
# Self-check against the torch reference: python kernels/fused_logical_topk.py
# (without a GPU run it as TRITON_INTERPRET=1 python kernels/fused_logical_topk.py)
# ------------------------------------------------------------------------------------------------

if __name__ == "__main__":
    from itlr_gpu.backends.reference import search_reference
    from itlr_gpu.compiler import compile_queries

    dev = "cpu" if INTERPRETED else "cuda"
    n, d = (300, 384) if INTERPRETED else (100_000, 768)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, d)).astype(np.float32)
    docs_np = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float16)
    queries = ['"a" AND "b"', '"a" OR NOT "c"', 'NOT ("b" AND "d") OR "e"', '"c"', '("a" OR "b") AND NOT "e"']
    program = compile_queries(queries)
    t = rng.standard_normal((len(program.terms), d)).astype(np.float32)
    terms_np = (t / np.linalg.norm(t, axis=1, keepdims=True)).astype(np.float16).astype(np.float32)
    for ops in (Ops(), Ops("min", "max", "reciprocal")):
        for k in (1, 10, 100):
            got_s, got_r = fused_search(torch.from_numpy(docs_np).to(dev), terms_np, program, ops, k)
            want_s, want_r = search_reference(docs_np, terms_np, program, ops, k)
            np.testing.assert_allclose(got_s.cpu().numpy(), want_s, rtol=1e-4, atol=1e-5)
            same = (got_r.cpu().numpy() == want_r).mean()
            print(f"ops={ops} k={k}: scores match, rows identical {same:.1%}")
    print("ok")
