"""The Python API refuses bad arguments with one InputError naming the argument, and never ranks by scores
that left float32's range (the backends order inf and NaN differently)."""

from __future__ import annotations

import numpy as np
import pytest

import itlr_gpu as itlr
from itlr_gpu.errors import InputError


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


@pytest.mark.parametrize("query_ids, message", [
    ([None], "query id None at row 0 is a NoneType"),
    ([""], "empty query_id at row 0"),
    (["a\tb"], "has white space at an end or a control character"),
    ([" x"], "has white space at an end or a control character"),
    ("x", "query_ids is a str"),
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
