"""Bulk jobs: queries in batches, results as a partitioned dataset that survives interruption.

Output folder layout::

    OUT/_itlr_job.json       what the job is (its key, below) and which parts are complete
    OUT/part-00000.parquet   results of queries [0, batch_size)   (RESULT_SCHEMA)
    OUT/part-00001.parquet   ...

Every file that is not data starts with ``_`` or ``.`` (temporaries are
``.part-00003.parquet.itlr-tmp-PID-XXXX``), the names Arrow, DuckDB, Polars and
Spark skip, so ``pyarrow.dataset.dataset("OUT")`` reads the result as it stands.

Each part is written atomically (temporary file, fsync, rename) and only then
recorded in the job file (also replaced atomically), so after a crash or
``kill -9`` every part the job file lists is complete.  Rerunning the same
command resumes: listed parts whose file is intact are skipped, everything
else is recomputed.  The job key covers everything that changes the results --
the queries, the index matrix and its doc ids (checksums), the query encoder,
k, ops, the scoring options, the scorer version, the batch size and part
format -- and a rerun that differs in any of them is refused with one line
saying what differs.  Scoring is deterministic, so the finished dataset equals
an uninterrupted run's, row for row.

Folders written before the job key covered doc ids and encoder (a
``manifest.json`` of format ``itlr-bulk/1``) are refused with a message: they
cannot be resumed safely; rerun into a new folder.  The job file and folder are
created only when the first part is written, so a job that fails before that
leaves nothing behind.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sys
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pyarrow as pa

from ..compiler import Program, compile_queries
from ..encoders import Encoder, encode_queries
from ..errors import InputError, ItlrError
from ..index import Index
from ..index import file_sha256
from ..io import RESULT_SCHEMA, write_table
from ..output import JOB_FILE, LOCK_FILE, atomic_file, check_output_folder, folder_lock, is_temp_name, remove_stale_temps
from ..validate import read_arrow_file, read_json_file, read_parquet_file
from ..ops import Ops
from ..query import Node, Term, canonical
from ..query.printer import printed

__all__ = ["BULK_FORMAT", "JOB_FILE", "BatchSearcher", "run_bulk", "read_results", "queries_checksum", "options_key",
           "check_unique_ids", "is_dataset_path", "encode_terms", "doc_ids_checksum", "encoder_identity"]

BULK_FORMAT = "itlr-bulk/2"
LEGACY_MANIFEST = "manifest.json"  # itlr-bulk/1 folders
PART_FILE = "part-{:05d}{}"
PART_FORMATS = (".parquet", ".arrow")
DEFAULT_BATCH_SIZE = 4096
TERM_CACHE_BYTES = 256 << 20   # a job's term vectors kept across batches (most recently used)
# Bump when the scores or the tie order any backend produces change (a resumed job must not mix versions).
SCORER_VERSION = 1
# The keys that decide the output: a rerun must match them all.
JOB_KEYS = ("queries_checksum", "num_queries", "k", "ops", "index_checksum", "doc_ids_checksum", "encoder",
            "options", "scorer_version", "batch_size", "part_format")


def is_dataset_path(path: str | os.PathLike) -> bool:
    """An existing folder, a path ending with a slash (``run.v2/``) or a path without any extension names a
    dataset folder.

    A file name with another extension (``out.csv``) is neither: the CLI rejects it.
    """
    if str(path).endswith(("/", os.sep)):
        return True
    if str(path).lower().endswith(PART_FORMATS):
        return False  # out.arrow is a file even where a folder of that name exists (the CLI refuses it)
    p = Path(path)
    return p.is_dir() or p.suffix == ""


def check_unique_ids(ids: Sequence[str], where: str = "queries") -> None:
    seen: dict[str, int] = {}
    for row, qid in enumerate(ids):
        if qid in seen:
            raise InputError(f"query_id {qid!r} repeats at row {row} (first seen at row {seen[qid]})", where,
                             "unique query ids (results are keyed by query_id)")
        seen[qid] = row


def _query_key(q: str | Node) -> str:
    if isinstance(q, str):
        return "expr\t" + q
    if isinstance(q, Term):
        return "text\t" + q.text
    return "ast\t" + printed(q)   # (a key: no length limit, as compile_queries has none)


def queries_checksum(ids: Sequence[str], queries: Sequence[str | Node]) -> str:
    """SHA-256 over (id, query) pairs in order; expressions and embedded texts hash differently."""
    h = hashlib.sha256()
    for qid, q in zip(ids, queries):
        h.update(json.dumps([str(qid), _query_key(q)], ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


def options_key(options: Any, whole_texts: dict[str, str] | None, ids: Sequence[str]) -> str | None:
    """The scoring options as a job records them; with a hybrid, the whole-query texts it embeds too (a
    query file whose ``text`` column changed scores differently under the same expressions)."""
    if options is None or not options.active:
        return None
    key = str(options)
    if options.hybrid is not None and whole_texts is not None:
        h = hashlib.sha256(json.dumps([whole_texts.get(str(i)) for i in ids], ensure_ascii=False).encode("utf-8"))
        key += f",whole_texts=sha256:{h.hexdigest()}"
    return key


def doc_ids_checksum(index: Index) -> str:
    """SHA-256 of the index's doc ids (lengths, then bytes): two indexes with one matrix but other ids differ."""
    ids = index.doc_ids.combine_chunks() if isinstance(index.doc_ids, pa.ChunkedArray) else index.doc_ids
    if not pa.types.is_string(ids.type):
        ids = ids.cast(pa.string())
    bufs = ids.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int32, count=len(ids) + 1, offset=ids.offset * 4)
    h = hashlib.sha256()
    h.update((offsets - offsets[0]).astype("<i8").tobytes())
    if bufs[2] is not None:
        h.update(memoryview(bufs[2])[int(offsets[0]):int(offsets[-1])])
    return "sha256:" + h.hexdigest()


