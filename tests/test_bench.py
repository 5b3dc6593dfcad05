"""`itlr bench`: bad input is one clear error with nothing written; a run reports every backend."""

import json

import numpy as np
import pytest

from itlr_gpu.bench import available_backends
from itlr_gpu.cli import main


@pytest.fixture()
def imported(tmp_path):
    """An index of 20 random vectors (no encoder recorded) and query files."""
    rng = np.random.default_rng(0)
    np.save(tmp_path / "emb.npy", rng.standard_normal((20, 384)).astype(np.float32))
    (tmp_path / "ids.txt").write_text("".join(f"d{i}\n" for i in range(20)))
    assert main(["index", "--embeddings", str(tmp_path / "emb.npy"), "--ids", str(tmp_path / "ids.txt"),
                 "-o", str(tmp_path / "idx")]) == 0
    (tmp_path / "q.jsonl").write_text(json.dumps({"query_id": "q1", "expr": "coffee AND NOT tea"}) + "\n")
    (tmp_path / "empty.jsonl").write_text("")
    return tmp_path


@pytest.mark.parametrize("argv, message", [
    (["empty.jsonl"], "query file is empty"),
    (["q.jsonl", "-k", "21"], "k=21 is above the corpus size 20"),
    (["q.jsonl", "--backends", "torch-cpu,cuda9"], "unknown backend 'cuda9'"),
    (["q.jsonl", "--backends", "TORCH-CPU"], "unknown backend 'TORCH-CPU'"),
    (["q.jsonl", "--backends", ","], "no backend given"),
    (["q.jsonl", "--backends", "torch-cpu,torch-cpu"], "'torch-cpu' is listed twice"),
    (["q.jsonl", "--backends", "faiss"], "'faiss' is not available here"),
    (["q.jsonl", "--repeat", "0"], "--repeat"),
    (["q.jsonl", "--json", "out.txt"], "out.txt"),
])
def test_bad_input_is_one_error_and_writes_nothing(imported, capsys, argv, message):
    out = imported / "out.json"
    args = ["bench", str(imported / "idx"), str(imported / argv[0]), *argv[1:]]
    args = [a if a != "out.txt" else str(imported / "out.txt") for a in args]
    # a bad option value is a usage error (2), checked before anything is read; the rest is 1
    usage = ("--repeat", "unknown backend", "no backend given", "listed twice")
    code = 2 if any(u in message for u in usage) else 1
    assert main(args + ([] if "--json" in args else ["--json", str(out)])) == code
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("itlr: error:") and message in err[0], err
    assert not out.exists() and not (imported / "out.txt").exists()


def test_single_term_workloads_may_repeat_a_term():
    from itlr_gpu.bench import is_single_term
    from itlr_gpu.compiler import compile_queries

    repeated = compile_queries(['"coffee"', '"tea"', '"coffee"'])
    assert len(repeated.terms) == 2 and is_single_term(repeated)       # two queries, one term: still FAISS's shape
    assert not is_single_term(compile_queries(['"coffee"', 'NOT "tea"']))
    assert not is_single_term(compile_queries(['"coffee" AND "tea"']))


def test_every_backend_that_can_run_has_a_name_the_cli_takes():
    from itlr_gpu.cli_common import BENCH_BACKENDS

    assert set(available_backends(single_term=True)) <= set(BENCH_BACKENDS)


def test_unavailable_backend_error_names_the_available_ones(imported, capsys):
    assert main(["bench", str(imported / "idx"), str(imported / "q.jsonl"), "--backends", "triton"]) == 1
    err = capsys.readouterr().err
    assert ", ".join(available_backends(single_term=False)) in err


