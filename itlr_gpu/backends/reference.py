"""Reference scorer in torch (CPU, or CUDA when present): the oracle of every backend.

For each chunk of C documents it computes the similarities to all T terms of the
batch, ``sims = terms @ chunk.T`` (T x C, float32), evaluates every query's
postfix program on them and folds the chunk's scores into a running top-k.
Nothing of size N x T or N x Q ever exists.

Queries with the same opcode sequence ("shape") are evaluated together: the
stack holds (G x C) tensors for a group of G queries, so a batch of a few
templates costs a few dozen tensor ops per chunk, not one per query.

Peak working memory, in bytes, for Q queries, T terms, dimension d, chunk C and
stack depth S (plus the running top-k, Q x k x 12)::

    4 * C * (2d + T + Q * (S + 3))

``chunk_for_budget`` picks C from a byte budget with that formula; on a CPU it also keeps the
T x C similarity block within :data:`CPU_SIMS_BYTES`, so that scoring reads it from cache.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import torch

from ..compiler import AND, NOT, PUSH, Program
from ..errors import InputError
from ..ops import RECIPROCAL_FLOOR, Ops
from ..plan import Plan, ShapeGroup, plan_groups  # noqa: F401  (re-exported: the plan lived here)
from .gemm import ChunkMatmul

DEFAULT_BUDGET_BYTES = 256 << 20
MIN_CHUNK, MAX_CHUNK = 256, 1 << 16
# On a CPU the scoring pass reads the T x C similarity block right after the BLAS wrote it: kept within 16 MiB
# it comes from cache.  768 terms x 200k documents on the 2-core AMX Xeon: the fused engine took 0.41-0.42 s in
# chunks of 4,096-8,192 documents (12-24 MiB) against 0.49-0.51 s in chunks of 16,384-21,845 (48-64 MiB), while
# the bare product took 0.36-0.38 s at every width (benchmarks/results/cpu_chunks-xeon.md).
CPU_SIMS_BYTES = 16 << 20


def chunk_for_budget(d: int, num_terms: int, num_queries: int, max_depth: int,
                     budget_bytes: int = DEFAULT_BUDGET_BYTES, *, cpu: bool = False) -> int:
    """Largest chunk (documents) whose working set fits ``budget_bytes`` (see module docstring); with
    ``cpu``, also whose similarity block fits :data:`CPU_SIMS_BYTES`."""
    # 2d: the float32 chunk and BLAS's packed copy of it; S + 3: the stack, the score block, top-k scratch.
    per_doc = 4 * (2 * d + num_terms + num_queries * (max_depth + 3))
    chunk = budget_bytes // per_doc
    if cpu:
        chunk = min(chunk, CPU_SIMS_BYTES // (4 * max(1, num_terms)))
    return int(min(MAX_CHUNK, max(MIN_CHUNK, chunk)))


def score_chunk(sims: torch.Tensor, plan: Plan, ops: Ops) -> torch.Tensor:
    """Scores (Q x C, rows in ``plan.order``) of every query on one chunk, from similarities ``sims`` (T x C)."""
    if plan.identity:
        return sims
    out = torch.empty((len(plan.order), sims.shape[1]), dtype=torch.float32, device=sims.device)
    for group in plan.groups:
        rows = out[group.start: group.start + group.push_terms.shape[1]]
        if group.opcodes == (PUSH,):
            torch.index_select(sims, 0, group.push_terms[0], out=rows)
            continue
        # Every stack entry is a fresh tensor (advanced indexing copies), so the operators work in place.
        stack: list[torch.Tensor] = []
        p = 0
        for op in group.opcodes:
            if op == PUSH:
                stack.append(sims[group.push_terms[p]])
                p += 1
            elif op == NOT:
                not_inplace(ops, stack[-1])
            else:
                y = stack.pop()
                binary_inplace(ops, op, stack[-1], y)
        rows.copy_(stack[0])
    return out


def not_inplace(ops: Ops, x: torch.Tensor) -> None:
    """x <- NOT x, with exactly the float32 results of ``Ops.apply_not``."""
    if ops.not_ == "one_minus":
        x.neg_().add_(1.0)          # -x + 1 rounds exactly like 1 - x
    else:
        x.clamp_min_(RECIPROCAL_FLOOR).reciprocal_()


def binary_inplace(ops: Ops, op: int, x: torch.Tensor, y: torch.Tensor) -> None:
    """x <- x AND y or x OR y, with exactly the float32 results of ``Ops.apply_and/apply_or``."""
    family = ops.and_ if op == AND else ops.or_
    if family == "product":
        x.mul_(y)
    elif family == "sum":
        x.add_(y)
    elif family == "min":
        torch.minimum(x, y, out=x)
    else:
        torch.maximum(x, y, out=x)


class RunningTopK:
    """Per-query top-k over chunks of documents, ties to the lower document row.

    Invariant: ``scores``/``rows`` are sorted by (score desc, row asc), and every
    row kept so far is below every row of the next chunk, so a *stable*
    descending sort of [kept, chunk candidates] keeps the tie rule.
    """

    def __init__(self, num_queries: int, k: int, device: torch.device):
        self.k = k
        self.scores = torch.empty((num_queries, 0), dtype=torch.float32, device=device)
        self.rows = torch.empty((num_queries, 0), dtype=torch.int64, device=device)

    def add(self, chunk_scores: torch.Tensor, first_row: int) -> None:
        # A score out of float32's range (NaN, +-inf: an overflowing composition) ranks first as +inf, whatever k,
        # so that the result shows it and the search is refused (engine.check_finite), as on every backend.
        torch.nan_to_num_(chunk_scores, nan=math.inf, posinf=math.inf, neginf=math.inf)
        scores, cols = chunk_top(chunk_scores, min(self.k, chunk_scores.shape[1]))
        all_scores = torch.cat((self.scores, scores), dim=1)
        all_rows = torch.cat((self.rows, cols + first_row), dim=1)
        order = torch.sort(all_scores, dim=1, descending=True, stable=True).indices[:, : self.k]
        self.scores = torch.gather(all_scores, 1, order)
        self.rows = torch.gather(all_rows, 1, order)


def chunk_top(scores: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Top-k of each row sorted by (score desc, column asc), exact under ties.

    ``torch.topk`` picks arbitrarily among values tied at the k-th place, so rows
    with such a tie fall back to a stable full sort.
    """
    # One extra element tells whether a value tied with the k-th was left out.
    extra = k < scores.shape[1]
    values, cols = torch.topk(scores, k + extra, dim=1, sorted=True)
    ties_at_kth = values[:, k - 1] == values[:, k] if extra else torch.zeros(len(values), dtype=torch.bool, device=values.device)
    values, cols = values[:, :k], cols[:, :k]
    # Order candidates by column within equal scores: sort by column, then stable sort by score.
    by_col = torch.sort(cols, dim=1).indices
    values, cols = torch.gather(values, 1, by_col), torch.gather(cols, 1, by_col)
    order = torch.sort(values, dim=1, descending=True, stable=True).indices
    values, cols = torch.gather(values, 1, order), torch.gather(cols, 1, order)
    if bool(ties_at_kth.any()):
        rows = ties_at_kth.nonzero().squeeze(1)
        full = torch.sort(scores[rows], dim=1, descending=True, stable=True)
        values[rows] = full.values[:, :k]
        cols[rows] = full.indices[:, :k]
    return values, cols


