"""The benchmark scripts' shared argument checks: a bad value is one ``prog: error:`` line before any work."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import check_stem, check_writable, default_folder, default_stem, positive_int_list, seconds  # noqa: E402
from benchmarks.quality.report import seeds_link  # noqa: E402


@given(st.lists(st.integers(1, 10**6), min_size=1, max_size=6))
def test_positive_int_list_reads_back_what_was_joined(values):
    assert positive_int_list(",".join(map(str, values))) == values
    assert positive_int_list(" , ".join(map(str, values)) + ",") == values


def test_positive_int_list_and_seconds_refuse_bad_values():
    for text in (",", "0", "2048,-1", "2048,x"):
        with pytest.raises(argparse.ArgumentTypeError):
            positive_int_list(text)
    assert seconds("0") == 0 and seconds("0.25") == 0.25
    for text in ("-1", "nan", "inf", "soon"):
        with pytest.raises(argparse.ArgumentTypeError):
            seconds(text)


def test_a_trial_run_without_out_never_writes_the_committed_table():
    """--out left out: benchmarks/results/NAME with the default settings, a temporary stem with any other (a quick
    or smaller run), whatever the settings named in ignore (where data lives, how many processes)."""
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=None)
    committed = str(ROOT / "benchmarks" / "results" / "scale")
    assert default_stem(ap, ap.parse_args([]), "scale") == committed
    assert default_stem(ap, ap.parse_args(["--workers", "4"]), "scale", ignore=("workers",)) == committed
    trial = default_stem(ap, ap.parse_args(["--quick"]), "scale")
    assert trial == str(Path(tempfile.gettempdir()) / "itlr-scale-trial")


def test_a_trial_run_of_a_folder_script_never_writes_the_committed_folder():
    """Scripts writing NAME-SUFFIX tables into a folder: the results folder with the default settings or a
    --suffix chosen for the table, a temporary folder for any other settings (a test split, another model)."""
    import tempfile

    ap = argparse.ArgumentParser()
    ap.add_argument("--translator", default="rules")
    ap.add_argument("--split", default="all")
    ap.add_argument("--suffix", default=None)
    ap.add_argument("--out", default=None)
    results = str(ROOT / "benchmarks" / "results")
    assert default_folder(ap, ap.parse_args(["--translator", "llamacpp"]), "translate", ignore=("translator",)) == results
    assert default_folder(ap, ap.parse_args(["--split", "test", "--suffix", "t"]), "translate") == results
    trial = default_folder(ap, ap.parse_args(["--split", "test"]), "translate")
    assert trial == str(Path(tempfile.gettempdir()) / "itlr-translate-trial")


@pytest.mark.parametrize("script, name", [("cpu_chunks.py", "cpu_chunks"), ("query_encoding.py", "query_encoding"),
                                          ("encode_ceiling.py", "encode_ceiling"), ("translate.py", "translate"),
                                          ("llamacpp_steps.py", "llamacpp_steps")])
def test_every_script_writing_into_the_results_says_where_a_trial_goes(script, name):
    """Each script that writes under benchmarks/results takes the trial rule, and says so in its --help."""
    help_text = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), "--help"], capture_output=True,
                               text=True, timeout=120).stdout
    text = "".join(help_text.split())   # (argparse wraps at a hyphen too)
    assert f"itlr-{name}-trial" in text or f"benchmarks/results/{name}withthedefaultsettings" in text


def _error(check, *args) -> str:
    ap = argparse.ArgumentParser(prog="bench.py")
    with pytest.raises(SystemExit) as stop:
        check(ap, *args)
    assert stop.value.code == 2
    return str(stop.value)


def test_output_checks(tmp_path, capsys):
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    check_stem(argparse.ArgumentParser(), tmp_path / "new" / "deeper" / "name")   # made later: fine, nothing made now
    assert not (tmp_path / "new").exists()
    check_writable(argparse.ArgumentParser(), tmp_path / "new-folder")
    _error(check_stem, a_file / "name")
    assert f"--out {a_file / 'name'}: {a_file} is not a folder" in capsys.readouterr().err
    _error(check_stem, tmp_path)
    assert "is a folder; expected a file stem" in capsys.readouterr().err
    if os.geteuid() != 0:        # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        _error(check_writable, locked / "out")
        assert "is not writable" in capsys.readouterr().err


def test_seeds_link_resolves_from_the_report_folder(tmp_path):
    seeds = ROOT / "benchmarks" / "results" / "quality" / "seeds" / "seeds.md"
    for folder in (ROOT / "benchmarks" / "results" / "quality", ROOT / "benchmarks" / "results" / "quality-neg",
                   ROOT / "benchmarks" / "results" / "quality" / "terms" / "span"):
        link = seeds_link(folder)
        target = link[link.index("(") + 1:-1]
        assert (folder / target).resolve() == seeds.resolve()
    assert "](" not in seeds_link(tmp_path)      # outside the repository: plain text, no dead link


BAD = [
    (["benchmarks/cpu_chunks.py", "--chunks", "abc"], "argument --chunks: invalid integer: 'abc'"),
    (["benchmarks/cpu_search.py", "-k", "0"], "argument -k: must be a positive integer, got 0"),
    (["benchmarks/cpu_search.py", "--out", "/dev/null/x"], "--out /dev/null/x: /dev/null is not a folder"),
    (["benchmarks/translate.py", "--translator", "rules", "--rescore-repair"], "works only with --render"),
    (["benchmarks/translate.py", "--render", "/nonexistent.json"], "/nonexistent.json: no such file"),
    (["benchmarks/exclusion.py", "--data-dir", "/nonexistent"], "no Reuters-21578 files"),
    (["-m", "benchmarks.quality", "--max-docs", "foo"], "--max-docs: 'foo': expected NAME=COUNT"),
    (["benchmarks/heldout.py", "--made-by", "x"], "--made-by describes --translations tables"),
]


@pytest.mark.parametrize("argv,message", BAD, ids=[" ".join(a[:2]) for a, _ in BAD])
def test_bad_arguments_are_one_line(argv, message):
    done = subprocess.run([sys.executable, *argv], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(Path(argv[0] if argv[0] != "-m" else "quality.py").name + ": error: ")
    assert message in last


def test_every_committed_benchmark_table_names_its_command():
    """A result without the command that made it cannot be rerun or checked (the quality reports' folders say
    theirs in report.md)."""
    import json

    tables = sorted((ROOT / "benchmarks" / "results").glob("*.json"))
    tables += sorted((ROOT / "benchmarks" / "results").glob("gpu*/*.json"))
    assert len(tables) > 10
    lacking = []
    for path in tables:
        report = json.loads(path.read_text(encoding="utf-8"))
        if not any(isinstance(part, dict) and "command" in part
                   for part in (report, report.get("info"), report.get("machine"))):
            lacking.append(path.name)
    assert not lacking, lacking


@pytest.mark.parametrize("args, message", [
    (["--seeds", "0,x"], "expected comma-separated integer seeds"),
    (["--seeds", "-1"], "seeds of 0 or more"),
    (["--encoders", "auto,fast"], "unknown encoder setting(s) fast"),
    (["--docs", "1"], "--docs 1: expected at least 2 documents"),
])
def test_the_demo_benchmark_refuses_bad_settings_before_any_work(args, message, capsys):
    from benchmarks import demo

    with pytest.raises(SystemExit) as stop:
        demo.main(args)
    assert stop.value.code == 2 and message in capsys.readouterr().err


def test_the_demo_benchmark_tabulates_each_seed_and_encoder(tmp_path):
    """A small run: one row per seed, the encoder's settings named, ITLR above the baseline."""
    import json

    from benchmarks import demo

    assert demo.main(["--seeds", "0,1", "--encoders", "torch-fp32", "--docs", "40", "--out", str(tmp_path / "d")]) == 0
    report = json.loads((tmp_path / "d.json").read_text())
    assert [r["seed"] for r in report["results"]] == [0, 1]
    assert report["results"][0]["settings"]["backend"] == "torch"
    assert all(r["overall"]["itlr"] > r["overall"]["baseline"] for r in report["results"])
    table = (tmp_path / "d.md").read_text()
    assert "## Encoder `torch-fp32` (torch fp32" in table and table.count("\n| 0 |") == 1
