"""Score calibration and hybrid scoring: options on top of the fuzzy-logic composition.

The paper's ITLR score composes raw cosine similarities (AND=x*y, OR=x+y,
NOT=1-x).  Two known weaknesses: (1) terms have different similarity
distributions, so OR is dominated and AND is steered by whichever term scores
high (the paper calls calibration unsolved), and (2) without negation the
composed score loses to the whole query embedded as one text (0.76 vs 0.81
nDCG@10 on NFCorpus).  This module adds two cheap, kernel-friendly remedies:

**Per-term calibration** (``calibration=``) -- a monotone per-term transform of
the similarities whose constants come from each term's similarity distribution
over a fixed *document sample* (``sample_size`` rows evenly spaced over the
index, so results are deterministic and do not depend on the batch):

============== ==============================================================
``none``       raw cosine (the paper)
``equalize``   ``x' = mu_q + sd_q * (x - mu_t) / sd_t``: every term of a query is
               standardised against its own distribution (mean ``mu_t``, std
               ``sd_t`` over the sample), then mapped back onto the query's
               *average* raw scale (``mu_q``, ``sd_q`` = means of ``mu_t``,
               ``sd_t`` over the query's literals).  Terms become comparable
               while NOT keeps the strength it has on raw cosines -- the guard
               against a NOT that wipes out documents merely *related* to the
               negated term.  (Recommended.)
``zscore``     ``x' = (x - mu_t) / sd_t`` (naive; NOT = 1 - z is far too strong)
``minmax``     ``x' = (x - min_t) / (max_t - min_t)`` over the sample (naive)
``percentile`` ``x'`` = fraction of the sample with similarity <= x (naive;
               saturates at the top: NOT decides the whole ranking)
============== ==============================================================

Every mode is ``x' = A[q, p] * T_t(x) + B[q, p]`` for literal ``p`` of query
``q``: a per-term transform ``T_t`` (affine for all but ``percentile``, a
monotone lookup table there) followed by a per-(query, literal) affine.

**Negation guard** (``guard=True``) -- a document about the wanted topic is
also similar to a *related* negated topic, so NOT(x) = 1 - x removes exactly the
documents the query wants (on ArguAna, where negated queries come from the same
debate, raw ITLR falls far below the dense baseline).  The guard replaces each
negated literal's raw similarity ``x_b`` (a literal under an odd number of NOTs: ``NOT b``, each of
``NOT (b OR c)``; ``NOT NOT b`` is positive) by its part not explained by the query's
positive literals: ``x_b - beta_b * (x_p - mu_p)``, where ``x_p`` is the mean raw
similarity of the query's positive literals, ``mu_p`` its sample mean and
``beta_b = max(0, cov(x_b, x_p) / var(x_p))`` the regression slope over the
document sample.  Since similarities are linear in the embeddings this is the
same as scoring the negated term with the vector ``e_b - beta_b * mean(e_pos)``
(plus a constant): free in a kernel.  Queries without positive literals are
left unchanged.  Not combinable with ``percentile``.

**Hybrid** (``hybrid=alpha``) -- the whole query, embedded as one text, is
brought back in as a final mix::

    score = alpha * (L - mu_L) / sd_L + (1 - alpha) * (W - mu_W) / sd_W

``L`` is the (calibrated) logical score, ``W`` the cosine similarity of the
whole-query embedding, and ``mu``/``sd`` their mean and standard deviation over
the same document sample: both are standardised so the mix weight means the
same thing for every query shape (a 3-way product and a 2-way sum live on very
different scales).  Per query it is one fused multiply-add on two scores:
``a_q * L + b_q * W + c_q``.  ``alpha=1`` ranks exactly like the logical score,
``alpha=0`` exactly like the dense baseline.

``neg_hybrid`` (default: same as ``hybrid``) is the weight used for queries
that contain a NOT: a whole-query embedding cannot express negation (it pulls
the negated topic *in*), so a larger logical weight is the principled choice
there: at the shared 0.5, "A AND NOT B" with B common among A's documents held
more of B in its top 10 than "A" alone (benchmarks/exclusion.py), while 0.7 keeps
the whole query's help on the real-data compositions.  ``conj_hybrid``
(default: same as ``hybrid``) is the weight for *pure conjunctions* (no NOT, no
OR): the one shape a whole-text embedding does express -- a text naming two topics
sits near documents about both -- so there the whole-query similarity deserves
more of the mix (on NFCorpus conjunctions of two related queries it beats every
composition of the separate terms).  The shipped recommendation is
:data:`RECOMMENDED`.

**OR as max** (``or_max=True``) -- OR takes the larger of its two (calibrated)
operands instead of their sum.  With a sum, a document that matches *both*
branches moderately beats one that matches one branch well, while an OR asks
for either; after ``equalize`` the operands are on one scale, so the max is a
fair comparison.  (The paper's Table 2 ablation also prefers max with raw
cosines on its synthetic data.)  ``and_min=True`` likewise replaces AND's
product by the min (measured: worse; kept for the ablation).

**Adaptive hybrid** (``adaptive=True``, needs ``hybrid``) -- the whole-query
weight ``1 - alpha`` is multiplied by ``clamp(rho_q, 0, 1)``, ``rho_q`` the
correlation over the document sample of the two standardised scores: a
whole-query embedding that disagrees with the logic (negations, poor
renderings) gets little weight.  Still one ``a_q * L + b_q * W + c_q`` per query.

**Spreads at float32 rounding level** carry no information (a term orthogonal
to the sample, ``a OR NOT a``): every standardisation above uses
:func:`inverse_spread`, which gives such a score weight 0 instead of dividing
float32 rounding by a floor (the threshold is relative to the values' size, so
a deep product of small cosines still counts) (a constant logical score leaves the hybrid ranking
to the whole query; a constant positive mean gives the guard no slope).

Everything is float32 torch (CPU or CUDA); :func:`score_dense` is the
unchunked definition the tests check against numpy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import numpy as np
import torch

from .compiler import AND, NOT, OR, PUSH, Program, run_postfix
from .errors import InputError
from .ops import Ops
from .plan import plan_groups

__all__ = ["CALIBRATIONS", "ScoreOptions", "RECOMMENDED", "Prepared", "LinearScoring", "sample_rows", "document_sample",
           "prepare", "prepare_options", "linearize_options", "linearize", "linear_coefficients", "score_chunk_linear",
           "score_chunk_options", "score_dense"]

CALIBRATIONS = ("none", "equalize", "zscore", "minmax", "percentile")
DEFAULT_SAMPLE = 4096
SPREAD_ABS = 1e-7   # float32 rounding of a dot product of unit vectors is ~1e-8
SPREAD_REL = 1e-6   # float32 rounding of a composed score is ~1e-7 of its size (one unit in the last place: 1.2e-7);
# NOT of a long AND sits at 1 - 1e-5 and ranks by a spread of ~2e-6 (about 20 units), which 1e-5 threw away
PERCENTILE_EPS = 1e-6


@dataclass(frozen=True)
class ScoreOptions:
    """Scoring options; all off by default (the paper's raw composition).

    ``hybrid``: weight of the logical score in the final mix with the
    whole-query similarity, in [0, 1] (None: no mix).  ``neg_hybrid``: the weight
    for queries containing NOT, ``conj_hybrid`` for pure conjunctions (no NOT, no OR)
    (None: same as ``hybrid``).  ``calibration``: one of
    :data:`CALIBRATIONS` (None = ``"none"``).  ``sample_size``: documents in the
    statistics sample (the whole index when smaller).
    """

    hybrid: float | None = None
    calibration: str | None = None
    neg_hybrid: float | None = None
    conj_hybrid: float | None = None
    sample_size: int = DEFAULT_SAMPLE
    guard: bool = False
    or_max: bool = False
    and_min: bool = False
    adaptive: bool = False

    def __post_init__(self) -> None:
        for name in ("hybrid", "neg_hybrid", "conj_hybrid"):
            v = getattr(self, name)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                    or not math.isfinite(float(v)) or not 0.0 <= float(v) <= 1.0:
                raise InputError(f"{name}={v!r}", name, "a number in [0, 1] or None")
            object.__setattr__(self, name, float(v))
        if self.neg_hybrid is not None and self.hybrid is None:
            raise InputError("neg_hybrid given without hybrid", "neg_hybrid", "hybrid set as well")
        if self.conj_hybrid is not None and self.hybrid is None:
            raise InputError("conj_hybrid given without hybrid", "conj_hybrid", "hybrid set as well")
        cal = self.calibration
        if cal is not None:
            if not isinstance(cal, str) or cal.strip().lower() not in CALIBRATIONS:
                raise InputError(f"unknown calibration {cal!r}", "calibration", " or ".join(CALIBRATIONS))
            cal = cal.strip().lower()
            object.__setattr__(self, "calibration", None if cal == "none" else cal)
        if not isinstance(self.guard, (bool, np.bool_)):
            raise InputError(f"guard={self.guard!r}", "guard", "True or False")
        if self.guard and self.calibration == "percentile":
            raise InputError("guard cannot be combined with percentile calibration", "guard",
                             "calibration none, equalize, zscore or minmax")
        object.__setattr__(self, "guard", bool(self.guard))
        for name in ("or_max", "and_min", "adaptive"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InputError(f"{name}={getattr(self, name)!r}", name, "True or False")
            object.__setattr__(self, name, bool(getattr(self, name)))
        if self.adaptive and self.hybrid is None:
            raise InputError("adaptive given without hybrid", "adaptive", "hybrid set as well")
        if isinstance(self.sample_size, bool) or not isinstance(self.sample_size, (int, np.integer)) \
                or self.sample_size < 2:
            raise InputError(f"sample_size={self.sample_size!r}", "sample_size", "an integer >= 2")

    def override(self, **changes) -> "ScoreOptions":
        """These options with the given fields replaced; a None value leaves its field as it is."""
        given = {k: v for k, v in changes.items() if v is not None}
        return replace(self, **given) if given else self

    @property
    def active(self) -> bool:
        return self.hybrid is not None or self.calibration is not None or self.guard or self.or_max or self.and_min

    def weight(self, has_not: bool, has_or: bool = False) -> float | None:
        """The logical score's weight in the hybrid mix for a query with / without NOT and OR:
        ``neg_hybrid`` with a NOT, ``conj_hybrid`` for a pure conjunction (neither NOT nor OR),
        ``hybrid`` otherwise (and wherever the specific weight is None)."""
        if self.hybrid is None:
            return None
        if has_not:
            return self.hybrid if self.neg_hybrid is None else self.neg_hybrid
        if not has_or:
            return self.hybrid if self.conj_hybrid is None else self.conj_hybrid
        return self.hybrid

    def __str__(self) -> str:
        parts = [f"calibration={self.calibration or 'none'}"] + (["guard"] if self.guard else [])
        parts += ["or_max"] if self.or_max else []
        parts += ["and_min"] if self.and_min else []
        if self.hybrid is not None:
            parts.append(f"hybrid={self.hybrid:g}")
            if self.neg_hybrid is not None:
                parts.append(f"neg_hybrid={self.neg_hybrid:g}")
            if self.conj_hybrid is not None:
                parts.append(f"conj_hybrid={self.conj_hybrid:g}")
            if self.adaptive:
                parts.append("adaptive")
        return ",".join(parts)


RECOMMENDED = ScoreOptions(hybrid=0.5, calibration="equalize", guard=True, or_max=True, conj_hybrid=0.1,
                           neg_hybrid=0.7)
"""The recommended configuration: equal weight on the standardised logical and whole-query scores
(the prior-free choice), terms equalised, the negation guard on, OR as the max of the equalised operands,
pure conjunctions left mostly to the whole-query similarity (logical weight 0.1), which expresses them, and
queries with a NOT mostly to the logic (0.7), since the whole query's embedding pulls the excluded topic in.
Selected on dev splits among the configurations whose NOT excludes (benchmarks/results/quality/report.md)."""


def informative(spread, center):
    """Whether a spread over the sample is above float32 rounding: ``spread >= max(SPREAD_ABS,
    SPREAD_REL * |center|)`` (``center``: the values' mean).  Relative, because a product of five
    cosines lives around 1e-4 and still ranks, and so does 1 minus it; absolute, because rounding around 0 is
    not relative.  A spread just above it is standardised with its rounding: two paths to the same score
    (search and rerank) may then differ by about ``1.2e-7 * |center| / spread`` of the standardised value."""
    return spread >= torch.clamp_min(SPREAD_REL * torch.abs(center), SPREAD_ABS)


def inverse_spread(spread: torch.Tensor, center: torch.Tensor) -> torch.Tensor:
    """``1 / spread`` where the spread carries information (:func:`informative`), 0 where it does not.

    A score that is constant over the sample (a term orthogonal to every document, ``a OR NOT a``)
    has a spread made of float32 rounding; dividing by it (or by any floor) would turn that rounding
    into ranking.  Weight 0 says what it is: this score cannot rank, so it does not take part."""
    return torch.where(informative(spread, center), 1.0 / spread.clamp_min(SPREAD_ABS), torch.zeros_like(spread))


def sample_rows(n: int, size: int) -> np.ndarray:
    """``min(n, size)`` row indices evenly spaced over ``0..n-1`` (deterministic)."""
    if n <= size:
        return np.arange(n, dtype=np.int64)
    return np.unique(np.linspace(0, n - 1, size).round().astype(np.int64))


# --------------------------------------------------------------------------- preparation


@dataclass
class Prepared:
    """Everything the per-chunk scorer needs, computed once per batch from the sample."""

    mode: str | None
    t_scale: torch.Tensor           # (T,) term-level affine: T_t(x) = (x - t_shift) * t_scale
    t_shift: torch.Tensor           # (T,)
    sorted_sample: torch.Tensor | None  # (T, m) for percentile
    lit_scale: list[torch.Tensor]   # per plan group: (P, G) per-literal affine after T_t
    lit_shift: list[torch.Tensor]
    mix_l: torch.Tensor | None      # (Q,) in plan order: final = mix_l*L + mix_w*W + mix_c
    mix_w: torch.Tensor | None
    mix_c: torch.Tensor | None
    whole: torch.Tensor | None      # (Q, d) whole-query embeddings in plan order
    guard_beta: list = field(default_factory=list)   # per group: (P, G) slope of each negated literal (0 else)
    guard_mu: list = field(default_factory=list)     # per group: (G,) sample mean of the positive-literal mean
    extra: dict = field(default_factory=dict)


def _term_transform(sims: torch.Tensor, prep: Prepared, rows: torch.Tensor | None = None) -> torch.Tensor:
    """Apply T_t to similarities ``sims`` (T x C) (rows: which terms, default all)."""
    if prep.mode is None:
        return sims
    if prep.mode == "percentile":
        table = prep.sorted_sample if rows is None else prep.sorted_sample[rows]
        m = table.shape[1]
        # +PERCENTILE_EPS: a sample document counts itself whatever the matmul rounding.
        return torch.searchsorted(table, (sims + PERCENTILE_EPS).contiguous(), right=True).to(torch.float32) / float(m)
    scale = prep.t_scale if rows is None else prep.t_scale[rows]
    shift = prep.t_shift if rows is None else prep.t_shift[rows]
    return (sims - shift[:, None]) * scale[:, None]


def negated_pushes(opcodes) -> list[bool]:
    """For each PUSH of a postfix opcode sequence: is its literal negated, i.e. under an odd number of NOTs?
    ``a NOT`` and ``b c OR NOT`` (NOT (b OR c)) negate every literal below the NOT; ``b NOT NOT`` is positive.
    In postfix every operand holds a contiguous run of PUSHes, so each NOT flips a range: a difference array
    keeps this linear in the program's length."""
    flips = [0] * (sum(1 for op in opcodes if op == PUSH) + 1)
    stack: list[tuple[int, int]] = []   # each operand's PUSH numbers, [first, end)
    pushes = 0
    for op in opcodes:
        if op == PUSH:
            stack.append((pushes, pushes + 1))
            pushes += 1
        elif op == NOT:
            first, end = stack[-1]
            flips[first] ^= 1
            flips[end] ^= 1
        else:   # AND / OR: two adjacent operands become one
            _, end = stack.pop()
            stack[-1] = (stack[-1][0], end)
    out, parity = [], 0
    for p in range(pushes):
        parity ^= flips[p]
        out.append(bool(parity))
    return out


def positive_mean(raw: torch.Tensor, group) -> torch.Tensor:
    """(G x C) mean raw similarity of each query's positive (non-negated) literals."""
    neg = negated_pushes(group.opcodes)
    pos = [p for p, n in enumerate(neg) if not n]
    acc = raw[group.push_terms[pos[0]]].clone()
    for p in pos[1:]:
        acc += raw[group.push_terms[p]]
    return acc / float(len(pos))


def _guard_scale(prep: Prepared, group, p: int):
    """The guard works on raw similarities; map its correction into the calibrated space of term p."""
    if prep.mode in ("equalize", "zscore", "minmax"):
        return prep.t_scale[group.push_terms[p]][:, None]
    return 1.0


def _eval_groups(sims: torch.Tensor, plan, ops: Ops, prep: Prepared | None,
                 raw: torch.Tensor | None = None) -> torch.Tensor:
    """Logical scores (Q x C, plan order) from (transformed) term similarities (T x C)."""
    out = torch.empty((len(plan.order), sims.shape[1]), dtype=torch.float32, device=sims.device)
    for gi, group in enumerate(plan.groups):
        rows = out[group.start: group.start + group.push_terms.shape[1]]
        stack: list[torch.Tensor] = []
        p = 0
        guard = prep is not None and bool(prep.guard_beta) and prep.guard_beta[gi] is not None
        if guard:
            xp = positive_mean(raw if raw is not None else sims, group)
        for op in group.opcodes:
            if op == PUSH:
                x = sims[group.push_terms[p]]
                if guard:
                    beta = prep.guard_beta[gi][p]
                    if bool((beta != 0).any()):
                        x = x - (beta[:, None] * (xp - prep.guard_mu[gi][:, None])) * _guard_scale(prep, group, p)
                if prep is not None:
                    x = x * prep.lit_scale[gi][p][:, None] + prep.lit_shift[gi][p][:, None]
                stack.append(x)
                p += 1
            elif op == NOT:
                stack.append(ops.apply_not(stack.pop()))
            else:
                y, x = stack.pop(), stack.pop()
                if op == AND:
                    stack.append(torch.minimum(x, y) if prep is not None and prep.extra.get("and_min")
                                 else ops.apply_and(x, y))
                elif prep is not None and prep.extra.get("or_max"):
                    stack.append(torch.maximum(x, y))
                else:
                    stack.append(ops.apply_or(x, y))
        rows.copy_(stack[0])
    return out


def _connectives(program: Program, q: int) -> tuple[bool, bool]:
    """Whether query ``q`` contains a NOT, and an OR."""
    ops, _ = program.query_code(q)
    return bool((ops == NOT).any()), bool((ops == OR).any())


def prepare(program: Program, plan, ops: Ops, options: ScoreOptions, term_embeddings: torch.Tensor,
            sample: torch.Tensor, whole_embeddings: torch.Tensor | None) -> Prepared:
    """Statistics of every term (and whole query) over the document ``sample`` (m x d, float32)."""
    device = term_embeddings.device
    sims = term_embeddings @ sample.T                           # T x m
    mode = options.calibration
    T = sims.shape[0]
    ones, zeros = torch.ones(T, device=device), torch.zeros(T, device=device)
    mu = sims.mean(dim=1)
    sd = sims.std(dim=1, unbiased=False)
    t_scale, t_shift, sorted_sample = ones, zeros, None
    if mode in ("equalize", "zscore"):
        t_scale, t_shift = inverse_spread(sd, mu), mu
    elif mode == "minmax":
        lo, hi = sims.min(dim=1).values, sims.max(dim=1).values
        t_scale, t_shift = inverse_spread(hi - lo, mu), lo
    elif mode == "percentile":
        sorted_sample = torch.sort(sims, dim=1).values.contiguous()
    prep = Prepared(mode, t_scale, t_shift, sorted_sample, [], [], None, None, None, None)
    prep.extra["or_max"] = options.or_max
    prep.extra["and_min"] = options.and_min
    for group in plan.groups:
        P, G = group.push_terms.shape
        if mode == "equalize":
            lit_mu, lit_sd = mu[group.push_terms], sd[group.push_terms]   # P x G
            prep.lit_scale.append(lit_sd.mean(dim=0, keepdim=True).expand(P, G).contiguous())
            prep.lit_shift.append(lit_mu.mean(dim=0, keepdim=True).expand(P, G).contiguous())
        else:
            prep.lit_scale.append(torch.ones((P, G), device=device))
            prep.lit_shift.append(torch.zeros((P, G), device=device))
    if options.guard:
        for group in plan.groups:
            neg = negated_pushes(group.opcodes)
            if not any(neg) or all(neg):
                prep.guard_beta.append(None)
                prep.guard_mu.append(None)
                continue
            xp = positive_mean(sims, group)                          # G x m
            mu_p = xp.mean(dim=1)
            cp = xp - mu_p[:, None]
            inv_var_p = inverse_spread((cp * cp).mean(dim=1).sqrt(), mu_p) ** 2   # no slope on a constant x_p
            betas = []
            for p, is_neg in enumerate(neg):
                if not is_neg:
                    betas.append(torch.zeros_like(mu_p))
                    continue
                xb = sims[group.push_terms[p]]
                cov = ((xb - xb.mean(dim=1, keepdim=True)) * cp).mean(dim=1)
                betas.append((cov * inv_var_p).clamp_min(0.0))
            prep.guard_beta.append(torch.stack(betas))
            prep.guard_mu.append(mu_p)
    if options.hybrid is not None:
        if whole_embeddings is None:
            raise InputError("hybrid scoring needs one whole-query text per query", "whole_queries",
                             "a list of texts, one per query")
        whole = whole_embeddings[plan.order]                    # plan order
        logical = _eval_groups(_term_transform(sims, prep), plan, ops, prep, raw=sims)   # Q x m
        w = whole @ sample.T
        mu_l, mu_w = logical.mean(dim=1), w.mean(dim=1)
        inv_l = inverse_spread(logical.std(dim=1, unbiased=False), mu_l)
        inv_w = inverse_spread(w.std(dim=1, unbiased=False), mu_w)
        order = plan.order.cpu().numpy()
        alpha = torch.tensor([options.weight(*_connectives(program, int(q))) for q in order],
                             dtype=torch.float32, device=device)
        prep.mix_l = alpha * inv_l
        prep.mix_w = (1.0 - alpha) * inv_w
        if options.adaptive:
            # agreement of the two standardised scores over the sample (Pearson correlation)
            rho = (((logical - mu_l[:, None]) * inv_l[:, None]) * ((w - mu_w[:, None]) * inv_w[:, None])).mean(dim=1)
            # a constant logical score has no correlation to measure: it does not discount the whole query
            rho = torch.where(inv_l > 0, rho, torch.ones_like(rho))
            prep.mix_w = prep.mix_w * rho.clamp(0.0, 1.0)
            prep.extra["rho"] = rho
        prep.mix_c = -(prep.mix_l * mu_l + prep.mix_w * mu_w)
        prep.whole = whole
    return prep


# --------------------------------------------------------------------------- as a fused kernel takes them


@dataclass
class LinearScoring:
    """The options (all but ``percentile``) as plain arrays for a fused kernel.

    Every literal becomes an affine map of one dot product, and the hybrid one
    affine epilogue per query::

        literal i of query q:  x'_i = lit_a[i] * <doc, vectors[operand_i]> + lit_b[i]
        query q:               score_q = mix[q, 0] * L_q + mix[q, 1] * <doc, vectors[whole_arg[q]]> + mix[q, 2]

    with ``L_q`` the query's program run with ``ops`` on the ``x'``.  The guard
    is linear in the embeddings (the negated vector minus ``beta`` times the
    mean of the positive ones), the calibrations are affine, so nothing else is
    needed: it is the same arithmetic as :func:`score_chunk_options`, grouped
    differently (float32 rounding aside).
    """

    program: Program            # opcodes and offsets unchanged; PUSH operands index ``vectors``
    vectors: torch.Tensor       # (V, d) float32: the terms, one row per guarded literal, the whole queries
    lit_a: np.ndarray           # float32, aligned with program.opcodes (1 where not a PUSH)
    lit_b: np.ndarray           # float32, aligned with program.opcodes (0 where not a PUSH)
    ops: Ops                    # or_max / and_min folded into the families
    mix: np.ndarray | None      # (Q, 3) float32 in query order, or None without hybrid
    whole_arg: np.ndarray | None  # (Q,) int32 rows of ``vectors``


def linearize(program: Program, plan, ops: Ops, options: ScoreOptions, prep: Prepared,
              term_embeddings: torch.Tensor, whole_embeddings: torch.Tensor | None) -> LinearScoring:
    """Fold the prepared options into per-literal affine maps and a per-query epilogue (see
    :class:`LinearScoring`).  ``term_embeddings`` / ``whole_embeddings`` in query order, float32."""
    if prep.mode == "percentile":
        raise ValueError("percentile calibration is a lookup table, not an affine map: no linear form")
    device = term_embeddings.device
    offsets = np.asarray(program.offsets, dtype=np.int64)
    lit_a = np.ones(len(program.opcodes), dtype=np.float32)
    lit_b = np.zeros(len(program.opcodes), dtype=np.float32)
    operands = np.asarray(program.operands, dtype=np.int32).copy()   # unguarded literals keep their term row
    blocks: list[torch.Tensor] = [term_embeddings.to(torch.float32)]
    count = term_embeddings.shape[0]
    for gi, group in enumerate(plan.groups):
        P, G = group.push_terms.shape
        queries = plan.order[group.start: group.start + G].cpu().numpy()
        push_at = [i for i, op in enumerate(group.opcodes) if op == PUSH]
        inst = offsets[queries][None, :] + np.asarray(push_at, dtype=np.int64)[:, None]      # (P, G)
        scale = prep.t_scale[group.push_terms] * prep.lit_scale[gi]                           # (P, G)
        shift = -prep.t_shift[group.push_terms]
        if prep.guard_beta and prep.guard_beta[gi] is not None:
            # a guarded literal scores the vector e_b - beta * mean(e_pos): one new row per (literal, query)
            beta = prep.guard_beta[gi]                                                        # (P, G), 0 if positive
            neg = negated_pushes(group.opcodes)
            vec = term_embeddings[group.push_terms]                                          # (P, G, d)
            pos_mean = vec[[p for p in range(P) if not neg[p]]].mean(dim=0)                  # (G, d)
            guarded = (beta != 0).cpu().numpy()
            if guarded.any():
                new = (vec - beta[:, :, None] * pos_mean[None])[torch.as_tensor(guarded, device=device)]
                operands[inst[guarded]] = count + np.arange(len(new), dtype=np.int32)
                blocks.append(new)
                count += len(new)
            shift = shift + beta * prep.guard_mu[gi][None, :]
        bias = shift * scale + prep.lit_shift[gi]
        lit_a[inst.reshape(-1)] = scale.reshape(-1).cpu().numpy()
        lit_b[inst.reshape(-1)] = bias.reshape(-1).cpu().numpy()
    mix = whole_arg = None
    if prep.mix_l is not None:
        q = program.num_queries
        order = plan.order.cpu().numpy()
        mix = np.empty((q, 3), dtype=np.float32)
        mix[order] = torch.stack((prep.mix_l, prep.mix_w, prep.mix_c), dim=1).cpu().numpy()
        blocks.append(whole_embeddings.to(device=device, dtype=torch.float32))
        whole_arg = (count + np.arange(q)).astype(np.int32)
    fused_ops = replace(ops, and_="min" if options.and_min else ops.and_, or_="max" if options.or_max else ops.or_)
    linear_program = Program([f"#{i}" for i in range(sum(len(b) for b in blocks))], program.opcodes, operands,
                             program.offsets, program.max_depth, list(program.query_ids))
    return LinearScoring(linear_program, torch.cat(blocks).contiguous(), lit_a, lit_b, fused_ops, mix, whole_arg)


def linearize_options(docs, term_embeddings, program: Program, ops: Ops, options: ScoreOptions,
                      whole_embeddings=None, device: torch.device | str = "cpu",
                      sample: torch.Tensor | None = None) -> LinearScoring:
    """:func:`prepare` on the document sample, then :func:`linearize` (what a fused backend calls).
    ``sample``: :func:`document_sample` of ``docs`` when the caller folds several batches (read once)."""
    device = torch.device(device)
    terms = _as_tensor(term_embeddings, device)
    whole = None if whole_embeddings is None else _as_tensor(whole_embeddings, device)
    plan = plan_groups(program, device)
    if sample is None:
        sample = document_sample(docs, options, device)
    with torch.inference_mode():
        prep = prepare(program, plan, ops, options, terms, sample, whole)
        return linearize(program, plan, ops, options, prep, terms, whole)


def score_chunk_linear(sims: torch.Tensor, plan, coef: list[tuple[torch.Tensor, torch.Tensor]],
                       lin: LinearScoring, mix: torch.Tensor | None) -> torch.Tensor:
    """Scores (Q x C, plan order) of one chunk from ``sims = lin.vectors @ chunk.T`` (V x C)."""
    out = torch.empty((len(plan.order), sims.shape[1]), dtype=torch.float32, device=sims.device)
    ops = lin.ops
    for group, (a, b) in zip(plan.groups, coef):
        rows = out[group.start: group.start + group.push_terms.shape[1]]
        rows.copy_(run_postfix(group.opcodes, lambda p: sims[group.push_terms[p]] * a[p][:, None] + b[p][:, None],
                               ops))
    if mix is None:
        return out
    w = sims[mix[:, 3].to(torch.int64)]
    return out * mix[:, 0:1] + w * mix[:, 1:2] + mix[:, 2:3]


def linear_coefficients(lin: LinearScoring, plan, device: torch.device) -> tuple[list, torch.Tensor | None]:
    """Per plan group the (P, G) literal affines of ``lin`` and the (Q, 4) hybrid epilogue
    ``(mix_l, mix_w, mix_c, whole row)`` in plan order (None without hybrid): what
    :func:`score_chunk_linear` takes."""
    prog = lin.program
    offsets = np.asarray(prog.offsets, dtype=np.int64)
    coef = []
    order = plan.order.cpu().numpy()
    for group in plan.groups:
        G = group.push_terms.shape[1]
        push_at = np.asarray([i for i, op in enumerate(group.opcodes) if op == PUSH], dtype=np.int64)
        inst = offsets[order[group.start: group.start + G]][None, :] + push_at[:, None]
        coef.append((torch.from_numpy(lin.lit_a[inst]).to(device), torch.from_numpy(lin.lit_b[inst]).to(device)))
    mix = None
    if lin.mix is not None:
        m = np.concatenate([lin.mix, lin.whole_arg[:, None].astype(np.float32)], axis=1)[order]
        mix = torch.from_numpy(np.ascontiguousarray(m)).to(device)
    return coef, mix


def score_chunk_options(sims: torch.Tensor, chunk: torch.Tensor, plan, ops: Ops, prep: Prepared) -> torch.Tensor:
    """Scores (Q x C, plan order) of one chunk: term sims (T x C) and the chunk's documents (C x d)."""
    logical = _eval_groups(_term_transform(sims, prep), plan, ops, prep, raw=sims)
    if prep.mix_l is None:
        return logical
    w = prep.whole @ chunk.T
    return logical * prep.mix_l[:, None] + w * prep.mix_w[:, None] + prep.mix_c[:, None]


# --------------------------------------------------------------------------- search


def _as_tensor(x, device) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x.to(device=device, dtype=torch.float32)
    return torch.as_tensor(np.asarray(x, dtype=np.float32), device=device)


def document_sample(docs, options: ScoreOptions, device: torch.device | str) -> torch.Tensor:
    """The rows of ``docs`` every option's statistics come from (float32 on ``device``)."""
    return _sample_matrix(docs, docs.shape[0], options.sample_size, torch.device(device))


def _sample_matrix(docs, n: int, size: int, device: torch.device) -> torch.Tensor:
    rows = sample_rows(n, size)
    if isinstance(docs, torch.Tensor):
        return docs[torch.as_tensor(rows, device=docs.device)].to(device=device, dtype=torch.float32)
    return torch.from_numpy(np.asarray(docs[rows], dtype=np.float32).copy()).to(device)


def prepare_options(docs, program: Program, plan, ops: Ops, options: ScoreOptions, terms: torch.Tensor,
                    whole_embeddings, device: torch.device) -> Prepared:
    """:func:`prepare` on the document sample of ``docs`` (what a chunked search calls once)."""
    whole = None if whole_embeddings is None else _as_tensor(whole_embeddings, device)
    return prepare(program, plan, ops, options, terms, document_sample(docs, options, device), whole)


def score_dense(docs, term_embeddings, program: Program, ops: Ops, options: ScoreOptions,
                whole_embeddings=None) -> np.ndarray:
    """All scores (Q x N, query order) in one pass: the unchunked definition of the options."""
    device = torch.device("cpu")
    docs_t = _as_tensor(docs, device)
    terms = _as_tensor(term_embeddings, device)
    whole = None if whole_embeddings is None else _as_tensor(whole_embeddings, device)
    plan = plan_groups(program, device)
    with torch.inference_mode():
        prep = prepare(program, plan, ops, options, terms,
                       docs_t[torch.as_tensor(sample_rows(len(docs_t), options.sample_size))], whole)
        scores = score_chunk_options(terms @ docs_t.T, docs_t, plan, ops, prep)
    return plan.unpermute(scores).numpy()
