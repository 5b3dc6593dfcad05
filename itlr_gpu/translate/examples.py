"""Few-shot examples from a pool of labelled pairs, chosen by the request's connective pattern.

The misses of a fixed few-shot prompt are mostly about conventions that depend on the request's
connective pattern, not its topic: whether the qualifier after "either X or Y for Z" belongs to
the last term, whether "excluding A and B" negates each, whether "other than" is a negation.
A request's *skeleton* keeps its connective and function words and collapses every run of
content words to one slot::

    "either chemotherapy or radiotherapy for breast cancer" -> "either _ or _ for _"

Skeletons are compared as idf-weighted n-gram vectors (cosine; shared content words break ties).
Three selections:

* :meth:`ExamplePool.representatives`: m pairs covering the pool's patterns (greedy k-center), the
  same for every request, so they sit in the prompt's shared prefix and batched engines prefill
  them once (the translator's default, ``examples``);
* :meth:`ExamplePool.nearest`: the k pairs most like one request, in that request's own prompt
  (``nearest``): more accurate, but each request prefills them itself;
* :meth:`ExamplePool.nearest_groups`: k pairs for each group of like requests of a batch (``nearest_group``),
  prefilled once per group: most of the nearest pairs' gain at a fraction of their cost.

Two pools ship with the package, and the test split of the labelled set is never a source of examples:
``data/examples.jsonl`` (:func:`default_pool`: the labelled set's *dev* split, 233 pairs) gives the shared
examples, and ``data/writers.jsonl.gz`` (:func:`writers_pool`: the outside writers' labelled requests, built by
``scripts/build_writers_pool.py``) the nearest ones: with 16,000 requests in every style the writers were
asked for, the nearest pairs are close to most requests (held out: the 1.5B model with 4 of them read 213 of
480 requests of four later writers as labelled, against 172 with the shared examples alone).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

import numpy as np

__all__ = ["ExamplePool", "default_pool", "load_pool", "skeleton", "writers_pool"]

FUNCTION_WORDS = frozenset("""
a an the and or not nor neither either both but except excluding exclude without other than rather instead
as well also plus along together none no nothing any anything everything all only unless apart besides
aside save else whether versus vs of for in on with about at to by from into over under between among
against within via per that which who whom whose what when where how why is are was were be been does do
did doesn't don't isn't aren't can could should would will may might must i we you me my our your it its
this these those find search show give get list want need looking look some more most less such
documents document papers paper articles article studies study texts text reports report research
mention mentions mentioning discuss discusses discussing about concerning regarding related
""".split())
"""Words kept in a skeleton: connectives, prepositions, determiners, auxiliaries and request words."""

_TOKEN = re.compile(r"[\w'’]+|[^\w\s]")
_SLOT = "_"
MAX_EXAMPLE_CHARS = 400
"""Longer pool entries are never shown (a long argument costs hundreds of prompt tokens)."""
GROUP_WINDOW = 512
"""How many unplaced requests :meth:`ExamplePool.nearest_groups` compares with a group's first (its cost grows
with the batch times this, not with the batch squared)."""


def skeleton(text: str) -> list[str]:
    """The request's function words and punctuation, each run of other words as one ``_``."""
    out: list[str] = []
    for tok in _TOKEN.findall(text.lower().replace("’", "'")):
        if tok in FUNCTION_WORDS or not tok[0].isalnum():
            out.append(tok)
        elif not out or out[-1] != _SLOT:
            out.append(_SLOT)
    return out


def _features(text: str) -> Counter:
    sk = ["<s>", *skeleton(text), "</s>"]
    feats: Counter = Counter()
    for n in (1, 2, 3):
        for i in range(len(sk) - n + 1):
            feats[" ".join(sk[i:i + n])] += 1
    return feats


def _content(text: str) -> frozenset[str]:
    return frozenset(t for t in _TOKEN.findall(text.lower()) if t[0].isalnum() and t not in FUNCTION_WORDS)


def _norm(v: dict[str, float]) -> float:
    return math.sqrt(sum(x * x for x in v.values()))


def _same_text_key(text: str) -> str:
    """A request ignoring case and spacing: the one :meth:`ExamplePool.nearest` never returns to itself."""
    return " ".join(text.lower().split())


def _cosine(a: dict[str, float], na: float, b: dict[str, float], nb: float) -> float:
    if len(a) > len(b):  # iterate over the smaller
        a, b = b, a
    dot = sum(v * b.get(k, 0.0) for k, v in a.items())
    return dot / (na * nb) if na and nb else 0.0


@dataclass(frozen=True)
class _Entry:
    text: str
    expr: str
    feats: dict[str, float]
    norm: float
    words: frozenset[str]
    key: str  # the request compared for identity (:func:`_same_text_key`)


