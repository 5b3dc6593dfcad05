"""vLLM translator: a few-shot prompt, batched offline generation, grammar-constrained.

* One offline :class:`vllm.LLM` per translator; every prompt of a batch goes to one
  ``LLM.generate`` call.
* Decoding is constrained by the grammar of :mod:`.grammar` through vLLM's structured
  outputs: ``SamplingParams(structured_outputs=StructuredOutputsParams(grammar=...))``
  on vLLM >= 0.11, ``SamplingParams(guided_decoding=GuidedDecodingParams(grammar=...))``
  on older releases (whichever the installed vLLM has).
* ``mode="logical"``: the model writes a boolean query, parsed and printed in canonical
  form.  ``mode="rewrite"`` (the paper's BRIGHT-style baseline): the model writes one
  short reasoning-expanded sentence, returned in ``rewrite``; ``expr`` is that sentence
  as one quoted term, so ``itlr search`` embeds it whole.
* A failed, empty, truncated, over-long or unparsable generation is an error row; a
  batch whose ``generate`` call raises is retried in halves down to single prompts, so
  one bad prompt never loses the batch.  With the grammar, a generation cut at
  ``max_tokens`` is retried once with a finite sub-grammar that cannot be cut off
  (shallower, shorter chains and terms), so every row parses.

On a CPU (the ``vllm-cpu`` distribution) ``VLLM_ENABLE_V1_MULTIPROCESSING=0`` and
``enforce_eager=True`` give a fast start.  The KV cache there gets a fixed size
(:func:`cpu_kv_cache_bytes`, 2 GiB or half the free memory) rather than vLLM's
``gpu_memory_utilization`` reading on a CPU (that fraction of *all* memory minus what
the process already holds, which leaves next to nothing in a process that has loaded
torch and run other work); ``gpu_memory_utilization`` or ``VLLM_CPU_KVCACHE_SPACE``
given by the user still wins.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from ..errors import InputError, QuerySyntaxError, UsageError
from ..query import MAX_QUERY_CHARS, canonical, parse, quote
from ..query.ast import terms as _terms
from . import grammar as _grammar
from .examples import ExamplePool, default_pool, load_pool
from .spans import align_terms, strip_terminal_escapes

__all__ = [
    "PROMPT_VERSION", "prompt_fingerprint", "FEW_SHOT", "REWRITE_SHOT", "GenResult", "VllmTranslator", "build_messages",
    "build_prompt", "make_sampling_params", "interpret",
]

PROMPT_VERSION = "p5"
"""Bump when the prompt or examples change; the cache key also holds a hash of the prompt's
text (:func:`prompt_fingerprint`) and of the example pool, so an edit without a bump cannot reuse
stale translations. p5 = p2's system text and ten examples, preceded by ``examples`` pairs from the
shipped pool (:mod:`.examples`). Two rewrites of p2's text (p3, p4) scored no better on the dev split
(benchmarks/results/translate-prompts.md)."""

CHECKS_VERSION = "c3"
"""Bump when :func:`interpret` refuses other outputs, or when cached outputs must not be read back (in the cache
key). c2: a term that is only a connective in any case; a rewrite with no words, copying a prompt example or
sharing no word with the request. c3: c2's llama.cpp rows were generated without the chat template (a defect of
one commit)."""
REWRITE_CHECKS_VERSION = "w3"
"""The same for rewrite mode's own checks (in its cache key only, so that logical rows stay valid). w1: a near
copy of a prompt example's answer (Jaccard 0.8 of their words) is refused like an exact one. w2: only for a request
that shares no word with that example (a request on the example's topic may be rewritten like it). w3: on the
example's topic means more than half of the request's content words (one shared word let copies through)."""

SYSTEM_LOGICAL = (
    "You turn a search request into a boolean query. Write every search term in double quotes, "
    "combine terms with AND, OR and NOT, and use parentheses to group. Drop request words such as "
    "'find', 'papers on' or 'documents about'. 'but not', 'excluding', 'except' and 'without' become "
    "AND NOT; 'either ... or' becomes OR; 'neither ... nor' becomes NOT ... AND NOT ...; 'as well as' "
    "becomes AND. A topic name that contains 'and', 'or' or 'not' (such as 'research and development') "
    "stays one term. For a question or a long text, keep only the topics the reader asks for. "
    "Answer with the query only."
)

FEW_SHOT: tuple[tuple[str, str], ...] = (
    ("papers on honey bees but not wasps", '("honey bees" AND NOT "wasps")'),
    ("either trams or buses in Vienna", '("trams" OR "buses in Vienna")'),
    ("find articles about coffee and heart disease", '("coffee" AND "heart disease")'),
    ("neither lions nor tigers", '(NOT "lions" AND NOT "tigers")'),
    ("volcanoes, excluding Iceland and Hawaii", '("volcanoes" AND NOT "Iceland" AND NOT "Hawaii")'),
    ("cheese or wine, and not beer", '(("cheese" OR "wine") AND NOT "beer")'),
    ("documents about the Roman army", '"the Roman army"'),
    ("bread and butter pudding recipes as well as scones, but not cakes",
     '("bread and butter pudding recipes" AND "scones" AND NOT "cakes")'),
    ("Are there studies on urban gardens and mental health?", '("urban gardens" AND "mental health")'),
    ("People often claim that cities should ban cars from their centres. I want studies on car-free city "
     "centres and local shops, not on parking fees.",
     '("car-free city centres" AND "local shops" AND NOT "parking fees")'),
)
"""Few-shot examples (none of them is in the labelled test set)."""

SYSTEM_REWRITE = (
    "You expand a search request into one short sentence that describes what a relevant document "
    "discusses, adding the key related concepts a good answer would mention. Answer with the sentence only."
)

REWRITE_SHOT: tuple[tuple[str, str], ...] = (
    ("papers on honey bees but not wasps",
     "Honey bee biology, colonies, pollination and beekeeping, not about wasps or hornets."),
    ("coffee and heart disease",
     "How coffee and caffeine intake affect heart disease, blood pressure and cardiovascular risk."),
)

MAX_REWRITE_CHARS = 1000

TERMS = ("span", "free")
"""How a logical form's terms are constrained (``VllmTranslator.terms``)."""

DEFAULT_EXAMPLES = 80
"""Labelled pairs from the shipped pool (:mod:`.examples`) added to the shared prompt in logical mode:
they cover the pool's connective patterns and, being a prefix every request shares, are prefilled once
(docs/translation.md has the dev-split measurements behind the number)."""


def prompt_fingerprint(mode: str = "logical") -> str:
    """A short hash of the system text and examples of ``mode`` (part of the cache key)."""
    system, shots = (SYSTEM_LOGICAL, FEW_SHOT) if mode == "logical" else (SYSTEM_REWRITE, REWRITE_SHOT)
    return hashlib.sha1(repr((system, shots)).encode()).hexdigest()[:8]


def build_messages(text: str, mode: str = "logical", shared: Sequence[tuple[str, str]] = (),
                   nearest: Sequence[tuple[str, str]] = ()) -> list[dict[str, str]]:
    """Chat messages of the few-shot prompt for one request: the system text, ``shared`` examples
    (labelled pairs every request sees), the fixed examples (together a prefix every request
    shares), then ``nearest`` (chosen for this request) and the request."""
    system, shots = (SYSTEM_LOGICAL, FEW_SHOT) if mode == "logical" else (SYSTEM_REWRITE, REWRITE_SHOT)
    msgs = [{"role": "system", "content": system}]
    for q, a in (*shared, *shots, *nearest):
        msgs.append({"role": "user", "content": q})
        msgs.append({"role": "assistant", "content": a})
    msgs.append({"role": "user", "content": clean_request(text)})
    return msgs


def clean_request(text: str) -> str:
    """The request as the model sees it: terminal escape sequences ("\x1b[31m") and control characters (NUL,
    BEL, ...) become spaces and white space collapses to single spaces."""
    text = strip_terminal_escapes(str(text))
    return " ".join("".join(" " if unicodedata.category(c) == "Cc" else c for c in text).split())


def text_error(text: Any) -> str | None:
    """Why ``text`` cannot go to a model at all (None when it can): checked before the engine starts, so
    that a batch of such rows, or their rerun, never loads the model."""
    if not isinstance(text, str) or not text.strip():
        return "empty text"
    if not any(c.isalnum() or unicodedata.category(c) == "So" for c in clean_request(text)):
        # "?!.,;:()--": nothing to translate, and a model given it copies an example instead
        return "no words: the request is punctuation only"
    return None


def build_prompt(text: str, mode: str = "logical", tokenizer: Any = None,
                 shared: Sequence[tuple[str, str]] = (), nearest: Sequence[tuple[str, str]] = ()) -> str:
    """The prompt string: the tokenizer's chat template when it has one, else plain text."""
    msgs = build_messages(text, mode, shared, nearest)
    if tokenizer is not None and getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=True)
    lines = [msgs[0]["content"], ""]
    for m in msgs[1:]:
        lines.append(("Request: " if m["role"] == "user" else "Query: ") + m["content"])
    lines.append("Query:")
    return "\n".join(lines)


