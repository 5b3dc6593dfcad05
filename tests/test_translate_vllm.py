"""vLLM translator: prompt building, batching and error rows with a fake engine, and a
real grammar-constrained generation on the CPU with SmolLM2-135M-Instruct.

The real test runs where vLLM is importable (the separate vLLM virtualenv made by
``scripts/install_vllm_cpu.sh``)::

    .venv-vllm/bin/python -m pytest -q tests/test_translate_vllm.py tests/test_translate_grammar.py
"""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType, SimpleNamespace

import pytest

from itlr_gpu.query import MAX_QUERY_CHARS, canonical, parse
from itlr_gpu.translate import grammar as g
from itlr_gpu.translate import translate
from itlr_gpu.translate.llm import (
    CPU_KV_CACHE_BYTES, FEW_SHOT, VllmTranslator, build_messages, build_prompt, cpu_kv_cache_bytes, interpret,
    make_sampling_params,
)


def out(text, finish="stop"):
    return SimpleNamespace(outputs=[SimpleNamespace(text=text, finish_reason=finish)])


class ScriptedLLM:
    """Answers prompts from a dict keyed by the request (``Request: ...`` line)."""

    def __init__(self, answers, raise_when=None):
        self.answers = answers
        self.raise_when = raise_when
        self.calls = []

    def generate(self, prompts, params, use_tqdm=False):
        self.calls.append((list(prompts), params))
        reqs = [p.rsplit("Request: ", 1)[1].split("\n")[0] for p in prompts]
        if self.raise_when and any(self.raise_when in r for r in reqs):
            raise ValueError("bad request in batch")
        return [out(*self.answers[r]) if isinstance(self.answers[r], tuple) else out(self.answers[r]) for r in reqs]


# ----------------------------------------------------------------------------- fake engine


def test_few_shot_examples_are_canonical_and_in_the_grammar():
    for _, expr in FEW_SHOT:
        assert canonical(parse(expr)) == expr
        assert g.matches(g.QUERY_GRAMMAR, expr)


def test_prompt_contains_examples_and_request():
    msgs = build_messages("cats  but\nnot dogs")
    assert msgs[0]["role"] == "system" and msgs[-1] == {"role": "user", "content": "cats but not dogs"}
    assert len(msgs) == 2 + 2 * len(FEW_SHOT)
    p = build_prompt("cats but not dogs")
    assert p.endswith("Request: cats but not dogs\nQuery:")


def test_batch_is_one_generate_call_with_the_grammar():
    answers = {"a": '"a" AND NOT "b"', "c": '("c" OR "d")', "e": '"e"'}
    llm = ScriptedLLM(answers)
    # repair="none": the scripted answers are not translations of their one-letter requests
    rows = translate(["a", "c", "e"], translator="vllm", llm=llm, cache=False, repair="none")
    assert [r.expr for r in rows] == ['("a" AND NOT "b")', '("c" OR "d")', '"e"']
    assert len(llm.calls) == 1 and len(llm.calls[0][0]) == 3
    # each request has its own grammar, whose terms are the request's phrases
    params = llm.calls[0][1]
    assert isinstance(params, list) and len(params) == 3
    assert [_grammar_text(p) for p in params] == [g.to_gbnf(g.span_query_grammar(t)) for t in ("a", "c", "e")]
    # terms="free": one grammar for the whole batch
    llm = ScriptedLLM(answers)
    eng = VllmTranslator(llm=llm, terms="free")
    translate(["a", "c", "e"], translator="vllm", engine=eng, cache=False, repair="none")
    assert _grammar_text(llm.calls[0][1]) == g.gbnf("logical")
    assert eng.prompt_version != VllmTranslator(llm=llm).prompt_version  # the cache tells them apart
    with pytest.raises(ValueError, match="terms"):
        VllmTranslator(llm=llm, terms="words")


def _grammar_text(params) -> str:
    text = getattr(params, "grammar", None)
    if text is None:  # real vLLM SamplingParams
        so = getattr(params, "structured_outputs", None) or getattr(params, "guided_decoding", None)
        text = so.grammar
    return text


