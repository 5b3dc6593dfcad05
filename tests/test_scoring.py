"""Scoring options (calibration, hybrid) against a direct numpy evaluation, plus bad inputs."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import assume, HealthCheck, given, settings
from hypothesis import strategies as st

from itlr_gpu import InputError, Ops
from itlr_gpu.compiler import compile_queries
from itlr_gpu.backends.reference import search_with_options
from itlr_gpu.query import And, Not, Or, Term, natural_text
from itlr_gpu.query import parse as parse_query
from itlr_gpu.scoring import CALIBRATIONS, RECOMMENDED, SPREAD_ABS, SPREAD_REL, ScoreOptions, score_dense

from oracles import eval_linear
from strategies import small_vocab_asts


# ----------------------------------------------------------------------------- numpy oracle


def unit_rows(rng, n, d):
    x = rng.standard_normal((n, d)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def np_sample_rows(n, size):
    if n <= size:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.int64))


def literals(node):
    if isinstance(node, Term):
        return [node.text]
    if isinstance(node, Not):
        return literals(node.child)
    return [t for c in node.children for t in literals(c)]


def literal_signs(node, negated=False):
    """(term, negated: under an odd number of NOTs) for every literal occurrence, left to right."""
    if isinstance(node, Term):
        return [(node.text, negated)]
    if isinstance(node, Not):
        return literal_signs(node.child, not negated)
    return [x for c in node.children for x in literal_signs(c, negated)]


def np_eval_lits(node, lit, ops, counter, negated=False, or_max=False, and_min=False):
    """Like np_eval but ``lit(term, index, negated)`` sees the literal's occurrence index and whether it is
    under an odd number of NOTs."""
    if isinstance(node, Term):
        i = counter[0]
        counter[0] += 1
        return lit(node.text, i, negated)
    if isinstance(node, Not):
        x = np_eval_lits(node.child, lit, ops, counter, not negated, or_max, and_min)
        return 1.0 - x if ops.not_ == "one_minus" else 1.0 / np.maximum(x, 1e-3)
    vals = [np_eval_lits(c, lit, ops, counter, negated, or_max, and_min) for c in node.children]
    out = vals[0]
    for v in vals[1:]:
        if isinstance(node, And):
            out = (np.minimum(out, v) if and_min else out * v if ops.and_ == "product" else out + v
                   if ops.and_ == "sum" else np.minimum(out, v))
        else:
            out = out + v if (ops.or_ == "sum" and not or_max) else np.maximum(out, v)
    return out


def inv(spread, center):
    """1/spread, or 0 where the spread is at float32 rounding level (no information: the score does not rank)."""
    return 1.0 / spread if spread >= max(SPREAD_ABS, SPREAD_REL * abs(center)) else 0.0


def np_scores(docs, vocab_vecs, nodes, ops, opt: ScoreOptions, whole_vecs=None):
    """Q x N scores by the definitions in itlr_gpu.scoring, in float64."""
    docs = docs.astype(np.float64)
    rows = np_sample_rows(len(docs), opt.sample_size)
    sample = docs[rows]
    mode = opt.calibration

    def stats(t):
        s = sample @ vocab_vecs[t]
        return s.mean(), s.std(), s.min(), s.max(), np.sort(s)

    def transform(t, x):
        mu, sd, lo, hi, srt = stats(t)
        if mode in ("equalize", "zscore"):
            return (x - mu) * inv(sd, mu)
        if mode == "minmax":
            return (x - lo) * inv(hi - lo, mu)
        if mode == "percentile":
            return np.searchsorted(srt, x + 1e-6, side="right") / len(srt)
        return x

    out = []
    for qi, node in enumerate(nodes):
        lits = literals(node)
        mu_q = np.mean([stats(t)[0] for t in lits])
        sd_q = np.mean([stats(t)[1] for t in lits])
        signs = literal_signs(node)
        pos = [t for t, neg in signs if not neg]
        guarded = opt.guard and pos and any(neg for _, neg in signs)
        if guarded:
            xp_s = np.mean([sample @ vocab_vecs[t] for t in pos], axis=0)
            mu_p = xp_s.mean()
            inv_var_p = inv(np.sqrt(((xp_s - mu_p) ** 2).mean()), mu_p) ** 2

        def lit_on(mat):
            xp = np.mean([mat @ vocab_vecs[t] for t in pos], axis=0) if guarded else None

            def f(t, i, negated):
                x = mat @ vocab_vecs[t]
                if guarded and negated:
                    xb_s = sample @ vocab_vecs[t]
                    beta = max(0.0, ((xb_s - xb_s.mean()) * (xp_s - mu_p)).mean() * inv_var_p)
                    x = x - beta * (xp - mu_p)
                z = transform(t, x)
                return mu_q + sd_q * z if mode == "equalize" else z
            return f

        def ev(mat):
            return np_eval_lits(node, lit_on(mat), ops, [0], or_max=opt.or_max, and_min=opt.and_min)

        logical = ev(docs)
        if opt.hybrid is not None:
            has_not = any(isinstance(n, Not) for n in walk(node))
            has_or = any(isinstance(n, Or) for n in walk(node))
            a = opt.hybrid
            if has_not and opt.neg_hybrid is not None:
                a = opt.neg_hybrid
            elif not has_not and not has_or and opt.conj_hybrid is not None:
                a = opt.conj_hybrid
            ls = ev(sample)
            w, ws = docs @ whole_vecs[qi], sample @ whole_vecs[qi]
            il, iw = inv(ls.std(), ls.mean()), inv(ws.std(), ws.mean())
            b = 1 - a
            if opt.adaptive:  # whole-query weight scaled by the agreement (correlation) on the sample
                rho = (((ls - ls.mean()) * il) * ((ws - ws.mean()) * iw)).mean() if il > 0 else 1.0
                b *= min(max(rho, 0.0), 1.0)
            logical = a * (logical - ls.mean()) * il + b * (w - ws.mean()) * iw
        out.append(np.broadcast_to(logical, (len(docs),)))
    return np.stack(out)


def walk(node):
    yield node
    if isinstance(node, Not):
        yield from walk(node.child)
    elif isinstance(node, (And, Or)):
        for c in node.children:
            yield from walk(c)


VOCAB = [f"term {i}" for i in range(6)]
options_st = st.builds(
    lambda cal, h, nh, ch, size, guard, or_max, adaptive, and_min: ScoreOptions(
        hybrid=h, neg_hybrid=nh if h is not None else None, conj_hybrid=ch if h is not None else None,
        calibration=cal, sample_size=size, guard=guard and cal != "percentile", or_max=or_max,
        adaptive=adaptive and h is not None, and_min=and_min),
    st.sampled_from(CALIBRATIONS + (None,)),
    st.one_of(st.none(), st.floats(0, 1)),
    st.one_of(st.none(), st.floats(0, 1)),
    st.one_of(st.none(), st.floats(0, 1)),
    st.integers(2, 80),
    st.booleans(),
    st.booleans(),
    st.booleans(),
    st.booleans(),
)
ops_st = st.builds(Ops, st.sampled_from(["product", "sum", "min"]), st.sampled_from(["sum", "max"]),
                   st.sampled_from(["one_minus", "reciprocal"]))


MIN_WELL_CONDITIONED_SAMPLE = 8


def guard_cancels(node) -> bool:
    """The guard regresses a negated literal on the mean of the query's positive literals: where that mean is the
    negated term itself (its only positive term, e.g. "a OR NOT a"), the guarded literal is a constant plus float
    rounding, and the hybrid's spread and agreement on the sample are rounding, which float32 and float64 weigh
    differently (found by hypothesis: a weight of 0.44 against 1)."""
    signs = literal_signs(node)
    positive = {t for t, neg in signs if not neg}
    return len(positive) == 1 and any(neg and t in positive for t, neg in signs)


def setup(nodes, n, seed):
    rng = np.random.default_rng(seed)
    docs = unit_rows(rng, n, 16)
    vocab = {t: v for t, v in zip(VOCAB, unit_rows(rng, len(VOCAB), 16).astype(np.float64))}
    whole = unit_rows(rng, len(nodes), 16)
    program = compile_queries(nodes)
    terms = np.stack([vocab[t] for t in program.terms]).astype(np.float32)
    return docs, vocab, whole, program, terms


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(small_vocab_asts(), min_size=1, max_size=5), ops_st, options_st, st.integers(1, 60),
       st.integers(0, 2**31 - 1))
def test_dense_scores_equal_numpy(nodes, ops, opt, n, seed):
    # float32 vs float64 on a sample with a near-zero spread differs arbitrarily (see below).
    assume(opt.calibration is None and opt.hybrid is None or min(n, opt.sample_size) >= MIN_WELL_CONDITIONED_SAMPLE)
    assume(not (opt.guard and opt.hybrid is not None and any(guard_cancels(node) for node in nodes)))
    docs, vocab, whole, program, terms = setup(nodes, n, seed)
    got = score_dense(docs, terms, program, ops, opt, whole)
    want = np_scores(docs, vocab, nodes, ops, opt, whole.astype(np.float64))
    scale = np.maximum(1.0, np.abs(want))
    assert np.all(np.abs(got - want) <= 2e-3 * scale), np.max(np.abs(got - want) / scale)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(small_vocab_asts(), min_size=1, max_size=4), options_st, st.integers(2, 70), st.integers(1, 12),
       st.sampled_from([1, 7, 64]), st.integers(0, 2**31 - 1))
def test_chunked_topk_equals_dense(nodes, opt, n, k, chunk, seed):
    # A statistics sample of < 8 documents can have a (near-)zero spread: standardising by it turns the
    # float32 rounding difference between chunked and whole-matrix similarities into arbitrary score
    # differences and rank flips: no float32 implementation can match there, so these properties exclude it.
    assume(min(n, opt.sample_size) >= MIN_WELL_CONDITIONED_SAMPLE)
    ops = Ops()
    docs, vocab, whole, program, terms = setup(nodes, n, seed)
    scores, rows = search_with_options(docs, terms, program, ops, k, opt, whole, chunk_size=chunk)
    dense = score_dense(docs, terms, program, ops, opt, whole)
    k_eff = min(k, n)
    assert scores.shape == rows.shape == (len(nodes), k_eff)
    for q in range(len(nodes)):
        # the chunked scores are the dense scores of the returned rows, and they are the top k_eff.
        # Tolerance 1e-4: standardising by a small sample std (degenerate samples of
        # 2-3 documents) amplifies the float32 rounding of chunked vs whole-matrix similarities.
        np.testing.assert_allclose(scores[q], dense[q, rows[q]], rtol=1e-4, atol=1e-4)
        kth = np.sort(dense[q])[::-1][k_eff - 1]
        assert np.all(scores[q] >= kth - 1e-4 * max(1.0, abs(float(kth))))


def test_off_options_are_the_paper_composition():
    nodes = [And((Term("term 0"), Not(Term("term 1")))), Or((Term("term 2"), Term("term 3")))]
    docs, vocab, whole, program, terms = setup(nodes, 30, 1)
    got = score_dense(docs, terms, program, Ops(), ScoreOptions())
    sims = {t: docs @ vocab[t] for t in VOCAB}
    np.testing.assert_allclose(got[0], sims["term 0"] * (1 - sims["term 1"]), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], sims["term 2"] + sims["term 3"], rtol=1e-5, atol=1e-6)


def test_negation_is_the_parity_of_the_nots_above_a_literal():
    from itlr_gpu.compiler import compile_queries
    from itlr_gpu.scoring import negated_pushes

    cases = {'"a" AND NOT "b"': [False, True], '"a" AND NOT ("b" OR "c")': [False, True, True],
             '"a" AND NOT ("b" AND NOT "c")': [False, True, False], '"a" AND NOT (NOT "b")': [False, False],
             'NOT "a" OR "b"': [True, False], '"a" AND NOT "b" AND NOT ("c" OR "d")': [False, True, True, True]}
    for query, want in cases.items():
        assert negated_pushes(compile_queries([query]).opcodes) == want, query


@settings(max_examples=200, deadline=None)
@given(small_vocab_asts())
def test_negated_pushes_is_the_parity_of_the_tree(node):
    """The linear pass over the postfix program agrees with the parity of NOTs above each literal of the tree."""
    from itlr_gpu.compiler import compile_queries
    from itlr_gpu.query import canonical
    from itlr_gpu.scoring import negated_pushes

    program = compile_queries([node])
    assert negated_pushes(program.opcodes) == [neg for _, neg in literal_signs(parse_query(canonical(node)))]


@pytest.mark.parametrize("query", ['"term 0" AND NOT ("term 1" OR "term 2")', '"term 0" AND NOT ("term 1" AND "term 2")'])
def test_the_guard_reaches_terms_under_a_negated_group(query):
    """NOT over a group negates each of its literals: the guard changes their scores as it does for NOT b."""
    nodes = [parse_query(query)]
    docs, vocab, whole, program, terms = setup(nodes, 60, 3)
    plain = score_dense(docs, terms, program, Ops(), ScoreOptions())
    guarded = score_dense(docs, terms, program, Ops(), ScoreOptions(guard=True))
    assert not np.allclose(plain, guarded)


def test_hybrid_extremes_rank_like_their_parts():
    nodes = [And((Term("term 0"), Not(Term("term 1"))))]
    docs, vocab, whole, program, terms = setup(nodes, 50, 2)
    logical = score_dense(docs, terms, program, Ops(), ScoreOptions())[0]
    h1 = score_dense(docs, terms, program, Ops(), ScoreOptions(hybrid=1.0), whole)[0]
    h0 = score_dense(docs, terms, program, Ops(), ScoreOptions(hybrid=0.0), whole)[0]
    assert np.array_equal(np.argsort(-h1, kind="stable"), np.argsort(-logical, kind="stable"))
    assert np.array_equal(np.argsort(-h0, kind="stable"), np.argsort(-(docs @ whole[0]), kind="stable"))


@pytest.mark.parametrize("opt", [ScoreOptions(hybrid=0.5), ScoreOptions(hybrid=0.3, calibration="equalize", or_max=False),
                                 ScoreOptions(hybrid=0.7, calibration="zscore", adaptive=True)])
def test_constant_logical_score_leaves_the_ranking_to_the_whole_query(opt):
    # "a OR NOT a" is 1 for every document: its sample spread is float32 rounding. It carries no
    # information, so the hybrid ranks exactly by the whole-query similarity, in torch and in the oracle.
    nodes = [Or((Term("term 0"), Not(Term("term 0"))))]
    docs, vocab, whole, program, terms = setup(nodes, 300, 4)
    got = score_dense(docs, terms, program, Ops(), opt, whole)[0]
    want_rank = np.argsort(-(docs.astype(np.float64) @ whole[0].astype(np.float64)), kind="stable")
    assert np.array_equal(np.argsort(-got, kind="stable"), want_rank)
    oracle = np_scores(docs, vocab, nodes, Ops(), opt, whole.astype(np.float64))[0]
    np.testing.assert_allclose(got, oracle, rtol=1e-4, atol=1e-4)
    _, rows = search_with_options(docs, terms, program, Ops(), 10, opt, whole, chunk_size=7)
    assert np.array_equal(rows[0], want_rank[:10])


def test_small_but_real_spread_still_ranks():
    # A product of five small cosines lives around 1e-4: its spread is small in absolute terms but far
    # above float32 rounding, so the hybrid must not drop it (the threshold is relative to its size).
    from itlr_gpu.query import make_and

    nodes = [make_and([Term(f"term {i}") for i in range(5)])]
    docs, vocab, whole, program, terms = setup(nodes, 200, 8)
    rng = np.random.default_rng(8)
    terms = np.eye(16, dtype=np.float32)[:5]                          # term i = axis i
    docs = np.zeros((200, 16), dtype=np.float32)
    docs[:, :5] = 0.15 + 0.04 * rng.standard_normal((200, 5))       # cosines ~0.15 with every term
    docs[:, 5:] = rng.standard_normal((200, 11))
    docs[:, 5:] *= np.sqrt(1 - (docs[:, :5] ** 2).sum(1, keepdims=True)) / np.linalg.norm(docs[:, 5:], axis=1,
                                                                                            keepdims=True)
    logical = score_dense(docs, terms, program, Ops(), ScoreOptions())[0]
    assert logical.std() < 1e-4                                      # tiny in absolute terms
    got = score_dense(docs, terms, program, Ops(), ScoreOptions(hybrid=1.0), whole)[0]
    assert np.array_equal(np.argsort(-got, kind="stable"), np.argsort(-logical, kind="stable"))


def test_not_of_a_long_and_still_ranks_in_the_hybrid():
    # NOT of a product of six small cosines sits at 1 - ~1e-5: its spread (~20 float32 units of 1.0) is real and
    # ranks, so the hybrid at ALPHA 1 keeps the plain ranking (a threshold of 1e-5 of the size dropped it: every
    # document scored 0).
    from itlr_gpu.query import make_and

    nodes = [Not(make_and([Term(f"term {i}") for i in range(6)]))]
    docs, vocab, whole, program, terms = setup(nodes, 300, 9)
    rng = np.random.default_rng(9)
    terms = np.eye(16, dtype=np.float32)[:6]
    docs = np.zeros((300, 16), dtype=np.float32)
    docs[:, :6] = 0.15 + 0.04 * rng.standard_normal((300, 6))
    docs[:, 6:] = rng.standard_normal((300, 10))
    docs[:, 6:] *= np.sqrt(1 - (docs[:, :6] ** 2).sum(1, keepdims=True)) / np.linalg.norm(docs[:, 6:], axis=1,
                                                                                            keepdims=True)
    logical = score_dense(docs, terms, program, Ops(), ScoreOptions())[0]
    assert logical.std() < 1e-5 * abs(logical.mean())                # under the old relative threshold
    got = score_dense(docs, terms, program, Ops(), ScoreOptions(hybrid=1.0), whole)[0]
    # the same order (an affine map of L; its float32 rounding may tie neighbouring levels, never swap them)
    assert len(np.unique(got)) > 20
    assert np.all(np.diff(got[np.argsort(-logical, kind="stable")]) <= 0)


def test_constant_term_gets_no_calibration_weight():
    # A term with zero similarity spread (orthogonal to every document) is not standardised by a floor.
    nodes = [And((Term("term 0"), Term("term 1")))]
    docs, vocab, whole, program, terms = setup(nodes, 64, 6)
    docs[:, 0] = 0.0
    docs /= np.linalg.norm(docs, axis=1, keepdims=True)
    terms[program.terms.index("term 1")] = np.eye(16, dtype=np.float32)[0]
    got = score_dense(docs, terms, program, Ops(), ScoreOptions(calibration="zscore"))[0]
    assert np.all(np.isfinite(got)) and np.allclose(got, 0.0)   # z of term 1 is 0 everywhere: product is 0


def test_equalize_is_identity_for_a_single_term():
    nodes = [Term("term 3")]
    docs, vocab, whole, program, terms = setup(nodes, 40, 3)
    got = score_dense(docs, terms, program, Ops(), ScoreOptions(calibration="equalize"))[0]
    np.testing.assert_allclose(got, docs @ vocab["term 3"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("kw", [
    {"hybrid": -0.1}, {"hybrid": 1.5}, {"hybrid": float("nan")}, {"hybrid": "0.5"}, {"hybrid": True},
    {"hybrid": 0.5, "neg_hybrid": 2.0}, {"neg_hybrid": 0.5}, {"calibration": "sigmoid"}, {"calibration": 3},
    {"conj_hybrid": 0.2}, {"hybrid": 0.5, "conj_hybrid": -1}, {"hybrid": 0.5, "conj_hybrid": "0.2"},
    {"sample_size": 1}, {"sample_size": 2.5}, {"guard": "yes"}, {"guard": True, "calibration": "percentile"},
    {"or_max": 1}, {"and_min": "no"}, {"adaptive": True}, {"hybrid": 0.5, "adaptive": "yes"},
])
def test_bad_options_raise_input_error(kw):
    with pytest.raises(InputError):
        ScoreOptions(**kw)


def test_option_spellings():
    assert ScoreOptions(calibration="NONE").calibration is None
    assert ScoreOptions(calibration=" Equalize ").calibration == "equalize"
    assert not ScoreOptions().active and ScoreOptions(hybrid=0).active
    assert RECOMMENDED.active and RECOMMENDED.guard
    assert ScoreOptions(guard=True).active
    assert natural_text(And((Term("a"), Not(Or((Term("b"), Term("c"))))))) == "a and not (b or c)"


# ----------------------------------------------------------------------------- through the engine


class HashEncoder:
    """Deterministic fake encoder: a text's vector is seeded by its hash."""

    name = "hash-encoder"
    dim = 16

    def encode(self, texts):
        import hashlib

        out = []
        for t in texts:
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:4], "little")
            out.append(np.random.default_rng(seed).standard_normal(16))
        return np.asarray(out, dtype=np.float32)