def _vllm_installed() -> bool:
    if "vllm" in sys.modules:   # imported already (or a stand-in put there by a test)
        return True
    try:
        return importlib.util.find_spec("vllm") is not None
    except (ImportError, ValueError):
        return False


def _no_vllm() -> InputError:
    return InputError(f"vLLM is not installed in this Python ({sys.executable})", "--translator vllm",
                      "the environment `bash scripts/install_vllm_cpu.sh` builds (.venv-vllm), or "
                      "`pip install vllm` on a GPU machine; --translator llamacpp for a CPU")


@dataclass
class _PlainParams:
    """Sampling parameters for a fake engine when vLLM is not installed (tests)."""

    max_tokens: int
    temperature: float
    seed: int | None
    grammar: str | None


def make_sampling_params(grammar: str | None, max_tokens: int = 128, temperature: float = 0.0, seed: int | None = 0):
    """vLLM ``SamplingParams`` with the grammar constraint, for whichever API is installed."""
    try:
        from vllm import SamplingParams
    except ImportError:
        return _PlainParams(max_tokens, temperature, seed, grammar)
    kw: dict[str, Any] = dict(max_tokens=max_tokens, temperature=temperature, seed=seed)
    if grammar is not None:
        try:
            from vllm.sampling_params import StructuredOutputsParams  # vLLM >= 0.11

            kw["structured_outputs"] = StructuredOutputsParams(grammar=grammar)
        except ImportError:
            from vllm.sampling_params import GuidedDecodingParams  # older vLLM

            kw["guided_decoding"] = GuidedDecodingParams(grammar=grammar)
    return SamplingParams(**kw)


