"""The one validation layer every reader of user files goes through.

Readers (corpus, queries, tables, qrels, candidates, id files, embeddings,
manifests) never call ``json.loads``, ``gzip``, ``pyarrow.ipc``, ``pyarrow.parquet``
or ``numpy.load`` directly: they call these functions, which check

* **type**: JSON lines are objects; columns have the expected Arrow type
  (:func:`string_column`); manifests are JSON objects;
* **size**: a field is at most :data:`MAX_FIELD_CHARS` characters, a manifest at
  most :data:`MAX_MANIFEST_BYTES`;
* **encoding**: UTF-8 only, no lone surrogates (``"\\ud800"`` in JSON), no
  ``NaN``/``Infinity`` JSON constants;
* **nesting depth**: at most :data:`MAX_JSON_DEPTH` levels of JSON arrays/objects;
* **integrity**: Arrow and Parquet data are fully validated (offsets, UTF-8)
  before use, so a corrupt file is an error, never a crash;

and turn every problem into one :class:`~itlr_gpu.errors.InputError` saying what,
where (file, line, row, column) and what was expected.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import re
import sys
import tokenize
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence, Set as AbstractSet
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .errors import InputError

__all__ = ["MAX_JSON_DEPTH", "MAX_FIELD_CHARS", "MAX_MANIFEST_BYTES", "reading", "open_maybe_gzip",
           "parse_json_line", "iter_json_lines", "read_json_file", "json_type", "table_from_rows", "strings_to_arrow",
           "read_arrow_file", "read_parquet_file", "string_column", "load_npy", "read_delimited_rows", "text_lines",
           "NPY_ERRORS"]

MAX_JSON_DEPTH = 32                 # a record deeper than this is not a corpus/query/manifest record
MAX_FIELD_CHARS = 1 << 24           # 16 Mi characters in one TSV field
MAX_MANIFEST_BYTES = 64 << 20       # manifests are small; this bounds what a hostile one costs


# --------------------------------------------------------------------------- low-level reading


@contextlib.contextmanager
def reading(path: str | os.PathLike, expected: str) -> Iterator[None]:
    """Map the failures of reading ``path`` (I/O, gzip, Arrow, recursion) to one InputError."""
    where = str(path)
    try:
        yield
    except InputError:
        raise
    except (gzip.BadGzipFile, zlib.error, EOFError) as e:
        raise InputError(f"corrupt or truncated gzip data ({e})", where, expected) from e
    except RecursionError as e:
        raise InputError(f"data nested too deeply (over {MAX_JSON_DEPTH} levels)", where, expected) from e
    except UnicodeDecodeError as e:  # e.g. an Arrow field name that is not UTF-8
        raise InputError(f"invalid UTF-8 ({e.reason})", where, expected) from e
    except pa.ArrowException as e:
        raise InputError(f"unreadable Arrow data ({_short(e)})", where, expected) from e
    except IsADirectoryError as e:
        raise InputError("is a folder", where, expected) from e
    except OSError as e:   # (pyarrow's OSErrors carry multi-line messages: one line here)
        raise InputError(f"cannot read ({_short(e.strerror or e)})", where, expected) from e


def _short(e: BaseException, limit: int = 200) -> str:
    text = " ".join(str(e).split())
    return text if len(text) <= limit else text[:limit] + "..."


def open_maybe_gzip(path: Path) -> BinaryIO:
    """The file's bytes, gunzipped when the name ends with ``.gz``."""
    if path.name.lower().endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def text_lines(path: Path, expected: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 (optionally gzipped) text file, BOM and line ends stripped."""
    with reading(path, expected), open_maybe_gzip(path) as f:
        for lineno, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                hint = _utf16_hint(path) if lineno == 1 else ""
                raise InputError(f"invalid UTF-8 ({e.reason})", f"{path}:{lineno}", "UTF-8 text" + hint) from e
            if lineno == 1:
                line = line.lstrip("\ufeff")
            yield lineno, line.rstrip("\r\n")


# --------------------------------------------------------------------------- JSON


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _depth(obj: Any) -> int:
    """Nesting depth of JSON containers (a scalar is 0), iteratively: a deep value cannot recurse here."""
    deepest, stack = 0, [(obj, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_JSON_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


class _RepeatedKey(ValueError):
    pass


def _object_without_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are distinct: json.loads would keep the last of two values silently."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _RepeatedKey(key)
            seen.add(key)
    return obj


def parse_json_line(line: str, where: str, expected: str = "one JSON object per line") -> Any:
    """``json.loads`` with the checks above: strict constants, depth, distinct keys, no RecursionError."""
    try:
        obj = json.loads(line, parse_constant=_no_constants, object_pairs_hook=_object_without_repeats)
    except _RepeatedKey as e:
        raise InputError(f"the key {e.args[0]!r} appears twice in one object", where,
                         "each key once per object") from e
    except RecursionError as e:
        raise InputError(f"JSON nested more than {MAX_JSON_DEPTH} levels", where, expected) from e
    except json.JSONDecodeError as e:
        raise InputError(f"malformed JSON ({e.msg}, column {e.colno})", where, expected) from e
    except ValueError as e:  # NaN / Infinity, or an integer longer than Python reads
        digits = re.search(r"value has (\d+) digits", str(e))
        if digits:
            raise InputError(f"a JSON integer of {int(digits.group(1)):,} digits", where,
                             f"integers of at most {sys.get_int_max_str_digits():,} digits (Python's limit)") from e
        raise InputError(f"malformed JSON ({e})", where, expected) from e
    if _depth(obj) > MAX_JSON_DEPTH:
        raise InputError(f"JSON nested more than {MAX_JSON_DEPTH} levels", where, expected)
    return obj


def iter_json_lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for each non-blank line of a JSON-lines file (``.gz`` too)."""
    for lineno, line in text_lines(path, "a JSON-lines file (one JSON object per line)"):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        obj = parse_json_line(line, where)
        if not isinstance(obj, dict):
            raise InputError(f"line is a JSON {json_type(obj)}", where, "one JSON object per line")
        yield lineno, obj


def read_json_file(path: Path, expected: str) -> dict[str, Any]:
    """A small JSON file holding one object (a manifest); every failure is an InputError."""
    with reading(path, expected):
        size = path.stat().st_size
        if size > MAX_MANIFEST_BYTES:
            raise InputError(f"file is {size:,} bytes", str(path), f"{expected} (at most {MAX_MANIFEST_BYTES:,} bytes)")
        data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"invalid UTF-8 ({e.reason})", str(path), expected) from e
    obj = parse_json_line(text, str(path), expected)
    if not isinstance(obj, dict):
        raise InputError(f"holds a JSON {json_type(obj)}", str(path), expected)
    return obj


