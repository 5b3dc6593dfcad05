"""benchmarks/translate.py: rescoring a stored run's LLM generations with the current rules and repair."""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path

import pytest

from itlr_gpu.translate.repair import repair

ROOT = Path(__file__).resolve().parents[1]


def _load(script: str, name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / script)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bench():
    return _load("translate.py", "translate_bench")


def test_rescore_repair_rebuilds_generations_and_reapplies_the_repair(tmp_path):
    tb = _bench()
    pairs = tb.load_pairs()
    by_text = {p["text"]: p for p in pairs}
    refuted = by_text["breakfast ideas except oatmeal"]      # a form the repair replaces
    wrong = by_text["not coffee or tea"]                     # a miss the repair keeps
    run = {"translator": "llamacpp", "model": "llamacpp:fake@0", "options": {}, "load_s": 1.0,
           "requests": len(pairs), "batched_s": 1.0, "batched_req_per_s": 1.0, "scores": {}, "all": {},
           "repaired": [{"id": refuted["id"], "split": refuted["split"], "text": refuted["text"],
                         "llm": 'NOT "breakfast ideas except oatmeal"', "rules": refuted["expr"], "right": True,
                         "defects": ["x"]}],
           "misses": [{"id": wrong["id"], "split": wrong["split"], "text": wrong["text"], "want": wrong["expr"],
                       "got": 'NOT ("coffee" OR "tea")'}],
           "load_average_before": [0, 0, 0], "load_average_after": [0, 0, 0]}
    path = tmp_path / "translate-x.json"
    path.write_text(json.dumps({"command": "python benchmarks/translate.py", "runs": [run],
                                "machine": {"cpu": "cpu", "cores": 2, "simd": [], "python": "3"}}))
    tb.rescore_repair(path)
    out = json.loads((tmp_path / "translate-x-rescored.json").read_text())
    got = out["runs"][0]
    forms = got["generations"]
    assert forms[refuted["id"]] == 'NOT "breakfast ideas except oatmeal"' and forms[wrong["id"]] == 'NOT ("coffee" OR "tea")'
    # oracle: the repair applied to every rebuilt generation, scored like the benchmark
    expected = {p["id"]: repair(p["text"], forms[p["id"]])[0] for p in pairs}
    right = {s: sum(tb.same(expected[p["id"]], p["expr"]) for p in pairs if p["split"] == s) for s in ("dev", "test")}
    assert got["scores"]["dev"]["right"] == right["dev"] and got["scores"]["test"]["right"] == right["test"]
    assert {x["id"] for x in got["misses"]} == {p["id"] for p in pairs if not tb.same(expected[p["id"]], p["expr"])}
    assert any(x["id"] == refuted["id"] and x["right"] for x in got["repaired"])
    assert "rescored" in out["command"] and (tmp_path / "translate-x-rescored.md").exists()


def test_repair_translations_reapplies_the_repair_to_the_llm_forms(tmp_path):
    import sys

    import pyarrow as pa

    sys.path.insert(0, str(ROOT))
    from benchmarks.quality import repair_translations as rt
    from itlr_gpu.io import read_table, write_table
    from itlr_gpu.translate import output_schema

    rows = [  # (text, expr as stored, translator, error, llm_expr)
        ("breakfast ideas except oatmeal", 'NOT "breakfast ideas except oatmeal"', "m", None, None),
        ("cats or dogs", '("cats" OR "dogs")', "m", None, None),
        ("", None, "m", "empty text", None),
        ("climate models except CMIP6", '("climate models" AND NOT "CMIP6")', "m+rules", None, 'NOT "CMIP6"'),
    ]
    table = pa.Table.from_pydict({"query_id": [f"q{i}" for i in range(len(rows))], "text": [r[0] for r in rows],
                                  "expr": [r[1] for r in rows], "translator": [r[2] for r in rows],
                                  "error": [r[3] for r in rows], "llm_expr": [r[4] for r in rows],
                                  "repaired": [None] * len(rows)}, schema=output_schema("logical"))
    write_table(table, tmp_path / "x.logical.arrow")
    assert rt.main([str(tmp_path)]) == 0
    out = read_table(tmp_path / "x.logical.arrow").to_pylist()
    for row, (text, _, _, err, _), own in zip(out, rows, [rows[0][1], rows[1][1], None, rows[3][4]]):
        want = repair(text, own)[0] if err is None else None       # oracle: the repair of the LLM's own form
        assert row["expr"] == want and row["error"] == err
        assert (row["repaired"] is not None) == row["translator"].endswith("+rules") == (row["llm_expr"] is not None)
        assert row["llm_expr"] in (None, own)
    assert out[0]["repaired"] and out[3]["repaired"] and not out[1]["repaired"]
    # a replaced form that was not kept cannot be rebuilt
    lost = table.set_column(5, "llm_expr", pa.array([None] * len(rows), pa.string()))
    write_table(lost, tmp_path / "x.logical.arrow")
    with pytest.raises(SystemExit, match="row 3"):
        rt.main([str(tmp_path)])