def test_bad_generations_are_error_rows():
    answers = {
        "empty": "   ",
        "unparsable": '"a" AND AND',
        "truncated": ('"a very long', "length"),
        "fine": '"fine"',
        "toolong": '"' + "x" * (MAX_QUERY_CHARS + 1) + '"',
    }
    rows = translate(list(answers) + [""], translator="vllm", llm=ScriptedLLM(answers), cache=False)
    by = {r.text: r for r in rows}
    assert by["fine"].expr == '"fine"' and by["fine"].error is None
    assert "empty generation" in by["empty"].error
    assert "does not parse" in by["unparsable"].error
    assert "max_tokens" in by["truncated"].error
    assert "characters long" in by["toolong"].error
    assert by[""].error == "empty text"
    assert all(r.expr is None for r in rows if r.text != "fine")


def test_engine_exception_splits_the_batch():
    answers = {f"q{i}": f'"q{i}"' for i in range(8)} | {"poison": '"x"'}
    llm = ScriptedLLM(answers, raise_when="poison")
    texts = [f"q{i}" for i in range(4)] + ["poison"] + [f"q{i}" for i in range(4, 8)]
    rows = translate(texts, translator="vllm", llm=llm, cache=False)
    assert [r.expr for r in rows if r.text != "poison"] == [f'"q{i}"' for i in range(8)]
    (bad,) = [r for r in rows if r.text == "poison"]
    assert bad.expr is None and "bad request" in bad.error


def test_rewrite_mode_makes_one_term():
    llm = ScriptedLLM({"cats": "Cats, their behaviour and \"care\" at home."})
    eng = VllmTranslator(llm=llm, mode="rewrite")
    (row,) = translate(["cats"], translator="vllm", mode="rewrite", engine=eng, cache=False)
    assert row.rewrite == 'Cats, their behaviour and "care" at home.'
    assert row.expr == '"Cats, their behaviour and \\"care\\" at home."'
    assert parse(row.expr).text == row.rewrite
    assert llm.calls[0][1] is not None


def test_interpret_never_raises():
    for raw, fin in [(None, None), ("", "stop"), ("((((", "stop"), ("NOT " * 100 + '"a"', "stop"), ('"\x00"', "stop")]:
        r = interpret(raw, fin)
        assert (r.expr is None) != (r.error is None)


@pytest.mark.parametrize("raw, junk", [('("(" AND "(")', "("), ('NOT "NOT"', "NOT"), ('"cats" OR "..."', "..."),
                                       ('"cats" AND " - "', " - ")])
def test_a_generated_term_that_names_nothing_is_an_error_row(raw, junk):
    """A model that copies a request of "(" or "NOT" into its form: terms of punctuation only, or an operator word
    quoted, are an error row (the batch's other rows are kept), never a query that searches for nothing."""
    r = interpret(raw, "stop")
    assert r.expr is None and r.error.startswith(f"generation has a term that names nothing: {junk!r}")
    for fine in ('"C++" OR "C#"', '"🐍"', '"AND gates"', '"3.5"'):
        assert interpret(fine, "stop").expr == canonical(parse(fine))


def test_sampling_params_without_grammar():
    p = make_sampling_params(None, max_tokens=5)
    assert getattr(p, "max_tokens") == 5


@pytest.fixture
def engine_kwargs(monkeypatch, tmp_path):
    """Starts VllmTranslator on a CPU against a stand-in ``vllm`` module; returns the ``vllm.LLM`` keywords."""
    seen = {}

    class FakeLLM:
        def __init__(self, **kw):
            seen.update(kw)

        def get_tokenizer(self):
            return None

    fake = ModuleType("vllm")
    fake.LLM = FakeLLM
    monkeypatch.setitem(sys.modules, "vllm", fake)
    monkeypatch.setattr("itlr_gpu.translate.models.resolve_model", lambda model, cache_dir=None, convert=True: tmp_path)
    monkeypatch.setattr("itlr_gpu.translate.llm._cpu_only", lambda: True)
    monkeypatch.delenv("VLLM_CPU_KVCACHE_SPACE", raising=False)

    def start(**opts):
        seen.clear()
        VllmTranslator(model="any", **opts)
        return dict(seen)

    return start


def test_cpu_kv_cache_is_a_fixed_size_not_a_fraction_of_memory(engine_kwargs):
    # vLLM's CPU reading of gpu_memory_utilization (a fraction of all memory minus the process's RSS) left
    # 0.08 GiB in a test process: the default is an explicit size instead
    kw = engine_kwargs()
    assert "gpu_memory_utilization" not in kw
    assert 0 < kw["kv_cache_memory_bytes"] <= CPU_KV_CACHE_BYTES
    assert kw["dtype"] == "float32" and kw["enforce_eager"] is True