def json_type(value: Any) -> str:
    return {dict: "object", list: "array", str: "string", bool: "boolean", int: "number", float: "number",
            type(None): "null"}.get(type(value), type(value).__name__)


# --------------------------------------------------------------------------- Arrow conversion


def _first_bad_string(values: Sequence[Any]) -> int | None:
    for row, value in enumerate(values):
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return row
    return None


# Numbers as files write them.  Python's int() and float() also take "1_000", other scripts' digits ("١٢") and
# surrounding blanks; a file's number with those is a typo or another format, not a number.
_PLAIN_INT_RE = re.compile(r"[+-]?[0-9]+")
_PLAIN_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.I)


def plain_int(text: str) -> int:
    """``int(text)`` of ASCII digits with an optional sign; ValueError otherwise."""
    if not _PLAIN_INT_RE.fullmatch(text):
        raise ValueError(f"not a plain integer: {text!r}")
    return int(text)


def plain_float(text: str) -> float:
    """``float(text)`` of a decimal or exponent number (or inf / nan, for the caller's finiteness check) in ASCII;
    ValueError otherwise."""
    if not _PLAIN_FLOAT_RE.fullmatch(text):
        raise ValueError(f"not a plain number: {text!r}")
    return float(text)


def python_values(values: Any) -> Any:
    """An Arrow array or a table's column as its Python values (what ``pyarrow`` hands a user who reads a query
    file: its elements are Arrow scalars), anything else as it is."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values.to_pylist()
    return values


def value_list(values: Any, name: str, expected: str, where: str | None = None) -> list[Any]:
    """One value per row, as a list: a list, tuple, generator, numpy array, pandas Series or an Arrow array /
    table column (its Python values).  A whole table (pyarrow, pandas: iterating one yields its column names), a
    mapping (its keys), a set (no order to match ids by), one string or a non-iterable is an InputError
    (``name`` the argument, ``where`` the place, default ``name``)."""
    values = python_values(values)
    where = where or name
    kind = type(values).__name__
    if isinstance(values, (str, bytes)):
        raise InputError(f"{name} is one {kind}, not a list", where, expected)
    if isinstance(values, pa.Table) or (hasattr(values, "columns") and hasattr(values, "iloc")):
        raise InputError(f"{name} is a {kind} (a whole table)", where,
                         f"{expected}: one of its columns, e.g. table['expr']")
    if isinstance(values, (Mapping, AbstractSet)):
        raise InputError(f"{name} is a {kind}", where, f"{expected} (a {kind} has no row order)")
    if not isinstance(values, Iterable):
        raise InputError(f"{name} is a {kind}", where, expected)
    return list(values)


def strings_to_arrow(values: Sequence[Any], where: str, what: str) -> pa.Array:
    """``pa.array(values, string)``; a lone surrogate is an InputError naming the row."""
    try:
        return pa.array(values, pa.string())
    except UnicodeEncodeError as e:
        row = _first_bad_string(values)
        raise InputError(f"{what} at row {row} is not valid Unicode (lone surrogate)", where,
                         "text without unpaired \\ud800-\\udfff escapes") from e


def table_from_rows(rows: list[dict[str, Any]], where: str, id_columns: Sequence[str] = (),
                    used: Collection[str] | None = None) -> pa.Table:
    """A table from JSON objects whose keys may differ (missing keys become null).

    Integer values of ``id_columns`` become their decimal text first (ids of any size; a float is an error).
    ``used``: the columns the caller reads (None: every column).  Any other column whose values mix JSON types,
    or hold a number beyond 64 bits, is kept as each value's JSON text: a field the job never reads does not
    refuse the file (a BEIR queries.jsonl's free-form ``metadata``).
    """
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    columns = {}
    for name in names:
        values = [row.get(name) for row in rows]
        if name in id_columns:
            bad = next((i for i, v in enumerate(values) if isinstance(v, float)), None)
            if bad is not None:
                raise InputError(f"field '{name}' at row {bad} is a JSON float ({values[bad]!r})", where,
                                 "ids as strings or integers")
            values = [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in values]
        try:
            columns[name] = pa.array(values)
            continue
        except UnicodeEncodeError as e:
            row = _first_bad_string(values)
            problem: tuple[str, str] = (f"field '{name}' at row {row} is not valid Unicode (lone surrogate)",
                                        "text without unpaired \\ud800-\\udfff escapes")
            error: Exception = e
        except OverflowError as e:
            problem, error = (f"field '{name}' holds a number out of range ({e})",
                              "numbers within 64-bit range (ids may be strings)"), e
        except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as e:
            kinds = [_json_kind(v) for v in values]
            first = next((k for k in kinds if k != "null"), "null")
            row = next((i for i, k in enumerate(kinds) if k not in (first, "null")), None)
            at = f": {first} values, then {kinds[row]} at row {row}" if row is not None else f" ({_short(e)})"
            problem, error = (f"field '{name}' mixes incompatible value types{at}", "one JSON type per field"), e
        if used is None or name in used:
            raise InputError(problem[0], where, problem[1]) from error
        columns[name] = pa.array([None if v is None else json.dumps(v, ensure_ascii=True) for v in values],
                                 pa.string())
    return pa.table(columns)


def _json_kind(value: Any) -> str:
    """What a JSON value is, in JSON's words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def _source(path: Path, data: bytes | None):
    """The file's bytes: mapped from disk, or ``data`` when the caller has read them already."""
    return pa.memory_map(str(path)) if data is None else pa.BufferReader(data)


def read_arrow_file(path: Path, expected: str = "an Arrow IPC file", data: bytes | None = None) -> pa.Table:
    """An Arrow IPC file (or stream), fully validated: corrupt data is an InputError, never a crash.
    ``data``: the file's bytes, already read (``path`` then only names it in errors)."""
    with reading(path, expected):
        try:
            with _source(path, data) as source:
                table = pa.ipc.open_file(source).read_all()
        except pa.ArrowInvalid:
            with _source(path, data) as source:
                table = pa.ipc.open_stream(source).read_all()
        table.validate(full=True)
        table.column_names  # noqa: B018 - decodes every field name (invalid UTF-8 raises here, inside reading())
    return table


def read_parquet_file(path: Path, expected: str = "a Parquet file", data: bytes | None = None) -> pa.Table:
    """A Parquet file, fully validated (``data`` as for :func:`read_arrow_file`)."""
    with reading(path, expected):
        table = pq.read_table(path if data is None else pa.BufferReader(data))
        table.validate(full=True)
        table.column_names  # noqa: B018 - as above
    return table


def _shown_value(value: Any, limit: int = 40) -> str:
    """A value as an error line shows it: its repr, cut at ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def is_textual(t: pa.DataType) -> bool:
    """An Arrow string type: string, large_string or string_view (pandas 3 and Polars write the last two)."""
    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def string_column(table: pa.Table, name: str, where: str, *, ids: bool = False,
                  fill_null: str | None = None) -> pa.Table:
    """Column ``name`` cast to ``string``; anything but text (binary, float, list, bool...) is refused.

    ``ids=True`` also accepts integers (their decimal text).  ``fill_null`` replaces nulls.
    """
    col = table.column(name)
    t = col.type
    if not pa.types.is_string(t):
        ok = is_textual(t) or pa.types.is_null(t) or (ids and pa.types.is_integer(t))
        if pa.types.is_dictionary(t) and is_textual(t.value_type):   # a pandas "category" column
            ok = True
        if not ok:
            expected = "strings or integers" if ids else "strings"
            valid = pc.is_valid(col)
            first = pc.index(valid, True).as_py() if col.null_count < len(col) else -1
            shown = f" (row {first}: {_shown_value(col[first].as_py())})" if first >= 0 else ""
            raise InputError(f"column '{name}' has type {t}{shown}", where, expected)
        col = pc.cast(col, pa.string())
    if fill_null is not None and col.null_count:
        col = pc.fill_null(col, fill_null)
    return table.set_column(table.column_names.index(name), name, col)


# --------------------------------------------------------------------------- TSV and NumPy


def read_delimited_rows(path: Path, *, csv_quoting: bool = False) -> list[tuple[int, list[str]]]:
    """``(line number, fields)`` of a tab-separated UTF-8 file (gzipped when named ``.gz``), quotes kept
    literally; blank rows skipped.  ``csv_quoting``: a comma-separated file with CSV quoting instead (a
    quoted field may hold commas, doubled quotes and line breaks; the line number is where its row ends).
    A NUL byte is refused: UTF-8 text has none, and a UTF-16 file without a byte-order mark decodes as
    UTF-8 into NUL-riddled fields."""
    csv.field_size_limit(MAX_FIELD_CHARS)
    out: list[tuple[int, list[str]]] = []
    fmt = "CSV" if csv_quoting else "TSV"
    kind = "a comma-separated (CSV) UTF-8 text file" if csv_quoting else "a tab-separated UTF-8 text file"
    with reading(path, kind), io.TextIOWrapper(open_maybe_gzip(path), encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, delimiter="," if csv_quoting else "\t", strict=csv_quoting,
                            quoting=csv.QUOTE_MINIMAL if csv_quoting else csv.QUOTE_NONE)
        row_start = 1   # the line the next row starts on (a quoted field may span lines)
        try:
            for row in reader:
                if any("\0" in c for c in row):
                    raise InputError("NUL byte in a field", f"{path}:{reader.line_num}",
                                     "UTF-8 text without NUL bytes (a UTF-16 file must be saved as UTF-8)")
                if row and any(c.strip() for c in row):
                    out.append((reader.line_num, row))
                row_start = reader.line_num + 1
        except UnicodeDecodeError as e:   # decoded a buffer ahead of the reader: the line-by-line reader names it
            for _ in text_lines(path, kind):
                pass
            raise InputError(f"invalid UTF-8 ({e.reason})", f"{path}:{reader.line_num + 1}",
                             "UTF-8 text" + (_utf16_hint(path) if reader.line_num == 0 else "")) from e
        except csv.Error as e:
            if csv_quoting and "unexpected end of data" in str(e):
                raise InputError(f"a quoted field opened in the row starting on line {row_start} is not closed "
                                 "by the end of the file", f"{path}:{row_start}",
                                 'a closing quote (a quote inside a quoted field is doubled: "")') from e
            raise InputError(f"unreadable {fmt} ({e})", f"{path}:{reader.line_num}",
                             f"fields of at most {MAX_FIELD_CHARS:,} characters"
                             + (", quotes closed and doubled inside a quoted field" if csv_quoting else "")) from e
    return out


def _utf16_hint(path: Path) -> str:
    """A hint for a file that starts with a UTF-16 byte-order mark (spreadsheets' "Unicode text" export), or with
    gzip's magic under a name without ``.gz``."""
    with open_maybe_gzip(path) as f:
        head = f.read(2)
    if head == b"\x1f\x8b" and not path.name.lower().endswith(".gz"):   # gzip's magic under a plain name
        return f" (this file is gzip-compressed: name it {path.name}.gz)"
    return " (this file starts with a UTF-16 byte-order mark: save it as UTF-8)" if head in (b"\xff\xfe",
                                                                                             b"\xfe\xff") else ""


# What numpy raises for a malformed .npy header (it parses the header dict with ast.literal_eval).
NPY_ERRORS = (ValueError, EOFError, SyntaxError, TypeError, OverflowError, tokenize.TokenError)


def load_npy(path: Path, *, mmap: bool = True, expected: str = "a .npy file written by numpy.save") -> np.ndarray:
    """``np.load`` without pickles; empty, truncated or malformed files are InputErrors."""
    with reading(path, expected):
        try:
            array = np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
            with open(path, "rb") as f:   # numpy reads the matrix its header states and ignores what follows
                version = np.lib.format.read_magic(f)
                (np.lib.format.read_array_header_1_0 if version == (1, 0)
                 else np.lib.format.read_array_header_2_0)(f)
                end = f.tell() + array.nbytes
        except NPY_ERRORS as e:
            raise InputError(f"not a readable .npy matrix ({_short(e)})", str(path), expected) from e
    size = os.path.getsize(path)
    if size > end:
        extra = size - end
        raise InputError(f"{extra:,} byte{'s' if extra != 1 else ''} follow{'s' if extra == 1 else ''} the matrix "
                         "its header states (a file appended to, or written over another)", str(path), expected)
    return array