def make_index(n=64, seed=5):
    from itlr_gpu.index import Index

    docs = unit_rows(np.random.default_rng(seed), n, 16)
    return Index.from_arrays(docs, [f"d{i}" for i in range(n)], dtype="float32"), docs


def test_engine_options_match_dense_definition():
    from itlr_gpu.engine import search

    index, docs = make_index()
    enc = HashEncoder()
    queries = ['"term 0" AND NOT "term 1"', '"term 2" OR "term 3"', '"term 4"']
    whole = ["zero not one", "two or three", "four"]
    table = search(index, queries, enc, k=5, hybrid=0.4, neg_hybrid=0.9, calibration="equalize", guard=True,
                   whole_queries=whole, backend="torch", device="cpu")
    program = compile_queries(queries)
    terms = enc.encode(program.terms)
    terms /= np.linalg.norm(terms, axis=1, keepdims=True)
    wv = enc.encode(whole)
    wv /= np.linalg.norm(wv, axis=1, keepdims=True)
    dense = score_dense(docs, terms, program, Ops(),
                        ScoreOptions(hybrid=0.4, neg_hybrid=0.9, calibration="equalize", guard=True), wv)
    for q in range(3):
        top = np.argsort(-dense[q], kind="stable")[:5]
        rows = table.slice(5 * q, 5)
        assert rows.column("doc_id").to_pylist() == [f"d{i}" for i in top]
        np.testing.assert_allclose(rows.column("score").to_numpy(), dense[q, top], rtol=1e-5, atol=1e-5)


