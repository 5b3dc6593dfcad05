#!/usr/bin/env python
"""The demo's table over seeds and encoder settings: does the baseline's collapse with negations hold?

``itlr demo`` prints nDCG@10 by number of negations for one seed and the encoder ``auto`` picks.  This script
runs the same demo (:func:`itlr_gpu.demo.run.run_demo`: 400 generated documents, three-term queries from the 32
templates, exact answers) for several seeds and encoder settings and tabulates baseline (the whole query
embedded), ITLR (the logical form) and ITLR with ``--recommended``, per number of negations and overall.

    python benchmarks/demo.py [--seeds 0,1,2,3,4] [--encoders auto,torch-fp32]

Writes ``benchmarks/results/demo.{json,md}`` with the default settings (other settings: a stem in the system's
temporary folder, ``--out`` to choose).  Scores are exact up to the encoder's arithmetic: the table depends on
the machine only through the encoder settings ``auto`` picks there, which each row names.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import TRIAL_HELP, check_stem, default_stem  # noqa: E402
from itlr_gpu.bench import machine_info  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402

ENCODERS = {"auto": {}, "torch-fp32": {"backend": "torch", "precision": "fp32"},
            "onnx-int8": {"backend": "onnx", "precision": "int8"}, "torch-bf16": {"backend": "torch", "precision": "bf16"}}


def encoder_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENCODERS]
    if unknown or not names:
        named = ", ".join(unknown) if unknown else repr(text)
        raise argparse.ArgumentTypeError(f"unknown encoder setting(s) {named}; expected "
                                         f"comma-separated names from {', '.join(ENCODERS)}")
    return names


def seed_list(text: str) -> list[int]:
    try:
        seeds = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integer seeds, got {text!r}") from None
    if not seeds or any(s < 0 for s in seeds):
        raise argparse.ArgumentTypeError(f"expected comma-separated seeds of 0 or more, got {text!r}")
    return seeds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=seed_list, default=[0, 1, 2, 3, 4], help="demo seeds (default 0,1,2,3,4)")
    ap.add_argument("--encoders", type=encoder_list, default=["auto", "torch-fp32"],
                    help=f"encoder settings among {', '.join(ENCODERS)} (default auto,torch-fp32)")
    ap.add_argument("--docs", type=int, default=400, help="documents per demo corpus (default %(default)s)")
    ap.add_argument("--out", type=Path, default=None,
                    help="file stem of the table written: STEM.md and STEM.json" + TRIAL_HELP.format(name="demo"))
    args = ap.parse_args(argv)
    if args.docs < 2:
        ap.error(f"--docs {args.docs}: expected at least 2 documents")
    args.out = args.out or Path(default_stem(ap, args, "demo"))
    check_stem(ap, args.out)

    from itlr_gpu.demo.run import run_demo
    from itlr_gpu.encoders import SentenceTransformerEncoder

    results = []
    for name in args.encoders:
        encoder = SentenceTransformerEncoder(**ENCODERS[name])
        for seed in args.seeds:
            out = run_demo(n_docs=args.docs, seed=seed, encoder=encoder, print_fn=io.StringIO().write)
            settings = out["encoder"]
            results.append({"encoder": name, "settings": settings, "seed": seed, "queries": out["queries"],
                            "rows": out["rows"], "overall": out["overall"]})
            o = out["overall"]
            print(f"{name:<11} seed {seed}: baseline {o['baseline']:.3f}  ITLR {o['itlr']:.3f}  "
                  f"ITLR --recommended {o['itlr+']:.3f}  ({settings.get('backend')} {settings.get('precision')})",
                  flush=True)

    command = "python benchmarks/demo.py" + "".join(f" {a}" for a in (argv if argv is not None else sys.argv[1:]))
    machine = machine_info()
    lines = ["# The demo over seeds and encoder settings: nDCG@10 by number of negations", "",
             f"Command: `{command}`", "",
             f"Machine: {machine['cpu']}, {machine['cores']} cores. {args.docs} generated documents per seed; "
             "three-term queries from the 32 templates with exact answers (`itlr demo`'s). Baseline: the query's "
             "natural-language rendering embedded whole; ITLR: its logical form (ops product,sum,one_minus); "
             "ITLR+: with `--recommended`.", ""]
    for name in args.encoders:
        mine = [r for r in results if r["encoder"] == name]
        s = mine[0]["settings"]
        lines += [f"## Encoder `{name}` ({s.get('backend')} {s.get('precision')}, max length {s.get('max_length')})",
                  "", "| seed | queries | baseline | ITLR | ITLR+ | baseline at 0 / 1 / 2 / 3 negations | "
                  "ITLR at 0 / 1 / 2 / 3 negations |", "|---:|---:|---:|---:|---:|---|---|"]
        for r in mine:
            by = {row["negations"]: row for row in r["rows"]}
            cell = lambda key: " / ".join(f"{by[n][key]:.3f}" if n in by else "-" for n in range(4))  # noqa: E731
            o = r["overall"]
            lines.append(f"| {r['seed']} | {r['queries']} | {o['baseline']:.3f} | {o['itlr']:.3f} | {o['itlr+']:.3f} "
                         f"| {cell('baseline')} | {cell('itlr')} |")
        med = {k: statistics.median(r["overall"][k] for r in mine) for k in ("baseline", "itlr", "itlr+")}
        lines += ["", f"Median over the {len(mine)} seeds: baseline {med['baseline']:.3f}, ITLR {med['itlr']:.3f}, "
                  f"ITLR+ {med['itlr+']:.3f}; smallest gain of ITLR over the baseline "
                  f"{min(r['overall']['itlr'] - r['overall']['baseline'] for r in mine):+.3f}.", ""]
    report = {"command": command, "machine": machine, "docs": args.docs, "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    stem = str(args.out)
    with atomic_file(stem + ".json", "w", encoding="utf-8") as f:
        json.dump(report, f, indent=1)
    with atomic_file(stem + ".md", "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    print(f"-> {stem}.md, {stem}.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
