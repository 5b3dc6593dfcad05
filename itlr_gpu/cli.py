"""The ``itlr`` command line.

Every user error (bad query, file, option) is printed as one ``itlr: error:``
line and exits non-zero (2 for usage and query syntax, 1 otherwise); nothing is
left half-written because every output is written atomically.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import re
import signal
import sys
import time
import warnings

from . import cli_common
from .cli_common import (DEFAULT_OPS, add_score_arguments, check_output, device_spec, index_model_path, measure_list,
                         non_negative_int, ops_spec, positive_int, queries_from_table, score_options, whole_texts)
from .errors import OWN_WARNINGS, IndexIntegrityError, InputError, ItlrError, QuerySyntaxError, UsageError
from .output import Terminated, handle_signals
from .scale import cli as scale_cli
from .translate import registry as models_cli


class _Parser(argparse.ArgumentParser):
    """argparse with the project's error format: one ``itlr: error:`` line, exit 2."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # argparse takes "-5MiB" or "-1e3" for an option (only "-5" and "-.5" count as numbers) and answers
        # "expected one argument"; no option of ours starts with a digit, so any "-<digit>..." is a value
        # and reaches its type check, which says what is wrong with it.
        self._negative_number_matcher = re.compile(r"^-\.?\d")
        self.set_defaults(command_prog=self.prog, command_parser=self)   # the deepest (sub)command parsed sets it last

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        # Words no parser took are found by the top level, after the command's parser: name the command.
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            prog = getattr(parsed, "command_prog", self.prog)
            parser = getattr(parsed, "command_parser", self)
            options = [o for action in parser._actions for o in action.option_strings if o.startswith("--")]
            hints = [close[0] for x in extras if x.startswith("--")
                     for close in [difflib.get_close_matches(x.split("=", 1)[0], options, n=1, cutoff=0.75)] if close]
            self._fail(prog, f"unrecognized arguments: {' '.join(extras)}"
                       + (f" (did you mean {', '.join(hints)}?)" if hints else ""))
        del parsed.command_parser
        if hasattr(parsed, "ops"):   # given or not: --recommended keeps its OR as max only where --ops is not given
            parsed.ops_given = parsed.ops is not None
            parsed.ops = parsed.ops or DEFAULT_OPS
        return parsed

    def error(self, message: str):  # type: ignore[override]
        self._fail(self.prog, message)

    def _fail(self, prog: str, message: str):
        where = "" if prog == "itlr" else f"{prog}: "  # the top level adds nothing to "itlr: error:"
        self.exit(2, f"itlr: error: {where}{message} (see '{prog} --help')\n")


def _resume_hint(args) -> str:
    """For a bulk job (a result folder), that rerunning the command resumes it."""
    output = getattr(args, "output", None)
    if getattr(args, "func", None) is not cmd_search or not output:
        return ""
    from .scale.bulk import is_dataset_path

    return "; the same command resumes the job after its last finished part" if is_dataset_path(output) else ""


def main(argv: list[str] | None = None) -> int:
    """Run ``itlr`` with ``argv``; returns the exit status (0 ok, 1 bad input, 2 usage, 130/143 interrupted)."""
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, or a usage error already printed
        return e.code if isinstance(e.code, int) else 2
    except KeyboardInterrupt:  # Ctrl-C while starting up (when not run by the console script)
        print("itlr: interrupted", file=sys.stderr)
        return 130
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    stdout = sys.stdout
    try:
        _end_of_startup(args)
        with handle_signals(), warnings.catch_warnings():
            warnings.showwarning = _show_warning
            sys.stdout = _NamedStream(stdout, "standard output")
            status = args.func(args) or 0
            sys.stdout.flush()   # a full disk behind `> file` shows here, as this command's error
            return status
    except QuerySyntaxError as err:
        print(f"itlr: error: {err}", file=sys.stderr)
        print(err.caret(), file=sys.stderr)
        return err.exit_code
    except ItlrError as err:
        print(f"itlr: error: {err}", file=sys.stderr)
        for line in getattr(err, "details", ()):  # e.g. every invalid query of a batch, under the one error line
            print(f"  {line}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print(f"itlr: interrupted{_resume_hint(args)}", file=sys.stderr)
        return 130
    except Terminated as err:
        print(f"itlr: interrupted ({err}){_resume_hint(args)}", file=sys.stderr)
        return 128 + err.signum
    except BrokenPipeError:
        # The reader went away (`itlr parse x | head -c0`): stop quietly, like other Unix tools.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except MemoryError:
        print("itlr: error: out of memory (try --memory-cap, --shard-rows or a smaller --batch-size)", file=sys.stderr)
        return 1
    except RuntimeError as err:
        if type(err).__name__ != "OutOfMemoryError":   # torch.OutOfMemoryError: the GPU allocator's
            raise
        # "CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of ...": its first two
        what = ". ".join(str(err).split(". ")[:2]).strip().rstrip(".")
        command = getattr(args, "command", None)
        hint = {"search": "--backend torch, --memory-cap, --shard-rows or a smaller --batch-size",
                "index": "a smaller --batch-size or --max-length",
                "bench": "--backends torch-cuda, or a smaller query file"}.get(command, "--device cpu")
        print(f"itlr: error: out of GPU memory ({what[:200]}): try {hint}", file=sys.stderr)
        return 1
    except OSError as err:  # e.g. the disk filled up while writing: the writers removed their temporaries
        where = f"{err.filename}: " if err.filename else ""
        print(f"itlr: error: {where}{err.strerror or err}", file=sys.stderr)
        if err.filename == "standard output":   # what could not be written is dropped, not retried at exit
            with contextlib.suppress(OSError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), stdout.fileno())
        return 1
    finally:
        sys.stdout = stdout