def test_heldout_files_are_well_formed_and_their_forms_score_right():
    spec = importlib.util.spec_from_file_location("heldout_bench", ROOT / "benchmarks" / "heldout.py")
    heldout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heldout)
    assert len(heldout.FILES) >= 2
    for path in heldout.FILES:
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert len({r["id"] for r in rows}) == len(rows) >= 100
        writer = heldout.score(rows, {r["id"]: r["expr"] for r in rows})       # the writer's own forms
        assert writer["right"] == len(rows) and writer["misses"] == []
        wrong = heldout.score(rows, {r["id"]: None for r in rows})
        assert wrong["right"] == 0 and len(wrong["misses"]) == len(rows)


def test_heldout_query_file_and_translations_round_trip(tmp_path, monkeypatch):
    """The writers' ids repeat across files: the query file names each request FILE:ID, and a table of
    translations keyed so scores every file against its own requests."""
    import pyarrow as pa
    import pyarrow.feather as feather

    spec = importlib.util.spec_from_file_location("heldout_bench", ROOT / "benchmarks" / "heldout.py")
    heldout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heldout)
    monkeypatch.setattr(heldout, "RESULTS", tmp_path)
    assert heldout.main(["--queries", str(tmp_path / "q.jsonl")]) == 0
    queries = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text(encoding="utf-8").splitlines()]
    gold = {}
    for path in heldout.FILES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                r = json.loads(line)
                gold[f"{path.stem}:{r['id']}"] = (r["text"], r["expr"])
    assert len(queries) == len(gold) == len({q["query_id"] for q in queries})
    assert all(gold[q["query_id"]][0] == q["text"] for q in queries)
    ids = list(gold)
    feather.write_feather(pa.table({"query_id": ids, "expr": [gold[i][1] for i in ids]}), tmp_path / "t.arrow")
    assert heldout.main(["--translations", str(tmp_path / "t.arrow"), "--label", "gold"]) == 0
    report = json.loads((tmp_path / "heldout-gold.json").read_text(encoding="utf-8"))
    assert all(f["right"] == f["n"] for f in report["files"].values())


def test_heldout_scores_the_models_own_form_on_chosen_files(tmp_path, monkeypatch, capsys):
    """--form llm scores llm_expr (the model's form before the repair) where set; --files limits the writers;
    an unknown writer is one usage error."""
    import pyarrow as pa
    import pyarrow.feather as feather

    spec = importlib.util.spec_from_file_location("heldout_bench", ROOT / "benchmarks" / "heldout.py")
    heldout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heldout)
    monkeypatch.setattr(heldout, "RESULTS", tmp_path)
    path = heldout.FILES[-1]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    ids = [f"{path.stem}:{r['id']}" for r in rows]
    # the repair "fixed" the first three rows (expr right); the model's own forms there were wrong
    own = ['"nothing like it"'] * 3 + [None] * (len(rows) - 3)
    feather.write_feather(pa.table({"query_id": ids, "expr": [r["expr"] for r in rows], "llm_expr": own}),
                          tmp_path / "t.arrow")
    name = path.stem.removeprefix("heldout-")
    assert heldout.main(["--translations", str(tmp_path / "t.arrow"), "--files", name, "--label", "fixed"]) == 0
    assert heldout.main(["--translations", str(tmp_path / "t.arrow"), "--files", name, "--form", "llm",
                         "--label", "alone"]) == 0
    fixed = json.loads((tmp_path / "heldout-fixed.json").read_text(encoding="utf-8"))["files"]
    alone = json.loads((tmp_path / "heldout-alone.json").read_text(encoding="utf-8"))["files"]
    assert list(fixed) == list(alone) == [path.name]
    assert fixed[path.name]["right"] == len(rows) and alone[path.name]["right"] == len(rows) - 3
    assert "--form llm" in (tmp_path / "heldout-alone.md").read_text(encoding="utf-8")
    # the report's Command line, run again as written, reproduces the report, --made-by and all
    made = "`itlr translate q.jsonl -o t.arrow --translator llamacpp` on a 2-core 'EPYC'"
    assert heldout.main(["--translations", str(tmp_path / "t.arrow"), "--files", name, "--form", "llm",
                         "--label", "alone", "--made-by", made]) == 0
    first = (tmp_path / "heldout-alone.md").read_text(encoding="utf-8")
    line = next(x for x in first.splitlines() if x.startswith("Command: "))
    assert line.startswith("Command: `` python benchmarks/heldout.py") and line.endswith(" ``")
    argv = shlex.split(line.removeprefix("Command: `` ").removesuffix(" ``"))[2:]
    assert argv[argv.index("--made-by") + 1] == made and f"Translations made by: {made}" in first
    argv[argv.index("--translations") + 1] = str(tmp_path / "t.arrow")
    (tmp_path / "heldout-alone.md").unlink()
    assert heldout.main(argv) == 0 and (tmp_path / "heldout-alone.md").read_text(encoding="utf-8") == first
    assert heldout.code_span("plain") == "`plain`" and heldout.code_span("a `b` c") == "`` a `b` c ``"
    # the rules on chosen files get a report of their own: heldout.md stays the report on every file
    assert heldout.main(["--files", name]) == 0
    assert (tmp_path / f"heldout-{heldout.RULES_VERSION}-{name}.md").is_file()
    assert not (tmp_path / "heldout.md").exists()
    assert heldout.main(["--files", name, "--label", "mine"]) == 0   # a named rules run records its --label
    assert f"Command: `python benchmarks/heldout.py --label mine --files {name}`" in \
        (tmp_path / "heldout-mine.md").read_text(encoding="utf-8")
    with pytest.raises(SystemExit):
        heldout.main(["--translations", str(tmp_path / "t.arrow"), "--files", "writer999"])
    assert "no held-out file heldout-writer999.jsonl" in capsys.readouterr().err


