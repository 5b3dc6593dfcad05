#!/usr/bin/env python
"""Seed robustness of the quality targets: the shipped configuration vs the Baseline on other query sets.

    python benchmarks/quality_seeds.py [--seeds 0,1,2,3,4] [--datasets reuters,scifact,nfcorpus,arguana]
                                       [--out benchmarks/results/quality/seeds]

``benchmarks/quality.py`` selects and reports on one seed.  Its composed queries are a random draw, so a
family's result (about 100 queries) moves with the seed.  This script rebuilds the *test* query sets of
``benchmarks/quality.py`` for several seeds (each seed: a different dev/test split of the original
queries and different compositions; Reuters: different labels per template) and scores, for each, the
Baseline, the paper's ops and ``itlr_gpu.scoring.RECOMMENDED`` (fixed in advance: nothing is selected
here).  Writes ``seeds.json``, ``seeds.md`` (per family: recommended - Baseline per seed, with the
95% paired-bootstrap interval) and ``seeds.png``.  Document embeddings come from the same cache.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks import CACHE_HELP, DATA_DIR, DATA_HELP, FOLDER_HELP, cache_dir, check_writable  # noqa: E402
from benchmarks.quality import data as qdata  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402


def _quality_script():
    """benchmarks/quality.py (its name is shadowed by the benchmarks/quality/ package)."""
    spec = importlib.util.spec_from_file_location("quality_script", ROOT / "benchmarks" / "quality.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


METHODS = ("baseline", "gold|paper (raw)", "gold|recommended")


def families(name: str, qs: list) -> dict[str, list[str]]:
    """The target's families: negation counts on Reuters, composition families on the real data."""
    out: dict[str, list[str]] = {}
    for q in qs:
        key = f"{q.n_neg} negations" if name == "reuters" else q.family
        out.setdefault(key, []).append(q.query_id)
    return dict(sorted(out.items()))


def evaluate(Q, name: str, seed: int, encoder, args) -> dict:
    from itlr_gpu.query import Term
    from itlr_gpu.index import Index
    from itlr_gpu.scoring import RECOMMENDED

    qargs = argparse.Namespace(**vars(args.qargs), seed=seed)
    corpus, _ = Q.load_corpus(name, qargs)
    emb = encoder.encode_corpus(name, corpus.doc_ids, corpus.texts)
    index = Index.from_arrays(emb, corpus.doc_ids, dtype="float32", model=encoder.name)
    qs = Q.build_queries(name, corpus, encoder, qargs)["test"]
    runner = Q.Runner(index, encoder, device=args.device)
    whole = [q.text for q in qs]
    gold = [q.ast for q in qs]
    per_q = {"baseline": runner.run(qs, [Term(t) for t in whole], whole=whole),
             "gold|paper (raw)": runner.run(qs, gold, whole=whole),
             "gold|recommended": runner.run(qs, gold, options=RECOMMENDED, whole=whole)}
    cis = Q.paired_cis(qs, per_q["gold|recommended"], per_q["baseline"], seed)
    cis = ({f"{n} negations": v for n, v in cis["by_neg"].items()} if name == "reuters" else cis["by_family"])
    fams = {}
    for fam, ids in families(name, qs).items():
        m = {k: float(np.mean([per_q[k][i] for i in ids])) for k in METHODS}
        delta, lo, hi = cis[fam]
        fams[fam] = {"n": len(ids), **m, "delta": delta, "ci": [lo, hi]}
    overall = {k: float(np.mean(list(per_q[k].values()))) for k in METHODS}
    return {"n": len(qs), "overall": overall, "families": fams}


def write_markdown(out: dict, path: Path, command: str) -> None:
    seeds = out["settings"]["seeds"]
    L = ["# Seed robustness of the quality targets\n",
         f"Produced by `{command}` ({out['settings']['seconds']:.0f} s). For each seed, the *test* query set of "
         "`benchmarks/quality.py --seed S` (a different dev/test split of the original queries and different "
         "compositions; Reuters: different labels per template) scored with the Baseline and with "
         f"`RECOMMENDED` = `{out['settings']['recommended']}`, fixed in advance (no selection here). Cells: "
         "recommended - Baseline nDCG@10 with its 95% paired-bootstrap interval; **bold** where the mean is below 0.\n"]
    if out["settings"].get("machine"):   # reports before this line named the machine in a note by hand
        L.append(f"Machine: {out['settings']['machine']}; scores are exact, so the table does not depend on it "
                 "beyond float rounding.\n")
    for name, per_seed in out["datasets"].items():
        L.append(f"## {name}\n")
        fams = sorted({f for r in per_seed.values() for f in r["families"]})
        head = ["family"] + [f"seed {s}" for s in seeds] + ["seeds >= Baseline", "mean"]
        L.append("| " + " | ".join(head) + " |")
        L.append("|" + "---|" * len(head))
        for fam in fams + ["overall"]:
            cells, ds = [], []
            for s in seeds:
                r = per_seed[str(s)]
                if fam == "overall":
                    d = r["overall"]["gold|recommended"] - r["overall"]["baseline"]
                    cells.append(f"{d:+.3f} (n={r['n']})")
                elif fam in r["families"]:
                    x = r["families"][fam]
                    d = x["delta"]
                    txt = f"{d:+.3f} [{x['ci'][0]:+.3f}, {x['ci'][1]:+.3f}] (n={x['n']})"
                    cells.append(f"**{txt}**" if d < 0 else txt)
                else:
                    cells.append("-")
                    continue
                ds.append(d)
            label = f"`{fam}`" if name != "reuters" and fam != "overall" else fam
            L.append("| " + " | ".join([label] + cells + [f"{sum(d >= 0 for d in ds)}/{len(ds)}",
                                                          f"{np.mean(ds):+.3f}"]) + " |")
        L.append("")
    with atomic_file(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L) + "\n")