class _NamedStream:
    """A text stream whose write errors name it: a full disk behind ``> file`` raises an OSError with no file name
    ("No space left on device"), and the error line is to say where (a closed pipe stays a BrokenPipeError)."""

    def __init__(self, stream, name: str) -> None:
        self._stream, self._name = stream, name

    def write(self, text: str) -> int:
        try:
            return self._named(self._stream.write, text)
        except UnicodeEncodeError:   # an ASCII or Latin-1 terminal: escaped as stderr escapes, not a traceback
            encoding = getattr(self._stream, "encoding", None) or "ascii"
            return self._named(self._stream.write, text.encode(encoding, "backslashreplace").decode(encoding))

    def flush(self) -> None:
        self._named(self._stream.flush)

    def _named(self, call, *args):
        try:
            return call(*args)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise OSError(e.errno, e.strerror, self._name) from e

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _end_of_startup(args) -> None:
    """Under the console script, load torch while Ctrl-C still quits at once (see :mod:`itlr_gpu.console`),
    then give Ctrl-C back to Python's KeyboardInterrupt for the command's work."""
    from .console import quit_at_once

    if signal.getsignal(signal.SIGINT) is not quit_at_once:
        return
    # A command's parser says whether its work starts by importing torch (``set_defaults(loads_torch=...)``,
    # a bool or a function of the arguments); by default it does.
    loads_torch = getattr(args, "loads_torch", True)
    if callable(loads_torch):
        loads_torch = loads_torch(args)
    if loads_torch:
        import torch  # noqa: F401
    signal.signal(signal.SIGINT, signal.default_int_handler)


