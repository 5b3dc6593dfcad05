"""Command-line glue for scaling: ``itlr search`` options and the ``itlr rerank`` / ``itlr shard`` commands.

Wired from :mod:`itlr_gpu.cli`:

* ``add_arguments_search(search_parser)`` adds ``--ray [ADDRESS]``, ``--workers``,
  ``--shard-rows``, ``--memory-cap``, ``--batch-size`` and ``--part-format``;
* ``cmd_search`` calls :func:`check_search_args` (option combinations, ``-o`` as a
  file or a dataset folder) before reading anything, loads the index with
  :func:`load_index` (single-file or sharded) and, when ``wants_scale(args)``,
  hands over to ``run_search(args, index, queries, ids, encoder)``;
* ``add_rerank_parser(subparsers)`` and ``add_shard_parser(subparsers)`` add the commands.

Imports here are light; the heavy modules load when a command runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

import numpy as np

from .. import cli_common
from ..cli_common import (DEFAULT_OPS, byte_size, check_output, counted, index_model_path, ops_spec,
                          positive_int, queries_from_table)
from ..errors import UsageError

__all__ = ["add_arguments_search", "wants_scale", "run_search", "load_index", "add_rerank_parser",
           "add_shard_parser", "cmd_rerank", "cmd_shard"]


def _ray_address(text: str) -> str:
    """``type=`` for ``--ray``: a malformed address is a usage error (exit 2) before any file is read; whether
    a cluster answers there is checked when the job connects."""
    from .distributed import ADDRESS_FORMS, address_problem

    why = address_problem(text)
    if why:
        raise argparse.ArgumentTypeError(f"{text!r} {why} (expected {ADDRESS_FORMS})")
    return text


def add_arguments_search(parser: argparse.ArgumentParser) -> None:
    """The scaling options of ``itlr search``."""
    g = parser.add_argument_group("scaling (out-of-core, Ray, bulk jobs)")
    g.add_argument("--ray", nargs="?", const="local", default=None, metavar="ADDRESS", type=_ray_address,
                   help="score shards on Ray, each kept resident in an actor for the whole job: no ADDRESS starts a "
                        "local Ray for the job; 'auto' or HOST:PORT joins a running cluster (needs pip install "
                        "'itlr-gpu[ray]')")
    g.add_argument("--ray-stream", action="store_true",
                   help="Ray: stream each shard through a task per batch instead of keeping it resident (an index "
                        "larger than the workers' memory together)")
    g.add_argument("--workers", type=positive_int, metavar="N",
                   help="Ray: CPUs of the local Ray / shards per batch (default: GPUs of the cluster, else CPUs)")
    g.add_argument("--shard-rows", type=positive_int, metavar="N",
                   help="stream the index in shards of N rows (out-of-core; with --ray: rows per shard)")
    g.add_argument("--memory-cap", type=byte_size, metavar="SIZE",
                   help="out-of-core: bytes for shard buffers + working set, e.g. 2GiB (sets --shard-rows)")
    g.add_argument("--batch-size", type=positive_int, metavar="N",
                   help="queries per batch; with a folder -o, one resumable part per batch (default 4096)")
    g.add_argument("--part-format", choices=("parquet", "arrow"), default="parquet",
                   help="file format of the parts when -o is a folder (default %(default)s)")


def wants_scale(args: argparse.Namespace) -> bool:
    """True when ``itlr search`` must go through :func:`run_search` (any scaling option, or a folder -o)."""
    from .bulk import is_dataset_path

    return bool(getattr(args, "ray", None) is not None or getattr(args, "ray_stream", False)
                or getattr(args, "shard_rows", None)
                or getattr(args, "memory_cap", None) or getattr(args, "batch_size", None)
                or is_dataset_path(args.output))


def check_search_args(args: argparse.Namespace) -> None:
    """Usage errors of ``itlr search``'s scaling options and its ``-o``, raised before any file is read."""
    from ..output import OutputError, check_not_input, check_output_folder
    from .bulk import is_dataset_path

    if getattr(args, "workers", None) and args.ray is None:
        raise UsageError("--workers only goes with --ray", "itlr search", "--ray [ADDRESS] --workers N")
    if getattr(args, "ray_stream", False) and args.ray is None:
        raise UsageError("--ray-stream only goes with --ray", "itlr search", "--ray [ADDRESS] --ray-stream")
    if getattr(args, "memory_cap", None) and getattr(args, "shard_rows", None):
        raise UsageError("--memory-cap sets the shard size, --shard-rows too: give one of them", "itlr search",
                         "--memory-cap SIZE or --shard-rows N")
    if args.ray is not None and getattr(args, "backend", "auto") not in (None, "auto"):
        raise UsageError(f"--backend {args.backend} with --ray: each Ray worker picks the backend of its own device",
                         "itlr search", "--backend auto (the default) with --ray, or --backend without --ray")
    if args.ray is not None and getattr(args, "memory_cap", None) and not getattr(args, "ray_stream", False):
        raise UsageError("--memory-cap with --ray: resident workers hold their whole shard in memory", "itlr search",
                         "--ray --ray-stream --memory-cap SIZE (each task reads a shard within SIZE), or --ray "
                         "--shard-rows N")
    from ..io import RESULT_WRITE_EXTENSIONS
    from ..output import refuse_standard_output

    refuse_standard_output(args.output, "-o", f"a file path ({', '.join(RESULT_WRITE_EXTENSIONS)}) or a result "
                           "folder's path")
    if is_dataset_path(args.output):
        from ..index import check_not_in_index

        check_output_folder(args.output)
        check_not_in_index(args.output)
    else:
        if getattr(args, "part_format", "parquet") != "parquet":
            raise UsageError("--part-format only goes with a folder -o", "itlr search",
                             "-o FOLDER (no extension) for a resumable dataset")
        from ..io import RESULT_WRITE_EXTENSIONS

        try:
            check_output(args.output, RESULT_WRITE_EXTENSIONS)
        except OutputError as e:
            if e.what == "output path is a folder":   # "out.parquet", a folder: a file by its name, unless marked
                raise OutputError(e.what, e.where, f"{e.expected}, or this result folder with a trailing '/': "
                                                   f"{args.output.rstrip('/' + os.sep)}/") from None
            if not e.what.startswith("unknown output type"):
                raise
            raise OutputError(e.what, e.where, f"{e.expected}, or a result folder: a name without an extension, "
                                               f"an existing folder or a name ending with '/'") from None
    check_not_input(args.output, {"queries": args.queries, "index": args.index})


