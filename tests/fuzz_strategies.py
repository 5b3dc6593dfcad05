"""Hypothesis strategies for hostile input: files every reader takes and option values every subcommand takes.

Each strategy makes input that is *certainly* wrong (one defect chosen and planted among valid content), so the
fuzz tests can demand a clean failure every time: exit 1 or 2, one ``itlr: error:`` line, no traceback, nothing
written.  A file is drawn as ``(file name, bytes)``.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import strategies as st

from itlr_gpu.query import MAX_QUERY_CHARS  # noqa: E402

# --------------------------------------------------------------------------- values

words = st.text(alphabet=st.characters(whitelist_categories=("Ll", "Lu", "Nd")), min_size=1, max_size=8)
good_exprs = st.lists(words, min_size=1, max_size=3).map(lambda ws: " AND ".join(ws))
# Certainly not a query: a dangling operator, an unbalanced parenthesis, an empty quoted term, invisible terms,
# control characters, an over-long or over-nested expression.
bad_exprs = st.one_of(
    st.text(max_size=20).map(lambda t: t + " AND"),
    st.text(max_size=20).map(lambda t: "(" + t.replace(")", "")),
    st.just('""'),
    st.sampled_from(["\u200b", "\u3000 AND \u200b", "\ufeff", "NOT NOT a", "a\x00b", "a\x07", "OR"]),
    st.integers(MAX_QUERY_CHARS + 1, MAX_QUERY_CHARS + 64).map(lambda n: "a" * n),
    st.integers(65, 200).map(lambda n: "(" * n + "a" + ")" * n),
)
non_strings = st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                        st.lists(st.integers(), max_size=3), st.dictionaries(words, st.integers(), max_size=2))
bad_ids = st.one_of(st.none(), st.just(""), st.booleans(), st.floats(allow_nan=False, allow_infinity=False),
                    st.lists(st.integers(), max_size=2), st.dictionaries(words, st.integers(), max_size=1))
surrogates = st.sampled_from(["\\ud800", "\\udfff", "x\\udc80y", "\\ud83d"])  # JSON escapes of lone surrogates


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _dumps(obj: dict[str, Any]) -> str:
    return json.dumps(obj, ensure_ascii=False)


# --------------------------------------------------------------------------- JSON lines


@st.composite
def _bad_record_line(draw, id_key: str, text_key: str, good_text, empty_text: bool = True) -> bytes:
    """One JSON-lines line that is certainly wrong for a reader of (id_key, text_key) records.

    ``empty_text=False`` leaves out a missing or empty text (a per-row error of ``itlr translate``)."""
    kinds = ["text_type", "id_type", "missing_id", "surrogate", "deep", "malformed", "not_object", "utf8",
             "constant"] + (["missing_text", "bad_text"] if empty_text else [])
    kind = draw(st.sampled_from(kinds))
    rid = draw(words)
    if kind == "text_type":
        line = _dumps({id_key: rid, text_key: draw(non_strings)})
    elif kind == "id_type":
        line = _dumps({id_key: draw(bad_ids), text_key: draw(good_text)})
    elif kind == "missing_id":
        line = _dumps({text_key: draw(good_text)})
    elif kind == "missing_text":
        line = _dumps({id_key: rid, "other": draw(good_text)})
    elif kind == "surrogate":
        esc = draw(surrogates)
        line = (f'{{"{id_key}": "{esc}", "{text_key}": "a"}}' if draw(st.booleans())
                else f'{{"{id_key}": "{rid}", "{text_key}": "a {esc}"}}')
    elif kind == "deep":
        line = f'{{"{id_key}": "{rid}", "{text_key}": "a", "extra": {_deep(draw(st.integers(33, 3000)))}}}'
    elif kind == "malformed":
        line = "{{" + draw(st.text(max_size=30)).replace("\n", " ")
    elif kind == "not_object":
        line = json.dumps(draw(st.one_of(st.lists(st.integers(), max_size=3), st.integers(), words)))
    elif kind == "utf8":
        return b'{"' + id_key.encode() + b'": "\xff\xfe' + draw(st.binary(max_size=8)).replace(b"\n", b"") + b'"}'
    elif kind == "constant":
        line = f'{{"{id_key}": "{rid}", "{text_key}": "a", "w": {draw(st.sampled_from(["NaN", "Infinity", "-Infinity"]))}}}'
    else:
        line = _dumps({id_key: rid, text_key: draw(bad_exprs if text_key == "expr" else st.just(""))})
    return line.encode("utf-8", "surrogatepass")


@st.composite
def _jsonl_bytes(draw, id_key: str, text_key: str, good_text, bad_text: bool = True) -> bytes:
    good = [_dumps({id_key: f"g{i}", text_key: draw(good_text)}).encode() for i in range(draw(st.integers(0, 4)))]
    if good and draw(st.integers(0, 5)) == 0:
        bad = good[0]  # a repeated id
    else:
        bad = draw(_bad_record_line(id_key, text_key, good_text, empty_text=bad_text))
    lines = list(good)
    lines.insert(draw(st.integers(0, len(lines))), bad)
    return b"\n".join(lines) + b"\n"


def _gzip_variant(draw, data: bytes) -> bytes:
    packed = bytearray(gzip.compress(data))
    how = draw(st.sampled_from(["whole", "truncated", "corrupt", "not_gzip"]))
    if how == "truncated":
        return bytes(packed[: draw(st.integers(0, len(packed) - 1))])
    if how == "corrupt" and len(packed) > 20:
        at = draw(st.integers(10, len(packed) - 9))
        packed[at:at + 8] = draw(st.binary(min_size=8, max_size=8))
        return bytes(packed)  # a corrupt stream, or (rarely) other bad content: an error either way
    if how == "not_gzip":
        return b"\x1f\x8b" + draw(st.binary(max_size=40))
    return bytes(packed)


# --------------------------------------------------------------------------- Arrow / Parquet


_BAD_TYPED = [pa.array([1, 2], pa.int64()), pa.array([1.5, 2.5]), pa.array([b"x", b"y"]), pa.array([["a"], ["b"]]),
              pa.array([True, False]), pa.array([{"a": 1}, {"a": 2}])]
bad_arrays = st.sampled_from(_BAD_TYPED + [pa.array([None, None], pa.string())])  # null queries: empty
bad_typed_arrays = st.sampled_from(_BAD_TYPED)  # where nulls are allowed (document text, translator input)
bad_id_arrays = st.sampled_from([
    pa.array([1.5, 2.5]), pa.array([b"x", b"y"]), pa.array([["a"], ["b"]]), pa.array([True, False]),
    pa.array(["a", "a"]), pa.array(["a", None]), pa.array(["", "b"]),
])


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def _parquet_bytes(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


@st.composite
def _columnar_bytes(draw, id_key: str, text_key: str, fmt: str, nulls_ok: bool = False) -> bytes:
    kind = draw(st.sampled_from(["text_type", "id_type", "missing", "truncated"]))
    ids, texts = pa.array(["a", "b"]), pa.array(["x y", "z"])
    if kind == "text_type":
        table = pa.table({id_key: ids, text_key: draw(bad_typed_arrays if nulls_ok else bad_arrays)})
    elif kind == "id_type":
        table = pa.table({id_key: draw(bad_id_arrays), text_key: texts})
    elif kind == "missing":
        table = pa.table({"something": ids, "else": texts})
    else:
        table = pa.table({id_key: ids, text_key: texts})
    data = _ipc_bytes(table) if fmt == "arrow" else _parquet_bytes(table)
    if kind == "truncated" or draw(st.booleans()):
        data = data[: draw(st.integers(0, len(data) - 1))]
    return data


# --------------------------------------------------------------------------- files of each reader


@st.composite
def query_files(draw, translate: bool = False) -> tuple[str, bytes]:
    """A query file (any accepted format) with one certain defect.

    ``translate=True``: a defect ``itlr translate`` must refuse (an empty or null text is a per-row
    translation error there, by design, so it is not drawn).
    """
    fmt = draw(st.sampled_from(["jsonl", "jsonl.gz", "tsv", "parquet", "arrow"]))
    text_key = draw(st.sampled_from(["expr", "text"]))
    good = good_exprs if text_key == "expr" else words
    if fmt == "jsonl":
        return "q.jsonl", draw(_jsonl_bytes("query_id", text_key, good, bad_text=not translate))
    if fmt == "jsonl.gz":
        return "q.jsonl.gz", _gzip_variant(draw, draw(_jsonl_bytes("query_id", text_key, good,
                                                                   bad_text=not translate)))
    if fmt == "tsv":
        return "q.tsv", draw(_tsv_bytes())
    return f"q.{fmt}", draw(_columnar_bytes("query_id", text_key, fmt, nulls_ok=translate))


@st.composite
def _tsv_bytes(draw) -> bytes:
    rows = [f"g{i}\t{draw(good_exprs)}" for i in range(draw(st.integers(0, 3)))]
    kind = draw(st.sampled_from(["fields", "bad_expr", "header", "empty", "utf8", "dup_header"]))
    header = "query_id\texpr"
    if kind == "fields":
        rows.append("\t".join(draw(st.lists(words, min_size=3, max_size=5))))
    elif kind == "bad_expr":
        rows.append("b\t" + draw(bad_exprs).replace("\t", " ").replace("\n", " ").replace("\r", " "))
    elif kind == "header":
        header = "qid\tfoo"
    elif kind == "empty":
        return draw(st.sampled_from([b"", b"\n\n", b"   \n"]))
    elif kind == "dup_header":
        header = "query_id\texpr\texpr"
        rows = [r + "\tx" for r in rows] or ["a\tb\tc"]
    else:
        return (header + "\n").encode() + b"a\t\xff\xfe\n"
    pos = draw(st.integers(0, len(rows)))
    if kind in ("fields", "bad_expr"):
        rows.insert(pos, rows.pop())
    return ("\n".join([header] + rows) + "\n").encode("utf-8", "surrogatepass")


@st.composite
def corpus_files(draw) -> tuple[str, bytes]:
    """A corpus file with one certain defect."""
    fmt = draw(st.sampled_from(["jsonl", "jsonl.gz", "parquet", "arrow"]))
    id_key = draw(st.sampled_from(["doc_id", "_id"]))
    if fmt == "jsonl":
        return "c.jsonl", draw(_jsonl_bytes(id_key, "text", words)).replace(b'"text": ""', b'"text": 5')
    if fmt == "jsonl.gz":
        return "c.jsonl.gz", _gzip_variant(draw, draw(_jsonl_bytes(id_key, "text", words)).replace(
            b'"text": ""', b'"text": 5'))
    return f"c.{fmt}", draw(_columnar_bytes(id_key, "text", fmt, nulls_ok=True))


@st.composite
def npy_files(draw, dim: int) -> bytes:
    """A .npy file that is no usable (N, dim) embedding matrix for 3 ids."""
    kind = draw(st.sampled_from(["empty", "random", "truncated", "shape", "nan", "zero", "dtype"]))
    if kind == "empty":
        return b""
    if kind == "random":
        return draw(st.binary(max_size=200))
    sink = io.BytesIO()
    good = np.ones((3, dim), np.float32)
    if kind == "truncated":
        np.save(sink, good)
        data = sink.getvalue()
        return data[: draw(st.integers(0, len(data) - 1))]
    if kind == "shape":
        arr = draw(st.sampled_from([np.ones(dim, np.float32), np.ones((3, dim, 2), np.float32),
                                    np.ones((0, dim), np.float32), np.ones((3, 0), np.float32),
                                    np.ones((4, dim), np.float32), np.float32(1.0)]))
    elif kind == "nan":
        arr = good.copy()
        arr[draw(st.integers(0, 2)), draw(st.integers(0, dim - 1))] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
    elif kind == "zero":
        arr = good.copy()
        arr[draw(st.integers(0, 2))] = 0
    else:
        arr = draw(st.sampled_from([np.ones((3, dim), np.complex64), np.ones((3, dim), bool),
                                    np.full((3, dim), "x"), np.zeros((3, dim), "datetime64[s]")]))
    np.save(sink, arr, allow_pickle=False)
    return sink.getvalue()


id_files = st.one_of(
    st.just(b""), st.just(b"a\n\nc\n"), st.just(b"a\na\nb\n"), st.just(b"a\nb\n"), st.just(b"a\nb\nc\nd\n"),
    st.binary(min_size=1, max_size=10).map(lambda b: b"a\n\xff" + b + b"\nc\n"),
)

# Invalid values for the fields of an index manifest (any one of them makes it unusable).
MANIFEST_BAD = {
    "format": st.one_of(st.none(), st.integers(), words.map(lambda w: "x" + w)),
    "format_version": st.one_of(st.none(), st.just("1"), st.integers(2, 10**30), st.just(True)),
    "dim": st.one_of(st.integers(-5, 0), st.integers(17, 10**20), st.just("16"), st.just(True), st.none()),
    "count": st.one_of(st.integers(-5, 0), st.integers(41, 10**20), st.just(40.5), st.none()),
    "dtype": st.one_of(st.just("float64"), st.just("int8"), words, st.none()),
    "checksum": st.one_of(st.just("sha256:" + "0" * 64), words, st.none(), st.integers()),
    "ids_checksum": st.one_of(st.just("sha256:" + "1" * 64), words, st.integers()),
    "normalization": st.one_of(st.just("l1"), st.none(), st.integers()),
    "model": st.one_of(st.integers(), st.lists(st.integers(), max_size=2)),
    "created": st.one_of(st.integers(), st.none()),
}


@st.composite
def manifest_damage(draw) -> tuple[str, Any]:
    """``(field, value)`` to set in an index manifest, or ``("", bytes)`` for a manifest that is not JSON."""
    if draw(st.integers(0, 4)) == 0:
        return "", draw(st.one_of(st.binary(max_size=50).map(lambda b: b"{" + b), st.just(b"[1, 2]"),
                                  st.just(b"\xff\xfe{}"), st.integers(33, 3000).map(lambda n: _deep(n).encode()),
                                  st.just(b'{"format": NaN}')))
    field = draw(st.sampled_from(sorted(MANIFEST_BAD)))
    return field, draw(MANIFEST_BAD[field])


@st.composite
def qrels_files(draw) -> bytes:
    good = ["query-id\tcorpus-id\tscore", "q1\td1\t1"]
    kind = draw(st.sampled_from(["fields", "grade", "range", "empty", "utf8", "header"]))
    if kind == "fields":
        good.append("\t".join(draw(st.lists(words, min_size=4, max_size=6))))
    elif kind == "grade":
        good.append("q1\td2\t" + draw(st.sampled_from(["x", "1.5", "", "nan", "1e3"])))
    elif kind == "range":
        good.append(f"q1\td2\t{draw(st.one_of(st.integers(2**31, 10**40), st.integers(-(10**40), -(2**31))))}")
    elif kind == "empty":
        return draw(st.sampled_from([b"", b"\n", b"query-id\tcorpus-id\tscore\n"]))
    elif kind == "utf8":
        return b"query-id\tcorpus-id\tscore\nq1\t\xff\xfe\t1\n"
    else:
        good[0] = "a b"
    return ("\n".join(good) + "\n").encode()


bad_result_tables = st.sampled_from([
    {"query_id": ["q1"], "doc_id": ["d1"], "score": pa.array(["0.5"])},
    {"query_id": ["q1"], "doc_id": ["d1"], "score": pa.array([float("nan")])},
    {"query_id": ["q1"], "doc_id": ["d1"], "score": pa.array([float("inf")])},
    {"query_id": ["q1"], "doc_id": ["d1"], "score": pa.array([[0.5]])},
    {"query_id": ["q1"], "doc_id": [None], "score": pa.array([0.5])},
    {"query_id": [b"q1"], "doc_id": ["d1"], "score": pa.array([0.5])},
    {"query_id": ["q1"], "score": pa.array([0.5])},
    {"query_id": ["zz"], "doc_id": ["d1"], "score": pa.array([0.5])},
])


# --------------------------------------------------------------------------- option values


def _not_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return True
    return False


def _not_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return True
    return False


no_dash = st.text(max_size=12).filter(lambda t: not t.startswith("-") and "\x00" not in t)
bad_positive_ints = st.one_of(
    st.integers(max_value=0).map(str), st.integers(min_value=2**62 + 1).map(str),
    no_dash.filter(_not_int), st.sampled_from(["1.5", "1e3", "nan", "inf", "", " ", "0x10", "-0"]),
)
bad_non_negative_ints = st.one_of(st.integers(max_value=-1).map(str), no_dash.filter(_not_int))
bad_unit_floats = st.one_of(
    st.floats(allow_nan=False).filter(lambda x: not 0 <= x <= 1).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "", "1,5"]), no_dash.filter(_not_float),
)
bad_fractions = st.one_of(bad_unit_floats, st.just("0"), st.just("0.0"))
bad_ops = st.one_of(
    no_dash, st.lists(words, min_size=3, max_size=3).map(",".join),
    st.sampled_from(["product,sum", "product,sum,one_minus,x", "max,sum,one_minus", "product,product,one_minus"]),
)
bad_sizes = st.one_of(no_dash.filter(lambda t: not t.strip()[:1].isdigit()), st.sampled_from(
    ["0", "0GiB", "-1", "1XB", "1.5.5G", "G", "", "nan"]), st.integers(max_value=0).map(str))
bad_measures = st.one_of(
    st.sampled_from(["P@0", "nDCG@1e19", "nDCG@10.5", "R@-1", "P@99999999999", "P(rel=99999999999)@5", "@",
                     "nDCG@", "AP@0", "RR@0"]),
    words.map(lambda w: "Zq" + w), words.map(lambda w: "Zq" + w + "@10"),
)


bad_devices = no_dash.filter(lambda t: re.fullmatch(r"cpu|cuda(:[0-9]+)?|mps", t) is None)


def bad_choice(choices: tuple[str, ...]):
    return no_dash.filter(lambda t: t not in choices)
