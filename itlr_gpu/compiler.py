"""Compile a batch of queries into one flat postfix program.

The program is what every backend executes::

    terms     list[str]   unique term strings of the whole batch (each embedded once)
    opcodes   int8[L]     PUSH=0, AND=1, OR=2, NOT=3 (AND/OR are binary)
    operands  int32[L]    term index for PUSH, -1 otherwise
    offsets   int64[Q+1]  query q's instructions are opcodes[offsets[q]:offsets[q+1]]
    max_depth int         deepest evaluation stack of any query

An n-ary chain ``a AND b AND c`` becomes ``a b AND c AND``: left to right, so
every backend combines in the same order and float32 results agree.

As an Arrow table a program is one row per query (``query_id``, ``opcodes``
list<int8>, ``operands`` list<int32>): the list offsets *are* the program
offsets, and the term table and depth travel in the schema metadata.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
import pyarrow as pa

from .errors import InputError, QuerySyntaxError
from .query import And, Node, Not, Or, Term, parse
from .query.parser import check_term

PUSH, AND, OR, NOT = 0, 1, 2, 3
OPCODE_NAMES = ("PUSH", "AND", "OR", "NOT")
FORMAT = "itlr-program/1"


@dataclass
class Program:
    terms: list[str]
    opcodes: np.ndarray
    operands: np.ndarray
    offsets: np.ndarray
    max_depth: int
    query_ids: list[str] = field(default_factory=list)

    @property
    def num_queries(self) -> int:
        return len(self.offsets) - 1

    def __eq__(self, other: object) -> bool:   # (the dataclass default compares numpy arrays ambiguously)
        if not isinstance(other, Program):
            return NotImplemented
        return (self.terms == other.terms and self.max_depth == other.max_depth and self.query_ids == other.query_ids
                and all(np.array_equal(getattr(self, f), getattr(other, f)) for f in ("opcodes", "operands", "offsets")))

    def query_code(self, q: int) -> tuple[np.ndarray, np.ndarray]:
        if not isinstance(q, (int, np.integer)) or isinstance(q, bool) or not 0 <= q < self.num_queries:
            raise InputError(f"query {q!r} is outside the program", "q", f"an index in 0..{self.num_queries - 1}")
        lo, hi = self.offsets[q], self.offsets[q + 1]
        return self.opcodes[lo:hi], self.operands[lo:hi]

    def describe(self, q: int) -> str:
        """Human-readable postfix of query q, e.g. ``PUSH "a"  PUSH "b"  AND``."""
        ops, args = self.query_code(q)
        return "  ".join(f'PUSH {json.dumps(self.terms[a], ensure_ascii=False)}' if o == PUSH
                         else OPCODE_NAMES[o] for o, a in zip(ops, args))

    def to_arrow(self) -> pa.Table:
        offsets = pa.array(self.offsets.astype(np.int32) if self.offsets[-1] < 2**31 else self.offsets)
        list_type = pa.ListArray if offsets.type == pa.int32() else pa.LargeListArray
        meta = {"format": FORMAT, "terms": json.dumps(self.terms, ensure_ascii=False),
                "max_depth": str(self.max_depth)}
        return pa.table({
            "query_id": pa.array(self.query_ids, pa.string()),
            "opcodes": list_type.from_arrays(offsets, pa.array(self.opcodes, pa.int8())),
            "operands": list_type.from_arrays(offsets, pa.array(self.operands, pa.int32())),
        }).replace_schema_metadata({f"itlr.{k}": v for k, v in meta.items()})

    @classmethod
    def from_arrow(cls, table: pa.Table) -> "Program":
        if not isinstance(table, pa.Table):
            raise InputError(f"program is a {type(table).__name__}", "program table", "a pyarrow Table (to_arrow())")
        meta = {k.decode(): v.decode() for k, v in (table.schema.metadata or {}).items()}
        if meta.get("itlr.format") != FORMAT:
            raise InputError("not a compiled itlr program", "program table", f"schema metadata itlr.format={FORMAT}")
        missing = [c for c in ("query_id", "opcodes", "operands") if c not in table.column_names]
        if missing:
            raise InputError(f"no {', '.join(missing)} column", "program table", "the columns of to_arrow()")
        try:
            terms = json.loads(meta.get("itlr.terms", ""))
            max_depth = int(meta.get("itlr.max_depth", ""))
        except ValueError as e:   # (json's errors are ValueErrors)
            raise InputError(f"unreadable program metadata ({e})", "program table",
                             "itlr.terms a JSON list of strings, itlr.max_depth an integer") from None
        if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms):
            raise InputError("itlr.terms is not a list of strings", "program table", "a JSON list of strings")
        opcodes, offsets = _int_lists(table, "opcodes", np.int8)
        operands, operand_offsets = _int_lists(table, "operands", np.int32)
        if not np.array_equal(offsets, operand_offsets):
            raise InputError("opcodes and operands lists differ in length", "program table")
        ids = table.column("query_id")
        if pa.types.is_dictionary(ids.type):   # (a pandas category, Parquet's read_dictionary)
            ids = ids.cast(ids.type.value_type)
        if not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
            raise InputError(f"column query_id is {ids.type}", "program table", "strings")
        from .io import check_ids   # (none null or empty, none twice, no white space at an end: compile's rules)

        check_ids(ids, "program table", "query_id")
        program = cls(terms=terms, opcodes=opcodes, operands=operands, offsets=offsets, max_depth=max_depth,
                      query_ids=ids.to_pylist())
        validate(program)
        return program


def _int_lists(table: pa.Table, name: str, dtype) -> tuple[np.ndarray, np.ndarray]:
    """(values, offsets from 0) of a program table's list-of-integers column, refused where a value would not
    survive the cast to ``dtype`` unchanged (a wrapped opcode or a truncated float reads as another program)."""
    col = table.column(name)
    kind = col.type
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or not pa.types.is_integer(kind.value_type):
        raise InputError(f"column {name} is {kind}", "program table",
                         f"lists of integers (to_arrow() writes list<{np.dtype(dtype).name}>)")
    lists = col.combine_chunks()   # (an empty array of the type for a table of no batches)
    row = next((i for i, v in enumerate(lists.is_null().to_pylist()) if v), None) if lists.null_count else None
    values = lists.flatten()
    if row is None and values.null_count:
        row = next(i for i, v in enumerate(lists.to_pylist()) if None in v)
    if row is not None:
        raise InputError(f"column {name} holds a null at row {row}", "program table", "no nulls")
    offsets = np.asarray(lists.offsets, dtype=np.int64)
    offsets = offsets - offsets[0]
    raw = values.to_numpy(zero_copy_only=False)   # (compared in its own type: a uint64 would wrap in int64)
    limits = np.iinfo(dtype)
    outside = np.flatnonzero((raw < limits.min) | (raw > limits.max))
    if outside.size:
        at = int(np.searchsorted(offsets, outside[0], side="right")) - 1
        raise InputError(f"column {name} holds {int(raw[outside[0]])} at row {at}", "program table",
                         f"{np.dtype(dtype).name} values ({limits.min}..{limits.max})")
    return raw.astype(dtype), offsets


def emit_postfix(node: Node, term_index: dict[str, int], opcodes: list[int], operands: list[int]) -> int:
    """Append node's postfix code; returns its stack depth.  Iterative, so any AST depth works."""
    depth = peak = 0
    # Work items: a Node to expand, or an int opcode to emit.
    stack: list[Node | int] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, int):
            opcodes.append(item)
            operands.append(-1)
            depth -= 1 if item in (AND, OR) else 0
        elif isinstance(item, Term):
            check_term(item.text)
            index = term_index.setdefault(item.text, len(term_index))
            opcodes.append(PUSH)
            operands.append(index)
            depth += 1
            peak = max(peak, depth)
        elif isinstance(item, Not):
            stack.extend((NOT, item.child))
        elif isinstance(item, (And, Or)):
            op = AND if isinstance(item, And) else OR
            if not item.children:
                raise InputError(f"empty {type(item).__name__} in query AST", "query", "at least one operand")
            first, *rest = item.children
            work: list[Node | int] = [first]
            for child in rest:
                work.extend((child, op))
            stack.extend(reversed(work))
        else:
            raise InputError(f"not a query node: {type(item).__name__}", "query", "Term, Not, And or Or")
    return peak


