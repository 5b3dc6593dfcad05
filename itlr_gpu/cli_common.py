"""Helpers shared by the ``itlr`` subcommands (:mod:`itlr_gpu.cli` and :mod:`itlr_gpu.scale.cli`).

* argparse ``type=`` checks for option values, so that a bad value (``-k 0``,
  ``--ops foo``, ``--memory-cap abc``, ``--chunk-size -1``) is a usage error
  (exit 2) before any file is read or any index is loaded;
* the output check, the query encoder, the model an index was built with, and
  the query list of a query table;
* the scoring options (``--recommended``, ``--hybrid``, ...) that ``itlr search``
  and ``itlr rerank`` share, and the whole-query texts the hybrid embeds.

Imports are light; the heavy modules load inside the functions.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import InputError, UsageError
from .validate import plain_float, plain_int

__all__ = ["positive_int", "non_negative_int", "int_in", "ops_spec", "device_spec", "byte_size", "unit_float", "fraction", "measure_list",
           "check_output", "make_encoder", "check_encoder", "max_length", "query_encoder", "index_model_path", "queries_from_table", "DEFAULT_OPS",
           "add_score_arguments", "score_options", "whole_texts", "add_fallback_argument", "fallback_list",
           "report_fallback"]

DEFAULT_OPS = "product,sum,one_minus"
QUERIES_HELP = ".jsonl/.tsv/.csv (each may be gzipped)/.parquet/.arrow with query_id and expr and/or text"
MAX_INT = 2**62  # beyond any count, size or k that fits the machine; keeps values inside int64 everywhere


def _int(text: str) -> int:
    """ASCII digits with an optional sign, as the run and qrels readers take them (``int`` also takes "1_000"
    and other scripts' digits)."""
    try:
        return plain_int(text.strip())
    except (ValueError, AttributeError):
        raise argparse.ArgumentTypeError(f"invalid integer: {text!r}") from None


def positive_int(text: str) -> int:
    """``type=`` for counts and sizes: an integer >= 1."""
    value = _int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {value}")
    return _at_most_max(value, 1)


def non_negative_int(text: str) -> int:
    value = _int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value}")
    return _at_most_max(value, 0)


def int_in(least: int, most: int, why: str) -> Any:
    """``type=`` for an integer in ``least..most``; ``why`` says what the upper limit protects."""
    def check(text: str) -> int:
        value = _int(text)
        if not least <= value <= most:
            raise argparse.ArgumentTypeError(f"{value} is out of range (expected an integer from {least} to "
                                             f"{most:,}: {why})")
        return value
    return check


def _at_most_max(value: int, least: int) -> int:
    if value > MAX_INT:
        raise argparse.ArgumentTypeError(f"{value} is too large (expected an integer from {least} to 2**62)")
    return value


