"""llama.cpp translator backend: quantised GGUF models, batched grammar-constrained decoding on the CPU.

Why a second backend: on a 2-core CPU without AVX-512 / native bf16, vLLM's CPU build runs
a dequantised model (fp32: 4x the bytes of Q4_K_M per generated token), and a 1.5B model
stays near 0.3 requests/s (benchmarks/results/translate.md).  llama.cpp runs the GGUF's
Q4_K_M weights directly with AVX2 kernels.

:class:`BatchDecoder` is the decoding loop, written against a small :class:`Backend`
protocol so that tests can drive it with a fake model:

* **shared prefix once**: the longest common token prefix of the batch's prompts (the
  system text and few-shot examples) is decoded once into sequence 0 and kept between
  calls; each request's sequence gets it by ``seq_cp`` (a metadata copy in llama.cpp's
  unified KV cache), so only the request's own tokens are prefilled; the prompt's head
  (what every request shares) is also kept on disk (:class:`PrefixStore`), so that the next
  process reads its cells instead of decoding them;
* **continuous batching**: up to ``n_seq`` sequences decode together, one token each per
  ``llama_decode`` (a matrix-matrix product over the weights instead of one
  matrix-vector product per request); a finished sequence's slot takes the next prompt;
* **a grammar compiled once per call** and cloned per sequence (each sequence has its own
  grammar state), or one per request where each has its own (terms copied from the
  request: :func:`~.grammar.span_query_grammar`); the greedy token is checked against the grammar alone and the whole
  vocabulary is masked only when that token is rejected.

Decoding is greedy (``temperature`` must be 0).  :class:`LlamaCppEngine` implements the
backend with llama-cpp-python's C bindings and exposes the ``generate(prompts, params)``
interface of vLLM's ``LLM`` that :class:`~.llm.VllmTranslator` drives, so
:class:`LlamaCppTranslator` shares its prompt, error rows, batch splitting and retry logic.
Install: ``bash scripts/install_llamacpp.sh`` in the repository (builds llama.cpp from source for this CPU:
minutes; a plain ``pip install -e '.[llamacpp]'`` crashes on CPUs with AMX when GCC builds it).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, ClassVar, Protocol

import numpy as np

from ..errors import InputError
from .grammar import gbnf_for_llama_cpp
from .llm import VllmTranslator, _PlainParams, sampled_digest

__all__ = ["Backend", "BatchDecoder", "LlamaCppEngine", "LlamaCppTranslator", "resolve_gguf"]


class Backend(Protocol):
    """What :class:`BatchDecoder` needs from a model (sequence ids are small ints; 0 holds the prefix)."""

    n_ctx: int
    n_batch: int

    def decode(self, tokens: Sequence[int], positions: Sequence[int], seqs: Sequence[int],
               want_logits: Sequence[bool]) -> list[np.ndarray]:
        """Run one batch; return the logits (float32, vocabulary-sized) of the flagged entries, in order."""

    def seq_cp(self, src: int, dst: int, p0: int, p1: int) -> None: ...

    def seq_rm(self, seq: int, p0: int, p1: int) -> None: ...

    def grammar(self, text: str) -> Any:
        """A compiled grammar (once per distinct grammar text in a call)."""

    def grammar_clone(self, g: Any) -> Any: ...

    def grammar_free(self, g: Any) -> None: ...

    def grammar_allows(self, g: Any, token: int) -> bool: ...

    def grammar_best(self, g: Any, logits: np.ndarray) -> int:
        """The highest-logit token the grammar allows."""

    def grammar_accept(self, g: Any, token: int) -> None: ...

    def is_eog(self, token: int) -> bool: ...

    def piece(self, token: int) -> bytes: ...

    # Optional: a backend that keeps a prompt head's KV cells on disk (:class:`PrefixStore`) has
    # ``load_prefix(tokens) -> bool`` (into the empty sequence 0) and ``save_prefix(tokens)`` (sequence 0
    # holds exactly ``tokens``).


@dataclass
class _Slot:
    index: int
    seq: int
    feed: list[int]
    pos: int
    grammar: Any
    reserved: int
    out: list[int] = field(default_factory=list)


def common_prefix(seqs: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix of ``seqs``."""
    if not seqs:
        return 0
    n = min(len(s) for s in seqs)
    first = seqs[0]
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in seqs[1:]):
            return i
    return n


MAX_PARALLEL = 254   # llama.cpp's LLAMA_MAX_SEQ (256) less the prompt head's sequence and a group's
MIN_GROUP_SHARE = 16
"""Consecutive prompts that share at least this many tokens beyond the batch's common prefix (a group's nearest
examples) have their shared part decoded once, into a group sequence they copy from."""