def test_engine_without_options_is_unchanged_and_default_whole_text():
    from itlr_gpu.engine import search

    index, _ = make_index()
    enc = HashEncoder()
    q = ['"term 0" AND NOT "term 1"']
    a = search(index, q, enc, k=5)
    b = search(index, q, enc, k=5, calibration="none")
    assert a.equals(b)
    # hybrid without whole_queries embeds a plain-English rendering of the expression
    c = search(index, q, enc, k=5, hybrid=0.5)
    d = search(index, q, enc, k=5, hybrid=0.5, whole_queries=["term 0 and not term 1"])
    assert c.equals(d)


@pytest.mark.parametrize("kw", [
    {"hybrid": 2.0}, {"calibration": "bogus"}, {"hybrid": 0.5, "whole_queries": ["only one", "two"]},
    {"hybrid": 0.5, "whole_queries": "a string"}, {"hybrid": 0.5, "whole_queries": [""]},
    {"score_options": {"hybrid": 0.5}}, {"guard": 1}, {"score_options": "recomended"},
])
def test_engine_bad_options(kw):
    from itlr_gpu.engine import search

    index, _ = make_index()
    with pytest.raises(InputError):
        search(index, ['"term 0"'], HashEncoder(), k=3, **kw)


@pytest.mark.parametrize("kw", [{}, {"calibration": "equalize"}, {"guard": True}])
def test_whole_queries_without_hybrid_refused(kw):
    """Whole-query texts are read only by the hybrid mix: given without it they would change nothing, which
    a caller would not see, so they are refused."""
    from itlr_gpu.engine import search

    index, _ = make_index()
    with pytest.raises(InputError, match="whole_queries given but hybrid scoring is off"):
        search(index, ['"term 0"'], HashEncoder(), k=3, whole_queries=["term zero"], **kw)


