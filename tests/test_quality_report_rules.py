"""The report's every-family targets: families too small to judge are named, not judged."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.quality import report  # noqa: E402


def _summary(base: dict, cur: dict) -> dict:
    return {"baseline": {"by_family": base}, "gold|recommended": {"by_family": cur}}


def test_small_families_are_left_out_of_the_worst_family():
    res = {"counts": {"test": {"a OR b": 100, "a OR (b AND NOT c)": 1, "never drawn": 0},
                      "dev": {"a OR b": 300, "a OR (b AND NOT c)": report.MIN_JUDGED}}}
    small = report.too_small(res, "scifact")
    assert small == {"a OR (b AND NOT c)": 1}            # drawn but too few; 0 = not a family of this dataset
    assert report.too_small(res, "scifact", "dev") == {}  # exactly MIN_JUDGED is judged
    assert report.too_small(res, "reuters") == {}         # Reuters families are negation counts, all large
    s = _summary({"a OR b": 0.40, "a OR (b AND NOT c)": 0.75}, {"a OR b": 0.45, "a OR (b AND NOT c)": 0.47})
    assert report.worst_delta(s, "recommended", "scifact") == pytest.approx(-0.28)
    assert report.worst_delta(s, "recommended", "scifact", skip=small) == pytest.approx(0.05)


def test_gain_on_families_is_the_mean_over_their_queries():
    import random

    rng = random.Random(0)
    per = {f: [(rng.random(), rng.random()) for _ in range(rng.randint(1, 40))] for f in ("a OR b", "a AND b", "z")}
    mean = lambda xs: sum(xs) / len(xs)   # noqa: E731
    res = {"counts": {"test": {f: len(v) for f, v in per.items()} | {"never drawn": 0}},
           "test": {"summary": _summary({f: mean([b for b, _ in v]) for f, v in per.items()},
                                        {f: mean([c for _, c in v]) for f, v in per.items()})}}
    pairs = per["a OR b"] + per["a AND b"]   # oracle: the mean gain over the queries of the chosen families
    assert report.gain_on(res, "recommended", ("a OR b", "a AND b", "never drawn")) == \
        pytest.approx(mean([c - b for b, c in pairs]))
    assert report.gain_on(res, "recommended", ("never drawn",)) is None


def test_worst_family_skips_small_families():
    res = {"counts": {"test": {"x": 100, "y": 2}},
           "test": {"ci": {"by_family": {"x": [0.01, -0.02, 0.04], "y": [-0.3, -0.3, -0.3]}}}}
    assert report.worst_family(res, "nfcorpus") == ("`x`", [0.01, -0.02, 0.04])


def test_rerender_needs_a_results_file(tmp_path):
    r = subprocess.run([sys.executable, "-m", "benchmarks.quality.report", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "results.json" in r.stderr and "expected a quality run's results.json" in r.stderr


def test_rerender_of_the_committed_report_keeps_its_numbers(tmp_path):
    committed = ROOT / "benchmarks" / "results" / "quality"
    (tmp_path / "results.json").write_text((committed / "results.json").read_text())
    r = subprocess.run([sys.executable, "-m", "benchmarks.quality.report", str(tmp_path)], cwd=ROOT,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    new = (tmp_path / "report.md").read_text().splitlines()
    old = (committed / "report.md").read_text().splitlines()
    tables = lambda lines: [ln for ln in lines if ln.startswith("| ")]   # noqa: E731
    assert tables(new) == tables(old)   # the committed report is this renderer's output (notes aside)
    assert json.loads((tmp_path / "results.json").read_text())["selected"] in "\n".join(new)


def _run(leaks: dict[str, float] | None, alone: float = 0.12) -> dict:
    """A quality run of one dataset whose dev families favour 'soft' (its NOT lets B back in) over 'strict'."""
    fam = lambda x, y: {"by_family": {"a OR b": x, "a AND NOT b": y}, "overall": (x + y) / 2}   # noqa: E731
    out = {"datasets": {"scifact": {
        "counts": {"dev": {"a OR b": 300, "a AND NOT b": 300}},
        "dev": {"summary": {"baseline": fam(0.40, 0.40), "gold|paper (raw)": fam(0.41, 0.42),
                            "gold|soft": fam(0.50, 0.50), "gold|strict": fam(0.49, 0.48)}}}}}
    if leaks is not None:
        out["exclusion"] = {"seed": 1, "pairs": 40, "A alone": {"leak@10": alone},
                            "configs": {c: {"leak@10": v, "P@10": 0.7} for c, v in leaks.items()}}
    return out


def test_selection_keeps_to_configurations_whose_not_excludes():
    from benchmarks.quality.selection import select_config  # noqa: PLC0415

    assert select_config(_run(None)) == "soft"   # no exclusion check: the maximin rule alone
    leaks = {"paper (raw)": 0.06, "soft": 0.14, "strict": 0.09}
    assert select_config(_run(leaks)) == "strict"   # soft leaks more of B than "A" alone (0.12)
    assert select_config(_run(leaks, alone=0.14)) == "soft"   # equal to "A" alone meets the constraint
    # no configuration meets it: the rule runs without it
    assert select_config(_run({c: 0.5 for c in leaks})) == "soft"



def test_report_states_the_exclusion_constraint_and_marks_who_fails_it():
    out = _run({"paper (raw)": 0.06, "soft": 0.14, "strict": 0.09})
    text = report.exclusion_note(out)
    assert "dev seed 1" in text and "40 Reuters" in text and "0.120" in text and "Met by 2 of 3" in text
    assert report.exclusion_cell(out, "soft") == "0.140 (over)"
    assert report.exclusion_cell(out, "strict") == "0.090"
    assert report.exclusion_cell(out, "not measured") == "-"
    assert report.exclusion_note(_run(None)) == "" and report.exclusion_cell(_run(None), "soft") is None
    assert "no configuration met it" in report.exclusion_note(_run({"soft": 0.3, "strict": 0.2}))