_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_default_showwarning = warnings.showwarning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """The package's own warnings as one ``itlr: warning:`` line (not a source location); others as usual."""
    if issubclass(category, OWN_WARNINGS) or os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep):
        print(f"itlr: warning: {message}", file=file or sys.stderr)
    else:
        _default_showwarning(message, category, filename, lineno, file, line)


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="itlr", description="Logical dense retrieval (ITLR): batch scoring engine.")
    from . import __version__

    p.add_argument("--version", action="version", version=f"itlr {__version__}")
    sub = p.add_subparsers(metavar="COMMAND", dest="command")

    s = sub.add_parser("index", help="build an index from a corpus or import precomputed embeddings")
    s.add_argument("corpus", nargs="?", help="BEIR folder, or .jsonl/.tsv/.csv (each may be gzipped)/.parquet/"
                                             ".arrow with doc_id (or _id), text[, title]")
    s.add_argument("-o", "--output", required=True, help="index directory to write")
    s.add_argument("--model", help="local sentence-transformers folder (default: bundled all-MiniLM-L6-v2)")
    s.add_argument("--dtype", choices=("float16", "float32"), help="default float16 (with --append: the index's)")
    s.add_argument("--append", action="store_true",
                   help="add CORPUS's documents to the index in OUTPUT (rewritten atomically), embedded as its "
                        "documents were (the model and encoder settings its manifest records); new doc ids only")
    s.add_argument("--keep-empty", action="store_true",
                   help="index documents without text (empty title and text) as an empty string; by default they "
                        "are left out (such a vector is close to every short term)")
    s.add_argument("--embeddings", help="import this .npy matrix (or Parquet/Arrow list<float> column) instead")
    s.add_argument("--ids", help="document ids for --embeddings: text file (one a line) or Arrow/Parquet column")
    s.add_argument("--batch-size", type=positive_int, default=256,
                   help="documents per call to the encoder (default 256; the progress bar's step and the length "
                        "sort's window): each call runs forward passes of up to the encoder's own batch, so a "
                        "smaller --batch-size than that also shrinks the passes (and slows encoding)")
    s.add_argument("--device", type=device_spec, default="cpu", help="encoder device (cpu, cuda, cuda:N, mps; default cpu)")
    s.add_argument("--encoder-backend", choices=("auto", "torch", "onnx", "openvino"), default="auto",
                   help="auto: torch on CUDA; on a CPU with AMX openvino (bf16) when OpenVINO is installed, else "
                        "torch; on a CPU without AMX onnx (int8) when ONNX Runtime is installed and int8 keeps the "
                        "model's vectors, else torch (bf16 where the CPU has it); "
                        "onnx: ONNX Runtime's fused graph, int8 by default; openvino: bf16 where the CPU has "
                        "bfloat16 instructions (see benchmarks/results/encode.md, encode-xeon.md, encode-zen4.md); "
                        "recorded in the manifest, and queries are embedded the same way")
    s.add_argument("--max-length", type=cli_common.max_length,
                   help="word pieces per text (default: the model's limit, 256 for MiniLM; 128 encodes 2x faster "
                        "but lost 0.021 nDCG@10 on SciFact)")
    s.add_argument("--precision", choices=("fp32", "bf16", "int8", "fp16"),
                   help="default: int8 for onnx, fp16 for torch on CUDA; torch and openvino on a CPU: bf16 where "
                        "the CPU has bfloat16 instructions (AMX or AVX512-BF16; 3.4x fp32 on a Xeon, "
                        "SciFact nDCG@10 -0.001), else fp32")
    s.set_defaults(func=cmd_index)

    s = sub.add_parser("parse", help="print the canonical form and postfix program of a query")
    s.add_argument("expr", help="a query, quoted for the shell (itlr parse -- '-a OR b' for one starting with -)")
    s.set_defaults(func=cmd_parse, loads_torch=False)

    s = sub.add_parser("search", help="score queries against an index, write top-k as Arrow/Parquet")
    s.add_argument("index")
    s.add_argument("queries", help=cli_common.QUERIES_HELP)
    s.add_argument("-o", "--output", required=True,
                   help="result file (.arrow, .parquet, or a TREC run: .trec, .run), or a result folder (a name "
                        "without an extension, or ending with '/'): a resumable dataset of parts")
    s.add_argument("-k", type=positive_int, default=10, help="results per query (default %(default)s)")
    s.add_argument("--ops", type=ops_spec, help=f"AND,OR,NOT families (default {DEFAULT_OPS}; given with "
                   "--recommended, its OR family replaces the recommended OR as max)")
    s.add_argument("--field", choices=("auto", "expr", "text"), default="auto",
                   help="expr: logical expressions; text: embed whole (baseline); auto: expr if present")
    s.add_argument("--backend", choices=("auto", "torch", "triton", "numba"), default="auto",
                   help="auto: the fused Triton kernel on a GPU, the fused numba loop on a CPU (torch without numba)")
    s.add_argument("--device", type=cli_common.search_device_spec, default="auto",
                   help="where the search runs: auto, cpu, cuda or cuda:N (default auto: cuda when there is one)")
    s.add_argument("--model", help="encoder folder (default: the index's model, bundled MiniLM)")
    s.add_argument("--chunk-size", type=positive_int, help="documents per chunk (default: from a 256 MiB budget)")
    s.add_argument("--skip-invalid", action="store_true",
                   help="score the valid queries and write the invalid ones (empty, not parsing) to an errors "
                        "table instead of refusing the batch")
    cli_common.add_fallback_argument(s)
    s.add_argument("--errors", metavar="PATH",
                   help="errors table for --skip-invalid (.arrow/.parquet; default: OUT.errors.arrow beside a "
                        "result file, OUT.errors.parquet beside a .parquet one, OUT/_errors.arrow in a result "
                        "folder)")
    add_score_arguments(s)
    scale_cli.add_arguments_search(s)
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("eval", help="evaluate a result file against qrels with ir-measures")
    s.add_argument("results", help="result file (.arrow/.parquet/.jsonl, or .tsv/.csv with a header naming the query "
                                   "id, doc id and score columns), the result folder of a sharded/batched search, or "
                                   "a TREC run (qid Q0 docid rank score tag: .run/.trec/.txt or a headerless .tsv)")
    s.add_argument("qrels", help="qrels: BEIR .tsv, TREC (qid 0 docid rel) or .csv with a header row")
    s.add_argument("--measures", type=measure_list, default="nDCG@10,R@100",
                   help="comma-separated ir-measures names (default %(default)s)")
    s.add_argument("--unanswered", choices=("zero", "skip"), default="zero",
                   help="queries of the qrels with no results: count as 0 in the means (default), or leave them "
                        "out (results for a subset of the qrels' queries)")
    s.add_argument("--ties", choices=("rank", "trec_eval"), default=None,
                   help="documents of equal score: in the file's rank order (rank), or as trec_eval orders them, "
                        "ignoring the ranks (trec_eval); default: trec_eval for a TREC run, rank for itlr's "
                        "results (the engine's order)")
    s.add_argument("--ignore-identical-ids", action="store_true",
                   help="leave out each query's results whose doc id is the query id, as BEIR's evaluation does "
                        "(queries drawn from the corpus, as ArguAna's, find themselves first; the qrels do not "
                        "count that document)")
    s.add_argument("--json", metavar="OUT", help="also write the means and every query's values as JSON "
                                                  "(atomically)")
    s.set_defaults(func=cmd_eval, loads_torch=False)

    s = sub.add_parser("translate", help="natural language -> logical expressions (rules, llama.cpp or vLLM)")
    from .translate import add_translate_arguments  # light: the vLLM engine loads only when used

    add_translate_arguments(s)
    s.set_defaults(func=cmd_translate, loads_torch=lambda args: args.translator == "vllm")

    models_cli.add_models_parser(sub)

    scale_cli.add_rerank_parser(sub)
    scale_cli.add_shard_parser(sub)

    s = sub.add_parser("bench", help="throughput of an index and a query file on this machine, per backend")
    s.add_argument("index")
    s.add_argument("queries", help=cli_common.QUERIES_HELP)
    s.add_argument("-k", type=positive_int, default=10, help="results per query (default %(default)s)")
    s.add_argument("--ops", type=ops_spec, help=f"AND,OR,NOT families (default {DEFAULT_OPS})")
    s.add_argument("--field", choices=("auto", "expr", "text"), default="auto",
                   help="the query column to run: expr (logical) or text (whole query); auto: expr where present")
    s.add_argument("--backends", type=cli_common.backend_list, default="auto",
                   help="auto (default: every one available here) or comma-separated: "
                        + ", ".join(cli_common.BENCH_BACKENDS))
    s.add_argument("--model", help="encoder folder (default: the index's model, bundled MiniLM)")
    s.add_argument("--repeat", type=positive_int, default=3,
                   help="timed runs per backend, at least (median reported; default 3)")
    s.add_argument("--min-time", type=cli_common.non_negative_float, default=cli_common.BENCH_MIN_TIME_S,
                   metavar="SECONDS",
                   help="and more timed runs until they fill this many seconds per backend (at most "
                        f"{cli_common.BENCH_MAX_RUNS:,} runs; default %(default)s; 0: exactly --repeat)")
    s.add_argument("--warmup", type=non_negative_int, default=1,
                   help="untimed runs per backend first (default 1; with 0 the first timed run includes the numba "
                        "JIT compile and first-touch costs)")
    s.add_argument("--chunk-size", type=positive_int, help="documents per chunk (default: from a 256 MiB budget)")
    s.add_argument("--json", metavar="OUT", help="also write the results as JSON (atomically)")
    cli_common.add_fallback_argument(s)
    s.add_argument("--skip-invalid", action="store_true",
                   help="leave out queries whose expr is missing or does not parse (a translator's error rows; "
                        "counted on stderr) instead of refusing the file")
    s.set_defaults(func=cmd_bench)

    s = sub.add_parser("demo", help="run the embedded demo: baseline vs logical on a shipped corpus")
    s.add_argument("--docs", type=cli_common.int_in(2, 100_000, "the demo builds its corpus in memory; "
                                                     "`itlr index` takes corpora of any size"),
                   default=400, help="documents in the generated corpus (2 to 100,000)")
    s.add_argument("--per-template", type=cli_common.int_in(1, 1_000, "a demo, not a benchmark"), default=4,
                   help="queries per template (at most 1,000)")
    s.add_argument("--seed", type=non_negative_int, default=0, help="the corpus's and queries' seed (default 0)")
    s.add_argument("--model", help="encoder folder (default: bundled all-MiniLM-L6-v2)")
    s.set_defaults(func=cmd_demo)
    return p


