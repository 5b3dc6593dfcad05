"""Few-shot examples chosen per request: the skeleton, the nearest-pair search (against a
brute-force oracle) and how the translator puts them into the prompt."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itlr_gpu.query import canonical, parse
from itlr_gpu.translate import grammar as g
from itlr_gpu.translate.examples import (FUNCTION_WORDS, MAX_EXAMPLE_CHARS, ExamplePool, default_pool, load_pool,
                                        skeleton, writers_pool)
from itlr_gpu.translate.llm import FEW_SHOT, VllmTranslator

from test_translate_vllm import ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]

PAIRS = Path(__file__).parent / "data" / "translation_pairs.jsonl"


def test_skeleton_keeps_connectives_and_collapses_content_words():
    assert skeleton("either chemotherapy or radiotherapy for breast cancer") == \
        ["either", "_", "or", "_", "for", "_"]
    assert skeleton("Volcanoes, excluding Iceland and Hawaii") == ["_", ",", "excluding", "_", "and", "_"]
    assert skeleton("documents that don’t mention Brexit") == ["documents", "that", "don't", "mention", "_"]
    assert skeleton("") == []


def test_shipped_pool_is_the_dev_split_only_and_parses():
    rows = [json.loads(x) for x in PAIRS.read_text(encoding="utf-8").splitlines() if x.strip()]
    dev = {(r["text"], r["expr"]) for r in rows if r["split"] == "dev"}
    test = {r["text"] for r in rows if r["split"] == "test"}
    pool = default_pool()
    assert len(pool) > 100
    assert set(pool.pairs) <= dev
    assert not {t for t, _ in pool.pairs} & test
    for _, expr in pool.pairs:
        assert canonical(parse(expr)) == expr
        assert g.matches(g.QUERY_GRAMMAR, expr)


# ------------------------------------------------------------------ nearest pairs vs an oracle

def oracle_scores(pairs, text):
    """Brute force, written from the definition: idf-weighted skeleton n-gram cosine + 0.1 x content-word
    Jaccard, per pair (None for a pair whose request is the query's own text); long pairs dropped first."""
    def feats(t):
        sk = ["<s>", *skeleton(t), "</s>"]
        return Counter(" ".join(sk[i:i + n]) for n in (1, 2, 3) for i in range(len(sk) - n + 1))

    def words(t):
        return {w for w in re.findall(r"[\w'’]+|[^\w\s]", t.lower()) if w[0].isalnum() and w not in FUNCTION_WORDS}

    pairs = [p for p in pairs if len(p[0]) <= 400]
    fs = [feats(t) for t, _ in pairs]
    n = len(pairs)
    idf = {key: math.log((1 + n) / (1 + sum(key in f for f in fs))) + 1 for f in fs for key in f}

    def vec(f):
        return {key: c * idf.get(key, math.log(1 + n) + 1) for key, c in f.items()}

    def cos(a, b):
        dot = sum(a[x] * b.get(x, 0) for x in a)
        na, nb = math.sqrt(sum(v * v for v in a.values())), math.sqrt(sum(v * v for v in b.values()))
        return dot / (na * nb) if na and nb else 0.0

    q = vec(feats(text))
    qw = words(text)
    scores = []
    for i, (t, e) in enumerate(pairs):
        if " ".join(t.lower().split()) == " ".join(text.lower().split()):
            scores.append(None)
            continue
        w = words(t)
        jac = len(qw & w) / len(qw | w) if qw | w else 0.0
        scores.append(cos(q, vec(fs[i])) + 0.1 * jac)
    return [p for p in pairs], scores


def oracle_nearest(pairs, text, k):
    """The k best of :func:`oracle_scores`; ties by pool order; closest last."""
    kept, scores = oracle_scores(pairs, text)
    best = sorted((i for i, x in enumerate(scores) if x is not None), key=lambda i: (-scores[i], i))[:k]
    return [kept[i] for i in best][::-1]


WORDS = ["cats", "dogs", "tea", "coffee", "Rome", "Paris", "jazz", "opera", "tax", "law"]
GLUE = ["and", "or", "not", "but not", "either", "neither", "nor", "for", "in", "without", "other than", ","]
phrases = st.lists(st.sampled_from(WORDS + GLUE), min_size=1, max_size=8).map(" ".join)


@settings(max_examples=60, deadline=None)
@given(st.lists(phrases, min_size=1, max_size=12), phrases, st.integers(0, 6))
def test_nearest_matches_the_oracle(texts, query, k):
    pairs = [(t, f'"{i}"') for i, t in enumerate(texts)]
    got = ExamplePool(pairs).nearest(query, k)
    want = oracle_nearest(pairs, query, k)
    # equal up to exact score ties (float summation order may differ)
    assert len(got) == len(want) == min(k, sum(" ".join(t.lower().split()) != " ".join(query.lower().split())
                                               for t, _ in pairs))
    assert sorted(got) == sorted(want) or [skeleton(t) for t, _ in got] == [skeleton(t) for t, _ in want]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from(GLUE), min_size=1, max_size=4), min_size=2, max_size=8, unique_by=tuple),
       st.data())
