#!/usr/bin/env python
"""ITLR quality benchmark: the paper's Tables 1-4 (MiniLM on the CPU) plus calibration / hybrid options.

    python benchmarks/quality.py [--datasets reuters,scifact,nfcorpus,arguana] [--quick]
                                 [--out benchmarks/results/quality] [--cache-dir ~/.cache/itlr-gpu]
                                 [--dump-queries DIR | --llm-translations DIR] [--llm-max-queries 100]

Writes ``results.json``, ``report.md`` and PNG plots into ``--out``.  Document
embeddings are cached under ``<cache-dir>/embeddings/<model>/`` keyed by corpus
checksum, so a rerun does not re-embed.  ``--quick`` runs small samples (a few
hundred documents per dataset, a few queries per template) for CI.

LLM rows (Reasoning rewrite, ITLR LLM-translated) need an LLM, which runs in its own
virtualenv (``.venv-vllm``); ``benchmarks/quality_llm.sh`` does the three steps:

1. ``--dump-queries DIR`` writes ``DIR/<dataset>.jsonl`` (``query_id``, ``text``): a
   deterministic, family-stratified subsample of at most ``--llm-max-queries`` *test*
   queries per dataset (see :func:`llm_subsample`), then exits without evaluating;
2. ``itlr translate DIR/<dataset>.jsonl -o DIR/<dataset>.{logical,rewrite}.arrow
   --translator vllm --mode {logical,rewrite}``;
3. ``--llm-translations DIR`` evaluates the normal benchmark plus, on the subsampled
   test queries, ``llm|rewrite`` (the rewritten sentence embedded whole),
   ``llm|paper (raw)`` and ``llm|recommended`` (the translated logical forms), next to
   the other methods restricted to the same queries.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks import CACHE_HELP, DATA_DIR, DATA_HELP, FOLDER_HELP, cache_dir, check_writable, non_negative_int  # noqa: E402
from benchmarks.quality import data as qdata  # noqa: E402
from benchmarks.quality import queries as qq  # noqa: E402
from benchmarks.quality.selection import select_config  # noqa: E402

DATASETS = ("reuters", "scifact", "nfcorpus", "arguana")
PAPER = {
    "table1": {0: (0.95, 0.99), 1: (0.77, 0.97), 2: (0.65, 0.96), 3: (0.52, 1.00)},
    "table2": {"product,sum,one_minus": 0.97, "sum,sum,one_minus": 0.97, "product,sum,reciprocal": 0.90,
               "min,max,one_minus": 0.86, "min,max,reciprocal": 0.86},
    # (Baseline, BRIGHT reasoning, ITLR) per embedding model
    "table3": {
        "NV-Embed-V1": {"nfcorpus": (0.56, 0.67, 0.74), "scifact": (0.51, 0.59, 0.64), "arguana": (0.51, 0.58, 0.64)},
        "text-embedding-v3-large": {"nfcorpus": (0.63, 0.70, 0.73), "scifact": (0.59, 0.63, 0.64),
                                    "arguana": (0.63, 0.66, 0.67)},
        "nv-embedqa-mistral-7b-v2": {"nfcorpus": (0.54, 0.48, 0.67), "scifact": (0.50, 0.39, 0.61),
                                     "arguana": (0.40, 0.29, 0.59)},
    },
    "table4": {0: (0.81, 0.81, 0.76), 1: (0.60, 0.68, 0.71), 2: (0.51, 0.64, 0.76), 3: (0.36, 0.56, 0.73)},
}
ALL_OPS = [f"{a},{o},{n}" for n in ("one_minus", "reciprocal") for a in ("product", "sum", "min")
           for o in ("sum", "max")]


def grid(quick: bool = False):
    """Candidate scoring configurations (name -> ScoreOptions kwargs); selection happens on the dev split."""
    g = {"paper (raw)": {}}
    g.update({f"cal={c}": {"calibration": c} for c in ("equalize", "zscore", "minmax", "percentile")})
    g["guard"] = {"guard": True}
    g["cal=equalize,guard"] = {"calibration": "equalize", "guard": True}
    alphas = (0.5,) if quick else (0.3, 0.5, 0.7)
    for a in alphas:
        for cal, guard in ((None, False), ("equalize", False), ("equalize", True)):
            if quick and (cal, guard) == ("equalize", False):
                continue
            if not quick and a != 0.5 and not guard:   # kept short: alpha 0.3/0.7 only with the full stack
                continue
            name = f"cal={cal or 'none'}" + (",guard" if guard else "") + f",hybrid={a}"
            g[name] = {"hybrid": a, "calibration": cal, "guard": guard}
    # OR = max of the (calibrated) operands; with the hybrid alphas; plus the two other new options
    base = {"calibration": "equalize", "guard": True, "or_max": True}
    g["cal=equalize,guard,or_max"] = dict(base)
    for a in alphas:
        g[f"cal=equalize,guard,or_max,hybrid={a}"] = {**base, "hybrid": a}
    if not quick:
        g["cal=equalize,guard,or_max,hybrid=0.5,adaptive"] = {**base, "hybrid": 0.5, "adaptive": True}
        g["cal=equalize,guard,or_max,and_min,hybrid=0.5"] = {**base, "hybrid": 0.5, "and_min": True}
    # a smaller logical weight for pure conjunctions (no NOT, no OR), whose whole-text embedding is faithful
    for c in ((0.2,) if quick else (0.0, 0.1, 0.2, 0.3)):
        g[f"cal=equalize,guard,or_max,hybrid=0.5,conj_hybrid={c}"] = {**base, "hybrid": 0.5, "conj_hybrid": c}
    # a larger logical weight for queries with NOT, whose whole-text embedding draws the excluded topic back in
    # (benchmarks/exclusion.py)
    if not quick:
        for n in (0.7, 0.85, 1.0):
            g[f"cal=equalize,guard,or_max,hybrid=0.5,conj_hybrid=0.1,neg_hybrid={n}"] = {
                **base, "hybrid": 0.5, "conj_hybrid": 0.1, "neg_hybrid": n}
    return g


# --------------------------------------------------------------------------- helpers


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def ndcg_per_query(table, qrels_by_q: dict[str, dict[str, int]]) -> dict[str, float]:
    import ir_measures

    qrels = [ir_measures.Qrel(q, d, int(g)) for q, rel in qrels_by_q.items() for d, g in rel.items()]
    run = [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in zip(
        table.column("query_id").to_pylist(), table.column("doc_id").to_pylist(), table.column("score").to_pylist())]
    out = {q: 0.0 for q in qrels_by_q}
    for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, run):
        out[m.query_id] = float(m.value)
    return out


def mean(xs) -> float:
    xs = list(xs)
    return float(np.mean(xs)) if xs else float("nan")


def translate_rules(texts: list[str]):
    """Rules translator: itlr_gpu.translate.translate when present, else the rules module directly."""
    from itlr_gpu.query import parse

    try:
        from itlr_gpu.translate import translate  # type: ignore[attr-defined]

        res = translate(texts, translator="rules")
        out = []
        for r in res:
            expr = getattr(r, "expr", None)
            if expr is None or getattr(r, "error", None):
                out.append((None, getattr(r, "error", "no translation")))
            else:
                out.append((parse(expr) if isinstance(expr, str) else expr, None))
        return out
    except ImportError:
        from itlr_gpu.translate.rules import try_translate_rules

        return [try_translate_rules(t) for t in texts]


class Runner:
    """Runs query sets through ``itlr_gpu.search`` and keeps per-query nDCG@10."""

    def __init__(self, index, encoder, k: int = 10, device: str = "cpu"):
        self.index, self.encoder, self.k = index, encoder, k
        from itlr_gpu.backends import resolve_device

        self.device = resolve_device(device)
        # On the GPU the engine's default backend (the fused kernel, scoring options included).
        self.backend = "torch" if self.device.type == "cpu" else "auto"

    def run(self, qs: list, forms: list, ops=None, options=None, whole: list[str] | None = None) -> dict[str, float]:
        import torch

        from itlr_gpu.engine import search

        # Small per-query tensor ops: one thread avoids OpenMP oversubscription on a shared 2-core machine.
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            hybrid = options is not None and options.hybrid is not None   # the only reader of the whole texts
            table = search(self.index, forms, self.encoder, k=self.k, ops=ops, query_ids=[q.query_id for q in qs],
                           score_options=options, whole_queries=whole if hybrid else None, device=self.device,
                           backend=self.backend)
        finally:
            torch.set_num_threads(threads)
        return ndcg_per_query(table, {q.query_id: q.qrels for q in qs})


BOOTSTRAP = 10_000


def paired_cis(qs: list, a: dict[str, float], b: dict[str, float], seed: int) -> dict:
    """Mean of a - b over queries with a 95% paired-bootstrap interval ({BOOTSTRAP} resamples, fixed seed),
    overall, per family and per number of negations: {"overall": [mean, lo, hi], "by_family": {...}, "by_neg": {...}}."""
    rng = np.random.default_rng(seed)

    def ci(ids: list[str]) -> list[float]:
        diff = np.array([a[i] - b[i] for i in ids], dtype=np.float64)
        means = diff[rng.integers(0, len(diff), size=(BOOTSTRAP, len(diff)))].mean(axis=1)
        lo, hi = np.percentile(means, [2.5, 97.5])
        return [float(diff.mean()), float(lo), float(hi)]

    fam, neg = defaultdict(list), defaultdict(list)
    for q in qs:
        fam[q.family].append(q.query_id)
        neg[int(q.n_neg)].append(q.query_id)
    return {"overall": ci([q.query_id for q in qs]), "by_family": {k: ci(v) for k, v in sorted(fam.items())},
            "by_neg": {k: ci(v) for k, v in sorted(neg.items())}}


def summarise(qs: list, scores: dict[str, float]) -> dict:
    by_neg, by_fam, by_neg_nb = defaultdict(list), defaultdict(list), defaultdict(list)
    for q in qs:
        s = scores[q.query_id]
        by_neg[q.n_neg].append(s)
        by_fam[q.family].append(s)
        if not q.broad:
            by_neg_nb[q.n_neg].append(s)
    return {"overall": mean(scores[q.query_id] for q in qs), "n": len(qs),
            "by_neg": {int(k): mean(v) for k, v in sorted(by_neg.items())},
            "by_neg_not_broad": {int(k): mean(v) for k, v in sorted(by_neg_nb.items())},
            "by_family": {k: mean(v) for k, v in sorted(by_fam.items())}}


# --------------------------------------------------------------------------- datasets


def quick_subset_beir(corpus: qdata.Corpus, seed: int, n_queries: int, max_docs: int) -> qdata.Corpus:
    rng = random.Random(f"{seed}:quick:{corpus.name}")
    qids = sorted(corpus.qrels)
    rng.shuffle(qids)
    keep_q, docs = [], set()
    for q in qids:
        if len(keep_q) >= n_queries:
            break
        new = docs | set(corpus.qrels[q])
        if len(new) > max_docs * 0.7 and keep_q:
            continue
        keep_q.append(q)
        docs = new
    others = [d for d in corpus.doc_ids if d not in docs]
    docs |= set(rng.sample(others, min(len(others), max(0, max_docs - len(docs)))))
    idx = [i for i, d in enumerate(corpus.doc_ids) if d in docs]
    return qdata.Corpus(corpus.name, [corpus.doc_ids[i] for i in idx], [corpus.texts[i] for i in idx],
                        queries={q: corpus.queries[q] for q in keep_q}, qrels={q: corpus.qrels[q] for q in keep_q})


def quick_subset_reuters(corpus: qdata.Corpus, seed: int, max_docs: int) -> qdata.Corpus:
    rng = random.Random(f"{seed}:quick:reuters")
    idx = sorted(rng.sample(range(len(corpus.doc_ids)), min(max_docs, len(corpus.doc_ids))))
    ids = [corpus.doc_ids[i] for i in idx]
    return qdata.Corpus("reuters", ids, [corpus.texts[i] for i in idx], labels={d: corpus.labels[d] for d in ids})


FULL_DOC_CAP = {"reuters": 5000, "scifact": None, "nfcorpus": None, "arguana": 4000}
"""Documents per corpus in the full run (MiniLM embeds ~8 documents/s on 2 CPU cores): every judged
document is kept, the rest is a fixed-seed random sample (independent of --seed, so the cache stays valid)."""


def cap_corpus(corpus: qdata.Corpus, cap: int | None) -> qdata.Corpus:
    if not cap or len(corpus.doc_ids) <= cap:
        return corpus
    rng = random.Random(f"corpus-sample:{corpus.name}")
    judged = {d for rel in corpus.qrels.values() for d in rel}
    keep = set(judged) if len(judged) < cap else set()
    rest = [d for d in corpus.doc_ids if d not in keep]
    keep |= set(rng.sample(rest, cap - len(keep)))
    idx = [i for i, d in enumerate(corpus.doc_ids) if d in keep]
    ids = [corpus.doc_ids[i] for i in idx]
    return qdata.Corpus(corpus.name, ids, [corpus.texts[i] for i in idx],
                        labels={d: corpus.labels[d] for d in ids} if corpus.labels else {},
                        queries=corpus.queries, qrels=corpus.qrels)


def query_settings(quick: bool) -> dict:
    """How many queries are composed and from what (``args`` fields of :func:`build_queries` / :func:`load_corpus`)."""
    if quick:
        return dict(per_template=5, chain_per=4, per_family=12, dev_per_family=12, min_label_docs=4, min_answers=2,
                    max_frac=0.5, quick_docs=200, quick_queries=60, neighbours=8)
    # dev: more compositions of the dev half's queries, so selection is less noisy than a 100-query family
    return dict(per_template=100, chain_per=100, per_family=100, dev_per_family=300, min_label_docs=10,
                min_answers=5, max_frac=0.5, neighbours=10)


def build_queries(name: str, corpus: qdata.Corpus, encoder, args) -> dict:
    """Query sets of one dataset: {"dev": [...], "test": [...], optionally "sweep": [...]} plus counts."""
    if name == "reuters":
        terms = qdata.load_topic_terms()
        p = dict(per_template=args.per_template, min_label_docs=args.min_label_docs, min_answers=args.min_answers,
                 max_frac=args.max_frac, chain_per=args.chain_per)
        test, c3, sweep, cs = qq.reuters_sets(corpus.labels, terms, seed=args.seed, **p)
        dev, c3d, _, _ = qq.reuters_sets(corpus.labels, terms, seed=args.seed + 1, **{**p, "chain_per": 0})
        return {"test": test, "dev": dev, "sweep": sweep,
                "counts": {"test_templates": c3, "dev_templates": c3d, "sweep": cs}}
    qids = sorted(corpus.qrels)
    qvecs = np.asarray(encoder.encode([corpus.queries[q] for q in qids]), dtype=np.float32)
    qvecs /= np.linalg.norm(qvecs, axis=1, keepdims=True)
    out, counts = {}, {}
    for split in ("dev", "test"):
        rows = [i for i, q in enumerate(qids) if qq.split_of(q, args.seed) == split]
        per_family = args.dev_per_family if split == "dev" else args.per_family
        qs, c = qq.beir_queries(corpus.queries, corpus.qrels, qvecs[rows], [qids[i] for i in rows],
                                per_family, args.seed, prefix=f"{split[0]}", neighbours=args.neighbours)
        more, c2 = qq.shape_queries(corpus.queries, corpus.qrels, qvecs[rows], [qids[i] for i in rows],
                                    per_family, args.seed, prefix=f"{split[0]}", neighbours=args.neighbours,
                                    start=len(qs))
        out[split], counts[split] = qs + more, {**c, **c2}
    out["counts"] = counts
    return out


# --------------------------------------------------------------------------- LLM rows


LLM_MODES = ("logical", "rewrite")


def llm_subsample(qs: list, n: int, seed: int) -> list:
    """At most ``n`` queries of ``qs``, stratified by family (Reuters: template; BEIR: composition
    family, which fixes the number of negations), chosen by a rule fixed in advance: families in name
    order take turns (round-robin), each giving its next query in the order of
    ``sha256(f"{seed}:llm-sample:{query_id}")``.  Returned in the order of ``qs``."""
    import hashlib

    by_fam: dict[str, list] = defaultdict(list)
    for q in qs:
        by_fam[q.family].append(q)
    for fam in by_fam:
        by_fam[fam].sort(key=lambda q: hashlib.sha256(f"{seed}:llm-sample:{q.query_id}".encode()).hexdigest())
    chosen: set[str] = set()
    rank = 0
    while len(chosen) < n and any(rank < len(v) for v in by_fam.values()):
        for fam in sorted(by_fam):
            if len(chosen) < n and rank < len(by_fam[fam]):
                chosen.add(by_fam[fam][rank].query_id)
        rank += 1
    return [q for q in qs if q.query_id in chosen]


def dump_llm_queries(names: list[str], args, encoder) -> int:
    """``--dump-queries``: the subsampled test queries of each dataset as ``DIR/<dataset>.jsonl``."""
    outdir = Path(args.dump_queries)
    outdir.mkdir(parents=True, exist_ok=True)
    for name in names:
        corpus, _ = load_corpus(name, args)
        sets = build_queries(name, corpus, encoder, args)
        sub = llm_subsample(sets["test"], args.llm_max_queries, args.seed)
        path = outdir / f"{name}.jsonl"
        tmp = path.with_suffix(".jsonl.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for q in sub:
                fh.write(json.dumps({"query_id": q.query_id, "text": q.text}, ensure_ascii=False) + "\n")
        os.replace(tmp, path)
        fams = defaultdict(int)
        for q in sub:
            fams[q.family] += 1
        log(f"{name}: wrote {len(sub)} of {len(sets['test'])} test queries ({len(fams)} families, "
            f"{min(fams.values()) if fams else 0}-{max(fams.values()) if fams else 0} each) -> {path}")
    encoder.save()
    (outdir / "datasets.txt").write_text("\n".join(names) + "\n", encoding="utf-8")
    return 0


def read_llm_translations(folder: Path, name: str) -> dict:
    """``{mode: {query_id: row}}`` from ``<folder>/<name>.<mode>.arrow`` (those present)."""
    from itlr_gpu.io import read_table

    out = {}
    for mode in LLM_MODES:
        path = Path(folder) / f"{name}.{mode}.arrow"
        if not path.is_file():
            continue
        rows = read_table(path).to_pylist()
        missing = {"query_id", "text", "expr", "error"} - set(rows[0] if rows else {})
        if rows and missing:
            raise SystemExit(f"{path}: missing columns {sorted(missing)} (expected the output of `itlr translate`)")
        out[mode] = {"file": path.name, "rows": {str(r["query_id"]): r for r in rows}}
    return out


def same_form(a, b) -> bool:
    """Equal logical forms up to the order of AND / OR operands (and whitespace inside terms)."""
    from itlr_gpu.query import And, Not, Or, Term

    def key(node):
        if isinstance(node, Term):
            return ("T", " ".join(str(node.text).split()))
        if isinstance(node, Not):
            return ("N", key(node.child))
        kids = []
        for c in node.children:  # flat already when built by the parser; flatten anyway
            kids.extend(c.children if type(c) is type(node) else (c,))
        return ("A" if isinstance(node, And) else "O" if isinstance(node, Or) else "?",
                tuple(sorted((key(c) for c in kids), key=repr)))

    return key(a) == key(b)


def failure_kind(err: str) -> str:
    """'generation stopped at max_tokens (494 chars): ...' -> 'generation stopped at max_tokens'."""
    import re

    kind = re.sub(r"\s*\(.*$", "", str(err).split(":")[0])
    return re.sub(r"\d+", "N", kind)[:60]


def _short(x, n: int = 160):
    return None if x is None else (x if len(x) <= n else x[: n - 3] + "...")


def evaluate_llm(name: str, trans: dict, qs: list, per_q: dict, translated_rules: list, runner, rec) -> dict:
    """LLM rows on the test queries that have translations, plus the other methods on the same queries.

    A translation that failed (error row, missing row, or a row whose text is not the query's text)
    falls back to the natural-language text embedded whole, like the rules row does."""
    from itlr_gpu.query import Term, canonical, parse

    known = {q.query_id for q in qs}
    ids = set()
    unknown = 0
    for mode, t in trans.items():
        ids |= set(t["rows"]) & known
        unknown += len(set(t["rows"]) - known)
    if unknown and not ids:
        raise SystemExit(f"{name}: none of the translated query ids are test queries of this run "
                         "(translations made with other settings, e.g. --quick or --seed?)")
    if unknown:
        log(f"{name}: {unknown} translated query ids are not test queries of this run (ignored)")
    sub = [q for q in qs if q.query_id in ids]
    rules_of = {q.query_id: r for q, r in zip(qs, translated_rules)}
    res: dict = {"n": len(sub), "query_ids": [q.query_id for q in sub], "files": {}, "model": {}, "failures": {},
                 "failure_kinds": {}, "failure_examples": {}, "unknown_ids": unknown}
    whole = [q.text for q in sub]
    forms: dict[str, list] = {}
    values: dict[str, list] = {}
    for mode in LLM_MODES:
        if mode not in trans:
            continue
        rows = trans[mode]["rows"]
        res["files"][mode] = trans[mode]["file"]
        names = [str(r.get("translator")) for r in rows.values() if r.get("translator")]
        # "<model>+rules": the rules' form replaced a refuted LLM form (itlr_gpu.translate.repair)
        models = sorted({n.removesuffix("+rules") for n in names})
        res["model"][mode] = ", ".join(models) or "unknown"
        res.setdefault("repaired", {})[mode] = sum(n.endswith("+rules") for n in names)
        fl, vals, kinds, examples = [], [], defaultdict(int), []
        for q in sub:
            r = rows.get(q.query_id)
            err, val = None, None
            if r is None:
                err = "no translation row"
            elif r.get("text") is not None and r["text"] != q.text:
                err = "translation row has another text (stale file)"
            elif r.get("error"):
                err = str(r["error"])
            elif mode == "rewrite":
                val = r.get("rewrite")
                if not val and r.get("expr"):
                    try:
                        node = parse(r["expr"])
                        val = node.text if isinstance(node, Term) else None
                    except Exception:  # noqa: BLE001
                        val = None
                if not val or not str(val).strip():
                    err = "empty rewrite"
            else:
                try:
                    val = parse(r["expr"]) if r.get("expr") else None
                    if val is None:
                        err = "empty expr"
                except Exception as e:  # noqa: BLE001
                    err = f"expr does not parse: {e}"
            if err is not None:
                kinds[failure_kind(err)] += 1
                if len(examples) < 3:
                    examples.append({"query_id": q.query_id, "error": _short(err, 200)})
                fl.append(Term(q.text))
                vals.append(None)
            else:
                fl.append(Term(str(val)) if mode == "rewrite" else val)
                vals.append(val)
        res["failures"][mode] = sum(v is None for v in vals)
        res["failure_kinds"][mode] = dict(sorted(kinds.items(), key=lambda kv: -kv[1]))
        res["failure_examples"][mode] = examples
        forms[mode], values[mode] = fl, vals
    scores: dict[str, dict[str, float]] = {}
    if "rewrite" in forms:
        scores["llm|rewrite"] = runner.run(sub, forms["rewrite"], whole=[str(f.text) for f in forms["rewrite"]])
    if "logical" in forms:
        scores["llm|paper (raw)"] = runner.run(sub, forms["logical"], whole=whole)
        scores["llm|recommended"] = runner.run(sub, forms["logical"], options=rec, whole=whole)
    # The other methods on the same queries: per-query nDCG of the full test run (each query is scored
    # on its own, so restricting is the same as rerunning on the subsample).
    for label in ("baseline", "gold|paper (raw)", "gold|recommended", "rules|paper (raw)", "rules|recommended"):
        if label in per_q:
            scores[label] = {q.query_id: per_q[label][q.query_id] for q in sub}
    res["summary"] = {k: summarise(sub, v) for k, v in scores.items()}
    res["per_query"] = {k: v for k, v in scores.items() if k.startswith("llm|")}
    gold = {q.query_id: canonical(q.ast) for q in sub}
    res["rules_failures"] = sum(1 for q in sub if rules_of[q.query_id][0] is None)
    res["exact"] = {"rules": sum(1 for q in sub if rules_of[q.query_id][0] is not None
                                 and same_form(rules_of[q.query_id][0], q.ast))}
    if "logical" in values:
        res["exact"]["llm"] = sum(1 for q, v in zip(sub, values["logical"]) if v is not None and same_form(v, q.ast))
    ex = []
    for i in range(0, len(sub), max(1, len(sub) // 6)):
        q = sub[i]
        e = {"query_id": q.query_id, "family": q.family, "text": _short(q.text), "gold": _short(gold[q.query_id])}
        if "logical" in values:
            v = values["logical"][i]
            e["llm"] = _short(canonical(v)) if v is not None else None
        if "rewrite" in values:
            e["rewrite"] = _short(values["rewrite"][i])
        ex.append(e)
    res["examples"] = ex[:6]
    if "llm|recommended" in scores and "rules|recommended" in scores:
        llm_rec, rules_rec = scores["llm|recommended"], scores["rules|recommended"]
        both = [q for q in sub if rules_of[q.query_id][0] is not None]
        res["where_rules_translate"] = {
            "n": len(both),
            "llm|recommended": float(np.mean([llm_rec[q.query_id] for q in both])) if both else None,
            "rules|recommended": float(np.mean([rules_rec[q.query_id] for q in both])) if both else None}
        # Where the LLM loses: its largest per-query drops against the rules' form, both with RECOMMENDED
        at = {q.query_id: i for i, q in enumerate(sub)}
        worst = sorted(both, key=lambda q: llm_rec[q.query_id] - rules_rec[q.query_id])[:5]
        res["losses"] = [{"query_id": q.query_id, "family": q.family, "text": _short(q.text),
                          "gold": _short(gold[q.query_id]),
                          "llm": (_short(canonical(values["logical"][at[q.query_id]]))
                                  if values["logical"][at[q.query_id]] is not None else None),
                          "rules": _short(canonical(rules_of[q.query_id][0])),
                          "ndcg_llm": llm_rec[q.query_id], "ndcg_rules": rules_rec[q.query_id]}
                         for q in worst if llm_rec[q.query_id] < rules_rec[q.query_id]]
    return res


# --------------------------------------------------------------------------- main pipeline


def load_corpus(name: str, args) -> tuple[qdata.Corpus, int]:
    corpus = qdata.load_dataset(name, args.data_dir, getattr(args, "dataset_dirs", {}).get(name))
    full_docs = len(corpus.doc_ids)
    if not args.quick:
        corpus = cap_corpus(corpus, args.max_docs.get(name))
    else:
        corpus = (quick_subset_reuters(corpus, args.seed, args.quick_docs) if name == "reuters"
                  else quick_subset_beir(corpus, args.seed, args.quick_queries, args.quick_docs))
    return corpus, full_docs


def evaluate_dataset(name: str, args, encoder, out: dict) -> None:
    from itlr_gpu.index import Index
    from itlr_gpu.query import Term
    from itlr_gpu.scoring import RECOMMENDED, ScoreOptions
    from tqdm.auto import tqdm

    t0 = time.time()
    corpus, full_docs = load_corpus(name, args)
    log(f"{name}: {len(corpus.doc_ids)} documents; embedding (cached by checksum)")
    emb = encoder.encode_corpus(name, corpus.doc_ids, corpus.texts)
    index = Index.from_arrays(emb, corpus.doc_ids, dtype="float32", model=encoder.name)
    sets = build_queries(name, corpus, encoder, args)
    log(f"{name}: {len(sets['dev'])} dev / {len(sets['test'])} test queries")
    runner = Runner(index, encoder, device=args.device)
    res: dict = {"documents": len(corpus.doc_ids), "documents_in_corpus": full_docs, "counts": sets["counts"], "dev": {}, "test": {},
                 "examples": [qq.describe(q) for q in sets["test"][:: max(1, len(sets["test"]) // 12)]]}
    configs, alias = candidate_configs(args)
    rec = ScoreOptions(**configs["recommended"])
    for split in ("dev", "test"):
        qs = sets[split]
        gold = [q.ast for q in qs]
        whole = [q.text for q in qs]
        translated = translate_rules(whole)
        rules = [ast if ast is not None else Term(q.text) for (ast, _), q in zip(translated, qs)]
        per_q: dict[str, dict[str, float]] = {}
        steps = [("baseline", [Term(t) for t in whole], None, None)]
        steps += [(f"gold|{c}", gold, None, ScoreOptions(**kw)) for c, kw in configs.items()
                  if not (c == "recommended" and alias)]
        steps += [(f"rules|{c}", rules, None, ScoreOptions(**kw)) for c, kw in configs.items()
                  if c in ("paper (raw)", "recommended")]
        if split == "test" and name == "reuters":
            steps += [(f"ops|{o}", gold, o, None) for o in ALL_OPS]
        for label, forms, ops, opt in tqdm(steps, desc=f"{name} {split} runs", unit="run"):
            per_q[label] = runner.run(qs, forms, ops=ops, options=opt, whole=whole)
        if alias:
            per_q["gold|recommended"] = per_q[f"gold|{alias}"]
        res[split] = {"summary": {k: summarise(qs, v) for k, v in per_q.items()},
                      "rules_failures": sum(1 for a, _ in translated if a is None), "n": len(qs),
                      "rules_failure_kinds": dict(Counter(re.sub(r"\d+", "N", e).split(":")[0]
                                                          for a, e in translated if a is None).most_common())}
        if split == "test":
            res["test"]["per_query"] = {k: v for k, v in per_q.items()
                                        if k in ("baseline", "gold|paper (raw)", "gold|recommended",
                                                 "rules|recommended")}
            # End to end (English in): where the rules translate, how far is the user from the gold form?
            res["test"]["end_to_end"] = end_to_end(qs, translated, per_q)
            res["test"]["ci"] = paired_cis(qs, per_q["gold|recommended"], per_q["baseline"], args.seed)
            res["test"]["queries"] = [{"query_id": q.query_id, "family": q.family, "n_neg": q.n_neg,
                                       "broad": q.broad} for q in qs]
            trans = read_llm_translations(args.llm_translations, name) if args.llm_translations else {}
            if trans:
                log(f"{name}: LLM rows from {', '.join(t['file'] for t in trans.values())}")
                res["llm"] = evaluate_llm(name, trans, qs, per_q, translated, runner, rec)
    if "sweep" in sets and sets["sweep"]:
        qs = sets["sweep"]
        whole = [q.text for q in qs]
        sw = {}
        for label, forms, opt in [("baseline", [Term(t) for t in whole], None),
                                  ("gold|paper (raw)", [q.ast for q in qs], None),
                                  ("gold|recommended", [q.ast for q in qs], RECOMMENDED)]:
            sw[label] = summarise(qs, runner.run(qs, forms, options=opt, whole=whole))
        res["sweep"] = sw
    res["seconds"] = round(time.time() - t0, 1)
    out["datasets"][name] = res
    encoder.save()
    log(f"{name}: done in {res['seconds']} s")


def candidate_configs(args) -> tuple[dict[str, dict], str | None]:
    """The configurations a run evaluates (name -> ScoreOptions kwargs; ``--config`` narrows the grid), with
    "recommended" (the shipped RECOMMENDED) added, and the grid name RECOMMENDED equals (None if none)."""
    from itlr_gpu.scoring import RECOMMENDED, ScoreOptions

    configs = grid(args.quick)
    if args.config:   # a comparison of a few configurations (the recommended one is always run)
        unknown = [c for c in args.config if c not in configs]
        if unknown:
            raise SystemExit(f"--config: unknown configuration(s) {unknown}; known: {list(configs)}")
        configs = {c: kw for c, kw in configs.items() if c in args.config or c == "paper (raw)"}
    rec_kw = dataclasses.asdict(RECOMMENDED)
    alias = next((c for c, kw in configs.items() if ScoreOptions(**kw) == ScoreOptions(**rec_kw)), None)
    configs["recommended"] = rec_kw
    return configs, alias


def exclusion_check(args, encoder, configs: dict[str, dict], alias: str | None) -> dict:
    """The exclusion constraint's measurements on the dev seed (benchmarks/exclusion.py), with the run's
    ``encoder``: for Reuters label pairs (A, B) with B on many of A's articles, the share of B's articles in the
    top 10 of "A" alone and of "A" AND NOT "B" under every candidate configuration."""
    from benchmarks import exclusion
    from itlr_gpu.scoring import ScoreOptions

    seed = args.seed + 1
    log(f"exclusion check: Reuters label pairs, dev seed {seed}")
    xs = exclusion.exclusion_set(args.data_dir, encoder, seed=seed)
    rows = {name: exclusion.measure(xs, "not", ScoreOptions(**kw)) for name, kw in configs.items()
            if not (name == "recommended" and alias)}
    if alias:
        rows["recommended"] = rows[alias]
    return {"seed": seed, "pairs": len(xs.pairs), "A alone": exclusion.measure(xs, "pos", None), "configs": rows}


def end_to_end(qs: list, translated: list, per_q: dict) -> dict:
    """Rules translation + recommended vs gold form + recommended, on the queries the rules translate
    (the others fall back to the whole-query embedding and are counted), overall and per family."""
    ok = [q for q, (ast, _) in zip(qs, translated) if ast is not None]
    exact = [q for q, (ast, _) in zip(qs, translated) if ast is not None and same_form(ast, q.ast)]

    def cell(sub: list) -> dict:
        g = [per_q["gold|recommended"][q.query_id] for q in sub]
        r = [per_q["rules|recommended"][q.query_id] for q in sub]
        return {"n": len(sub), "gold": mean(g), "rules": mean(r), "diff": mean(r) - mean(g) if sub else float("nan")}

    fams = sorted({q.family for q in qs})
    return {"queries": len(qs), "translated": len(ok), "fallback": len(qs) - len(ok), "exact": len(exact),
            "overall": cell(ok),
            "by_family": {f: {**cell([q for q in ok if q.family == f]),
                              "queries": sum(1 for q in qs if q.family == f),
                              "exact": sum(1 for q in exact if q.family == f)} for f in fams}}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--datasets", default=",".join(DATASETS),
                    help="comma-separated: %s (under --data-dir), or the path of a BEIR folder of your own "
                         "(corpus.jsonl[.gz], queries.jsonl, qrels/test.tsv), named by its folder; its compositions "
                         "are drawn as for the shared BEIR sets" % ", ".join(DATASETS))
    ap.add_argument("--quick", action="store_true", help="small samples (CI): a few minutes")
    ap.add_argument("--config", action="append", default=None, metavar="NAME",
                    help="run only these grid configurations (repeatable; names as in the report) and the "
                         "recommended one: a comparison, not a selection over the whole grid")
    ap.add_argument("--out", type=Path, default=None,
                    help=FOLDER_HELP + " (default: benchmarks/results/quality; with --quick a folder in the system's "
                         "temporary directory, so that a smoke run never replaces the committed report)")
    ap.add_argument("--cache-dir", type=Path, default=None, help=CACHE_HELP)
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR, help=DATA_HELP)
    ap.add_argument("--seed", type=non_negative_int, default=0, help="seed of the query compositions and subsamples (default %(default)s)")
    ap.add_argument("--model", default=None, metavar="PATH",
                    help="sentence-transformers folder to embed with (default: the bundled all-MiniLM-L6-v2); "
                         "`itlr models install all-mpnet-base-v2` prints mpnet's. Nothing is re-tuned: "
                         "RECOMMENDED is the one selected with MiniLM")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                    help="scoring device (auto: cuda when there is a GPU; the numbers are the same up to rounding)")
    ap.add_argument("--max-docs", default="",
                    help="per-dataset document caps, e.g. reuters=5000,arguana=4000 (default: %s; 0 = all)"
                    % ",".join(f"{k}={v}" for k, v in FULL_DOC_CAP.items() if v))
    ap.add_argument("--dump-queries", type=Path, default=None, metavar="DIR",
                    help="write the subsampled test queries as DIR/<dataset>.jsonl (query_id, text) for an LLM "
                         "translator, then exit without evaluating")
    ap.add_argument("--llm-translations", type=Path, default=None, metavar="DIR",
                    help="add the LLM rows from DIR/<dataset>.logical.arrow and DIR/<dataset>.rewrite.arrow "
                         "(outputs of `itlr translate --translator vllm --mode logical|rewrite`)")
    ap.add_argument("--llm-max-queries", type=int, default=100, metavar="N",
                    help="--dump-queries: at most N test queries per dataset, stratified by family (default 100)")
    args = ap.parse_args(argv)
    if args.out is None:   # a smoke run's noisy numbers go elsewhere than the committed report
        args.out = (Path(tempfile.gettempdir()) / "itlr-quality-quick" if args.quick
                    else ROOT / "benchmarks" / "results" / "quality")
    args.cache_dir = args.cache_dir or cache_dir()
    check_writable(ap, args.dump_queries or args.out, "--dump-queries" if args.dump_queries else "--out")
    if args.dump_queries and args.llm_translations:
        ap.error("--dump-queries and --llm-translations are separate steps")
    if args.llm_max_queries <= 0:
        ap.error("--llm-max-queries must be positive")
    if args.llm_translations and not args.llm_translations.is_dir():
        ap.error(f"--llm-translations: folder not found: {args.llm_translations}")
    caps = dict(FULL_DOC_CAP)
    for part in filter(None, (p.strip() for p in args.max_docs.split(","))):
        k, sep, v = part.partition("=")
        if not (sep and k.strip() and v.strip().isdigit()):
            ap.error(f"--max-docs: {part!r}: expected NAME=COUNT with a count of 0 or more (0 = all), "
                     "e.g. reuters=5000,arguana=4000")
        caps[k.strip().lower()] = int(v) or None
    args.max_docs = caps
    names, args.dataset_dirs = [], {}
    for entry in (d.strip() for d in args.datasets.split(",") if d.strip()):
        if entry.lower() in DATASETS:
            names.append(entry.lower())
        elif Path(entry).is_dir():   # a BEIR folder of the user's own, named by its folder
            name = re.sub(r"[^a-z0-9_.-]", "_", Path(entry).resolve().name.lower())
            if name in DATASETS or name in args.dataset_dirs:
                ap.error(f"--datasets: folder {entry} has the name {name!r} of another dataset (rename the folder)")
            names.append(name)
            args.dataset_dirs[name] = Path(entry)
        else:
            ap.error(f"--datasets: {entry!r} is neither one of {', '.join(DATASETS)} nor a folder")
    unknown = sorted(set(caps) - set(DATASETS) - set(names))
    if unknown:
        ap.error(f"--max-docs: no dataset named {', '.join(map(repr, unknown))} (datasets: {', '.join(names)})")
    vars(args).update(query_settings(args.quick))
    if not args.data_dir.is_dir() and set(names) - set(args.dataset_dirs):
        print(f"data folder not found: {args.data_dir}", file=sys.stderr)
        return 2
    from benchmarks.quality.report import display_path, write_report

    t0 = time.time()
    if args.model and not Path(args.model).is_dir():
        print(f"--model: folder not found: {args.model}", file=sys.stderr)
        return 2
    encoder = qdata.CachedEncoder(args.cache_dir, model=args.model)
    if args.dump_queries:
        return dump_llm_queries(names, args, encoder)
    from itlr_gpu.cpuinfo import cpu_name
    from itlr_gpu.scoring import RECOMMENDED
    from itlr_gpu.translate.rules import RULES_VERSION

    out = {"settings": {"datasets": names, "dataset_dirs": {n: str(d) for n, d in args.dataset_dirs.items()},
                        "machine": f"{cpu_name()}, {os.cpu_count()} cores", "rules": RULES_VERSION,
                        "quick": args.quick, "seed": args.seed, "dev_seed": args.seed + 1,
                        "configs": args.config,
                        "recommended": str(RECOMMENDED),
                        "model": encoder.name, "device": args.device, "doc_max_tokens": qdata.DOC_MAX_TOKENS,
                        "per_template": args.per_template, "chain_per": args.chain_per,
                        "per_family": args.per_family, "dev_per_family": args.dev_per_family, "min_label_docs": args.min_label_docs,
                        "min_answers": args.min_answers, "max_frac": args.max_frac, "neighbours": args.neighbours,
                        "k": 10, "max_docs": caps if not args.quick else None,
                        "llm_translations": display_path(args.llm_translations) if args.llm_translations else None,
                        "llm_max_queries": args.llm_max_queries},
           "paper": PAPER, "datasets": {}}
    # A corpus another process is embedding right now (shared cache) is evaluated last.
    queue = list(names)
    deferred: set[str] = set()
    while queue:
        name = queue.pop(0)
        if name not in deferred and queue:
            corpus, _ = load_corpus(name, args)
            if encoder.busy(encoder.corpus_path(name, corpus.doc_ids, corpus.texts)):
                log(f"{name}: being embedded by another process; evaluated later")
                deferred.add(name)
                queue.append(name)
                continue
        evaluate_dataset(name, args, encoder, out)
    out["datasets"] = {n: out["datasets"][n] for n in names}
    if "reuters" in names and not args.quick:
        out["exclusion"] = exclusion_check(args, encoder, *candidate_configs(args))
    out["selected"] = select_config(out)
    out["seconds"] = round(time.time() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = args.out / "results.json.tmp"
    tmp.write_text(json.dumps(out, indent=1, default=str))
    os.replace(tmp, args.out / "results.json")
    write_report(out, args.out)
    log(f"wrote {args.out} in {out['seconds']} s (selected on dev: {out['selected']})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