def load_index(path: str):
    """Open a single-file or sharded index folder (checksums verified)."""
    from .shards import load_index as _load

    return _load(path)


def check_unchanged(index: Any) -> None:
    """Refuse an index whose matrix files changed since it was opened (before a result is written)."""
    from .shards import check_unchanged as _check

    _check(index)


def _ray_config(args: argparse.Namespace):
    from .distributed import RayConfig, require_ray

    require_ray()
    cores = os.cpu_count() or 1
    if args.ray in (None, "local") and args.workers and args.workers > cores:
        print(f"itlr: warning: --workers {args.workers} on a local Ray of {cores} CPU(s): each worker holds its own "
              "encoder and buffers, and more workers than CPUs only add memory and start-up time", file=sys.stderr)
    device = getattr(args, "device", "auto") or "auto"   # cpu / cuda pin the workers' kind; auto: the cluster's
    return RayConfig(address=None if args.ray in (None, "local") else args.ray, num_workers=args.workers,
                     shard_rows=args.shard_rows, chunk_size=getattr(args, "chunk_size", None),
                     use_gpus=None if device == "auto" else str(device).startswith("cuda"))


_MANY_REMOTE_SHARDS = 64
_SHARDS_PER_CPU = 4   # resident shards share a CPU (a fraction each); each is still a process of its own


def _local_cpus(workers: int | None = None) -> int:
    """CPUs of the Ray session this process already started (a test's, a notebook's), else of the local Ray the job
    will start: ``--workers`` CPUs (``ray.init(num_cpus=N)``), or this machine's."""
    try:
        import ray

        if ray.is_initialized():
            return max(1, int(ray.cluster_resources().get("CPU", 0)))
    except (ImportError, RuntimeError, ConnectionError):   # no Ray, or a session that cannot say
        pass
    cores = os.cpu_count() or 1
    return min(workers, cores) if workers else cores   # (more workers than cores share them: the cores bound it)


