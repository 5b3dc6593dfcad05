"""Benchmark the query translators; writes benchmarks/results/translate[-SUFFIX].{json,md}.

For each translator / model:

* accuracy on the labelled set ``tests/data/translation_pairs.jsonl``: canonical forms equal
  up to the order of AND/OR operands, reported on the TEST split (the goal), the dev split,
  and the free-form test cases (long argumentative texts, questions, and/or/not inside
  topic names); parse rate and error rows (every failure must be an error row);
* load time (engine start, after the model is installed);
* with examples from the shipped pool in the prompt (the default), the pool *is* the dev split, so
  dev accuracy is not a held-out figure; ``--split dev-b`` measures prompt settings honestly: the
  requests are half of the dev split and the pool is made of the other half;
* throughput after load: the whole labelled set (or ``--split``) in one ``translate`` call,
  and ``--single N`` of the same requests one call at a time; the ratio is the batching gain.

Runs (the machine's CPU, cores, llama.cpp threads and the load average are recorded; the
translation cache is not used)::

    python benchmarks/translate.py --translator llamacpp --model qwen2.5-coder-1.5b --model qwen2.5-coder-0.5b
    .venv-vllm/bin/python benchmarks/translate.py --translator vllm [--model DIR]   # vLLM on the CPU
    python benchmarks/translate.py --translator rules
    python benchmarks/translate.py --split dev-b --single 0 --examples 40 --suffix select-e40  # prompt selection

llamacpp needs ``pip install 'itlr-gpu[llamacpp]'`` and ``itlr models install NAME``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import TRIAL_FOLDER_HELP, check_writable, default_folder, existing_file, non_negative_int, positive_int  # noqa: E402
from itlr_gpu.errors import InputError  # noqa: E402
from itlr_gpu.output import atomic_file  # noqa: E402
from itlr_gpu.query import parse  # noqa: E402
from itlr_gpu.query.ast import And, Not, Or, Term  # noqa: E402
from itlr_gpu.translate import add_example_arguments, add_repair_argument, add_terms_argument, translate  # noqa: E402

PAIRS = ROOT / "tests" / "data" / "translation_pairs.jsonl"


def dev_half(pair: dict) -> str:
    """"a" or "b": a fixed half of the dev split (by a hash of the id), for choosing prompt
    settings with examples from one half and requests from the other."""
    return "ab"[int(hashlib.sha1(pair["id"].encode()).hexdigest(), 16) % 2]


def load_pairs(split: str = "all") -> list[dict]:
    """The labelled pairs of ``split``: all, test, dev, or dev-a / dev-b (the two halves of dev)."""
    pairs = [json.loads(x) for x in PAIRS.read_text(encoding="utf-8").splitlines() if x.strip()]
    if split in ("dev-a", "dev-b"):
        return [p for p in pairs if p["split"] == "dev" and dev_half(p) == split[-1]]
    return pairs if split == "all" else [p for p in pairs if p["split"] == split]


def unordered(node) -> str:
    """A normal form that ignores the order of AND/OR operands (the accuracy criterion)."""
    if isinstance(node, Term):
        return json.dumps(node.text)
    if isinstance(node, Not):
        return "NOT " + unordered(node.child)
    op = " AND " if isinstance(node, And) else " OR "
    assert isinstance(node, (And, Or))
    return "(" + op.join(sorted(unordered(c) for c in node.children)) + ")"


def same(expr: str | None, want: str) -> bool:
    return expr is not None and unordered(parse(expr)) == unordered(parse(want))


def _term_key(text: str) -> str:
    t = " ".join(text.split()).lower()
    return t[4:] if t.startswith("the ") else t


def _truth(node, env: dict[str, bool]) -> bool:
    if isinstance(node, Term):
        return env[_term_key(node.text)]
    if isinstance(node, Not):
        return not _truth(node.child, env)
    vals = (_truth(c, env) for c in node.children)
    return all(vals) if isinstance(node, And) else any(vals)


def equivalent(expr: str | None, want: str) -> bool:
    """A looser criterion, reported beside the target's: the same boolean function (every
    assignment of the terms, so NOT (a OR b) = NOT a AND NOT b) over the same terms, terms
    compared without case and a leading "the"."""
    if expr is None:
        return False
    got, ref = parse(expr), parse(want)
    from itlr_gpu.query.ast import terms

    names = sorted({_term_key(t) for t in terms(got)})
    if names != sorted({_term_key(t) for t in terms(ref)}) or len(names) > 12:
        return False
    for bits in range(2 ** len(names)):
        env = {n: bool(bits >> i & 1) for i, n in enumerate(names)}
        if _truth(got, env) != _truth(ref, env):
            return False
    return True


def score(pairs: list[dict], rows) -> dict:
    n = len(pairs)
    right = sum(same(r.expr, p["expr"]) for p, r in zip(pairs, rows))
    equiv = sum(equivalent(r.expr, p["expr"]) for p, r in zip(pairs, rows))
    exact = sum(r.expr == p["expr"] for p, r in zip(pairs, rows))
    parsed = sum(r.expr is not None for r in rows)
    return {"n": n, "right": right, "accuracy": right / n if n else None, "exact_order": exact,
            "equivalent": equiv, "equivalent_rate": equiv / n if n else None,
            "parse_rate": parsed / n if n else None, "error_rows": n - parsed,
            "truncated": sum(bool(r.error) and "max_tokens" in r.error for r in rows)}


def subsets(pairs: list[dict], rows) -> dict:
    out = {}
    for name, keep in (("test", lambda p: p["split"] == "test"), ("dev", lambda p: p["split"] == "dev"),
                       ("free_form_test", lambda p: p["split"] == "test" and p["group"].startswith("free-form"))):
        sel = [(p, r) for p, r in zip(pairs, rows) if keep(p)]
        if sel:
            out[name] = score([p for p, _ in sel], [r for _, r in sel])
    return out


def machine() -> dict:
    from itlr_gpu.cpuinfo import cpu_name, simd_flags

    return {"cpu": cpu_name(), "cores": len(os.sched_getaffinity(0)), "simd": simd_flags(),
            "python": platform.python_version()}


def bench(translator: str, model: str | None, pairs: list[dict], single_n: int, opts: dict,
          repair: str = "rules", candidates: int | None = None) -> dict:
    texts = [p["text"] for p in pairs]
    load_before = os.getloadavg()
    t = time.perf_counter()
    if translator == "rules":
        eng = None
        load_s = 0.0
        kw: dict = {}
    else:
        if translator == "llamacpp":
            from itlr_gpu.translate.llamacpp import LlamaCppTranslator as cls
        else:
            from itlr_gpu.translate.llm import VllmTranslator as cls
        if translator == "llamacpp":   # the prompt head's KV cells: saved here, read back by a second engine
            heads = tempfile.TemporaryDirectory(prefix="itlr-bench-heads-")
            opts = opts | {"prefix_dir": heads.name}
        eng = cls(model=model, mode="logical", **opts)
        load_s = time.perf_counter() - t
        kw = {"engine": eng, "cache": False, "batch_size": len(texts), "repair": repair}
        t = time.perf_counter()
        translate(texts[:1], translator=translator, **kw)  # warm-up: first kernels, the shared prefix
        first_s = time.perf_counter() - t
        if candidates is not None:   # llama.cpp: next-best tokens checked before the whole vocabulary is masked
            eng.llm.decoder.candidates = candidates

    t = time.perf_counter()
    rows = translate(texts, translator=translator, **kw)
    batched_s = time.perf_counter() - t
    shown = {k: (f"{len(v)} pairs @{v.fingerprint}" if k == "pool" else v) for k, v in opts.items()}
    res = {"translator": translator, "model": getattr(eng, "model_id", None) or translator, "options": shown,
           "load_s": round(load_s, 2), "requests": len(texts),
           "first_request_s": round(first_s, 2) if eng is not None else None, "batched_s": round(batched_s, 2),
           "batched_req_per_s": len(texts) / batched_s, "scores": subsets(pairs, rows),
           "all": score(pairs, rows)}
    if eng is not None:
        from itlr_gpu.translate.repair import REPAIR_VERSION

        res["repair"] = f"rules-{REPAIR_VERSION}" if repair == "rules" else repair
        res["repaired"] = [{"id": p["id"], "split": p["split"], "text": p["text"][:160], "llm": r.llm_expr,
                            "rules": r.expr, "right": same(r.expr, p["expr"]), "defects": list(r.repaired)}
                           for p, r in zip(pairs, rows) if r.repaired]
        res["prompt_version"] = eng.prompt_version  # e=N: pool examples in the prompt (the pool is the dev split)
    if eng is not None and hasattr(eng.llm, "decoder"):
        res["decoder_stats"] = dict(eng.llm.decoder.stats)
        res["candidates"] = eng.llm.decoder.candidates
        res["threads"] = eng.llm.n_threads
    if single_n and translator != "rules":
        sub = texts[:single_n]
        t = time.perf_counter()
        batched_sub = translate(sub, translator=translator, **(kw | {"batch_size": len(sub)}))
        b = len(sub) / (time.perf_counter() - t)
        t = time.perf_counter()
        ones = [translate([x], translator=translator, **kw)[0] for x in sub]
        s = len(sub) / (time.perf_counter() - t)
        res["throughput"] = {"n": single_n, "batched_req_per_s": b, "one_at_a_time_req_per_s": s, "speedup": b / s,
                             "same_outputs": [r.expr for r in ones] == [r.expr for r in batched_sub]}
    if translator == "llamacpp":   # a new process's start: the head's cells read from disk, not decoded
        eng.llm.close()
        t = time.perf_counter()
        again = cls(model=model, mode="logical", **opts)
        res["second_engine_load_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        translate(texts[:1], translator=translator, **(kw | {"engine": again}))
        res["first_request_head_from_disk_s"] = round(time.perf_counter() - t, 2)
        res["head_tokens_from_disk"] = again.llm.decoder.stats["prefix_loaded"]
        again.llm.close()
        heads.cleanup()
    res["misses"] = misses(pairs, rows)
    if eng is not None:  # every generation, so that a change of the repair can be rescored without the model
        res["generations"] = {p["id"]: (r.llm_expr or r.expr) if r.error is None else f"ERROR {r.error}"
                              for p, r in zip(pairs, rows)}
    res["load_average_before"] = [round(x, 2) for x in load_before]
    res["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return res


def misses(pairs: list[dict], rows) -> list[dict]:
    """The rows whose form is not the label's (up to operand order), as stored in a results JSON."""
    return [{"id": p["id"], "split": p["split"], "text": p["text"][:160], "want": p["expr"],
             "got": r.expr or f"ERROR {r.error}"} for p, r in zip(pairs, rows) if not same(r.expr, p["expr"])]


