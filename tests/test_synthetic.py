"""Synthetic logical-query benchmark: templates, precedence, set logic, query sets."""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itlr_gpu.demo import make_corpus, topic_terms
from itlr_gpu.query.ast import And, Not, Or, Term, count_negations, terms
from itlr_gpu.synthetic import (
    TEMPLATES_3,
    SyntheticQuery,
    Template,
    answer_set,
    build_expr,
    canonical_expr,
    chain_templates,
    make_queries,
    qrels_from_queries,
    render_natural,
)

LABELS = ("a", "b", "c", "d", "e", "f")
TERM_OF = {lab: f"term {lab}" for lab in LABELS}
LABEL_OF = {v: k for k, v in TERM_OF.items()}

label_sets = st.dictionaries(
    keys=st.text(alphabet="0123456789", min_size=1, max_size=4),
    values=st.frozensets(st.sampled_from(LABELS)),
    max_size=30,
)


@pytest.fixture(scope="module")
def demo():
    return make_corpus(400, seed=0)


# --------------------------------------------------------------------------- templates


def test_templates_3_are_32_distinct():
    assert len(TEMPLATES_3) == 32
    assert len({t.name for t in TEMPLATES_3}) == 32
    assert len(set(TEMPLATES_3)) == 32
    assert all(t.n_terms == 3 and len(t.ops) == 2 for t in TEMPLATES_3)


def test_templates_3_negation_counts():
    counts = Counter(t.n_negations for t in TEMPLATES_3)
    assert counts == {0: 4, 1: 12, 2: 12, 3: 4}
    for t in TEMPLATES_3:
        assert t.name.count("NOT") == t.n_negations
        ast = build_expr(t, ["x", "y", "z"])
        assert count_negations(ast) == t.n_negations


def test_template_names():
    names = {t.name for t in TEMPLATES_3}
    assert {"A AND B AND C", "A AND NOT B OR C", "NOT A OR NOT B OR NOT C", "A OR B AND NOT C"} <= names


def test_template_validation():
    with pytest.raises(ValueError):
        Template(ops=("AND",), negated=(False,))
    with pytest.raises(ValueError):
        Template(ops=("XOR",), negated=(False, False))


def test_chain_templates():
    ands = chain_templates(range(2, 7), "AND")
    ors = chain_templates(range(2, 7), "or")
    assert [t.n_terms for t in ands] == [2, 3, 4, 5, 6]
    assert [t.name for t in ors][:2] == ["A OR B", "A OR B OR C"]
    assert ands[-1].name == "A AND B AND C AND D AND E AND F"
    assert all(t.n_negations == 0 for t in ands + ors)
    assert chain_templates(4, "AND") == [ands[2]]
    assert chain_templates() == ands  # default: AND chains of 2..6 terms
    assert build_expr(ands[2], list("wxyz")) == And(tuple(Term(c) for c in "wxyz"))
    assert build_expr(ors[0], list("wx")) == Or((Term("w"), Term("x")))
    with pytest.raises(ValueError):
        chain_templates(3, "NOT")


# --------------------------------------------------------------------------- build_expr / precedence


def _template(name: str) -> Template:
    return next(t for t in TEMPLATES_3 if t.name == name)


def test_build_expr_precedence_shapes():
    x, y, z = Term("x"), Term("y"), Term("z")
    assert build_expr(_template("A OR B AND C"), "xyz") == Or((x, And((y, z))))
    assert build_expr(_template("A AND B OR C"), "xyz") == Or((And((x, y)), z))
    assert build_expr(_template("NOT A AND B OR NOT C"), "xyz") == Or((And((Not(x), y)), Not(z)))
    assert build_expr(_template("A AND B AND C"), "xyz") == And((x, y, z))
    assert build_expr(_template("A OR NOT B OR C"), "xyz") == Or((x, Not(y), z))
    with pytest.raises(ValueError):
        build_expr(_template("A OR B OR C"), ["x", "y"])


def test_build_expr_agrees_with_parser():
    parser = pytest.importorskip("itlr_gpu.query.parser")
    for t in TEMPLATES_3 + tuple(chain_templates(range(2, 7), "AND") + chain_templates(range(2, 7), "OR")):
        letters = "ABCDEF"[: t.n_terms]
        assert parser.parse(t.name) == build_expr(t, list(letters)), t.name


