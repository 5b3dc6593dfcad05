"""The Python API refuses bad arguments with one InputError naming the argument, and never ranks by scores
that left float32's range (the backends order inf and NaN differently)."""

from __future__ import annotations

import json
import os
import warnings

import numpy as np
import pyarrow as pa
import pytest

import itlr_gpu as itlr
from itlr_gpu.errors import InputError, QuerySyntaxError


class AxisEncoder:
    """Terms as fixed unit vectors."""

    V = {"a": [1.0, 0.0, 0.0], "c": [0.0, 1.0, 0.0], "d": [0.0, -1.0, 0.0]}

    def encode(self, texts):
        return np.array([self.V[t] for t in texts], np.float32)


@pytest.fixture()
def index():
    docs = np.array([[-1, 1, 0.1], [-1, -1, 0.1], [1, 1, 0.1]], np.float32)
    return itlr.Index.from_arrays(docs, ["d0", "d1", "d2"], dtype="float32")


@pytest.mark.parametrize("backend", ["torch", "numba"])
def test_scores_beyond_float32_are_refused_on_every_backend(index, backend):
    nots = " AND ".join(["NOT a"] * 13)   # 1000 ** 13 > 3.4e38
    query = f"({nots} AND c) OR ({nots} AND d)"
    with pytest.raises(InputError, match=r"query 'q0' scores some documents inf or NaN.*overflows float32"):
        itlr.search(index, [query], encoder=AxisEncoder(), k=3, ops="product,sum,reciprocal", backend=backend)
    # a few reciprocal NOTs stay in range and rank
    out = itlr.search(index, ["NOT a AND c"], encoder=AxisEncoder(), k=3, ops="product,sum,reciprocal",
                      backend=backend)
    assert np.isfinite(out["score"].to_numpy()).all()


class BasisEncoder:
    """Term "a" as axis 20, "tI" as axis 1 + I (32 dimensions)."""

    def encode(self, texts):
        eye = np.eye(32, dtype=np.float32)
        return np.array([eye[20] if t == "a" else eye[1 + int(t[1:])] for t in texts])


@pytest.mark.parametrize("path", ["torch", "numba", "rerank"])
@pytest.mark.parametrize("case", ["nan", "-inf"])
@pytest.mark.parametrize("k", [3, 20])
def test_a_score_out_of_range_is_refused_whatever_k_on_every_path(path, case, k):
    """One document of 20 scores NaN (1000 ** 13 = inf, times a similarity of 0) or -inf (times a negative one), far
    below the other documents' scores: refused even where it would fall outside the top k (numba's heap once kept
    only documents above its k-th score, so a NaN was dropped; a -inf was refused only with k = N)."""
    if path == "numba":
        pytest.importorskip("numba")
    docs = np.zeros((20, 32), np.float32)
    docs[:, 0] = 1.0
    docs[:, 1:14] = 0.5    # every t similar: the reciprocal NOTs stay small
    docs[:, 20] = 0.5      # "a" similar
    docs[15] = np.eye(32, dtype=np.float32)[0] - (0.5 if case == "-inf" else 0.0) * np.eye(32, dtype=np.float32)[20]
    corpus = itlr.Index.from_arrays(docs, [f"d{i}" for i in range(20)], dtype="float32")
    query = " AND ".join(f"NOT t{i}" for i in range(13)) + " AND a"
    with pytest.raises(InputError, match=r"query 'q0' scores some documents inf or NaN.*overflows float32"):
        if path == "rerank":
            import pyarrow as pa

            from itlr_gpu.scale.rerank import rerank

            cands = pa.table({"query_id": ["q0"] * 20, "doc_id": [f"d{i}" for i in range(20)]})
            rerank(corpus, [query], ["q0"], cands, BasisEncoder(), k=k, ops="product,sum,reciprocal", device="cpu")
        else:
            itlr.search(corpus, [query], encoder=BasisEncoder(), k=k, ops="product,sum,reciprocal", backend=path,
                        device="cpu")


@pytest.mark.parametrize("path", ["torch", "numba"])
@pytest.mark.parametrize("shape", ["x OR nan", "nan OR x", "NOT nan"])
def test_a_nan_inside_or_as_max_or_a_reciprocal_not_is_refused(path, shape):
    """inf times a similarity of 0 is NaN; OR as the max and the reciprocal NOT's floor keep it on either side (numba
    once took max(x, nan) = x and ranked the documents)."""
    if path == "numba":
        pytest.importorskip("numba")
    docs = np.zeros((2, 32), np.float32)
    docs[0, 0] = 1.0                       # similar to no term: 13 reciprocal NOTs overflow, times "a" (0) is NaN
    docs[1, 14] = 1.0                      # "t13"
    corpus = itlr.Index.from_arrays(docs, ["d0", "d1"], dtype="float32")
    nan = "(" + " AND ".join(["NOT t0"] * 13) + " AND a)"
    query = shape.replace("nan", nan).replace("x", "t13")
    with pytest.raises(InputError, match=r"query 'q0' scores some documents inf or NaN \(document 'd0' first\)"):
        itlr.search(corpus, [query], encoder=BasisEncoder(), k=2, ops="product,max,reciprocal", backend=path,
                    device="cpu")