@pytest.mark.slow
def test_bench_runs_every_available_backend(imported, capsys):
    (imported / "single.jsonl").write_text(
        "".join(json.dumps({"query_id": f"q{i}", "text": t}) + "\n" for i, t in enumerate(["coffee", "tea"])))
    out = imported / "bench.json"
    assert main(["bench", str(imported / "idx"), str(imported / "single.jsonl"), "-k", "5", "--repeat", "2",
                 "--min-time", "0", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    names = [r["backend"] for r in report["rows"]]
    assert names == available_backends(single_term=True)
    for r in report["rows"]:
        assert r["median_s"] > 0 and len(r["times_s"]) == 2
        assert r["queries_per_s"] == pytest.approx(2 / r["median_s"])
        assert r["doc_queries_per_s"] == pytest.approx(20 * 2 / r["median_s"])
    floor = report["floors"]["cpu"]
    assert floor["blas"] in ("torch", "numpy") and floor["s"] == min(floor["torch_s"], floor["numpy_s"])
    assert floor["chunk"] >= 1
    assert 0 < report["encoder"]["share_of_end_to_end"] < 1
    assert report["machine"]["loadavg"] and report["queries"]["single_term"]
    text = capsys.readouterr().out
    assert "queries/s" in text
    # 20 documents: a floor of microseconds, which the report says is too short to compare against
    assert "too short to time reliably" in text
    from itlr_gpu.bench import render

    long = {**report, "floors": {**report["floors"], "cpu": {**floor, "s": 1.0}},
            "rows": [{**r, "vs_floor": 1.3} for r in report["rows"]],
            "machine": {**report["machine"], "loadavg_1min_at_start": 0.0}}   # an idle machine
    assert "note:" not in render(long)
    slow = {**long, "rows": [{**long["rows"][0], "vs_floor": 0.7}] + long["rows"][1:]}
    # 2 terms: a scan without BLAS may beat the BLAS floor (an outside audit: faiss at 0.49-0.89x); many: noise
    assert f"note: {slow['rows'][0]['backend']} below 1x the CPU floor (1000.0 ms): with 2 terms a scan without a " \
           "BLAS matrix product" in render(slow)
    many = {**slow, "queries": {**slow["queries"], "terms": 64}}
    assert f"note: {slow['rows'][0]['backend']} below 1x the CPU floor (1000.0 ms): timing noise" in render(many)
    busy = {**long, "machine": {**long["machine"], "cores": 2, "loadavg_1min_at_start": 3.5}}
    assert "note: 1-minute load average 3.50 on 2 cores at the start: other processes shared the CPU" in render(busy)
    # a CUDA row against the CUDA floor (an outside review saw the CPU floor's number in a CUDA row's note)
    gpu = {**long, "floors": {**long["floors"], "cuda": {"s": 0.001, "blas": "cuBLAS", "dtype": "float16"}},
           "rows": long["rows"] + [{**long["rows"][0], "backend": "torch-cuda", "vs_floor": 1.2}]}
    text = render(gpu)
    assert "note: the CUDA floor, 1.000 ms, is too short" in text and "CPU floor" not in text


def test_bench_report_with_a_stand_in_encoder(tmp_path, monkeypatch):
    """The path the GPU test takes (tests/test_gpu.py), on the CPU: every row timed, the floor reported."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import gpu_cases

    report, text = gpu_cases.bench_report(tmp_path, monkeypatch, ["torch-cpu"], n=2_000, dim=64)
    assert [r["backend"] for r in report["rows"]] == ["torch-cpu"]
    row = report["rows"][0]
    assert len(row["times_s"]) >= 3 and row["vs_floor"] > 0   # and more while under --min-time's 0.2 s
    assert report["min_time_s"] == 0.2
    assert sum(row["times_s"]) >= report["min_time_s"] or len(row["times_s"]) == 1000
    assert row["memory_kind"] == "process peak RSS so far"
    assert report["queries"]["count"] == 24 and not report["queries"]["single_term"]
    assert report["encoder"]["name"] == "seeded-test-encoder" and "cuda" not in report["floors"]
    assert "torch-cpu" in text and "queries/s" in text


@pytest.mark.slow
def test_a_translators_error_rows_are_skipped_or_searched_by_their_text(imported, capsys):
    """A translation with an error row is refused with both ways out named; --skip-invalid benchmarks the rest,
    --fallback-text searches the row by its text."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    table = pa.table({"query_id": ["q1", "q2"], "text": ["coffee but not tea", "tea please"],
                      "expr": ['"coffee" AND NOT "tea"', None], "error": [None, "nothing to search for"]})
    with ipc.new_file(imported / "t.arrow", table.schema) as w:
        w.write_table(table)
    base = ["bench", str(imported / "idx"), str(imported / "t.arrow"), "--backends", "torch-cpu", "--repeat", "1",
            "--warmup", "0", "-k", "3"]
    assert main(base + ["--json", str(imported / "no.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--skip-invalid benchmarks the valid ones" in err[0] and "--fallback-text" in err[0]
    assert not (imported / "no.json").exists()
    for flag, count, note in (("--skip-invalid", 1, "1 invalid query of 2 left out (first 'q2'"),
                              ("--fallback-text", 2, "1 query of 2 with no valid expr is searched by its text")):
        out = imported / f"{flag[2:]}.json"
        assert main(base + [flag, "--json", str(out)]) == 0
        assert note in capsys.readouterr().err
        queries = json.loads(out.read_text())["queries"]
        assert queries["count"] == count and queries["field"] == "expr"   # what shaped the workload, recorded
        assert (queries["left_out"], queries["by_text"]) == ((1, 0) if flag == "--skip-invalid" else (0, 1))


def test_faiss_searches_one_vector_per_query_and_agrees_with_the_engine(tmp_path, monkeypatch):
    """A batch that repeats a term: faiss is timed on every query (it was credited with the whole batch for one
    search of each distinct term), and its top-k scores are checked against the engine's."""
    pytest.importorskip("faiss")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parent))
    import gpu_cases

    from itlr_gpu import Ops, bench, cli_common
    from itlr_gpu.compiler import compile_queries
    from itlr_gpu.scale.shards import load_index

    program = compile_queries(['"coffee"', '"tea"', '"coffee"', '"coffee"'])
    assert list(bench.single_term_rows(program)) == [0, 1, 0, 0]
    rng = np.random.default_rng(1)
    docs = gpu_cases.unit_rows(rng, 50, 16).astype(np.float32)
    terms = gpu_cases.unit_rows(rng, 2, 16).astype(np.float32)
    scores, found = bench._runner("faiss", docs, terms, program, None, 5, None)()
    assert scores.shape == (4, 5) and (found[0] == found[2]).all() and (found[0] != found[1]).any()

    np.save(tmp_path / "emb.npy", docs)
    (tmp_path / "ids.txt").write_text("".join(f"d{i}\n" for i in range(50)))
    assert main(["index", "--embeddings", str(tmp_path / "emb.npy"), "--ids", str(tmp_path / "ids.txt"),
                 "-o", str(tmp_path / "idx")]) == 0
    (tmp_path / "q.jsonl").write_text("".join(json.dumps({"query_id": f"q{i}", "expr": '"fish"'}) + "\n"
                                              for i in range(40)))
    monkeypatch.setattr(cli_common, "query_encoder", lambda model, index: gpu_cases.SeededTermEncoder(16))
    assert main(["bench", str(tmp_path / "idx"), str(tmp_path / "q.jsonl"), "-k", "5", "--repeat", "1",
                 "--backends", "torch-cpu,faiss", "--json", str(tmp_path / "b.json")]) == 0
    report = json.loads((tmp_path / "b.json").read_text())
    assert {k: report["queries"][k] for k in ("count", "terms", "single_term")} == {"count": 40, "terms": 1,
                                                                                     "single_term": True}
    # through the Python API k may pass the corpus size (the command line refuses it): faiss pads, the check copes
    report = bench.measure(load_index(tmp_path / "idx"), compile_queries(['"fish"', '"owl"']),
                           gpu_cases.SeededTermEncoder(16), Ops(), 60, ["torch-cpu", "faiss"], repeat=1)
    assert [r["backend"] for r in report["rows"]] == ["torch-cpu", "faiss"]
    # a faiss that disagreed with the engine would have stopped the run: check that the check bites
    real = bench._runner

    def wrong(backend, *a, **kw):
        run = real(backend, *a, **kw)
        return (lambda: (lambda r: (r[0] * 0.5, r[1]))(run())) if backend == "faiss" else run

    monkeypatch.setattr(bench, "_runner", wrong)
    with pytest.raises(RuntimeError, match="faiss's top-5 scores differ"):
        bench.measure(load_index(tmp_path / "idx"), compile_queries(['"fish"', '"owl"']),
                      gpu_cases.SeededTermEncoder(16), Ops(), 5, ["torch-cpu", "faiss"], repeat=1)


def test_timed_runs_repeat_until_they_fill_the_minimum_time(monkeypatch):
    """--repeat runs at least, then more until --min-time is filled (timeit's autorange), never past MAX_RUNS."""
    from itlr_gpu import bench

    clock = [0.0]
    monkeypatch.setattr(bench.time, "perf_counter", lambda: clock[0])
    monkeypatch.setattr(bench.time, "sleep", lambda s: None)

    def run(step: float):
        def fn():
            clock[0] += step
        return fn

    assert len(bench._timed(run(0.01), warmup=1, repeat=3, sync=False, min_time=0.0)) == 3
    times = bench._timed(run(0.01), warmup=1, repeat=3, sync=False, min_time=0.2)
    assert len(times) == 20 and times == pytest.approx([0.01] * 20)
    assert len(bench._timed(run(0.5), warmup=0, repeat=3, sync=False, min_time=0.2)) == 3
    assert len(bench._timed(run(1e-9), warmup=0, repeat=3, sync=False, min_time=0.2)) == bench.MAX_RUNS
    assert len(bench._timed(run(1e-9), warmup=0, repeat=bench.MAX_RUNS + 5, sync=False, min_time=0.2)) == \
        bench.MAX_RUNS + 5