def cmd_index(args) -> int:
    from .encoders import model_fingerprint
    from .index import INDEX_FILES, Index, check_not_in_index, check_replaceable
    from .output import check_not_input, check_output_folder

    check_replaceable(check_output_folder(args.output), INDEX_FILES)  # before the (long) encoding
    check_not_input(args.output, {"corpus": args.corpus, "embeddings": args.embeddings, "ids file": args.ids,
                                  "model": args.model})
    check_not_in_index(args.output)
    encoder_flags = [f for f, v in (("--encoder-backend", args.encoder_backend != "auto"),
                                    ("--max-length", args.max_length is not None),
                                    ("--precision", args.precision is not None), ("--device", args.device != "cpu"),
                                    ("--keep-empty", args.keep_empty))
                     if v]
    if args.append:
        return _append_to_index(args, [f for f in encoder_flags if f != "--keep-empty"])
    args.dtype = args.dtype or "float16"
    if args.embeddings:
        if args.corpus:
            raise UsageError("give either CORPUS or --embeddings, not both", "itlr index",
                             "CORPUS to encode, or --embeddings (with --ids) to import vectors")
        if encoder_flags:
            verb = "does" if len(encoder_flags) == 1 else "do"
            raise UsageError(f"{', '.join(encoder_flags)} {verb} not apply to imported embeddings", "itlr index",
                             "CORPUS to encode with these options, or --embeddings without them")
        # --model names the model that made the embeddings: `itlr search` embeds queries with it. Only its
        # dimension is checked here, with torch: no ONNX export for vectors that are imported
        encoder = cli_common.make_encoder(args.model, backend="torch", precision="fp32") if args.model else None
        index = Index.from_embedding_files(args.embeddings, args.ids, dtype=args.dtype)
        if getattr(encoder, "path", None) is not None:  # a sentence-transformers folder: checked at search time
            index.manifest["model"] = encoder.name
            index.manifest["encoder"] = {"model": encoder.name, "weights": model_fingerprint(encoder.path)}
            index.check_encoder(encoder)  # its dimension, now rather than at the first search
    elif args.corpus:
        if args.ids:
            raise UsageError("--ids only goes with --embeddings", "itlr index",
                             "CORPUS (its ids are its doc_id / _id column), or --embeddings EMB --ids IDS")
        settings = {k: v for k, v in (("backend", args.encoder_backend), ("max_length", args.max_length),
                                      ("precision", args.precision)) if v not in (None, "auto")}
        encoder = cli_common.make_encoder(args.model, args.device, **settings)
        started = time.perf_counter()  # the model's load (and a first ONNX export) is part of the time
        cli_common.check_encoder(encoder)  # before the corpus is read
        index = Index.build(args.corpus, encoder, dtype=args.dtype, batch_size=args.batch_size,
                            keep_empty=args.keep_empty, progress=sys.stderr.isatty())   # (a log gets the summary)
        took = time.perf_counter() - started
    else:
        raise UsageError("nothing to index", "itlr index", "CORPUS or --embeddings EMB --ids IDS")
    if args.model:  # remembered so that `itlr search` embeds queries with the same model
        index.manifest["model_path"] = os.path.abspath(args.model)
    index.save(args.output)
    n = len(index)
    print(f"indexed {cli_common.counted(n, 'document')} (d={index.dim}, {index.dtype}) -> {args.output}")
    if args.corpus:   # the figure a bulk job is planned by; the encoder settings are what it depends on
        print(_encoding_line(n, took, encoder, args.batch_size))
    return 0