def search_reference(
    docs: np.ndarray | torch.Tensor,
    term_embeddings: np.ndarray | torch.Tensor,
    program: Program,
    ops: Ops,
    k: int,
    device: torch.device | str = "cpu",
    chunk_size: int | None = None,
    on_chunk: Callable[[int], None] | None = None,
    matmul: str = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k (scores float32 (Q x k'), rows int64 (Q x k')) with k' = min(k, N).

    ``docs`` (N x d, float16/bfloat16/float32, rows L2-normalised) may be a numpy
    memmap: chunks are read and converted one at a time.  ``term_embeddings`` is
    (T x d) with rows L2-normalised, in ``program.terms`` order.  ``matmul``: which
    BLAS computes the chunk similarities on a CPU (``auto``: the faster, see
    :mod:`itlr_gpu.backends.gemm`).
    """
    device = torch.device(device)
    n, d = docs.shape
    terms = _as_tensor(term_embeddings, device)
    if chunk_size is None:
        chunk_size = chunk_for_budget(d, len(program.terms), program.num_queries, program.max_depth,
                                      cpu=device.type == "cpu")
    plan = plan_groups(program, device)
    with torch.inference_mode():
        return stream_topk(docs, terms, min(k, n), plan, chunk_size, device,
                           lambda sims, chunk: score_chunk(sims, plan, ops), on_chunk, matmul)


def search_linear(docs, lin, k: int, device: torch.device | str = "cpu", chunk_size: int | None = None,
                  on_chunk: Callable[[int], None] | None = None,
                  matmul: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Top-k of a :class:`~itlr_gpu.scoring.LinearScoring` over ``docs`` in torch (chunked; any device):
    the same arithmetic as the fused kernel, so a sharded run with one ``lin`` equals the
    single-process run."""
    from ..scoring import linear_coefficients, score_chunk_linear

    device = torch.device(device)
    n, d = docs.shape
    prog = lin.program
    if chunk_size is None:
        chunk_size = chunk_for_budget(d, len(lin.vectors), prog.num_queries, prog.max_depth + 2,
                                      cpu=device.type == "cpu")
    plan = plan_groups(prog, device)
    coef, mix = linear_coefficients(lin, plan, device)
    with torch.inference_mode():
        return stream_topk(docs, lin.vectors, min(k, n), plan, chunk_size, device,
                           lambda sims, chunk: score_chunk_linear(sims, plan, coef, lin, mix), on_chunk, matmul)


def search_with_options(docs, term_embeddings, program: Program, ops: Ops, k: int, options,
                        whole_embeddings=None, device: torch.device | str = "cpu", chunk_size: int | None = None,
                        on_chunk: Callable[[int], None] | None = None,
                        matmul: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Top-k like :func:`search_reference`, with :class:`~itlr_gpu.scoring.ScoreOptions` applied.

    Runs the linear form (``scoring.linearize_options`` + :func:`search_linear`, what sharded and
    fused searches run too); ``percentile`` (a lookup table) scores each chunk with
    ``scoring.score_chunk_options`` directly."""
    from ..scoring import linearize_options, prepare_options, score_chunk_options

    if options.calibration != "percentile":
        lin = linearize_options(docs, term_embeddings, program, ops, options, whole_embeddings, device=device)
        return search_linear(docs, lin, k, device=device, chunk_size=chunk_size, on_chunk=on_chunk, matmul=matmul)
    device = torch.device(device)
    n, d = docs.shape
    terms = _as_tensor(term_embeddings, device)
    if chunk_size is None:
        chunk_size = chunk_for_budget(d, len(program.terms) + program.num_queries, program.num_queries,
                                      program.max_depth + 2, cpu=device.type == "cpu")
    plan = plan_groups(program, device)
    with torch.inference_mode():
        prep = prepare_options(docs, program, plan, ops, options, terms, whole_embeddings, device)
        return stream_topk(docs, terms, min(k, n), plan, chunk_size, device,
                           lambda sims, chunk: score_chunk_options(sims, chunk, plan, ops, prep), on_chunk, matmul)


def stream_topk(docs, vectors: torch.Tensor, k: int, plan: Plan, chunk_size: int, device: torch.device,
                score: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
                on_chunk: Callable[[int], None] | None = None,
                matmul: str = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Fold ``score(vectors @ chunk.T, chunk)`` (Q x C, rows in ``plan.order``) of every float32 chunk
    into a running top-k; the product runs with the faster BLAS (:class:`~.gemm.ChunkMatmul`).

    Returns numpy (scores, rows) in query order.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, (int, np.integer)) or chunk_size < 1:
        raise InputError(f"chunk_size={chunk_size!r}", "chunk_size", "a positive integer")
    gemm = ChunkMatmul(docs, vectors, chunk_size, device, matmul)
    top = RunningTopK(len(plan.order), k, device)
    for start in range(0, docs.shape[0], chunk_size):
        chunk = gemm.chunk(start, min(docs.shape[0], start + chunk_size))
        top.add(score(gemm.sims(chunk), chunk), start)
        if on_chunk is not None:
            on_chunk(chunk.shape[0])
    return plan.unpermute(top.scores).cpu().numpy(), plan.unpermute(top.rows).cpu().numpy()


def _as_tensor(x, device) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.to(device=device, dtype=torch.float32)
    return torch.as_tensor(np.asarray(x, dtype=np.float32), device=device)