@pytest.mark.parametrize("path", ["torch", "numba", "rerank"])
@pytest.mark.parametrize("query", ["t0", "t0 AND t0", "NOT t0"])
@pytest.mark.parametrize("k", [3, 20])
def test_a_vector_that_is_not_finite_in_the_index_is_refused_on_every_path(tmp_path, path, query, k):
    """An index whose embeddings file was damaged or edited after its checksum was written (a NaN row): every path
    refuses the search and names the document, one-term queries too (numba's one-term loop once ranked such a
    score as nothing, and answered)."""
    if path == "numba":
        pytest.importorskip("numba")
    from itlr_gpu.index import _checksum

    docs = np.random.default_rng(0).standard_normal((20, 32)).astype(np.float32)
    itlr.Index.from_arrays(docs, [f"d{i}" for i in range(20)], dtype="float32").save(tmp_path / "idx")
    matrix = np.load(tmp_path / "idx" / "embeddings.npy")
    matrix[7] = np.nan
    np.save(tmp_path / "idx" / "embeddings.npy", matrix)
    manifest = json.loads((tmp_path / "idx" / "manifest.json").read_text())
    manifest["checksum"] = _checksum(matrix)
    (tmp_path / "idx" / "manifest.json").write_text(json.dumps(manifest))
    corpus = itlr.Index.load(tmp_path / "idx")
    with pytest.raises(InputError, match=r"query 'q0' scores some documents inf or NaN \(document 'd7' first\): "
                                         r"unless the index holds a vector that is not finite"):
        if path == "rerank":
            import pyarrow as pa

            from itlr_gpu.scale.rerank import rerank

            cands = pa.table({"query_id": ["q0"] * 20, "doc_id": [f"d{i}" for i in range(20)]})
            rerank(corpus, [query], ["q0"], cands, BasisEncoder(), k=k, device="cpu")
        else:
            itlr.search(corpus, [query], encoder=BasisEncoder(), k=k, backend=path, device="cpu")


@pytest.mark.parametrize("query_ids, message", [
    ([None], "query id None at row 0 is a NoneType"),
    ([""], "empty query_id at row 0"),
    (["a\tb"], "has white space at an end or a control character"),
    ([" x"], "has white space at an end or a control character"),
    ("x", "query_ids is one str, not a list"),
    ([1.5], "query id 1.5 at row 0 is a float"),
])
def test_query_ids_follow_the_rules_of_every_id(index, query_ids, message):
    with pytest.raises(InputError, match=message):
        itlr.search(index, ["a"], encoder=AxisEncoder(), query_ids=query_ids)
    with pytest.raises(InputError, match=message):
        itlr.compile_queries(["a"], query_ids=query_ids)


def test_integer_query_ids_are_their_decimal_text(index):
    out = itlr.search(index, ["a", "c"], encoder=AxisEncoder(), query_ids=[7, np.int64(8)], k=1)
    assert out["query_id"].to_pylist() == ["7", "8"]


@pytest.mark.parametrize("kwargs, message", [
    (dict(index=None), "index is a NoneType"),
    (dict(index="/tmp"), "index is a str"),
    (dict(queries=None), "queries is a NoneType"),
    (dict(queries=5), "queries is a int"),
    (dict(encoder=lambda texts: texts), "encoder is a function with no encode method"),
])
def test_wrong_argument_types_are_one_input_error(index, kwargs, message):
    args = dict(index=index, queries=["a"], encoder=AxisEncoder()) | kwargs
    with pytest.raises(InputError, match=message):
        itlr.search(args.pop("index"), args.pop("queries"), **args)


def test_programs_compare_by_value_and_an_empty_operator_is_refused():
    p = itlr.compile_queries(["a AND b", "NOT c"])
    assert p == itlr.compile_queries(["a AND b", "NOT c"]) and p != itlr.compile_queries(["a AND b"])
    assert type(p).from_arrow(p.to_arrow()) == p
    for empty in (itlr.And(()), itlr.Or(())):
        with pytest.raises(InputError, match=rf"empty {type(empty).__name__} in query AST"):
            itlr.compile_queries([empty])


def test_an_encoders_output_is_checked_before_any_cast(index):
    class Huge:   # finite float64 beyond float32's range: scaled, not called NaN
        def encode(self, texts):
            return np.array([[1e200, 2e200, 0.0]] * len(texts))

    out = itlr.search(index, ["a"], encoder=Huge(), k=1)
    best = np.array([1.0, 1.0, 0.1]) / np.linalg.norm([1.0, 1.0, 0.1]) @ (np.array([1.0, 2.0, 0.0]) / 5 ** 0.5)
    assert out["doc_id"].to_pylist() == ["d2"] and out["score"].to_pylist() == pytest.approx([best], rel=1e-6)

    class Text:
        def encode(self, texts):
            return [["a", "b", "c"]] * len(texts)

    class Ragged:
        def encode(self, texts):
            return [[1.0, 2.0], [1.0]]

    with pytest.raises(InputError, match="array has dtype"):
        itlr.search(index, ["a"], encoder=Text())
    with pytest.raises(InputError, match="rows of different lengths"):
        itlr.search(index, ["a", "c"], encoder=Ragged())


def test_index_load_of_a_sharded_index_names_the_loader_that_reads_it(tmp_path, index):
    from itlr_gpu import scale

    scale.save_sharded(index, tmp_path / "sh", 2)
    with pytest.raises(InputError, match=r"sharded index .* is not loaded by Index.load .*scale.load_index"):
        itlr.Index.load(tmp_path / "sh")
    assert len(scale.load_index(tmp_path / "sh")) == 3