def test_queries_of_other_types_and_ops_as_a_sequence():
    """A query that is neither a string nor an AST is an InputError naming it; ops may be a 3-sequence."""
    from itlr_gpu.engine import search

    index, _ = make_index()
    for bad, shown in ((None, "None"), (5, "a int (5)"), (b"x", "a bytes (b'x')")):
        with pytest.raises(InputError, match=re.escape(f"query 'q1' is {shown}")):
            search(index, ['"term 0"', bad], HashEncoder(), k=3)
    a = search(index, ['"term 0" OR "term 1"'], HashEncoder(), k=3, ops=("min", "max", "reciprocal"))
    assert a.equals(search(index, ['"term 0" OR "term 1"'], HashEncoder(), k=3, ops="min,max,reciprocal"))


def test_recommended_by_name_is_the_exported_constant():
    import itlr_gpu
    from itlr_gpu.engine import search

    index, _ = make_index()
    q = ['"term 0" AND NOT "term 1"', '"term 2" OR "term 3"']
    by_name = search(index, q, HashEncoder(), k=5, score_options="recommended", whole_queries=["a", "b"])
    by_value = search(index, q, HashEncoder(), k=5, score_options=itlr_gpu.RECOMMENDED, whole_queries=["a", "b"])
    assert by_name.equals(by_value) and itlr_gpu.RECOMMENDED is RECOMMENDED and itlr_gpu.ScoreOptions is ScoreOptions
    assert not by_name.equals(search(index, q, HashEncoder(), k=5))


