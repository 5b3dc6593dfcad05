"""Re-apply the current rules' repair to stored LLM translations (no model needed).

    python benchmarks/quality/repair_translations.py DIR [--datasets scifact,nfcorpus,reuters]

``DIR/<dataset>.logical.arrow`` are ``itlr translate --mode logical`` outputs.  Each row's LLM form is
its ``llm_expr`` where the repair replaced it, else its ``expr``; the current repair
(:func:`itlr_gpu.translate.repair.repair`, with the current rules) is applied to it and the table is
rewritten with ``llm_expr`` and ``repaired`` as ``itlr translate`` writes them.  This is what a rerun of
``benchmarks/quality_llm.sh`` gives when the translation cache holds the model's outputs (the cache keeps
the model's own form; the repair runs after it), so a change of the rules or of the repair is measured on
the same generations.  A row whose LLM form was replaced in a table without ``llm_expr`` (the first
repaired tables) cannot be rebuilt and is refused.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pyarrow as pa

from itlr_gpu.io import read_table, write_table
from itlr_gpu.translate import output_schema
from itlr_gpu.translate.repair import repair


def llm_forms(table: pa.Table) -> list[str | None]:
    """The LLM's own form of every row (None for an error row)."""
    exprs = table.column("expr").to_pylist()
    names = table.column("translator").to_pylist()
    own = table.column("llm_expr").to_pylist() if "llm_expr" in table.column_names else [None] * len(exprs)
    out = []
    for i, (expr, name, mine) in enumerate(zip(exprs, names, own)):
        if mine is not None:
            out.append(mine)
        elif str(name).endswith("+rules"):
            raise SystemExit(f"repair_translations: row {i}: the LLM's form was replaced and not kept (no llm_expr); "
                             "start from the table as the model wrote it")
        else:
            out.append(expr)
    return out


def repaired_table(table: pa.Table) -> tuple[pa.Table, int]:
    """(the table with the current repair applied, the number of forms it replaced)."""
    forms = llm_forms(table)
    texts = table.column("text").to_pylist()
    names = [str(n).removesuffix("+rules") if n is not None else None for n in table.column("translator").to_pylist()]
    errors = table.column("error").to_pylist()
    expr, llm_expr, why, translator = [], [], [], []
    for text, form, name, err in zip(texts, forms, names, errors):
        fixed, found = repair(text, form) if err is None and form is not None else (form, [])
        expr.append(fixed)
        llm_expr.append(form if found else None)
        why.append("; ".join(found) if found else None)
        translator.append(f"{name}+rules" if found else name)
    data = {"query_id": table.column("query_id").to_pylist(), "text": texts, "expr": expr,
            "translator": translator, "error": errors, "llm_expr": llm_expr, "repaired": why}
    return pa.Table.from_pydict(data, schema=output_schema("logical")), sum(w is not None for w in why)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir", type=Path)
    ap.add_argument("--datasets", default=None, help="comma-separated (default: every <dataset>.logical.arrow)")
    args = ap.parse_args(argv)
    names = args.datasets.split(",") if args.datasets else sorted(
        p.name.removesuffix(".logical.arrow") for p in args.dir.glob("*.logical.arrow"))
    for name in names:
        path = args.dir / f"{name}.logical.arrow"
        table, n = repaired_table(read_table(path))
        write_table(table, path)
        print(f"{name}: {n} of {table.num_rows} forms repaired by the rules", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