def test_canonical_parses_a_string_and_refuses_what_no_expression_spells():
    assert itlr.canonical("a and b or not c") == '(("a" AND "b") OR NOT "c")'
    for bad, message in ((itlr.Term(""), "empty term '' in query AST"),
                          (itlr.Term(5), r"a term of the query AST is a int \(5\)"),
                         (itlr.And(()), "empty And in query AST"), (None, "not a query node: NoneType"),
                         (itlr.Or((itlr.Term("a"), "b")), "not a query node: str")):   # was printed as b
        with pytest.raises(InputError, match=message):
            itlr.canonical(bad)
    # a form longer than parse() reads back (quotes and escapes count) is refused, not returned
    for long in (itlr.Term("x" * 999_999), itlr.Term("\\" * 500_000)):
        with pytest.raises(InputError, match=r"canonical form is 1,000,00\d characters long .*at most 1,000,000"):
            itlr.canonical(long)
    longest = itlr.Term("x" * 999_998)
    assert itlr.parse(itlr.canonical(longest)) == longest


def test_rows_queries_and_folders_out_of_range_are_input_errors(index):
    for call, message in ((lambda: index.doc_id_at(3), "row 3 is outside the index"),
                          (lambda: index.doc_id_at([0, -1]), "row -1 is outside the index"),
                          (lambda: itlr.Index.load(None), "index folder is a NoneType"),
                          (lambda: itlr.Index.from_arrays([[1.0, 2.0], [3.0]], ["a", "b"]),
                           "embeddings are not a matrix"),
                          (lambda: itlr.compile_queries(["a", "b"]).describe(2), "query 2 is outside the program"),
                          (lambda: itlr.compile_queries(["a", "b"]).describe(-1), "query -1 is outside the program")):
        with pytest.raises(InputError, match=message):
            call()
    assert index.doc_id_at([0, 2]) == ["d0", "d2"]
    assert itlr.compile_queries(["a", "b"]).describe(1) == 'PUSH "b"'


@pytest.mark.parametrize("rows, message", [
    ([1.7], "rows hold float64 values"), (np.array([0.9, 2.2]), "rows hold float64 values"),   # not truncated
    (True, "rows is bool"), (1.5, "rows is float"), ("1", "rows is str"), ([[0, 1]], r"of shape \(1, 2\)"),
    (None, "rows is NoneType"), (2**70, "row 1180591620717411303424 is outside"), ([1, -2**70], "row -118"),
])
def test_rows_that_are_no_row_numbers_are_refused(index, rows, message):
    with pytest.raises(InputError, match=message):
        index.doc_id_at(rows)
    assert index.doc_id_at(np.int64(2)) == ["d2"] and index.doc_id_at(range(2)) == ["d0", "d1"]
    assert index.doc_id_at([]) == []


@pytest.mark.parametrize("ids", [{"a", "b", "c"}, {"a": 0, "b": 1, "c": 2}, frozenset("abc")])
def test_doc_ids_without_a_row_order_are_refused(ids):
    """A set's order is its hashes' (it changed with PYTHONHASHSEED): its ids would land on arbitrary rows."""
    with pytest.raises(InputError, match=r"doc_ids is a (set|dict|frozenset) .*has no row order"):
        itlr.Index.from_arrays(np.eye(3, dtype=np.float32), ids)


def test_a_program_table_that_is_not_one_is_an_input_error():
    table = itlr.compile_queries(["a AND b"]).to_arrow()
    meta = dict(table.schema.metadata)
    for bad, message in (("x", "program is a str"),
                         (table.replace_schema_metadata({**meta, b"itlr.terms": b"not json"}),
                          "unreadable program metadata"),
                         (table.replace_schema_metadata({**meta, b"itlr.terms": b"[1]"}),
                          "itlr.terms is not a list of strings"),
                         (table.drop(["operands"]), "no operands column")):
        with pytest.raises(InputError, match=message):
            itlr.Program.from_arrow(bad)


def _program_with(column: str, values: pa.Array) -> pa.Table:
    table = itlr.compile_queries(['"a" AND "b"', 'NOT "c"']).to_arrow()
    i = table.column_names.index(column)
    return table.set_column(i, table.field(column).with_type(values.type), values)


@pytest.mark.parametrize("column, values, message", [
    ("opcodes", pa.array([[256, 0, 1], [0, 2]], pa.list_(pa.int16())), r"opcodes holds 256 at row 0 .*int8"),
    ("operands", pa.array([[0, 1, -1], [2**32, -1]], pa.list_(pa.int64())), r"operands holds 4294967296 at row 1"),
    ("operands", pa.array([[0.0, 1.7, -1], [0, -1]], pa.list_(pa.float64())), r"operands is list<item: double>"),
    ("opcodes", pa.array([[0, None, 1], [0, 2]], pa.list_(pa.int8())), r"opcodes holds a null at row 0"),
    ("opcodes", pa.array([[0, 0, 1], None], pa.list_(pa.int8())), r"opcodes holds a null at row 1"),
    ("opcodes", pa.array(["a", "b"]), r"opcodes is string \(expected lists of integers"),
    ("query_id", pa.array(["q0", None]), r"null query_id at row 1"),
    ("query_id", pa.array(["q0", "q0"]), r"duplicate query_id 'q0' at row 1"),
    ("query_id", pa.array([1, 2]), r"query_id is int64 \(expected strings"),
    ("operands", pa.array([[0, 1, 0], [2**64 - 1, 0]], pa.list_(pa.uint64())), r"holds 18446744073709551615 at row 1"),
])
def test_a_program_table_is_read_as_written_or_refused(column, values, message):
    """A value that would wrap or truncate in the cast to the program's int8 / int32 reads as another program:
    refused with its column and row, as are nulls and ids compile_queries would refuse."""
    with pytest.raises(InputError, match=message):
        itlr.Program.from_arrow(_program_with(column, values))


