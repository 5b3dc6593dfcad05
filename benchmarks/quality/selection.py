"""Which scoring configuration the quality benchmark selects on its dev split (benchmarks/quality.py)."""

from __future__ import annotations

import math
from statistics import fmean

from benchmarks.quality.report import admissible, too_small, worst_delta


def select_config(out: dict) -> str:
    """Maximin on the dev split, over families *and* datasets (the target is >= Baseline on every family of
    every dataset): the config whose smallest family gain over the baseline in any dataset is largest
    (ties at 4 decimals: mean overall gain).  Families with too few dev compositions to judge
    (:func:`benchmarks.quality.report.too_small`) are left out, as in the report's targets.  Only configurations
    that meet the exclusion constraint (:func:`admissible`, when the run measured it) are candidates."""
    cands = [k[5:] for k in next(iter(out["datasets"].values()))["dev"]["summary"] if k.startswith("gold|")]
    if any(admissible(out, c) for c in cands):   # else (no configuration meets it) the rule as without it
        cands = [c for c in cands if admissible(out, c)]
    best, best_key = None, None
    for c in cands:
        worst, gain = [], []
        for name, res in out["datasets"].items():
            s = res["dev"]["summary"]
            w = worst_delta(s, c, name, skip=too_small(res, name, "dev"))
            worst.append(0.0 if math.isnan(w) else w)
            gain.append(s[f"gold|{c}"]["overall"] - s["baseline"]["overall"])
        key = (round(min(worst), 4), fmean(gain))
        if best_key is None or key > best_key:
            best, best_key = c, key
    return best