def test_cpu_kv_cache_user_settings_win(engine_kwargs, monkeypatch):
    kw = engine_kwargs(gpu_memory_utilization=0.3)
    assert kw["gpu_memory_utilization"] == 0.3 and "kv_cache_memory_bytes" not in kw
    assert engine_kwargs(engine_kwargs={"kv_cache_memory_bytes": 123})["kv_cache_memory_bytes"] == 123
    monkeypatch.setenv("VLLM_CPU_KVCACHE_SPACE", "1")  # vLLM's own setting, read by vLLM
    assert "kv_cache_memory_bytes" not in engine_kwargs()


def test_cpu_kv_cache_bytes_leaves_half_the_free_memory():
    assert cpu_kv_cache_bytes(available=64 << 30) == CPU_KV_CACHE_BYTES
    assert cpu_kv_cache_bytes(available=1 << 30) == 1 << 29


# ----------------------------------------------------------------------------- real vLLM on CPU


@pytest.fixture(scope="module")
def smollm2_engine():
    if importlib.util.find_spec("vllm") is None:
        pytest.skip("vllm is not importable here: run in the vLLM venv (bash scripts/install_vllm_cpu.sh)")
    eng = VllmTranslator(model=None, mode="logical", max_tokens=48)  # default window: room for the shared examples
    calls = []
    real_generate = eng.llm.generate

    def counting(prompts, params, **kw):
        calls.append(len(prompts))
        return real_generate(prompts, params, **kw)

    eng.llm.generate = counting
    eng.calls = calls
    return eng


def test_real_vllm_generation_with_grammar(smollm2_engine, tmp_path):
    texts = [
        "vitamin D benefits but not bone health",
        "papers on black holes or neutron stars",
        "find documents about sourdough bread",
        "either tennis or golf, excluding injuries",
    ]
    rows = translate(texts, translator="vllm", engine=smollm2_engine, cache_dir=tmp_path)
    first = list(smollm2_engine.calls)
    # one generate call for the whole batch, plus at most one for the rows that ran out of tokens (retried
    # together under a finite grammar)
    assert first[0] == 4 and len(first) <= 2 and sum(first[1:]) <= 4, first
    for r in rows:
        assert r.translator.startswith("vllm:smollm2")
        if r.error is None:
            assert canonical(parse(r.expr)) == r.expr
        else:  # with the grammar, only running out of tokens can fail
            assert "max_tokens" in r.error, r.error
    assert sum(r.error is None for r in rows) >= 2, rows
    # terms are words of the request: a term may start with a letter (a character-class escape once
    # excluded letters and digits from a term's first character, and every term began with punctuation)
    from itlr_gpu.query.ast import terms as term_texts

    words = [t for r in rows if r.error is None for t in term_texts(parse(r.expr))]
    assert sum(t[:1].isalnum() for t in words) >= len(words) / 2, words
    # second run: all from the cache, no generation
    again = translate(texts, translator="vllm", engine=smollm2_engine, cache_dir=tmp_path)
    assert [r.cached for r in again] == [r.error is None for r in rows]  # failures are never cached
    if all(r.error is None for r in rows):
        assert smollm2_engine.calls == first  # no generation at all


def test_real_vllm_nearest_examples_shared_by_groups(smollm2_engine, monkeypatch):
    """--nearest-group on the real engine: a group's members go in one call, one after the other, with the same
    prompt up to the request (vLLM's prefix cache shares that part), and every finished row parses."""
    texts = ["tea but not coffee", "either tennis or golf", "cats but not dogs", "either jazz or opera"]
    llm, sent = smollm2_engine.llm, []
    real = llm.generate

    def spy(prompts, params, **kw):
        sent.append(list(prompts))
        return real(prompts, params, **kw)

    monkeypatch.setattr(llm, "generate", spy)
    eng = VllmTranslator(llm=llm, model_id=smollm2_engine.model_id, examples=0, nearest=2, nearest_group=2,
                         max_tokens=48)
    rows = translate(texts, translator="vllm", engine=eng, cache=False, repair="none")
    first = sent[0]
    own = [max(texts, key=p.rfind) for p in first]   # the request: the text that comes last in its prompt
    assert len(first) == 4 and sorted(own) == sorted(texts)
    for a in (0, 2):
        assert {own[a], own[a + 1]} in ({"tea but not coffee", "cats but not dogs"},
                                        {"either tennis or golf", "either jazz or opera"})
        assert first[a][:first[a].rindex(own[a])] == first[a + 1][:first[a + 1].rindex(own[a + 1])]
    assert first[0][:first[0].rindex(own[0])] != first[2][:first[2].rindex(own[2])]
    for r in rows:
        if r.error is None:
            assert canonical(parse(r.expr)) == r.expr
        else:
            assert "max_tokens" in r.error, r.error