class ExamplePool:
    """Labelled (request, query) pairs and their skeleton features; :meth:`nearest` picks examples."""

    def __init__(self, pairs: list[tuple[str, str]]):
        self.pairs = [(t, e) for t, e in pairs if len(t) <= MAX_EXAMPLE_CHARS]
        feats = [_features(t) for t, _ in self.pairs]
        df = Counter(k for f in feats for k in f)
        # idf: a feature every request has ("<s> _") says nothing about the convention
        self._idf = {k: math.log((1 + len(feats)) / (1 + n)) + 1.0 for k, n in df.items()}
        self._entries = []
        for (t, e), f in zip(self.pairs, feats):
            w = self._weigh(f)
            self._entries.append(_Entry(t, e, w, _norm(w), _content(t), _same_text_key(t)))
        self.fingerprint = hashlib.sha1(json.dumps(self.pairs).encode()).hexdigest()[:8]
        self._inverted: tuple | None = None

    def _weigh(self, feats: Counter) -> dict[str, float]:
        unseen = math.log(1 + len(self.pairs)) + 1.0
        return {k: v * self._idf.get(k, unseen) for k, v in feats.items()}

    def __len__(self) -> int:
        return len(self._entries)

    def representatives(self, m: int) -> list[tuple[str, str]]:
        """``m`` pairs that cover the pool's connective patterns: greedy k-center over skeleton
        similarity, starting from the most central pair and adding, each time, the pair least like
        any chosen so far. Returned last-chosen first, so the most central pair ends the list."""
        n = len(self._entries)
        m = min(m, n)
        if m <= 0:
            return []
        e = self._entries
        sim = [[_cosine(a.feats, a.norm, b.feats, b.norm) for b in e] for a in e]
        first = max(range(n), key=lambda i: (sum(sim[i]), -i))
        chosen, cover = [first], list(sim[first])
        while len(chosen) < m:
            nxt = min((j for j in range(n) if j not in chosen), key=lambda j: (cover[j], j))
            chosen.append(nxt)
            cover = [max(c, x) for c, x in zip(cover, sim[nxt])]
        return [(e[i].text, e[i].expr) for i in reversed(chosen)]

    def _index(self) -> tuple[dict[str, tuple[np.ndarray, np.ndarray]], dict[str, np.ndarray], np.ndarray,
                              dict[str, list[int]]]:
        """Inverted lists, built on first use: per skeleton feature the pairs holding it and their weight over
        their vector's norm; per content word the pairs holding it; each pair's number of content words; the
        pairs per request key."""
        if self._inverted is None:
            feats: dict[str, tuple[list[int], list[float]]] = {}
            words: dict[str, list[int]] = {}
            keys: dict[str, list[int]] = {}
            for i, e in enumerate(self._entries):
                for k, v in e.feats.items():
                    ids, ws = feats.setdefault(k, ([], []))
                    ids.append(i)
                    ws.append(v / e.norm if e.norm else 0.0)
                for w in e.words:
                    words.setdefault(w, []).append(i)
                keys.setdefault(e.key, []).append(i)
            self._inverted = ({k: (np.array(i, dtype=np.int64), np.array(w)) for k, (i, w) in feats.items()},
                              {w: np.array(i, dtype=np.int64) for w, i in words.items()},
                              np.array([len(e.words) for e in self._entries], dtype=np.float64), keys)
        return self._inverted

    def _scores(self, text: str) -> np.ndarray:
        """Each pair's likeness to ``text``: skeleton cosine, plus a tenth of the content words' overlap (a tie
        breaker); ``-inf`` for a pair whose request equals ``text`` (ignoring case and spacing).  The same sums
        as :func:`_cosine` and a Jaccard overlap pair by pair, taken over the inverted lists."""
        feats, words, n_words, keys = self._index()
        f = self._weigh(_features(text))
        nf = _norm(f)
        out = np.zeros(len(self._entries))
        if nf:
            for k, v in f.items():
                if k in feats:
                    ids, ws = feats[k]
                    out[ids] += (v / nf) * ws
        mine = _content(text)
        shared = np.zeros(len(self._entries))
        for w in mine:
            if w in words:
                shared[words[w]] += 1.0
        union = len(mine) + n_words - shared
        out += 0.1 * np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
        out[keys.get(_same_text_key(text), [])] = -np.inf
        return out

    def _best(self, scores: np.ndarray, k: int, first: Sequence[int] = ()) -> list[tuple[str, str]]:
        """The ``k`` best-scored pairs, least similar first (ties: pool order); never a ``-inf`` one.  The pairs
        ``first`` names come before the others (the best scored of them where they are more than ``k``)."""
        order = np.lexsort((np.arange(len(scores)), -scores))   # best first, ties in pool order
        order = order[np.isfinite(scores[order])]
        rank = np.empty(len(scores), dtype=np.int64)
        rank[order] = np.arange(len(order))
        best = sorted({int(i) for i in first if np.isfinite(scores[i])}, key=lambda i: rank[i])[:k]
        taken = set(best)
        best += [int(i) for i in order[:k + len(taken)] if int(i) not in taken][:k - len(best)]
        best.sort(key=lambda i: rank[i])
        return [(self._entries[i].text, self._entries[i].expr) for i in reversed(best)]

    def nearest(self, text: str, k: int) -> list[tuple[str, str]]:
        """The ``k`` pairs most like ``text``, least similar first (the closest sits next to the
        request); a pair whose request equals ``text`` (ignoring case and spacing) is never chosen."""
        if k <= 0 or not self._entries:
            return []
        return self._best(self._scores(text), k)

    def nearest_groups(self, texts: list[str], k: int, size: int,
                       window: int = GROUP_WINDOW) -> list[tuple[list[int], list[tuple[str, str]]]]:
        """``texts`` in groups of at most ``size`` like requests, each with ``k`` pairs for the whole group: each
        member's closest pair (by :meth:`nearest`'s score) and then the pairs with the highest sum of scores over
        the members (where the members' closest are more than ``k``, those of the highest sum); none equal to a
        member's request.

        A batched engine prefills a group's examples once for all its members instead of once per request.
        Groups are formed greedily over the requests in a fixed order (by skeleton, then text): the first
        request not yet placed takes the ``size - 1`` most like it among the next ``window`` unplaced ones.
        So the groups, and a request's examples, depend on the other requests of the batch (but not on their
        order). Returns ``(member indices, examples)`` per group, the groups in that fixed order."""
        if size < 1:
            raise ValueError(f"group size must be >= 1, got {size}")
        order = sorted(range(len(texts)), key=lambda i: (skeleton(texts[i]), _same_text_key(texts[i]), i))
        weighed = {i: self._weigh(_features(texts[i])) for i in order}
        norms = {i: _norm(f) for i, f in weighed.items()}
        words = {i: _content(texts[i]) for i in order}

        def like(a: int, b: int) -> float:
            union = words[a] | words[b]
            overlap = len(words[a] & words[b]) / len(union) if union else 0.0
            return _cosine(weighed[a], norms[a], weighed[b], norms[b]) + 0.1 * overlap

        left = list(order)
        out: list[tuple[list[int], list[tuple[str, str]]]] = []
        while left:
            seed = left[0]
            near = sorted(range(1, min(len(left), window + 1)), key=lambda p: (-like(seed, left[p]), p))[:size - 1]
            members = [seed, *(left[p] for p in sorted(near))]
            taken = set(members)
            left = [i for i in left if i not in taken]
            examples: list[tuple[str, str]] = []
            if k > 0 and self._entries:
                total = np.zeros(len(self._entries))
                own = []
                for m in members:
                    scores = self._scores(texts[m])
                    own.append(int(np.argmax(scores)))   # the first of equals: pool order
                    total += scores
                examples = self._best(total, k, first=own)
            out.append((members, examples))
        return out