@dataclass
class GenResult:
    expr: str | None = None
    rewrite: str | None = None
    error: str | None = None
    raw: str | None = None
    truncated: bool = False
    """Cut off at ``max_tokens``."""


def interpret(raw: str | None, finish_reason: str | None, mode: str = "logical",
              request: str | None = None) -> GenResult:
    """One generation -> canonical expr (or rewrite) or an error; never raises.

    With ``request`` (logical mode), terms are aligned with the request's words
    (:func:`~.spans.align_terms`: its spelling and case, a leading article kept)."""
    if raw is None:
        return GenResult(error="no generation")
    text = raw.strip()
    if finish_reason == "length":
        return GenResult(error=f"generation stopped at max_tokens ({len(raw)} chars): {text[:60]!r}", raw=raw,
                         truncated=True)
    if not text:
        return GenResult(error="empty generation", raw=raw)
    if mode == "rewrite":
        line = " ".join(text.split())
        if len(line) > MAX_REWRITE_CHARS:
            return GenResult(error=f"rewrite is {len(line)} characters long (at most {MAX_REWRITE_CHARS})", raw=raw)
        unrelated = _unrelated_rewrite(line, request)
        if unrelated:
            return GenResult(error=f"{unrelated}: {line[:80]!r}", raw=raw)
        try:
            expr = canonical(parse(quote(line)))
        except QuerySyntaxError as e:
            return GenResult(error=f"rewrite is not a valid term: {e}", raw=raw)
        return GenResult(expr=expr, rewrite=line, raw=raw)
    if len(text) > MAX_QUERY_CHARS:
        return GenResult(error=f"generation is {len(text)} characters long (at most {MAX_QUERY_CHARS})", raw=raw)
    try:
        node = parse(text)
        if request is not None:
            node = align_terms(node, clean_request(request))
        junk = _junk_term(node)
        if junk is not None:
            return GenResult(error=f"{JUNK_TERM}: {junk!r}: {text[:80]!r}", raw=raw)
        return GenResult(expr=canonical(node), raw=raw)
    except QuerySyntaxError as e:
        return GenResult(error=f"generation does not parse: {e}: {text[:80]!r}", raw=raw)
    except RecursionError:
        return GenResult(error="generation nested too deeply", raw=raw)


JUNK_TERM = "generation has a term that names nothing"
_CONNECTIVES = {"and", "or", "not", "nor", "but", "and/or"}


def _junk_term(node) -> str | None:
    """A term of the model's form that names nothing: punctuation only (a request of "(" read back as
    ``"(" AND "("``), or a connective quoted in any case (``NOT "NOT"``, ``("a flu jab" OR "not")`` for "Should I
    get a flu jab or not?"); None when every term names something."""
    for term in _terms(node):
        if all(unicodedata.category(ch)[0] in "PZ" for ch in term) or term.strip().lower() in _CONNECTIVES:
            return term
    return None


def _words(text: str) -> set[str]:
    return {w for w in "".join(ch.lower() if ch.isalnum() else " " for ch in text).split() if len(w) >= 3}


_FUNCTION_WORDS = set("about and are but can does for from has have how into its nor not that the their them "
                      "they this what when which who why with any some find need want looking papers paper articles "
                      "article research studies study documents document sources source info information".split())


def _stems(words: set[str]) -> set[str]:
    """Content words, a plural "s" taken off: what two texts must share to be on one topic."""
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in words if w not in _FUNCTION_WORDS}


