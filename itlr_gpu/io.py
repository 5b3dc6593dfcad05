"""Reading corpora, queries and tables; writing result tables atomically.

Every problem with a user's file raises :class:`~itlr_gpu.errors.InputError`
naming the file (and line, row or column) and what was expected.
"""

from __future__ import annotations

import csv
import gzip
import json
import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import InputError

__all__ = [
    "RESULT_SCHEMA",
    "read_corpus",
    "document_texts",
    "read_queries",
    "read_table",
    "write_table",
    "check_ids",
    "normalize_corpus",
]

PathLike = str | os.PathLike

RESULT_SCHEMA = pa.schema(
    [("query_id", pa.string()), ("rank", pa.int32()), ("doc_id", pa.string()), ("score", pa.float32())]
)

CORPUS_EXTENSIONS = (".jsonl", ".jsonl.gz", ".parquet", ".arrow")
QUERY_EXTENSIONS = (".jsonl", ".jsonl.gz", ".tsv", ".parquet", ".arrow")
TABLE_EXTENSIONS = (".arrow", ".parquet", ".jsonl", ".jsonl.gz")
WRITE_EXTENSIONS = (".arrow", ".parquet")


# --------------------------------------------------------------------------- helpers


def _existing(path: PathLike, what: str) -> Path:
    p = Path(path)
    if not p.exists():
        raise InputError(f"{what} not found", str(p), "an existing path")
    return p


