"""Compiler: postfix evaluation equals recursive AST evaluation; Arrow round trip; validation."""

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings, strategies as st

from itlr_gpu import InputError, Ops, QuerySyntaxError, compile_queries
from itlr_gpu.compiler import AND, NOT, OR, PUSH, Program, evaluate_postfix, validate
from itlr_gpu.ops import AND_FAMILIES, NOT_FAMILIES, OR_FAMILIES
from itlr_gpu.query import And, Not, Term, make_or

from strategies import small_vocab_asts

ALL_OPS = [Ops(a, o, n) for a in AND_FAMILIES for o in OR_FAMILIES for n in NOT_FAMILIES]


def eval_ast(node, values: dict, ops: Ops):
    """Recursive AST evaluation: the semantics the postfix program must reproduce."""
    if isinstance(node, Term):
        return values[node.text]
    if isinstance(node, Not):
        return ops.apply_not(eval_ast(node.child, values, ops))
    combine = ops.apply_and if isinstance(node, And) else ops.apply_or
    acc = eval_ast(node.children[0], values, ops)
    for child in node.children[1:]:
        acc = combine(acc, eval_ast(child, values, ops))
    return acc


def test_layout_of_a_small_batch():
    program = compile_queries(["a AND NOT b", "b OR c OR a", "c"], query_ids=["x", "y", "z"])
    assert program.terms == ["a", "b", "c"]
    assert program.offsets.tolist() == [0, 4, 9, 10]
    assert program.opcodes.tolist() == [PUSH, PUSH, NOT, AND, PUSH, PUSH, OR, PUSH, OR, PUSH]
    assert program.operands.tolist() == [0, 1, -1, -1, 1, 2, -1, 0, -1, 2]
    assert program.max_depth == 2
    assert program.query_ids == ["x", "y", "z"]
    assert program.describe(0) == 'PUSH "a"  PUSH "b"  NOT  AND'


def test_depth_of_right_nested_query():
    program = compile_queries(["a OR (b AND (c OR (d AND e)))"])
    assert program.max_depth == 5
    validate(program)


@settings(max_examples=150, deadline=None)
@given(st.lists(small_vocab_asts(), min_size=1, max_size=6), st.sampled_from(ALL_OPS), st.integers(0, 2**31 - 1))
def test_postfix_equals_recursive_evaluation(nodes, ops, seed):
    program = compile_queries(nodes)
    validate(program)
    rng = np.random.default_rng(seed)
    values = rng.uniform(-1, 1, size=(len(program.terms), 5)).astype(np.float32)
    by_text = dict(zip(program.terms, values))
    for q, node in enumerate(nodes):
        got = evaluate_postfix(program, q, values, ops)
        want = eval_ast(node, by_text, ops)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@settings(max_examples=50, deadline=None)
@given(st.lists(small_vocab_asts(), min_size=1, max_size=8))
def test_arrow_round_trip(nodes):
    program = compile_queries(nodes, query_ids=[f"id-{i}" for i in range(len(nodes))])
    table = program.to_arrow()
    assert table.num_rows == len(nodes)
    back = Program.from_arrow(table)
    assert back.terms == program.terms and back.query_ids == program.query_ids
    assert back.max_depth == program.max_depth
    np.testing.assert_array_equal(back.opcodes, program.opcodes)
    np.testing.assert_array_equal(back.operands, program.operands)
    np.testing.assert_array_equal(back.offsets, program.offsets)
    # survives IPC serialisation, as when shipped to a worker
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    again = Program.from_arrow(pa.ipc.open_file(sink.getvalue()).read_all())
    np.testing.assert_array_equal(again.opcodes, program.opcodes)


def test_arrow_slice_keeps_programs():
    program = compile_queries(["a AND b", "NOT c", "a OR d"])
    part = Program.from_arrow(program.to_arrow().slice(1, 2))
    assert part.query_ids == ["q1", "q2"]
    assert part.describe(0) == 'PUSH "c"  NOT'
    assert part.offsets.tolist() == [0, 2, 5]


def test_bad_programs_are_rejected():
    with pytest.raises(InputError, match="not a compiled itlr program"):
        Program.from_arrow(pa.table({"x": [1]}))
    good = compile_queries(["a AND b"])
    for opcodes, operands, what in [
        ([PUSH, AND], [0, -1], "underflow"),
        ([PUSH, PUSH], [0, 1], "leaves 2 values"),
        ([PUSH], [7], "out of range"),
        ([PUSH, 9], [0, -1], "unknown opcode"),
    ]:
        bad = Program(good.terms, np.array(opcodes, np.int8), np.array(operands, np.int32),
                      np.array([0, len(opcodes)]), 2, ["q0"])
        with pytest.raises(InputError, match=what):
            validate(bad)


def test_syntax_error_names_the_query():
    with pytest.raises(QuerySyntaxError, match="query 'second'") as info:
        compile_queries(["a", "b AND"], query_ids=["first", "second"])
    assert info.value.position == 5


def test_id_count_mismatch():
    with pytest.raises(InputError, match="2 query ids for 1 queries"):
        compile_queries(["a"], query_ids=["x", "y"])


def test_long_ast_built_by_hand_compiles():
    """A long chain (no nesting limit: an OR of 5000 terms is one level) compiles iteratively."""
    node = make_or([Term(f"t{i}") for i in range(5000)])
    program = compile_queries([node])
    assert len(program.opcodes) == 9999 and program.max_depth == 2


def test_ops_spec():
    assert Ops.parse("min,max,reciprocal") == Ops("min", "max", "reciprocal")
    assert str(Ops.parse(None)) == "product,sum,one_minus"
    with pytest.raises(InputError, match="unknown AND family 'avg'"):
        Ops.parse("avg,sum,one_minus")
    with pytest.raises(InputError, match="three comma-separated"):
        Ops.parse("product,sum")
    recip = Ops.parse("product,sum,reciprocal")
    x = np.array([-0.5, 0.0, 1e-4, 0.5, 2.0], np.float32)
    np.testing.assert_allclose(recip.apply_not(x), [1000, 1000, 1000, 2, 0.5], rtol=1e-6)