def test_same_connectives_with_other_topics_is_the_closest(glues, data):
    """A request whose connective pattern equals one pool entry's, about unrelated topics, gets
    that entry as its closest example."""
    def fill(glue, words):
        return " ".join(f"{w} {c}" for w, c in zip(words, glue)) + f" {words[-1]}"

    pairs = [(fill(gl, ["alpha"] * 5), f'"{i}"') for i, gl in enumerate(glues)]
    pick = data.draw(st.integers(0, len(glues) - 1))
    query = fill(glues[pick], ["zeta"] * 5)
    best = ExamplePool(pairs).nearest(query, 1)
    assert skeleton(best[0][0]) == skeleton(pairs[pick][0])


@settings(max_examples=40, deadline=None)
@given(st.lists(phrases, min_size=1, max_size=10), st.lists(phrases, min_size=1, max_size=12), st.integers(1, 5),
       st.integers(0, 4), st.randoms(use_true_random=False))
def test_nearest_groups_partition_the_batch_and_ignore_its_order(pool_texts, texts, size, k, rnd):
    pairs = [(t, f'"{i}"') for i, t in enumerate(pool_texts)]
    pool = ExamplePool(pairs)
    groups = pool.nearest_groups(texts, k, size)
    members = [m for ms, _ in groups for m in ms]
    assert sorted(members) == list(range(len(texts)))           # every request in exactly one group
    assert all(len(ms) == size for ms, _ in groups[:-1]) and 1 <= len(groups[-1][0]) <= size
    for ms, examples in groups:
        mine = {" ".join(texts[m].lower().split()) for m in ms}
        assert not {" ".join(t.lower().split()) for t, _ in examples} & mine   # never a member's own request
        # each member's closest pair, then the highest summed score over the members (up to float ties); the
        # chosen ones least similar to the group first
        kept, total, own = oracle_scores(pairs, texts[ms[0]])[0], None, []
        for m in ms:
            sc = oracle_scores(pairs, texts[m])[1]
            own.append(max((i for i, x in enumerate(sc) if x is not None), key=lambda i: sc[i], default=None))
            total = sc if total is None else [None if a is None or b is None else a + b for a, b in zip(total, sc)]
        ranked = sorted((i for i, x in enumerate(total) if x is not None), key=lambda i: (-total[i], i))
        assert len(examples) == min(k, len(ranked))
        got = [kept.index(e) for e in examples]
        assert [total[i] for i in got] == sorted(total[i] for i in got)
        closest = {total[i] for i in own if i is not None and total[i] is not None}
        n_own = min(k, len(closest))
        # as many members' closest pairs as fit (by score: a tie may pick another pair of the same score) ...
        assert sum(any(abs(total[i] - c) < 1e-9 for c in closest) for i in got) >= n_own
        # ... and the rest the best summed among the others
        rest = sorted((total[i] for i in got if not any(abs(total[i] - c) < 1e-9 for c in closest)), reverse=True)
        others = [total[i] for i in ranked if not any(abs(total[i] - c) < 1e-9 for c in closest)]
        assert all(abs(a - b) < 1e-9 for a, b in zip(rest, others))
    # the same requests in another order: the same groups (as texts) with the same examples
    order = list(range(len(texts)))
    rnd.shuffle(order)
    again = pool.nearest_groups([texts[i] for i in order], k, size)
    as_texts = sorted((sorted(texts[m] for m in ms), ex) for ms, ex in groups)
    assert sorted((sorted(texts[order[m]] for m in ms), ex) for ms, ex in again) == as_texts