def test_a_program_table_in_chunks_slices_or_none_reads_back():
    program = itlr.compile_queries(['"a" AND "b"', 'NOT "c"'])
    table = program.to_arrow()
    assert itlr.Program.from_arrow(pa.concat_tables([table.slice(0, 1), table.slice(1)])) == program
    tail = itlr.Program.from_arrow(table.slice(1))
    assert tail.query_ids == ["q1"] and tail.query_code(0)[0].tolist() == [0, 3]
    empty = itlr.Program.from_arrow(pa.Table.from_batches([], table.schema))
    assert empty.num_queries == 0 and empty.query_ids == []
    ids = pa.array(["q0", "q1"]).dictionary_encode()   # a pandas category, Parquet's read_dictionary
    assert itlr.Program.from_arrow(_program_with("query_id", ids)) == program


def test_a_product_and_that_underflows_warns_the_caller(index):
    long_and = " AND ".join(["a"] * 300)   # cosines below 1 multiplied 300 times: below float32's range
    with pytest.warns(UserWarning, match=r"1 query \(the first 'q0'\) scored every document 0 .*underflows"):
        itlr.search(index, [long_and], encoder=AxisEncoder(), k=2)


def test_a_long_and_whose_top_k_ends_at_zero_warns_the_caller():
    """Some documents below float32's range, not all: those keep the index's order, which the warning says; a short
    query's 0 is a score (no warning)."""
    docs = np.array([[1.0, 0.0, 0.0], [0.3, 0.954, 0.0], [0.2, 0.98, 0.0]], np.float32)
    near = itlr.Index.from_arrays(docs, ["top", "low1", "low2"], dtype="float32")
    long_and = " AND ".join(["a"] * 80)   # 0.3 ** 80 and 0.2 ** 80 fall below 1.2e-38; 1 ** 80 does not
    with pytest.warns(UserWarning, match=r"1 query \(the first 'q0', 80 terms\) scored some documents of their top k "
                                         r"below float32's normal range .* keep few digits \(subnormal\) or reach 0"):
        results = itlr.search(near, [long_and], encoder=AxisEncoder(), k=3)
    assert results.column("doc_id").to_pylist()[0] == "top"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert itlr.search(near, ["a AND c"], encoder=AxisEncoder(), k=3).column("score").to_pylist()[-1] == 0.0


def test_an_all_zero_result_of_a_short_query_names_its_cause():
    """A short query cannot underflow: on a corpus without spread (identical documents) the calibration gives
    every term 0, and the warning says so instead of blaming a long product; without calibration, on terms that
    score 0 (orthogonal to every document), it says the terms score 0."""
    same = itlr.Index.from_arrays(np.tile(np.array([[0.6, 0.8, 0.0]], np.float32), (4, 1)), ["a", "b", "c", "e"],
                                  dtype="float32")
    with pytest.warns(UserWarning, match=r"1 query \(the first 'q0'\) scored every document 0 \(2 terms\): the "
                                         r"calibration 'zscore' .* no spread") as seen:
        itlr.search(same, ["a AND c"], encoder=AxisEncoder(), k=2, calibration="zscore")
    assert not any("underflows" in str(w.message) for w in seen)
    flat = itlr.Index.from_arrays(np.array([[0.0, 0.0, 1.0], [0.0, 0.0, -1.0]], np.float32), ["x", "y"],
                                  dtype="float32")
    with pytest.warns(UserWarning, match=r"scored every document 0 \(2 terms\): its terms score 0 under these "
                                         "operators"):
        itlr.search(flat, ["a AND c"], encoder=AxisEncoder(), k=2)
    # the hybrid standardises its two scores over the documents: identical documents leave nothing to mix
    with pytest.warns(UserWarning, match=r"scored every document 0 \(2 terms\): the hybrid standardises .* no "
                                         r"spread .*without --hybrid") as seen:
        itlr.search(same, ["a AND c"], encoder=AxisEncoder(), k=2, hybrid=0.5, whole_queries=["a"])
    assert not any("under these operators" in str(w.message) for w in seen)


@pytest.mark.parametrize("path", ["memory", "shards", "rerank", "bench"])
def test_every_search_path_refuses_overflow_and_warns_of_underflow(index, path):
    """A result folder's batches (memory), --shard-rows / --memory-cap (shards), rerank and itlr bench (which
    would otherwise time a search that itlr search refuses) check their results as the plain search does: scores
    beyond float32 are refused with the query named, an all-zero query is warned of."""
    import pyarrow as pa

    from itlr_gpu.scale.bulk import BatchSearcher
    from itlr_gpu.scale.rerank import rerank

    nots = " AND ".join(["NOT a"] * 13)   # 1000 ** 13 > 3.4e38
    overflow, underflow = f"({nots} AND c) OR ({nots} AND d)", " AND ".join(["a"] * 300)

    def run(query, ops):
        queries = [itlr.parse(query)]
        if path == "bench":
            from itlr_gpu import bench
            from itlr_gpu.compiler import compile_queries
            from itlr_gpu.ops import Ops

            return bench.measure(index, compile_queries(queries, ["q0"]), AxisEncoder(), Ops.parse(ops), 3,
                                 ["torch-cpu"], warmup=0, repeat=1)
        if path == "rerank":
            cands = pa.table({"query_id": ["q0"] * 3, "doc_id": ["d0", "d1", "d2"]})
            return rerank(index, queries, ["q0"], cands, AxisEncoder(), k=3, ops=ops, device="cpu")[0]
        return BatchSearcher(index, AxisEncoder(), k=3, ops=ops, mode=path, shard_rows=2, device="cpu")(["q0"], queries)

    with pytest.raises(InputError, match=r"query 'q0' scores some documents inf or NaN.*overflows float32"):
        run(overflow, "product,sum,reciprocal")
    with pytest.warns(UserWarning, match=r"1 query \(the first 'q0'\) scored every document 0 .*underflows"):
        run(underflow, "product,sum,one_minus")