def _encoding_line(n: int, took: float, encoder, batch_size: int | None = None) -> str:
    from .encoders import encoder_summary

    return (f"encoding took {took:.1f} s, {n / took:,.1f} documents/s (corpus read and model load included; "
            f"{encoder_summary(encoder, batch_size)})")


def _append_to_index(args, encoder_flags: list[str]) -> int:
    """``itlr index CORPUS -o IDX --append``: CORPUS embedded as IDX's documents were, appended, saved atomically."""
    from .index import Index, embedding_record
    from .scale.shards import load_index

    if args.embeddings or args.ids:
        raise UsageError("--append encodes a CORPUS; it does not import --embeddings", "itlr index --append",
                         "CORPUS (imported vectors: Index.append in Python)")
    if not args.corpus:
        raise UsageError("nothing to append", "itlr index --append", "CORPUS -o INDEX --append")
    if encoder_flags:
        raise UsageError(f"{', '.join(encoder_flags)} cannot change how the new documents are embedded",
                         "itlr index --append", "no encoder options: the index's recorded settings embed them")
    if not os.path.isdir(args.output):
        raise InputError("no index to append to", args.output, "an existing index folder (itlr index CORPUS -o "
                         "INDEX builds one)")
    index = load_index(args.output)
    if type(index) is not Index:
        raise InputError("is a sharded index", args.output, "a single-file index (append to it, then itlr shard)")
    if args.dtype and args.dtype != index.dtype.name:
        raise UsageError(f"--dtype {args.dtype} for an index of {index.dtype.name}", "itlr index --append",
                         f"--dtype {index.dtype.name}, or no --dtype")
    recorded = index.manifest.get("encoder") or {}
    if not {"backend", "precision", "max_length"} <= set(recorded):
        raise InputError("records no encoder settings (imported embeddings" + (f" of {recorded['model']}"
                         if recorded.get("model") else "") + ": not how they were embedded)", args.output,
                         "an index built by itlr index CORPUS (imported vectors: Index.append in Python, with "
                         "vectors made as the index's were)")
    encoder = cli_common.query_encoder(args.model or index_model_path(index, args.output), index, documents=True)
    started = time.perf_counter()  # the model's load (and a first ONNX export) is part of the time
    cli_common.check_encoder(encoder)
    # before the (long) encoding: a --model other than the index's is refused now, not after the corpus
    index.check_embedded_alike(*embedding_record(encoder), planned=True)
    new = Index.build(args.corpus, encoder, dtype=index.dtype.name, batch_size=args.batch_size,
                      keep_empty=args.keep_empty, not_in=index,   # an id already there: refused before encoding
                      progress=sys.stderr.isatty())
    took = time.perf_counter() - started
    appended = index.append(new)
    try:
        scale_cli.check_unchanged(index)   # the vectors appended to are the ones opened and checksummed
    except IndexIntegrityError as err:   # (another append or build wrote the index meanwhile)
        raise IndexIntegrityError("the index changed while these documents were encoded (another job wrote it)",
                                  args.output, "the append run again: nothing of this one was written") from err
    appended.save(args.output)
    print(f"appended {cli_common.counted(len(new), 'document')} to {args.output}: "
          f"{cli_common.counted(len(appended), 'document')} (d={appended.dim}, {appended.dtype})")
    print(_encoding_line(len(new), took, encoder, args.batch_size))
    return 0