def test_hybrid_weight_by_query_shape():
    """neg_hybrid applies to queries with a NOT, conj_hybrid to pure conjunctions (no NOT, no OR), hybrid to the
    rest; an unset specific weight falls back to hybrid."""
    opt = ScoreOptions(hybrid=0.5, neg_hybrid=0.8, conj_hybrid=0.2)
    assert opt.weight(has_not=True, has_or=True) == 0.8 and opt.weight(has_not=True) == 0.8
    assert opt.weight(has_not=False, has_or=False) == 0.2
    assert opt.weight(has_not=False, has_or=True) == 0.5
    assert ScoreOptions(hybrid=0.5).weight(False, False) == 0.5
    assert "conj_hybrid=0.2" in str(opt)
    # through the scorer: conj_hybrid=0 ranks a conjunction exactly like the whole query and leaves an OR alone
    nodes = [And((Term("term 0"), Term("term 1"))), Or((Term("term 0"), Term("term 1")))]
    docs, vocab, whole, program, terms = setup(nodes, 40, 6)
    plain = score_dense(docs, terms, program, Ops(), ScoreOptions(hybrid=0.5), whole)
    conj0 = score_dense(docs, terms, program, Ops(), ScoreOptions(hybrid=0.5, conj_hybrid=0.0), whole)
    w = docs @ whole[0]
    np.testing.assert_array_equal(np.argsort(-conj0[0], kind="stable"), np.argsort(-w, kind="stable"))
    np.testing.assert_allclose(conj0[1], plain[1], rtol=1e-6, atol=1e-6)
    assert not np.allclose(conj0[0], plain[0])