def test_a_group_of_one_gets_its_own_nearest_examples_and_a_group_the_best_summed():
    pairs = [("cats but not dogs", "1"), ("tea but not coffee", "2"), ("either jazz or opera", "3"),
             ("neither tax nor law", "4"), ("Rome and Paris", "5"), ("either Rome or Paris", "6")]
    pool = ExamplePool(pairs)
    texts = ["owls but not bats", "either rock or pop", "either oak or elm", "lamps but not candles"]
    for ms, examples in pool.nearest_groups(texts, 2, 1):
        assert examples == pool.nearest(texts[ms[0]], 2)
    groups = pool.nearest_groups(texts, 2, 2)
    # like requests are grouped together, and each group gets the pattern its members share
    assert sorted(sorted(texts[m] for m in ms) for ms, _ in groups) == [
        ["either oak or elm", "either rock or pop"], ["lamps but not candles", "owls but not bats"]]
    for ms, examples in groups:
        want = {"either": {"3", "6"}, "lamps": {"1", "2"}, "owls": {"1", "2"}}[texts[ms[0]].split()[0]]
        assert {e for _, e in examples} == want
    with pytest.raises(ValueError, match="group size"):
        pool.nearest_groups(texts, 2, 0)


def test_nearest_excludes_the_request_itself_and_long_examples():
    pool = ExamplePool([("cats but not dogs", '("cats" AND NOT "dogs")'), ("x " * 300, '"x"'),
                        ("tea but not coffee", '("tea" AND NOT "coffee")')])
    assert len(pool) == 2
    assert pool.nearest("Cats  but not DOGS", 5) == [("tea but not coffee", '("tea" AND NOT "coffee")')]
    assert pool.nearest("anything", 0) == []


def test_representatives_cover_the_patterns_before_repeating_one():
    pairs = [("cats but not dogs", "1"), ("tea but not coffee", "2"), ("either jazz or opera", "3"),
             ("neither tax nor law", "4"), ("Rome and Paris", "5"), ("Rome, Paris and jazz", "6")]
    reps = ExamplePool(pairs).representatives(4)
    assert len(reps) == 4 and len(set(reps)) == 4
    # the two "_ but not _" requests have one skeleton: the other patterns come first
    assert not {("cats but not dogs", "1"), ("tea but not coffee", "2")} <= set(reps)
    assert ExamplePool(pairs).representatives(10) == ExamplePool(pairs).representatives(6)
    assert ExamplePool(pairs).representatives(0) == []


# ------------------------------------------------------------------ in the translator's prompt