def _on_topic(request: set[str], example: set[str]) -> bool:
    mine = _stems(request)
    return bool(mine) and 2 * len(mine & _stems(example)) > len(mine)


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def _unrelated_rewrite(line: str, request: str | None) -> str | None:
    """Why a rewrite is not one of the request (None when it may be): no words at all ("0"), a prompt
    example's answer copied for another request, or, for a request of several words, none of them."""
    if not any(ch.isalpha() for ch in line):
        return "rewrite has no words"
    if request is None:
        return None
    said, asked = _words(line), _words(request)
    # the same words as an example's answer, give or take a few (Jaccard 0.8), for a request that is not on that
    # example's topic: no more than half of its content words (plural "s" aside) are the example's
    if any(_overlap(said, _words(answer)) >= 0.8 and not _on_topic(asked, _words(shot) | _words(answer))
           for shot, answer in REWRITE_SHOT):
        return "rewrite copies an example of the prompt"
    if len(asked) >= 3 and not asked & said:
        return "rewrite shares no word with the request"
    return None


_FALLBACK_SHAPES = ((1, 2, 32), (1, 2, 16), (0, 3, 16), (0, 2, 12), (0, 1, 8))
"""(max_depth, max_operands, max_term_chars) of the retry grammars, richest first."""


def _cpu_only() -> bool:
    try:
        import torch

        return not torch.cuda.is_available()
    except Exception:
        return True


