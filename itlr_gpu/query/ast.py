"""Abstract syntax of logical queries.

Nodes are immutable and hashable.  ``And``/``Or`` are n-ary and kept *flat*: an
``And`` never has an ``And`` child (the fuzzy AND/OR of every operator family is
associative, so flattening changes no score), which makes the canonical form
unique.  ``Not`` is never simplified (``NOT (NOT x)`` is not ``x`` under the
reciprocal family).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union


@dataclass(frozen=True)
class Term:
    text: str


@dataclass(frozen=True)
class Not:
    child: "Node"


@dataclass(frozen=True)
class And:
    children: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    children: tuple["Node", ...]


Node = Union[Term, Not, And, Or]


def make_and(children) -> Node:
    """Build a flat AND; one child is returned as is."""
    return _make(And, children)


def make_or(children) -> Node:
    """Build a flat OR; one child is returned as is."""
    return _make(Or, children)


def _make(cls, children) -> Node:
    flat: list[Node] = []
    for child in children:
        flat.extend(child.children if isinstance(child, cls) else (child,))
    if not flat:
        raise ValueError(f"{cls.__name__} needs at least one child")
    return flat[0] if len(flat) == 1 else cls(tuple(flat))


def terms(node: Node) -> Iterator[str]:
    """Term strings in left-to-right order (with repeats)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Term):
            yield n.text
        elif isinstance(n, Not):
            stack.append(n.child)
        else:
            stack.extend(reversed(n.children))


def count_negations(node: Node) -> int:
    """Number of NOT operators in the query."""
    stack, count = [node], 0
    while stack:
        n = stack.pop()
        if isinstance(n, Not):
            count += 1
            stack.append(n.child)
        elif isinstance(n, (And, Or)):
            stack.extend(n.children)
    return count


def self_negated(node: Node) -> str | None:
    """The text of the first term that one AND holds both as an operand and negated (``"x" AND NOT "x"``,
    compared lowercased with white space collapsed), else None.  Such an AND scores x(1 - x), highest for
    documents half-similar to the term, which a request rarely means: a user typing it is given a note, and
    a translator's form holding it is a defect."""
    def key(text: str) -> str:
        return " ".join(text.replace("\u2019", "'").lower().split())

    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Not):
            stack.append(n.child)
        elif isinstance(n, (And, Or)):
            if isinstance(n, And):
                wanted = {key(c.text) for c in n.children if isinstance(c, Term)}
                for c in n.children:
                    if isinstance(c, Not) and isinstance(c.child, Term) and key(c.child.text) in wanted:
                        return c.child.text
            stack.extend(reversed(n.children))
    return None