def test_api_inputs_that_pyarrow_or_torch_would_refuse_with_their_own_exceptions(index):
    """Lone surrogates (ids, query ids, terms, whole-query texts), a device string torch cannot parse, a term that
    is not a string, parse() of a non-string: one library error each; integer ids beyond 64 bits and an encoder's
    torch tensors (autograd's, bfloat16) are accepted."""
    import torch

    docs = np.eye(3, dtype=np.float32)
    with pytest.raises(InputError, match=r"doc_ids: doc id at row 1 is not valid Unicode \(lone surrogate\)"):
        itlr.Index.from_arrays(docs, ["a", "b\ud800", "c"])
    assert itlr.Index.from_arrays(docs, [2**64, 1, 2]).doc_ids.to_pylist() == ["18446744073709551616", "1", "2"]
    enc = AxisEncoder()
    with pytest.raises(InputError, match=r"query_ids: query id at row 0 is not valid Unicode"):
        itlr.search(index, ["a"], encoder=enc, query_ids=["q\ud800"])
    with pytest.raises(QuerySyntaxError, match=r"lone surrogate '\\ud800' at position 1"):
        itlr.search(index, ["a\ud800 AND c"], encoder=enc)
    # a Latin-1 byte in a command-line argument, as Python decodes it (surrogateescape)
    with pytest.raises(QuerySyntaxError, match=r"byte 0xE9 that is not UTF-8 at position 3"):
        itlr.search(index, [b"caf\xe9 AND c".decode("utf-8", "surrogateescape")], encoder=enc)
    with pytest.raises(InputError, match=r"whole_queries: whole query at row 0 is not valid Unicode"):
        itlr.search(index, ["a"], encoder=enc, hybrid=0.5, whole_queries=["x\ud800"])
    with pytest.raises(InputError, match=r"unknown device 'cpu:abc'"):
        itlr.search(index, ["a"], encoder=enc, device="cpu:abc")
    with pytest.raises(InputError, match=r"a term of the query AST is a int \(5\)"):
        itlr.search(index, [itlr.Term(5)], encoder=enc)
    for bad in (None, b"a AND c"):
        with pytest.raises(InputError, match=r"query is a (NoneType|bytes)"):
            itlr.parse(bad)

    want = itlr.search(index, ["a AND NOT c"], encoder=enc, k=3)

    class TensorEncoder:
        def __init__(self, dtype, grad):
            self.dtype, self.grad = dtype, grad

        def encode(self, texts):
            return torch.tensor(enc.encode(texts), dtype=self.dtype).requires_grad_(self.grad)

    for dtype, grad in ((torch.float32, True), (torch.bfloat16, False)):
        got = itlr.search(index, ["a AND NOT c"], encoder=TensorEncoder(dtype, grad), k=3)
        assert got.column("doc_id").equals(want.column("doc_id"))


def test_a_whole_table_a_mapping_or_a_set_is_no_list_of_queries(index):
    """Iterating a table gives its column names and a dict its keys, and a set has no order to match ids to: each
    is one InputError wherever a list of rows is taken (queries, query ids, whole-query texts, translate's texts);
    a generator and an Arrow column are lists of rows."""
    import pyarrow as pa

    from itlr_gpu.scale.rerank import rerank
    from itlr_gpu.translate import translate

    table = pa.table({"query_id": ["x"], "expr": ["a AND NOT c"]})
    for bad, message in ((table, r"queries is a Table \(a whole table\) \(expected .*: one of its columns"),
                         ({"x": "a"}, r"queries is a dict \(expected .*\(a dict has no row order\)"),
                         ({"a", "c"}, r"queries is a set"), ("a", "queries is one str, not a list")):
        with pytest.raises(InputError, match=message):
            itlr.search(index, bad, encoder=AxisEncoder())
        with pytest.raises(InputError, match=message):
            rerank(index, bad, ["x"], pa.table({"query_id": ["x"], "doc_id": ["d0"]}), AxisEncoder(), device="cpu")
    with pytest.raises(InputError, match="query_ids is a set"):
        itlr.search(index, ["a"], encoder=AxisEncoder(), query_ids={"x"})
    with pytest.raises(InputError, match="texts is a set"):
        translate({"a or b"})
    with pytest.raises(InputError, match="whole_queries is a Table"):
        itlr.search(index, ["a"], encoder=AxisEncoder(), hybrid=0.5, whole_queries=table)
    # a generator of whole-query texts and an Arrow column of texts are lists of rows
    kw = dict(encoder=AxisEncoder(), k=2, score_options="recommended")
    assert itlr.search(index, ["a"], whole_queries=(t for t in ["a"]), **kw).equals(
        itlr.search(index, ["a"], whole_queries=["a"], **kw))
    rows = translate(pa.table({"text": ["coffee but not tea"]}).column("text"))
    assert rows[0].text == "coffee but not tea" and rows[0].expr == '("coffee" AND NOT "tea")'


def test_a_pandas_data_frame_is_no_list_of_queries(index):
    pd = pytest.importorskip("pandas")
    with pytest.raises(InputError, match="queries is a DataFrame"):
        itlr.search(index, pd.DataFrame({"query_id": ["x"], "expr": ["a"]}), encoder=AxisEncoder())
    assert itlr.search(index, pd.Series(["a"]), encoder=AxisEncoder(), k=1).num_rows == 1