def cmd_parse(args) -> int:
    from .compiler import compile_queries
    from .query import canonical, parse, self_negated

    node = parse(args.expr)
    program = compile_queries([node])
    print(canonical(node))
    print(program.describe(0))
    term = self_negated(node)
    if term is not None:
        cli_common.note_self_negated([(None, term)])
    symbols = cli_common.foreign_operators(args.expr)
    if symbols:   # other query languages' operators ("a & b", "!c"): here they are words of a term
        print(f"itlr: note: {', '.join(map(repr, symbols))} {'is' if len(symbols) == 1 else 'are'} part of a term "
              "here; the operators are AND, OR and NOT", file=sys.stderr)
    return 0


def cmd_search(args) -> int:
    from .engine import search
    from .io import check_run_output, read_queries, write_table

    scaled = scale_cli.wants_scale(args)  # --ray/--shard-rows/--memory-cap/--batch-size or a folder -o
    scale_cli.check_search_args(args)     # option combinations and -o, before any file is read
    options = score_options(args, no_percentile="--ray, --shard-rows, --memory-cap, --batch-size or a folder -o "
                            "(a search in batches or shards: the percentile needs every document's score at once; an "
                            "index written by itlr shard is fine)" if scaled else None,
                            elsewhere="or a search in one pass to a single .arrow/.parquet file")
    errors_path = _errors_path(args, scaled)
    table = read_queries(args.queries)
    invalid: list[dict] | None = [] if args.skip_invalid else None
    fallback = cli_common.fallback_list(args)
    queries, ids, field = queries_from_table(table, args.field, args.queries, invalid=invalid, skip_hint=True,
                                             fallback=fallback)
    cli_common.report_fallback(fallback or [], table.num_rows, args.queries)
    if not queries:
        raise InputError("the query file holds no queries", args.queries, "one query per row")
    whole = whole_texts(table, field, options, invalid, queries)
    index = scale_cli.load_index(args.index)  # single-file or sharded index folder
    check_run_output(args.output, ids, index.doc_ids)   # before the search: ids a TREC run cannot hold
    model = args.model or index_model_path(index, args.index)
    if scaled:
        code = scale_cli.run_search(args, index, queries, ids, cli_common.query_encoder(model, index), options=options,
                                    whole_texts=None if whole is None else dict(zip(ids, whole)))
    else:
        k_shown = cli_common.k_applied(args.k, len(index))
        results = search(index, queries, cli_common.query_encoder(model, index), k=args.k, ops=args.ops,
                         backend=args.backend, device=args.device, query_ids=ids, chunk_size=args.chunk_size,
                         progress=sys.stderr.isatty(), score_options=options, whole_queries=whole)
        scale_cli.check_unchanged(index)   # a memory map scored what the file holds now
        write_table(results, args.output)
        print(f"{cli_common.counted(len(ids), 'query', 'queries')} x {cli_common.counted(len(index), 'document')}, "
              f"k={k_shown:,} -> {args.output}")
        code = 0
    if invalid is not None:
        _write_errors(invalid, errors_path, args.queries)
    return code


ERRORS_SCHEMA_FIELDS = (("query_id", "string"), ("row", "int64"), ("error", "string"))


def _errors_path(args, scaled: bool) -> str | None:
    """Where ``--skip-invalid`` writes its errors table; checked before any work like ``-o``."""
    if args.errors and not args.skip_invalid:
        raise UsageError("--errors only goes with --skip-invalid", "--errors", "--skip-invalid --errors PATH")
    if not args.skip_invalid:
        return None
    if args.errors:
        path = args.errors
    elif scaled and not args.output.endswith((".arrow", ".parquet")):
        path = os.path.join(args.output, "_errors.arrow")  # a leading '_': dataset readers skip it
        return path  # the folder is created by the job; its own checks apply
    else:
        stem, ext = os.path.splitext(args.output)
        # beside a TREC run file (.trec/.run) the table is Arrow: a run has no column for an error
        path = f"{stem}.errors{ext if ext in ('.arrow', '.parquet') else '.arrow'}"
    if os.path.abspath(path) == os.path.abspath(args.output):
        raise UsageError("the errors table would replace the results", "--errors", "another path than -o")
    folder = os.path.abspath(args.output)
    if scaled and os.path.abspath(path).startswith(folder + os.sep) \
            and not os.path.relpath(path, folder).startswith(("_", ".")):
        # dataset readers take every file of the result folder but those starting with '_' or '.'
        raise UsageError("the errors table inside the result folder would be read as results", "--errors",
                         f"a name starting with '_' in {args.output} (the default: _errors.arrow), or a path outside it")
    check_output(path, inputs={"queries": args.queries, "index": args.index}, flag="--errors")
    return path