@settings(max_examples=200, deadline=None)
@given(label_sets, st.permutations(LABELS))
def test_or_and_precedence_on_random_labels(doc_labels, perm):
    a, b, c = (TERM_OF[lab] for lab in perm[:3])
    node = build_expr(_template("A OR B AND C"), [a, b, c])
    has = lambda t: {d for d, ls in doc_labels.items() if LABEL_OF[t] in ls}  # noqa: E731
    assert answer_set(node, doc_labels, LABEL_OF) == has(a) | (has(b) & has(c))
    node2 = build_expr(_template("A AND B OR C"), [a, b, c])
    assert answer_set(node2, doc_labels, LABEL_OF) == (has(a) & has(b)) | has(c)


@settings(max_examples=200, deadline=None)
@given(label_sets, st.sampled_from(TEMPLATES_3), st.permutations(LABELS))
def test_answer_set_matches_per_doc_truth(doc_labels, template, perm):
    phrases = [TERM_OF[lab] for lab in perm[:3]]
    node = build_expr(template, phrases)

    def truth(labels):
        vals = [(LABEL_OF[p] in labels) != neg for p, neg in zip(phrases, template.negated)]
        # Evaluate with precedence: OR of AND-groups.
        return any(all(vals[i] for i in g) for g in template.groups())

    expected = {d for d, ls in doc_labels.items() if truth(ls)}
    assert answer_set(node, doc_labels, LABEL_OF) == expected


@settings(max_examples=100, deadline=None)
@given(label_sets, st.sampled_from(LABELS))
def test_not_is_complement(doc_labels, lab):
    t = Term(TERM_OF[lab])
    pos = answer_set(t, doc_labels, LABEL_OF)
    neg = answer_set(Not(t), doc_labels, LABEL_OF)
    assert pos | neg == set(doc_labels) and not pos & neg
    assert answer_set(Not(Not(t)), doc_labels, LABEL_OF) == pos


def test_answer_set_nested():
    doc_labels = {"1": frozenset("a"), "2": frozenset("ab"), "3": frozenset("c"), "4": frozenset()}
    tl = {"A": "a", "B": "b", "C": "c"}
    node = And((Not(Or((Term("B"), Term("C")))), Not(Term("A"))))
    assert answer_set(node, doc_labels, tl) == {"4"}
    assert answer_set(Or((Term("A"), Term("C"))), doc_labels, tl) == {"1", "2", "3"}


def test_canonical_expr_format():
    node = And((Term("coffee brewing"), Not(Or((Term("jazz music"), Term("chess"))))))
    assert canonical_expr(node) == '("coffee brewing" AND NOT ("jazz music" OR "chess"))'
    assert canonical_expr(Term('say "hi" \\ bye')) == '"say \\"hi\\" \\\\ bye"'


def test_canonical_fallback_matches_printer():
    printer = pytest.importorskip("itlr_gpu.query.printer")
    from itlr_gpu.synthetic import _canonical_fallback

    for t in TEMPLATES_3:
        node = build_expr(t, ["x y", 'q"z', "w\\v"])
        assert _canonical_fallback(node) == printer.canonical(node)
    nn = Not(Not(Term("x")))
    assert _canonical_fallback(nn) == printer.canonical(nn)


# --------------------------------------------------------------------------- natural rendering


@pytest.mark.parametrize("template", TEMPLATES_3 + tuple(chain_templates(range(2, 7), "AND")
                                                         + chain_templates(range(2, 7), "OR")),
                         ids=lambda t: t.name)
def test_render_natural_mentions_every_phrase(template):
    phrases = ["coffee brewing", "volcanic eruptions", "chess strategy", "honey bees",
               "jazz music", "black holes"][: template.n_terms]
    texts = set()
    for seed in range(40):
        text = render_natural(template, phrases, random.Random(seed))
        for p in phrases:
            assert p in text, (template.name, text)
        assert "NOT " not in text and " AND " not in text and " OR " not in text
        if template.n_negations:
            low = f" {text.lower()} "
            assert any(w in low for w in (" not ", " excluding ", " without ", " except ",
                                          " neither ", " none of ", " but "))
        texts.add(text)
    assert len(texts) >= 2  # several phrasings


def test_render_natural_is_deterministic():
    t = _template("A AND NOT B OR C")
    phrases = ["x one", "y two", "z three"]
    assert render_natural(t, phrases, random.Random(3)) == render_natural(t, phrases, random.Random(3))


# --------------------------------------------------------------------------- query sets


def test_make_queries_deterministic(demo):
    _, labels = demo
    q1 = make_queries(labels, topic_terms(), TEMPLATES_3, 4, seed=11)
    q2 = make_queries(labels, topic_terms(), TEMPLATES_3, 4, seed=11)
    q3 = make_queries(labels, topic_terms(), TEMPLATES_3, 4, seed=12)
    assert q1 == q2
    assert [q.expr for q in q1] != [q.expr for q in q3]