def test_string_view_and_large_string_category_columns_are_strings():
    """pandas 3 writes a "category" column as dictionary<large_string> and Polars strings as string_view."""
    import pyarrow as pa

    class Enc:
        def encode(self, texts):
            return np.ones((len(texts), 3), np.float32)

    for ids, text in ((pa.array(["x", "y"], pa.large_string()).dictionary_encode(), pa.array(["cat", "dog"])),
                      (pa.array(["x", "y"], pa.string_view()), pa.array(["cat", "dog"], pa.string_view()))):
        built = itlr.Index.build(pa.table({"doc_id": ids, "text": text}), encoder=Enc())
        assert built.doc_ids.to_pylist() == ["x", "y"]


def test_translate_refuses_what_is_not_a_text_row_by_row():
    from itlr_gpu.translate import translate

    rows = translate([123, b"cats", "cats\ud800", None, "  ", "cats but not dogs"])
    assert [r.error for r in rows[:5]] == [
        "text is int 123 (expected a string)", "text is bytes b'cats' (expected a string)",
        "lone surrogate '\\ud800' at character 4 (expected valid Unicode text)", "missing text", "empty text"]
    assert rows[2].text == "cats\\ud800"   # escaped: an output table can hold it
    assert rows[5].expr == '("cats" AND NOT "dogs")' and rows[5].error is None


def test_arrow_columns_are_accepted_wherever_lists_are(index):
    """A query file read with pyarrow hands over columns whose elements are Arrow scalars: queries, query ids
    (strings or integers, as doc ids) and whole-query texts given as columns search as their Python lists do."""
    import pyarrow as pa

    from itlr_gpu.scale.rerank import rerank

    table = pa.table({"query_id": ["x", "y"], "expr": ["a AND NOT c", "a OR c"], "text": ["a", "d"]})
    kw = dict(encoder=AxisEncoder(), k=3, score_options="recommended")
    want = itlr.search(index, ["a AND NOT c", "a OR c"], query_ids=["x", "y"], whole_queries=["a", "d"], **kw)
    got = itlr.search(index, table.column("expr"), query_ids=table.column("query_id"),
                      whole_queries=table.column("text"), **kw)
    assert got.equals(want)
    numbered = itlr.search(index, table.column("expr").combine_chunks(), query_ids=pa.array([7, 8]),
                           whole_queries=pa.array(["a", "d"]), **kw)
    assert numbered.column("query_id").to_pylist() == ["7"] * 3 + ["8"] * 3
    assert numbered.column("doc_id").equals(want.column("doc_id"))
    cands = pa.table({"query_id": ["x", "x", "y"], "doc_id": ["d0", "d1", "d2"]})
    plain = rerank(index, ["a AND NOT c", "a OR c"], ["x", "y"], cands, AxisEncoder(), k=3, device="cpu")[0]
    arrow = rerank(index, table.column("expr"), table.column("query_id"), cands, AxisEncoder(), k=3, device="cpu")[0]
    assert arrow.equals(plain)


def test_an_overflow_with_one_minus_names_its_own_cause(index):
    # NOT as one_minus is up to 2 where a similarity is negative: a long enough AND of them passes float32 too, and
    # the advice is not "NOT as one_minus", which it already is
    query = "c AND " + " AND ".join(["NOT d"] * 200)
    with pytest.raises(InputError, match=r"overflows float32 .* with ops product,sum,one_minus \(expected fewer NOTs "
                                         r"in one AND \(1 - x is up to 2 where a similarity is negative"):
        itlr.search(index, [query], encoder=AxisEncoder(), k=3)


def test_recommended_with_a_named_or_family_is_what_the_cli_computes(index):
    """score_options="recommended" with ops naming an OR family: that family replaces the preset's OR as the max,
    as `itlr search --recommended --ops product,sum,one_minus` does (the API kept the max whatever ops said);
    the RECOMMENDED object itself is used as it is."""
    from dataclasses import replace

    from itlr_gpu.engine import recommended_for

    kw = dict(encoder=AxisEncoder(), k=3, whole_queries=["a", "c"])
    queries = ["a OR c", "c OR NOT d"]
    named = itlr.search(index, queries, score_options="recommended", ops="product,sum,one_minus", **kw)
    assert named.equals(itlr.search(index, queries, score_options=replace(itlr.RECOMMENDED, or_max=False), **kw))
    preset = itlr.search(index, queries, score_options="recommended", **kw)
    assert not named.column("score").equals(preset.column("score"))
    assert preset.equals(itlr.search(index, queries, score_options="recommended", ops="product,max,one_minus", **kw))
    assert preset.equals(itlr.search(index, queries, score_options=itlr.RECOMMENDED, ops="product,sum,one_minus",
                                     **kw))
    assert recommended_for(None) is itlr.RECOMMENDED and recommended_for("min,max,reciprocal") is itlr.RECOMMENDED
    assert recommended_for("product,sum,one_minus").or_max is False


class _OwnEncoder:
    name = "my-model"

    def __init__(self, settings):
        self.settings = settings

    def encode(self, texts):
        return np.eye(len(texts), 4, dtype=np.float32) + 0.1


@pytest.mark.parametrize("settings", [{"model": "m", "max_length": 128}, {"model": 5}, {"model": "m", "x": object()},
                                      {"model": "m", "max_length": 128, "backend": "mine", "precision": "fp32"}])