def context_length(folder: Path) -> int | None:
    """The context window a Hugging Face model folder declares in ``config.json`` (None if it says none)."""
    import json

    try:
        cfg = json.loads((Path(folder) / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    cfg = cfg.get("text_config", cfg) if isinstance(cfg, dict) else {}
    for key in ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length"):
        v = cfg.get(key)
        if isinstance(v, int) and v > 0:
            return v
    return None


SAMPLED_BLOCKS, SAMPLED_BLOCK = 64, 1 << 16   # 4 MiB read per file, whatever its size


def sampled_digest(path: Path, h: Any = None) -> Any:
    """Hash ``path``'s size and 64 blocks of 64 KiB spread evenly over it, first and last included (the whole
    file when smaller): content, so that two weight files of one name and size (a fine-tune, another
    quantisation) differ, read in milliseconds where hashing a gigabyte takes seconds."""
    h = hashlib.sha256() if h is None else h
    size = path.stat().st_size
    h.update(f"{size}\0".encode())
    with open(path, "rb") as f:
        if size <= SAMPLED_BLOCKS * SAMPLED_BLOCK:
            h.update(f.read())
            return h
        step = (size - SAMPLED_BLOCK) / (SAMPLED_BLOCKS - 1)
        for i in range(SAMPLED_BLOCKS):
            f.seek(round(i * step))
            h.update(f.read(SAMPLED_BLOCK))
    return h


def _fingerprint(folder: Path) -> str:
    """The translation cache's name for a model folder: its files' names and sampled contents."""
    h = hashlib.sha256()
    for name in sorted(os.listdir(folder)):
        p = folder / name
        if p.is_file():
            h.update(f"{name}\0".encode())
            sampled_digest(p, h)
    return h.hexdigest()[:16]


CPU_KV_CACHE_BYTES = 2 << 30  # float32: ~37k tokens of Qwen2.5-1.5B, ~46k of SmolLM2; hundreds of prompts in flight


def cpu_kv_cache_bytes(available: int | None = None) -> int:
    """KV cache size for vLLM on a CPU: 2 GiB, or half the memory free now if that is less."""
    if available is None:
        try:
            import psutil  # a vLLM dependency

            available = psutil.virtual_memory().available
        except ImportError:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return int(min(CPU_KV_CACHE_BYTES, available // 2))


@dataclass
class VllmTranslator:
    """Batched grammar-constrained translation with an offline ``vllm.LLM``.

    ``llm`` may be any object with ``generate(prompts, sampling_params)`` returning
    vLLM-like outputs (``.outputs[0].text``, ``.outputs[0].finish_reason``): tests pass a
    fake.  Engine options (``dtype``, ``max_model_len``, ``gpu_memory_utilization``,
    ``tensor_parallel_size``, ``enforce_eager`` and any other ``vllm.LLM`` keyword via
    ``engine_kwargs``) pass through to ``vllm.LLM``.
    """

    model: str | os.PathLike | None = None
    mode: str = "logical"
    use_grammar: bool = True
    max_tokens: int = 128
    temperature: float = 0.0
    seed: int | None = 0
    dtype: str | None = None
    max_model_len: int | None = 8192
    gpu_memory_utilization: float | None = None
    tensor_parallel_size: int | None = None
    enforce_eager: bool | None = None
    cache_dir: str | os.PathLike | None = None
    engine_kwargs: dict[str, Any] = field(default_factory=dict)
    llm: Any = None
    model_id: str | None = None
    retry_truncated: bool = True
    examples: int = DEFAULT_EXAMPLES
    """Logical mode: labelled pairs covering the pool's patterns, in the prompt every request shares."""
    nearest: int = 0
    """Logical mode: labelled pairs most like each request, added to its own prompt (more accurate on
    the dev split and on later writers' requests held out, but each request then prefills its own examples: ~5x
    slower on a 2-core CPU at 4)."""
    nearest_group: int = 1
    """Logical mode with ``nearest``: up to this many like requests of a batch share one set of nearest examples
    (:meth:`~.examples.ExamplePool.nearest_groups`), which a batched engine then prefills once for the group
    (llama.cpp's decoder keeps a group's part in a sequence of its own; vLLM's prefix cache shares it). A
    request's examples then depend on the other requests of its batch."""
    pool: ExamplePool | None = None
    """Where the shared examples come from (default: the labelled dev split shipped with the package); given
    without ``nearest_pool``, the nearest ones too."""
    nearest_pool: ExamplePool | str | os.PathLike | None = None
    """Where the nearest examples come from: a pool, ``"writers"`` (the outside writers' labelled requests shipped
    with the package: the default unless ``pool`` is given), ``"dev"`` or a JSON Lines file of ``text`` and
    ``expr``."""
    terms: str = "span"
    """Logical mode with the grammar: ``span`` (default) lets a term be only a phrase copied from the
    request (:func:`~.grammar.span_query_grammar`, one grammar per request); ``free``, any text."""
    progress: bool = False
    """Show a progress bar on stderr while a batch generates (``itlr translate`` does)."""
    lazy: bool = False
    """Resolve the model (its ``model_id``, the cache key) now but load it only when a request needs
    it: a rerun whose requests are all in the translation cache never loads the model."""
    backend_name: ClassVar[str] = "vllm"

    def __post_init__(self) -> None:
        if self.mode not in ("logical", "rewrite"):
            raise ValueError(f"mode must be 'logical' or 'rewrite', got {self.mode!r}")
        for name in ("examples", "nearest"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {v!r}")
        g = self.nearest_group
        if not isinstance(g, int) or isinstance(g, bool) or g < 1:
            raise ValueError(f"nearest_group must be a positive integer, got {g!r}")
        if self.terms not in TERMS:
            raise ValueError(f"terms must be one of {', '.join(TERMS)}, got {self.terms!r}")
        if self.mode != "logical":
            self.examples = self.nearest = 0
        if self.nearest and not isinstance(self.nearest_pool, ExamplePool):
            source = self.nearest_pool if self.nearest_pool is not None else (
                self.pool if self.pool is not None else "writers")
            self.nearest_pool = source if isinstance(source, ExamplePool) else load_pool(source)
        if self.examples and self.pool is None:
            self.pool = default_pool()
        self._shared = tuple(self.pool.representatives(self.examples)) if self.examples else ()
        self._grammar_text = _grammar.gbnf(self.mode) if self.use_grammar else None
        self._tokenizer = None
        self._head: str | None = None
        if self.llm is None:
            if self.lazy:
                self._identify()
            else:
                self._start_engine()
        else:
            self._tokenizer = _get_tokenizer(self.llm)
            if self.model_id is None:
                self.model_id = f"{self.backend_name}:{type(self.llm).__name__}"

    def context_ceiling(self) -> int | None:
        """The most tokens one request can take whatever --max-model-len says (None: --max-model-len decides)."""
        return None

    # -- engine -------------------------------------------------------------------------

    def _identify(self) -> Path:
        """The model's folder, resolved (converted once if needed), and ``model_id`` from it."""
        from .models import NeedsConversion, resolve_model

        try:
            # a GGUF is converted only where vLLM can use it (without vLLM: its own error, not a conversion's)
            folder = resolve_model(self.model, self.cache_dir, convert=_vllm_installed())
        except NeedsConversion:
            raise _no_vllm() from None
        except InputError:
            # a registered model not installed, and no vLLM either: vLLM is the first thing to install (its
            # environment brings the default model); a folder of the user's own keeps its error, and with the
            # model there a lazy translator still serves cached translations without vLLM
            named = self.model is None or not Path(str(self.model)).exists()
            if named and not _vllm_installed():
                raise _no_vllm() from None
            raise
        self.model_id = f"vllm:{folder.name}@{_fingerprint(folder)}"
        return folder

    def _start_engine(self) -> None:
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        try:
            from vllm import LLM
        except ImportError as e:
            if e.name != "vllm":   # vLLM is there but does not load (a library of its own is missing): its error
                raise
            raise _no_vllm() from e
        folder = self._identify()

        cpu = _cpu_only()
        kw: dict[str, Any] = dict(model=str(folder), seed=self.seed if self.seed is not None else 0)
        if self.dtype is not None:
            kw["dtype"] = self.dtype
        elif cpu:  # bf16 without native CPU support is ~3x slower than fp32 (measured, issue 11)
            kw["dtype"] = "float32"
        if self.max_model_len is not None:
            trained = context_length(folder)
            if trained is not None and trained < self.max_model_len:
                self.max_model_len = trained  # the model's own window bounds prompt + generation
            kw["max_model_len"] = self.max_model_len
        if self.gpu_memory_utilization is not None:
            kw["gpu_memory_utilization"] = self.gpu_memory_utilization
        elif cpu and not os.environ.get("VLLM_CPU_KVCACHE_SPACE") and "kv_cache_memory_bytes" not in self.engine_kwargs:
            kw["kv_cache_memory_bytes"] = cpu_kv_cache_bytes()
        if self.tensor_parallel_size is not None:
            kw["tensor_parallel_size"] = self.tensor_parallel_size
        eager = self.enforce_eager if self.enforce_eager is not None else cpu
        kw["enforce_eager"] = eager
        kw.update(self.engine_kwargs)
        self.llm = LLM(**kw)
        self._tokenizer = _get_tokenizer(self.llm)

    def sampling_params(self, grammar: str | None, max_tokens: int):
        """The engine's sampling parameters for one ``generate`` call."""
        return make_sampling_params(grammar, max_tokens, self.temperature, self.seed)

    @property
    def prompt_version(self) -> str:
        """Everything but the model that changes outputs (for the cache key)."""
        spans = "span1:" if self._spans else ""   # span1: terms are request phrases (grammar.span_terms)
        h = hashlib.sha1((spans + (self._grammar_text or "no-grammar")).encode()).hexdigest()[:8]
        retry = "r" if self.retry_truncated else "-"
        # a1: logical terms aligned with the request's words (spans.py); older cached rows are not
        align = ":a1" if self.mode == "logical" else ""
        # (the shared examples' pool, then the nearest ones' where it is another: a key cached before the
        # pools were two still names the rows of a run with one pool)
        first = self.pool if self.examples else self.nearest_pool
        near = (f"+{self.nearest_pool.fingerprint}" if self.nearest and self.examples
                and self.nearest_pool is not self.pool else "")
        group = f"x{self.nearest_group}" if self.nearest and self.nearest_group > 1 else ""
        shots = (f":e={self.examples}:k={self.nearest}{group}@{first.fingerprint}{near}"
                 if self.examples or self.nearest else "")
        return (f"{PROMPT_VERSION}:{prompt_fingerprint(self.mode)}:g={h}:t={self.temperature}:n={self.max_tokens}"
                f":s={self.seed}:{retry}{align}{shots}:{CHECKS_VERSION}"
                + (f":{REWRITE_CHECKS_VERSION}" if self.mode == "rewrite" else ""))

    # -- translation --------------------------------------------------------------------

    @property
    def _spans(self) -> bool:
        return self.use_grammar and self.mode == "logical" and self.terms == "span"

    def _grammar_rules(self, text: str, base: dict | None = None, max_phrases: int = _grammar.MAX_PHRASES) -> dict:
        """The logical grammar's rules for one request: its span grammar over ``base`` (default
        :data:`~.grammar.QUERY_GRAMMAR`; a bounded one on retries) with ``terms="span"``, else ``base``."""
        if self._spans:
            try:
                return _grammar.span_query_grammar(clean_request(text), base, max_phrases)
            except ValueError:  # no word to copy (e.g. only quotes): any term
                pass
        return base if base is not None else _grammar.QUERY_GRAMMAR

    def _max_tokens_for(self, text: str) -> int:
        """``max_tokens``, or with span terms enough to copy a long request whole: its own tokens,
        a quarter more for quotes and operators, and 16 (a long argument translates into terms as
        long as itself; a cut-off generation would be retried with far fewer terms)."""
        if not self._spans or self._tokenizer is None:
            return self.max_tokens
        try:
            own = len(self._tokenizer.encode(clean_request(text)))
        except Exception:
            return self.max_tokens
        return max(self.max_tokens, own + own // 4 + 16)

    def grammar_for(self, text: str) -> str | None:
        """The decoding grammar (GBNF) for one request: its own with ``terms="span"``, else the shared one."""
        return _grammar.to_gbnf(self._grammar_rules(text)) if self._spans else self._grammar_text

    def prompt(self, text: str, near: Sequence[tuple[str, str]] | None = None) -> str:
        """``text``'s prompt, with ``near`` as its nearest examples (default: its own, when ``nearest`` is set)."""
        if near is None:
            near = self.nearest_pool.nearest(clean_request(text), self.nearest) if self.nearest else ()
        return build_prompt(text, self.mode, self._tokenizer, self._shared, near)

    def _grouped(self, texts: Sequence[str]) -> tuple[list[int], dict[int, list[tuple[str, str]]]]:
        """The order to send ``texts`` in and each one's nearest examples: a group's members together (so that
        the engine sees their shared part back to back), each with its group's examples; the texts in their own
        order and no examples (each request then chooses its own) without groups."""
        if not (self.nearest and self.nearest_group > 1):
            return list(range(len(texts))), {}
        live = [i for i, t in enumerate(texts) if text_error(t) is None]
        groups = self.nearest_pool.nearest_groups([clean_request(texts[i]) for i in live], self.nearest,
                                                  self.nearest_group)
        order = [live[m] for members, _ in groups for m in members]
        near = {live[m]: examples for members, examples in groups for m in members}
        return order + [i for i in range(len(texts)) if i not in near], near

    def shared_head(self) -> str:
        """The start of every request's prompt: the system text and the shared examples, up to where the
        request's own examples or text begin."""
        if self._head is None:
            a, b = (build_prompt(t, self.mode, self._tokenizer, self._shared) for t in ("alpha", "zebra"))
            n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            # without a trailing space: a tokenizer joins it to the request's first word
            self._head = a[:n].rstrip(" ")
        return self._head

    def generate(self, texts: Sequence[str],
                 on_result: Callable[[int, GenResult], None] | None = None) -> list[GenResult]:
        """Translate ``texts`` with one ``generate`` call (split only if it raises).  ``on_result(i, r)``
        once per text as soon as its result is final: with an engine that reports each output as it
        finishes (llama.cpp), while the batch still runs, so a caller can store finished rows of a
        long job before it ends."""
        if self.llm is None and any(text_error(t) is None for t in texts):
            self._start_engine()   # lazy: the first request the model must see loads it
        retry = self.retry_truncated and (self.mode == "rewrite" or self.use_grammar)
        results: list[GenResult | None] = [None] * len(texts)
        sent: set[int] = set()

        def notify(i: int, final: bool = False) -> None:
            # a cut-off generation is final only once its retry (if any) is done
            r = results[i]
            if on_result is not None and i not in sent and r is not None and (final or not (r.truncated and retry)):
                sent.add(i)
                on_result(i, r)

        if self.max_model_len and self._tokenizer is not None and any(text_error(t) is None for t in texts):
            # every prompt starts with the shared head and leaves room for max_tokens: a window below that
            # fails every request, an option value that cannot work rather than a batch of error rows
            least = self._prompt_tokens(self.shared_head()) + self.max_tokens
            if least > self.max_model_len:
                raise UsageError(f"max_model_len {self.max_model_len} is below what every request needs: "
                                 f"{least - self.max_tokens} tokens of the prompt's shared part and "
                                 f"{self.max_tokens} of translation", "--max-model-len",
                                 f"at least {least}, or fewer --examples")
        prompts: list[str | None] = []
        budgets = [self.max_tokens] * len(texts)
        order, group_examples = self._grouped(texts)
        for i, t in enumerate(texts):
            error = text_error(t)
            if error is not None:
                results[i] = GenResult(error=error)
                prompts.append(None)
                continue
            p = self.prompt(t, group_examples.get(i))
            budgets[i] = self._max_tokens_for(t)
            limit = (self.max_model_len - budgets[i]) if self.max_model_len else None
            if limit is not None and self._tokenizer is not None:
                n = self._prompt_tokens(p)
                if n > limit:
                    hint, alone = "; raise --max-model-len", n
                    if self.examples or self.nearest:   # fewer examples help only if the request alone fits
                        try:
                            alone = len(self._tokenizer.encode(build_prompt(t, self.mode, self._tokenizer)))
                        except Exception:
                            alone = n
                        if alone <= limit:
                            hint = (f"; {self.examples + self.nearest} examples are part of it: lower --examples "
                                    "(or --nearest) or raise --max-model-len")
                        else:
                            hint = f"; the request alone takes {alone} tokens: raise --max-model-len"
                    ceiling = self.context_ceiling()
                    if ceiling is not None and alone > limit and alone + budgets[i] > ceiling:
                        hint = (f"; the model's context holds at most {ceiling:,} tokens, so no --max-model-len "
                                "helps: shorten the request, or search with the text whole (--field text)")
                    results[i] = GenResult(error=f"prompt is {n} tokens long: with up to {budgets[i]} tokens of "
                                                 f"translation it exceeds max_model_len {self.max_model_len}{hint}")
                    prompts.append(None)
                    continue
            prompts.append(p)
        todo = [i for i in order if prompts[i] is not None]
        if self._spans:
            params: Any = [self.sampling_params(self.grammar_for(texts[i]), budgets[i]) if p is not None
                           else None for i, p in enumerate(prompts)]
        else:
            params = self.sampling_params(self._grammar_text, self.max_tokens)
        self._run(todo, prompts, params, results, texts, notify)
        if retry and self.mode == "rewrite":
            self._retry_truncated_rewrite(prompts, results, texts, notify)
        elif retry:
            self._retry_truncated(prompts, results, texts, notify)
        results = [r if r is not None else GenResult(error="no generation") for r in results]
        for i in range(len(results)):
            notify(i, final=True)
        return results

    def _retry_truncated(self, prompts: list, results: list, texts: Sequence[str], notify=None) -> None:
        """Generations cut at ``max_tokens`` are retried once with a *finite* sub-grammar
        (:func:`~.grammar.bounded_query_grammar`) whose longest string fits in the new
        ``max_tokens``: the retry cannot be cut off, so with the grammar every finished
        row parses."""
        cut = [i for i, r in enumerate(results) if r is not None and r.truncated]
        if not cut:
            return
        params: list[Any] = [None] * len(prompts)
        for i in cut:
            n = self._prompt_tokens(prompts[i])
            room = (self.max_model_len - n) if self.max_model_len else 4096
            for shape in _FALLBACK_SHAPES:
                # one phrase per term: a joined pair doubles the bound, which a long request's room cannot hold
                rules = self._grammar_rules(texts[i], _grammar.bounded_query_grammar(*shape), max_phrases=1)
                budget = _grammar.max_length(rules)
                if budget <= room:
                    params[i] = self.sampling_params(_grammar.to_gbnf(rules), budget)
                    break
        self._run([i for i in cut if params[i] is not None], prompts, params, results, texts, notify)

    def _prompt_tokens(self, prompt: str) -> int:
        """The prompt's length in tokens, for the window check and a retry's budget (0 where the tokenizer is
        unknown or fails)."""
        try:
            return len(self._tokenizer.encode(prompt)) if self._tokenizer is not None else 0
        except Exception:   # noqa: BLE001 -- a budget estimate: the engine still checks the real length
            return 0

    def _retry_truncated_rewrite(self, prompts: list, results: list, texts: Sequence[str], notify=None) -> None:
        """A rewrite cut at ``max_tokens`` is generated once more with room for the longest rewrite kept
        (``MAX_REWRITE_CHARS``, at least one character a token) where the context holds it; cut again, it stays
        an error row."""
        cut = [i for i, r in enumerate(results) if r is not None and r.truncated]
        params: list[Any] = [None] * len(prompts)
        for i in cut:
            n = self._prompt_tokens(prompts[i])
            budget = min(MAX_REWRITE_CHARS, (self.max_model_len - n) if self.max_model_len else MAX_REWRITE_CHARS)
            if budget > self.max_tokens:
                params[i] = self.sampling_params(self._grammar_text, budget)
        self._run([i for i in cut if params[i] is not None], prompts, params, results, texts, notify)

    def _run(self, idx: list[int], prompts: list, params, results: list, texts: Sequence[str], notify=None) -> None:
        if not idx:
            return
        # params: one for every prompt, or a list with each prompt's own (span grammars)
        these = [params[i] for i in idx] if isinstance(params, list) else params
        streamed: set[int] = set()

        def take(j: int, out: Any) -> None:   # output j of this call -> request idx[j]'s result
            i = idx[j]
            try:
                comp = out.outputs[0]
                results[i] = interpret(comp.text, getattr(comp, "finish_reason", None), self.mode, texts[i])
            except Exception as e:  # noqa: BLE001
                results[i] = GenResult(error=f"bad engine output: {type(e).__name__}: {e}")
            if notify is not None:
                notify(i)

        def streaming(j: int, out: Any) -> None:
            streamed.add(j)
            take(j, out)

        kw: dict[str, Any] = {"use_tqdm": self.progress}
        if getattr(self.llm, "streams_outputs", False):
            kw["on_output"] = streaming
        if getattr(self.llm, "takes_head", False):
            kw["head"] = self.shared_head()
        try:
            outs = self.llm.generate([prompts[i] for i in idx], these, **kw)
        except TypeError:
            try:
                outs = self.llm.generate([prompts[i] for i in idx], these)
            except Exception as e:  # noqa: BLE001 - split and retry below
                return self._split(idx, prompts, params, results, texts, e, notify)
        except Exception as e:  # noqa: BLE001
            return self._split(idx, prompts, params, results, texts, e, notify)
        if len(outs) != len(idx):
            return self._split(idx, prompts, params, results, texts,
                               RuntimeError(f"engine returned {len(outs)} outputs for {len(idx)} prompts"), notify)
        for j, out in enumerate(outs):
            if j not in streamed:
                take(j, out)

    def _split(self, idx, prompts, params, results, texts, exc: Exception, notify=None) -> None:
        if len(idx) == 1:
            results[idx[0]] = GenResult(error=f"generation failed: {type(exc).__name__}: {str(exc)[:200]}")
            return
        mid = len(idx) // 2
        self._run(idx[:mid], prompts, params, results, texts, notify)
        self._run(idx[mid:], prompts, params, results, texts, notify)


def _get_tokenizer(llm: Any):
    try:
        return llm.get_tokenizer()
    except Exception:
        return None
