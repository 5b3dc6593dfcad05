"""The ``itlr`` command line.

Every user error (bad query, file, option) is printed as one ``itlr: error:``
line and exits non-zero (2 for usage and query syntax, 1 otherwise); nothing is
left half-written because every output is written atomically.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .errors import InputError, ItlrError, QuerySyntaxError
from .scale import cli as scale_cli


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args) or 0
    except QuerySyntaxError as err:
        print(f"itlr: error: {err}", file=sys.stderr)
        print(err.caret(), file=sys.stderr)
        return err.exit_code
    except ItlrError as err:
        print(f"itlr: error: {err}", file=sys.stderr)
        return err.exit_code
    except KeyboardInterrupt:
        print("itlr: interrupted", file=sys.stderr)
        return 130


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="itlr", description="Logical dense retrieval (ITLR): batch scoring engine.")
    sub = p.add_subparsers(metavar="COMMAND")

    s = sub.add_parser("index", help="build an index from a corpus or import precomputed embeddings")
    s.add_argument("corpus", nargs="?", help="BEIR folder, or .jsonl/.parquet/.arrow with doc_id (or _id), text[, title]")
    s.add_argument("-o", "--output", required=True, help="index directory to write")
    s.add_argument("--model", help="local sentence-transformers folder (default: bundled all-MiniLM-L6-v2)")
    s.add_argument("--dtype", choices=("float16", "float32"), default="float16")
    s.add_argument("--embeddings", help="import this .npy matrix (or Parquet/Arrow list<float> column) instead")
    s.add_argument("--ids", help="document ids for --embeddings: text file (one a line) or Arrow/Parquet column")
    s.add_argument("--batch-size", type=int, default=256)
    s.add_argument("--device", default="cpu", help="encoder device (cpu, cuda)")
    s.add_argument("--encoder-backend", choices=("auto", "torch", "onnx", "openvino"), default="auto",
                   help="auto: ONNX Runtime int8 on a CPU when onnxruntime is installed, else torch (recorded in "
                        "the manifest; queries are embedded the same way)")
    s.add_argument("--max-length", type=int, help="word pieces per text (default: the model's limit, 256 for MiniLM; 128 "
                        "encodes 2x faster but lost 0.021 nDCG@10 on SciFact)")
    s.add_argument("--precision", choices=("fp32", "int8", "fp16"),
                   help="default: int8 for onnx, fp16 for torch on CUDA, fp32 otherwise")
    s.set_defaults(func=cmd_index)

    s = sub.add_parser("parse", help="print the canonical form and postfix program of a query")
    s.add_argument("expr")
    s.set_defaults(func=cmd_parse)

    s = sub.add_parser("search", help="score queries against an index, write top-k as Arrow/Parquet")
    s.add_argument("index")
    s.add_argument("queries", help=".jsonl/.tsv/.parquet/.arrow with query_id and expr and/or text")
    s.add_argument("-o", "--output", required=True, help="result file (.arrow or .parquet)")
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--ops", default="product,sum,one_minus", help="AND,OR,NOT families (default %(default)s)")
    s.add_argument("--field", choices=("auto", "expr", "text"), default="auto",
                   help="expr: logical expressions; text: embed whole (baseline); auto: expr if present")
    s.add_argument("--backend", choices=("auto", "torch", "triton"), default="auto")
    s.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    s.add_argument("--model", help="encoder folder (default: the index's model, bundled MiniLM)")
    s.add_argument("--chunk-size", type=int, help="documents per chunk (default: from a 256 MiB budget)")
    g = s.add_argument_group("scoring options (beyond the paper; see itlr_gpu/scoring.py)")
    g.add_argument("--recommended", action="store_true",
                   help="the evaluated best configuration (itlr_gpu.scoring.RECOMMENDED: equalize, guard, OR as max, "
                        "hybrid; the flags below override its parts)")
    g.add_argument("--hybrid", type=float, metavar="ALPHA",
                   help="mix ALPHA * logical + (1 - ALPHA) * whole-query similarity (standardised); the whole "
                        "query is the 'text' column when present, else a rendering of the expression")
    g.add_argument("--conj-hybrid", type=float, metavar="ALPHA",
                   help="the hybrid's ALPHA for pure conjunctions (no NOT, no OR), whose whole-text embedding "
                        "already expresses the query (default: --hybrid's)")
    g.add_argument("--calibration", choices=("none", "equalize", "zscore", "minmax", "percentile"),
                   help="per-term similarity calibration against a document sample")
    g.add_argument("--guard", action="store_true", default=None,
                   help="weaken NOT of a term related to the query's positive terms")
    scale_cli.add_arguments_search(s)
    s.set_defaults(func=cmd_search)

    s = sub.add_parser("eval", help="evaluate a result file against qrels with ir-measures")
    s.add_argument("results")
    s.add_argument("qrels", help="BEIR qrels .tsv or TREC qrels")
    s.add_argument("--measures", default="nDCG@10,R@100", help="comma-separated ir-measures names")
    s.set_defaults(func=cmd_eval)

    s = sub.add_parser("translate", help="natural language -> logical expressions (rules or vLLM)")
    from .translate import add_translate_arguments  # light: the vLLM engine loads only when used

    add_translate_arguments(s)
    s.set_defaults(func=cmd_translate)

    scale_cli.add_rerank_parser(sub)
    scale_cli.add_shard_parser(sub)

    from .bench import add_bench_parser

    add_bench_parser(sub)

    s = sub.add_parser("demo", help="run the embedded demo: baseline vs logical on a shipped corpus")
    s.add_argument("--docs", type=int, default=400, help="documents in the generated corpus")
    s.add_argument("--per-template", type=int, default=4, help="queries per template")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--model", help="encoder folder (default: bundled all-MiniLM-L6-v2)")
    s.set_defaults(func=cmd_demo)
    return p


def _encoder(model: str | None, device: str = "cpu"):
    from .encoders import SentenceTransformerEncoder, default_encoder

    return default_encoder() if model is None else SentenceTransformerEncoder(model, device=device)


def _query_encoder(model: str | None, index):
    """The encoder for ``index``'s queries: embedding like its documents when its manifest records the
    encoder settings (model, max length, backend, precision), else :func:`_encoder`."""
    from .encoders import encoder_for

    recorded = index.manifest.get("encoder")
    return encoder_for(recorded, model) if recorded else _encoder(model)


def _check_output(path: str, extensions=(".arrow", ".parquet")) -> None:
    if not path.endswith(extensions):
        raise InputError(f"unknown output type {Path(path).suffix or '(none)'}", path, " or ".join(extensions))


def cmd_index(args) -> int:
    from .index import Index

    if args.embeddings:
        if args.corpus:
            raise InputError("give either CORPUS or --embeddings, not both", "itlr index")
        index = Index.from_embedding_files(args.embeddings, args.ids, dtype=args.dtype)
    elif args.corpus:
        if args.ids:
            raise InputError("--ids only goes with --embeddings", "itlr index")
        from .encoders import SentenceTransformerEncoder

        encoder = SentenceTransformerEncoder(args.model, device=args.device, backend=args.encoder_backend,
                                             max_length=args.max_length, precision=args.precision)
        index = Index.build(args.corpus, encoder, dtype=args.dtype, batch_size=args.batch_size)
    else:
        raise InputError("nothing to index", "itlr index", "CORPUS or --embeddings EMB --ids IDS")
    if args.model:  # remembered so that `itlr search` embeds queries with the same model
        index.manifest["model_path"] = os.path.abspath(args.model)
    index.save(args.output)
    print(f"indexed {len(index):,} documents (d={index.dim}, {index.dtype}) -> {args.output}")
    return 0


def cmd_parse(args) -> int:
    from .compiler import compile_queries
    from .query import canonical, parse

    node = parse(args.expr)
    program = compile_queries([node])
    print(canonical(node))
    print(program.describe(0))
    return 0


def cmd_search(args) -> int:
    from .engine import search
    from .io import read_queries, write_table
    from .query import Term

    scaled = scale_cli.wants_scale(args)  # --ray/--shard-rows/--memory-cap/--batch-size or a folder -o
    if not scaled:
        _check_output(args.output)
    if args.k <= 0:
        raise InputError(f"k={args.k}", "-k", "a positive integer")
    index = scale_cli.load_index(args.index)  # single-file or sharded index folder
    table = read_queries(args.queries)
    field = args.field
    if field == "auto":
        field = "expr" if "expr" in table.column_names else "text"
    if field not in table.column_names:
        raise InputError(f"no '{field}' column", args.queries, f"a '{field}' column")
    ids = table.column("query_id").to_pylist()
    values = table.column(field).to_pylist()
    for row, value in enumerate(values):
        if value is None or not str(value).strip():
            why = ""
            if "error" in table.column_names and table.column("error")[row].as_py():
                why = f": {table.column('error')[row].as_py()}"
            raise InputError(f"empty {field} for query {ids[row]!r}{why}", f"{args.queries} row {row}",
                             f"a non-empty {field}")
    queries = values if field == "expr" else [Term(v) for v in values]
    options = _score_options(args)
    whole = None
    if options is not None and field == "expr" and "text" in table.column_names:
        whole = table.column("text").to_pylist()
        if any(t is None or not str(t).strip() for t in whole):
            whole = None  # fall back to a rendering of each expression
    model = args.model or _index_model_path(index, args.index)
    if scaled:
        return scale_cli.run_search(args, index, queries, ids, _query_encoder(model, index), options=options,
                                    whole_texts=None if whole is None else dict(zip(ids, whole)))
    results = search(index, queries, _query_encoder(model, index), k=args.k, ops=args.ops, backend=args.backend,
                     device=args.device, query_ids=ids, chunk_size=args.chunk_size, progress=sys.stderr.isatty(),
                     score_options=options, whole_queries=whole)
    write_table(results, args.output)
    print(f"{len(ids):,} queries x {len(index):,} documents, k={args.k} -> {args.output}")
    return 0


def _score_options(args):
    """ScoreOptions from the CLI flags; None when none is given (the paper's raw composition)."""
    from .scoring import RECOMMENDED, ScoreOptions

    if not (args.recommended or args.hybrid is not None or args.calibration or args.guard
            or args.conj_hybrid is not None):
        return None
    base = RECOMMENDED if args.recommended else ScoreOptions()
    changes = {k: v for k, v in (("hybrid", args.hybrid), ("conj_hybrid", args.conj_hybrid),
                                 ("calibration", args.calibration), ("guard", args.guard)) if v is not None}
    from dataclasses import replace

    return replace(base, **changes)


def _index_model_path(index, where: str) -> str | None:
    """The model the index was built with; None means the bundled default."""
    from .encoders import DEFAULT_MODEL_NAME

    path = index.manifest.get("model_path")
    if path:
        if not os.path.isdir(path):
            raise InputError(f"the index's model folder {path} is missing", where, "--model PATH")
        return path
    model = index.manifest.get("model")
    if model not in (None, DEFAULT_MODEL_NAME):
        raise InputError(f"index was built with model {model!r}", where, "--model PATH naming that model's folder")
    if model is None:
        print(f"itlr: note: {where} records no model; embedding queries with the bundled {DEFAULT_MODEL_NAME}",
              file=sys.stderr)
    return None


def cmd_eval(args) -> int:
    from .evaluate import evaluate
    from .io import read_table

    measures = [m.strip() for m in args.measures.split(",") if m.strip()]
    scores = evaluate(read_table(args.results), args.qrels, measures=measures)
    for name, value in scores.items():
        print(f"{name}\t{value:.4f}" if isinstance(value, float) else f"{name}\t{value}")
    return 0


def cmd_translate(args) -> int:
    from .translate import run_translate_cli

    return run_translate_cli(args)


def cmd_demo(args) -> int:
    from .demo.run import run_demo

    run_demo(n_docs=args.docs, per_template=args.per_template, seed=args.seed, model=args.model)
    return 0


if __name__ == "__main__":
    sys.exit(main())