def shared_runs(prompts: Sequence[Sequence[int]], plen: int) -> list[tuple[int, int, int]]:
    """``(start, end, shared)`` for each run of consecutive prompts ``start..end-1``: ``shared`` tokens common to
    all of them (at least ``plen + MIN_GROUP_SHARE`` for a run of two or more, each member keeping one token
    of its own; ``plen`` for a prompt alone)."""
    runs: list[tuple[int, int, int]] = []
    start, shared = 0, None
    for i in range(len(prompts)):
        nxt = None
        if i + 1 < len(prompts):
            a, b = prompts[i], prompts[i + 1]
            nxt = min(common_prefix([a, b]), len(a) - 1, len(b) - 1)
            if nxt < plen + MIN_GROUP_SHARE:
                nxt = None
        if nxt is None:
            runs.append((start, i + 1, shared if shared is not None else plen))
            start, shared = i + 1, None
        else:
            shared = nxt if shared is None else min(shared, nxt)
    return runs


class BatchDecoder:
    """Greedy, grammar-constrained, continuously batched generation over a :class:`Backend`."""

    def __init__(self, backend: Backend, n_seq: int = 16, candidates: int = 32):
        if n_seq < 1 or candidates < 1:
            raise ValueError("n_seq and candidates must be >= 1")
        self.b = backend
        self.n_seq = n_seq
        self.candidates = candidates
        self.prefix: list[int] = []  # what sequence 0 holds
        self.show_progress = False
        self.stats = {"decode_calls": 0, "prefix_tokens": 0, "prefix_loaded": 0, "group_tokens": 0,
                      "prompt_tokens": 0, "generated": 0, "rejected": 0, "masked": 0}

    def _decode(self, entries: list[tuple[int, int, int, bool]],
                progress: Callable[[int], None] | None = None) -> list[np.ndarray]:
        """entries: (token, pos, seq, logits?) in chunks of n_batch; logits of the flagged ones.
        ``progress(n)`` after each chunk of n tokens."""
        out: list[np.ndarray] = []
        for s in range(0, len(entries), self.b.n_batch):
            chunk = entries[s:s + self.b.n_batch]
            self.stats["decode_calls"] += 1
            out += self.b.decode([e[0] for e in chunk], [e[1] for e in chunk], [e[2] for e in chunk],
                                 [e[3] for e in chunk])
            if progress is not None:
                progress(len(chunk))
        return out

    def _decode_prefix(self, tokens: Sequence[int], start: int) -> None:
        """Sequence 0's tokens from position ``start``; a progress bar when it takes several calls and
        ``show_progress`` is set (the first call of a run decodes the shared prompt: ~3,000 tokens)."""
        if not tokens:
            return
        self.stats["prefix_tokens"] += len(tokens)
        entries = [(t, start + i, 0, False) for i, t in enumerate(tokens)]
        if not self.show_progress or len(tokens) <= self.b.n_batch:
            self._decode(entries)
            return
        from tqdm.auto import tqdm

        with tqdm(total=len(tokens), unit="tok", desc="shared prompt") as bar:
            self._decode(entries, bar.update)

    def _ensure_prefix(self, prefix: list[int], head: Sequence[int] = ()) -> None:
        """Sequence 0 holds ``prefix`` afterwards.  ``head``: the part of the prompt every request of
        this prompt shares (system text, examples); when ``prefix`` starts with it and the backend keeps
        heads on disk, a fresh process loads it instead of decoding it, and saves it once decoded."""
        keep = common_prefix([self.prefix, prefix])
        if keep < len(self.prefix):
            self.b.seq_rm(0, keep, -1)
        h = len(head)
        if (h and keep < h <= len(prefix) and list(prefix[:h]) == list(head)
                and hasattr(self.b, "load_prefix")):
            if keep == 0 and self.b.load_prefix(head):
                self.stats["prefix_loaded"] += h
            else:
                self._decode_prefix(head[keep:], keep)
                self.b.save_prefix(head)
            keep = h
        self._decode_prefix(prefix[keep:], keep)
        self.prefix = list(prefix)

    def generate(self, prompts: Sequence[Sequence[int]], grammar: str | None | Sequence[str | None],
                 max_tokens: int | Sequence[int],
                 on_done: Callable[[int, tuple[list[int], str]], None] | None = None,
                 head: Sequence[int] = ()) -> list[tuple[list[int], str]]:
        """(generated tokens, finish reason ``stop`` | ``length``) per prompt, in order; ``on_done(i, result)``
        as prompt i finishes.  ``head``: see :meth:`_ensure_prefix`.

        ``grammar`` and ``max_tokens``: one for every prompt, or a sequence with each prompt's
        own (a grammar shared by several prompts is compiled once and cloned).  A prompt must
        leave room for its ``max_tokens`` within ``n_ctx`` beside the prefix (ValueError
        otherwise; callers check lengths first).

        Consecutive prompts that share more than all prompts do (:func:`shared_runs`: a group's examples) have
        that part decoded once, into sequence ``n_seq + 1``, which each member copies as it starts."""
        n = len(prompts)
        results: list[tuple[list[int], str] | None] = [None] * n
        if n == 0:
            return []
        grammars = list(grammar) if isinstance(grammar, (list, tuple)) else [grammar] * n
        limits = list(max_tokens) if isinstance(max_tokens, (list, tuple)) else [max_tokens] * n
        if len(grammars) != n or len(limits) != n:
            raise ValueError(f"{n} prompts but {len(grammars)} grammars and {len(limits)} max_tokens")
        # Each prompt keeps >= 1 own token: its last prompt token gives the first logits.
        plen = min(common_prefix(prompts), min(len(p) for p in prompts) - 1)
        if plen < 0:
            raise ValueError("empty prompt")
        for p, m in zip(prompts, limits):
            if plen + (len(p) - plen) + m > self.b.n_ctx:
                raise ValueError(f"prompt of {len(p)} tokens + {m} does not fit n_ctx {self.b.n_ctx}")
        self._ensure_prefix(list(prompts[0][:plen]), head)
        group_seq = self.n_seq + 1
        run_of, share = [0] * n, [plen] * n
        runs = shared_runs(prompts, plen)
        for r, (a, b, shared) in enumerate(runs):
            for i in range(a, b):
                run_of[i], share[i] = r, shared
        decoded: set[int] = set()        # runs whose shared part has been decoded into the group sequence
        run_live: dict[int, int] = {}    # run -> members admitted and not yet finished (its cells still held)
        started_all: set[int] = set()    # runs whose last member has been admitted
        uses: dict[str, int] = {}
        for t in grammars:
            if t is not None:
                uses[t] = uses.get(t, 0) + 1
        shared: dict[str, Any] = {}  # compiled grammars used by more than one prompt: cloned per sequence
        queue = list(range(n))
        slots: dict[int, _Slot] = {}
        used = plen  # KV cells: the shared prefix + each active slot's own reservation
        try:
            while queue or slots:
                # admit prompts while sequences and KV cells are free
                while queue and len(slots) < self.n_seq:
                    i = queue[0]
                    r, start = run_of[i], share[i]
                    need = len(prompts[i]) - start + limits[i]
                    first = start > plen and r not in decoded   # its run's shared part is not decoded yet
                    if slots and used + need + (start - plen if first else 0) > self.b.n_ctx:
                        break
                    queue.pop(0)
                    if first:   # the previous run's group sequence was dropped as its last member started
                        if plen:
                            self.b.seq_cp(0, group_seq, 0, plen)
                        self._decode([(t, plen + k, group_seq, False) for k, t in enumerate(prompts[i][plen:start])])
                        self.stats["group_tokens"] += start - plen
                        decoded.add(r)
                        run_live[r] = 0
                        used += start - plen
                    seq = next(s for s in range(1, self.n_seq + 1) if s not in slots)
                    if start > plen:
                        self.b.seq_cp(group_seq, seq, 0, start)
                        run_live[r] += 1
                        if i == runs[r][1] - 1:   # its last member: the members' copies keep the cells
                            self.b.seq_rm(group_seq, -1, -1)
                            started_all.add(r)
                    elif plen:
                        self.b.seq_cp(0, seq, 0, plen)
                    g = self._grammar(grammars[i], uses, shared)
                    slots[seq] = _Slot(i, seq, list(prompts[i][start:]), start, g, need)
                    used += need
                    self.stats["prompt_tokens"] += len(prompts[i]) - start
                # one decode: pending prompt tokens (up to n_batch in all) and one token per generating slot
                entries: list[tuple[int, int, int, bool]] = []
                asked: list[_Slot] = []
                for slot in slots.values():
                    if len(entries) >= self.b.n_batch:
                        break
                    room = self.b.n_batch - len(entries)
                    take = slot.feed[:room]
                    for k, t in enumerate(take):
                        last = k == len(slot.feed) - 1
                        entries.append((t, slot.pos + k, slot.seq, last))
                        if last:
                            asked.append(slot)
                    slot.pos += len(take)
                    del slot.feed[:len(take)]
                logits = self._decode(entries) if len(entries) <= self.b.n_batch else []
                for slot, row in zip(asked, logits):
                    tok = self._pick(slot.grammar, row)
                    done = None
                    if self.b.is_eog(tok):
                        done = "stop"
                    else:
                        slot.out.append(tok)
                        self.stats["generated"] += 1
                        if slot.grammar is not None:
                            self.b.grammar_accept(slot.grammar, tok)
                        if len(slot.out) >= limits[slot.index]:
                            done = "length"
                        else:
                            slot.feed = [tok]
                    if done:
                        results[slot.index] = (slot.out, done)
                        self._release(slot)
                        del slots[slot.seq]
                        used -= slot.reserved
                        r = run_of[slot.index]
                        if r in run_live:
                            run_live[r] -= 1
                            if run_live[r] == 0 and r in started_all:   # no member holds the shared cells
                                used -= runs[r][2] - plen
                                del run_live[r]
                        if on_done is not None:
                            on_done(slot.index, results[slot.index])
        finally:
            for slot in slots.values():
                self._release(slot)
            if decoded:
                self.b.seq_rm(group_seq, -1, -1)
            for g in shared.values():
                self.b.grammar_free(g)
        return [r if r is not None else ([], "error") for r in results]

    def _grammar(self, text: str | None, uses: dict[str, int], shared: dict[str, Any]) -> Any:
        """A sequence's own grammar state: compiled for it alone, or cloned from the compiled
        grammar that several prompts share."""
        if text is None:
            return None
        if uses[text] == 1:
            return self.b.grammar(text)
        if text not in shared:
            shared[text] = self.b.grammar(text)
        return self.b.grammar_clone(shared[text])

    def _pick(self, g: Any, logits: np.ndarray) -> int:
        """The highest-logit token the grammar allows (the lowest id among equals).  The greedy token is
        checked alone; when the grammar rejects it, the next best ``candidates`` tokens (all that tie with
        the last of them included) are checked one by one, best first, and only when none is allowed is
        the whole vocabulary masked: one pass of the grammar over 150k tokens costs more than dozens of
        single checks, the more so with a per-request grammar's many alternatives."""
        tok = int(np.argmax(logits))
        if g is None or self.b.grammar_allows(g, tok):
            return tok
        self.stats["rejected"] += 1
        k = min(self.candidates, logits.size)
        bar = np.partition(logits, logits.size - k)[logits.size - k]
        ids = np.flatnonzero(logits >= bar)
        for t in ids[np.lexsort((ids, -logits[ids]))]:
            if t != tok and self.b.grammar_allows(g, int(t)):
                return int(t)
        self.stats["masked"] += 1
        return self.b.grammar_best(g, logits)

    def _release(self, slot: _Slot) -> None:
        self.b.seq_rm(slot.seq, -1, -1)
        if slot.grammar is not None:
            self.b.grammar_free(slot.grammar)
            slot.grammar = None