def test_or_max_and_adaptive_definitions():
    """or_max: OR is the max of the two (calibrated) operands; adaptive: the whole-query weight is scaled by the
    sample correlation of the two standardised scores (so alpha=1 still ranks like the logical score)."""
    nodes = [Or((Term("term 0"), Term("term 1")))]
    docs, vocab, whole, program, terms = setup(nodes, 40, 4)
    got = score_dense(docs, terms, program, Ops(), ScoreOptions(or_max=True))[0]
    np.testing.assert_allclose(got, np.maximum(docs @ vocab["term 0"], docs @ vocab["term 1"]), rtol=1e-5, atol=1e-6)
    logical = score_dense(docs, terms, program, Ops(), ScoreOptions())[0]
    h1 = score_dense(docs, terms, program, Ops(), ScoreOptions(hybrid=1.0, adaptive=True), whole)[0]
    assert np.array_equal(np.argsort(-h1, kind="stable"), np.argsort(-logical, kind="stable"))
    # agreement weight: the whole query identical to a single-term query gets the full (1 - alpha) weight
    one = [Term("term 2")]
    d2, v2, _, p2, t2 = setup(one, 40, 4)
    same = np.asarray([v2["term 2"]], dtype=np.float32)
    a = score_dense(d2, t2, p2, Ops(), ScoreOptions(hybrid=0.5, adaptive=True), same)[0]
    b = score_dense(d2, t2, p2, Ops(), ScoreOptions(hybrid=0.5), same)[0]
    np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(small_vocab_asts(), min_size=1, max_size=5), ops_st, options_st, st.integers(8, 60),
       st.integers(0, 2**31 - 1))
def test_linear_form_equals_the_options(nodes, ops, opt, n, seed):
    # What a fused kernel runs (per-literal affine maps of dot products + a per-query epilogue) is the
    # same score as the chunked definition, for every option but the percentile lookup table.
    from itlr_gpu.scoring import linearize_options

    assume(opt.calibration != "percentile" and min(n, opt.sample_size) >= MIN_WELL_CONDITIONED_SAMPLE)
    docs, vocab, whole, program, terms = setup(nodes, n, seed)
    lin = linearize_options(docs, terms, program, ops, opt, whole)
    assert lin.vectors.shape[0] == len(lin.program.terms)
    got = eval_linear(docs, lin)
    want = score_dense(docs, terms, program, ops, opt, whole)
    scale = np.maximum(1.0, np.abs(want))
    assert np.all(np.abs(got - want) <= 1e-3 * scale), np.max(np.abs(got - want) / scale)


def test_percentile_has_no_linear_form():
    from itlr_gpu.scoring import linearize_options

    docs, vocab, whole, program, terms = setup([Term("term 0")], 20, 0)
    with pytest.raises(ValueError, match="percentile"):
        linearize_options(docs, terms, program, Ops(), ScoreOptions(calibration="percentile"))
