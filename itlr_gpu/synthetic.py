"""Synthetic logical-query benchmark over any labelled corpus.

A corpus whose documents carry topic labels (the embedded demo corpus, later
Reuters-21578 categories) gives exact relevance for logical queries over the
labels' term phrases: ``answer_set`` evaluates the query with set logic over the
labels.  Queries are instantiated from templates:

* ``TEMPLATES_3`` - the 32 three-term templates (two binary operators, each AND or
  OR, times each of the three terms negated or not), e.g. ``"A AND NOT B OR C"``;
* ``chain_templates`` - AND-only / OR-only chains of 2..6 terms, no negation, for
  the term-count sweep.

Operator precedence is the grammar's (NOT > AND > OR): ``A OR B AND C`` means
``A OR (B AND C)``.  ``render_natural`` writes the same query as a natural-language
sentence for the single-embedding baseline.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

from itlr_gpu.query.ast import And, Node, Not, Or, Term, count_negations, make_and, make_or

__all__ = [
    "Template",
    "TEMPLATES_3",
    "chain_templates",
    "build_expr",
    "render_natural",
    "answer_set",
    "SyntheticQuery",
    "make_queries",
    "qrels_from_queries",
    "canonical_expr",
]

_OPS = ("AND", "OR")
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


# --------------------------------------------------------------------------- templates


@dataclass(frozen=True)
class Template:
    """A query shape: ``len(negated)`` term slots joined left to right by ``ops``.

    ``ops[i]`` ("AND" or "OR") joins slot ``i`` and slot ``i + 1``; ``negated[i]``
    puts a NOT on slot ``i``.  Precedence is NOT > AND > OR.
    """

    ops: tuple[str, ...]
    negated: tuple[bool, ...]

    def __post_init__(self) -> None:
        if len(self.negated) < 1 or len(self.ops) != len(self.negated) - 1:
            raise ValueError("a template needs len(ops) == len(negated) - 1 >= 0")
        if len(self.negated) > len(_LETTERS):
            raise ValueError("too many terms")
        bad = [op for op in self.ops if op not in _OPS]
        if bad:
            raise ValueError(f"unknown operators {bad}; use 'AND' or 'OR'")

    @property
    def n_terms(self) -> int:
        return len(self.negated)

    @property
    def n_negations(self) -> int:
        return sum(self.negated)

    @property
    def name(self) -> str:
        """E.g. ``"A AND NOT B OR C"``."""
        parts = [("NOT " if self.negated[0] else "") + _LETTERS[0]]
        for i, op in enumerate(self.ops, start=1):
            parts.append(op)
            parts.append(("NOT " if self.negated[i] else "") + _LETTERS[i])
        return " ".join(parts)

    def groups(self) -> list[list[int]]:
        """Slot indices grouped into the AND-groups of the OR (precedence AND > OR)."""
        groups: list[list[int]] = [[0]]
        for i, op in enumerate(self.ops, start=1):
            if op == "AND":
                groups[-1].append(i)
            else:
                groups.append([i])
        return groups

    def __str__(self) -> str:
        return self.name


TEMPLATES_3: tuple[Template, ...] = tuple(
    Template(ops=ops, negated=neg)
    for ops in itertools.product(_OPS, repeat=2)
    for neg in itertools.product((False, True), repeat=3)
)


def chain_templates(n_terms: int | Iterable[int] = range(2, 7), op: str = "AND") -> list[Template]:
    """AND-only or OR-only chains without negation, e.g. ``"A AND B AND C"``.

    ``n_terms`` is one term count or several (default 2..6); returns one template
    per count, in the given order.
    """
    op = op.upper()
    if op not in _OPS:
        raise ValueError(f"op must be 'AND' or 'OR', got {op!r}")
    counts = [n_terms] if isinstance(n_terms, int) else list(n_terms)
    out = []
    for n in counts:
        if n < 1:
            raise ValueError("a chain needs at least one term")
        out.append(Template(ops=(op,) * (n - 1), negated=(False,) * n))
    return out


# --------------------------------------------------------------------------- expressions


def build_expr(template: Template, terms: Sequence[str]) -> Node:
    """The query AST of ``template`` with its slots filled by ``terms`` (in order)."""
    if len(terms) != template.n_terms:
        raise ValueError(f"template {template.name!r} needs {template.n_terms} terms, got {len(terms)}")
    lits: list[Node] = [Not(Term(t)) if neg else Term(t) for t, neg in zip(terms, template.negated)]
    return make_or([make_and([lits[i] for i in g]) for g in template.groups()])


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _canonical_fallback(node: Node) -> str:
    if isinstance(node, Term):
        return _quote(node.text)
    if isinstance(node, Not):
        if isinstance(node.child, Not):  # the grammar has no NOT NOT
            return "NOT (" + _canonical_fallback(node.child) + ")"
        return "NOT " + _canonical_fallback(node.child)
    if isinstance(node, (And, Or)):
        op = " AND " if isinstance(node, And) else " OR "
        return "(" + op.join(_canonical_fallback(c) for c in node.children) + ")"
    raise TypeError(f"not a query node: {node!r}")


def canonical_expr(node: Node) -> str:
    """Canonical query string: ``itlr_gpu.query.printer.canonical`` when available,
    else an equivalent local printer (every And/Or parenthesised, quoted terms)."""
    try:
        from itlr_gpu.query.printer import canonical
    except ImportError:
        return _canonical_fallback(node)
    return canonical(node)


def answer_set(node: Node, doc_labels: Mapping[str, frozenset[str]], term_label: Mapping[str, str]) -> set[str]:
    """Exact set-logic answer of ``node``: Term ``t`` holds for doc ``d`` iff
    ``term_label[t] in doc_labels[d]``; NOT is the complement over all docs."""
    universe = set(doc_labels)
    cache: dict[str, set[str]] = {}

    def ev(n: Node) -> set[str]:
        if isinstance(n, Term):
            if n.text not in cache:
                label = term_label[n.text]
                cache[n.text] = {d for d, labels in doc_labels.items() if label in labels}
            return cache[n.text]
        if isinstance(n, Not):
            return universe - ev(n.child)
        if isinstance(n, And):
            out = set(ev(n.children[0]))
            for c in n.children[1:]:
                out &= ev(c)
            return out
        if isinstance(n, Or):
            out = set()
            for c in n.children:
                out |= ev(c)
            return out
        raise TypeError(f"not a query node: {n!r}")

    return set(ev(node))


# --------------------------------------------------------------------------- natural language


def _join(items: Sequence[str], conj: str) -> str:
    if len(items) == 1:
        return items[0]
    if len(items) == 2:
        return f"{items[0]} {conj} {items[1]}"
    return ", ".join(items[:-1]) + f" {conj} {items[-1]}"


def _neg_only(negs: Sequence[str], rng: random.Random) -> str:
    """A group of negated literals only, e.g. ``neither X nor Y``."""
    if len(negs) == 1:
        return rng.choice(
            [f"anything except {negs[0]}", f"everything but {negs[0]}", f"nothing about {negs[0]}"]
        )
    if len(negs) == 2:
        return rng.choice(
            [f"neither {negs[0]} nor {negs[1]}", f"anything except {negs[0]} or {negs[1]}"]
        )
    return rng.choice([f"none of {_join(negs, 'or')}", f"anything except {_join(negs, 'or')}"])


def _group(pos: Sequence[str], negs: Sequence[str], ordered: Sequence[tuple[str, bool]],
           rng: random.Random, in_disjunction: bool) -> str:
    """One AND-group of literals as a phrase."""
    if not negs:
        if len(pos) == 1:
            return pos[0]
        if in_disjunction:
            return rng.choice([f"both {_join(pos, 'and')}" if len(pos) == 2 else f"all of {_join(pos, 'and')}",
                               f"{_join(pos, 'and')} together"])
        return rng.choice([_join(pos, "and"), f"both {_join(pos, 'and')}" if len(pos) == 2
                           else f"all of {_join(pos, 'and')}", f"{_join(pos, 'and')} combined"])
    if not pos:
        return _neg_only(negs, rng)
    p = _join(pos, "and")
    styles = []
    if len(negs) == 1:
        styles += [f"{p} but not {negs[0]}", f"{p}, excluding {negs[0]}", f"{p} without {negs[0]}"]
    else:
        neither = (f"{p} but neither {negs[0]} nor {negs[1]}" if len(negs) == 2
                   else f"{p} but none of {_join(negs, 'or')}")
        styles += [neither, f"{p}, excluding {_join(negs, 'and')}", f"{p} without {_join(negs, 'or')}"]
    if not in_disjunction and not ordered[0][1]:
        # In-order listing: "X, not Y, and Z" (only when it starts with a positive term).
        styles.append(_join([("not " if neg else "") + t for t, neg in ordered], "and"))
    return rng.choice(styles)


def render_natural(template: Template, phrases: Sequence[str], rng: random.Random) -> str:
    """A natural-language sentence with the meaning of ``build_expr(template, phrases)``.

    Used by the baseline that embeds the whole query as one text.  Phrasings vary
    with ``rng`` ("X and Y but not Z", "documents about X or Y, excluding Z",
    "X, not Y, and Z", "either X, or both Y and Z", ...); AND-groups are kept
    together so the grammar's precedence (AND binds tighter than OR) is preserved.
    Every phrase appears verbatim in the output.
    """
    if len(phrases) != template.n_terms:
        raise ValueError(f"template {template.name!r} needs {template.n_terms} phrases, got {len(phrases)}")
    groups = template.groups()
    parsed = []
    for g in groups:
        ordered = [(phrases[i], template.negated[i]) for i in g]
        pos = [t for t, neg in ordered if not neg]
        negs = [t for t, neg in ordered if neg]
        parsed.append((pos, negs, ordered))

    if len(groups) == 1:
        pos, negs, ordered = parsed[0]
        body = _group(pos, negs, ordered, rng, in_disjunction=False)
        if not pos:
            return rng.choice([body, f"documents not about {_join(negs, 'or')}",
                               f"texts that discuss none of {_join(negs, 'or')}" if len(negs) > 1
                               else f"texts that do not discuss {negs[0]}"])
        return rng.choice([body, f"documents about {body}", f"find texts on {body}",
                           f"articles discussing {body}"])

    # Disjunction of groups.
    simple = all(len(o) == 1 and not n for _, n, o in parsed)
    if simple:
        items = [p[0] for p, _, _ in parsed]
        return rng.choice([_join(items, "or"), f"documents about {_join(items, 'or')}",
                           f"anything on {_join(items, 'or')}" if len(items) > 2
                           else f"either {items[0]} or {items[1]}",
                           f"any of {_join(items, 'or')}" if len(items) > 2
                           else f"texts about {items[0]} or about {items[1]}"])
    # Mixed: keep each AND-group together as one unit.
    parts = []
    for pos, negs, ordered in parsed:
        if pos:
            parts.append(_group(pos, negs, ordered, rng, in_disjunction=True))
        elif len(negs) == 1:
            parts.append(rng.choice([f"anything not about {negs[0]}", f"everything except {negs[0]}"]))
        else:
            nor = _join(negs, "nor") if len(negs) == 2 else _join(negs, "or")
            parts.append(rng.choice([f"anything about neither {nor}" if len(negs) == 2
                                     else f"anything about none of {nor}",
                                     f"texts on none of {_join(negs, 'or')}"]))
    style = rng.randrange(3)
    if style == 0:
        return "either " + ", or ".join(parts)
    if style == 1:
        if all(pos for pos, _, _ in parsed):
            return "documents about " + ", or documents about ".join(parts)
        return "; or ".join(parts)
    return parts[0] + "".join(f", or else {p}" for p in parts[1:])


# --------------------------------------------------------------------------- query sets


@dataclass(frozen=True)
class SyntheticQuery:
    query_id: str
    template: str  # template name, e.g. "A AND NOT B OR C"
    expr: str  # canonical query string
    ast: Node
    text: str  # natural-language rendering (baseline)
    n_negations: int
    relevant: frozenset[str]  # doc ids of the exact answer set
    labels: tuple[str, ...] = ()  # labels filling the template's slots, in order


def make_queries(
    doc_labels: Mapping[str, frozenset[str]],
    label_terms: Mapping[str, str],
    templates: Sequence[Template],
    n_per_template: int,
    seed: int,
    min_answers: int = 1,
    max_answer_frac: float = 0.5,
    max_tries: int = 1000,
) -> list[SyntheticQuery]:
    """Instantiate ``n_per_template`` queries per template from the labels.

    Each query fills a template's slots with distinct labels (drawn from
    ``label_terms``, label -> term phrase; term phrases must be distinct) and keeps
    it only if its exact answer set has between ``min_answers`` and
    ``max_answer_frac * len(doc_labels)`` documents and it was not drawn before
    for that template.  At most ``max_tries`` draws are made per template, so a
    template that cannot reach ``n_per_template`` queries yields fewer.
    Deterministic for a given ``seed`` (each template has its own generator, so
    the queries of one template do not depend on the others).  Query ids are
    ``"q0001"``, ``"q0002"``, ... in template order.
    """
    if len(set(label_terms.values())) != len(label_terms):
        raise ValueError("term phrases in label_terms must be distinct")
    term_label = {phrase: label for label, phrase in label_terms.items()}
    labels = sorted(label_terms)
    n_docs = len(doc_labels)
    max_answers = max_answer_frac * n_docs
    out: list[SyntheticQuery] = []
    for template in templates:
        if template.n_terms > len(labels) or n_per_template <= 0:
            continue
        rng = random.Random(f"{seed}:{template.name}")
        seen: set[tuple[str, ...]] = set()
        got = 0
        for _ in range(max_tries):
            if got >= n_per_template:
                break
            chosen = tuple(rng.sample(labels, template.n_terms))
            if chosen in seen:
                continue
            seen.add(chosen)
            phrases = [label_terms[lab] for lab in chosen]
            ast = build_expr(template, phrases)
            relevant = answer_set(ast, doc_labels, term_label)
            if not (min_answers <= len(relevant) <= max_answers):
                continue
            got += 1
            out.append(
                SyntheticQuery(
                    query_id=f"q{len(out) + 1:04d}",
                    template=template.name,
                    expr=canonical_expr(ast),
                    ast=ast,
                    text=render_natural(template, phrases, rng),
                    n_negations=count_negations(ast),
                    relevant=frozenset(relevant),
                    labels=chosen,
                )
            )
    return out


def qrels_from_queries(queries: Iterable[SyntheticQuery]) -> list:
    """``ir_measures.Qrel(query_id, doc_id, 1)`` for every relevant document."""
    import ir_measures

    return [
        ir_measures.Qrel(q.query_id, doc_id, 1)
        for q in queries
        for doc_id in sorted(q.relevant)
    ]