def _write_errors(invalid: list[dict], path: str, where: str) -> None:
    """The skipped queries as a table (query_id, row, error), written even when empty so that a rerun
    never leaves a stale one."""
    import pyarrow as pa

    from .io import write_table

    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in ERRORS_SCHEMA_FIELDS])
    table = pa.table({name: [b[name] for b in invalid] for name, _ in ERRORS_SCHEMA_FIELDS}, schema=schema)
    write_table(table, path)
    if invalid:
        n = len(invalid)
        print(f"itlr: skipped {n:,} invalid quer{'y' if n == 1 else 'ies'} of {where} -> {path}", file=sys.stderr)


def cmd_eval(args) -> int:
    import pyarrow.compute as pc

    from .evaluate import evaluate, looks_like_qrels, shallow_measures
    from .io import is_trec_run, read_run
    from .scale.bulk import read_results

    measures = args.measures if isinstance(args.measures, list) else measure_list(args.measures)
    # a result folder is what `itlr search -o FOLDER` (sharded, Ray or batched search) writes; a TREC run is
    # what a first stage (BM25, ...) writes
    shape = looks_like_qrels(args.results)
    if shape:
        # A result file headed as BEIR qrels with whole-number scores has qrels' shape too: RESULTS is taken for
        # swapped arguments only where QRELS does not have that shape; where both have it, the order given stands
        # (TREC qrels, "qid 0 docid rel", are never a run).
        if os.path.isfile(args.qrels) and os.path.samefile(args.results, args.qrels):
            raise InputError("is given as both RESULTS and QRELS", args.results,
                             "a result file first, then a different qrels file")
        both = shape == "beir" and looks_like_qrels(args.qrels) is not None
        if os.path.exists(args.qrels) and not both:   # (a missing QRELS: said where it is read)
            raise InputError("holds qrels, not results (itlr eval takes RESULTS first, then QRELS)", args.results,
                             "a result file, a result folder or a TREC run; results headed as BEIR qrels are, "
                             "with whole-number scores, told from qrels by a rank column")
        if both:
            print(f"itlr: warning: {args.results} looks like qrels (whole-number scores in qrels' columns), as "
                  f"{args.qrels} does; read as RESULTS, as given (itlr eval takes RESULTS first, then QRELS)",
                  file=sys.stderr)
    if args.json is not None:  # before any work, like every -o (an empty name too: refused)
        check_output(args.json, (".json",), inputs={"results": args.results, "qrels": args.qrels}, flag="--json")
    # one reader with itlr rerank's candidates: a first stage that can be reranked can be evaluated
    table = read_results(args.results) if os.path.isdir(args.results) else read_run(args.results, "results")
    # a TREC run is judged as trec_eval judges it (its rank column ignored: the numbers a paper reports)
    ties = args.ties or ("trec_eval" if not os.path.isdir(args.results) and is_trec_run(args.results) else "rank")
    scores = evaluate(table, args.qrels, measures=measures, where=args.results, unanswered=args.unanswered,
                      ties=ties, per_query=bool(args.json), ignore_identical_ids=args.ignore_identical_ids)
    per_query = scores.pop("per_query", None)
    if args.json:   # before the table: a reader of stdout that stops early (| head) does not lose it
        import json

        from .io import atomic_file

        report = {"results": args.results, "qrels": args.qrels, "ties": ties, "unanswered": args.unanswered,
                  "ignore_identical_ids": args.ignore_identical_ids, "means": scores, "per_query": per_query}
        with atomic_file(args.json, "w", encoding="utf-8") as f:
            f.write(json.dumps(report, indent=2) + "\n")
    if args.ties == "rank" and "rank" not in table.column_names:
        print(f"itlr: warning: --ties rank, but {args.results} has no rank column: its ties are broken as trec_eval "
              "breaks them", file=sys.stderr)
    for name, value in scores.items():
        print(f"{name}\t{value:.4f}" if isinstance(value, float) else f"{name}\t{value}")
    for name, cutoff, depth in shallow_measures(table, measures):
        print(f"itlr: warning: {name} looks at {cutoff:,} results per query, {args.results} holds at most "
              f"{depth:,}: exact where that is every document of the corpus; where the corpus holds more, a deeper "
              f"run measures it (itlr search -k {cutoff}; a reranked run holds at most each query's candidates found "
              "in the index)", file=sys.stderr)
    if scores["judged_results"] == 0:
        sample = ", ".join(repr(str(d)) for d in table.column("doc_id").slice(0, 2).to_pylist())
        n = scores["judged_queries"]
        print(f"itlr: warning: none of the retrieved documents of the {n:,} judged quer{'y' if n == 1 else 'ies'} is "
              f"judged in {args.qrels} (doc ids such as {sample}): do the doc ids of the index and the qrels match?",
              file=sys.stderr)
    n, asked = scores["identical_ids"], pc.count_distinct(table.column("query_id")).as_py()
    if n and args.ignore_identical_ids:
        print(f"itlr: note: the results of {cli_common.counted(n, 'query', 'queries')} held a document with the "
              "query's own id, left out (--ignore-identical-ids)", file=sys.stderr)
    elif n * 2 >= asked:
        print(f"itlr: warning: {n:,} of the {asked:,} queries of {args.results} retrieve a document with their own "
              "id (queries drawn from the corpus, as ArguAna's): BEIR's evaluation leaves those results out, "
              "--ignore-identical-ids does the same", file=sys.stderr)
    n = scores["unanswered_queries"]
    if n and args.unanswered == "zero":
        print(f"itlr: warning: {n:,} of the {n + scores['judged_queries']:,} queries of {args.qrels} have no results "
              "and count as 0 in the means (--unanswered skip leaves them out)", file=sys.stderr)
    return 0


