"""Reading corpora, queries and tables; writing result tables atomically.

Every problem with a user's file raises :class:`~itlr_gpu.errors.InputError`
naming the file (and line, row or column) and what was expected.
"""

from __future__ import annotations

import math
import os
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any, NoReturn

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import InputError, warn_caller
from .output import atomic_file, check_output_file
from .validate import (is_textual, iter_json_lines, plain_float, plain_int, read_arrow_file, read_delimited_rows,
                       read_parquet_file, string_column, strings_to_arrow, table_from_rows, text_lines)

__all__ = [
    "RESULT_SCHEMA",
    "DELIMITED_EXTENSIONS",
    "read_corpus",
    "document_texts",
    "read_queries",
    "read_table",
    "read_delimited_table",
    "read_trec_run",
    "read_run",
    "run_columns",
    "run_number_column",
    "is_trec_run",
    "write_table",
    "check_ids",
    "normalize_corpus",
    "atomic_file",
]

PathLike = str | os.PathLike

RESULT_SCHEMA = pa.schema(
    [("query_id", pa.string()), ("rank", pa.int32()), ("doc_id", pa.string()), ("score", pa.float32())]
)

DELIMITED_EXTENSIONS = (".tsv", ".tsv.gz", ".csv", ".csv.gz")
CORPUS_EXTENSIONS = (".jsonl", ".jsonl.gz", *DELIMITED_EXTENSIONS, ".parquet", ".arrow")
QUERY_EXTENSIONS = (".jsonl", ".jsonl.gz", *DELIMITED_EXTENSIONS, ".parquet", ".arrow")
TABLE_EXTENSIONS = (".arrow", ".parquet", ".jsonl", ".jsonl.gz")
WRITE_EXTENSIONS = (".arrow", ".parquet", ".jsonl", ".run", ".trec")
# .jsonl: tables a person edits (itlr translate -o); .run / .trec: results as a TREC run (itlr search / rerank -o)
RESULT_WRITE_EXTENSIONS = (".arrow", ".parquet", ".run", ".trec")
RUN_WRITE_EXTENSIONS = (".run", ".trec")   # written as a TREC run
TREC_RUN_TAG = "itlr"
ID_COLUMNS = ("doc_id", "query_id", "_id")
QUERY_COLUMNS = ("query_id", "_id", "expr", "text")
"""What a query file's reader reads; its other columns are kept as they come (or as JSON text, where mixed)."""


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
    if path.exists() and not path.is_file() and not path.is_dir():   # a shell's <(zcat x.gz): no name to go by
        not_a_file(path, f"{what} file", "a file named *" + ", *".join(accepted))
    raise InputError(
        f"unknown {what} file type '{''.join(path.suffixes[-2:]) if name.endswith('.gz') else path.suffix or path.name}'",
        str(path), "one of " + ", ".join(accepted)
    )


