#!/usr/bin/env python
"""How much an exclusion excludes: "A AND NOT B" on Reuters-21578, per scoring configuration.

For pairs of TOPICS labels (A, B) that share articles (B related to A: the case where the whole-query
embedding of "A but not B" is pulled toward B, and where a NOT matters), every configuration ranks the
labelled articles for "A AND NOT B" with the labels' terms (``benchmarks/quality/reuters_topics.tsv``),
and the top 10 is judged by the labels:

* ``P@10``: articles labelled A and not B (what the query asks for);
* ``leak@10``: articles labelled B (what it excludes), as a fraction of the 10;
* ``nDCG@10`` with A-and-not-B as the relevant set.

Reference rows: the positive term "A" alone and the whole request "A but not B" embedded as one text (the
dense baseline).  Both measures come from ir_measures (``leak@10`` is P@10 against B's articles).

    python benchmarks/exclusion.py [--pairs 40] [--seed 0] [--data-dir ../shared/data]
    python benchmarks/exclusion.py --max-docs 800 --min-docs 10 --min-answers 5 --pairs 5 --out /tmp/x  # smoke

Writes ``benchmarks/results/exclusion.{json,md,png}``.  Document embeddings are the quality benchmark's
cache (``<cache-dir>/embeddings/<model>/reuters-*.npy``), made on the first run (a few minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import ir_measures  # noqa: E402
from ir_measures import P, nDCG  # noqa: E402

from benchmarks import CACHE_HELP, DATA_DIR, DATA_HELP, TRIAL_HELP, cache_dir, check_stem, default_stem, non_negative_int, positive_int, unit_float  # noqa: E402
from benchmarks.quality import data as qdata  # noqa: E402
from itlr_gpu import Index, RECOMMENDED, ScoreOptions, Term, search  # noqa: E402
from itlr_gpu.bench import machine_info  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402

# (name, query kind, options): "not" = "A AND NOT B", "pos" = "A", "text" = "A but not B" embedded whole
CONFIGS = [
    ("A alone (no exclusion)", "pos", None),
    ("Baseline: 'A but not B' embedded whole", "text", None),
    ("A AND NOT B, the paper's composition", "not", ScoreOptions()),
    ("--calibration equalize", "not", ScoreOptions(calibration="equalize")),
    ("--guard", "not", ScoreOptions(guard=True)),
    ("--recommended", "not", RECOMMENDED),
    ("--recommended --neg-hybrid 0.5 (the earlier recommendation)", "not", RECOMMENDED.override(neg_hybrid=0.5)),
    ("--recommended --neg-hybrid 1", "not", RECOMMENDED.override(neg_hybrid=1.0)),
]


def label_pairs(labels: dict[str, frozenset[str]], terms: dict[str, str], n: int, seed: int, min_docs: int,
                min_overlap: float, min_answers: int) -> list[tuple[str, str]]:
    """Ordered pairs (A, B) of labels with a term each, at least ``min_docs`` articles each, B on at least
    ``min_overlap`` of A's articles (an exclusion that matters) and at least ``min_answers`` articles with A and
    not B; ``n`` of them drawn by ``seed``."""
    count = Counter(t for ts in labels.values() for t in ts)
    shared = Counter((a, b) for ts in labels.values() for a in ts for b in ts if a != b)
    pairs = sorted((a, b) for (a, b), c in shared.items()
                   if a in terms and b in terms and count[a] >= min_docs and count[b] >= min_docs
                   and c >= min_overlap * count[a] and count[a] - c >= min_answers)
    random.Random(seed).shuffle(pairs)
    return pairs[:n]


@dataclass
class ExclusionSet:
    """The labelled Reuters articles, their index and the "A AND NOT B" queries of a set of label pairs."""

    index: Index
    encoder: object
    pairs: list[tuple[str, str]]
    terms: dict[str, str]
    qids: list[str]
    wanted: dict[str, dict[str, int]]     # per query: the articles labelled A and not B
    excluded: dict[str, dict[str, int]]   # per query: the articles labelled B
    texts: list[str]                      # "A but not B": the whole request (dense baseline, hybrid mix)
    queries: dict[str, list]              # per query kind (see CONFIGS)


def sample_corpus(corpus: qdata.Corpus, max_docs: int) -> qdata.Corpus:
    """A fixed random sample of ``max_docs`` articles (independent of ``--seed``, so its embeddings stay cached)."""
    if not max_docs or max_docs >= len(corpus.doc_ids):
        return corpus
    keep = sorted(random.Random(0).sample(range(len(corpus.doc_ids)), max_docs))
    ids = [corpus.doc_ids[i] for i in keep]
    return qdata.Corpus(corpus.name, ids, [corpus.texts[i] for i in keep],
                        labels={d: corpus.labels[d] for d in ids if d in corpus.labels})


def exclusion_set(data_dir: Path, encoder: qdata.CachedEncoder, pairs: int = 40, seed: int = 0, min_docs: int = 40,
                  min_overlap: float = 0.2, min_answers: int = 20, max_docs: int = 0) -> ExclusionSet:
    """Reuters-21578 with a body and labels (all, or a sample of ``max_docs``), embedded by ``encoder`` (cached),
    and ``pairs`` label pairs drawn by ``seed``."""
    corpus = sample_corpus(qdata.load_reuters(data_dir / "reuters21578"), max_docs)
    terms = qdata.load_topic_terms()
    drawn = label_pairs(corpus.labels, terms, pairs, seed, min_docs, min_overlap, min_answers)
    if not drawn:
        raise SystemExit(f"exclusion.py: error: no label pairs meet the thresholds in {len(corpus.doc_ids)} articles "
                         "(lower --min-docs / --min-overlap / --min-answers, or raise --max-docs)")
    docs = encoder.encode_corpus("reuters", corpus.doc_ids, corpus.texts)
    encoder.save()
    qids = [f"{a}-not-{b}" for a, b in drawn]
    texts = [f"{terms[a]} but not {terms[b]}" for a, b in drawn]
    return ExclusionSet(
        index=Index.from_arrays(docs, corpus.doc_ids), encoder=encoder, pairs=drawn, terms=terms, qids=qids,
        wanted={q: {d: 1 for d, ts in corpus.labels.items() if a in ts and b not in ts}
                for q, (a, b) in zip(qids, drawn)},
        excluded={q: {d: 1 for d, ts in corpus.labels.items() if b in ts} for q, (a, b) in zip(qids, drawn)},
        texts=texts,
        queries={"pos": [Term(terms[a]) for a, _ in drawn], "text": [Term(t) for t in texts],
                 "not": [f'"{terms[a]}" AND NOT "{terms[b]}"' for a, b in drawn]})


def measure(xs: ExclusionSet, kind: str, options: ScoreOptions | None) -> dict:
    """P@10 and nDCG@10 of A-and-not-B and leak@10 (B's share of the top 10), means over the pairs."""
    run = search(xs.index, xs.queries[kind], xs.encoder, k=10, query_ids=xs.qids, device="cpu",
                 score_options=options,
                 whole_queries=xs.texts if options is not None and options.hybrid is not None else None)
    ranked: dict[str, dict[str, float]] = {}
    for q, d, s in zip(run.column("query_id").to_pylist(), run.column("doc_id").to_pylist(),
                       run.column("score").to_pylist()):
        ranked.setdefault(q, {})[d] = float(s)
    per: dict[str, list[float]] = {}
    for m in ir_measures.iter_calc([P @ 10, nDCG @ 10], xs.wanted, ranked):
        per.setdefault(str(m.measure), []).append(m.value)
    leak = [m.value for m in ir_measures.iter_calc([P @ 10], xs.excluded, ranked)]
    return {"P@10": statistics.mean(per["P@10"]), "nDCG@10": statistics.mean(per["nDCG@10"]),
            "leak@10": statistics.mean(leak), "pairs": len(leak)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=positive_int, default=40, help="label pairs (A, B) drawn for 'A AND NOT B' (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the pair draw (default %(default)s)")
    ap.add_argument("--min-docs", type=positive_int, default=40, help="articles per label, at least")
    ap.add_argument("--min-overlap", type=unit_float, default=0.2, help="share of A's articles that are B's too, at least")
    ap.add_argument("--min-answers", type=positive_int, default=20, help="articles with A and not B, at least")
    ap.add_argument("--max-docs", type=non_negative_int, default=0,
                    help="embed a fixed random sample of this many articles, for a quick run (default: all; the "
                         "thresholds apply to the sample)")
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR, help=DATA_HELP)
    ap.add_argument("--cache-dir", type=Path, default=None, help=CACHE_HELP)
    ap.add_argument("--out", type=Path, default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="exclusion"))
    args = ap.parse_args(argv)
    args.out = args.out or Path(default_stem(ap, args, "exclusion", ignore=("data_dir", "cache_dir")))
    args.cache_dir = args.cache_dir or cache_dir()
    check_stem(ap, args.out)
    if not any((args.data_dir / "reuters21578").glob("reut2-*.sgm.gz")):
        ap.error(f"--data-dir {args.data_dir}: no Reuters-21578 files (reuters21578/reut2-*.sgm.gz) there")

    xs = exclusion_set(args.data_dir, qdata.CachedEncoder(args.cache_dir), args.pairs, args.seed, args.min_docs,
                       args.min_overlap, args.min_answers, args.max_docs)
    pairs, terms = xs.pairs, xs.terms
    rows = []
    for name, kind, options in CONFIGS:
        rows.append({"config": name, **measure(xs, kind, options)})
        print(f"{name:<60} P@10 {rows[-1]['P@10']:.3f}  nDCG@10 {rows[-1]['nDCG@10']:.3f}  "
              f"leak@10 {rows[-1]['leak@10']:.3f}", flush=True)

    command = "python benchmarks/exclusion.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    report = {"command": command, "machine": machine_info(), "pairs": [list(p) for p in pairs],
              "thresholds": {"min_docs": args.min_docs, "min_overlap": args.min_overlap,
                             "min_answers": args.min_answers, "seed": args.seed},
              "articles": len(xs.index), "max_docs": args.max_docs or None, "rows": rows}
    lines = ["# How much an exclusion excludes (Reuters-21578, MiniLM)", "",
             f"Command: `{command}`", "",
             f"Machine: {report['machine']['cpu']}, {report['machine']['cores']} cores; exact scores, so the "
             "table does not depend on the machine beyond float rounding.", "",
             *([f"A quick run: a fixed random sample of {len(xs.index):,} articles (--max-docs), not the whole "
                "corpus.", ""] if args.max_docs else []),
             f"{len(pairs)} label pairs (A, B) where B is on at least {args.min_overlap:.0%} of A's articles, each "
             f"label on at least {args.min_docs} articles, at least {args.min_answers} with A and not B; the query is "
             "`\"A\" AND NOT \"B\"` with the labels' terms. P@10 / nDCG@10: articles labelled A and not B in the top "
             "10; leak@10: articles labelled B in the top 10 (ir_measures; mean over pairs).", "",
             "| configuration | P@10 (A, not B) | nDCG@10 | leak@10 (B) |", "|---|---:|---:|---:|"]
    lines += [f"| {r['config']} | {r['P@10']:.3f} | {r['nDCG@10']:.3f} | {r['leak@10']:.3f} |" for r in rows]
    lines += ["", "Pairs: " + ", ".join(f"{terms[a]} / {terms[b]}" for a, b in pairs), ""]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    stem = str(args.out)          # "exclusion-seed0.5" keeps its ".5": the suffixes are appended, not substituted
    with atomic_file(stem + ".json", "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    with atomic_file(stem + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    _plot(rows, Path(stem + ".png"))
    return 0


def _plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3.6))
    names = [r["config"] for r in rows]
    y = range(len(rows))
    ax.barh([i + 0.2 for i in y], [r["P@10"] for r in rows], height=0.4, label="P@10: A and not B")
    ax.barh([i - 0.2 for i in y], [r["leak@10"] for r in rows], height=0.4, label="leak@10: B")
    ax.set_yticks(list(y), names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("\"A AND NOT B\" on Reuters-21578: what the top 10 holds", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    raise SystemExit(main())
