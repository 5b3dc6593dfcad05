"""Reuters-21578 (SGML) -> a BEIR folder that every `itlr` command reads.

    python benchmarks/reuters_to_beir.py ../shared/data/reuters21578 -o data/reuters [--min-docs 10]

Writes ``corpus.jsonl`` (``_id`` ``r<NEWID>``, ``text``: the headline, then the body), ``queries.jsonl`` (one query per TOPICS
category with at least ``--min-docs`` articles: ``_id`` the category code, ``text`` its name written out, as the
quality benchmark's query terms are, ``benchmarks/quality/reuters_topics.tsv``) and ``qrels/test.tsv`` (an article
is relevant, grade 1, to each category it is labelled with).  The articles are the quality benchmark's: those
with a body and at least one TOPICS label (``benchmarks/quality/data.py``, ``load_reuters``), files decoded as
latin-1 and SGML entities unescaped.  The folder is written atomically (a temporary sibling, then renamed).

Then, e.g.::

    itlr index data/reuters -o reuters-idx
    itlr search reuters-idx data/reuters/queries.jsonl -o run.arrow -k 100
    itlr eval run.arrow data/reuters/qrels/test.tsv
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from itlr_gpu.errors import InputError  # noqa: E402
from itlr_gpu.output import atomic_dir, check_output_folder  # noqa: E402
from quality.data import load_reuters, load_topic_terms  # noqa: E402


def convert(source: Path, out: Path, min_docs: int = 10) -> dict[str, int]:
    """Write the BEIR folder ``out`` from the Reuters-21578 folder ``source``; returns the counts written."""
    if not any(source.glob("reut2-*.sgm.gz")):
        raise InputError("no reut2-*.sgm.gz files", str(source), "the Reuters-21578 folder (reut2-000.sgm.gz ...)")
    target = check_output_folder(out)
    corpus = load_reuters(source)
    names = load_topic_terms()
    sizes = Counter(t for labels in corpus.labels.values() for t in labels)
    topics = sorted(t for t, n in sizes.items() if n >= min_docs)
    unnamed = [t for t in topics if t not in names]
    if unnamed:
        raise InputError(f"categories without a written-out name: {unnamed}", "benchmarks/quality/reuters_topics.tsv",
                         "a name for every category used as a query")
    with atomic_dir(target) as tmp:
        with open(tmp / "corpus.jsonl", "w", encoding="utf-8") as f:
            for did, text in zip(corpus.doc_ids, corpus.texts):
                f.write(json.dumps({"_id": did, "text": text}, ensure_ascii=False) + "\n")
        with open(tmp / "queries.jsonl", "w", encoding="utf-8") as f:
            for t in topics:
                f.write(json.dumps({"_id": t, "text": names[t]}, ensure_ascii=False) + "\n")
        (tmp / "qrels").mkdir()
        pairs = 0
        with open(tmp / "qrels" / "test.tsv", "w", encoding="utf-8") as f:
            f.write("query-id\tcorpus-id\tscore\n")
            wanted = set(topics)
            for did in corpus.doc_ids:
                for t in sorted(corpus.labels[did] & wanted):
                    f.write(f"{t}\t{did}\t1\n")
                    pairs += 1
    return {"documents": len(corpus.doc_ids), "queries": len(topics), "judgements": pairs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("source", type=Path, nargs="?", default=ROOT.parent / "shared" / "data" / "reuters21578",
                    help="the Reuters-21578 folder (reut2-*.sgm.gz); default: ../shared/data/reuters21578")
    ap.add_argument("-o", "--out", type=Path, required=True, help="the BEIR folder to write (new or empty)")
    ap.add_argument("--min-docs", type=int, default=10,
                    help="articles a category needs to become a query (default %(default)s)")
    args = ap.parse_args(argv)
    if args.min_docs < 1:
        ap.error(f"--min-docs {args.min_docs}: expected an integer >= 1")
    try:
        counts = convert(args.source, args.out, args.min_docs)
    except InputError as e:
        print(f"reuters_to_beir: error: {e}", file=sys.stderr)
        return 1
    print(f"{counts['documents']:,} articles, {counts['queries']:,} queries, {counts['judgements']:,} judgements "
          f"-> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