def _iter_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; errors name ``file:line``."""
    return iter_json_lines(path)


def _table_from_rows(rows: list[dict[str, Any]], where: str, used: Collection[str] | None = None) -> pa.Table:
    """Build a table from JSON objects whose keys may differ (missing keys become null); ``used``: see
    :func:`~.validate.table_from_rows`."""
    return table_from_rows(rows, where, id_columns=ID_COLUMNS, used=used)


def _read_arrow(path: Path) -> pa.Table:
    """Read an Arrow IPC file or stream, fully validated."""
    return read_arrow_file(path)


def _read_parquet(path: Path) -> pa.Table:
    return read_parquet_file(path)


def _rename_alias(table: pa.Table, name: str, alias: str, where: str) -> pa.Table:
    """Rename column ``alias`` (e.g. BEIR's ``_id``) to ``name`` when ``name`` is absent; both is ambiguous."""
    if name in table.column_names and alias in table.column_names:
        raise InputError(f"both '{name}' and '{alias}' columns (or fields)", where,
                         f"one id column: '{name}' or '{alias}'")
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


def _as_string(table: pa.Table, name: str, where: str, fill_null: str | None = None, *, ids: bool = False) -> pa.Table:
    """Cast column ``name`` to string (``ids=True``: integer ids become their decimal text)."""
    return string_column(table, name, where, ids=ids, fill_null=fill_null)


# Characters no id may hold: C0 and C1 control characters, DEL, and the Unicode line and paragraph separators (a
# TREC line splits on them: str.split, str.splitlines).  A character class both Python's re and Arrow's RE2 read.
ODD_ID_CHARS = "[\x00-\x1f\x7f-\x9f\u2028\u2029]"
ODD_ID_EXPECTED = ("without leading or trailing white space, tabs, line breaks (U+2028 and U+2029 included) or other "
                   "control characters")


def check_ids(ids: pa.Array | pa.ChunkedArray, where: str, kind: str = "id", *, spelling: bool = True) -> None:
    """Raise InputError naming the first null, empty or duplicate id and its 0-based row; with ``spelling``
    (ids as they come in, not those of a saved index) also one with white space at an end or a control
    character (a tab, a line break, U+0085, U+2028): no qrels or run line can name it, so evaluation would score
    it 0."""
    if ids.null_count:
        row = pc.index(pc.is_null(ids), True).as_py()
        raise InputError(f"null {kind} at row {row}", where, f"a non-empty {kind} on every row")
    empty = pc.equal(pc.utf8_length(ids), 0)
    if pc.any(empty).as_py():
        row = pc.index(empty, True).as_py()
        raise InputError(f"empty {kind} at row {row}", where, f"a non-empty {kind} on every row")
    if spelling and len(ids):
        odd = pc.or_(pc.not_equal(pc.utf8_trim_whitespace(ids), ids),
                     pc.match_substring_regex(ids, ODD_ID_CHARS))
        if pc.any(odd).as_py():
            row = pc.index(odd, True).as_py()
            raise InputError(f"{kind} {ids[row].as_py()!r} at row {row} has white space at an end or a control character",
                             where, f"{kind}s {ODD_ID_EXPECTED}")
    if _has_duplicates(ids):
        _raise_duplicate(ids, where, kind)
    if spelling:
        warn_normalisation_twins(ids, where, kind)


def warn_normalisation_twins(ids: pa.Array | pa.ChunkedArray, where: str, kind: str) -> None:
    """A warning naming the first two ids that differ only in Unicode normalisation (none for ASCII ids)."""
    if len(ids) > 1 and not pc.all(pc.string_is_ascii(ids)).as_py():
        _warn_normalisation_twins(ids, where, kind)


_TWINS_WARNED: set[tuple[str, str]] = set()


def _warn_normalisation_twins(ids: pa.Array | pa.ChunkedArray, where: str, kind: str) -> None:
    """Two ids that differ only in Unicode normalisation ("café" composed and decomposed) print alike, and a qrels
    or run file that spells them one way matches only one of them: a warning naming the first pair."""
    nfc = pc.utf8_normalize(ids, "NFC")
    if not _has_duplicates(nfc):
        return
    first, row = _first_repeat(nfc)
    pair = (ids[first].as_py(), ids[row].as_py())
    if pair in _TWINS_WARNED:   # (a query file's ids are checked as read and again as compiled)
        return
    _TWINS_WARNED.add(pair)
    warn_caller(f"{where}: {kind}s {pair[0]!r} (row {first}) and {pair[1]!r} (row {row}) differ only in Unicode "
                "normalisation (composed and decomposed accents): they print alike, and a qrels or run file "
                "matches one of them", UserWarning)


def _raise_duplicate(ids: pa.Array | pa.ChunkedArray, where: str, kind: str) -> None:
    """The InputError naming the first repeated id, its row and the row it was first seen at."""
    first, row = _first_repeat(ids)
    raise InputError(f"duplicate {kind} '{ids[row].as_py()}' at row {row} (first seen at row {first})", where,
                     f"unique {kind}s")


def _first_repeat(values: pa.Array | pa.ChunkedArray) -> tuple[int, int]:
    """(row of its first occurrence, row) of the first value that repeats an earlier one; call only where
    :func:`_has_duplicates` found one."""
    seen: dict[Any, int] = {}
    for row, value in enumerate(values.to_pylist()):
        if value in seen:
            return seen[value], row
        seen[value] = row
    raise AssertionError("no repeated value")


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
        if "doc_id" in obj and "_id" in obj:
            raise InputError("both 'doc_id' and '_id' fields", where, "one id field: 'doc_id' or '_id'")
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
    where = str(path)
    return pa.table({"doc_id": strings_to_arrow(ids, where, "doc_id"), "text": strings_to_arrow(texts, where, "text"),
                     "title": strings_to_arrow(titles, where, "title")})


def normalize_corpus(table: pa.Table, where: str) -> pa.Table:
    """Validate a corpus table and return it as (doc_id, text, title) strings, title "" when absent."""
    table = _rename_alias(table, "doc_id", "_id", where)
    _require(table, ["doc_id", "text"], where, " (doc_id may be named _id; title optional)")
    if table.num_rows == 0:
        raise InputError("corpus is empty", where, "at least one document")
    if "title" not in table.column_names:
        table = table.append_column("title", pa.array([""] * table.num_rows, pa.string()))
    table = _as_string(table, "doc_id", where, ids=True)
    table = _as_string(table, "text", where, fill_null="")
    table = _as_string(table, "title", where, fill_null="")
    table = table.select(["doc_id", "text", "title"])
    check_ids(table.column("doc_id"), where, "doc_id")
    return table.combine_chunks()


def read_corpus(path: PathLike) -> pa.Table:
    """Read a corpus as a table of string columns ``doc_id``, ``text``, ``title``.

    ``path`` is a BEIR folder (with ``corpus.jsonl`` or ``corpus.jsonl.gz``) or a
    ``.jsonl``/``.jsonl.gz``, ``.tsv``/``.tsv.gz`` or ``.csv``/``.csv.gz`` (header row required),
    ``.parquet`` or ``.arrow`` file; ``_id`` is accepted for ``doc_id``.
    """
    p = _existing(path, "corpus")
    if p.is_dir():
        found = [p / n for n in ("corpus.jsonl", "corpus.jsonl.gz") if (p / n).is_file()]
        if not found:
            raise InputError("folder has no corpus file", str(p),
                             "a BEIR folder containing corpus.jsonl or corpus.jsonl.gz")
        if len(found) > 1:   # which one is the corpus is not for us to guess
            raise InputError("folder has both corpus.jsonl and corpus.jsonl.gz", str(p), "one corpus file")
        p = found[0]
    kind = _kind(p, CORPUS_EXTENSIONS, "corpus")
    if kind in (".jsonl", ".jsonl.gz"):
        table = _corpus_rows(p)
    elif kind in DELIMITED_EXTENSIONS:
        table = read_delimited_table(p, "corpus", "a header row (doc_id, text[, title]) and at least one document")
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


def read_delimited_table(path: Path, what: str = "query file",
                         expected: str = "a header row and at least one query") -> pa.Table:
    """A TSV or, named ``.csv``, a CSV with a header row (gzipped when named ``.gz``); every value is a string.
    A TSV keeps quotes literally (no quoting: a field cannot hold a tab or a line break); a CSV follows CSV
    quoting, as Python's ``csv`` and pandas write it."""
    is_csv = path.name.lower().endswith((".csv", ".csv.gz"))
    rows = read_delimited_rows(path, csv_quoting=is_csv)
    if not rows:
        raise InputError(f"{what} is empty", str(path), expected)
    header = [c.strip() for c in rows[0][1]]
    dupes = sorted({c for c in header if header.count(c) > 1})
    if header and all(_parses(c, pa.float64()) for c in header):   # "1<TAB>10608397<TAB>1": data, not column names
        raise InputError(f"the first line holds values, not column names ({header})", f"{path}:{rows[0][0]}",
                         expected + " (a headerless file needs a header line first, e.g. query_id"
                         + ("," if is_csv else "<TAB>") + "doc_id)")
    if dupes:
        raise InputError(f"header repeats column(s) {dupes}", f"{path}:{rows[0][0]}", "unique column names")
    columns: list[list[str]] = [[] for _ in header]
    for lineno, row in rows[1:]:
        if len(row) != len(header):
            raise InputError(
                f"{len(row)} {'comma' if is_csv else 'tab'}-separated fields, header has {len(header)}",
                f"{path}:{lineno}",
                "one value per header column" + ("" if is_csv else " (a TSV is read without quoting: a text with "
                                                 "tabs or line breaks needs a .csv or .jsonl file)"),
            )
        if [c.strip() for c in row] == header:   # two files joined with both headers kept
            raise InputError("the header row again", f"{path}:{lineno}",
                             f"one header row (line {rows[0][0]}) and then data rows")
        for values, value in zip(columns, row):
            if not is_csv and _csv_quoted(value):
                raise InputError(f"field {value[:40]!r}{'...' if len(value) > 40 else ''} is CSV-quoted (a doubled "
                                 '"" inside quotes)', f"{path}:{lineno}",
                                 "a TSV without quoting, as the expression is typed (pandas: to_csv(sep='\\t', "
                                 "quoting=csv.QUOTE_NONE)), or the same file named .csv")
            values.append(value)
    return pa.table({name: strings_to_arrow(values, str(path), f"column '{name}'")
                     for name, values in zip(header, columns)})


def _csv_quoted(value: str) -> bool:
    '''A field as Python's csv writer or pandas quote it, """grain"" AND NOT ""wheat""": wrapped in quotes
    with doubled quotes inside.  Never an expression as typed (an empty quoted term is no term), nor plain text.'''
    v = value.strip()
    return len(v) >= 4 and v[0] == v[-1] == '"' and '""' in v[1:-1]


def _parses(value: str, want: pa.DataType) -> bool:
    """Whether ``value`` reads as a number of type ``want`` (an integer type, else a float)."""
    try:
        plain_int(value.strip()) if pa.types.is_integer(want) else plain_float(value.strip())
    except ValueError:
        return False
    return True


def read_queries(path: PathLike, columns: str = "expr and/or text") -> pa.Table:
    """Read queries: ``query_id`` (or ``_id``) plus ``expr`` and/or ``text`` (``columns="text"``: a text
    column required, as for translation); other columns are kept.

    Formats: ``.jsonl``/``.jsonl.gz``, ``.tsv``/``.tsv.gz`` and ``.csv``/``.csv.gz`` (header row required),
    ``.parquet``, ``.arrow``.  ``query_id`` is returned as a string column.
    """
    p = _existing(path, "query file")
    if p.is_dir():
        raise InputError("is a folder", str(p), "a query file (" + ", ".join(QUERY_EXTENSIONS) + ")")
    kind = _kind(p, QUERY_EXTENSIONS, "query")
    where = str(p)
    if kind in (".jsonl", ".jsonl.gz"):
        table = _table_from_rows([obj for _, obj in _iter_jsonl(p)], where, used=QUERY_COLUMNS)
    elif kind in DELIMITED_EXTENSIONS:
        table = read_delimited_table(p)
    elif kind == ".parquet":
        table = _read_parquet(p)
    else:
        table = _read_arrow(p)
    if table.num_columns == 0:
        raise InputError("query file is empty", where, "at least one query")
    table = _rename_alias(table, "query_id", "_id", where)
    hint = " (header row required)" if kind in DELIMITED_EXTENSIONS else ""
    _require(table, ["query_id"], where, f" (query_id may be named _id) and {columns}" + hint)
    if columns == "text" and "text" not in table.column_names:
        raise InputError(f"missing column 'text'; found {table.column_names}", where, "a text column" + hint)
    if "expr" not in table.column_names and "text" not in table.column_names:
        raise InputError(f"missing column 'expr' or 'text'; found {table.column_names}", where,
                         "an expr and/or a text column" + hint)
    if table.num_rows == 0:
        raise InputError("query file is empty", where, "at least one query")
    table = _as_string(table, "query_id", where, ids=True)
    for name in ("expr", "text"):  # a number, list, binary... is not a query
        if name in table.column_names:
            table = _as_string(table, name, where)
    check_ids(table.column("query_id"), where, "query_id")
    return table.combine_chunks()


# --------------------------------------------------------------------------- generic tables


def read_table(path: PathLike, used: Collection[str] | None = None) -> pa.Table:
    """Read an Arrow IPC (file or stream), Parquet or JSON-lines table (``used``: the columns the caller reads;
    see :func:`~.validate.table_from_rows`)."""
    p = _existing(path, "table")
    kind = _kind(p, TABLE_EXTENSIONS, "table")
    if kind == ".arrow":
        return _read_arrow(p)
    if kind == ".parquet":
        return _read_parquet(p)
    return _table_from_rows([obj for _, obj in _iter_jsonl(p)], str(p), used)


# --------------------------------------------------------------------------- TREC runs

TREC_RUN_EXTENSIONS = (".run", ".trec", ".txt", ".run.gz", ".trec.gz", ".txt.gz")
TREC_RUN_LINE = "a TREC run line: qid Q0 docid rank score tag"


def is_trec_line(line: str) -> bool:
    """``qid Q0 docid rank score tag`` (some tools write ``0`` or ``q0`` for ``Q0``)."""
    parts = line.split()
    return len(parts) == 6 and parts[1] in ("Q0", "q0", "0")


def is_trec_run(path: PathLike) -> bool:
    """A ``.run`` / ``.trec`` / ``.txt`` file (gzipped too), or a ``.tsv`` whose first line is a run line
    (``qid Q0 docid rank score tag``: what first-stage retrievers write)."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith(TREC_RUN_EXTENSIONS):
        return True
    if not name.endswith((".tsv", ".tsv.gz")) or not p.is_file():
        return False
    for _, line in text_lines(p, "a TSV file"):
        if line.strip():
            return is_trec_line(line)
    return False


def read_trec_run(path: PathLike) -> pa.Table:
    """A TREC run as a result table ``query_id, rank, doc_id, score`` (rank int64, score float64), in file
    order."""
    p = _existing(path, "TREC run")
    qids, ranks, dids, scores = [], [], [], []
    for lineno, line in text_lines(p, TREC_RUN_LINE):
        parts = line.split()
        if not parts:
            continue
        where = f"{p}:{lineno}"
        if len(parts) != 6:
            raise InputError(f"{len(parts)} fields", where, TREC_RUN_LINE)
        qids.append(parts[0])
        dids.append(parts[2])
        try:
            ranks.append(plain_int(parts[3]))
        except ValueError:
            raise InputError(f"rank {parts[3]!r}", where, "an integer rank (" + TREC_RUN_LINE + ")") from None
        try:
            score = plain_float(parts[4])
        except ValueError:
            raise InputError(f"score {parts[4]!r}", where, "a number (" + TREC_RUN_LINE + ")") from None
        if not math.isfinite(score):   # named here by its line, not later by its row
            raise InputError(f"score {parts[4]!r}", where, "a finite number (" + TREC_RUN_LINE + ")")
        scores.append(score)
    if not qids:
        raise InputError("no run lines", str(p), TREC_RUN_LINE)
    return pa.table({
        "query_id": pa.array(qids, pa.string()),
        "rank": pa.array(ranks, pa.int64()),
        "doc_id": pa.array(dids, pa.string()),
        "score": pa.array(scores, pa.float64()),
    })


# --------------------------------------------------------------------------- runs: (query, document) rows

RUN_QUERY_ALIASES = ("query_id", "qid", "query-id", "_id")
RUN_DOC_ALIASES = ("doc_id", "docid", "corpus-id", "pid", "doc")
RUN_EXTENSIONS = (*DELIMITED_EXTENSIONS, *TREC_RUN_EXTENSIONS, ".jsonl", ".jsonl.gz", ".parquet", ".arrow")


def _run_ids(table: pa.Table, aliases: tuple[str, ...], what: str, where: str) -> pa.Array:
    for name in aliases:
        if name in table.column_names:
            col = table.column(name).combine_chunks()
            if pa.types.is_dictionary(col.type):
                col = col.dictionary_decode()   # a pandas "category" column
            if not pa.types.is_string(col.type):
                if not (pa.types.is_integer(col.type) or is_textual(col.type)):
                    raise InputError(f"column '{name}' has type {col.type}", where, "string or integer ids")
                col = pc.cast(col, pa.string())
            if col.null_count:
                row = pc.index(pc.is_null(col), True).as_py()
                raise InputError(f"null {what} at row {row}", where, f"a {what} on every row")
            # read as the qrels' readers and TREC lines read ids: without white space at either end (an index's
            # ids never have it), and never empty
            col = pc.utf8_trim_whitespace(col)
            empty = pc.equal(pc.utf8_length(col), 0)
            if pc.any(empty).as_py():
                row = pc.index(empty, True).as_py()
                raise InputError(f"empty {what} at row {row}", where, f"a {what} on every row")
            return col
    raise InputError(f"no {what} column; found {table.column_names}", where,
                     f"a column named one of {', '.join(aliases)} (or a TREC run: qid Q0 docid rank score tag)")


def run_number_column(table: pa.Table, name: str, where: str, text: bool = False) -> pa.Array | None:
    """The ``rank`` or ``score`` column, checked: integer ranks, numeric scores (``text``: a delimited file's
    strings, parsed to int64 / float64); None when absent.  The one check of a run's numbers, for ``itlr eval``'s
    tables and ``itlr rerank``'s candidates alike."""
    if name not in table.column_names:
        return None
    col = table.column(name).combine_chunks()
    want = pa.int64() if name == "rank" else pa.float64()
    if text and (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
        try:
            col = pc.cast(col, want)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            bad = next(v for v in col.to_pylist() if v is not None and not _parses(v, want))
            raise InputError(f"{name} {bad!r}", f"{where} column '{name}'",
                             "integer ranks" if name == "rank" else "numeric scores") from None
    elif name == "rank" and not pa.types.is_integer(col.type):
        raise InputError(f"column has type {col.type}", f"{where} column 'rank'", "integer ranks")
    elif name == "score" and pa.types.is_decimal(col.type):   # (a database export's NUMERIC column)
        col = pc.cast(col, pa.float64())
    elif name == "score" and not (pa.types.is_floating(col.type) or pa.types.is_integer(col.type)):
        raise InputError(f"column has type {col.type}", f"{where} column 'score'", "numbers")
    if name == "score" and pa.types.is_floating(col.type):
        finite = pc.is_finite(col)
        if len(col) and pc.all(finite).as_py() is False:   # (an empty column's all() is null: no row to blame)
            row = pc.index(finite, False).as_py()
            raise InputError(f"score at row {row} is {col[row].as_py()}", f"{where} column 'score'",
                             "finite scores (no NaN or infinity)")
    return col


def read_run(path: PathLike, what: str = "run") -> pa.Table:
    """(query, document) rows of a file in file order -- a first stage's candidates, or a run to evaluate -- as
    :func:`run_columns` gives them.

    One reader for ``itlr rerank`` and ``itlr eval``: TREC runs (``qid Q0 docid rank score tag``; ``.run``,
    ``.trec``, ``.txt`` or a headerless ``.tsv``, gzipped too), ``.tsv`` / ``.csv`` with a header, ``.jsonl``,
    ``.parquet``, ``.arrow``.  (A result folder of ``itlr search`` is read by ``scale.bulk.read_results``.)"""
    p = Path(path)
    where = str(p)
    if p.is_dir():
        raise InputError("is a folder", where, f"a {what} file")
    if not p.is_file():
        not_a_file(p, f"{what} file", "an existing file, or a result folder of itlr search")
    kind = _kind(p, RUN_EXTENSIONS, what)
    if kind in TREC_RUN_EXTENSIONS or is_trec_run(p):
        table = read_trec_run(p)
    elif kind in DELIMITED_EXTENSIONS:
        table = read_delimited_table(p, f"{what} file", "a header row and (query_id, doc_id) rows, or a TREC run "
                                     "(qid Q0 docid rank score tag)")
        return run_columns(table, where, what, text=True)
    else:
        table = read_table(p, used=RUN_QUERY_ALIASES + RUN_DOC_ALIASES + ("rank", "score"))
    return run_columns(table, where, what)


def not_a_file(p: Path, what: str, expected: str) -> NoReturn:
    """The error for a path that is not a regular file: missing, or a pipe or device (a shell's ``<(zcat x.gz)``,
    which the readers cannot read twice or seek in)."""
    if p.exists():
        raise InputError(f"is a pipe or device, not a regular {what}", str(p),
                         f"{expected}; write the stream to a file first: a gzipped file is read as it is")
    raise InputError(f"{what} not found", str(p), expected)


def run_columns(table: pa.Table, where: str, what: str = "run", text: bool = False) -> pa.Table:
    """``query_id, doc_id`` strings (from any of :data:`RUN_QUERY_ALIASES` / :data:`RUN_DOC_ALIASES`, integer and
    dictionary columns converted) plus ``rank`` and ``score`` where the table has them (``text``: a delimited
    file's strings, parsed; a typed table's must be numbers already)."""
    if table.num_columns == 0:   # an empty JSON-lines file
        raise InputError(f"{what} file is empty", where, "(query_id, doc_id) rows")
    columns = {"query_id": _run_ids(table, RUN_QUERY_ALIASES, "query_id", where),
               "doc_id": _run_ids(table, RUN_DOC_ALIASES, "doc_id", where)}
    for name in ("rank", "score"):
        col = run_number_column(table, name, where, text)
        if col is not None:
            columns[name] = col
    out = pa.table(columns)
    if out.num_rows == 0:
        raise InputError("no rows", where, "at least one (query_id, doc_id) row")
    return out


# what Python's str.isspace() (and so str.split(), as run readers split a line) takes for white space, in RE2
_SPACE_CHARS = r"[\t-\r\x1c-\x1f\x85\p{Z}]"


def check_run_ids(ids: pa.Array | pa.ChunkedArray, what: str, path: PathLike) -> None:
    """Refuse ids that a TREC run's fields cannot hold (white space), in one pass over the column: at the write, and
    by ``itlr search`` / ``rerank`` before any scoring (:func:`check_run_output`)."""
    ids = pc.cast(ids, pa.string())
    spaced = pc.match_substring_regex(ids, _SPACE_CHARS)
    if pc.any(spaced).as_py():
        value = ids[pc.index(spaced, True).as_py()].as_py()
        raise InputError(f"{what} {value!r} holds white space, which a TREC run's fields cannot", str(path),
                         "ids without white space, or a .arrow / .parquet output")


def check_run_output(path: PathLike, query_ids: Sequence[str], doc_ids: pa.Array | pa.ChunkedArray) -> None:
    """Where ``path`` is a TREC run (``itlr search`` / ``rerank -o``), refuse before any scoring the query ids and
    the doc ids that could reach its lines but cannot be its fields (see :func:`check_run_ids`), wherever they
    would rank."""
    if str(path).lower().endswith(RUN_WRITE_EXTENSIONS):
        check_run_ids(pa.array(query_ids, pa.string()), "query id", path)
        check_run_ids(doc_ids, "doc id", path)


def _write_trec_run(table: pa.Table, path: Path, f: Any) -> None:
    """Results as trec_eval reads them: ``qid Q0 docid rank score itlr`` per row (scores with 9 significant digits,
    which give a float32 back exactly).  Ids with white space cannot be such a line's fields: refused."""
    missing = [c for c in ("query_id", "rank", "doc_id", "score") if c not in table.column_names]
    if missing:
        raise InputError(f"a TREC run needs columns query_id, rank, doc_id, score; {missing} missing", str(path),
                         "a result table, or a .arrow / .parquet / .jsonl output")
    for what, name in (("query id", "query_id"), ("doc id", "doc_id")):   # one pass per column, not per row
        check_run_ids(table.column(name), what, path)
    for batch in table.to_batches(max_chunksize=65536):
        cols = [batch.column(c).to_pylist() for c in ("query_id", "rank", "doc_id", "score")]
        for q, rank, d, score in zip(*cols):
            f.write(f"{q} Q0 {d} {rank} {float(score):.9g} {TREC_RUN_TAG}\n".encode("utf-8"))


def write_table(table: pa.Table, path: PathLike) -> None:
    """Write ``table`` as Arrow IPC (``.arrow``), Parquet (``.parquet``), JSON lines (``.jsonl``: one object per
    row, nulls as ``null``, for a table a person reads or edits) or, for results, a TREC run (``.run`` /
    ``.trec``), atomically.

    The data goes to a temporary file in the destination folder, which is then
    renamed over ``path``; readers never see a half-written file and, on any
    failure (KeyboardInterrupt included), the old file is untouched and the
    temporary file is removed.
    """
    p = Path(path)
    kind = _kind(p, WRITE_EXTENSIONS, "output")
    if not isinstance(table, pa.Table):
        raise InputError(f"cannot write a {type(table).__name__}", str(p), "a pyarrow.Table")
    check_output_file(p, WRITE_EXTENSIONS)
    with atomic_file(p, "wb") as f:
        if kind == ".arrow":
            with pa.ipc.new_file(f, table.schema) as writer:
                writer.write_table(table)
        elif kind in RUN_WRITE_EXTENSIONS:
            _write_trec_run(table, p, f)
        elif kind == ".jsonl":
            import json

            for batch in table.to_batches(max_chunksize=4096):
                for row in batch.to_pylist():
                    try:
                        line = json.dumps(row, ensure_ascii=False, allow_nan=False)
                    except (TypeError, ValueError) as e:   # NaN / Inf, or a value JSON has no form for
                        raise InputError(f"a row cannot be written as JSON ({e})", str(p),
                                         "finite numbers and strings, or a .arrow / .parquet output") from None
                    f.write(line.encode("utf-8") + b"\n")
        else:
            pq.write_table(table, f)
