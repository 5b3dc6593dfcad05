"""benchmarks/exclusion.py: the label pairs it measures meet its thresholds."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from exclusion import label_pairs  # noqa: E402


def test_label_pairs_meet_the_thresholds():
    labels = {}
    for i in range(100):                       # grain on 100 articles, wheat on 40 of them, corn on 5
        labels[f"g{i}"] = frozenset({"grain", "wheat"} if i < 40 else {"grain", "corn"} if i < 45 else {"grain"})
    for i in range(50):
        labels[f"w{i}"] = frozenset({"wheat"})
    terms = {"grain": "grain", "wheat": "wheat", "corn": "corn"}
    pairs = label_pairs(labels, terms, n=10, seed=0, min_docs=5, min_overlap=0.2, min_answers=20)
    # wheat is on 40% of grain's articles, corn on 5% (too few); grain is on 40 of wheat's 90 (44%), with 50
    # articles of wheat and not grain
    assert set(pairs) == {("grain", "wheat"), ("wheat", "grain")}
    assert label_pairs(labels, terms, n=10, seed=0, min_docs=5, min_overlap=0.5, min_answers=20) == []
    assert label_pairs(labels, {"grain": "grain"}, n=10, seed=0, min_docs=5, min_overlap=0.2, min_answers=20) == []
    assert len(label_pairs(labels, terms, n=1, seed=3, min_docs=5, min_overlap=0.2, min_answers=20)) == 1