def ops_spec(text: str) -> str:
    """``type=`` for ``--ops``: three known families AND,OR,NOT; returned as given (validated)."""
    from .ops import Ops

    try:
        Ops.parse(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(f"{text!r}: {e.what} (expected {e.expected})") from None
    return text


def byte_size(text: str) -> str:
    """``type=`` for ``--memory-cap``: a size such as 512MiB or 2GiB; returned as given (validated)."""
    from .scale.shards import parse_bytes

    try:
        parse_bytes(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(f"{e.what} (expected {e.expected})") from None
    return text


def _float(text: str) -> float:
    try:
        value = plain_float(text.strip())
    except (ValueError, AttributeError):
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"must be a finite number, got {text!r}")
    return value


def non_negative_float(text: str) -> float:
    """``type=`` for durations and budgets: a finite number, zero or more."""
    value = _float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, got {value}")
    return value


def unit_float(text: str) -> float:
    """``type=`` for mixing weights: a number in [0, 1]."""
    value = _float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in [0, 1], got {value}")
    return value


def fraction(text: str) -> float:
    """``type=`` for shares of memory: a number in (0, 1]."""
    value = _float(text)
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in (0, 1], got {value}")
    return value


def _top_level_split(text: str, sep: str = ",") -> list[str]:
    """``text`` split at ``sep`` outside brackets: "nDCG(gains={0:0,1:5})@10,R@100" is two measures."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}" and depth > 0
        if ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    return parts + [text[start:]]


def measure_list(text: str) -> list[str]:
    """``type=`` for ``--measures``: comma-separated ir-measures names, each parsed and range-checked."""
    from .evaluate import parse_measures

    names = [m.strip() for m in _top_level_split(text) if m.strip()]
    try:
        parse_measures(names)
    except InputError as e:
        raise argparse.ArgumentTypeError(f"{e.what} (expected {e.expected})") from None
    return names


def device_spec(text: str) -> str:
    """``type=`` for an encoder device: cpu, cuda, cuda:N or mps."""
    import re

    if re.fullmatch(r"cpu|cuda(:[0-9]+)?|mps", text) is None:
        raise argparse.ArgumentTypeError(f"unknown device {text!r} (expected cpu, cuda, cuda:N or mps)")
    return text


def search_device_spec(text: str) -> str:
    """``type=`` for where a search runs: auto, cpu, cuda or cuda:N (a GPU this machine lacks: refused when the
    search starts, with what it has)."""
    import re

    if re.fullmatch(r"auto|cpu|cuda(:[0-9]+)?", text) is None:
        raise argparse.ArgumentTypeError(f"unknown device {text!r} (expected auto, cpu, cuda or cuda:N)")
    return text


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``1 query``, ``2,000 queries``: a count with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def k_applied(k: int, corpus_size: int) -> int:
    """The k a search returns per query: ``-k`` above the corpus size gets a note (once, on every search path) and
    every document; summaries print this, not a requested 2,147,483,648."""
    if k > corpus_size:
        print(f"itlr: note: -k {k:,} is above the corpus size {corpus_size:,}: every document is returned for "
              "each query", file=sys.stderr)
    return min(k, corpus_size)


BENCH_BACKENDS = ("torch-cpu", "numba-cpu", "torch-cuda", "triton", "faiss")   # `itlr bench --backends` names
BENCH_MIN_TIME_S = 0.2   # `itlr bench`: seconds of timed runs per backend and floor, at least (short runs repeat)
BENCH_MAX_RUNS = 1000    # ... but never more timed runs than this


def backend_list(text: str) -> str | list[str]:
    """``type=`` for ``itlr bench --backends``: ``auto`` or known names, comma-separated, each once (whether one
    can run here is checked once the queries are read)."""
    if text.strip() == "auto":
        return "auto"
    names = [b.strip() for b in text.split(",") if b.strip()]
    unknown = [b for b in names if b not in BENCH_BACKENDS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(f"{'unknown backend ' + repr(unknown[0]) if unknown else 'no backend given'} "
                                         f"(expected auto or one or more of {', '.join(BENCH_BACKENDS)})")
    repeated = sorted({b for b in names if names.count(b) > 1})
    if repeated:
        raise argparse.ArgumentTypeError(f"backend {repeated[0]!r} is listed twice (expected each backend once)")
    return names


def check_output(path: str, extensions: tuple[str, ...] = (".arrow", ".parquet"),
                 inputs: dict[str, str | None] | None = None, flag: str = "-o") -> Path:
    """Refuse a bad output file path, or one that would overwrite one of ``inputs`` ({what: path}), before
    any work (see :func:`itlr_gpu.output.check_output_file` and :func:`~itlr_gpu.output.check_not_input`)."""
    from .index import check_not_in_index
    from .output import check_not_in_result_folder, check_not_input, check_output_file

    target = check_output_file(path, extensions, flag)
    check_not_input(path, inputs or {}, flag)
    check_not_in_result_folder(path, flag)
    check_not_in_index(path, flag)
    return target


def make_encoder(model: str | None, device: str = "cpu", **settings: Any) -> Any:
    """The query/document encoder: the bundled MiniLM, or a local sentence-transformers folder;
    ``settings`` (backend, max_length, precision) as :class:`~itlr_gpu.encoders.SentenceTransformerEncoder`
    takes them."""
    from .encoders import SentenceTransformerEncoder, default_encoder

    if model is None and not settings and device == "cpu":
        return default_encoder()
    return SentenceTransformerEncoder(model, device=device, **settings)


def check_encoder(encoder: Any) -> None:
    """Settle an encoder's settings and device before any file is read: a combination that cannot work
    (``--precision int8 --encoder-backend torch``, ``--max-length`` above the model's limit) is a usage
    error (exit 2), a device or an encoder backend's package this machine lacks an input error (exit 1)."""
    from .encode_runtime import RuntimeMissing
    from .errors import UsageError

    try:
        getattr(encoder, "settings", None)
    except InputError as e:
        if e.where in ("--precision", "--encoder-backend", "--max-length") and not isinstance(e, RuntimeMissing):
            raise UsageError(e.what, e.where, e.expected) from e
        raise
    check = getattr(encoder, "check_device", None)
    if check is not None:
        check()


def max_length(text: str) -> int:
    """``type=`` for ``--max-length``: word pieces per text, at least 8 (the model's limit is checked later)."""
    value = _int(text)
    if value < 8:
        raise argparse.ArgumentTypeError(f"must be an integer >= 8, got {value}")
    return _at_most_max(value, 8)


def query_encoder(model: str | None, index: Any, *, documents: bool = False) -> Any:
    """The encoder for ``index``'s queries (``documents``: for documents appended to it): embedding like its
    documents when its manifest records the encoder settings (model, max length, backend, precision), else
    :func:`make_encoder`."""
    from .encoders import encoder_for, model_fingerprint

    recorded = index.manifest.get("encoder")
    if not recorded:
        return make_encoder(model)
    encoder = encoder_for(recorded, model)
    if hasattr(encoder, "check_files") and encoder.path is not None:   # other model files: refused before an ONNX
        if documents:                                                   # export of them
            index.check_embedded_alike(encoder.name, {"model": encoder.name,
                                                      "weights": model_fingerprint(encoder.path)}, planned=True)
        else:
            encoder.check_files(recorded, str(index.path or "index"))
    try:
        encoder.settings   # resolved here: a machine that cannot embed as the documents were is told so now
    except InputError as e:
        if e.where not in ("--precision", "--encoder-backend", "--max-length"):
            raise
        how = ", ".join(f"{k} {recorded[k]}" for k in ("backend", "precision", "max_length") if k in recorded)
        if e.where == "--max-length" and model is not None:   # the folder given, not the machine
            raise InputError(f"model folder {model}: the index's documents were embedded with {how} ({e.what})",
                             str(index.path or "index"), "the model folder the index was built with, the same "
                             "files (--model names it)") from None
        gpu = recorded.get("precision") == "fp16" and recorded.get("backend") == "torch"
        raise InputError(f"the index's documents were embedded with {how}, which this machine cannot run for the "
                         f"queries ({e.what})", str(index.path or "index"),
                         ("a machine with a CUDA GPU (fp16 is what itlr index --device cuda records), " if gpu else "")
                         + "an index built on this machine (itlr index ... --encoder-backend torch --precision fp32), "
                         "or the machine (and packages) the index was built with") from None
    return encoder


def index_model_path(index: Any, where: str) -> str | None:
    """The model the index was built with (:func:`~itlr_gpu.encoders.index_model`); None means the bundled
    default, with a note where the index records no model at all."""
    from .encoders import DEFAULT_MODEL_NAME, index_model

    path = index_model(index.manifest, where, "--model PATH naming that model's folder")
    if path is None and index.manifest.get("model") is None:
        print(f"itlr: note: {where} records no model; embedding queries with the bundled {DEFAULT_MODEL_NAME}",
              file=sys.stderr)
    return path


MAX_LISTED = 20  # invalid queries listed under the error line (the error counts them all)


def foreign_operators(expr: str) -> list[str]:
    """Other query languages' operators in an expression, outside its quoted terms ("a && b", "!c", "a XOR b",
    "+a -b"): here they are words of a term, which a user writing for another engine may not expect."""
    found = set()
    for word in re.sub(r'"(?:[^"\\]|\\.)*"', " ", expr).replace("(", " ").replace(")", " ").split():
        if not word.strip("&|"):
            found.add(word)
        elif word.startswith("!"):
            found.add("!")
        elif word == "XOR":
            found.add(word)
        elif word[0] in "+-" and word[1:2].isalpha():
            found.add(word[0] + "word")
    return sorted(found)


def note_foreign_operators(exprs: list[str], ids: list[str]) -> None:
    """One note on stderr when some expressions hold another language's operators (see foreign_operators)."""
    held = [(i, ops) for i, e in zip(ids, exprs) for ops in [foreign_operators(e)] if ops]
    if held:
        symbols = sorted({o for _, ops in held for o in ops})
        print(f"itlr: note: {counted(len(held), 'query', 'queries')} {'holds' if len(held) == 1 else 'hold'} "
              f"{', '.join(map(repr, symbols))} (the first {held[0][0]!r}): here "
              f"{'it is' if len(symbols) == 1 else 'they are'} part of a term; the operators are AND, OR and NOT "
              "(itlr parse shows how an expression reads)", file=sys.stderr)


def note_self_negated(held: list[tuple[str | None, str]], what: str = "query", whats: str = "queries") -> None:
    """One note on stderr for the ``(id, term)`` pairs of queries that AND a term with its own negation
    (:func:`~itlr_gpu.query.self_negated`): they parse and are searched, but score x(1 - x).  An id of None:
    the one expression of ``itlr parse``."""
    from .query import quote

    if not held:
        return
    qid, term = held[0]
    form = f"{quote(term)} AND NOT {quote(term)}"
    who = (f"the expression holds {form}" if qid is None else
           f"{counted(len(held), what, whats)} {'holds' if len(held) == 1 else 'hold'} a term ANDed with its own "
           f"negation (the first {qid!r}: {form})")
    print(f"itlr: note: {who}, which scores x(1 - x): highest for documents half-similar to the term, not a "
          "ranking by it", file=sys.stderr)


def queries_from_table(table: Any, field: str, where: str, invalid: list[dict] | None = None, *,
                       skip_hint: bool | str = False,
                       fallback: list[dict] | None = None) -> tuple[list[Any], list[str], str]:
    """``(queries, ids, field)`` from a query table: expression strings, or whole-text ``Term``s for ``text``.

    Every row is checked (empty value; for ``expr`` a query that does not parse),
    not just up to the first bad one.  With ``invalid=None`` any bad row is an
    error that lists them all (the first :data:`MAX_LISTED` on stderr, each with
    its row, id and reason; the translator's ``error`` column when the file has
    one).  With a list, bad rows are left out and appended to it as
    ``{"query_id", "row", "error"}`` records (``itlr search --skip-invalid``); ``skip_hint``: the error
    suggests that option (True: as ``itlr search`` has it; a string: in those words).  With a ``fallback`` list, a bad ``expr`` row that
    has a text is searched with that text embedded whole (the dense baseline; what a translator's error
    row is best searched with) and appended to it as such a record instead (``--fallback-text``).
    """
    from .errors import QuerySyntaxError
    from .query import Term, parse, self_negated
    from .query.parser import check_term, whole_text

    def text_term(text: str) -> tuple[Any, str | None]:
        """A whole text as a term, or the reason it cannot be one (a lone surrogate, only invisible characters)."""
        term = whole_text(str(text))
        if not term:
            return None, "text of control characters and spaces only"
        try:
            check_term(term)
        except InputError as err:   # (a lone surrogate; only invisible characters)
            return None, err.what.replace("in query AST ", "").replace("term ", "text ", 1)
        return Term(term), None

    if field == "auto":
        field = "expr" if "expr" in table.column_names else "text"
    if field not in table.column_names:
        raise InputError(f"no '{field}' column", where, f"an '{field}' column" if field[0] in "aeiou" else f"a '{field}' column")
    ids = table.column("query_id").to_pylist()
    values = table.column(field).to_pylist()
    errors_col = table.column("error").to_pylist() if "error" in table.column_names else None
    texts = table.column("text") if field == "expr" and "text" in table.column_names else None   # read per bad row
    queries: list[Any] = []
    kept: list[str] = []
    bad: list[dict] = []
    contradictory: list[tuple[str, str]] = []
    for row, value in enumerate(values):
        empty = value is None or not str(value).strip()
        problem = (f"no {field} (null)" if value is None else f"empty {field}") if empty else None
        if not empty and field == "expr":
            try:
                term = self_negated(parse(value))  # parsed here so that every bad row is reported; the engine
                if term is not None:               # parses again
                    contradictory.append((ids[row], term))
            except QuerySyntaxError as err:
                problem = err.short()
        if problem is None and field != "expr":
            term, problem = text_term(value)
        if problem is None:
            queries.append(value if field == "expr" else term)
            kept.append(ids[row])
            continue
        reason = errors_col[row] if empty and errors_col and errors_col[row] else None
        if reason:
            problem += f": {reason}"
        text = texts[row].as_py() if texts is not None else None
        has_text = text is not None and bool(str(text).strip())
        if fallback is not None and has_text:   # --fallback-text: the row's text, embedded whole
            term, unusable = text_term(text)
            if term is not None:
                fallback.append({"query_id": ids[row], "row": row, "error": problem})
                queries.append(term)
                kept.append(ids[row])
                continue
            problem += f" (and its {unusable}: no fallback)"
        if empty and not reason and has_text:
            problem += " (the row has a text: --field text embeds the texts whole, --fallback-text this row's)"
        bad.append({"query_id": ids[row], "row": row, "error": problem})
    if bad and (invalid is None or not queries):   # with --skip-invalid too when nothing is left to score
        hint = ("--skip-invalid scores the valid ones and writes the rest to an errors table" if skip_hint is True
                else skip_hint) if invalid is None else ""
        first = bad[0]
        more = "" if len(bad) == 1 else (f" (the first {MAX_LISTED} listed below)" if len(bad) > MAX_LISTED
                                         else " (listed below)")
        err = InputError(f"{len(bad):,} of {len(values):,} queries {'is' if len(bad) == 1 else 'are'} invalid{more}, "
                         f"the first {first['query_id']!r}: {first['error']}", f"{where} row {first['row']}",
                         f"a non-empty {field} per query that parses"
                         + (f"; {hint}" if hint else "")
                         + ("; --fallback-text searches a row that has a text by its text"
                            if texts is not None and fallback is None else "")
                         + ("; --fallback-text needs a text column, which this file lacks"
                            if fallback is not None and texts is None and field == "expr" else ""))
        if len(bad) > 1:
            err.details = [f"invalid query {b['query_id']!r} ({where} row {b['row']}): {b['error']}"
                           for b in bad[:MAX_LISTED]]
        err.exit_code = 2  # a query that does not parse (an empty one neither), as `itlr parse` exits
        raise err
    if invalid is not None:
        invalid.extend(bad)
    if field == "expr":
        note_foreign_operators([q for q in queries if isinstance(q, str)],
                               [i for i, q in zip(kept, queries) if isinstance(q, str)])
        note_self_negated(contradictory)
    return queries, kept, field


# --------------------------------------------------------------------------- scoring options


def add_score_arguments(parser: argparse.ArgumentParser) -> None:
    """The scoring options of :mod:`itlr_gpu.scoring` (``itlr search`` and ``itlr rerank``)."""
    g = parser.add_argument_group("scoring options (beyond the paper; see itlr_gpu/scoring.py)")
    g.add_argument("--recommended", action="store_true",
                   help="the evaluated best configuration (itlr_gpu.scoring.RECOMMENDED: equalize, guard, OR as max, "
                        "hybrid 0.5, 0.1 for pure conjunctions, 0.7 for queries with a NOT; the flags below override "
                        "its parts)")
    g.add_argument("--hybrid", type=unit_float, metavar="ALPHA",
                   help="mix ALPHA * logical + (1 - ALPHA) * whole-query similarity (standardised); the whole "
                        "query is the 'text' column when present, else a rendering of the expression")
    g.add_argument("--conj-hybrid", type=unit_float, metavar="ALPHA",
                   help="the hybrid's ALPHA for pure conjunctions (no NOT, no OR), whose whole-text embedding "
                        "already expresses the query (default: --hybrid's; --recommended: 0.1)")
    g.add_argument("--neg-hybrid", type=unit_float, metavar="ALPHA",
                   help="the hybrid's ALPHA for queries with a NOT (default: --hybrid's; --recommended: 0.7); "
                        "1 leaves them to the logical score alone (the whole-text embedding of 'A but not B' is close "
                        "to B; --guard, when on, still weakens a NOT of a term related to the positive ones)")
    g.add_argument("--calibration", choices=("none", "equalize", "zscore", "minmax", "percentile"),
                   help="per-term similarity calibration against a document sample")
    g.add_argument("--guard", action="store_true", default=None,
                   help="weaken NOT of a term related to the query's positive terms")


def score_options(args: argparse.Namespace, no_percentile: str | None = None, elsewhere: str | None = None) -> Any:
    """ScoreOptions from the CLI flags; None when none is given (the paper's raw composition).

    A combination that cannot work is a usage error, raised before any file is read;
    ``no_percentile`` names the mode that cannot take ``--calibration percentile`` (a lookup
    table, not an affine map of one similarity), ``elsewhere`` where it works instead.
    """
    from .scoring import ScoreOptions

    if not (args.recommended or args.hybrid is not None or args.calibration or args.guard
            or args.conj_hybrid is not None or args.neg_hybrid is not None):
        return None
    from .engine import recommended_for

    # (an OR family asked for by name replaces the recommended max)
    base = recommended_for(args.ops if getattr(args, "ops_given", False) else None) if args.recommended \
        else ScoreOptions()
    try:
        options = base.override(hybrid=args.hybrid, conj_hybrid=args.conj_hybrid, neg_hybrid=args.neg_hybrid,
                                calibration=args.calibration, guard=args.guard)
    except InputError as e:   # the API's keyword names become the options' ("neg_hybrid" -> "--neg-hybrid")
        def flags(text: str) -> str:
            return re.sub(r"\b(neg_hybrid|conj_hybrid|hybrid|calibration|guard|adaptive)\b",
                          lambda m: "--" + m.group(1).replace("_", "-"), text)
        expected = flags(e.expected)
        expected += " (or --recommended)" if "--hybrid" in expected else ""
        raise UsageError(flags(e.what), f"--{e.where.replace('_', '-')}" if e.where else "scoring options",
                         expected) from e
    if no_percentile and options.calibration == "percentile":
        raise UsageError(f"percentile calibration does not combine with {no_percentile}", "--calibration",
                         "equalize, zscore, minmax or none" + (f"; {elsewhere}" if elsewhere else ""))
    return options


def whole_texts(table: Any, field: str, options: Any, invalid: list[dict] | None = None,
                queries: Sequence[Any] | None = None) -> list[str] | None:
    """The hybrid's whole-query texts: the query table's ``text`` column for the rows kept (``invalid``:
    the rows left out), or None (each expression is rendered as text) when the options have no use for
    them or the queries are texts already.  A row without a text gets its own expression rendered as words
    (``queries``: the kept rows' queries, in order), with one note: another row's missing text changes no
    query's score."""
    if options is None or options.hybrid is None or field != "expr" or "text" not in table.column_names:
        return None
    skipped = {b["row"] for b in invalid or ()}
    whole = [t for row, t in enumerate(table.column("text").to_pylist()) if row not in skipped]
    missing = [i for i, t in enumerate(whole) if t is None or not str(t).strip()]
    if not missing:
        return whole
    if queries is None or len(queries) != len(whole):
        return None
    from .engine import rendered_query

    for i in missing:
        whole[i] = rendered_query(queries[i])
    print(f"itlr: note: {counted(len(missing), 'query', 'queries')} without a text: the hybrid's whole query is "
          "the expression in words there", file=sys.stderr)
    return whole


def add_fallback_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--fallback-text", action="store_true",
                        help="a query whose expr is missing or does not parse (a translator's error row) is "
                             "searched with its text embedded whole (the dense baseline) instead of refused")


def fallback_list(args: argparse.Namespace) -> list[dict] | None:
    """The list ``--fallback-text`` collects its rows in (None without it); a usage error with ``--field text``,
    where every query is a text already."""
    if not args.fallback_text:
        return None
    if args.field == "text":
        raise UsageError("--fallback-text only goes with expressions", "--fallback-text", "--field expr or auto")
    return []


def report_fallback(fallback: list[dict], total: int, where: str) -> None:
    """One stderr line for the rows ``--fallback-text`` searched by their text."""
    if fallback:
        first = fallback[0]
        one = len(fallback) == 1
        print(f"itlr: note: {counted(len(fallback), 'query', 'queries')} of {total:,} with no valid expr "
              f"{'is' if one else 'are'} searched by {'its' if one else 'their'} text (first {first['query_id']!r}, "
              f"{where} row {first['row']}: {first['error']})",
              file=sys.stderr)