def _kind(path: Path, accepted: tuple[str, ...], what: str) -> str:
    """The accepted extension ``path`` ends with (longest match, case-insensitive)."""
    name = path.name.lower()
    for ext in sorted(accepted, key=len, reverse=True):
        if name.endswith(ext):
            return ext
    raise InputError(
        f"unknown {what} file type '{path.suffix or path.name}'", str(path), "one of " + ", ".join(accepted)
    )


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; errors name ``file:line``."""
    opener = gzip.open if path.name.lower().endswith(".gz") else open
    lineno = 0
    try:
        with opener(path, "rb") as f:
            for lineno, raw in enumerate(f, start=1):
                where = f"{path}:{lineno}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InputError(f"invalid UTF-8 ({e.reason})", where, "UTF-8 text") from e
                if lineno == 1:
                    line = line.lstrip("\ufeff")
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as e:
                    what = f"malformed JSON ({e.msg}, column {e.colno})"
                    raise InputError(what, where, "one JSON object per line") from e
                if not isinstance(obj, dict):
                    raise InputError(f"line is a JSON {type(obj).__name__}", where, "one JSON object per line")
                yield lineno, obj
    except (gzip.BadGzipFile, EOFError) as e:
        raise InputError(f"corrupt gzip data after line {lineno} ({e})", str(path), "a valid .gz file") from e


def _table_from_rows(rows: list[dict[str, Any]], where: str) -> pa.Table:
    """Build a table from JSON objects whose keys may differ (missing keys become null)."""
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        try:
            columns[name] = pa.array(values)
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            what = f"column '{name}' mixes incompatible value types ({e})"
            raise InputError(what, where, "one JSON type per field") from e
    return pa.table(columns)


def _read_arrow(path: Path) -> pa.Table:
    """Read an Arrow IPC file, falling back to the IPC stream format."""
    try:
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_file(source).read_all()
    except pa.ArrowInvalid:
        pass
    try:
        with pa.memory_map(str(path)) as source:
            return pa.ipc.open_stream(source).read_all()
    except pa.ArrowInvalid as e:
        raise InputError(f"not a readable Arrow IPC file or stream ({e})", str(path), "an Arrow IPC file") from e


def _read_parquet(path: Path) -> pa.Table:
    try:
        return pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as e:
        raise InputError(f"not a readable Parquet file ({e})", str(path), "a Parquet file") from e


def _rename_alias(table: pa.Table, name: str, alias: str) -> pa.Table:
    """Rename column ``alias`` (e.g. BEIR's ``_id``) to ``name`` when ``name`` is absent."""
    if name not in table.column_names and alias in table.column_names:
        names = [name if c == alias else c for c in table.column_names]
        table = table.rename_columns(names)
    return table


def _require(table: pa.Table, columns: list[str], where: str, hint: str = "") -> None:
    missing = [c for c in columns if c not in table.column_names]
    if missing:
        raise InputError(
            f"missing column(s) {', '.join(repr(c) for c in missing)}; found {table.column_names}",
            where,
            f"columns {', '.join(columns)}{hint}",
        )


def _as_string(table: pa.Table, name: str, where: str, fill_null: str | None = None) -> pa.Table:
    """Cast column ``name`` to string (integer ids become their decimal text)."""
    col = table.column(name)
    if not pa.types.is_string(col.type):
        ok = pa.types.is_large_string(col.type) or pa.types.is_integer(col.type) or pa.types.is_null(col.type)
        if not ok:
            raise InputError(f"column '{name}' has type {col.type}", where, "strings")
        col = pc.cast(col, pa.string())
    if fill_null is not None and col.null_count:
        col = pc.fill_null(col, fill_null)
    return table.set_column(table.column_names.index(name), name, col)


def check_ids(ids: pa.Array | pa.ChunkedArray, where: str, kind: str = "id") -> None:
    """Raise InputError naming the first null, empty or duplicate id and its 0-based row."""
    if ids.null_count:
        row = pc.index(pc.is_null(ids), True).as_py()
        raise InputError(f"null {kind} at row {row}", where, f"a non-empty {kind} on every row")
    empty = pc.equal(pc.utf8_length(ids), 0)
    if pc.any(empty).as_py():
        row = pc.index(empty, True).as_py()
        raise InputError(f"empty {kind} at row {row}", where, f"a non-empty {kind} on every row")
    if _has_duplicates(ids):
        seen: dict[str, int] = {}
        for row, value in enumerate(ids.to_pylist()):
            if value in seen:
                raise InputError(
                    f"duplicate {kind} '{value}' at row {row} (first seen at row {seen[value]})",
                    where,
                    f"unique {kind}s",
                )
            seen[value] = row


def _has_duplicates(ids: pa.Array | pa.ChunkedArray) -> bool:
    """Sort, then compare neighbours: O(ids) extra memory.  (``pc.unique``'s hash table cost ~200 bytes
    per id, kept afterwards by Arrow's allocator: 58 MiB for 300,000 ids, gigabytes at 10M.)"""
    if len(ids) < 2:
        return False
    ordered = ids.take(pc.array_sort_indices(ids))
    return bool(pc.any(pc.equal(ordered.slice(1), ordered.slice(0, len(ordered) - 1))).as_py())


# --------------------------------------------------------------------------- corpus


def _corpus_rows(path: Path) -> pa.Table:
    ids: list[str] = []
    texts: list[str] = []
    titles: list[str] = []
    for lineno, obj in _iter_jsonl(path):
        where = f"{path}:{lineno}"
        key = "doc_id" if "doc_id" in obj else "_id"
        if key not in obj or "text" not in obj:
            missing = [k for k in ("doc_id", "text") if k not in obj and not (k == "doc_id" and "_id" in obj)]
            raise InputError(f"missing field(s) {', '.join(missing)}", where, "fields doc_id (or _id) and text")
        doc_id = obj[key]
        if doc_id is None or doc_id == "":
            raise InputError(f"{'null' if doc_id is None else 'empty'} {key}", where, "a non-empty document id")
        if not isinstance(doc_id, (str, int)) or isinstance(doc_id, bool):
            raise InputError(f"{key} is a JSON {type(doc_id).__name__}", where, "a string or integer id")
        text, title = obj["text"], obj.get("title")
        for name, value in (("text", text), ("title", title)):
            if value is not None and not isinstance(value, str):
                raise InputError(f"{name} is a JSON {type(value).__name__}", where, "a string")
        ids.append(str(doc_id))
        texts.append(text or "")
        titles.append(title or "")
    return pa.table({"doc_id": pa.array(ids, pa.string()), "text": pa.array(texts, pa.string()),
                     "title": pa.array(titles, pa.string())})


def normalize_corpus(table: pa.Table, where: str) -> pa.Table:
    """Validate a corpus table and return it as (doc_id, text, title) strings, title "" when absent."""
    table = _rename_alias(table, "doc_id", "_id")
    _require(table, ["doc_id", "text"], where, " (doc_id may be named _id; title optional)")
    if table.num_rows == 0:
        raise InputError("corpus is empty", where, "at least one document")
    if "title" not in table.column_names:
        table = table.append_column("title", pa.array([""] * table.num_rows, pa.string()))
    table = _as_string(table, "doc_id", where)
    table = _as_string(table, "text", where, fill_null="")
    table = _as_string(table, "title", where, fill_null="")
    table = table.select(["doc_id", "text", "title"])
    check_ids(table.column("doc_id"), where, "doc_id")
    return table.combine_chunks()


def read_corpus(path: PathLike) -> pa.Table:
    """Read a corpus as a table of string columns ``doc_id``, ``text``, ``title``.

    ``path`` is a BEIR folder (with ``corpus.jsonl`` or ``corpus.jsonl.gz``) or a
    ``.jsonl``/``.jsonl.gz``/``.parquet``/``.arrow`` file; ``_id`` is accepted for ``doc_id``.
    """
    p = _existing(path, "corpus")
    if p.is_dir():
        found = [p / n for n in ("corpus.jsonl", "corpus.jsonl.gz") if (p / n).is_file()]
        if not found:
            raise InputError("folder has no corpus file", str(p),
                             "a BEIR folder containing corpus.jsonl or corpus.jsonl.gz")
        p = found[0]
    kind = _kind(p, CORPUS_EXTENSIONS, "corpus")
    if kind in (".jsonl", ".jsonl.gz"):
        table = _corpus_rows(p)
    elif kind == ".parquet":
        table = _read_parquet(p)
    else:
        table = _read_arrow(p)
    return normalize_corpus(table, str(p))


def document_texts(table: pa.Table) -> list[str]:
    """Texts to encode, BEIR convention: ``title + " " + text`` when the title is non-empty."""
    titles = table.column("title").to_pylist() if "title" in table.column_names else None
    texts = table.column("text").to_pylist()
    if titles is None:
        return [t or "" for t in texts]
    return [f"{title} {text or ''}" if title else (text or "") for title, text in zip(titles, texts)]


# --------------------------------------------------------------------------- queries


def _read_tsv(path: Path) -> pa.Table:
    """A TSV with a header row; every value is a string, quotes are kept literally."""
    with open(path, encoding="utf-8-sig", newline="") as f:
        try:
            rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))
        except UnicodeDecodeError as e:
            raise InputError(f"invalid UTF-8 ({e.reason})", str(path), "UTF-8 text") from e
    rows = [(n, r) for n, r in enumerate(rows, start=1) if r and any(c.strip() for c in r)]
    if not rows:
        raise InputError("query file is empty", str(path), "a header row and at least one query")
    header = [c.strip() for c in rows[0][1]]
    dupes = sorted({c for c in header if header.count(c) > 1})
    if dupes:
        raise InputError(f"header repeats column(s) {dupes}", f"{path}:{rows[0][0]}", "unique column names")
    columns: list[list[str]] = [[] for _ in header]
    for lineno, row in rows[1:]:
        if len(row) != len(header):
            raise InputError(
                f"{len(row)} tab-separated fields, header has {len(header)}", f"{path}:{lineno}",
                "one value per header column",
            )
        for values, value in zip(columns, row):
            values.append(value)
    return pa.table({name: pa.array(values, pa.string()) for name, values in zip(header, columns)})