def test_what_load_would_refuse_is_refused_before_save(tmp_path, settings):
    """An index whose manifest Index.load refuses as damaged was built and saved: a model that is no string, an
    own encoder's settings that no index records (half of the run's fields, a value JSON cannot hold)."""
    import pyarrow as pa

    with pytest.raises(InputError, match=r"model is int 5"):
        itlr.Index.from_arrays(np.eye(2, dtype=np.float32), ["a", "b"], model=5)
    corpus = pa.table({"doc_id": ["a", "b"], "text": ["first text", "second text"]})
    with pytest.raises(InputError, match=r"encoder: encoder.settings is "):
        itlr.Index.build(corpus, _OwnEncoder(settings), progress=False)
    ok = itlr.Index.build(corpus, _OwnEncoder({"model": "m"}), progress=False)   # what imported embeddings record
    ok.save(tmp_path / "i")
    assert itlr.Index.load(tmp_path / "i").manifest["encoder"] == {"model": "m"}


class _TorchOut:
    """An own encoder returning torch tensors: bfloat16, autograd's, or a list of bfloat16 rows."""

    def __init__(self, kind):
        self.kind = kind

    def encode(self, texts):
        import torch

        rows = torch.from_numpy(np.eye(len(texts), 8, dtype=np.float32) + 0.1)
        if self.kind == "bf16":
            return rows.bfloat16()
        if self.kind == "grad":
            return rows.requires_grad_()
        return [r.bfloat16() for r in rows]


@pytest.mark.parametrize("kind", ["bf16", "grad", "rows"])
def test_an_own_encoders_torch_output_builds_as_it_searches(kind):
    """Index.build read the encoder's output with np.asarray (a bf16 or autograd tensor failed inside torch) where
    search converts it: both take it now."""
    import pyarrow as pa

    corpus = pa.table({"doc_id": ["a", "b", "c"], "text": ["one", "two", "three"]})
    index = itlr.Index.build(corpus, _TorchOut(kind), progress=False, dtype="float32")
    out = itlr.search(index, ['"one" AND NOT "two"'], encoder=_TorchOut(kind), k=3)
    assert out.num_rows == 3 and np.isfinite(out["score"].to_numpy()).all()


def test_own_encoders_bad_output_or_attributes_are_input_errors():
    import pyarrow as pa

    corpus = pa.table({"doc_id": ["a", "b"], "text": ["one", "two"]})

    class Ragged:
        def encode(self, texts):
            return [[1.0] * 8, [1.0] * 7][:len(texts)]

    class DimText(_OwnEncoder):
        dim = "eight"

    with pytest.raises(InputError, match="encoder returned rows of different lengths"):
        itlr.Index.build(corpus, Ragged(), progress=False)
    with pytest.raises(InputError, match=r"encoder.dim is str 'eight'"):
        itlr.Index.build(corpus, DimText({"model": "m"}), progress=False)

    class NotAMethod(_OwnEncoder):
        encode_queries = 5   # not callable: the plain encode serves the queries

    index = itlr.Index.build(corpus, NotAMethod({"model": "m"}), progress=False)
    assert itlr.search(index, ["x"], encoder=NotAMethod({"model": "m"}), k=2).num_rows == 2


def test_embeddings_as_sparse_or_arrow_tensors_and_bytes_folders(tmp_path):
    """A sparse torch tensor (the README takes torch tensors) and a pyarrow Tensor are read as their dense values;
    a meta tensor has none to read; save takes a bytes path as open() does, and refuses what is no path."""
    import pyarrow as pa
    import torch

    eye = np.eye(3, dtype=np.float32)
    want = itlr.Index.from_arrays(eye, ["a", "b", "c"], dtype="float32").embeddings
    for given in (torch.from_numpy(eye).to_sparse(), torch.from_numpy(eye).to_sparse_csr(), pa.Tensor.from_numpy(eye)):
        got = itlr.Index.from_arrays(given, ["a", "b", "c"], dtype="float32").embeddings
        np.testing.assert_array_equal(got, want)
    with pytest.raises(InputError, match="meta device"):
        itlr.Index.from_arrays(torch.empty(3, 3, device="meta"), ["a", "b", "c"])
    index = itlr.Index.from_arrays(eye, ["a", "b", "c"])
    index.save(os.fsencode(str(tmp_path / "i")))
    assert itlr.Index.load(tmp_path / "i").doc_ids.to_pylist() == ["a", "b", "c"]
    with pytest.raises(InputError, match="index folder is a int"):
        index.save(5)


def test_build_batch_size_and_dtype_none():
    """batch_size takes a numpy integer as k does and refuses True (it was read as 1); dtype=None is named as such
    (numpy read it as float64: 'unsupported dtype float64')."""
    import pyarrow as pa

    corpus = pa.table({"doc_id": ["a", "b"], "text": ["one", "two"]})
    assert itlr.Index.build(corpus, _OwnEncoder({"model": "m"}), batch_size=np.int64(1), progress=False).dim == 4
    with pytest.raises(InputError, match="batch_size True"):
        itlr.Index.build(corpus, _OwnEncoder({"model": "m"}), batch_size=True, progress=False)
    with pytest.raises(InputError, match="dtype is None"):
        itlr.Index.from_arrays(np.eye(2, dtype=np.float32), ["a", "b"], dtype=None)


def test_score_options_recommended_in_any_case(index):
    kw = dict(encoder=AxisEncoder(), k=3, whole_queries=["a"])
    want = itlr.search(index, ["a AND NOT c"], score_options="recommended", **kw)
    assert itlr.search(index, ["a AND NOT c"], score_options=" Recommended", **kw).equals(want)
    with pytest.raises(InputError, match="score_options is 'recommend'"):
        itlr.search(index, ["a AND NOT c"], score_options="recommend", **kw)