def test_real_vllm_rewrite_mode(smollm2_engine):
    eng = VllmTranslator(llm=smollm2_engine.llm, mode="rewrite", max_tokens=40)
    (row,) = translate(["coral reef restoration"], translator="vllm", mode="rewrite", engine=eng, cache=False)
    if row.error is None:
        assert parse(row.expr).text == row.rewrite and row.rewrite
    else:
        assert "max_tokens" in row.error


class CutOnce:
    """A fake engine whose first generation is cut at max_tokens and whose retry answers ``then``; it records
    the sampling parameters of each call.  ``words``: a tokenizer that counts words."""

    def __init__(self, cut: str, then: str, words: bool = False):
        self.cut, self.then, self.params = cut, then, []
        if words:
            self.get_tokenizer = lambda: SimpleNamespace(encode=lambda s: s.split(), chat_template=None)

    def generate(self, prompts, params, use_tqdm=False):
        self.params.append(params)
        if len(self.params) == 1:
            return [out(self.cut, "length") for _ in prompts]
        return [out(self.then) for _ in prompts]


def test_truncated_generation_is_retried_with_a_finite_grammar():
    llm = CutOnce('(("a" AND "b" AND "c', '("a" AND "b")')
    # the scripted answer drops the request's word: repair="none" keeps the engine's own output under test
    (row,) = translate(["abc"], translator="vllm", llm=llm, cache=False, repair="none")
    assert row.expr == '("a" AND "b")' and row.error is None
    assert len(llm.params) == 2
    (second,) = llm.params[1]
    text = _grammar_text(second)
    assert "or_expr_1" in text and "span0" in text  # the bounded grammar, terms still the request's phrases
    assert second.max_tokens == g.max_length(g.span_query_grammar("abc", g.bounded_query_grammar(1, 2, 32), 1))


def test_a_long_requests_retry_fits_its_context():
    """A request of thousands of characters cut off at max_tokens is retried under a grammar whose longest
    string fits the room its prompt leaves (one copied phrase per term), not left an error row."""
    text = " ".join(f"w{i}" for i in range(700))  # 700 "tokens", 4,590 characters
    llm = CutOnce('("w0 w1', '"w0 w1"', words=True)
    eng = VllmTranslator(llm=llm, max_model_len=6000, examples=0)
    (row,) = translate([text], translator="vllm", engine=eng, cache=False, repair="none")
    assert row.expr == '"w0 w1"' and row.error is None
    (second,) = llm.params[1]
    assert second.max_tokens <= 6000 - len(eng.prompt(text).split())


def test_bounded_grammar_is_finite_and_parses():
    import random

    b = g.bounded_query_grammar(1, 2, 8)
    n = g.max_length(b)
    rng = random.Random(3)
    for _ in range(300):
        s = g.sample(b, rng)
        assert len(s) <= n and g.matches(g.QUERY_GRAMMAR, s)
        parse(s)
    with pytest.raises(ValueError):
        g.max_length(g.QUERY_GRAMMAR)


def test_context_length_read_from_the_model_config(tmp_path):
    import json

    from itlr_gpu.translate.llm import context_length

    (tmp_path / "config.json").write_text(json.dumps({"max_position_embeddings": 4096}))
    assert context_length(tmp_path) == 4096
    (tmp_path / "config.json").write_text(json.dumps({"text_config": {"n_positions": 1024}}))
    assert context_length(tmp_path) == 1024
    (tmp_path / "config.json").write_text("{}")
    assert context_length(tmp_path) is None
    (tmp_path / "config.json").write_text("not json")
    assert context_length(tmp_path) is None
    assert context_length(tmp_path / "missing") is None