def encoder_identity(encoder: Any) -> str:
    """What identifies a query encoder in a job key: its class, name, (for a local model) folder and the
    settings that decide its vectors (backend, precision, max length, weights: ``auto`` may pick another
    backend on another machine or installation, and a resumed job must not mix two encoders)."""
    from ..encoders import DEFAULT_MODEL_NAME

    name = getattr(encoder, "name", None)
    parts = [type(encoder).__name__, str(name) if name is not None else "?"]
    path = getattr(encoder, "path", None)
    if path is not None and name != DEFAULT_MODEL_NAME:
        parts.append(os.path.realpath(str(path)))
    settings = getattr(encoder, "settings", None)
    if isinstance(settings, dict):
        parts.append(",".join(f"{k}={settings[k]}" for k in sorted(settings) if k != "model"))
    return ":".join(parts)


def _write_json_atomic(obj: Any, path: Path) -> None:
    with atomic_file(path, "w", encoding="utf-8") as f:  # fsyncs the file and its folder
        json.dump(obj, f, indent=2)
        f.write("\n")


# --------------------------------------------------------------------------- scoring one batch


def encode_terms(index: Index, program: Program, encoder: Encoder,
                 cache: "OrderedDict[str, np.ndarray] | None" = None) -> np.ndarray:
    """The program's term embeddings, L2-normalised float32 (T, d), checked against the index.

    ``cache`` (term text -> vector, kept across a job's batches): only terms not in it are encoded, and
    it keeps the most recently used vectors up to :data:`TERM_CACHE_BYTES`.  A term's vector does not
    depend on the batch it is encoded in, so a job's result is the same with or without it."""
    index.check_encoder(encoder)
    if cache is None:
        return encode_queries(encoder, program.terms, index.dim)
    missing = [t for t in program.terms if t not in cache]   # a program's terms are distinct
    if missing:
        for text, vector in zip(missing, encode_queries(encoder, missing, index.dim)):
            cache[text] = vector
    out = np.empty((len(program.terms), index.dim), dtype=np.float32)
    for i, text in enumerate(program.terms):
        cache.move_to_end(text)
        out[i] = cache[text]
    cap = max(len(program.terms), TERM_CACHE_BYTES // max(1, 4 * index.dim))
    while len(cache) > cap:
        cache.popitem(last=False)
    return out


@dataclass
class BatchSearcher:
    """Scores one batch of queries into a result table, in memory, out of core, or on Ray.

    ``mode``: ``"memory"`` (the backend over the whole matrix), ``"shards"``
    (:func:`~itlr_gpu.scale.shards.search_out_of_core`) or ``"ray"``
    (:class:`~itlr_gpu.scale.distributed.ShardPool`: each shard read once into a Ray actor and kept for
    every batch; ``resident=False``: :func:`~itlr_gpu.scale.distributed.search_ray`'s tasks, which re-read
    it per batch; needs ``index.path``).  Call :meth:`close` when done.
    """

    index: Index
    encoder: Encoder
    k: int = 10
    ops: Ops | str | None = None
    mode: str = "memory"
    device: str = "auto"
    backend: str = "auto"
    chunk_size: int | None = None
    shard_rows: int | None = None
    memory_cap: int | str | None = None
    ray_config: Any = None
    on_docs: Callable[[int], None] | None = None
    options: Any = None                          # itlr_gpu.scoring.ScoreOptions (None or inactive: off)
    whole_texts: dict[str, str] | None = None    # query id -> whole-query text for the hybrid
    resident: bool = True                        # ray: shards stay in actors across batches (ShardPool)
    _pool: Any = field(default=None, init=False, repr=False)
    _sample: Any = field(default=None, init=False, repr=False)   # (device, the options' document sample): read once
    _terms: "OrderedDict[str, np.ndarray]" = field(default_factory=OrderedDict, init=False, repr=False)

    def __post_init__(self) -> None:
        self.ops = Ops.parse(self.ops)
        if self.mode not in ("memory", "shards", "ray"):
            raise InputError(f"unknown mode {self.mode!r}", "BatchSearcher", "memory, shards or ray")
        if self.mode == "ray" and self.index.path is None:
            raise InputError("a Ray job needs an index saved on disk", "index", "an index folder on a shared path")
        if self.options is not None and getattr(self.options, "calibration", None) == "percentile":
            raise InputError("percentile calibration does not combine with a search in batches, out-of-core shards "
                             "or Ray (it needs every document's score at once)", "--calibration",
                             "equalize, zscore, minmax or none")

    def __call__(self, ids: Sequence[str], queries: Sequence[str | Node]) -> pa.Table:
        from ..backends import get_backend, resolve_device
        from ..engine import check_results, results_table

        program = compile_queries(queries, ids)
        # Ray workers take the device of their own node (RayConfig.use_gpus): the driver needs no GPU
        dev = resolve_device("cpu" if self.mode == "ray" else self.device)   # before the encoder runs
        if self.mode == "memory":
            get_backend(self.backend, dev)   # (a backend not here: refused before the encoder runs too)
        terms = encode_terms(self.index, program, self.encoder, self._terms)   # each term once per job
        linear = self._linear(program, queries, terms, dev)
        if self.mode == "ray" and self.resident:
            from .distributed import ShardPool

            if self._pool is None:   # each shard is read once for the whole job
                self._pool = ShardPool(self.index.path, len(self.index), self.ray_config)
            scores, rows = self._pool.search(terms, program, self.ops, self.k, on_shard=self.on_docs, linear=linear)
        elif self.mode == "ray":
            from .distributed import search_ray

            scores, rows = search_ray(self.index.path, len(self.index), terms, program, self.ops, self.k,
                                      self.ray_config, on_shard=self.on_docs, linear=linear)
        elif self.mode == "shards":
            from .shards import search_out_of_core

            scores, rows = search_out_of_core(self.index, terms, program, self.ops, self.k, dev,
                                              shard_rows=self.shard_rows, memory_cap=self.memory_cap,
                                              chunk_size=self.chunk_size, backend=self.backend,
                                              on_shard=self.on_docs, linear=linear)
        else:
            engine = get_backend(self.backend, dev)
            if linear is not None:
                scores, rows = engine.search_linear(self.index.embeddings, linear, self.k, device=dev,
                                                    chunk_size=self.chunk_size, on_chunk=self.on_docs)
            else:
                scores, rows = engine.search(self.index.embeddings, terms, program, self.ops, self.k, device=dev,
                                             chunk_size=self.chunk_size, on_chunk=self.on_docs)
        results = results_table(program.query_ids, scores, rows, self.index.doc_ids)
        check_results(results, self.ops, program, self.options)
        return results

    def close(self) -> None:
        """Release the Ray actors holding the shards (ray mode)."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def _linear(self, program: Program, queries, terms: np.ndarray, dev):
        """The scoring options folded once per batch over the whole index's sample (every shard, task
        and resumed batch then scores with the constants a single-process run uses)."""
        if self.options is None or not self.options.active:
            return None
        from ..engine import whole_query_embeddings
        from ..scoring import linearize_options
        from .shards import document_sample_read

        whole = None
        if self.options.hybrid is not None:
            texts = None if self.whole_texts is None else [self.whole_texts[i] for i in program.query_ids]
            whole = whole_query_embeddings(list(queries), texts, self.encoder, self.index.dim)
        import torch

        # Ray tasks run on their own devices; the driver folds on the CPU (a 4,096-row sample).
        fold_dev = torch.device("cpu") if self.mode == "ray" else dev
        if self._sample is None or self._sample[0] != fold_dev:
            self._sample = (fold_dev, document_sample_read(self.index.embeddings, self.options, fold_dev))
        return linearize_options(self.index.embeddings, terms, program, self.ops, self.options, whole,
                                 device=fold_dev, sample=self._sample[1])


# --------------------------------------------------------------------------- the job


@dataclass
class BulkReport:
    output: Path
    num_parts: int
    skipped: int = 0
    written: list[int] = field(default_factory=list)
    damaged: list[int] = field(default_factory=list)   # parts the job file listed whose file was missing or changed
    seconds: float = 0.0


def run_bulk(
    output_dir: str | os.PathLike,
    ids: Sequence[str],
    queries: Sequence[str | Node],
    search_batch: Callable[[Sequence[str], Sequence[str | Node]], pa.Table],
    *,
    k: int,
    ops: Ops | str | None,
    index_checksum: str | None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    part_format: str = ".parquet",
    progress: bool | None = None,
    where: str = "queries",
    options: str | None = None,
    doc_ids_checksum: str | None = None,
    encoder: str | None = None,
    check_index: Callable[[], None] | None = None,
) -> BulkReport:
    """Run (or resume) a bulk job writing ``part-NNNNN`` files and ``_itlr_job.json`` into ``output_dir``.

    ``index_checksum`` / ``doc_ids_checksum`` identify the index (matrix, ids) and
    ``encoder`` the query encoder (:func:`encoder_identity`); with ``k``, ``ops``,
    ``options`` and :data:`SCORER_VERSION` they form the job key a resume must match.  ``check_index`` raises
    where the index's files changed since the job opened them (:func:`~itlr_gpu.scale.shards.check_unchanged`):
    it runs after each batch, before its part is written, so no part of other vectors is ever recorded (by
    default, with a :class:`BatchSearcher`, its index's check).
    """
    if check_index is None and isinstance(search_batch, BatchSearcher):
        from .shards import check_unchanged

        check_index = functools.partial(check_unchanged, search_batch.index)
    ids = [str(i) for i in ids]
    queries = list(queries)
    if len(ids) != len(queries):
        raise InputError(f"{len(ids)} ids for {len(queries)} queries", where, "one id per query")
    if not ids:
        raise InputError("no queries", where, "at least one query")
    check_unique_ids(ids, where)
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise InputError(f"batch size {batch_size!r}", "--batch-size", "a positive integer")
    if part_format not in PART_FORMATS:
        raise InputError(f"part format {part_format!r}", "part_format", " or ".join(PART_FORMATS))
    compile_queries(queries, ids)  # a query that does not parse fails the job before any part is written
    out = check_output_folder(output_dir)
    num_parts = -(-len(ids) // batch_size)
    job = {
        "queries_checksum": queries_checksum(ids, queries), "num_queries": len(ids), "k": int(k),
        "ops": str(Ops.parse(ops)), "index_checksum": index_checksum, "doc_ids_checksum": doc_ids_checksum,
        "encoder": encoder, "options": options or "none", "scorer_version": SCORER_VERSION,
        "batch_size": int(batch_size), "part_format": part_format,
    }
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    accepted = False   # the folder's job file was read and this command's job is the same one
    try:
        with folder_lock(out):   # before the job file is read: a second job into this folder is refused
            manifest = _open_manifest(out, job, num_parts)
            accepted = True
            return _run_parts(out, manifest, ids, queries, search_batch, batch_size, part_format, progress,
                              check_index)
    except BaseException as err:
        if created:
            _remove_if_empty(out)  # a job that failed before its first part leaves nothing behind
        parts = sum(1 for _ in out.glob("part-*")) if out.is_dir() else 0
        if parts and accepted and isinstance(err, ItlrError) and not _finished(out):
            # (an interrupt says how to resume on its own; a finished job refused by a different command is
            # untouched and still readable; a folder refused before any work, a different job's or one that
            # cannot be resumed, has its own advice)
            err.details = [*getattr(err, "details", ()),
                           f"{out} keeps the {parts} part(s) finished before this error, marked incomplete "
                           "(readers refuse the folder): rerun the same command to resume once the cause lies "
                           "outside the queries and options (disk space, memory, a file); changed queries or "
                           "options need a new output folder, or this one deleted"]
        raise


def _finished(out: Path) -> bool:
    """Whether the folder's job file says its job is complete."""
    try:
        return json.loads((out / JOB_FILE).read_text(encoding="utf-8")).get("complete") is True
    except (OSError, ValueError, AttributeError):
        return False


def _remove_if_empty(out: Path) -> None:
    try:
        remove_stale_temps(out)
        if out.is_dir() and not any(out.iterdir()):
            out.rmdir()
    except OSError:
        pass


def _run_parts(out: Path, manifest: dict[str, Any], ids: list[str], queries: list[Any],
               search_batch: Callable[[Sequence[str], Sequence[str | Node]], pa.Table], batch_size: int,
               part_format: str, progress: bool | None,
               check_index: Callable[[], None] | None = None) -> BulkReport:
    num_parts = manifest["num_parts"]
    report = BulkReport(out, num_parts)
    done = manifest["parts"]
    todo = []
    for p in range(num_parts):
        entry = done.get(str(p))
        if entry is not None and _part_ok(out, entry, PART_FILE.format(p, part_format)):
            report.skipped += 1
        else:
            if entry is not None:
                report.damaged.append(p)
            done.pop(str(p), None)
            todo.append(p)
    t0 = time.monotonic()
    show = sys.stderr.isatty() if progress is None else progress
    from tqdm.auto import tqdm

    finished_q = sum(min(batch_size, len(ids) - p * batch_size) for p in range(num_parts) if str(p) in done)
    with tqdm(total=len(ids), initial=finished_q, unit="q", unit_scale=True, desc="bulk search",
              disable=not show, dynamic_ncols=True) as bar:
        for p in todo:
            lo, hi = p * batch_size, min(len(ids), (p + 1) * batch_size)
            bar.set_postfix_str(f"batch {p + 1}/{num_parts}")
            table = search_batch(ids[lo:hi], queries[lo:hi])
            if check_index is not None:
                check_index()
            if table.schema != RESULT_SCHEMA:
                table = table.cast(RESULT_SCHEMA)
            name = PART_FILE.format(p, part_format)
            if not (out / JOB_FILE).is_file():  # the job file appears with the first part
                _write_json_atomic(manifest, out / JOB_FILE)
            write_table(table, out / name)
            done[str(p)] = {"file": name, "queries": [lo, hi], "rows": table.num_rows,
                            "sha256": file_sha256(out / name)}
            manifest["complete"] = len(done) == num_parts
            _write_json_atomic(manifest, out / JOB_FILE)
            report.written.append(p)
            bar.update(hi - lo)
    if not manifest.get("complete"):
        manifest["complete"] = True
        _write_json_atomic(manifest, out / JOB_FILE)
    report.seconds = time.monotonic() - t0
    return report


# How a job key reads in a refusal; checksums are named, not shown.
_JOB_KEY_NAMES = {
    "queries_checksum": "the queries (their ids, or the expressions or texts scored: --field, --fallback-text)",
    "num_queries": "the number of queries", "index_checksum": "the index's vectors",
    "doc_ids_checksum": "the index's doc ids", "encoder": "the query encoder",
    "options": "the scoring options (or the texts --hybrid embeds)", "scorer_version": "the scorer's version",
    "batch_size": "--batch-size", "part_format": "--part-format", "ops": "--ops"}


def _open_manifest(out: Path, job: dict[str, Any], num_parts: int) -> dict[str, Any]:
    """The job file of a job to resume, or a new one (written with the first part)."""
    legacy = out / LEGACY_MANIFEST
    if legacy.is_file() and not (out / JOB_FILE).exists():
        try:
            old = read_json_file(legacy, "a bulk-job manifest")
        except InputError:
            old = {}
        if old.get("format") == "itlr-bulk/1":
            raise InputError("bulk folder written by an older itlr-gpu (manifest.json, itlr-bulk/1), whose job key "
                             "does not cover doc ids and encoder: it cannot be resumed safely", str(out),
                             "a new output folder (or delete this one and rerun)")
    jp = out / JOB_FILE
    if jp.is_file():
        manifest = read_json_file(jp, "the _itlr_job.json of an itlr bulk job (delete the folder to start over)")
        if manifest.get("format") != BULK_FORMAT:
            raise InputError(f"job file has format {manifest.get('format')!r}", str(jp),
                             f"format {BULK_FORMAT!r} (use a new output folder)")
        old = manifest.get("job") if isinstance(manifest.get("job"), dict) else {}
        diffs = [_JOB_KEY_NAMES.get(key, key) if key.endswith("checksum") else
                 f"{_JOB_KEY_NAMES.get(key, key)} (was {old.get(key)!r}, now {job[key]!r})"
                 for key in JOB_KEYS if old.get(key) != job[key]]
        if diffs:
            done = manifest.get("complete") is True
            raise InputError(f"this folder holds {'a finished' if done else 'an interrupted'} job that differs from "
                             "this command in " + "; ".join(diffs), str(out),
                             "the same queries, --field, index, encoder, -k, --ops, scoring options and --batch-size "
                             f"to {'reuse' if done else 'resume'} it, or a new output folder")
        if manifest.get("num_parts") != num_parts:
            raise InputError(f"job file has num_parts {manifest.get('num_parts')!r}", str(jp), f"{num_parts}")
        if not isinstance(manifest.get("parts"), dict):
            manifest["parts"] = {}
        check_no_foreign_files(out, num_parts, job["part_format"], "then rerun to resume")
        return manifest
    if out.exists():
        remove_stale_temps(out)
        others = sorted(n for n in os.listdir(out) if not is_temp_name(n) and n != LOCK_FILE)
        if others:
            shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
            raise InputError(f"folder is not empty and has no {JOB_FILE} (holds {shown})", str(out),
                             "a new or empty folder for the result dataset")
    return {"format": BULK_FORMAT, "job": job, "num_parts": num_parts, "parts": {}, "complete": False}


def _intact_part(out: Path, entry: Any, name: str) -> bytes | None:
    """The bytes of the part ``name`` in ``out`` when ``entry`` (its job-file record) lists that file and its
    checksum matches them; None when it is missing or changed (read once: checked, then parsed from these bytes)."""
    if not isinstance(entry, dict) or entry.get("file") != name:
        return None
    try:
        data = (out / name).read_bytes()
    except OSError:
        return None
    return data if "sha256:" + hashlib.sha256(data).hexdigest() == entry.get("sha256") else None


def _part_ok(out: Path, entry: Any, name: str) -> bool:
    return _intact_part(out, entry, name) is not None


def _read_part(out: Path, entry: Any, name: str) -> pa.Table:
    """The part ``name`` as the job wrote it, or an InputError."""
    data = _intact_part(out, entry, name)
    if data is None:
        raise InputError(f"{name} is missing or changed since the job wrote it", str(out),
                         "the parts the job file records (rerun the same command to recompute them)")
    read = read_parquet_file if name.endswith(".parquet") else read_arrow_file
    return read(out / name, data=data)


def check_no_foreign_files(out: Path, num_parts: int, part_format: str, then: str) -> None:
    """Refuse a job's folder that holds files the job did not write.  The folder is read whole as one dataset
    (pyarrow.dataset, DuckDB, Polars): a file of another kind would make it unreadable, another part file would
    add its rows to what those readers see.  Names starting with '_' or '.' are skipped by those readers
    ("_errors.arrow" may stay), and so are this package's temporaries."""
    own = {PART_FILE.format(p, part_format) for p in range(num_parts)} | {JOB_FILE, LOCK_FILE}
    others = sorted(n for n in os.listdir(out) if n not in own and not is_temp_name(n)
                    and not n.startswith(("_", ".")))
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise InputError(f"the job's folder also holds {shown}, which is not a part of this job", str(out),
                         f"only the job's part files, {JOB_FILE} and names starting with '_' (move the others out, "
                         f"{then})")


def read_results(output_dir: str | os.PathLike) -> pa.Table:
    """The whole result table of a finished bulk job, parts in order, each checked against the checksum the
    job file records."""
    out = Path(output_dir)
    mp = out / JOB_FILE
    if not mp.is_file():
        raise InputError(f"no {JOB_FILE}", str(out), "the output folder of an itlr bulk job")
    manifest = read_json_file(mp, "the job file of an itlr bulk job")
    n = manifest.get("num_parts", 0)
    parts = manifest.get("parts", {})
    if not isinstance(n, int) or not isinstance(parts, dict):
        raise InputError("malformed job file", str(mp), "num_parts and parts written by itlr")
    missing = [p for p in range(n) if str(p) not in parts]
    if missing:
        raise InputError(f"job is incomplete: {len(missing)} of {n} parts missing (first: {missing[0]})", str(out),
                         "a finished job (rerun the same command to resume)")
    fmt = manifest.get("job", {}).get("part_format") if isinstance(manifest.get("job"), dict) else None
    if fmt not in PART_FORMATS:
        raise InputError(f"job file has part_format {fmt!r}", str(mp), " or ".join(PART_FORMATS))
    check_no_foreign_files(out, n, fmt, "then read it again")
    # the parts the job wrote, not files changed or swapped since (a resume recomputes those)
    tables = [_read_part(out, parts[str(p)], PART_FILE.format(p, fmt)) for p in range(n)]
    return pa.concat_tables(tables) if tables else RESULT_SCHEMA.empty_table()