def cmd_translate(args) -> int:
    from .translate import check_translator_options, run_translate_cli

    # (.jsonl too: translations a person reads or corrects by hand, then searches as a query file)
    check_output(args.output, (".arrow", ".parquet", ".jsonl"), inputs={"queries": args.queries})
    check_translator_options(args)  # an option of another translator would be silently ignored
    return run_translate_cli(args)


def cmd_bench(args) -> int:
    """``itlr bench INDEX QUERIES``: see :mod:`itlr_gpu.bench`."""
    import json

    from . import bench
    from .compiler import compile_queries
    from .io import atomic_file, read_queries
    from .ops import Ops

    if args.json is not None:  # before any work, like every -o (an empty name too: refused)
        check_output(args.json, (".json",), inputs={"index": args.index, "queries": args.queries}, flag="--json")
    fallback = cli_common.fallback_list(args)
    index = scale_cli.load_index(args.index)
    table = read_queries(args.queries)
    invalid: list[dict] | None = [] if args.skip_invalid else None
    queries, ids, field = queries_from_table(table, args.field, args.queries, invalid, fallback=fallback,
                                             skip_hint="--skip-invalid benchmarks the valid ones")
    cli_common.report_fallback(fallback or [], table.num_rows, args.queries)
    if invalid:
        first = invalid[0]
        print(f"itlr: note: {cli_common.counted(len(invalid), 'invalid query', 'invalid queries')} of "
              f"{table.num_rows:,} left out (first {first['query_id']!r}, {args.queries} row {first['row']}: "
              f"{first['error']})", file=sys.stderr)
    n = len(index)
    if args.k > n:
        raise InputError(f"k={args.k} is above the corpus size {n:,}", "-k", f"an integer in 1..{n}")
    program = compile_queries(queries, ids)
    single = bench.is_single_term(program)
    available = bench.available_backends(single)
    wanted = available if args.backends == "auto" else args.backends
    for b in wanted:
        if b not in available:
            why = " (single-term queries only)" if b == "faiss" and not single and bench.faiss_available() else ""
            raise InputError(f"backend {b!r} is not available here{why}", "--backends",
                             "one or more of " + ", ".join(available))
    encoder = cli_common.query_encoder(args.model or index_model_path(index, args.index), index)
    index.check_encoder(encoder)
    report = bench.measure(index, program, encoder, Ops.parse(args.ops), args.k, wanted, warmup=args.warmup,
                           repeat=args.repeat, chunk_size=args.chunk_size, min_time=args.min_time)
    report["index"] = {"path": args.index, **report["index"]}
    report["queries"] = {"path": args.queries, **report["queries"]}
    report["queries"].update(field=field, left_out=len(invalid or []), by_text=len(fallback or []))
    if args.json:   # before the table: a reader of stdout that stops early (| head) does not lose it
        with atomic_file(args.json, "w", encoding="utf-8") as f:
            f.write(json.dumps(report, indent=2) + "\n")
    print(bench.render(report))
    if args.backends == "auto" and not single and bench.faiss_available():
        print("itlr: note: faiss left out: it runs single-term queries only, and some of these queries hold "
              "more terms", file=sys.stderr)
    return 0


def cmd_demo(args) -> int:
    from .demo.run import run_demo

    run_demo(n_docs=args.docs, per_template=args.per_template, seed=args.seed, model=args.model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