def test_masked_and_time_typed_embeddings_are_refused():
    """A masked array's mask was ignored (its hidden values embedded); numpy counts a timedelta as an integer."""
    eye = np.eye(2, dtype=np.float32)
    with pytest.raises(InputError, match="masked array with masked values"):
        itlr.Index.from_arrays(np.ma.masked_array(eye, mask=[[0, 1], [0, 0]]), ["a", "b"])
    assert itlr.Index.from_arrays(np.ma.masked_array(eye), ["a", "b"]).dim == 2   # nothing masked: its values
    for kind in ("timedelta64[s]", "datetime64[s]"):
        with pytest.raises(InputError, match=f"embeddings have dtype {kind.replace('[', '.').replace(']', '.')}"):
            itlr.Index.from_arrays(eye.astype(kind), ["a", "b"])


@pytest.mark.parametrize("backend", ["torch", "numba"])
def test_a_negative_zero_score_is_written_as_zero(backend):
    """-1 x 0 is -0.0 in float32; results showed -0.0 beside 0.0 for the same score (ties are one score already)."""
    if backend == "numba":
        pytest.importorskip("numba")
    docs = np.array([[-1, 0, 0.5], [1, 0, 0], [0, 0, 1]], np.float32)
    index = itlr.Index.from_arrays(docs, ["d0", "d1", "d2"], dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # every document scores 0: said by a warning
        out = itlr.search(index, ["a AND c"], encoder=AxisEncoder(), k=3, backend=backend)
    scores = out["score"].to_numpy()
    assert (scores == 0).all() and not np.signbit(scores).any()


def test_append_warns_of_ids_differing_only_in_unicode_normalisation():
    """from_arrays warns of two such ids in one list; two indexes each clean met silently in append."""
    first = itlr.Index.from_arrays(np.eye(2, dtype=np.float32), ["caf\u00e9", "x"])
    second = itlr.Index.from_arrays(np.eye(2, dtype=np.float32), ["cafe\u0301", "y"])
    with pytest.warns(UserWarning, match=r"'caf\u00e9' \(row 0\) and 'cafe\u0301' \(row 2\) differ only in Unicode"):
        both = first.append(second)
    assert both.doc_ids.to_pylist() == ["caf\u00e9", "x", "cafe\u0301", "y"]


def test_a_best_score_of_zero_over_negative_ones_is_not_called_every_document_zero():
    docs = np.array([[-1, 0.001, 0], [1, 0, 0], [0, 1, 0]], np.float32)
    index = itlr.Index.from_arrays(docs, ["d0", "d1", "d2"], dtype="float32")
    with pytest.warns(UserWarning, match=r"scored no document above 0 \(its best score is 0\).*the documents at 0 "
                                         r"keep the index's order"):
        out = itlr.search(index, ["a AND c"], encoder=AxisEncoder(), k=3)
    assert out["score"].to_pylist()[2] < 0


def test_an_index_of_another_model_is_not_searched_with_the_bundled_one(tmp_path):
    """encoder=None embeds queries as the index was built: an index naming another model without its folder is
    refused (the bundled MiniLM would embed into a space unrelated to its documents'), by search and rerank."""
    from itlr_gpu.scale.rerank import rerank

    docs = np.random.default_rng(0).standard_normal((5, 384)).astype(np.float32)
    other = itlr.Index.from_arrays(docs, list("abcde"), model="BAAI/bge-small-en-v1.5")
    candidates = pa.table({"query_id": ["q0"], "doc_id": ["a"]})
    with pytest.raises(InputError, match=r"index: index was built with model 'BAAI/bge-small-en-v1.5' "
                                         r"\(expected encoder= an encoder of that model"):
        itlr.search(other, ['"coffee"'], k=1)
    with pytest.raises(InputError, match="built with model 'BAAI/bge-small-en-v1.5'"):
        rerank(other, ['"coffee"'], ["q0"], candidates)
    other.save(tmp_path / "idx")
    with pytest.raises(InputError, match=r"idx: index was built with model"):
        itlr.search(itlr.Index.load(tmp_path / "idx"), ['"coffee"'], k=1)
    # a recorded model folder that is gone is named
    moved = itlr.Index.from_arrays(docs, list("abcde"))
    moved.manifest["model_path"] = str(tmp_path / "gone")
    with pytest.raises(InputError, match=r"the index's model folder .*gone is missing"):
        itlr.search(moved, ['"coffee"'], k=1)
    # an own encoder is the caller's word: searched
    out = itlr.search(other, ['"a"'], encoder=type("E", (), {"encode": lambda s, t: docs[:len(t)]})(), k=1)
    assert out.column("doc_id").to_pylist() == ["a"]


def test_an_all_zero_long_and_under_min_is_not_put_down_to_underflow():
    """Only a product AND underflows: eight terms that score 0 under min are said to score 0, and the warning points
    at the caller's line, not at the package's."""
    d = 16
    one_hot = itlr.Index.from_arrays(np.eye(d, dtype=np.float32), [f"d{i}" for i in range(d)], dtype="float32")

    class OneHot:
        def encode(self, texts):
            return np.stack([np.eye(d, dtype=np.float32)[int(t[1:])] for t in texts])

    query = " AND ".join(f'"t{i}"' for i in range(8))
    with pytest.warns(UserWarning, match=r"scored every document 0 \(8 terms\): its terms score 0 under these "
                                         r"operators") as seen:
        itlr.search(one_hot, [query], encoder=OneHot(), ops="min,max,one_minus", k=3)
    assert not any("underflows" in str(w.message) for w in seen)
    assert {os.path.basename(w.filename) for w in seen} == {os.path.basename(__file__)}
    with pytest.warns(UserWarning, match="a product AND of that many terms underflows"):
        itlr.search(one_hot, [query], encoder=OneHot(), k=3)