# --------------------------------------------------------------------------- prompt heads on disk


class PrefixStore:
    """A prompt head's KV cells on disk, so that a new process loads them instead of decoding them
    (the shared head of the default prompt is about 3,000 tokens: tens of seconds on 2 cores).

    One file per (``setting``, head tokens): ``setting`` names everything the cells depend on (model
    file, llama.cpp build, batch size, threads, KV layout), so a file is only ever read back into the
    context that would have computed the same cells.  A file carries the sha256 of its cells and is
    written atomically; one that does not match is ignored (and replaced once the head is decoded
    again).  The ``keep`` most recently used files stay, older ones are removed."""

    MAGIC = b"ITLR-KV1"

    def __init__(self, folder: str | os.PathLike, setting: str, keep: int = 4):
        self.folder, self.setting, self.keep = Path(folder), setting, keep

    def path(self, tokens: Sequence[int]) -> Path:
        h = hashlib.sha256(self.setting.encode())
        h.update(np.asarray(tokens, dtype=np.int32).tobytes())
        return self.folder / f"{h.hexdigest()[:32]}.kv"

    def read(self, tokens: Sequence[int]) -> bytes | None:
        path = self.path(tokens)
        try:
            raw = path.read_bytes()
        except OSError:
            return None
        n = len(self.MAGIC)
        if len(raw) < n + 32 or raw[:n] != self.MAGIC or hashlib.sha256(raw[n + 32:]).digest() != raw[n:n + 32]:
            return None
        try:
            os.utime(path)   # recently used: kept by the pruning
        except OSError:
            pass
        return raw[n + 32:]

    def write(self, tokens: Sequence[int], cells: bytes) -> None:
        from ..output import OutputError, atomic_file

        try:
            with atomic_file(self.path(tokens), "wb") as f:
                f.write(self.MAGIC + hashlib.sha256(cells).digest())
                f.write(cells)
            old = sorted(self.folder.glob("*.kv"), key=lambda q: q.stat().st_mtime, reverse=True)[self.keep:]
            for q in old:
                q.unlink(missing_ok=True)
        except (OSError, OutputError):   # a cache that cannot be written costs time, never the translation
            pass