def _shipped_pool(name: str) -> ExamplePool:
    """A pool shipped in ``data/``: JSON Lines of ``text`` and ``expr``, gzipped where the name says so."""
    raw = resources.files(__package__).joinpath(f"data/{name}").read_bytes()
    data = (gzip.decompress(raw) if name.endswith(".gz") else raw).decode("utf-8")
    rows = [json.loads(line) for line in data.splitlines() if line.strip()]
    return ExamplePool([(r["text"], r["expr"]) for r in rows])


@cache
def default_pool() -> ExamplePool:
    """The pool shipped with the package."""
    return _shipped_pool("examples.jsonl")


@cache
def writers_pool() -> ExamplePool:
    """The nearest examples' pool shipped with the package: the outside writers' labelled requests."""
    return _shipped_pool("writers.jsonl.gz")


def load_pool(source: str | os.PathLike) -> ExamplePool:
    """A pool by name (``writers``, ``dev``) or from a JSON Lines file of ``text`` and ``expr`` (a user's own
    labelled requests); a bad file is an :class:`~itlr_gpu.errors.InputError` naming the line."""
    if str(source) == "writers":
        return writers_pool()
    if str(source) == "dev":
        return default_pool()
    from ..errors import InputError
    from ..query import canonical, parse

    path = Path(source)
    where = "--nearest-from"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"no such file: {path}", where, "writers, dev or a JSON Lines file of text and expr") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {path}: {e}", where, "a UTF-8 JSON Lines file of text and expr") from None
    pairs = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            raise InputError(f"{path}, line {n}: not JSON ({e.msg})", where, "one JSON object per line") from None
        if not isinstance(row, dict) or not isinstance(row.get("text"), str) or not isinstance(row.get("expr"), str) \
                or not row["text"].strip():
            raise InputError(f"{path}, line {n}: needs a non-empty string 'text' and a string 'expr'", where,
                             'one object per line with "text" and "expr"')
        try:
            expr = canonical(parse(row["expr"]))
        except Exception as e:   # a syntax error or a bad term: the line and why
            raise InputError(f"{path}, line {n}: expr does not parse: {e}", where, "a query in the query language") \
                from None
        pairs.append((row["text"], expr))
    if not pairs:
        raise InputError(f"{path} holds no examples", where, "at least one line of text and expr")
    return ExamplePool(pairs)