def _ray_ready(config: Any, args: argparse.Namespace, index: Any) -> Any:
    """``config`` fitted to the index: ``--memory-cap`` with ``--ray-stream`` becomes the rows each task reads; a
    resident job is refused where its shards (one worker process each, ~0.4 GB before any vectors) pass four per
    CPU of a local Ray, and warned of on a cluster past 64."""
    import dataclasses

    from .shards import parse_bytes, shard_rows_for_cap

    stream = getattr(args, "ray_stream", False)
    if stream and getattr(args, "memory_cap", None):
        rows = shard_rows_for_cap(index.dim, np.dtype(index.dtype).itemsize, parse_bytes(args.memory_cap))
        config = dataclasses.replace(config, shard_rows=rows)
    if not stream and config.shard_rows:
        shards = -(-len(index) // config.shard_rows)
        cores = _local_cpus(config.num_workers)
        limit = _SHARDS_PER_CPU * cores   # (--workers sets a local Ray's CPU count, not the machine's)
        if config.address is None and shards > limit:
            raise UsageError(f"--shard-rows {config.shard_rows:,} makes {shards:,} resident shards of "
                             f"{len(index):,} documents, one worker process each, on a local Ray of {cores} CPU(s)",
                             "itlr search", f"at most {limit} shards ({_SHARDS_PER_CPU} a CPU): a larger "
                             "--shard-rows, or --ray-stream (shards become tasks, run a few at a time)")
        if config.address is not None and shards > _MANY_REMOTE_SHARDS:
            print(f"itlr: warning: --shard-rows {config.shard_rows:,} makes {shards:,} resident shards, one Ray "
                  "worker process each: the cluster needs as many CPU slots and their memory", file=sys.stderr)
    return config


def run_search(args: argparse.Namespace, index: Any, queries: Sequence[Any], ids: Sequence[str], encoder: Any,
               options: Any = None, whole_texts: dict[str, str] | None = None) -> int:
    """``itlr search`` with scaling options: in memory, out of core or on Ray; one file or a resumable dataset."""
    import pyarrow as pa

    from ..io import write_table
    from .bulk import (DEFAULT_BATCH_SIZE, PART_FILE, BatchSearcher, check_unique_ids, doc_ids_checksum,
                       encoder_identity, is_dataset_path, options_key, run_bulk)
    from .shards import index_checksum

    check_search_args(args)
    check_unique_ids(ids, args.queries)
    k_shown = cli_common.k_applied(args.k, len(index))
    if args.ray is not None:
        mode, ray_config = "ray", _ray_ready(_ray_config(args), args, index)
    else:
        mode = "shards" if (args.shard_rows or args.memory_cap) else "memory"
        ray_config = None
    searcher = BatchSearcher(index, encoder, k=args.k, ops=args.ops, mode=mode, device=args.device,
                             backend=args.backend, chunk_size=args.chunk_size, shard_rows=args.shard_rows,
                             memory_cap=args.memory_cap, ray_config=ray_config, options=options,
                             whole_texts=whole_texts, resident=not getattr(args, "ray_stream", False))
    try:
        if is_dataset_path(args.output):
            batch = args.batch_size or DEFAULT_BATCH_SIZE
            report = run_bulk(args.output, ids, queries, searcher, k=args.k, ops=args.ops,
                              index_checksum=index_checksum(index), batch_size=batch,
                              part_format="." + args.part_format, where=args.queries,
                              options=options_key(options, whole_texts, ids),
                              doc_ids_checksum=doc_ids_checksum(index), encoder=encoder_identity(encoder))
            if report.damaged:   # recomputed, but a user should know their folder was touched
                print(f"itlr: warning: {counted(len(report.damaged), 'listed part')} missing or changed on disk, "
                      f"recomputed (first: {PART_FILE.format(report.damaged[0], '.' + args.part_format)})",
                      file=sys.stderr)
            resumed = f", {counted(report.skipped, 'part')} already done" if report.skipped else ""
            print(f"{counted(len(ids), 'query', 'queries')} x {counted(len(index), 'document')}, k={k_shown:,} -> "
                  f"{args.output.rstrip(os.sep + '/')}/ ({counted(report.num_parts, 'part')}{resumed})")
            return 0
        batch = args.batch_size or len(ids)
        tables = []
        from tqdm.auto import tqdm

        with tqdm(total=len(ids), unit="q", desc="search", disable=not sys.stderr.isatty() or batch >= len(ids)) as bar:
            for lo in range(0, len(ids), batch):
                tables.append(searcher(ids[lo:lo + batch], queries[lo:lo + batch]))
                bar.update(min(batch, len(ids) - lo))
        check_unchanged(index)
        write_table(pa.concat_tables(tables), args.output)
        print(f"{counted(len(ids), 'query', 'queries')} x {counted(len(index), 'document')}, k={k_shown:,} -> "
              f"{args.output}")
        return 0
    finally:
        searcher.close()
        if mode == "ray":
            from .distributed import shutdown_if_local

            shutdown_if_local()


# --------------------------------------------------------------------------- itlr rerank


def add_rerank_parser(subparsers) -> argparse.ArgumentParser:
    s = subparsers.add_parser(
        "rerank", help="rerank first-stage candidates (BM25, TREC run, ...) with the logical score",
        description="Score each (query_id, doc_id) candidate with the query's logical expression and write "
                    "the reordered top-k (query_id, rank, doc_id, score).")
    s.add_argument("index")
    s.add_argument("queries", help=cli_common.QUERIES_HELP)
    s.add_argument("candidates", help="query_id, doc_id pairs: .tsv/.csv (header) or TREC run (qid Q0 docid rank "
                                      "score tag; .run/.trec/.txt; .gz too), .jsonl, .parquet, .arrow, or a "
                                      "result folder of itlr search")
    s.add_argument("-o", "--output", required=True, help="result file (.arrow, .parquet, or a TREC run: .trec, .run)")
    s.add_argument("-k", type=positive_int, default=10, help="results kept per query (default %(default)s)")
    s.add_argument("--ops", type=ops_spec, help=f"AND,OR,NOT families (default {DEFAULT_OPS}; given with "
                   "--recommended, its OR family replaces the recommended OR as max)")
    s.add_argument("--field", choices=("auto", "expr", "text"), default="auto",
                   help="expr: logical expressions; text: embed whole (baseline); auto: expr if present")
    s.add_argument("--device", type=cli_common.search_device_spec, default="auto",
                   help="where the reranking runs: auto, cpu, cuda or cuda:N (default auto: cuda when there is one)")
    s.add_argument("--model", help="encoder folder (default: the index's model, bundled MiniLM)")
    s.add_argument("--strict", action="store_true",
                   help="unknown doc ids (or query ids) in CANDIDATES are an error instead of a warning")
    cli_common.add_fallback_argument(s)
    cli_common.add_score_arguments(s)
    s.set_defaults(func=cmd_rerank)
    return s


def cmd_rerank(args: argparse.Namespace) -> int:
    from ..io import RESULT_WRITE_EXTENSIONS, check_run_output, read_queries, write_table
    from .rerank import print_warnings, read_candidates, rerank

    check_output(args.output, RESULT_WRITE_EXTENSIONS,
                 inputs={"queries": args.queries, "candidates": args.candidates, "index": args.index})
    options = cli_common.score_options(args, no_percentile="itlr rerank", elsewhere="itlr search takes it")
    query_table = read_queries(args.queries)
    fallback = cli_common.fallback_list(args)
    queries, ids, field = queries_from_table(query_table, args.field, args.queries, fallback=fallback)
    cli_common.report_fallback(fallback or [], query_table.num_rows, args.queries)
    candidates = read_candidates(args.candidates)
    index = load_index(args.index)
    check_run_output(args.output, ids, candidates.column("doc_id"))   # before the scoring: ids a TREC run cannot hold
    model = args.model or index_model_path(index, args.index)
    table, report = rerank(index, queries, ids, candidates, cli_common.query_encoder(model, index), k=args.k,
                           ops=args.ops, device=args.device, strict=args.strict, where=args.candidates,
                           score_options=options, whole_queries=cli_common.whole_texts(query_table, field, options,
                                                                                 queries=queries))
    print_warnings(report)
    check_unchanged(index)
    write_table(table, args.output)
    parts = [f"{n:,} {what}" for n, what in ((report.unknown_docs + report.unknown_queries, "skipped"),
                                              (report.duplicates, "repeated")) if n]
    note = f" ({', '.join(parts)})" if parts else ""
    with_candidates = len(ids) - report.queries_without_candidates
    print(f"{report.scored:,} of {counted(report.candidates, 'candidate')} scored{note} for "
          f"{counted(with_candidates, 'query', 'queries')}"
          + (f" of {len(ids):,}" if with_candidates != len(ids) else "") + f", k={args.k} -> {args.output}")
    return 0


# --------------------------------------------------------------------------- itlr shard


def add_shard_parser(subparsers) -> argparse.ArgumentParser:
    s = subparsers.add_parser("shard", help="rewrite an index as shard files (embeddings-00000.npy, ...)")
    s.add_argument("index", help="an index folder (single-file or sharded)")
    s.add_argument("-o", "--output", required=True, help="new folder for the sharded index")
    s.add_argument("--shard-rows", type=positive_int, required=True, metavar="N", help="rows per shard file")
    s.set_defaults(func=cmd_shard)
    return s


def cmd_shard(args: argparse.Namespace) -> int:
    from ..index import INDEX_FILES, check_not_in_index, check_replaceable
    from ..output import check_not_input, check_output_folder
    from .shards import save_sharded

    # before the index is read and verified: a new or empty folder, or an index folder to replace
    check_replaceable(check_output_folder(args.output), INDEX_FILES)
    check_not_input(args.output, {"index": args.index})
    check_not_in_index(args.output)
    index = load_index(args.index)
    out = save_sharded(index, args.output, args.shard_rows)   # (refuses vectors that no longer hash as opened)
    n = -(-len(index) // args.shard_rows)
    print(f"{counted(len(index), 'document')} in {counted(n, 'shard')} of at most {counted(args.shard_rows, 'row')} "
          f"-> {out}")
    return 0
