"""Query construction of the quality benchmark.

* Reuters-21578: three-term queries for all 32 templates (and AND/OR chains of
  2..6 terms) over TOPICS labels, relevance = exact set logic over the labels.
* BEIR (SciFact, NFCorpus, ArguAna): compositions of topically related *test*
  queries, relevance = set logic over their qrels.  The families are the six
  hand-listed ``FAMILIES`` (kept exactly as they were, so results stay comparable
  across versions) plus ``SHAPES``: OR chains, mixed and negation-first shapes,
  a conjunction of disjunctions, and shapes drawn by ``generated_shapes`` from the
  grammar's flat expressions (NOT > AND > OR) with a fixed seed.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from itlr_gpu.query import And, Node, Not, Or, Term, count_negations, parse
from itlr_gpu.synthetic import TEMPLATES_3, Template, build_expr, canonical_expr, chain_templates, render_natural


@dataclass
class BQuery:
    query_id: str
    family: str          # template / composition family
    ast: Node            # gold logical form
    text: str            # natural-language rendering (baseline, translator input)
    n_neg: int
    qrels: dict          # doc id -> grade
    broad: bool = False  # Reuters: an OR branch made of negated terms only (huge answer set)


def is_broad(t: Template) -> bool:
    return any(all(t.negated[i] for i in g) for g in t.groups())


# --------------------------------------------------------------------------- Reuters


def reuters_queries(labels: dict[str, frozenset[str]], label_terms: dict[str, str], templates, per_template: int,
                    seed: int, min_label_docs: int, min_answers: int, max_frac: float, prefix: str,
                    max_tries: int = 20000) -> tuple[list[BQuery], dict]:
    """Instantiate ``per_template`` queries per template with distinct labels.

    Relevance is exact set logic over TOPICS.  Answer sets must have between
    ``min_answers`` and ``max_frac * N`` documents; for *broad* templates (an OR
    branch made only of negated terms, whose answer set is nearly the corpus) the
    upper bound is ``N - min_answers`` (at least some documents are excluded) and
    they are reported separately.  Returns the queries and per-template counts.
    """
    universe = frozenset(labels)
    n = len(universe)
    docs_of: dict[str, set[str]] = {}
    for d, labs in labels.items():
        for lab in labs:
            docs_of.setdefault(lab, set()).add(d)
    pool = sorted(lab for lab, ds in docs_of.items() if len(ds) >= min_label_docs and lab in label_terms)
    out, counts = [], {}
    for template in templates:
        rng = random.Random(f"{seed}:{template.name}")
        broad = is_broad(template)
        hi = (n - min_answers) if broad else max_frac * n
        seen, got = set(), 0
        for _ in range(max_tries):
            if got >= per_template or template.n_terms > len(pool):
                break
            chosen = tuple(rng.sample(pool, template.n_terms))
            if chosen in seen:
                continue
            seen.add(chosen)
            lits = [(universe - docs_of[c]) if neg else docs_of[c] for c, neg in zip(chosen, template.negated)]
            ans: set[str] = set()
            for g in template.groups():
                part = set(lits[g[0]])
                for i in g[1:]:
                    part &= lits[i]
                ans |= part
            if not (min_answers <= len(ans) <= hi):
                continue
            phrases = [label_terms[c] for c in chosen]
            ast = build_expr(template, phrases)
            got += 1
            out.append(BQuery(f"{prefix}{len(out) + 1:05d}", template.name, ast,
                              render_natural(template, phrases, rng), template.n_negations,
                              {d: 1 for d in ans}, broad))
        counts[template.name] = got
    return out, counts


def reuters_sets(labels, label_terms, per_template, seed, min_label_docs, min_answers, max_frac, chain_per):
    three, c3 = reuters_queries(labels, label_terms, TEMPLATES_3, per_template, seed, min_label_docs,
                                min_answers, max_frac, "t")
    chains = chain_templates(range(2, 7), "AND") + chain_templates(range(2, 7), "OR")
    # AND chains of many topics rarely have min_answers documents: one is enough there.
    sweep, cs = reuters_queries(labels, label_terms, chains, chain_per, seed, min_label_docs, 1, max_frac, "c")
    return three, c3, sweep, cs


# --------------------------------------------------------------------------- BEIR compositions

FAMILIES = [
    # name, n_terms, n_neg
    ("a OR b", 2, 0),
    ("a AND b", 2, 0),
    ("a AND NOT b", 2, 1),
    ("(a OR b) AND NOT c", 3, 1),
    ("a AND NOT b AND NOT c", 3, 2),
    ("a AND NOT b AND NOT c AND NOT d", 4, 3),
]


def _clean(text: str) -> str:
    t = " ".join(text.split()).rstrip(" .?!;:")
    return t


def _family_ast(name: str, t: list[str]) -> Node:
    a = [Term(x) for x in t]
    if name == "a OR b":
        return Or((a[0], a[1]))
    if name == "a AND b":
        return And((a[0], a[1]))
    if name == "a AND NOT b":
        return And((a[0], Not(a[1])))
    if name == "(a OR b) AND NOT c":
        return And((Or((a[0], a[1])), Not(a[2])))
    return And((a[0],) + tuple(Not(x) for x in a[1:]))


def _family_text(name: str, t: list[str], rng: random.Random) -> str:
    if name == "a OR b":
        return rng.choice([f"{t[0]} or {t[1]}", f"either {t[0]}, or {t[1]}"])
    if name == "a AND b":
        return rng.choice([f"{t[0]} and {t[1]}", f"both {t[0]} and {t[1]}"])
    if name == "a AND NOT b":
        return rng.choice([f"{t[0]} but not {t[1]}", f"{t[0]}, excluding {t[1]}"])
    if name == "(a OR b) AND NOT c":
        return rng.choice([f"{t[0]} or {t[1]}, but not {t[2]}", f"either {t[0]} or {t[1]}, excluding {t[2]}"])
    if name == "a AND NOT b AND NOT c":
        return rng.choice([f"{t[0]} but neither {t[1]} nor {t[2]}", f"{t[0]}, excluding {t[1]} and {t[2]}"])
    return rng.choice([f"{t[0]} but none of {t[1]}, {t[2]} or {t[3]}", f"{t[0]}, excluding {t[1]}, {t[2]} and {t[3]}"])


def _answer(name: str, rels: list[dict]) -> dict:
    """Set logic over qrels; a relevant document keeps its best grade among the positive literals."""
    if name == "a OR b":
        keys = set(rels[0]) | set(rels[1])
        pos = rels[:2]
    elif name == "a AND b":
        keys = set(rels[0]) & set(rels[1])
        pos = rels[:2]
    elif name == "(a OR b) AND NOT c":
        keys = (set(rels[0]) | set(rels[1])) - set(rels[2])
        pos = rels[:2]
    else:
        keys = set(rels[0])
        for r in rels[1:]:
            keys -= set(r)
        pos = rels[:1]
    return {d: max(r.get(d, 0) for r in pos) for d in keys}


def split_of(qid: str, seed: int) -> str:
    """Deterministic dev/test split of the original test queries (half each)."""
    h = hashlib.sha256(f"{seed}:{qid}".encode()).digest()[0]
    return "dev" if h % 2 == 0 else "test"


def _neighbours(queries: dict[str, str], qvecs: np.ndarray, qids: list[str], neighbours: int):
    """Each query's ``neighbours`` nearest other queries (cosine of the query-text embeddings) and the
    cleaned texts, rows aligned with ``qids``."""
    sims = qvecs @ qvecs.T
    np.fill_diagonal(sims, -np.inf)
    return np.argsort(-sims, axis=1)[:, :neighbours], [_clean(queries[q]) for q in qids]


def _draw(rng: random.Random, nn: np.ndarray, texts: list[str], n_terms: int) -> tuple[int, list[int]] | None:
    """An anchor query and ``n_terms - 1`` partners among its neighbours with other texts (None when it has
    too few)."""
    a = rng.randrange(len(texts))
    cand = [int(j) for j in nn[a] if texts[j].lower() != texts[a].lower()]
    if len(cand) < n_terms - 1:
        return None
    return a, rng.sample(cand, n_terms - 1)


def beir_queries(queries: dict[str, str], qrels: dict[str, dict[str, int]], qvecs: np.ndarray, qids: list[str],
                 per_family: int, seed: int, prefix: str, neighbours: int = 10) -> tuple[list[BQuery], dict]:
    """Compose ``per_family`` queries per family from the original queries ``qids``.

    Partners of an anchor query are drawn from its ``neighbours`` nearest
    queries by cosine similarity of the query-text embeddings (``qvecs``, rows
    aligned with ``qids``), so negated terms are on a related topic.  A
    composition is kept when its answer set is non-empty and, for a negation,
    the negated query removes nothing the anchor needs... (i.e. no literal is
    vacuous: every negated query has qrels, every positive literal contributes).
    Each composition uses distinct texts.
    """
    nn, texts = _neighbours(queries, qvecs, qids, neighbours)
    out, counts = [], {}
    for name, n_terms, n_neg in FAMILIES:
        rng = random.Random(f"{seed}:{prefix}:{name}")
        seen, got = set(), 0
        for _ in range(per_family * 60):
            if got >= per_family:
                break
            drawn = _draw(rng, nn, texts, n_terms)
            if drawn is None:
                continue
            picks = [drawn[0]] + drawn[1]
            key = (name, tuple(picks))
            if key in seen or len({texts[i].lower() for i in picks}) != n_terms:
                continue
            seen.add(key)
            rels = [qrels[qids[i]] for i in picks]
            ans = _answer(name, rels)
            if not ans:
                continue
            if name == "a OR b" and (not set(rels[0]) - set(rels[1]) or not set(rels[1]) - set(rels[0])):
                continue  # one branch would be redundant
            t = [texts[i] for i in picks]
            got += 1
            out.append(BQuery(f"{prefix}{len(out) + 1:05d}", name, _family_ast(name, t), _family_text(name, t, rng),
                              n_neg, ans))
        counts[name] = got
    return out, counts


# --------------------------------------------------------------------------- general shapes

_SLOTS = "abcdefgh"


@dataclass(frozen=True)
class Shape:
    """A composition family over slots ``a, b, c, ...`` (one query per slot).

    ``name`` is the family's expression in the query language, with the slots as
    bare terms (``"a OR (b AND NOT c)"``); its AST fixes the logic, the answer set
    and, through ``text``, the natural-language rendering.
    """

    name: str
    generated: bool = False

    @cached_property
    def ast(self) -> Node:
        # parsed once: shape_answer asks ``holds`` for every candidate document (thousands per
        # composition on NFCorpus), and a parse per call made query building take many minutes
        return parse(self.name)

    @cached_property
    def slots(self) -> list[str]:
        return sorted({t.text for t in _terms(self.ast)})

    @property
    def n_neg(self) -> int:
        return count_negations(self.ast)

    def positive(self) -> list[int]:
        """Slots that occur without NOT (a relevant document is relevant to one of them)."""
        return list(self._positive)

    @cached_property
    def _positive(self) -> tuple[int, ...]:
        return tuple(sorted({_SLOTS.index(t.text) for t in _terms(self.ast, negated=False)}))

    def holds(self, truth: dict[str, bool]) -> bool:
        return _holds(self.ast, truth)

    def anchored(self) -> bool:
        """No document satisfies the shape without satisfying a positive slot (else the answer
        set would be most of the corpus: ``a OR NOT b``)."""
        n, pos = len(self.slots), set(self.positive())
        for bits in itertools.product((False, True), repeat=n):
            if any(bits[i] for i in pos):
                continue
            if self.holds({_SLOTS[i]: bits[i] for i in range(n)}):
                return False
        return True


def _terms(node: Node, negated: bool | None = None, under_not: bool = False) -> list[Term]:
    if isinstance(node, Term):
        return [node] if negated is None or negated == under_not else []
    if isinstance(node, Not):
        return _terms(node.child, negated, not under_not)
    return [t for c in node.children for t in _terms(c, negated, under_not)]


def _holds(node: Node, truth: dict[str, bool]) -> bool:
    if isinstance(node, Term):
        return truth[node.text]
    if isinstance(node, Not):
        return not _holds(node.child, truth)
    if isinstance(node, And):
        return all(_holds(c, truth) for c in node.children)
    return any(_holds(c, truth) for c in node.children)


def shape_answer(shape: Shape, rels: list[dict]) -> dict:
    """Set logic over the slots' qrels: a document is relevant when it is judged relevant to a
    positive slot and satisfies the shape; it keeps its best grade among the positive slots.

    Evaluated on sets (NOT = the candidates minus the child's set), not document by document:
    NFCorpus queries have hundreds of judged documents and query building tries thousands of
    compositions."""
    pos = shape.positive()
    cand = set().union(*(rels[i] for i in pos))
    idx = {name: i for i, name in enumerate(_SLOTS)}

    def members(node: Node) -> set:
        if isinstance(node, Term):
            return cand.intersection(rels[idx[node.text]])
        if isinstance(node, Not):
            return cand - members(node.child)
        parts = [members(c) for c in node.children]
        return set.intersection(*parts) if isinstance(node, And) else set.union(*parts)

    return {d: max(rels[i].get(d, 0) for i in pos) for d in members(shape.ast)}


def shape_expr(shape: Shape, texts: list[str]) -> Node:
    """The shape's AST with each slot replaced by its query text."""
    def sub(node: Node) -> Node:
        if isinstance(node, Term):
            return Term(texts[_SLOTS.index(node.text)])
        if isinstance(node, Not):
            return Not(sub(node.child))
        return type(node)(tuple(sub(c) for c in node.children))
    return sub(shape.ast)


def _as_template(shape: Shape) -> Template | None:
    """The shape as a flat template (slots in order, no parentheses needed), when it is one."""
    ops, neg = [], []
    # Parentheses around AND groups of an OR change nothing (AND binds tighter): drop them and
    # check below that the flat reading is the same expression.
    flat = shape.name.replace("(", " ").replace(")", " ")
    for i, tok in enumerate(_flat_tokens(flat)):
        if i % 2:
            ops.append(tok)
        else:
            neg.append(tok[0])
    try:
        t = Template(tuple(ops), tuple(neg))
    except ValueError:
        return None
    return t if canonical_expr(build_expr(t, shape.slots)) == canonical_expr(shape.ast) else None


def _flat_tokens(name: str):
    words = name.split()
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("AND", "OR"):
            yield w
        elif w == "NOT":
            i += 1
            yield (True, words[i])
        else:
            yield (False, w)
        i += 1


def shape_text(shape: Shape, texts: list[str], rng: random.Random) -> str:
    """A natural-language request with the shape's meaning (the baseline's input and the
    translators' input).  Flat shapes use the synthetic benchmark's renderer; a conjunction of
    disjunctions is written with "either ... or ..., and either ... or ..."."""
    t = _as_template(shape)
    if t is not None and t.negated == (True, False) and t.ops == ("AND",):
        # Written as it is shaped, the negation first (the generic renderer would move it last).
        return rng.choice([f"not {texts[0]} but {texts[1]}", f"not about {texts[0]} but about {texts[1]}"])
    if t is not None:
        return render_natural(t, texts, rng)
    ast = shape_expr(shape, texts)
    if isinstance(ast, And) and all(isinstance(c, Or) and all(isinstance(x, Term) for x in c.children)
                                    for c in ast.children):
        parts = [" or ".join(x.text for x in c.children) for c in ast.children]
        return rng.choice([", and ".join(f"either {p}" for p in parts), ", and also ".join(parts)])
    raise ValueError(f"no natural-language rendering for shape {shape.name!r}")


#: Families beyond ``FAMILIES``: OR chains, a mixed shape, negation first, a conjunction of
#: disjunctions, then ``generated_shapes``' draws.
HAND_SHAPES = [Shape("a OR b OR c"), Shape("a OR b OR c OR d"), Shape("a OR (b AND NOT c)"),
               Shape("NOT a AND b"), Shape("(a OR b) AND (c OR d)")]


def _shape_name(t: Template) -> str:
    """A flat template written with lower-case slots and its AND groups in parentheses."""
    groups = []
    for g in t.groups():
        lits = [("NOT " if t.negated[i] else "") + _SLOTS[i] for i in g]
        body = " AND ".join(lits)
        groups.append(f"({body})" if len(g) > 1 and len(t.groups()) > 1 else body)
    return " OR ".join(groups)


def generated_shapes(n: int = 3, seed: int = 2025, terms=(4, 5)) -> list[Shape]:
    """``n`` flat shapes of 4-5 slots drawn from the grammar (each operator AND or OR, each slot
    negated or not), mixing AND and OR, with at least one NOT, anchored (every OR branch has a
    positive slot), and not already a hand-listed family.  Fixed ``seed``: the same families for
    every dataset and every query seed, so that they can be compared and selected over."""
    rng = random.Random(f"shapes:{seed}")
    taken = {canonical_expr(s.ast) for s in HAND_SHAPES}
    taken |= {canonical_expr(parse(name)) for name, _, _ in FAMILIES}
    out: list[Shape] = []
    while len(out) < n:
        k = rng.choice(list(terms))
        ops = tuple(rng.choice(("AND", "OR")) for _ in range(k - 1))
        neg = tuple(rng.random() < 0.35 for _ in range(k))
        if len(set(ops)) < 2 or not any(neg):
            continue
        shape = Shape(_shape_name(Template(ops, neg)), generated=True)
        key = canonical_expr(shape.ast)
        if key in taken or not shape.anchored():
            continue
        taken.add(key)
        out.append(shape)
    return out


def shapes() -> list[Shape]:
    return HAND_SHAPES + generated_shapes()


def shape_queries(queries: dict[str, str], qrels: dict[str, dict[str, int]], qvecs: np.ndarray, qids: list[str],
                  per_family: int, seed: int, prefix: str, neighbours: int = 10, start: int = 0,
                  families: list[Shape] | None = None) -> tuple[list[BQuery], dict]:
    """Compose ``per_family`` queries per shape, as ``beir_queries`` does for ``FAMILIES``.

    The anchor query fills the first positive slot, the others are drawn from its
    ``neighbours`` nearest queries.  A composition is kept when its answer set is not empty and
    no slot is vacuous: emptying any slot's qrels changes the answer set (each OR branch adds
    documents, each negated query removes some).  Query ids continue from ``start``.
    """
    nn, texts = _neighbours(queries, qvecs, qids, neighbours)
    out, counts = [], {}
    for shape in families if families is not None else shapes():
        n_terms, first = len(shape.slots), shape.positive()[0]
        rng = random.Random(f"{seed}:{prefix}:{shape.name}")
        seen, got = set(), 0
        for _ in range(per_family * 60):
            if got >= per_family:
                break
            drawn = _draw(rng, nn, texts, n_terms)
            if drawn is None:
                continue
            a, others = drawn
            picks = others[:first] + [a] + others[first:]
            key = tuple(picks)
            if key in seen or len({texts[i].lower() for i in picks}) != n_terms:
                continue
            seen.add(key)
            rels = [qrels[qids[i]] for i in picks]
            ans = shape_answer(shape, rels)
            if not ans or any(shape_answer(shape, rels[:i] + [{}] + rels[i + 1:]).keys() == ans.keys()
                              for i in range(n_terms)):
                continue
            t = [texts[i] for i in picks]
            got += 1
            out.append(BQuery(f"{prefix}{start + len(out) + 1:05d}", shape.name, shape_expr(shape, t),
                              shape_text(shape, t, rng), shape.n_neg, ans))
        counts[shape.name] = got
    return out, counts


def describe(q: BQuery) -> dict:
    return {"query_id": q.query_id, "family": q.family, "expr": canonical_expr(q.ast), "text": q.text,
            "n_neg": q.n_neg, "n_relevant": len(q.qrels), "broad": q.broad}


def negations(node: Node) -> int:
    return count_negations(node)
