"""Translation cache: hits, keys, what is (not) cached."""

from __future__ import annotations

import os
from types import SimpleNamespace

import pyarrow as pa
import pytest

from itlr_gpu.translate import translate, translate_table
from itlr_gpu.translate.cache import CachedValue, CacheKey, TranslationCache
from itlr_gpu.translate.llm import MAX_REWRITE_CHARS, VllmTranslator


class EchoLLM:
    """A fake vLLM engine: answers each prompt's request as one quoted term."""

    def __init__(self, fail_on=()):
        self.calls: list[list[str]] = []
        self.fail_on = set(fail_on)

    def generate(self, prompts, params, use_tqdm=False):
        self.calls.append(list(prompts))
        if any(any(f in p for f in self.fail_on) for p in prompts):
            raise RuntimeError("engine exploded")
        outs = []
        for p in prompts:
            request = p.rsplit("Request: ", 1)[1].split("\n")[0]
            outs.append(SimpleNamespace(outputs=[SimpleNamespace(text=f'"{request}"', finish_reason="stop")]))
        return outs


def test_get_put_roundtrip(tmp_path):
    with TranslationCache(tmp_path / "c.sqlite") as c:
        k = CacheKey("m", "p1", "logical", "cats")
        assert c.get_many([k]) == [None]
        c.put_many([(k, CachedValue('"cats"', None, None))])
        assert c.get_many([k]) == [CachedValue('"cats"', None, None)]
        assert c.get_many([CacheKey("m", "p2", "logical", "cats")]) == [None]
        assert c.get_many([CacheKey("m", "p1", "rewrite", "cats")]) == [None]
        assert c.get_many([CacheKey("m2", "p1", "logical", "cats")]) == [None]
        assert len(c) == 1
    with TranslationCache(tmp_path / "c.sqlite") as c:  # persisted
        assert c.get_many([k])[0].expr == '"cats"'


