"""Build the LLM prompt's pool of nearest examples from the outside writers' labelled requests.

    python scripts/build_writers_pool.py            # -> itlr_gpu/translate/data/writers.jsonl.gz
    python scripts/build_writers_pool.py --below 137 -o pool-w2-136.jsonl   # writers 2-136 only, for
                                     # `itlr translate --nearest-from` on later writers' sets, held out

Every ``benchmarks/data/heldout-writer*.jsonl`` pair, in writer order, with its form in canonical form (as the
prompt's other examples are written), except a request whose text is one of the labelled set's test split (that
split never enters a prompt).  The shipped file is gzip with no timestamp, so the same inputs give the same bytes
(tests/test_translate_examples.py rebuilds it and compares).
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from itlr_gpu.output import atomic_file  # noqa: E402
from itlr_gpu.query import canonical, parse  # noqa: E402
from itlr_gpu.translate.examples import _same_text_key  # noqa: E402

DEFAULT_OUT = ROOT / "itlr_gpu" / "translate" / "data" / "writers.jsonl.gz"


def _writer_number(path: Path) -> int:
    return int(re.search(r"writer(\d+)", path.name).group(1))


def pool_rows(data: Path = ROOT / "benchmarks" / "data",
              labelled: Path = ROOT / "tests" / "data" / "translation_pairs.jsonl",
              below: int | None = None) -> list[dict]:
    test = {_same_text_key(json.loads(line)["text"])
            for line in labelled.read_text(encoding="utf-8").splitlines()
            if line.strip() and json.loads(line).get("split") == "test"}
    rows = []
    for f in sorted(data.glob("heldout-writer*.jsonl"), key=_writer_number):
        if below is not None and _writer_number(f) >= below:
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if _same_text_key(r["text"]) not in test:
                rows.append({"id": r["id"], "text": r["text"], "expr": canonical(parse(r["expr"]))})
    return rows


def pool_bytes(rows: list[dict], gzipped: bool = True) -> bytes:
    """The pool file's bytes: JSON Lines, gzipped with no timestamp or name (the shipped form) unless not."""
    raw = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if not gzipped:
        return raw
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9, filename="") as gz:
        gz.write(raw)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT,
                    help="the pool file: .jsonl.gz (the shipped form) or .jsonl")
    ap.add_argument("--below", type=int, default=None, metavar="N", help="only writers numbered below N")
    args = ap.parse_args(argv)
    rows = pool_rows(below=args.below)
    data = pool_bytes(rows, gzipped=args.out.name.endswith(".gz"))
    with atomic_file(args.out) as fh:
        fh.write(data)
    print(f"{len(rows):,} pairs -> {args.out} ({len(data):,} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