def plot(out: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(out["datasets"])
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        per_seed = out["datasets"][name]
        fams = sorted({f for r in per_seed.values() for f in r["families"]})
        seeds = out["settings"]["seeds"]
        for j, s in enumerate(seeds):
            r = per_seed[str(s)]["families"]
            off = (j - (len(seeds) - 1) / 2) * 0.6 / len(seeds)
            ys = [i + off for i, f in enumerate(fams) if f in r]
            xs = [r[f]["delta"] for f in fams if f in r]
            err = np.array([[r[f]["delta"] - r[f]["ci"][0], r[f]["ci"][1] - r[f]["delta"]] for f in fams if f in r]).T
            ax.errorbar(xs, ys, xerr=err, fmt="o", ms=3, lw=0.8, label=f"seed {s}")
        ax.axvline(0, color="k", lw=0.8)
        ax.set_yticks(range(len(fams)), fams, fontsize=7)
        ax.set_title(name)
        ax.set_xlabel("recommended - Baseline (nDCG@10)")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, path)
    plt.close(fig)


def main(argv=None) -> int:
    Q = _quality_script()
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds, one quality.py run each (default %(default)s)")
    ap.add_argument("--datasets", default=",".join(Q.DATASETS), help="comma-separated datasets (default %(default)s)")
    ap.add_argument("--out", type=Path, default=None,
                    help=FOLDER_HELP + " (default: benchmarks/results/quality/seeds; with --quick a folder in the "
                         "system's temporary directory, so that a smoke run never replaces the committed table)")
    ap.add_argument("--cache-dir", type=Path, default=None, help=CACHE_HELP)
    ap.add_argument("--data-dir", type=Path, default=DATA_DIR, help=DATA_HELP)
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"),
                    help="scoring device (auto: cuda when there is a GPU)")
    ap.add_argument("--quick", action="store_true", help="the small samples of quality.py --quick (CI)")
    args = ap.parse_args(argv)
    if args.out is None:   # a smoke run's noisy numbers go elsewhere than the committed table
        args.out = (Path(tempfile.gettempdir()) / "itlr-quality-seeds-quick" if args.quick
                    else ROOT / "benchmarks" / "results" / "quality" / "seeds")
    args.cache_dir = args.cache_dir or cache_dir()
    check_writable(ap, args.out)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        ap.error(f"--seeds: expected comma-separated integers, got {args.seeds!r}")
    if not seeds:
        ap.error("--seeds: at least one seed")
    if any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        ap.error(f"--seeds {args.seeds}: expected distinct seeds of 0 or more")
    names = [d.strip().lower() for d in args.datasets.split(",") if d.strip()]
    bad = [d for d in names if d not in Q.DATASETS]
    if bad:
        ap.error(f"unknown dataset(s) {bad}; choose from {', '.join(Q.DATASETS)}")
    if not args.data_dir.is_dir():
        print(f"data folder not found: {args.data_dir}", file=sys.stderr)
        return 2
    # the query construction of benchmarks/quality.py (full run, or its --quick samples); only test sets here
    args.qargs = argparse.Namespace(quick=args.quick, max_docs={} if args.quick else dict(Q.FULL_DOC_CAP),
                                    data_dir=args.data_dir, **{**Q.query_settings(args.quick), "chain_per": 0})
    from itlr_gpu.cpuinfo import cpu_name
    from itlr_gpu.scoring import RECOMMENDED
    from tqdm.auto import tqdm

    t0 = time.time()
    encoder = qdata.CachedEncoder(args.cache_dir)
    out = {"settings": {"seeds": seeds, "datasets": names, "recommended": str(RECOMMENDED), "quick": args.quick,
                        "model": encoder.name, "machine": f"{cpu_name()}, {os.cpu_count()} cores"}, "datasets": {}}
    for name in names:
        out["datasets"][name] = {}
        for s in tqdm(seeds, desc=name, unit="seed"):
            out["datasets"][name][str(s)] = evaluate(Q, name, s, encoder, args)
        encoder.save()
    out["settings"]["seconds"] = round(time.time() - t0, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    tmp = args.out / "seeds.json.tmp"
    tmp.write_text(json.dumps(out, indent=1))
    os.replace(tmp, args.out / "seeds.json")
    # the command that reproduces these numbers (folders, which name machine paths, left out)
    command = f"python benchmarks/quality_seeds.py --seeds {','.join(map(str, seeds))} --datasets {','.join(names)}"
    command += " --quick" if args.quick else ""
    md = args.out / "seeds.md"
    write_markdown(out, md.with_suffix(".md.tmp"), command)
    os.replace(md.with_suffix(".md.tmp"), md)
    plot(out, args.out / "seeds.png")
    print(md.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
