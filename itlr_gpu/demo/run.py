"""``itlr demo``: dense baseline vs logical retrieval on the shipped corpus.

Everything comes from the package: a corpus generated from hand-written topic
sentences (each document is about a known set of topics), three-term logical
queries from all 32 templates with exact set-logic answers, and the bundled
MiniLM encoder.  Each query is run twice: its natural-language rendering
embedded whole (the baseline) and its logical form (ITLR).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections import defaultdict

import ir_measures
from tqdm.auto import tqdm

from ..encoders import encoder_summary
from ..errors import InputError
from ..query import Term
from ..scoring import RECOMMENDED
from ..synthetic import TEMPLATES_3, make_queries, qrels_from_queries
from .corpus import make_corpus, topic_terms


def run_demo(n_docs: int = 400, per_template: int = 4, seed: int = 0, model: str | None = None,
             k: int = 100, print_fn=print, encoder=None) -> dict:
    """Build the demo's corpus and queries, search them three ways, print the table; returns its rows.
    ``encoder``: one to use instead of ``model``'s (``benchmarks/demo.py`` compares encoder settings)."""
    from ..encoders import SentenceTransformerEncoder, default_encoder
    from ..engine import search
    from ..index import Index

    t0 = time.perf_counter()
    if encoder is None:   # a bad folder: before any work
        encoder = default_encoder() if model is None else SentenceTransformerEncoder(model)
    # The bar goes to a terminal only; an error closes it first, so the error line stands on its own.
    steps = tqdm(total=5, desc="demo", unit="step", bar_format="{desc}: {n}/{total} steps |{bar}| {elapsed}",
                 disable=not sys.stderr.isatty())

    def step(msg: str) -> None:
        steps.set_description_str(f"demo: {msg}")
        steps.update(1)

    with steps:
        corpus, labels = make_corpus(n_docs, seed)
        queries = make_queries(labels, topic_terms(), TEMPLATES_3, per_template, seed, max_answer_frac=0.9)
        if not queries:   # every query needs an answer that is not nearly the whole corpus
            raise InputError(f"{len(corpus)} document(s) are too few for the demo's queries (each needs 1 to 90% of "
                             "the corpus as answers)", "--docs", "more documents (the default is 400)")
        step(f"{len(corpus)} documents, {len(queries)} queries")
        encoder.encode(["warm up"])
        step("encoder loaded")
        index = Index.build(corpus, encoder, dtype="float32", progress=sys.stderr.isatty())
        step("corpus indexed")
        ids = [q.query_id for q in queries]
        runs = {
            "baseline": search(index, [Term(q.text) for q in queries], encoder, k=k, query_ids=ids),
            "itlr": search(index, [q.ast for q in queries], encoder, k=k, query_ids=ids),
            "itlr+": search(index, [q.ast for q in queries], encoder, k=k, query_ids=ids, score_options=RECOMMENDED,
                            whole_queries=[q.text for q in queries]),
        }
        step("queries searched")
        qrels = qrels_from_queries(queries)
        measure = ir_measures.nDCG @ 10
        per_query: dict[str, dict[str, float]] = {}
        for name, table in runs.items():
            run = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in zip(
                table.column("query_id").to_pylist(), table.column("doc_id").to_pylist(), table.column("score").to_pylist())]
            per_query[name] = {m.query_id: m.value for m in ir_measures.iter_calc([measure], qrels, run)}
        step("evaluated")

    by_neg: dict[int, list[str]] = defaultdict(list)
    for q in queries:
        by_neg[q.n_negations].append(q.query_id)
    rows = []
    for neg in sorted(by_neg):
        qids = by_neg[neg]
        base = statistics.fmean(per_query["baseline"][q] for q in qids)
        itlr = statistics.fmean(per_query["itlr"][q] for q in qids)
        plus = statistics.fmean(per_query["itlr+"][q] for q in qids)
        rows.append({"negations": neg, "queries": len(qids), "baseline": base, "itlr": itlr, "itlr+": plus})
    overall = {name: statistics.fmean(per_query[name][q] for q in ids) for name in runs}

    print_fn("")
    print_fn(f"itlr demo: {len(corpus)} documents about 16 topics, {len(queries)} three-term queries "
             f"(32 templates), {getattr(encoder, 'name', 'custom')} ({encoder_summary(encoder)}), "
             "ops product,sum,one_minus")
    print_fn("")
    print_fn("nDCG@10       queries   baseline (whole query)   ITLR (logical)   ITLR --recommended   gain")
    for r in rows:
        print_fn(f"{r['negations']} negations   {r['queries']:>7}   {r['baseline']:>22.3f}   {r['itlr']:>14.3f}"
                 f"   {r['itlr+']:>18.3f}   {r['itlr'] - r['baseline']:+.3f}")
    print_fn(f"all           {len(ids):>7}   {overall['baseline']:>22.3f}   {overall['itlr']:>14.3f}"
             f"   {overall['itlr+']:>18.3f}   {overall['itlr'] - overall['baseline']:+.3f}")
    # the logical score's weight in the mix, as `itlr search --help` and the README state it
    print_fn("(gain = ITLR - baseline; --recommended equalises term similarities, guards NOT against related "
             "terms, takes OR as a max and mixes the logical score with the whole-query similarity, logical weight "
             f"{RECOMMENDED.hybrid:g}: {RECOMMENDED.conj_hybrid:g} for pure conjunctions, {RECOMMENDED.neg_hybrid:g} "
             "for queries with a NOT)")
    example = next((q for q in queries if q.n_negations == 2), queries[0])
    print_fn("")
    print_fn(f"example: {example.text!r}")
    print_fn(f"   as logic: {example.expr}")
    print_fn(f"done in {time.perf_counter() - t0:.1f} s")
    return {"rows": rows, "overall": overall, "queries": len(queries), "documents": len(corpus),
            "encoder": dict(getattr(encoder, "settings", None) or {})}