# --------------------------------------------------------------------------- llama.cpp


_ENGINE_INSTALL = ("`bash scripts/install_llamacpp.sh` in the itlr-gpu repository (builds llama.cpp for this CPU: "
                   "several minutes)")


DEFAULT_N_CTX = 16384
"""KV cells shared by the parallel sequences and the prompt head; more where --max-model-len asks (up to the
model's trained window)."""


class LlamaCppEngine:
    """A GGUF model in llama.cpp (llama-cpp-python's C bindings): :class:`Backend`, a tokenizer
    (``encode``, ``chat_template``, ``apply_chat_template``) and vLLM's ``generate`` interface."""

    def __init__(self, gguf: str | os.PathLike, n_ctx: int = DEFAULT_N_CTX, n_seq: int = 16, n_batch: int = 512,
                 n_threads: int | None = None, prefix_dir: str | os.PathLike | None = None):
        if not 1 <= n_seq <= MAX_PARALLEL:   # else llama.cpp's context fails, for a reason it prints apart
            raise InputError(f"{n_seq} sequences decoded together", "--parallel",
                             f"1 to {MAX_PARALLEL} (llama.cpp keeps at most 256 sequences, two of them the shared "
                             "prompt head's and a group's)")
        try:
            import llama_cpp as lc
        except ImportError as e:
            raise InputError("llama-cpp-python is not installed", "--translator llamacpp", _ENGINE_INSTALL) from e
        self.lc = lc
        lc.llama_backend_init()
        lc.llama_log_set(_silent_log(lc), None)
        mp = lc.llama_model_default_params()
        mp.n_gpu_layers = 0
        global _LOG_CAPTURE
        _LOG_CAPTURE = []
        try:
            self.model = lc.llama_model_load_from_file(str(gguf).encode(), mp)
        finally:
            said, _LOG_CAPTURE = _LOG_CAPTURE, None
        if not self.model:
            first = next((b.decode("utf-8", "replace").strip() for b in said if b.strip()), "")
            why = f" ({first[:200]})" if first else ""
            raise InputError(f"llama.cpp cannot load the model{why}", str(gguf),
                             "a whole GGUF causal language model; for a registry model, `itlr models install NAME --force`")
        self.vocab = lc.llama_model_get_vocab(self.model)
        self.n_ctx_train = lc.llama_model_n_ctx_train(self.model)
        # a window asked for beyond the model's own is not allocated (--max-model-len is clamped to it)
        n_ctx = min(n_ctx, max(DEFAULT_N_CTX, self.n_ctx_train))
        self.n_vocab = lc.llama_vocab_n_tokens(self.vocab)
        cp = lc.llama_context_default_params()
        threads = n_threads or len(os.sched_getaffinity(0))
        cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx, n_batch, n_batch, n_seq + 2
        cp.n_threads = cp.n_threads_batch = threads
        cp.kv_unified = True  # one KV buffer: the shared prefix's cells belong to every sequence
        # Flash attention off: llama.cpp's CPU kernel took 560-610 ms for a step of 16 sequences over a 3,000-token
        # shared prefix against 346 ms for the plain KQ/KQV products (Qwen2.5-Coder-1.5B, 2-core Xeon; one
        # sequence 98 vs 87 ms).  Its default ("auto") turns it on for the CPU.
        if hasattr(cp, "flash_attn_type"):
            cp.flash_attn_type = 0          # LLAMA_FLASH_ATTN_TYPE_DISABLED
        elif hasattr(cp, "flash_attn"):
            cp.flash_attn = False
        cp.no_perf = True
        self.ctx = lc.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise InputError("llama.cpp cannot create a context", str(gguf), f"memory for n_ctx={n_ctx}")
        self.mem = lc.llama_get_memory(self.ctx)
        self.n_ctx, self.n_batch, self.n_threads = lc.llama_n_ctx(self.ctx), n_batch, threads
        self.batch = lc.llama_batch_init(n_batch, 0, 1)
        self._one = (lc.llama_token_data * 1)()
        self._one_arr = lc.llama_token_data_array(self._one, 1, -1, False)
        self._full = np.zeros(self.n_vocab, dtype=np.dtype([("id", "<i4"), ("logit", "<f4"), ("p", "<f4")]))
        self._full["id"] = np.arange(self.n_vocab)
        self._full_arr = lc.llama_token_data_array(
            self._full.ctypes.data_as(lc.llama_token_data_p), self.n_vocab, -1, False)
        self._pieces: dict[int, bytes] = {}
        self._encoded: dict[str, np.ndarray] = {}
        tmpl = lc.llama_model_chat_template(self.model, None)
        self.chat_template = tmpl.decode() if tmpl else None
        self._template: Any = None
        self.prefixes = None if prefix_dir is None else PrefixStore(prefix_dir, self._kv_setting(Path(gguf)))
        self.decoder = BatchDecoder(self, n_seq=n_seq)

    def _kv_setting(self, gguf: Path) -> str:
        """Everything a prompt head's KV cells depend on besides its tokens (:class:`PrefixStore`)."""
        st = gguf.stat()
        return "|".join([gguf.name, str(st.st_size), str(st.st_mtime_ns), getattr(self.lc, "__version__", "?"),
                         self.lc.llama_print_system_info().decode(errors="replace"),
                         f"n_batch={self.n_batch}", f"threads={self.n_threads}", "flash_attn=0", "kv=f16,unified"])

    # -- Backend ------------------------------------------------------------------------

    def decode(self, tokens, positions, seqs, want_logits):
        lc, b = self.lc, self.batch
        for i, (t, p, s, w) in enumerate(zip(tokens, positions, seqs, want_logits)):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = t, p, 1, bool(w)
            b.seq_id[i][0] = s
        b.n_tokens = len(tokens)
        rc = lc.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        out = []
        for i, w in enumerate(want_logits):
            if w:
                ptr = lc.llama_get_logits_ith(self.ctx, i)
                out.append(np.ctypeslib.as_array(ptr, shape=(self.n_vocab,)).copy())
        return out

    def seq_cp(self, src, dst, p0, p1):
        self.lc.llama_memory_seq_cp(self.mem, src, dst, p0, p1)

    def seq_rm(self, seq, p0, p1):
        self.lc.llama_memory_seq_rm(self.mem, seq, p0, p1)

    def load_prefix(self, tokens) -> bool:
        cells = self.prefixes.read(tokens) if self.prefixes is not None else None
        if cells is None:
            return False
        buf = (self.lc.ctypes.c_uint8 * len(cells)).from_buffer_copy(cells)
        if self.lc.llama_state_seq_set_data(self.ctx, buf, len(cells), 0) != len(cells):
            self.seq_rm(0, -1, -1)   # refused (another layout): decode the head instead
            return False
        return True

    def save_prefix(self, tokens) -> None:
        if self.prefixes is None:
            return
        size = self.lc.llama_state_seq_get_size(self.ctx, 0)
        buf = (self.lc.ctypes.c_uint8 * size)()
        n = self.lc.llama_state_seq_get_data(self.ctx, buf, size, 0)
        if n:
            self.prefixes.write(tokens, bytes(buf)[:n])

    def grammar(self, text):
        text = gbnf_for_llama_cpp(text)
        g = self.lc.llama_sampler_init_grammar(self.vocab, text.encode(), b"root")
        if not g:
            raise ValueError("llama.cpp rejected the grammar")
        return g

    def grammar_clone(self, g):
        return self.lc.llama_sampler_clone(g)

    def grammar_free(self, g):
        self.lc.llama_sampler_free(g)

    def grammar_allows(self, g, token):
        self._one[0].id, self._one[0].logit, self._one[0].p = token, 0.0, 0.0
        self._one_arr.size, self._one_arr.selected, self._one_arr.sorted = 1, -1, False
        self.lc.llama_sampler_apply(g, self.lc.ctypes.byref(self._one_arr))
        return self._one_arr.size == 1 and np.isfinite(self._one[0].logit)

    def grammar_best(self, g, logits):
        self._full["id"] = np.arange(self.n_vocab)
        self._full["logit"] = logits
        self._full_arr.size, self._full_arr.selected, self._full_arr.sorted = self.n_vocab, -1, False
        self.lc.llama_sampler_apply(g, self.lc.ctypes.byref(self._full_arr))
        sel = self._full[: self._full_arr.size]
        return int(sel["id"][int(np.argmax(sel["logit"]))])

    def grammar_accept(self, g, token):
        self.lc.llama_sampler_accept(g, token)

    def is_eog(self, token):
        return bool(self.lc.llama_vocab_is_eog(self.vocab, token))

    def piece(self, token):
        p = self._pieces.get(token)
        if p is None:
            buf = self.lc.ctypes.create_string_buffer(256)
            n = self.lc.llama_token_to_piece(self.vocab, token, buf, len(buf), 0, False)
            p = self._pieces[token] = buf.raw[:max(n, 0)]
        return p

    # -- tokenizer ----------------------------------------------------------------------

    ENCODED_KEPT = 1024
    """Prompts whose tokens are kept: the translator tokenises each prompt for its length check and
    ``generate`` needs the same tokens (~5 ms for a 3,000-token prompt)."""

    def encode(self, text: str) -> list[int]:
        kept = self._encoded.get(text)
        if kept is not None:
            return kept.tolist()
        data = text.encode()
        cap = len(data) + 16
        buf = (self.lc.llama_token * cap)()
        n = self.lc.llama_tokenize(self.vocab, data, len(data), buf, cap, False, True)
        if n < 0:
            raise ValueError("tokenization failed")
        while self._encoded and len(self._encoded) >= self.ENCODED_KEPT:
            del self._encoded[next(iter(self._encoded))]   # the oldest
        self._encoded[text] = np.frombuffer(buf, dtype=np.int32, count=n).copy()
        return list(buf[:n])

    def apply_chat_template(self, messages, tokenize: bool = False, add_generation_prompt: bool = True) -> str:
        if self._template is None:   # compiled once: compiling it per request took ~10 ms each
            from jinja2.sandbox import ImmutableSandboxedEnvironment

            env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
            self._template = env.from_string(self.chat_template)
        return self._template.render(
            messages=messages, add_generation_prompt=add_generation_prompt, bos_token="", eos_token="")

    def get_tokenizer(self):
        return self

    # -- vLLM-like generate -------------------------------------------------------------

    streams_outputs = True
    """``generate`` takes ``on_output(i, output)``, called as each prompt finishes."""

    takes_head = True
    """``generate`` takes ``head``: the prompt text every request shares (its KV cells may come from disk)."""

    def generate(self, prompts: Sequence[str], params: Any, use_tqdm: bool = False,
                 on_output: Callable[[int, Any], None] | None = None, head: str | None = None) -> list[Any]:
        # one params for every prompt, or each prompt's own (span grammars); a grammar text several prompts
        # share is compiled once by the decoder either way
        each = list(params) if isinstance(params, (list, tuple)) else [params] * len(prompts)
        if any(getattr(p, "temperature", 0.0) for p in each):
            raise ValueError("the llama.cpp backend decodes greedily (temperature 0)")
        toks = [self.encode(p) for p in prompts]
        from tqdm.auto import tqdm

        def output(gen: tuple[list[int], str]) -> Any:
            tokens, reason = gen
            text = b"".join(self.piece(t) for t in tokens).decode("utf-8", errors="replace")
            return SimpleNamespace(outputs=[SimpleNamespace(text=text, finish_reason=reason)])

        def done(i: int, gen: tuple[list[int], str]) -> None:
            bar.update()
            if on_output is not None:
                on_output(i, output(gen))

        self.decoder.show_progress = use_tqdm
        with tqdm(total=len(prompts), unit="req", desc="translate (llama.cpp)", disable=not use_tqdm) as bar:
            gens = self.decoder.generate(toks, [getattr(p, "grammar", None) for p in each],
                                         [p.max_tokens for p in each], on_done=done,
                                         head=self.encode(head) if head else ())
        return [output(g) for g in gens]

    def close(self) -> None:
        if getattr(self, "ctx", None):
            self.lc.llama_batch_free(self.batch)
            self.lc.llama_free(self.ctx)
            self.lc.llama_model_free(self.model)
            self.ctx = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


