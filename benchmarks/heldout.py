"""Score a translator on requests written by outside writers; writes benchmarks/results/heldout.{json,md}.

``benchmarks/data/heldout-writer*.jsonl`` hold requests (``id``, ``text``) and their writer's logical form
(``expr``), written by people who had seen neither the labelled set (``tests/data``) nor the rules; the
rules were changed after each file was first scored (docs/translation-rounds.md, "Rules-9", "Rules-10 to
rules-14", "Rules-15"), so today's figures are no longer held out for those changes.  A form counts as right when it is
the same boolean function over the same terms as the writer's (terms compared without case and a leading
"the": ``translate.equivalent``).

    python benchmarks/heldout.py                                  # the rules translator
    python benchmarks/heldout.py --queries heldout.jsonl          # all requests as one query file, then
    itlr translate heldout.jsonl -o out.arrow --translator llamacpp
    python benchmarks/heldout.py --translations out.arrow --label NAME   # forms from any translator
    python benchmarks/heldout.py --translations out.arrow --form llm --files writer17,writer18 --label NAME
                                  # the model's own forms (before the repair), on some writers' files only
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from translate import equivalent  # noqa: E402

from itlr_gpu.io import read_table  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402
from itlr_gpu.query import canonical, parse  # noqa: E402
from itlr_gpu.translate import translate  # noqa: E402
from itlr_gpu.translate.rules import RULES_VERSION  # noqa: E402
from itlr_gpu.translate.rules.tree import _split_shared  # noqa: E402

FILES = sorted((ROOT / "benchmarks" / "data").glob("heldout-*.jsonl"),
               key=lambda p: (len(p.name), p.name))   # writer2 ... writer10
RESULTS = ROOT / "benchmarks" / "results"


def write_queries(out: Path, files: list[Path] = FILES) -> int:
    """The held-out requests of ``files`` as one query file (query_id ``FILE:ID``: the writers' ids repeat)."""
    lines = []
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                lines.append(json.dumps({"query_id": f"{path.stem}:{r['id']}", "text": r["text"]}, ensure_ascii=False))
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(out)
    return len(lines)


def score(rows: list[dict], forms: dict[str, str | None]) -> dict:
    """Right by the writer's label; ``shared``: misses that are the writer's label with a phrase shared by
    alternatives kept with one of them (``"X in A" OR "B"``), which the rules since rules-28 share out
    (``"X" AND ("A" OR "B")``), as writers 2 to 16 were briefed not to."""
    misses, shared = [], 0
    for r in rows:
        want = canonical(parse(r["expr"]))
        got = forms.get(r["id"])
        if got is None or not equivalent(got, want):
            misses.append({"id": r["id"], "text": r["text"], "want": want, "got": got})
            shared += got is not None and equivalent(got, canonical(_split_shared(parse(want), set())))
    return {"n": len(rows), "right": len(rows) - len(misses), "shared": shared, "misses": misses}


def code_span(text: str) -> str:
    """``text`` as one Markdown code span: a --made-by text quoting commands in backticks needs a longer fence."""
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--translations", nargs="*", default=None, metavar="TABLE",
                    help="output tables of `itlr translate` of the file --queries writes (query_id FILE:ID, e.g. "
                         "heldout-writer2:h001); default: run the rules")
    ap.add_argument("--queries", default=None, metavar="OUT.jsonl",
                    help="write the held-out requests (of --files, default every file) as one query file for "
                         "`itlr translate` and stop")
    ap.add_argument("--label", default=None, help="name of the translator in the table (default: rules-N)")
    ap.add_argument("--form", choices=("expr", "llm"), default="expr",
                    help="with --translations: expr (default), the output's form; llm, the model's own form where "
                         "the repair replaced it (llm_expr), i.e. the LLM alone")
    ap.add_argument("--made-by", default=None, metavar="TEXT",
                    help="with --translations: how the tables were made (the `itlr translate` command and the "
                         "machine), written into the report beside this command")
    ap.add_argument("--files", default=None, metavar="NAMES",
                    help="comma-separated writers' files to score (e.g. writer17,writer18; default: every file); the "
                         "rules on chosen files (or with --label) write heldout-LABEL.md, leaving heldout.md whole")
    args = ap.parse_args(argv)
    files = FILES
    if args.files:
        wanted = [f"heldout-{name.strip().removeprefix('heldout-').removesuffix('.jsonl')}.jsonl"
                  for name in args.files.split(",") if name.strip()]
        unknown = sorted(set(wanted) - {p.name for p in FILES})
        if unknown or not wanted:
            ap.error(f"--files: no held-out file {', '.join(unknown) or '(none given)'}; "
                     f"expected names like writer17 (benchmarks/data/heldout-writer17.jsonl)")
        files = [p for p in FILES if p.name in wanted]
    if args.made_by and not args.translations:
        ap.error("--made-by describes --translations tables (the rules' run is this command itself)")
    if args.form == "llm" and not args.translations:
        ap.error("--form llm needs --translations (the rules have no model form)")
    if args.queries:
        n = write_queries(Path(args.queries), files)
        print(f"{n} requests -> {args.queries}")
        return 0
    if args.label is not None and not args.label.strip():
        ap.error("--label: expected a name (an empty one would rewrite heldout.md)")
    label = args.label or (("translations" if args.translations else RULES_VERSION)
                           + (f"-{args.files.replace(',', '-')}" if args.files else ""))
    forms: dict[str, str | None] = {}
    if args.translations:
        for path in args.translations:
            try:
                table = read_table(path)
            except Exception as e:   # noqa: BLE001 -- one line, whatever the reader's error
                ap.error(f"--translations: {path}: cannot read it ({type(e).__name__}: {str(e).splitlines()[0][:160]})")
            missing = [c for c in ("query_id", "expr") if c not in table.column_names]
            if missing:
                ap.error(f"--translations: {path}: no column {', '.join(missing)} (expected `itlr translate` output)")
            exprs = table.column("expr").to_pylist()
            if args.form == "llm" and "llm_expr" in table.column_names:
                exprs = [own if own is not None else e for own, e in zip(table.column("llm_expr").to_pylist(), exprs)]
            forms.update(zip(table.column("query_id").to_pylist(), exprs))
    if args.translations:   # score only the files the tables cover, and each of them whole
        covered = {qid.split(":", 1)[0] for qid in forms if isinstance(qid, str)}
        if not args.files:
            files = [p for p in files if p.stem in covered]
    requests = {path: [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
                for path in files}
    if args.translations:
        for path in files:
            ids = [r["id"] for r in requests[path]]
            lost = [i for i in ids if f"{path.stem}:{i}" not in forms]
            if lost:
                ap.error(f"--translations: {len(lost)} of {len(ids)} requests of {path.name} have no row (first "
                         f"{path.stem}:{lost[0]}); translate the file written by --queries for these --files")
        if not files:
            ap.error("--translations: no held-out request has a row (query_id FILE:ID, as --queries writes them)")
    command = ("python benchmarks/heldout.py"
               + (" --translations " + " ".join(Path(t).name for t in args.translations)
                  + (f" --form {args.form}" if args.form != "expr" else "") + f" --label {label}"
                  if args.translations else f" --label {shlex.quote(args.label)}" if args.label else "")
               + (f" --files {args.files}" if args.files else "")
               + (f" --made-by {shlex.quote(args.made_by)}" if args.made_by else ""))
    report = {"translator": label, "command": command, "made_by": args.made_by, "files": {}}
    lines = [f"# Held-out requests: {label}", "",
             f"Command: {code_span(command)}", "",
             *([f"Translations made by: {args.made_by}", ""] if args.made_by else []),
             "Right: the same boolean function over the same terms as the writer's label. Shared out: misses that "
             "are the label with its phrase shared by alternatives shared out (`\"X\" AND (\"A\" OR \"B\")` for "
             "`\"X in A\" OR \"B\"`; since rules-30 also a noun after names: `(\"A\" OR \"B\") AND \"X\"` for "
             "`\"A\" OR \"B X\"`), the reading since rules-28; writers 2 to 16 were briefed to keep such a "
             "phrase with the nearer alternative, writers 17 to 21 to share it out.", "",
             "| file | requests | right (same boolean function, same terms) | misses: shared out |",
             "| --- | ---: | ---: | ---: |"]
    for path in files:
        rows = requests[path]
        if args.translations is None:
            done = translate([r["text"] for r in rows], translator="rules")
            file_forms = {r["id"]: t.expr for r, t in zip(rows, done)}
        else:
            file_forms = {r["id"]: forms.get(f"{path.stem}:{r['id']}") for r in rows}
        result = score(rows, file_forms)
        report["files"][path.name] = result
        lines.append(f"| {path.name} | {result['n']} | {result['right']} | {result['shared']} |")
        print(f"{path.name}: {result['right']}/{result['n']} (+{result['shared']} shared out)")
    lines += ["", "## Misses", ""]
    for name, result in report["files"].items():
        for m in result["misses"]:
            lines.append(f"- [{name}] `{m['text']}`: want `{m['want']}`, got `{m['got']}`")
    # heldout.md is the rules on every file; a subset or a named run gets its own report beside it
    whole = args.translations is None and not args.files and not args.label
    suffix = "" if whole else "-" + label.replace("/", "-").replace(":", "-")
    with atomic_file(RESULTS / f"heldout{suffix}.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(report, indent=1, ensure_ascii=False) + "\n")
    with atomic_file(RESULTS / f"heldout{suffix}.md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