def read_queries(path: PathLike) -> pa.Table:
    """Read queries: ``query_id`` (or ``_id``) plus ``expr`` and/or ``text``; other columns are kept.

    Formats: ``.jsonl``/``.jsonl.gz``, ``.tsv`` (header row required), ``.parquet``, ``.arrow``.
    ``query_id`` is returned as a string column.
    """
    p = _existing(path, "query file")
    if p.is_dir():
        raise InputError("is a folder", str(p), "a query file (" + ", ".join(QUERY_EXTENSIONS) + ")")
    kind = _kind(p, QUERY_EXTENSIONS, "query")
    where = str(p)
    if kind in (".jsonl", ".jsonl.gz"):
        table = _table_from_rows([obj for _, obj in _iter_jsonl(p)], where)
    elif kind == ".tsv":
        table = _read_tsv(p)
    elif kind == ".parquet":
        table = _read_parquet(p)
    else:
        table = _read_arrow(p)
    if table.num_columns == 0:
        raise InputError("query file is empty", where, "at least one query")
    table = _rename_alias(table, "query_id", "_id")
    hint = " (header row required)" if kind == ".tsv" else ""
    _require(table, ["query_id"], where, " (query_id may be named _id) and expr and/or text" + hint)
    if "expr" not in table.column_names and "text" not in table.column_names:
        raise InputError(f"missing column 'expr' or 'text'; found {table.column_names}", where,
                         "an expr and/or a text column" + hint)
    if table.num_rows == 0:
        raise InputError("query file is empty", where, "at least one query")
    table = _as_string(table, "query_id", where)
    check_ids(table.column("query_id"), where, "query_id")
    return table.combine_chunks()


# --------------------------------------------------------------------------- generic tables


def read_table(path: PathLike) -> pa.Table:
    """Read an Arrow IPC (file or stream), Parquet or JSON-lines table."""
    p = _existing(path, "table")
    kind = _kind(p, TABLE_EXTENSIONS, "table")
    if kind == ".arrow":
        return _read_arrow(p)
    if kind == ".parquet":
        return _read_parquet(p)
    return _table_from_rows([obj for _, obj in _iter_jsonl(p)], str(p))


@contextlib.contextmanager
def atomic_file(path: PathLike, mode: str = "wb", encoding: str | None = None):
    """Open a temporary file beside ``path``; on success fsync it and rename it over ``path``.

    On any failure (KeyboardInterrupt included) the temporary file is removed and
    ``path`` is untouched, so readers never see a half-written file.
    """
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_table(table: pa.Table, path: PathLike) -> None:
    """Write ``table`` as Arrow IPC (``.arrow``) or Parquet (``.parquet``), atomically.

    The data goes to a temporary file in the destination folder, which is then
    renamed over ``path``; readers never see a half-written file and, on any
    failure (KeyboardInterrupt included), the old file is untouched and the
    temporary file is removed.
    """
    p = Path(path)
    kind = _kind(p, WRITE_EXTENSIONS, "output")
    if not isinstance(table, pa.Table):
        raise InputError(f"cannot write a {type(table).__name__}", str(p), "a pyarrow.Table")
    if p.is_dir():
        raise InputError("output path is a folder", str(p), "a file path")
    with atomic_file(p, "wb") as f:
        if kind == ".arrow":
            with pa.ipc.new_file(f, table.schema) as writer:
                writer.write_table(table)
        else:
            pq.write_table(table, f)
