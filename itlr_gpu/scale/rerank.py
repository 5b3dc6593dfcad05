"""Rerank first-stage candidates (BM25 or any retriever) with the logical score.

``CANDIDATES`` lists (query_id, doc_id) pairs; each query's candidate rows are
gathered from the index (only those rows are read from the memory-mapped
matrix, once per query batch), the queries of each program shape are evaluated
together on padded (queries x candidates) tensors (on the GPU when there is
one), and the top-k are written with the search result schema, ordered by
score descending then document row ascending, the order of a full search
restricted to the candidates.  Its similarities are reduced elementwise, not by
the BLAS, so a score may differ from that search's in the last float32 places,
and two candidates whose scores lie that close (near-ties) may swap.

The scoring options of :mod:`itlr_gpu.scoring` (calibration, guard, hybrid, OR
as max; not ``percentile``) take their constants from the *whole index's*
document sample, exactly as ``itlr search`` does, folded into per-literal affine
maps and a per-query epilogue (:func:`itlr_gpu.scoring.linearize_options`): a
candidate gets the score a full search with the same options gives it.

Candidate formats: ``.tsv`` / ``.csv`` with a header (``query_id``/``qid``/``query-id`` and
``doc_id``/``docid``/``corpus-id``/``pid``), TREC runs (``qid Q0 docid rank score
tag``; ``.run``/``.trec``/``.txt`` or a headerless ``.tsv``, gzipped too), ``.jsonl``,
``.parquet``, ``.arrow``, or a result folder of ``itlr search``.  Candidate doc ids missing from the index (and query
ids missing from the queries file) are counted and reported, or refused with
``strict=True``; they are never dropped silently.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from ..compiler import compile_queries, run_postfix
from ..encoders import Encoder, index_encoder
from ..engine import (check_encoder_and_k, check_results, check_score_options, check_whole_queries, score_column,
                      whole_query_embeddings, whole_query_list)
from ..validate import value_list
from ..errors import InputError
from ..index import Index
from ..io import RESULT_SCHEMA, RUN_EXTENSIONS, read_run, run_columns
from ..ops import Ops
from ..plan import plan_groups
from ..query import Node
from ..scoring import ScoreOptions, linear_coefficients, linearize_options
from .bulk import check_unique_ids, encode_terms
from .shards import document_sample_read, slice_program

__all__ = ["read_candidates", "rerank", "RerankReport", "CANDIDATE_EXTENSIONS"]

CANDIDATE_EXTENSIONS = RUN_EXTENSIONS
SHOW_FIRST = 5


def read_candidates(path: str | Path) -> pa.Table:
    """Candidates as a table ``query_id, doc_id`` (strings, file order; ``rank`` / ``score`` where the file has
    them, checked as ``itlr eval`` checks a run: a first stage whose file cannot be evaluated is refused here
    too), from a file (:func:`itlr_gpu.io.read_run`) or a result folder of ``itlr search``."""
    p = Path(path)
    if p.is_dir():
        from .bulk import read_results

        table = run_columns(read_results(p), str(p), "candidates")
    else:
        table = read_run(p, "candidates")
    return table


@dataclass
class RerankReport:
    candidates: int = 0         # rows of the candidates table
    scored: int = 0             # distinct (query, document) pairs scored: the rest were skipped or repeated
    duplicates: int = 0         # repeated (query, document) pairs, scored once
    duplicate_example: tuple[str, str] | None = None
    unknown_docs: int = 0
    unknown_doc_examples: list[str] = field(default_factory=list)
    unknown_queries: int = 0
    unknown_query_examples: list[str] = field(default_factory=list)
    queries_without_candidates: int = 0

    def unknown(self) -> list[str]:
        """The candidates naming unknown ids, in words: "3 candidate(s) name doc ids not in the index (first: ...)"."""
        out = []
        if self.unknown_docs:
            out.append(f"{self.unknown_docs:,} candidate(s) name doc ids not in the index (first: "
                       f"{', '.join(map(repr, self.unknown_doc_examples))})")
        if self.unknown_queries:
            out.append(f"{self.unknown_queries:,} candidate(s) name query ids not in the queries file (first: "
                       f"{', '.join(map(repr, self.unknown_query_examples))})")
        return out

    def repeated(self) -> str | None:
        """The repeated (query, document) pairs, in words; None when there are none."""
        if not self.duplicates:
            return None
        q, d = self.duplicate_example
        return (f"{self.duplicates:,} candidate(s) repeat a (query, document) pair already listed (first: document "
                f"{d!r} for query {q!r})")

    def warnings(self) -> list[str]:
        out = [f"{line}; skipped (--strict makes this an error)" for line in self.unknown()]
        if self.repeated():
            out.append(f"{self.repeated()}; scored once (--strict makes this an error)")
        if self.queries_without_candidates:
            n = self.queries_without_candidates
            out.append(f"{n} quer{'y has' if n == 1 else 'ies have'} no candidates and get{'s' if n == 1 else ''} "
                       "no results")
        return out


def _first_distinct(values: pa.Array, n: int = SHOW_FIRST) -> list[str]:
    seen: dict[str, None] = {}
    for v in values.to_pylist():
        seen.setdefault(v)
        if len(seen) >= n:
            break
    return list(seen)


def rerank(
    index: Index,
    queries: Sequence[str | Node],
    query_ids: Sequence[str],
    candidates: pa.Table,
    encoder: Encoder | None = None,
    k: int = 10,
    ops: Ops | str | None = None,
    device: str | torch.device = "auto",
    strict: bool = False,
    where: str = "candidates",
    batch_bytes: int = 256 << 20,
    score_options: ScoreOptions | None = None,
    whole_queries: Sequence[str] | None = None,
) -> tuple[pa.Table, RerankReport]:
    """Score each query's candidates; returns the top-k result table (RESULT_SCHEMA) and a report.

    Queries go in batches (``batch_bytes`` of gathered candidate rows): each batch reads its candidate
    rows once and scores every query of a program shape together on padded (queries x candidates)
    tensors.  ``score_options`` / ``whole_queries`` as for :func:`itlr_gpu.engine.search` (no
    ``percentile`` calibration)."""
    from ..backends import resolve_device

    check_encoder_and_k(encoder, k)
    if isinstance(candidates, pa.RecordBatch):
        candidates = pa.Table.from_batches([candidates])
    if not isinstance(candidates, pa.Table):
        raise InputError(f"candidates is a {type(candidates).__name__}", where,
                         "a pyarrow Table with query_id and doc_id columns (itlr_gpu.io.read_run reads a run file)")
    missing = [c for c in ("query_id", "doc_id") if c not in candidates.column_names]
    if missing:
        raise InputError(f"candidates have no {' or '.join(missing)} column (columns: "
                         f"{', '.join(candidates.column_names) or 'none'})", where, "query_id and doc_id columns")
    encoder = encoder if encoder is not None else index_encoder(index)
    queries = value_list(queries, "queries", "a list of expressions or query ASTs")
    query_ids = value_list(query_ids, "query_ids", "a list of ids, one per query")
    whole_queries = whole_query_list(whole_queries)
    checked = check_score_options(score_options, ops)
    options = checked if checked.active else None
    if options is not None and options.calibration == "percentile":
        raise InputError("percentile calibration does not combine with rerank", "score_options",
                         "equalize, zscore, minmax or none")
    check_whole_queries(whole_queries, len(queries), checked)
    ops = Ops.parse(ops)
    query_ids = [str(q) for q in query_ids]
    check_unique_ids(query_ids, "queries")
    dev = resolve_device(device)
    report = RerankReport(candidates=candidates.num_rows)
    cq = candidates.column("query_id").combine_chunks()
    cd = candidates.column("doc_id").combine_chunks()
    rows = pc.index_in(cd, value_set=index.doc_ids)
    qpos = pc.index_in(cq, value_set=pa.array(query_ids, pa.string()))
    bad_doc = pc.is_null(rows)
    bad_q = pc.is_null(qpos)
    report.unknown_docs = pc.sum(bad_doc).as_py() or 0
    report.unknown_queries = pc.sum(pc.and_(bad_q, pc.invert(bad_doc))).as_py() or 0
    if report.unknown_docs:
        report.unknown_doc_examples = _first_distinct(cd.filter(bad_doc))
    if report.unknown_queries:
        report.unknown_query_examples = _first_distinct(cq.filter(pc.and_(bad_q, pc.invert(bad_doc))))
    # --strict names every kind of problem at once (unknown docs, unknown queries, repeated pairs), not the first
    problems, wanted = (report.unknown(), []) if strict else ([], [])
    if strict and report.unknown_docs:
        wanted.append("doc ids of the index")
    if strict and report.unknown_queries:
        wanted.append("query ids of the queries file")
    keep = pc.invert(pc.or_(bad_doc, bad_q))
    r = pc.filter(rows, keep).to_numpy(zero_copy_only=False).astype(np.int64)
    q = pc.filter(qpos, keep).to_numpy(zero_copy_only=False).astype(np.int64)
    # Sort by (query, row) and drop repeated pairs.
    order = np.lexsort((r, q))
    q, r = q[order], r[order]
    if len(q):
        dup = np.zeros(len(q), dtype=bool)
        dup[1:] = (q[1:] == q[:-1]) & (r[1:] == r[:-1])
        report.duplicates = int(dup.sum())
        if report.duplicates:
            first = int(np.flatnonzero(dup)[0])
            report.duplicate_example = (query_ids[q[first]], index.doc_ids[int(r[first])].as_py())
            if strict:
                problems.append(report.repeated())
                wanted.append("each document at most once per query")
        q, r = q[~dup], r[~dup]
    if problems:
        raise InputError("; ".join(problems), where, ", ".join(wanted) + " (--strict)")
    report.scored = len(q)
    if not report.candidates:
        raise InputError("no candidates", where, "at least one (query_id, doc_id) row")
    if not report.scored:   # a wrong index or queries file: nothing to rerank is no result
        raise InputError(f"none of the {report.candidates:,} candidates can be scored: " + "; ".join(report.unknown()),
                         where, "candidates naming documents of this index and queries of this queries file")
    bounds = np.searchsorted(q, np.arange(len(query_ids) + 1))

    program = compile_queries(queries, query_ids)
    terms_all = torch.as_tensor(encode_terms(index, program, encoder), device=dev)
    whole_all = sample = None
    if options is not None:
        sample = document_sample_read(index.embeddings, options, dev)   # read once, folded into every batch
        if options.hybrid is not None:
            whole_all = whole_query_embeddings(queries, whole_queries, encoder, index.dim)
    counts = np.diff(bounds)
    report.queries_without_candidates = int((counts == 0).sum())
    out_q, out_rank, out_rows, out_scores = [], [], [], []
    with torch.inference_mode():
        for lo, hi in _query_batches(counts, index.dim, batch_bytes):
            sub, used = slice_program(program, lo, hi)
            vectors = terms_all[torch.as_tensor(used, device=dev)]
            eval_ops, coef, mix = ops, None, None
            if options is not None:
                # constants from the whole index's sample, as a full search with these options has them
                lin = linearize_options(index.embeddings, vectors, sub, ops, options,
                                        None if whole_all is None else whole_all[lo:hi], dev, sample=sample)
                sub, vectors, eval_ops = lin.program, lin.vectors, lin.ops
            plan = plan_groups(sub, dev)
            if options is not None:
                coef, mix = linear_coefficients(lin, plan, dev)
            # Every candidate row of the batch read once (ascending: sequential on a memory map).
            wanted = np.unique(r[bounds[lo]:bounds[hi]])
            block = torch.from_numpy(np.asarray(index.embeddings[wanted]).astype(np.float32, copy=True)).to(dev)
            order = plan.order.cpu().numpy()
            for gi, group in enumerate(plan.groups):
                members = lo + order[group.start: group.start + group.push_terms.shape[1]]
                n_cand = counts[members]
                width = int(n_cand.max()) if len(n_cand) else 0
                if width == 0:
                    continue
                # (G, M) candidate rows, padded; their positions in ``block``
                pad = np.zeros((len(members), width), dtype=np.int64)
                valid = np.arange(width)[None, :] < n_cand[:, None]
                pad[valid] = np.concatenate([r[bounds[m]:bounds[m + 1]] for m in members])
                docs = block[torch.as_tensor(np.searchsorted(wanted, pad), device=dev)]          # (G, M, d)
                scores = _group_scores(docs, vectors, group, eval_ops, None if coef is None else coef[gi],
                                       None if mix is None else mix[group.start: group.start + len(members)])
                # a score out of float32's range ranks first as +inf, whatever k, so check_results refuses it
                scores = torch.nan_to_num(scores, nan=math.inf, posinf=math.inf, neginf=math.inf)
                scores = scores.masked_fill(~torch.as_tensor(valid, device=dev), float("-inf"))
                # rows ascend within a query: a stable descending sort sends ties to the lower row
                top = torch.sort(scores, dim=1, descending=True, stable=True).indices.cpu().numpy()
                top_scores = torch.gather(scores, 1, torch.as_tensor(top, device=dev)).cpu().numpy()
                for j, m in enumerate(members):
                    n = min(k, int(n_cand[j]))
                    if n == 0:
                        continue
                    out_q.append((int(m), n))
                    out_rank.append(np.arange(1, n + 1, dtype=np.int32))
                    out_rows.append(pad[j, top[j, :n]])
                    out_scores.append(top_scores[j, :n].astype(np.float32))
    # results in query order
    order_q = np.argsort(np.asarray([m for m, _ in out_q], dtype=np.int64), kind="stable")
    out_rank = [out_rank[i] for i in order_q]
    out_rows = [out_rows[i] for i in order_q]
    out_scores = [out_scores[i] for i in order_q]
    out_q = [query_ids[out_q[i][0]] for i in order_q for _ in range(out_q[i][1])]
    if out_rows:
        rows_all = np.concatenate(out_rows)
        table = pa.table({
            "query_id": pa.array(out_q, pa.string()),
            "rank": pa.array(np.concatenate(out_rank), pa.int32()),
            "doc_id": index.doc_ids.take(pa.array(rows_all)),
            "score": score_column(np.concatenate(out_scores)),
        }, schema=RESULT_SCHEMA)
    else:
        table = RESULT_SCHEMA.empty_table()
    check_results(table, ops, program, checked)
    return table, report


def _query_batches(counts: np.ndarray, dim: int, batch_bytes: int):
    """Contiguous query ranges whose gathered candidate rows (float32, plus the product temporary) fit
    ``batch_bytes``; a query with more candidates than that is a batch of its own."""
    per_row = 4 * dim * 2   # the gathered rows and one literal's product
    lo, total = 0, 0
    for i, c in enumerate(counts):
        need = int(c) * per_row
        if i > lo and total + need > batch_bytes:
            yield lo, i
            lo, total = i, 0
        total += need
    if lo < len(counts):
        yield lo, len(counts)


def _group_scores(docs: torch.Tensor, vectors: torch.Tensor, group, ops: Ops, coef=None,
                  epilogue: torch.Tensor | None = None) -> torch.Tensor:
    """(G, M) scores of one program shape's G queries on their (G, M, d) padded candidate rows.

    ``coef``: the (P, G) literal affines ``(a, b)`` of folded scoring options, ``epilogue``: their (G, 4)
    hybrid rows ``(mix_l, mix_w, mix_c, whole-query row of vectors)`` (see
    :func:`itlr_gpu.scoring.linear_coefficients`)."""
    lit = vectors[group.push_terms.T]                                                    # (G, P, d)
    # elementwise product + sum over d: every (query, row) pair is reduced the same way, so identical
    # documents get identical similarities (ties go to the lower row)
    sims = torch.stack([(docs * lit[:, p, None, :]).sum(dim=-1) for p in range(lit.shape[1])], dim=1)   # (G, P, M)
    if coef is not None:
        a, b = coef
        sims = sims * a.T[:, :, None] + b.T[:, :, None]
    scores = run_postfix(group.opcodes, lambda p: sims[:, p], ops)
    if epilogue is not None:
        whole = (docs * vectors[epilogue[:, 3].to(torch.int64)][:, None, :]).sum(dim=-1)     # (G, M)
        scores = scores * epilogue[:, 0:1] + whole * epilogue[:, 1:2] + epilogue[:, 2:3]
    return scores


def print_warnings(report: RerankReport, file=None) -> None:
    for line in report.warnings():
        print(f"itlr: warning: {line}", file=file or sys.stderr)