def query_list(queries: Iterable[str | Node]) -> list[str | Node]:
    """``queries`` as a list (an Arrow column: its values); one string, or something not iterable, is an
    InputError."""
    from .validate import value_list

    return value_list(queries, "queries", "a list of expressions or query ASTs")


def compile_queries(queries: Iterable[str | Node], query_ids: Sequence[str] | None = None) -> Program:
    """Parse (if needed) and compile a batch of queries into one postfix program.

    A syntax error is re-raised with the query's id in its message.
    """
    queries = query_list(queries)
    if query_ids is None:
        query_ids = [f"q{i}" for i in range(len(queries))]
    else:   # the rules of every id: a string (or an integer), none empty, none twice, no white space at an end
        from .validate import value_list

        query_ids = value_list(query_ids, "query_ids", "a list of ids, one per query")
        bad = next((i for i, q in enumerate(query_ids)
                    if not isinstance(q, (str, int, np.integer)) or isinstance(q, bool)), None)
        if bad is not None:
            raise InputError(f"query id {query_ids[bad]!r} at row {bad} is a {type(query_ids[bad]).__name__}",
                             "query_ids", "strings (or integers)")
        query_ids = [str(q) for q in query_ids]
        from .io import check_ids
        from .validate import strings_to_arrow

        check_ids(strings_to_arrow(query_ids, "query_ids", "query id"), "query_ids", "query_id")
    if len(query_ids) != len(queries):
        raise InputError(f"{len(query_ids)} query ids for {len(queries)} queries", "query_ids", "one id per query")
    term_index: dict[str, int] = {}
    opcodes: list[int] = []
    operands: list[int] = []
    offsets = [0]
    max_depth = 0
    for qid, query in zip(query_ids, queries):
        if not isinstance(query, (str, Node)):
            what = "None" if query is None else f"a {type(query).__name__} ({query!r:.40})"
            raise InputError(f"query {qid!r} is {what}", "queries",
                             "expression strings or query ASTs (itlr_gpu.query.Term, And, Or, Not)")
        try:
            node = parse(query)
        except QuerySyntaxError as err:
            raise QuerySyntaxError(f"query {qid!r}: {err.message}", err.query, err.position, err.expected) from None
        max_depth = max(max_depth, emit_postfix(node, term_index, opcodes, operands))
        offsets.append(len(opcodes))
    program = Program(
        terms=list(term_index),
        opcodes=np.asarray(opcodes, dtype=np.int8),
        operands=np.asarray(operands, dtype=np.int32),
        offsets=np.asarray(offsets, dtype=np.int64),
        max_depth=max_depth,
        query_ids=query_ids,
    )
    return program