@pytest.mark.skipif(importlib.util.find_spec("vllm") is not None, reason="vLLM is installed here")
def test_without_vllm_the_vllm_translator_is_one_error_line(tmp_path, capsys):
    from itlr_gpu.cli import main

    q = tmp_path / "q.jsonl"
    q.write_text('{"_id": "a", "text": "cats but not dogs"}\n')
    assert main(["translate", str(q), "-o", str(tmp_path / "t.arrow"), "--translator", "vllm", "--no-cache"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("itlr: error: --translator vllm: vLLM is not installed") and err.count("\n") == 1
    assert "Traceback" not in err and not (tmp_path / "t.arrow").exists()


def test_a_gguf_is_not_converted_where_vllm_is_missing(tmp_path, monkeypatch):
    # converting a GGUF for vLLM takes minutes and needs the gguf package: without vLLM it is vLLM's own error,
    # and a file that is no GGUF is refused before anything
    from itlr_gpu.errors import InputError
    from itlr_gpu.translate import llm as llm_module
    from itlr_gpu.translate.models import resolve_model

    good, bad = tmp_path / "m.gguf", tmp_path / "garbage.gguf"
    good.write_bytes(b"GGUF" + b"\0" * 64)
    bad.write_bytes(b"\x89PNG" + b"\0" * 64)
    monkeypatch.setattr(llm_module, "_vllm_installed", lambda: False)
    with pytest.raises(InputError, match="vLLM is not installed"):
        VllmTranslator(model=str(good), cache_dir=tmp_path, lazy=True)._identify()
    with pytest.raises(InputError, match="not a GGUF file"):
        resolve_model(str(bad), cache_dir=tmp_path, convert=False)
    assert not (tmp_path / "models").exists() or not any((tmp_path / "models").iterdir())


def test_a_rewrite_unrelated_to_its_request_is_an_error_row():
    from itlr_gpu.translate.llm import REWRITE_SHOT, interpret

    long_junk = "x" * 20000
    assert interpret("0", "stop", "rewrite", long_junk).error.startswith("rewrite has no words")
    assert interpret(REWRITE_SHOT[0][1], "stop", "rewrite", long_junk).error.startswith(
        "rewrite copies an example of the prompt")
    # a near copy (one word changed or dropped) is a copy too
    words = REWRITE_SHOT[0][1].split()
    near = " ".join(words[:-1]) if len(words) > 6 else REWRITE_SHOT[0][1] + " overall"
    assert interpret(near, "stop", "rewrite", long_junk + " about vitamins").error.startswith(
        "rewrite copies an example of the prompt")
    # ... but not for a request on the example's own topic: a rewrite much like the example's is a good one there
    assert interpret("Honey bee biology, colonies, pollination and beekeeping, not wasps or hornets.", "stop",
                     "rewrite", "beekeeping and honey bee colonies, no wasps").error is None
    # ... and one shared word is not the topic: an exact copy for "papers about cats and dogs" is refused
    for request in ("papers about cats and dogs", "papers on the biology of ants"):
        assert interpret(REWRITE_SHOT[0][1], "stop", "rewrite", request).error.startswith(
            "rewrite copies an example of the prompt")
    assert interpret(REWRITE_SHOT[1][1], "stop", "rewrite", "does caffeine raise cardiovascular risk").error is None
    assert interpret("Stamp collecting and philately clubs.", "stop", "rewrite",
                     "vitamin D benefits but not bone health").error.startswith("rewrite shares no word")
    # the example's own request, a rewrite sharing a word, a short request spelled out: kept
    assert interpret(REWRITE_SHOT[0][1], "stop", "rewrite", REWRITE_SHOT[0][0]).error is None
    assert interpret("Vitamin D and immunity, not bone density.", "stop", "rewrite",
                     "vitamin D benefits but not bone health").error is None
    assert interpret("Large language models and their uses.", "stop", "rewrite", "LLMs").error is None


def test_a_model_path_that_is_no_folder_says_what_it_is(tmp_path):
    from itlr_gpu.errors import InputError
    from itlr_gpu.translate.models import resolve_model

    (tmp_path / "q.jsonl").write_text("{}\n")
    (tmp_path / "empty").mkdir()
    for name, what in (("q.jsonl", "is a file, not a model folder (nor a .gguf file)"),
                       ("empty", "is a folder without config.json"), ("missing", "model folder not found")):
        with pytest.raises(InputError, match=re.escape(f"{name}: {what}")):
            resolve_model(str(tmp_path / name), cache_dir=tmp_path, convert=False)
