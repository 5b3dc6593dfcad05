"""The friendly entry point: queries in, top-k Arrow table out."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .backends import get_backend, resolve_device
from .compiler import compile_queries, query_list
from .encoders import Encoder, encode_queries, index_encoder
from .errors import InputError, warn_caller
from .index import Index
from .io import RESULT_SCHEMA
from .ops import Ops
from .query import Node, natural_text, parse as parse_query
from .scoring import RECOMMENDED, ScoreOptions
from .validate import value_list


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
    *,
    hybrid: float | None = None,
    neg_hybrid: float | None = None,
    conj_hybrid: float | None = None,
    calibration: str | None = None,
    guard: bool | None = None,
    whole_queries: Sequence[str] | None = None,
    score_options: ScoreOptions | str | None = None,
) -> pa.Table:
    """Score logical queries against ``index``; returns ``query_id, rank, doc_id, score``.

    ``queries`` are expression strings or ASTs; a whole natural-language query
    embedded as one vector (the dense baseline) is ``Term(text)``.  ``ops`` is
    ``"AND,OR,NOT"`` families (default ``"product,sum,one_minus"``).  Rows are
    sorted by query (input order) then rank; k larger than the corpus returns
    the whole corpus ranked.

    Scoring options (all off by default, see :mod:`itlr_gpu.scoring`):
    ``calibration`` (``"equalize"``, recommended; ``"zscore"``, ``"minmax"``,
    ``"percentile"``, ``"none"``) standardises each term's similarities against
    their distribution over a document sample; ``hybrid`` (alpha in [0, 1]) mixes
    the standardised logical score with the standardised similarity of the whole
    query embedded as one text: ``alpha * L + (1 - alpha) * W``; ``neg_hybrid`` is
    the alpha for queries containing NOT and ``conj_hybrid`` the alpha for pure
    conjunctions (no NOT, no OR) (both default to ``hybrid``); ``guard=True``
    weakens a negated literal by the part of its similarity explained by the
    query's positive literals (so NOT of a *related* topic does not wipe out the
    wanted documents).  ``whole_queries``
    gives that whole-query text per query (default: a plain-English rendering of
    the expression).  ``score_options`` (a :class:`~itlr_gpu.scoring.ScoreOptions`, or ``"recommended"``:
    ``itlr_gpu.RECOMMENDED``, what ``--recommended`` sets) sets all of them at once; explicit keywords
    override it.
    """
    queries = query_list(queries)
    if not isinstance(index, Index) and not hasattr(index, "check_encoder"):   # (a sharded index quacks alike)
        raise InputError(f"index is a {type(index).__name__}", "index",
                         "an itlr_gpu.Index (Index.load(folder), Index.build(...), Index.from_arrays(...))")
    check_encoder_and_k(encoder, k)
    if chunk_size is not None and (not isinstance(chunk_size, (int, np.integer)) or isinstance(chunk_size, bool)
                                   or chunk_size < 1):
        raise InputError(f"chunk_size={chunk_size!r}", "chunk_size", "a positive integer or None")
    named_ops, ops = ops, Ops.parse(ops)   # (an OR family named with the recommended preset replaces its max)
    options = check_score_options(score_options, named_ops).override(
        hybrid=hybrid, neg_hybrid=neg_hybrid, conj_hybrid=conj_hybrid, calibration=calibration, guard=guard)
    whole_queries = whole_query_list(whole_queries)
    check_whole_queries(whole_queries, len(queries), options)
    program = compile_queries(queries, query_ids)
    if program.num_queries == 0:
        raise InputError("no queries to search", "queries", "at least one query")
    dev = resolve_device(device)   # (a device or backend not here is refused before the encoder runs)
    engine = get_backend(backend, dev)
    encoder = encoder if encoder is not None else index_encoder(index)
    index.check_encoder(encoder)
    term_embeddings = encode_queries(encoder, program.terms, index.dim)
    whole_embeddings = None
    if options.hybrid is not None:
        whole_embeddings = whole_query_embeddings(queries, whole_queries, encoder, index.dim)
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(index), unit="doc", unit_scale=True, desc=f"search ({engine.name}, {dev.type})")
    try:
        if options.active:
            scores, rows = engine.search_with_options(index.embeddings, term_embeddings, program, ops, int(k),
                                                      options, whole_embeddings, device=dev, chunk_size=chunk_size,
                                                      on_chunk=bar.update if bar else None)
        else:
            scores, rows = engine.search(index.embeddings, term_embeddings, program, ops, int(k), device=dev,
                                         chunk_size=chunk_size, on_chunk=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
    results = results_table(program.query_ids, scores, rows, index.doc_ids)
    check_results(results, ops, program, options)
    return results


def check_results(results: pa.Table, ops: Ops, program=None, options: ScoreOptions | None = None) -> None:
    """What every search path does with its result table (one file, a result folder's batch, shards, Ray, rerank):
    refuse scores beyond float32 (:func:`check_finite`) and warn of queries that scored every document 0
    (:func:`warn_underflow`)."""
    if results.num_rows == 0:
        return
    scores = results.column("score").to_numpy(zero_copy_only=False)
    check_finite(results, scores, ops)
    warn_underflow(results, scores, program, options, ops)


UNDERFLOW_TERMS = 8
"""Terms of a query from which an all-zero result is put down to the product's underflow (MiniLM cosines of ~0.1:
0.1**8 is still 1e-8, so fewer terms score 0 only where a term itself scores 0)."""


def _term_count(program, qid: str) -> int | None:
    if program is None or qid not in program.query_ids:
        return None
    from .compiler import PUSH

    return int(np.count_nonzero(program.query_code(program.query_ids.index(qid))[0] == PUSH))


def _warn_partial_underflow(results: pa.Table, scores: np.ndarray, program) -> None:
    """The long ANDs whose top k ends in documents below float32's normal range: subnormal scores keep few digits,
    and those at 0 keep the index's order.  Only
    queries of UNDERFLOW_TERMS terms or more (in a short query a 0 is a score, and its ties are ties)."""
    zero = np.abs(scores) < np.finfo(np.float32).tiny
    if program is None or not zero.any():
        return
    ids = results.column("query_id").filter(pa.array(zero)).unique().to_pylist()
    from .compiler import PUSH

    row = {q: i for i, q in enumerate(program.query_ids)}   # once: short queries' zeros may touch most queries
    long = [(q, t) for q in ids if q in row
            for t in [int(np.count_nonzero(program.query_code(row[q])[0] == PUSH))] if t >= UNDERFLOW_TERMS]
    if long:
        qid, terms = long[0]
        n = len(long)
        warn_caller(f"{n:,} quer{'y' if n == 1 else 'ies'} (the first {qid!r}, {terms} terms) scored some documents "
                    "of their top k below float32's normal range (1.2e-38): a product AND of that many terms "
                    "underflows, so those scores keep few digits (subnormal) or reach 0, where documents keep the "
                    "index's order, not a ranking (split the query into fewer terms, or --ops min,max,one_minus)",
                    UserWarning)


def check_encoder_and_k(encoder: Encoder | None, k: Any) -> None:
    """The ``encoder`` and ``k`` arguments of :func:`search` and of rerank: an object with an ``encode`` method or
    None (the index's model), and a positive integer."""
    if encoder is not None and not callable(getattr(encoder, "encode", None)):
        raise InputError(f"encoder is a {type(encoder).__name__} with no encode method", "encoder",
                         "an object with encode(list of texts) -> (n, dim) array, or None for the index's model")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k <= 0:
        raise InputError(f"k={k!r}", "k", "a positive integer")


def score_column(scores: np.ndarray) -> pa.Array:
    """A result table's ``score`` column: float32, a -0.0 (a negative similarity times 0) written as 0.0."""
    return pa.array(np.asarray(scores, dtype=np.float32).reshape(-1) + np.float32(0), pa.float32())


def warn_underflow(results: pa.Table, scores: np.ndarray, program=None, options: ScoreOptions | None = None,
                   ops: Ops | None = None) -> None:
    """A warning (for the caller of :func:`search`; ``itlr search`` prints it as one line) for the queries whose
    best score fell below float32's normal range, so that their "ranking" is the index's row order.  Its cause,
    told from the first such query: the product of a long AND (about 40 MiniLM cosines of ~0.1) underflows to 0
    in every backend (only a product AND underflows: under another AND family the cause is named as for a short
    query); a short query scores 0 everywhere where a calibration found no spread over the corpus (one document,
    or identical ones), or where its terms score 0 under the operators."""
    first = results.column("rank").to_numpy(zero_copy_only=False) == 1
    lost = np.flatnonzero(np.abs(scores[first]) < np.finfo(np.float32).tiny)
    if not len(lost):
        _warn_partial_underflow(results, scores, program)
        return
    qid = results.column("query_id").filter(first)[int(lost[0])].as_py()
    n = len(lost)
    mine = scores[pc.equal(results.column("query_id"), qid).to_numpy(zero_copy_only=False)]
    # (a best score of 0 over negative ones: a product with a negative similarity; those are still ranked)
    every = bool((np.abs(mine) < np.finfo(np.float32).tiny).all())
    what = (f"{n:,} quer{'y' if n == 1 else 'ies'} (the first {qid!r}) scored "
            + ("every document 0" if every else "no document above 0 (its best score is 0)"))
    terms = _term_count(program, qid)
    count = "" if terms is None else f" ({terms} term{'s' if terms != 1 else ''})"
    if (terms is None or terms >= UNDERFLOW_TERMS) and (ops is None or ops.and_ == "product"):
        warn_caller(f"{what} or below float32's range (1.2e-38): a product AND of that many terms underflows, and "
                    "the order of their results is the index's, not a ranking (split the query into fewer terms, "
                    "or --ops min,max,one_minus)", UserWarning)
    elif options is not None and (options.calibration is not None or options.hybrid is not None):
        # a standardisation over the documents (the calibration's per term, the hybrid's of its two scores) found
        # no spread above float32 rounding: a corpus of one document, or of identical ones
        cause, zero, fix = ((f"the calibration {options.calibration!r} standardises each term's similarities over "
                             "the documents", "every term", "--calibration none keeps the similarities")
                            if options.calibration is not None else
                            ("the hybrid standardises the logical and the whole-query scores over the documents "
                             "before it mixes them", "every document", "without --hybrid the scores are kept"))
        warn_caller(f"{what}{count}: {cause}, and here they have no spread "
                    f"above float32 rounding (under 1e-6 of their size: a corpus of one document, or of identical "
                    f"ones), so {zero} scores 0 and the order of the results is the index's, not a ranking ({fix})",
                    UserWarning)
    else:
        order = "the order of the results is" if every else "the documents at 0 keep"
        warn_caller(f"{what}{count}: its terms score 0 under these operators, "
                    f"and {order} the index's order, not a ranking", UserWarning)


def check_finite(results: pa.Table, scores: np.ndarray, ops: Ops) -> None:
    """Refuse a ranking by scores that left float32's range: a long product of reciprocal NOTs (1000 each) passes
    3.4e38, and then inf - inf is NaN, which the backends order differently.  (inf ranks first wherever it
    occurs, so the top k shows it.)"""
    bad = np.flatnonzero(~np.isfinite(scores))
    if len(bad):
        qid = results.column("query_id")[int(bad[0])].as_py()
        doc = results.column("doc_id")[int(bad[0])].as_py() if "doc_id" in results.column_names else None
        # what multiplies past the range: reciprocal NOTs (up to 1000 each), or, for NOT as one_minus, a long AND of
        # factors 1 - x above 1 (x, a cosine, is negative there)
        fix = ("fewer reciprocal NOTs multiplied in one AND, or NOT as one_minus (the default)"
               if ops.not_ == "reciprocal" else
               "fewer NOTs in one AND (1 - x is up to 2 where a similarity is negative, and 2 to the 128th passes "
               "float32), or AND as min")
        where = f" (document {doc!r} first)" if doc is not None else ""
        raise InputError(f"query {qid!r} scores some documents inf or NaN{where}: unless the index holds a vector "
                         "that is not finite (a damaged or edited embeddings file: rebuild the index), its "
                         f"composition overflows float32 (3.4e38) with ops {ops}", "ops", fix)


def recommended_for(ops: str | Ops | None = None) -> ScoreOptions:
    """What ``--recommended`` sets (``RECOMMENDED``), its OR as the max replaced by an OR family named in ``ops``
    (``--recommended --ops product,sum,one_minus`` adds the alternatives again); ``ops=None``: none named."""
    if ops is not None and Ops.parse(ops).or_ != "max":
        from dataclasses import replace

        return replace(RECOMMENDED, or_max=False)
    return RECOMMENDED


def check_score_options(options: ScoreOptions | str | None, ops: str | Ops | None = None) -> ScoreOptions:
    """``options`` itself, :func:`recommended_for` ``ops`` for ``"recommended"`` (what ``--recommended`` sets, with
    the ``ops`` the caller named), or the paper's raw composition for None; anything else is an InputError.  (A
    ScoreOptions, ``RECOMMENDED`` itself included, is used as it is.)"""
    if isinstance(options, str) and options.strip().lower() == "recommended":   # as calibration names are read
        return recommended_for(ops)
    if options is not None and not isinstance(options, ScoreOptions):
        raise InputError(f"score_options is {options!r}" if isinstance(options, str) else
                         f"score_options is a {type(options).__name__}", "score_options",
                         'a ScoreOptions, "recommended" or None')
    return options or ScoreOptions()


def whole_query_list(whole_queries) -> list | None:
    """None, or the whole-query texts as a list (a generator, an Arrow column: its texts)."""
    return None if whole_queries is None else value_list(whole_queries, "whole_queries",
                                                          "a list with one text per query")


def check_whole_queries(whole_queries: Sequence[str] | None, n: int, options: ScoreOptions) -> None:
    """None, or one whole-query text per query, given only where the hybrid uses them (checked before any
    encoding: texts nobody reads would look as if they had changed the ranking)."""
    if whole_queries is None:
        return
    if isinstance(whole_queries, (str, bytes)) or len(whole_queries) != n:
        raise InputError("whole_queries must be a list with one text per query", "whole_queries", f"{n} texts")
    from .validate import strings_to_arrow

    if all(isinstance(t, str) for t in whole_queries):
        strings_to_arrow(list(whole_queries), "whole_queries", "whole query")   # a lone surrogate, named by row
    if options.hybrid is None:
        raise InputError("whole_queries given but hybrid scoring is off, so they would not be used",
                         "whole_queries", 'hybrid=alpha or score_options="recommended" with them, or no whole_queries')


def rendered_query(query) -> str:
    """A query (an expression string or an AST) as plain English: the hybrid's whole query where none is given."""
    return natural_text(parse_query(query) if isinstance(query, str) else query)


def whole_query_embeddings(queries, whole_queries, encoder: Encoder, dim: int) -> np.ndarray:
    """The hybrid's whole-query vectors: ``whole_queries`` (one text per query), or each expression rendered
    as plain English when None."""
    if whole_queries is None:
        texts = [rendered_query(q) for q in queries]
    else:
        texts = list(whole_queries)
        for i, t in enumerate(texts):
            if not isinstance(t, str) or not t.strip():
                raise InputError(f"whole query {i} is {t!r}", "whole_queries", "a non-empty text per query")
    return encode_queries(encoder, texts, dim, "whole-query texts")


def results_table(query_ids: Sequence[str], scores: np.ndarray, rows: np.ndarray, doc_ids: pa.Array) -> pa.Table:
    """Top-k arrays (Q x k) -> the Arrow result table."""
    q, k = rows.shape
    return pa.table({
        "query_id": pa.array(np.repeat(np.asarray(query_ids, dtype=object), k), pa.string()),
        "rank": pa.array(np.tile(np.arange(1, k + 1, dtype=np.int32), q), pa.int32()),
        "doc_id": doc_ids.take(pa.array(rows.reshape(-1))),
        "score": score_column(scores),
    }, schema=RESULT_SCHEMA)