def validate(program: Program) -> None:
    """Check a program (e.g. one read back from Arrow) is well formed: operand ranges and stack discipline."""
    T = len(program.terms)
    for q in range(program.num_queries):
        depth = peak = 0
        for op, arg in zip(*program.query_code(q)):
            if op == PUSH:
                if not 0 <= arg < T:
                    raise InputError(f"operand {arg} out of range", f"program query {q}", f"0 <= operand < {T}")
                depth += 1
            elif op in (AND, OR):
                depth -= 1
            elif op != NOT:
                raise InputError(f"unknown opcode {op}", f"program query {q}", "0..3")
            if depth < 1:
                raise InputError("stack underflow", f"program query {q}", "a valid postfix program")
            peak = max(peak, depth)
        if depth != 1:
            raise InputError("program leaves %d values on the stack" % depth, f"program query {q}", "exactly 1")
        if peak > program.max_depth:
            raise InputError("stack deeper than max_depth", f"program query {q}", f"<= {program.max_depth}")


def run_postfix(opcodes, push, ops) -> object:
    """Run one opcode sequence: ``push(p)`` is the value of its p-th PUSH (array, tensor or float); AND, OR
    and NOT with ``ops``.  The stack machine of the batched torch paths (each PUSH value a fresh object);
    :func:`evaluate_postfix` stays a separate copy on purpose: it is the oracle those paths are tested against."""
    stack: list = []
    p = 0
    for op in opcodes:
        if op == PUSH:
            stack.append(push(p))
            p += 1
        elif op == NOT:
            stack.append(ops.apply_not(stack.pop()))
        else:
            y, x = stack.pop(), stack.pop()
            stack.append(ops.apply_and(x, y) if op == AND else ops.apply_or(x, y))
    return stack[0]


def evaluate_postfix(program: Program, q: int, term_values, ops) -> object:
    """Evaluate query q on per-term values (array-like indexed by term) with ``ops``: the plain oracle."""
    stack: list = []
    for op, arg in zip(*program.query_code(q)):
        if op == PUSH:
            stack.append(term_values[arg])
        elif op == NOT:
            stack.append(ops.apply_not(stack.pop()))
        else:
            y, x = stack.pop(), stack.pop()
            stack.append(ops.apply_and(x, y) if op == AND else ops.apply_or(x, y))
    return stack[0]