def test_prompt_order_shared_then_fixed_then_nearest_then_request():
    llm = ScriptedLLM({"either chemotherapy or radiotherapy for breast cancer": '("a" OR "b")',
                       "cats but not dogs": '("cats" AND NOT "dogs")'})
    tr = VllmTranslator(llm=llm, examples=5, nearest=3)
    prompts = [tr.prompt(t) for t in llm.answers]
    shared = default_pool().representatives(5)
    for p, t in zip(prompts, llm.answers):
        near = writers_pool().nearest(t, 3)   # (the nearest examples come from the writers' pool)
        assert len(near) == 3
        idx = [p.index(f"Request: {q}\nQuery: {a}\n") for q, a in (*shared, *FEW_SHOT, *near)]
        assert idx == sorted(idx)
        assert p.endswith(f"Request: {t}\nQuery:")
    # the shared and fixed examples sit in the prefix every request shares (batched engines prefill it once)
    common = next(i for i, (a, b) in enumerate(zip(*prompts)) if a != b)
    assert all(f"Request: {q}\n" in prompts[0][:common] for q, _ in (*shared, *FEW_SHOT))
    rows = tr.generate(list(llm.answers))
    assert [r.expr for r in rows] == ['("a" OR "b")', '("cats" AND NOT "dogs")']


def test_a_group_shares_its_nearest_examples_and_goes_to_the_engine_together():
    texts = ["owls but not bats", "either rock or pop", "lamps but not candles", "either oak or elm", ""]
    llm = ScriptedLLM({t: '"x"' for t in texts})
    pool = ExamplePool([("cats but not dogs", '"cats" AND NOT "dogs"'), ("tea but not coffee", '"tea" AND NOT "coffee"'),
                        ("either jazz or opera", '"jazz" OR "opera"'), ("either Rome or Paris", '"rome" OR "paris"'),
                        ("neither tax nor law", 'NOT "tax" AND NOT "law"')])
    tr = VllmTranslator(llm=llm, examples=0, nearest=2, nearest_pool=pool, nearest_group=2)
    rows = tr.generate(texts)
    assert [r.expr for r in rows] == ['"x"'] * 4 + [None] and rows[4].error == "empty text"
    sent = llm.calls[0][0]
    asked = [p.rsplit("Request: ", 1)[1].split("\n")[0] for p in sent]
    assert sorted(asked) == sorted(t for t in texts if t)
    # a group's two members are sent one after the other, with the same prompt up to the request
    heads = [p.rsplit("Request: ", 1)[0] for p in sent]
    pairs = {frozenset(("owls but not bats", "lamps but not candles")), frozenset(("either rock or pop", "either oak or elm"))}
    for a in range(0, 4, 2):
        assert frozenset(asked[a:a + 2]) in pairs and heads[a] == heads[a + 1]
    assert heads[0] != heads[2]
    assert "Request: either jazz or opera" in heads[asked.index("either oak or elm")]
    # each request alone (group 1): its own examples, the prompt it always had, and the key it always had
    alone = VllmTranslator(llm=llm, examples=0, nearest=2, nearest_pool=pool)
    assert alone.prompt_version != tr.prompt_version and ":k=2x2@" in tr.prompt_version
    assert VllmTranslator(llm=llm, examples=0, nearest=2, nearest_pool=pool, nearest_group=1).prompt_version == \
        alone.prompt_version and ":k=2@" in alone.prompt_version
    assert VllmTranslator(llm=llm, examples=4, nearest_group=8).prompt_version == \
        VllmTranslator(llm=llm, examples=4).prompt_version   # without nearest examples the group changes nothing


def test_groups_with_hostile_requests_keep_one_row_each():
    long = "grant writing " * 1500   # 21,000 characters
    texts = ["", "?!", "cats but not dogs", "cats but not dogs", "tea\x00 or\x1b[31m coffee", long, "   ", "owls"]
    answers = {" ".join(t.split()): '"x"' for t in texts}
    answers["tea or coffee"] = '"x"'
    llm = ScriptedLLM(answers)
    tr = VllmTranslator(llm=llm, examples=0, nearest=3, nearest_group=3, max_model_len=None)
    rows = tr.generate(texts)
    assert len(rows) == len(texts)
    assert [r.error for r in rows][:2] == ["empty text", "no words: the request is punctuation only"]
    assert rows[6].error == "empty text" and all(r.error is None for i, r in enumerate(rows) if i not in (0, 1, 6))
    (sent,) = [c[0] for c in llm.calls]
    assert len(sent) == 5 and len(set(sent)) == 4   # the two equal requests: one prompt, sent side by side
    i = sent.index(next(p for p in sent if p.endswith("Request: cats but not dogs\nQuery:")))
    assert sent[i + 1] == sent[i] or sent[i - 1] == sent[i]


