"""The friendly entry point: queries in, top-k Arrow table out."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pyarrow as pa

from .backends import get_backend, resolve_device
from .compiler import compile_queries
from .encoders import Encoder, default_encoder, l2_normalize
from .errors import InputError
from .index import Index
from .io import RESULT_SCHEMA
from .ops import Ops
from .query import Node


def search(
    index: Index,
    queries: Sequence[str | Node],
    encoder: Encoder | None = None,
    k: int = 10,
    ops: str | Ops | None = None,
    backend: str = "auto",
    device: str = "auto",
    query_ids: Sequence[str] | None = None,
    chunk_size: int | None = None,
    progress: bool = False,
) -> pa.Table:
    """Score logical queries against ``index``; returns ``query_id, rank, doc_id, score``.

    ``queries`` are expression strings or ASTs; a whole natural-language query
    embedded as one vector (the dense baseline) is ``Term(text)``.  ``ops`` is
    ``"AND,OR,NOT"`` families (default ``"product,sum,one_minus"``).  Rows are
    sorted by query (input order) then rank; k larger than the corpus returns
    the whole corpus ranked.
    """
    if isinstance(queries, (str, bytes)):
        raise InputError("queries must be a list of expressions, not one string", "queries", "a list")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k <= 0:
        raise InputError(f"k={k!r}", "k", "a positive integer")
    ops = Ops.parse(ops)
    program = compile_queries(queries, query_ids)
    if program.num_queries == 0:
        raise InputError("no queries to search", "queries", "at least one query")
    if len(set(program.query_ids)) != program.num_queries:
        raise InputError("duplicate query ids", "query_ids", "unique ids")
    encoder = encoder if encoder is not None else default_encoder()
    index.check_encoder(encoder)
    term_embeddings = l2_normalize(np.asarray(encoder.encode(program.terms), dtype=np.float32), "query terms")
    if term_embeddings.shape != (len(program.terms), index.dim):
        raise InputError(f"encoder returned shape {term_embeddings.shape}", "encoder",
                         f"({len(program.terms)}, {index.dim})")
    dev = resolve_device(device)
    engine = get_backend(backend, dev)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(index), unit="doc", unit_scale=True, desc=f"search ({engine.name}, {dev.type})")
    try:
        scores, rows = engine.search(index.embeddings, term_embeddings, program, ops, int(k), device=dev,
                                     chunk_size=chunk_size, on_chunk=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    return results_table(program.query_ids, scores, rows, index.doc_ids)


def results_table(query_ids: Sequence[str], scores: np.ndarray, rows: np.ndarray, doc_ids: pa.Array) -> pa.Table:
    """Top-k arrays (Q x k) -> the Arrow result table."""
    q, k = rows.shape
    return pa.table({
        "query_id": pa.array(np.repeat(np.asarray(query_ids, dtype=object), k), pa.string()),
        "rank": pa.array(np.tile(np.arange(1, k + 1, dtype=np.int32), q), pa.int32()),
        "doc_id": doc_ids.take(pa.array(rows.reshape(-1))),
        "score": pa.array(scores.reshape(-1).astype(np.float32), pa.float32()),
    }, schema=RESULT_SCHEMA)