def _steps_bench():
    return _load("llamacpp_steps.py", "llamacpp_steps")


def test_llamacpp_steps_gain_and_table(tmp_path):
    lb = _steps_bench()
    rows = lb.step_rows({16: 0.5, 1: 0.08, 4: 0.16})
    assert [r["seqs"] for r in rows] == [1, 4, 16]
    assert rows[0]["gain_per_token"] == pytest.approx(1.0)
    assert rows[2]["gain_per_token"] == pytest.approx(16 * 0.08 / 0.5) and rows[2]["tok_s"] == pytest.approx(32.0)
    assert lb.step_rows({4: 0.2})[0]["gain_per_token"] is None     # no one-sequence step to compare with
    doc = {"command": "python benchmarks/llamacpp_steps.py", "seqs": [1, 4, 16], "load_before": "0", "load_after": "0",
           "machine": {"cpu": "cpu", "cores": 2, "threads": 2, "python": "3", "llama_cpp": "0", "system_info": "x"},
           "runs": [{"weights": "m", "rows": [{"head_tokens": 3005, "prefill_tok_s": 44.0, "steps": rows}]}]}
    lb.write_md(doc, tmp_path / "t.md")
    table = (tmp_path / "t.md").read_text()
    assert "| m | 3005 | 44.0 | 80 | 160 | 500 | 32.0 | 2.56x |" in table


@pytest.mark.parametrize("argv,message", [(["--head", "0"], "--head 0"), (["--seqs", "0"], ">= 1")])
def test_llamacpp_steps_refuses_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        _steps_bench().main(argv)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_llamacpp_steps_names_a_model_that_is_not_a_gguf(tmp_path):
    pytest.importorskip("llama_cpp")
    bad = tmp_path / "m.gguf"
    bad.write_bytes(b"not a model")
    with pytest.raises(SystemExit) as e:
        _steps_bench().main(["--model", str(bad), "--out", str(tmp_path)])
    assert "llamacpp_steps: error:" in str(e.value) and "not a GGUF file" in str(e.value)
    assert not list(tmp_path.glob("llamacpp_steps*"))


def test_heldout_scores_only_the_files_a_table_covers_and_refuses_gaps(tmp_path, monkeypatch, capsys):
    """A table of some writers' translations scores those writers only (every other file counted 0/120 before);
    a file with requests missing from the table, or an unreadable table, is one usage error."""
    import pyarrow as pa
    import pyarrow.feather as feather

    spec = importlib.util.spec_from_file_location("heldout_bench", ROOT / "benchmarks" / "heldout.py")
    heldout = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(heldout)
    monkeypatch.setattr(heldout, "RESULTS", tmp_path)
    path = heldout.FILES[0]
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    table = pa.table({"query_id": [f"{path.stem}:{r['id']}" for r in rows], "expr": [r["expr"] for r in rows]})
    feather.write_feather(table, tmp_path / "one.arrow")
    assert heldout.main(["--translations", str(tmp_path / "one.arrow"), "--label", "one"]) == 0
    report = json.loads((tmp_path / "heldout-one.json").read_text(encoding="utf-8"))
    assert list(report["files"]) == [path.name] and report["files"][path.name]["right"] == len(rows)
    feather.write_feather(table.slice(1), tmp_path / "gap.arrow")
    for argv, message in (([str(tmp_path / "gap.arrow")], f"1 of {len(rows)} requests of {path.name} have no row"),
                          ([str(tmp_path / "none.arrow")], "none.arrow: cannot read it"),
                          ([str(tmp_path / "one.arrow"), "--files", heldout.FILES[1].stem.split("-")[-1]],
                           f"requests of {heldout.FILES[1].name} have no row")):
        with pytest.raises(SystemExit) as info:
            heldout.main(["--translations", *argv[:1], "--label", "x", *argv[1:]])
        assert info.value.code == 2 and message in capsys.readouterr().err