def test_make_queries_template_independence(demo):
    # A template's queries do not depend on which other templates are requested.
    _, labels = demo
    t = _template("A AND NOT B OR C")
    alone = make_queries(labels, topic_terms(), [t], 5, seed=4)
    mixed = make_queries(labels, topic_terms(), [TEMPLATES_3[0], t], 5, seed=4)
    strip = lambda qs: [(q.expr, q.text, q.relevant) for q in qs if q.template == t.name]  # noqa: E731
    assert strip(alone) == strip(mixed)


def test_make_queries_properties(demo):
    _, labels = demo
    lt = topic_terms()
    term_label = {v: k for k, v in lt.items()}
    queries = make_queries(labels, lt, TEMPLATES_3, 5, seed=0)
    assert queries
    assert len({q.query_id for q in queries}) == len(queries)
    assert [q.query_id for q in queries][:2] == ["q0001", "q0002"]
    per_template = Counter(q.template for q in queries)
    assert per_template["A AND B AND C"] == 5
    assert per_template["A OR B AND NOT C"] == 5
    assert max(per_template.values()) <= 5
    for q in queries:
        assert isinstance(q, SyntheticQuery)
        assert 1 <= len(q.relevant) <= 0.5 * len(labels)
        assert q.relevant == frozenset(answer_set(q.ast, labels, term_label))
        assert q.expr == canonical_expr(q.ast)
        assert q.n_negations == count_negations(q.ast) == q.template.count("NOT")
        phrases = list(terms(q.ast))
        assert len(set(phrases)) == len(phrases) == len(q.labels)  # distinct labels
        assert [lt[lab] for lab in q.labels] == phrases
        for p in phrases:
            assert p in q.text
        assert q.ast == build_expr(_template(q.template), phrases)
    # No query repeats within a template.
    assert len({(q.template, q.labels) for q in queries}) == len(queries)


def test_make_queries_expr_parses_back(demo):
    parser = pytest.importorskip("itlr_gpu.query.parser")
    _, labels = demo
    for q in make_queries(labels, topic_terms(), TEMPLATES_3, 2, seed=1):
        assert parser.parse(q.expr) == q.ast


def test_make_queries_answer_bounds(demo):
    _, labels = demo
    qs = make_queries(labels, topic_terms(), TEMPLATES_3, 3, seed=2, min_answers=5, max_answer_frac=0.2)
    assert qs
    assert all(5 <= len(q.relevant) <= 0.2 * len(labels) for q in qs)


def test_make_queries_gives_up_on_infeasible_templates(demo):
    _, labels = demo
    # NOT A OR NOT B OR NOT C covers nearly every doc: never within half the corpus.
    t = _template("NOT A OR NOT B OR NOT C")
    assert make_queries(labels, topic_terms(), [t], 5, seed=0) == []
    # Fewer labels than slots: skipped, not an error.
    small = {k: v for k, v in list(topic_terms().items())[:2]}
    assert make_queries(labels, small, [t], 5, seed=0) == []


def test_make_queries_returns_fewer_when_exhausted():
    # 3 labels -> only 6 ordered triples exist for a 3-term template.
    doc_labels = {f"d{i}": frozenset(s) for i, s in enumerate(["a", "b", "c", "ab", "bc", "ac", ""])}
    lt = {"a": "term a", "b": "term b", "c": "term c"}
    qs = make_queries(doc_labels, lt, [_template("A AND NOT B OR C")], 50, seed=0, max_answer_frac=1.0)
    assert 1 <= len(qs) <= 6


def test_make_queries_chain_templates(demo):
    _, labels = demo
    qs = make_queries(labels, topic_terms(), chain_templates(range(2, 7), "OR"), 3, seed=0,
                      max_answer_frac=0.9)
    assert Counter(q.template for q in qs) == {t.name: 3 for t in chain_templates(range(2, 7), "OR")}
    for q in qs:
        assert isinstance(q.ast, Or) and len(q.ast.children) == len(q.labels)


def test_make_queries_rejects_duplicate_phrases():
    with pytest.raises(ValueError):
        make_queries({"d": frozenset("a")}, {"a": "same", "b": "same"}, TEMPLATES_3, 1, seed=0)


def test_qrels_from_queries(demo):
    import ir_measures

    _, labels = demo
    qs = make_queries(labels, topic_terms(), TEMPLATES_3[:3], 2, seed=0)
    qrels = qrels_from_queries(qs)
    assert all(isinstance(r, ir_measures.Qrel) and r.relevance == 1 for r in qrels)
    assert len(qrels) == sum(len(q.relevant) for q in qs)
    assert {(r.query_id, r.doc_id) for r in qrels} == {(q.query_id, d) for q in qs for d in q.relevant}