def test_rerun_translates_nothing_twice(tmp_path):
    llm = EchoLLM()
    eng = VllmTranslator(llm=llm, mode="logical")
    texts = ["cats", "dogs", "cats", "birds"]
    first = translate(texts, translator="vllm", engine=eng, cache_dir=tmp_path)
    assert [r.expr for r in first] == ['"cats"', '"dogs"', '"cats"', '"birds"']
    assert len(llm.calls) == 1 and len(llm.calls[0]) == 3  # duplicates translated once, one batch
    assert not any(r.cached for r in first)
    second = translate(texts + ["fish"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert len(llm.calls) == 2 and len(llm.calls[1]) == 1  # only the new text
    assert [r.cached for r in second] == [True, True, True, True, False]
    assert [r.expr for r in second[:4]] == [r.expr for r in first]


def test_cache_can_be_disabled(tmp_path):
    llm = EchoLLM()
    eng = VllmTranslator(llm=llm)
    translate(["a"], translator="vllm", engine=eng, cache_dir=tmp_path, cache=False)
    translate(["a"], translator="vllm", engine=eng, cache_dir=tmp_path, cache=False)
    assert len(llm.calls) == 2
    assert not (tmp_path / "translations.sqlite").exists()


def test_engine_failures_are_not_cached(tmp_path):
    llm = EchoLLM(fail_on={"boom"})
    eng = VllmTranslator(llm=llm)
    rows = translate(["ok one", "boom", "ok two"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert rows[0].expr == '"ok one"' and rows[2].expr == '"ok two"'
    assert rows[1].expr is None and "engine exploded" in rows[1].error
    with TranslationCache.open(tmp_path) as c:
        assert len(c) == 2  # the failure is not stored
    llm.fail_on.clear()
    again = translate(["boom"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert again[0].expr == '"boom"' and not again[0].cached


def test_prompt_version_changes_with_grammar_and_settings():
    a = VllmTranslator(llm=EchoLLM())
    b = VllmTranslator(llm=EchoLLM(), use_grammar=False)
    c = VllmTranslator(llm=EchoLLM(), max_tokens=10)
    assert len({a.prompt_version, b.prompt_version, c.prompt_version}) == 3
    # rewrite mode's own checks are in its key only: a change to them leaves logical rows valid
    from itlr_gpu.translate.llm import REWRITE_CHECKS_VERSION

    r = VllmTranslator(llm=EchoLLM(), mode="rewrite")
    assert r.prompt_version.endswith(f":{REWRITE_CHECKS_VERSION}")
    assert not a.prompt_version.endswith(f":{REWRITE_CHECKS_VERSION}")


def test_translate_table_with_cache(tmp_path):
    eng = VllmTranslator(llm=EchoLLM())
    t = pa.table({"query_id": ["q1", "q2"], "text": ["cats", ""]})
    out = translate_table(t, translator="vllm", engine=eng, cache_dir=tmp_path)
    rows = out.to_pylist()
    assert rows[0]["expr"] == '"cats"' and rows[0]["translator"].startswith("vllm")
    assert rows[1]["expr"] is None and rows[1]["error"] == "empty text"


class CutLLM(EchoLLM):
    """Cuts the answer to any request in ``cut`` (finish_reason "length"): a deterministic failure."""

    def __init__(self, cut=()):
        super().__init__()
        self.cut = set(cut)

    def generate(self, prompts, params, use_tqdm=False):
        outs = super().generate(prompts, params, use_tqdm)
        for p, o in zip(prompts, outs):
            if any(c in p.rsplit("Request: ", 1)[1] for c in self.cut):
                o.outputs[0].text, o.outputs[0].finish_reason = '("cut', "length"
        return outs


def test_failures_are_never_cached(tmp_path):
    # a cut-off generation is an error row; the cache keeps the success beside it, and a rerun tries the failure
    # again (once the model can do it, it is translated)
    llm = CutLLM(cut={"long"})
    eng = VllmTranslator(llm=llm, retry_truncated=False)
    first = translate(["short", "long one"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert first[0].expr == '"short"' and first[1].expr is None and "max_tokens" in first[1].error
    with TranslationCache.open(tmp_path) as c:
        assert len(c) == 1
    calls = len(llm.calls)
    again = translate(["short", "long one"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert again[0].cached and not again[1].cached and again[1].error == first[1].error
    assert len(llm.calls) == calls + 1 and all("long one" in p for p in llm.calls[-1])
    llm.cut.clear()
    third = translate(["short", "long one"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert third[0].cached and not third[1].cached and third[1].expr == '"long one"'


def test_failure_cached_under_a_success_key_is_stale(tmp_path):
    # caches written before failures had their own key held them beside the successes
    eng = VllmTranslator(llm=EchoLLM())
    key = CacheKey(eng.model_id, eng.prompt_version, "logical", "old failure")
    with TranslationCache.open(tmp_path) as c:
        c.put_many([(key, CachedValue(None, None, "generation stopped at max_tokens"))])
    rows = translate(["old failure"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert rows[0].expr == '"old failure"' and not rows[0].cached


class StreamingLLM(EchoLLM):
    """Reports each output as it finishes (as the llama.cpp engine does); ``stop_after`` outputs, then the
    job is killed."""

    streams_outputs = True

    def __init__(self, stop_after: int):
        super().__init__()
        self.stop_after = stop_after

    def generate(self, prompts, params, use_tqdm=False, on_output=None):
        outs = super().generate(prompts, params)
        for j, out in enumerate(outs[: self.stop_after]):
            on_output(j, out)
        if self.stop_after < len(outs):
            raise KeyboardInterrupt
        return outs


def test_finished_rows_are_cached_before_the_batch_ends(tmp_path):
    eng = VllmTranslator(llm=StreamingLLM(stop_after=2))
    texts = ["one", "two", "three", "four"]
    with pytest.raises(KeyboardInterrupt):
        translate(texts, translator="vllm", engine=eng, cache_dir=tmp_path)
    with TranslationCache.open(tmp_path) as c:
        assert len(c) == 2   # the two rows finished before the stop
    eng.llm = StreamingLLM(stop_after=99)   # the rerun translates only the other two
    rows = translate(texts, translator="vllm", engine=eng, cache_dir=tmp_path)
    assert [r.expr for r in rows] == ['"one"', '"two"', '"three"', '"four"']
    assert [r.cached for r in rows] == [True, True, False, False]
    assert len(eng.llm.calls) == 1 and len(eng.llm.calls[0]) == 2


def test_a_failure_left_after_its_retry_is_not_cached(tmp_path):
    """A generation cut off again on its retry is an error row, not stored: a rerun generates it (and its
    retry) again, and reads the success back."""
    llm = CutLLM(cut={"long"})
    eng = VllmTranslator(llm=llm)    # retry_truncated on: the fake cuts the retry as well
    first = translate(["long one", "short"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert first[0].expr is None and "max_tokens" in first[0].error and first[1].expr == '"short"'
    assert len(llm.calls) == 2   # the batch, then the retry of the cut one
    again = translate(["long one", "short"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert len(llm.calls) == 4 and not again[0].cached and again[0].error == first[0].error and again[1].cached


@pytest.mark.parametrize("damage", ["garbage", "truncated", "folder"])
def test_a_damaged_cache_is_one_error_naming_the_file(tmp_path, damage):
    from itlr_gpu.errors import InputError

    path = tmp_path / "translations.sqlite"
    if damage == "folder":
        path.mkdir()
    elif damage == "garbage":
        path.write_bytes(bytes(range(256)) * 20)
    else:
        with TranslationCache(path) as c:
            c.put_many([(CacheKey("m", "v", "logical", f"text {i}"), CachedValue('"x"', None, None))
                        for i in range(2000)])
        path.write_bytes(path.read_bytes()[:8000])
    eng = VllmTranslator(llm=EchoLLM())
    with pytest.raises(InputError) as e:
        translate(["cats"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert str(path) in str(e.value) and "--no-cache" in str(e.value)
    # without the cache the same request is translated
    assert translate(["cats"], translator="vllm", engine=eng, cache_dir=tmp_path, cache=False)[0].expr == '"cats"'


def _make_unwritable(folder):
    """chmod stops a normal user; root writes through it, so there the folder (or file) is made immutable instead."""
    import shutil
    import subprocess

    if os.geteuid() != 0:
        mode = folder.stat().st_mode
        folder.chmod(0o555 if folder.is_dir() else 0o444)
        return lambda: folder.chmod(mode)
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(folder)],
                                                        capture_output=True).returncode != 0:
        pytest.skip("running as root without chattr +i: no folder is read-only to this process")
    return lambda: subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_cache_in_a_read_only_folder_is_read_not_written(tmp_path, capsys):
    eng = VllmTranslator(llm=EchoLLM())
    first = translate(["cats"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert first[0].expr == '"cats"' and not first[0].cached
    restore = _make_unwritable(tmp_path)
    try:
        rows = translate(["cats", "dogs"], translator="vllm", engine=eng, cache_dir=tmp_path)
        err = capsys.readouterr().err
        assert [(r.expr, r.cached) for r in rows] == [('"cats"', True), ('"dogs"', False)]
        assert "cannot be written" in err and "new translations are not stored" in err and "--cache-dir" in err
        assert str(tmp_path / "translations.sqlite") in err and "delete" not in err
    finally:
        restore()
    again = translate(["dogs"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert not again[0].cached   # nothing was written while the folder was read-only


def test_a_read_only_cache_file_in_a_writable_folder_is_read_not_written(tmp_path, capsys):
    eng = VllmTranslator(llm=EchoLLM())
    assert translate(["cats"], translator="vllm", engine=eng, cache_dir=tmp_path)[0].expr == '"cats"'
    path = tmp_path / "translations.sqlite"
    restore = _make_unwritable(path)
    try:
        rows = translate(["cats", "dogs"], translator="vllm", engine=eng, cache_dir=tmp_path)
        err = capsys.readouterr().err
        assert [(r.expr, r.cached) for r in rows] == [('"cats"', True), ('"dogs"', False)]
        assert "cannot be written" in err and "delete" not in err
    finally:
        restore()
    assert not translate(["dogs"], translator="vllm", engine=eng, cache_dir=tmp_path)[0].cached


def test_a_cache_that_cannot_be_created_is_skipped(tmp_path, capsys):
    (tmp_path / "locked").mkdir()
    restore = _make_unwritable(tmp_path / "locked")
    try:
        eng = VllmTranslator(llm=EchoLLM())
        rows = translate(["cats"], translator="vllm", engine=eng, cache_dir=tmp_path / "locked" / "cache")
        assert rows[0].expr == '"cats"' and "cannot be written" in capsys.readouterr().err
        assert not (tmp_path / "locked" / "cache").exists()
    finally:
        restore()


def test_a_cut_off_rewrite_is_retried_with_room_for_a_whole_one(tmp_path):
    class Verbose:
        """Writes a 150-token rewrite; cut at any smaller max_tokens ("forever" is cut at any budget)."""

        def __init__(self):
            self.budgets: list[list[int]] = []

        def generate(self, prompts, params, use_tqdm=False):
            budgets = [p.max_tokens for p in params] if isinstance(params, list) else [params.max_tokens] * len(prompts)
            self.budgets.append(budgets)
            outs = []
            for p, n in zip(prompts, budgets):
                request = p.rsplit("Request: ", 1)[1].split("\n")[0]
                whole = f"{request}, " + " ".join(["reef"] * 149)
                cut = "forever" in request or n < 150
                text = " ".join(whole.split()[:n]) if cut else whole
                outs.append(SimpleNamespace(outputs=[SimpleNamespace(text=text, finish_reason="length" if cut else "stop")]))
            return outs

    llm = Verbose()
    eng = VllmTranslator(llm=llm, mode="rewrite", max_tokens=128)
    rows = translate(["coral reefs", "goes on forever"], translator="vllm", mode="rewrite", engine=eng, cache=False)
    assert llm.budgets == [[128, 128], [MAX_REWRITE_CHARS, MAX_REWRITE_CHARS]]   # the batch, then the retry
    assert rows[0].error is None and rows[0].rewrite.startswith("coral reefs, reef")
    assert rows[1].expr is None and "max_tokens" in rows[1].error
    # without the retry (or with no room for a longer rewrite) the cut row is an error row at once
    llm2 = Verbose()
    rows = translate(["coral reefs"], translator="vllm", mode="rewrite", cache=False,
                     engine=VllmTranslator(llm=llm2, mode="rewrite", max_tokens=128, retry_truncated=False))
    assert llm2.budgets == [[128]] and "max_tokens" in rows[0].error


def test_a_cache_file_this_user_may_not_read_is_one_error(tmp_path, monkeypatch):
    """SQLite's answer for a file the user may not open (mode 000, another user's 0600 file): one error naming the
    file, not a traceback (root reads any file, so SQLite's refusal is simulated)."""
    import sqlite3

    from itlr_gpu.errors import InputError
    from itlr_gpu.translate import cache as cache_module

    TranslationCache(tmp_path / "translations.sqlite").close()

    def refuse(*args, **kwargs):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(cache_module.sqlite3, "connect", refuse)
    with pytest.raises(InputError, match="cannot be opened .*--no-cache"):
        TranslationCache(tmp_path / "translations.sqlite")


def test_a_cache_another_process_holds_past_the_timeout_keeps_the_translations(tmp_path, capsys, monkeypatch):
    """A write that times out on another process's lock: the rows are returned as translated, one note says they
    were not stored, and the rest of the run does not wait on the lock again."""
    import sqlite3

    from itlr_gpu.translate import cache as cache_module

    monkeypatch.setattr(cache_module, "LOCK_TIMEOUT_S", 0.2)
    path = tmp_path / "translations.sqlite"
    cache = cache_module.TranslationCache(path)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        key = cache_module.CacheKey("m", "p", "logical", "a but not b")
        value = cache_module.CachedValue('("a" AND NOT "b")', None, None)
        assert cache.put_many([(key, value)]) == 0
        assert "cannot be written (another process has held it for over 0.2 s): this run's new translations are " \
               "not stored" in capsys.readouterr().err
        assert cache.read_only and cache.put_many([(key, value)]) == 0 and capsys.readouterr().err == ""
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert cache.get_many([key]) == [None]
    cache.close()