@pytest.mark.parametrize("bad", [0, -1, 1.5, "4", True])
def test_a_bad_group_size_is_refused(bad):
    with pytest.raises(ValueError, match="nearest_group"):
        VllmTranslator(llm=ScriptedLLM({}), nearest=2, nearest_group=bad)


def refused_translate(tmp_path, capsys, *flags) -> str:
    """``itlr translate`` of a one-request file with ``flags``: it must fail with one error line and write nothing;
    returns that line."""
    from itlr_gpu.cli import main

    q = tmp_path / "q.jsonl"
    q.write_text('{"query_id": "1", "text": "cats but not dogs"}\n')
    out = tmp_path / "out.arrow"
    assert main(["translate", str(q), "-o", str(out), *flags]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and not out.exists()
    return err[0]


def test_cli_refuses_a_group_without_nearest_and_a_group_of_zero(tmp_path, capsys):
    err = refused_translate(tmp_path, capsys, "--translator", "llamacpp", "--nearest-group", "8")
    assert "--nearest-group" in err and "--nearest K" in err
    err = refused_translate(tmp_path, capsys, "--translator", "llamacpp", "--nearest", "2", "--nearest-group", "0")
    assert "--nearest-group" in err
    err = refused_translate(tmp_path, capsys, "--translator", "llamacpp", "--mode", "rewrite", "--nearest-group", "2")
    assert "--nearest-group" in err and "logical mode only" in err


def test_examples_are_in_the_cache_key_and_zero_gives_the_fixed_prompt():
    llm = ScriptedLLM({})
    fixed = VllmTranslator(llm=llm, examples=0, nearest=0)
    shared, near = VllmTranslator(llm=llm, examples=6), VllmTranslator(llm=llm, examples=0, nearest=4)
    assert len({fixed.prompt_version, shared.prompt_version, near.prompt_version}) == 3
    assert ":e=" not in fixed.prompt_version
    assert fixed.prompt("cats").count("Request: ") == len(FEW_SHOT) + 1
    assert shared.prompt("cats").count("Request: ") == len(FEW_SHOT) + 7
    assert near.prompt("cats").count("Request: ") == len(FEW_SHOT) + 5
    rewrite = VllmTranslator(llm=llm, mode="rewrite", examples=6, nearest=4)
    assert rewrite.examples == rewrite.nearest == 0 and ":e=" not in rewrite.prompt_version


@pytest.mark.parametrize("field", ["examples", "nearest"])
@pytest.mark.parametrize("bad", [-1, 1.5, "4", True])
def test_bad_example_counts_are_refused(field, bad):
    with pytest.raises(ValueError, match=field):
        VllmTranslator(llm=ScriptedLLM({}), **{field: bad})


def test_cli_refuses_a_negative_example_count(capsys):
    from itlr_gpu.cli import main

    assert main(["translate", "q.jsonl", "-o", "out.arrow", "--examples", "-2"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--examples" in err[0] and ">= 0" in err[0]


# ------------------------------------------------------------------ the nearest examples' pools

def test_the_shipped_writers_pool_is_the_build_scripts_output_without_the_test_split():
    import gzip
    import importlib.util
    from importlib import resources

    spec = importlib.util.spec_from_file_location("build_writers_pool", ROOT / "scripts" / "build_writers_pool.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    rows = build.pool_rows()
    shipped = resources.files("itlr_gpu.translate").joinpath("data/writers.jsonl.gz").read_bytes()
    assert shipped == build.pool_bytes(rows), "run: python scripts/build_writers_pool.py"
    assert len(rows) > 16_000 and gzip.decompress(shipped).count(b"\n") == len(rows)
    test = {" ".join(json.loads(line)["text"].lower().split())
            for line in (ROOT / "tests" / "data" / "translation_pairs.jsonl").read_text().splitlines()
            if line.strip() and json.loads(line)["split"] == "test"}
    assert not test & {" ".join(r["text"].lower().split()) for r in rows}
    assert len(writers_pool()) == sum(len(r["text"]) <= MAX_EXAMPLE_CHARS for r in rows)
    assert all(canonical(parse(r["expr"])) == r["expr"] for r in rows[:500])   # as the prompt's examples are written
    # a pool for scoring later writers held out holds none of theirs
    early = build.pool_rows(below=4)
    assert early and {r["id"] for r in early} <= {r["id"] for r in rows} and len(early) < len(rows)
    assert {json.loads(line)["text"] for line in (ROOT / "benchmarks/data/heldout-writer4.jsonl").read_text().splitlines()
            if line.strip()}.isdisjoint(r["text"] for r in early)


def test_nearest_examples_come_from_the_writers_pool_unless_another_is_named(tmp_path):
    llm = ScriptedLLM({})
    default = VllmTranslator(llm=llm, examples=6, nearest=2)
    assert default.nearest_pool is writers_pool() and default.pool is default_pool()
    own = tmp_path / "mine.jsonl"
    own.write_text('{"text": "tea but not coffee", "expr": "\\"tea\\" AND NOT \\"coffee\\""}\n'
                   '{"text": "rome or paris", "expr": "\\"rome\\" OR \\"paris\\""}\n')
    mine = VllmTranslator(llm=llm, examples=6, nearest=2, nearest_pool=str(own))
    prompt = mine.prompt("cats but not dogs")
    tail = prompt[prompt.index(f"Request: {FEW_SHOT[-1][0]}\n"):]   # after the fixed examples: the file's two
    assert "Request: tea but not coffee\n" in tail and "Request: rome or paris\n" in tail
    dev = VllmTranslator(llm=llm, examples=6, nearest=2, nearest_pool="dev")
    assert dev.nearest_pool is default_pool()
    # every pool is in the cache key; without nearest examples the key is the one runs had before
    assert len({default.prompt_version, mine.prompt_version, dev.prompt_version}) == 3
    assert VllmTranslator(llm=llm, examples=6).prompt_version.endswith(
        f":e=6:k=0@{default_pool().fingerprint}:" + default.prompt_version.rsplit(":", 1)[1])
    # a pool given as `pool` (the benchmark's dev halves) gives both kinds, as before
    half = ExamplePool([("tea but not coffee", '("tea" AND NOT "coffee")')])
    both = VllmTranslator(llm=llm, examples=1, nearest=1, pool=half)
    assert both.nearest_pool is half and both.pool is half


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("not json\n", "line 1: not JSON"),
    ('{"text": "a"}\n', "line 1: needs a non-empty string 'text' and a string 'expr'"),
    ('{"text": "a", "expr": "\\"a\\""}\n{"text": "b", "expr": "\\"b\\" AND ("}\n', "line 2: expr does not parse"),
    ("\n\n", "holds no examples"),
])
def test_a_bad_pool_file_is_one_clear_error(tmp_path, content, message):
    from itlr_gpu.errors import InputError

    path = tmp_path / "pool.jsonl"
    if content is not None:
        path.write_text(content)
    with pytest.raises(InputError, match="--nearest-from") as e:
        load_pool(path)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_cli_refuses_a_pool_without_nearest_and_a_bad_pool_file(tmp_path, capsys):
    err = refused_translate(tmp_path, capsys, "--translator", "llamacpp", "--nearest-from", "dev")
    assert "--nearest-from" in err and "--nearest" in err
    err = refused_translate(tmp_path, capsys, "--nearest", "2", "--nearest-from", "dev")
    assert "--nearest-from" in err and "rules" in err