_LOG_CB = None


_LOG_CAPTURE: list[bytes] | None = None


def _silent_log(lc):
    """llama.cpp logs every load step to stderr; keep errors only."""
    global _LOG_CB
    if _LOG_CB is None:
        last = [0]

        @lc.llama_log_callback
        def cb(level, text, user_data):  # noqa: ARG001
            if level == 5:   # GGML_LOG_LEVEL_CONT continues the previous message (the load's progress dots)
                level = last[0]
            last[0] = level
            if level == 4:  # GGML_LOG_LEVEL_ERROR
                if _LOG_CAPTURE is not None:   # while loading: the reason goes into the one error line
                    _LOG_CAPTURE.append(text)
                else:
                    os.write(2, text)

        _LOG_CB = cb
    return _LOG_CB


def resolve_gguf(model: str | os.PathLike | None, cache_dir: str | os.PathLike | None = None) -> Path:
    """A ``--model`` argument -> a GGUF file: a registry name (installed), a ``.gguf`` file or a
    folder holding exactly one; default ``qwen2.5-coder-1.5b``."""
    from .registry import gguf_file, resolve_registered

    name = str(model) if model is not None else "qwen2.5-coder-1.5b"
    if name.lower() in ("smollm2", "smollm2-135m"):
        from .models import find_smollm2_gguf

        return find_smollm2_gguf()
    folder = resolve_registered(name, cache_dir)
    if folder is not None:
        gguf = gguf_file(folder)
        if gguf is None:   # an installed model of another kind: all-mpnet-base-v2 is an encoder
            raise InputError(f"registry model {name!r} is not a GGUF causal language model", "--model",
                             "a translator model: qwen2.5-coder-1.5b, qwen2.5-coder-0.5b, smollm2-135m or a .gguf file")
        return gguf
    p = Path(name)
    if p.is_file():
        with open(p, "rb") as f:
            if f.read(4) != b"GGUF":
                raise InputError("not a GGUF file", str(p), "a .gguf model (or a registry name)")
        return p
    if p.is_dir():
        ggufs = sorted(p.glob("*.gguf"))
        if len(ggufs) == 1:
            return ggufs[0]
        raise InputError(f"{len(ggufs)} .gguf files in the folder", str(p), "exactly one GGUF model file")
    raise InputError("model not found", str(p), "a registry name (itlr models list), a .gguf file or a folder")