def _name(run: dict) -> str:
    model = run["model"].split("@")[0]
    return model if model.startswith(run["translator"]) else f"{run['translator']} {model}"


def write_md(doc: dict, path: Path) -> None:
    m = doc["machine"]
    lines = ["# Query translation benchmark", "",
             f"Command: `{doc['command']}`", "",
             f"Machine: {m['cpu']}, {m['cores']} cores ({', '.join(m['simd']) or 'no AVX2'}), Python {m['python']}. "
             "Shared with other jobs while measured: load averages (1/5/15 min) are given per row.", "",
             f"Notes: {doc['note']}" if doc.get("note") else "", "",
             "Rerun on a quiet machine (the whole labelled set in one call, all cores): "
             "`python benchmarks/translate.py --translator llamacpp --model qwen2.5-coder-1.5b "
             "--model qwen2.5-coder-0.5b --split all --single 16`"
             + (" (vLLM: `.venv-vllm/bin/python benchmarks/translate.py --translator vllm --model qwen2.5-coder-0.5b "
                "--split all --single 16 --gpu-memory-utilization 0.25`)" if doc["runs"][0]["translator"] == "vllm"
                else "") + ".", "",
             "Accuracy: the canonical form equal to the label up to the order of AND/OR operands.", "",
             "Equivalent: the same boolean function over the same terms, terms compared without case and a leading "
             "\"the\" (a looser criterion, reported beside the target's).", "",
             "First request: the first call's time, the shared prompt head decoded (a first run) and, for llama.cpp, "
             "read from disk by a second engine (later runs).", "",
             "| translator / model | load s | first request s: head decoded / from disk | requests | batched req/s "
             "| test acc. | test equivalent | test parse "
             "| free-form test | dev acc. | one-at-a-time req/s (n) | batched / one: the same n; the whole set "
             "| load avg before / after |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in doc["runs"]:
        sc = r["scores"]
        te, dv, ff = sc.get("test", {}), sc.get("dev", {}), sc.get("free_form_test", {})
        tp = r.get("throughput")
        one = f"{tp['one_at_a_time_req_per_s']:.2f} ({tp['n']})" if tp else "-"
        ratio = (f"{tp['speedup']:.2f}x; {r['batched_req_per_s'] / tp['one_at_a_time_req_per_s']:.2f}x"
                 if tp else "-")
        dev = f"{dv['accuracy']:.3f}" if dv else "-"
        first = "-" if r.get("first_request_s") is None else f"{r['first_request_s']:.1f}"
        if r.get("first_request_head_from_disk_s") is not None:
            first += f" / {r['first_request_head_from_disk_s']:.1f}"
        lines.append(
            f"| {_name(r)} | {r['load_s']:.1f} | {first} | {r['requests']} | "
            f"{r['batched_req_per_s']:.2f} | {te.get('right', 0)}/{te.get('n', 0)} = {te.get('accuracy') or 0:.3f} | "
            f"{te.get('equivalent', 0)}/{te.get('n', 0)} | "
            f"{te.get('parse_rate') or 0:.3f} | {ff.get('right', 0)}/{ff.get('n', 0)} | "
            f"{dev} | {one} | {ratio} | "
            f"{r['load_average_before'][0]:.1f} / {r['load_average_after'][0]:.1f} |")
    for r in doc["runs"]:
        st = r.get("decoder_stats")
        if st:
            lines += ["", f"{_name(r)}, decoder: {st['generated']} tokens generated, the greedy token rejected by the "
                          f"grammar {st.get('rejected', '-')} times, the whole vocabulary masked "
                          f"{st.get('masked', '-')} times (next-best candidates checked first: "
                          f"{r.get('candidates', 'none, an older decoder')}); {st['prompt_tokens']} prompt tokens, "
                          f"{st['prefix_tokens']} shared-prefix tokens"
                          + (f", {st['group_tokens']} tokens of groups' shared parts" if st.get("group_tokens") else "")]
    for r in doc["runs"]:
        if r["translator"] == "rules":
            continue
        fixed = r.get("repaired")
        if fixed is not None:
            right = sum(x["right"] for x in fixed)
            lines += ["", f"## {_name(r)}: forms repaired by the rules ({r.get('repair')}): {len(fixed)}, "
                          f"{right} of them right after the repair", ""]
            lines += [f"- [{x['split']}] `{x['text']}`: `{x['llm']}` -> `{x['rules']}` "
                      f"({'right' if x['right'] else 'wrong'}; {'; '.join(x['defects'])})" for x in fixed[:40]]
        for split in ("test", "dev"):
            missed = [x for x in r["misses"] if x["split"] == split]
            if not missed:
                continue
            lines += ["", f"## Misses of {_name(r)} on the {split} split ({len(missed)}, at most 40 shown)", ""]
            for x in missed[:40]:
                lines.append(f"- `{x['text']}` -> `{x['got']}` (want `{x['want']}`)")
    with atomic_file(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--translator", choices=("rules", "vllm", "llamacpp"), default="llamacpp",
                    help="translator measured (default %(default)s)")
    ap.add_argument("--model", action="append", default=None,
                    help="registry name, GGUF file or HF folder; repeat for several (default: the translator's)")
    ap.add_argument("--split", choices=("all", "test", "dev", "dev-b"), default="all",
                    help="requests translated in the one batched call (accuracy is reported per split); dev-b: "
                         "half of the dev split, with the example pool made of the other half (prompt selection)")
    ap.add_argument("--single", type=non_negative_int, default=16, help="requests for the one-at-a-time comparison")
    ap.add_argument("--max-tokens", type=positive_int, default=96, help="generated tokens per request, at most (default %(default)s)")
    ap.add_argument("--parallel", type=positive_int, default=None, help="llamacpp: sequences decoded together")
    ap.add_argument("--threads", type=positive_int, default=None, help="llamacpp: threads")
    ap.add_argument("--candidates", type=int, default=None,
                    help="llamacpp: next-best tokens checked one by one when the grammar rejects the greedy "
                         "token, before the whole vocabulary is masked (default 32; 1: mask at once)")
    add_example_arguments(ap)  # shared examples from the dev split (dev accuracy is then not held out); nearest
    # ones from the writers' pool unless --nearest-from says otherwise
    add_terms_argument(ap)
    add_repair_argument(ap)
    ap.add_argument("--max-model-len", type=positive_int, default=None, help="prompt + generation per request")
    ap.add_argument("--dtype", default=None, help="vllm dtype (default float32 on a CPU)")
    ap.add_argument("--gpu-memory-utilization", type=float, default=None,
                    help="vllm: fraction of accelerator (on a CPU: of host) memory to reserve")
    ap.add_argument("--suffix", default=None, help="results file suffix (default: the translator)")
    ap.add_argument("--out", default=None, help=TRIAL_FOLDER_HELP.format(name="translate"))
    ap.add_argument("--render", metavar="JSON", type=existing_file, help="rewrite the Markdown of a results JSON (rescoring its misses)")
    ap.add_argument("--rescore-repair", action="store_true",
                    help="with --render: apply the current rules and repair (itlr_gpu.translate.repair) to the "
                         "run's LLM generations and write <stem>-rescored.json/.md beside it")
    ap.add_argument("--align", action="store_true",
                    help="with --render: rescore the misses with their terms aligned to the request's words "
                         "(itlr_gpu.translate.spans; for runs made before the translator did it)")
    args = ap.parse_args(argv)
    if args.render:
        if args.rescore_repair:
            return rescore_repair(args.render)
        return render(args.render, args.align)
    for flag in ("rescore_repair", "align"):
        if getattr(args, flag):
            ap.error(f"--{flag.replace('_', '-')} works only with --render JSON")
    args.out = args.out or default_folder(ap, args, "translate", ignore=("translator",))   # (the table's name)
    check_writable(ap, args.out)

    pairs = load_pairs(args.split)
    runs = []
    for model in args.model or [None]:
        opts: dict = {}
        if args.translator != "rules":
            opts["max_tokens"] = args.max_tokens
            opts |= {k: v for k, v in {"examples": args.examples, "nearest": args.nearest, "terms": args.terms,
                                        "max_model_len": args.max_model_len,
                                        "nearest_pool": args.nearest_from,
                                        "nearest_group": args.nearest_group}.items() if v is not None}
            if args.split == "dev-b":
                from itlr_gpu.translate.examples import ExamplePool

                opts["pool"] = ExamplePool([(p["text"], p["expr"]) for p in load_pairs("dev-a")])
        if args.translator == "llamacpp":
            opts |= {k: v for k, v in {"n_seq": args.parallel, "n_threads": args.threads}.items() if v is not None}
        if args.translator == "vllm":
            opts |= {k: v for k, v in {"dtype": args.dtype,
                                        "gpu_memory_utilization": args.gpu_memory_utilization}.items() if v is not None}
        if args.candidates is not None and (args.translator != "llamacpp" or args.candidates < 1):
            ap.error("--candidates takes a positive number, with --translator llamacpp")
        try:
            run = bench(args.translator, model, pairs, args.single, opts, args.repair, args.candidates)
        except InputError as e:   # no model installed, no engine: one line, as itlr's own
            ap.error(str(e))
        runs.append(run)
        print(json.dumps({k: v for k, v in run.items() if k != "misses"}, indent=1), flush=True)
    doc = {"command": "python benchmarks/translate.py " + " ".join(argv if argv is not None else sys.argv[1:]),
           "machine": machine(), "runs": runs}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stem = f"translate-{args.suffix or args.translator}"
    with atomic_file(out / f"{stem}.json", "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    write_md(doc, out / f"{stem}.md")
    print((out / f"{stem}.md").read_text(encoding="utf-8"))


SUBSETS = {"test": lambda x: x["split"] == "test", "dev": lambda x: x["split"] == "dev",
           "free_form_test": lambda x: x["split"] == "test" and x["id"].startswith("f")}
"""Which stored misses belong to each score subset (free-form rows have ids starting with 'f')."""


def render(path: Path, align: bool = False) -> None:
    """Recompute the looser criterion from the stored misses (the rest is kept) and rewrite the Markdown.

    ``align``: first align each miss's terms with its request (what the translator does since prompt
    p3) and count the misses that become right; rows that were right stay right (a label's terms are
    the request's words with their case and leading article, so alignment leaves them unchanged)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if align:
        from itlr_gpu.query import canonical
        from itlr_gpu.translate.spans import align_terms

        texts = {p["id"]: p["text"] for p in load_pairs()}
        for run in doc["runs"]:
            fixed = []
            for x in run["misses"]:
                if not x["got"].startswith("ERROR"):
                    x["got"] = canonical(align_terms(parse(x["got"]), texts[x["id"]]))
                if same(x["got"], x["want"]):
                    fixed.append(x)
            run["misses"] = [x for x in run["misses"] if x not in fixed]
            for name, sc in run["scores"].items():
                sc["right"] += sum(1 for x in fixed if SUBSETS[name](x))
                sc["accuracy"] = sc["right"] / sc["n"] if sc["n"] else None
        doc["command"] += "  (rescored: `python benchmarks/translate.py --render JSON --align`)"
    for run in doc["runs"]:
        for name, sc in run["scores"].items():
            missed = [x for x in run["misses"] if SUBSETS[name](x)]
            rescued = sum(not x["got"].startswith("ERROR") and equivalent(x["got"], x["want"]) for x in missed)
            sc["equivalent"] = sc["right"] + rescued
            sc["equivalent_rate"] = sc["equivalent"] / sc["n"]
    with atomic_file(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    write_md(doc, path.with_suffix(".md"))
    print(path.with_suffix(".md").read_text(encoding="utf-8"))


def generations(run: dict, pairs: list[dict]) -> tuple[dict[str, str], str]:
    """Each request's LLM form in a stored run, and how it was obtained.

    Runs since the ``generations`` field store them.  For older runs they are rebuilt: a repaired
    row's LLM form is stored, a miss's form is the one it got, and every other row was right, so its
    LLM form equals the label up to the order of AND / OR operands (which no repair check reads)."""
    if "generations" in run:
        return dict(run["generations"]), "stored generations"
    forms = {p["id"]: p["expr"] for p in pairs}
    forms.update({x["id"]: x["got"] for x in run["misses"]})
    forms.update({x["id"]: x["llm"] for x in run.get("repaired", [])})
    return forms, "generations rebuilt from the stored misses and repairs (right rows: the label)"


def rescore_repair(path: Path) -> None:
    """Rescore a run's LLM generations with the current rules and repair: accuracy, repairs, misses."""
    from types import SimpleNamespace

    from itlr_gpu.translate.repair import REPAIR_VERSION, repair
    from itlr_gpu.translate.rules import RULES_VERSION

    doc = json.loads(path.read_text(encoding="utf-8"))
    pairs = load_pairs()
    by_id = {p["id"]: p for p in pairs}
    for run in doc["runs"]:
        forms, how = generations(run, pairs)
        sel = [by_id[i] for i in forms if i in by_id]
        rows, repaired = [], []
        for p in sel:
            form = forms[p["id"]]
            if form.startswith("ERROR"):
                rows.append(SimpleNamespace(expr=None, error=form[6:]))
                continue
            fixed, found = repair(p["text"], form)
            rows.append(SimpleNamespace(expr=fixed, error=None))
            if found:
                repaired.append({"id": p["id"], "split": p["split"], "text": p["text"][:160], "llm": form,
                                 "rules": fixed, "right": same(fixed, p["expr"]), "defects": found})
        run["scores"], run["all"] = subsets(sel, rows), score(sel, rows)
        run["repair"] = f"{RULES_VERSION}-{REPAIR_VERSION}"
        run["repaired"] = repaired
        run["misses"] = misses(sel, rows)
        run["generations"] = forms
        run["rescored_from"] = how
    doc["command"] += (f"  (rescored with {RULES_VERSION} / repair {REPAIR_VERSION}: "
                       f"`python benchmarks/translate.py --render {display(path)} --rescore-repair`)")
    doc["note"] = ((doc.get("note") or "") + " Rescored without the model: accuracy, repairs and misses come from "
                   "this run's LLM generations (" + how + ") with the current rules and repair; load time and "
                   "throughput are the original run's.").strip()
    out = path.with_name(path.stem + "-rescored.json")
    with atomic_file(out, "w", encoding="utf-8") as f:
        f.write(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    write_md(doc, out.with_suffix(".md"))
    print(out.with_suffix(".md").read_text(encoding="utf-8"))


def display(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    main()
