"""benchmarks/translate.py: rescoring a stored run's LLM generations with the current rules and repair."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from itlr_gpu.translate.repair import repair

ROOT = Path(__file__).resolve().parents[1]


def _bench():
    spec = importlib.util.spec_from_file_location("translate_bench", ROOT / "benchmarks" / "translate.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


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