def _fingerprint(path: Path) -> str:
    """The digest in the translation cache's name for a GGUF file (``llamacpp:<stem>@<digest>``): its sampled
    contents, so that another model saved under the same file name is another model; a copy of the file in
    another folder, under its name, is the same one."""
    return sampled_digest(path).hexdigest()[:16]


@dataclass
class LlamaCppTranslator(VllmTranslator):
    """:class:`~.llm.VllmTranslator`'s logic on :class:`LlamaCppEngine` (``--translator llamacpp``).

    ``max_model_len`` bounds one request's prompt + generation; ``n_ctx`` is the KV cache
    shared by all ``n_seq`` parallel sequences and the prefix.  ``prefix_cache``: keep the prompt
    head's KV cells on disk (:class:`PrefixStore`), in ``prefix_dir`` (default
    ``<cache_dir>/llamacpp-prefix``)."""

    n_ctx: int = DEFAULT_N_CTX
    n_seq: int = 16
    n_threads: int | None = None
    prefix_cache: bool = True
    prefix_dir: str | os.PathLike | None = None
    backend_name: ClassVar[str] = "llamacpp"

    def _identify(self) -> Path:
        if self.temperature:
            raise InputError("the llama.cpp backend decodes greedily", "temperature", "0")
        try:
            path = resolve_gguf(self.model, self.cache_dir)
        except InputError as e:   # the engine first: a model installed for a missing engine is 1 GB for nothing
            if importlib.util.find_spec("llama_cpp") is None:
                raise InputError(f"llama-cpp-python is not installed (and {e.what})", "--translator llamacpp",
                                 f"{_ENGINE_INSTALL}; then for the model: {e.expected}") from None
            raise
        self.model_id = f"llamacpp:{path.stem.lower()}@{_fingerprint(path)}"
        return path

    def _start_engine(self) -> None:
        path = self._identify()
        prefix_dir = None
        if self.prefix_cache:
            from .models import cache_root

            prefix_dir = self.prefix_dir or cache_root(self.cache_dir) / "llamacpp-prefix"
        # the KV cache holds at least one request of --max-model-len (a longer window than the default context)
        self.llm = LlamaCppEngine(path, n_ctx=max(self.n_ctx, self.max_model_len or 0), n_seq=self.n_seq,
                                  n_threads=self.n_threads, prefix_dir=prefix_dir)
        if self.max_model_len is not None and self.llm.n_ctx_train < self.max_model_len:
            self.max_model_len = self.llm.n_ctx_train  # the model's own window bounds prompt + generation
        self._tokenizer = self.llm

    def context_ceiling(self) -> int | None:
        """The most tokens one request's prompt + generation can take whatever --max-model-len says: the model's
        trained window (the KV cache grows with --max-model-len up to it)."""
        return getattr(self.llm, "n_ctx_train", None)

    def sampling_params(self, grammar: str | None, max_tokens: int):
        return _PlainParams(max_tokens, self.temperature, self.seed, grammar)
