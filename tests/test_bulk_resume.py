"""Bulk jobs: a job killed with SIGKILL resumes to the same dataset; mismatching reruns are refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from itlr_gpu.cli import main
from itlr_gpu.compiler import compile_queries
from itlr_gpu.errors import InputError
from itlr_gpu.io import read_table
from itlr_gpu.output import is_temp_name
from itlr_gpu.scale.bulk import BatchSearcher, read_results, run_bulk
from itlr_gpu.scale.shards import load_index

from test_scale import DIM, EXPRS, HashEncoder, _queries_file, make_index

N_QUERIES, BATCH = 40, 5  # 8 parts

SCRIPT = textwrap.dedent("""
    import sys, time, zlib
    import numpy as np
    from itlr_gpu.scale.bulk import BatchSearcher, run_bulk
    from itlr_gpu.scale.shards import load_index

    class HashEncoder:
        name = None
        dim = {dim}
        def encode(self, texts):
            return np.stack([np.random.default_rng(zlib.crc32(t.encode())).standard_normal({dim}).astype(np.float32)
                             for t in texts])

    index_dir, out, delay = sys.argv[1], sys.argv[2], float(sys.argv[3])
    exprs = {exprs!r}
    queries = [exprs[i % len(exprs)] for i in range({n})]
    ids = [f"q{{i}}" for i in range({n})]
    index = load_index(index_dir)
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", mode="shards", shard_rows=700,
                             device="cpu")
    def slow(ids, queries):
        table = searcher(ids, queries)
        time.sleep(delay)
        return table
    report = run_bulk(out, ids, queries, slow, k=8, ops="product,sum,one_minus",
                      index_checksum=index.manifest["checksum"], batch_size={batch}, progress=False)
    print("skipped", report.skipped, "written", len(report.written))
""").format(dim=DIM, exprs=EXPRS, n=N_QUERIES, batch=BATCH)


def _ids_queries():
    return [f"q{i}" for i in range(N_QUERIES)], [EXPRS[i % len(EXPRS)] for i in range(N_QUERIES)]


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("bulk")
    make_index(3000, seed=9).save(root / "idx")
    return root / "idx"


def _reference(index_dir, out):
    index = load_index(index_dir)
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", device="cpu")
    run_bulk(out, ids, queries, searcher, k=8, ops="product,sum,one_minus",
             index_checksum=index.manifest["checksum"], batch_size=BATCH, progress=False)
    return read_results(out)


def _parts_done(out):
    try:
        with open(out / "_itlr_job.json") as f:
            return len(json.load(f)["parts"])
    except (OSError, ValueError, KeyError):
        return 0


def test_sigkill_then_resume_equals_uninterrupted(index_dir, tmp_path):
    script = tmp_path / "job.py"
    script.write_text(SCRIPT)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, str(script), str(index_dir), str(out), "0.5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 90
    try:
        while _parts_done(out) < 1:
            assert proc.poll() is None, proc.stderr.read().decode()
            assert time.monotonic() < deadline, "the job wrote no part in time"
            time.sleep(0.02)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    manifest = json.loads((out / "_itlr_job.json").read_text())
    assert not manifest["complete"] and 1 <= len(manifest["parts"]) < 8
    done_before = len(manifest["parts"])
    with pytest.raises(InputError, match="incomplete"):
        read_results(out)

    rerun = subprocess.run([sys.executable, str(script), str(index_dir), str(out), "0"], capture_output=True,
                           text=True, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    skipped = int(rerun.stdout.split()[1])
    assert skipped >= done_before
    assert json.loads((out / "_itlr_job.json").read_text())["complete"]
    assert not [p for p in out.iterdir() if is_temp_name(p.name)]
    got = read_results(out)
    want = _reference(index_dir, tmp_path / "uninterrupted")
    assert got.num_rows == N_QUERIES * 8
    assert got.equals(want)  # row for row
    assert sorted(p.name for p in out.glob("part-*.parquet")) == [f"part-{i:05d}.parquet" for i in range(8)]


def test_damaged_part_is_recomputed_and_mismatch_is_refused(index_dir, tmp_path):
    out = tmp_path / "out"
    want = _reference(index_dir, out)
    (out / "part-00003.parquet").write_bytes(b"not parquet")  # listed in the manifest but damaged
    (out / "part-00005.parquet").unlink()                     # listed but gone
    index = load_index(index_dir)
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", device="cpu")
    report = run_bulk(out, ids, queries, searcher, k=8, ops="product,sum,one_minus",
                      index_checksum=index.manifest["checksum"], batch_size=BATCH, progress=False)
    assert sorted(report.written) == [3, 5] and report.skipped == 6 and report.damaged == [3, 5]
    assert read_results(out).equals(want)

    with pytest.raises(InputError, match=r"holds a finished job that differs from this command in k \(was 8, now 3\)"
                                         r".*to reuse it, or a new output folder"):
        run_bulk(out, ids, queries, searcher, k=3, ops="product,sum,one_minus",
                 index_checksum=index.manifest["checksum"], batch_size=BATCH, progress=False)
    with pytest.raises(InputError, match=r"in the queries \(their ids, or the expressions or texts scored: --field, "
                                         r"--fallback-text\)"):
        run_bulk(out, ids[::-1], queries[::-1], searcher, k=8, ops="product,sum,one_minus",
                 index_checksum=index.manifest["checksum"], batch_size=BATCH, progress=False)
    with pytest.raises(InputError, match=r"--batch-size \(was 5, now 4\)"):
        run_bulk(out, ids, queries, searcher, k=8, ops="product,sum,one_minus",
                 index_checksum=index.manifest["checksum"], batch_size=4, progress=False)


def test_refuses_foreign_folder_and_repeated_ids(index_dir, tmp_path):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    index = load_index(index_dir)
    searcher = BatchSearcher(index, HashEncoder(), k=3, device="cpu")
    kw = dict(k=3, ops=None, index_checksum=index.manifest["checksum"], batch_size=2, progress=False)
    with pytest.raises(InputError, match="not empty and has no _itlr_job.json"):
        run_bulk(tmp_path / "busy", ["a"], ["t0"], searcher, **kw)
    with pytest.raises(InputError, match="query_id 'x' repeats at row 2"):
        run_bulk(tmp_path / "new", ["x", "y", "x"], ["t0", "t1", "t2"], searcher, **kw)
    assert not (tmp_path / "new").exists()


def test_a_foreign_file_in_a_job_folder_is_refused_on_resume(index_dir, tmp_path):
    """A file that came into the folder while the job was stopped would make the finished dataset unreadable
    (pyarrow.dataset reads every file): the resume is refused, naming it, and goes on once it is moved out."""
    import pyarrow.dataset as ds

    out = tmp_path / "out"
    want = _reference(index_dir, out)
    (out / "part-00002.parquet").unlink()
    (out / "notes.txt").write_text("mine")
    index = load_index(index_dir)
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", device="cpu")
    kw = dict(k=8, ops="product,sum,one_minus", index_checksum=index.manifest["checksum"], batch_size=BATCH,
              progress=False)
    with pytest.raises(InputError, match=r"also holds notes\.txt, which is not a part of this job"):
        run_bulk(out, ids, queries, searcher, **kw)
    assert not (out / "part-00002.parquet").exists()
    (out / "notes.txt").unlink()
    (out / "_errors.arrow").write_bytes(b"readers skip names starting with '_'")   # allowed there: no refusal
    assert run_bulk(out, ids, queries, searcher, **kw).written == [2]
    (out / "_errors.arrow").unlink()
    assert read_results(out).equals(want)
    assert ds.dataset(out, format="parquet", exclude_invalid_files=False).to_table().num_rows == want.num_rows


def test_a_finished_folder_with_a_foreign_file_is_not_read(index_dir, tmp_path):
    """A part of another job copied into a finished folder (a part number beyond the job's, or any other name) is
    what pyarrow.dataset would add to the results: read_results (itlr eval of the folder) refuses it, naming it,
    rather than score results other than the folder's dataset."""
    import shutil

    out = tmp_path / "out"
    want = _reference(index_dir, out)
    shutil.copy(out / "part-00000.parquet", out / "part-00099.parquet")
    with pytest.raises(InputError, match=r"also holds part-00099\.parquet, which is not a part of this job .*then "
                                         r"read it again"):
        read_results(out)
    (out / "part-00099.parquet").rename(out / "_kept_aside.parquet")   # readers skip names starting with '_'
    assert read_results(out).equals(want)


def test_cli_folder_output_resumes(index_dir, tmp_path, monkeypatch, capsys):
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    q = _queries_file(tmp_path / "q.jsonl", EXPRS * 3, [f"q{i}" for i in range(18)])
    out = tmp_path / "dataset"
    args = ["search", str(index_dir), str(q), "-o", str(out), "-k", "4", "--batch-size", "5", "--device", "cpu"]
    assert main(args) == 0
    assert "4 parts" in capsys.readouterr().out
    first = read_results(out)
    # simulate an interruption after part 1: forget parts 2 and 3
    manifest = json.loads((out / "_itlr_job.json").read_text())
    for p in ("2", "3"):
        manifest["parts"].pop(p)
    manifest["complete"] = False
    (out / "_itlr_job.json").write_text(json.dumps(manifest))
    assert main(args) == 0
    assert "2 parts already done" in capsys.readouterr().out
    assert read_results(out).equals(first)
    # a part changed on disk is not read as a result, is recomputed by a rerun, and said so
    (out / "part-00001.parquet").write_bytes(b"changed")
    with pytest.raises(InputError, match=r"part-00001.parquet is missing or changed since the job wrote it"):
        read_results(out)
    (out / "part-00002.parquet").unlink()
    with pytest.raises(InputError, match=r"part-00001.parquet is missing or changed"):   # the first bad part
        read_results(out)
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "itlr: warning: 2 listed parts missing or changed on disk, recomputed (first: part-00001.parquet)" \
        in captured.err and "2 parts already done" in captured.out
    assert read_results(out).equals(first)
    # the same job as one file: same rows (each batch is scored identically)
    assert main(args[:4] + [str(tmp_path / "one.arrow")] + args[5:]) == 0
    assert read_table(tmp_path / "one.arrow").equals(first)
    assert main(args[:6] + ["7"] + args[7:]) == 1
    err = capsys.readouterr().err
    assert "differs from this command in k (was 4, now 7)" in err
    assert np.all(np.diff(first.column("rank").to_numpy()[:4]) == 1)


def test_a_folder_named_with_a_dot_needs_a_trailing_slash(index_dir, tmp_path, monkeypatch, capsys):
    # "run.v2/" is a folder however it is named; "run.v2" without the slash (and not existing) is a file name
    # of an unknown type, and the error says how to name a folder
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    q = _queries_file(tmp_path / "q.jsonl", EXPRS, [f"q{i}" for i in range(len(EXPRS))])
    base = ["search", str(index_dir), str(q), "-k", "3", "--batch-size", "4", "--device", "cpu", "-o"]
    assert main(base + [str(tmp_path / "run.v2")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown output type .v2" in err[0] and "a name ending with '/'" in err[0]
    assert not (tmp_path / "run.v2").exists()
    assert main(base + [str(tmp_path / "run.v2") + "/"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("run.v2/ (2 parts)")
    assert read_results(tmp_path / "run.v2").num_rows == 3 * len(EXPRS)
    # a result file inside a result folder would be read as one of its parts: refused, nothing written
    assert main(base + [str(tmp_path / "run.v2" / "x.arrow")]) == 1
    assert "inside the result folder" in capsys.readouterr().err
    assert not (tmp_path / "run.v2" / "x.arrow").exists()
    assert read_results(tmp_path / "run.v2").num_rows == 3 * len(EXPRS)
    # and so is a folder output there: another job's results, shards, an index (pyarrow would read them all)
    for more in (["search", str(index_dir), str(q), "-k", "3", "--batch-size", "4", "--device", "cpu", "-o",
                  str(tmp_path / "run.v2" / "inner") + "/"],
                 ["shard", str(index_dir), "-o", str(tmp_path / "run.v2" / "sh"), "--shard-rows", "100"]):
        assert main(more) == 1
        assert "inside the result folder" in capsys.readouterr().err
    assert sorted(p.name for p in (tmp_path / "run.v2").iterdir() if not p.name.startswith("_")) == \
        ["part-00000.parquet", "part-00001.parquet"]
    assert read_results(tmp_path / "run.v2").num_rows == 3 * len(EXPRS)


def test_hybrid_texts_are_part_of_the_job_key(index_dir, tmp_path, monkeypatch, capsys):
    # same ids and expressions, other texts: a hybrid scores them differently, so a resume must not mix the two
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())

    def queries(path, texts):
        path.write_text("".join(json.dumps({"query_id": f"q{i}", "expr": e, "text": t}) + "\n"
                                for i, (e, t) in enumerate(zip(EXPRS, texts))))
        return path

    first = queries(tmp_path / "a.jsonl", [f"first text {i}" for i in range(len(EXPRS))])
    other = queries(tmp_path / "b.jsonl", [f"other text {i}" for i in range(len(EXPRS))])
    out = tmp_path / "job"
    base = ["search", str(index_dir), "-o", str(out), "-k", "3", "--batch-size", "2", "--device", "cpu"]
    assert main(base[:2] + [str(first)] + base[2:] + ["--hybrid", "0.5"]) == 0
    (out / "part-00001.parquet").unlink()
    capsys.readouterr()
    assert main(base[:2] + [str(other)] + base[2:] + ["--hybrid", "0.5"]) == 1
    assert "the scoring options (or the texts --hybrid embeds)" in capsys.readouterr().err
    # without a hybrid the texts are not scored: the same expressions resume
    plain = tmp_path / "plain"
    args = ["search", str(index_dir), str(first), "-o", str(plain), "-k", "3", "--batch-size", "2", "--device", "cpu",
            "--calibration", "equalize"]
    assert main(args) == 0
    (plain / "part-00001.parquet").unlink()
    assert main(args[:2] + [str(other)] + args[3:]) == 0


def test_encoder_identity_covers_the_settings_that_decide_the_vectors():
    """``auto`` may resolve to another backend or precision on another machine or installation: a job started
    with one encoder must not be resumed with another of the same model name."""
    from itlr_gpu.scale.bulk import encoder_identity

    class Configured(HashEncoder):
        name = "all-MiniLM-L6-v2"

        def __init__(self, **settings):
            self.settings = {"model": self.name, "max_length": 128, "backend": "openvino", "precision": "bf16",
                             "weights": "sha256:0123", **settings}

    base = encoder_identity(Configured())
    assert "backend=openvino" in base and "precision=bf16" in base and "max_length=128" in base
    for change in ({"backend": "torch"}, {"precision": "fp32"}, {"max_length": 256}, {"weights": "sha256:9999"}):
        assert encoder_identity(Configured(**change)) != base, change
    assert encoder_identity(Configured()) == base


def test_a_job_encodes_each_term_once(index_dir, tmp_path):
    """Batches that repeat terms reuse their vectors (each distinct term is encoded once per job), and the
    results equal a job that encodes every batch afresh."""
    class Counting(HashEncoder):
        def __init__(self):
            self.seen: list[str] = []

        def encode(self, texts):
            self.seen.extend(texts)
            return super().encode(texts)

    index = load_index(index_dir)
    ids, queries = _ids_queries()
    counting = Counting()
    searcher = BatchSearcher(index, counting, k=8, ops="product,sum,one_minus", device="cpu")
    run_bulk(tmp_path / "once", ids, queries, searcher, k=8, ops="product,sum,one_minus",
             index_checksum=index.manifest["checksum"], batch_size=BATCH, progress=False)
    distinct = set(compile_queries(queries).terms)
    assert sorted(counting.seen) == sorted(distinct)
    assert read_results(tmp_path / "once").equals(_reference(index_dir, tmp_path / "fresh"))


def test_a_second_job_into_a_folder_being_written_is_refused(index_dir, tmp_path):
    """Two jobs into one result folder (a retry, Enter pressed twice) would write parts of both side by side:
    the second is refused while the first holds the folder's lock; a lock file a killed job left behind is no
    obstacle, and a finished job leaves none."""
    import multiprocessing as mp

    from itlr_gpu.output import LOCK_FILE, folder_lock

    index = load_index(index_dir)
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", device="cpu")
    kw = dict(k=8, ops="product,sum,one_minus", index_checksum=index.manifest["checksum"], batch_size=BATCH,
              progress=False)
    out = tmp_path / "out"
    out.mkdir()
    ready, release = mp.Event(), mp.Event()
    holder = mp.get_context("fork").Process(target=_hold_lock, args=(out, ready, release))
    holder.start()
    try:
        assert ready.wait(30)
        with pytest.raises(InputError, match="another itlr job is writing this result folder now"):
            run_bulk(out, ids, queries, searcher, **kw)
        assert sorted(os.listdir(out)) == [LOCK_FILE]   # nothing of the refused job
    finally:
        release.set()
        holder.join(30)
    (out / LOCK_FILE).write_text("")   # as a kill -9 leaves it
    report = run_bulk(out, ids, queries, searcher, **kw)
    assert report.written and LOCK_FILE not in os.listdir(out)
    with folder_lock(out):   # held and released in one process too
        pass
    assert LOCK_FILE not in os.listdir(out)


def _hold_lock(folder, ready, release):
    from itlr_gpu.output import folder_lock

    with folder_lock(folder):
        ready.set()
        release.wait(30)


def test_an_interrupted_bulk_job_says_that_rerunning_resumes_it(index_dir, tmp_path, monkeypatch, capsys):
    import itlr_gpu.cli_common as cli_common
    import itlr_gpu.scale.bulk as bulk

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    q = _queries_file(tmp_path / "q.jsonl", EXPRS, [f"q{i}" for i in range(len(EXPRS))])

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(bulk, "run_bulk", interrupted)
    base = ["search", str(index_dir), str(q), "-k", "4", "--device", "cpu", "-o"]
    assert main(base + [str(tmp_path / "dataset")]) == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == ("itlr: interrupted; the same command resumes the job "
                                                                "after its last finished part")
    monkeypatch.setattr(cli_common, "make_encoder", interrupted)
    assert main(base + [str(tmp_path / "one.arrow")]) == 130   # one file: nothing to resume
    assert capsys.readouterr().err.strip().splitlines()[-1] == "itlr: interrupted"


def _failed_midway(index_dir, out):
    """A bulk job into ``out`` whose third batch fails on a query: (the error, ids, queries, a working searcher,
    the job's keyword arguments)."""
    index = load_index(index_dir)
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", device="cpu")

    def failing(batch_ids, batch_queries):
        if "q12" in batch_ids:
            raise InputError("query 'q12' overflows", "queries", "finite scores")
        return searcher(batch_ids, batch_queries)

    kw = dict(k=8, ops="product,sum,one_minus", index_checksum=index.manifest["checksum"], batch_size=BATCH,
              progress=False)
    with pytest.raises(InputError) as info:
        run_bulk(out, ids, queries, failing, **kw)
    assert _parts_done(out) == 2
    return info.value, ids, queries, searcher, kw


def test_a_bad_input_error_midway_names_the_parts_it_keeps(index_dir, tmp_path):
    # a query that fails in its batch (here: the third) leaves the finished parts, and the error says so
    out = tmp_path / "out"
    error, ids, queries, searcher, kw = _failed_midway(index_dir, out)
    (note,) = error.details
    assert f"{out} keeps the 2 part(s) finished before this error" in note and "rerun the same command" in note
    assert "changed queries or options need a new output folder" in note   # (fixing the query changes the job)
    with pytest.raises(InputError, match="incomplete"):
        read_results(out)
    # the query fixed: another job, refused with its own advice and not the resume advice again (a review found
    # the two sending the user round in a loop)
    fixed = [q if i != "q12" else '"fixed"' for i, q in zip(ids, queries)]
    with pytest.raises(InputError, match="interrupted job that differs from this command in the queries") as again:
        run_bulk(out, ids, fixed, searcher, **kw)
    assert "or a new output folder" in str(again.value) and not getattr(again.value, "details", ())


@pytest.mark.parametrize("damage", ["legacy", "format", "json"])
def test_a_folder_that_cannot_be_resumed_gets_its_own_advice_not_the_resume_note(index_dir, tmp_path, damage):
    """A folder refused before any work (an older version's, a job file of another format, a damaged job file)
    says what to do; the "rerun the same command to resume" note, which would fail the same way, is not added (an
    outside review found it on these three)."""
    from itlr_gpu.scale.bulk import JOB_FILE, LEGACY_MANIFEST

    out = tmp_path / "out"
    _, ids, queries, searcher, kw = _failed_midway(index_dir, out)
    job = out / JOB_FILE
    if damage == "legacy":
        job.unlink()
        (out / LEGACY_MANIFEST).write_text(json.dumps({"format": "itlr-bulk/1"}))
    elif damage == "format":
        job.write_text(json.dumps({**json.loads(job.read_text()), "format": "itlr-bulk/9"}))
    else:
        job.write_text("{oops")
    with pytest.raises(InputError, match="cannot be resumed safely|use a new output folder|delete the folder") as info:
        run_bulk(out, ids, queries, searcher, **kw)
    assert not any("rerun the same command" in d for d in getattr(info.value, "details", ()))


def test_a_finished_job_refused_by_another_command_is_not_called_incomplete(index_dir, tmp_path, capsys):
    """-k differs from the finished job's: the refusal names it, and says nothing of parts "marked incomplete"
    (the job file still says complete, and the folder stays readable)."""
    out = tmp_path / "out"
    want = _reference(index_dir, out)
    index = load_index(index_dir)
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=5, ops="product,sum,one_minus", device="cpu")
    kw = dict(k=5, ops="product,sum,one_minus", index_checksum=index.manifest["checksum"], batch_size=BATCH,
              progress=False)
    with pytest.raises(InputError, match=r"finished job that differs from this command in k \(was 8, now 5\)") as info:
        run_bulk(out, ids, queries, searcher, **kw)
    assert not any("marked incomplete" in d for d in getattr(info.value, "details", ()))
    assert read_results(out).equals(want)


@pytest.mark.parametrize("mode, replace", [("memory", "in place"), ("shards", "in place"), ("memory", "renamed")])
def test_an_index_changed_during_a_job_stops_it_before_a_part_of_other_vectors(tmp_path, mode, replace):
    # an outside review: a single-file index written over mid-job (cp over embeddings.npy, or `itlr index -o` of
    # the same folder) was read through its memory map, and the job finished "complete" with parts of other vectors
    from itlr_gpu.errors import IndexIntegrityError
    from itlr_gpu.scale.shards import check_unchanged

    src = tmp_path / "idx"
    make_index(3000, seed=9).save(src)
    index = load_index(src)
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", mode=mode, shard_rows=700,
                             device="cpu")
    path = src / "embeddings.npy"
    calls = []

    def changing(batch_ids, batch_queries):
        table = searcher(batch_ids, batch_queries)
        calls.append(1)
        if len(calls) == 2:   # the second batch computed; the file changes before its part is written
            matrix = np.load(path)
            time.sleep(0.01)
            if replace == "in place":
                with open(path, "r+b") as f:
                    f.seek(-matrix[::-1].nbytes, os.SEEK_END)
                    f.write(np.ascontiguousarray(matrix[::-1]).tobytes())
            else:
                np.save(tmp_path / "other.npy", matrix[::-1])
                os.replace(tmp_path / "other.npy", path)
        return table

    out = tmp_path / "out"
    with pytest.raises(IndexIntegrityError, match="changed while the index was open"):
        run_bulk(out, ids, queries, changing, k=8, ops="product,sum,one_minus",
                 index_checksum=index.manifest["checksum"], batch_size=BATCH, progress=False,
                 check_index=lambda: check_unchanged(index))
    job = json.loads((out / "_itlr_job.json").read_text())
    assert list(job["parts"]) == ["0"] and job["complete"] is False
    searcher.close()
    # the changed file no longer matches its checksum: the rerun is refused when it opens the index
    with pytest.raises(IndexIntegrityError, match="checksum mismatch"):
        load_index(src)


def test_sharding_an_index_written_over_since_it_was_opened_is_refused(tmp_path):
    # a review: itlr shard of an index whose embeddings.npy was copied over after it was opened wrote shards of the
    # other vectors under a checksum of their own, which every later check accepted
    from itlr_gpu.errors import IndexIntegrityError
    from itlr_gpu.scale.shards import save_sharded

    make_index(3000, seed=9).save(tmp_path / "idx")
    index = load_index(tmp_path / "idx")
    path = tmp_path / "idx" / "embeddings.npy"
    matrix = np.load(path)
    with open(path, "r+b") as f:
        f.seek(-matrix.nbytes, os.SEEK_END)
        f.write(np.ascontiguousarray(matrix[::-1]).tobytes())
    with pytest.raises(IndexIntegrityError, match="not the checksum"):
        save_sharded(index, tmp_path / "sharded", 700)
    assert not (tmp_path / "sharded").exists()


def test_run_bulk_checks_a_batch_searchers_index_by_default(tmp_path):
    # the Python API: a BatchSearcher's index is checked before each part without a check_index argument
    from itlr_gpu.errors import IndexIntegrityError

    make_index(3000, seed=9).save(tmp_path / "idx")
    index = load_index(tmp_path / "idx")
    ids, queries = _ids_queries()
    searcher = BatchSearcher(index, HashEncoder(), k=8, ops="product,sum,one_minus", device="cpu")
    path = tmp_path / "idx" / "embeddings.npy"
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))   # a later modification time: another file
    with pytest.raises(IndexIntegrityError, match="changed while the index was open"):
        run_bulk(tmp_path / "out", ids, queries, searcher, k=8, ops="product,sum,one_minus",
                 index_checksum=index.manifest["checksum"], batch_size=BATCH, progress=False)
    searcher.close()


def test_console_refuses_a_damaged_folder_with_exit_1(index_dir, tmp_path, monkeypatch, capsys):
    """The console script, as a user runs it (a new process, so its exit goes through interpreter teardown): a
    result folder with a changed part is one error line and exit 1, never an abort (exit 134) from Arrow buffers
    freed at teardown with torch loaded."""
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    q = _queries_file(tmp_path / "q.jsonl", EXPRS * 3, [f"q{i}" for i in range(18)])
    out = tmp_path / "dataset"
    assert main(["search", str(index_dir), str(q), "-o", str(out), "-k", "4", "--batch-size", "5",
                 "--device", "cpu"]) == 0
    capsys.readouterr()
    part = out / "part-00001.parquet"
    part.write_bytes(part.read_bytes()[:-1] + b"x")
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text("query-id\tcorpus-id\tscore\nq0\td0\t1\n")
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-m", "itlr_gpu", "eval", str(out), str(qrels)], capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 1, proc.stderr
        assert proc.stderr.count("\n") == 1 and "part-00001.parquet is missing or changed" in proc.stderr


def test_search_and_rerank_note_other_languages_operators(index_dir, tmp_path, monkeypatch, capsys):
    """A query file written for another engine ("t0 && t1", "t2 -t3") is searched as the grammar reads it, and
    search, rerank and bench say once that those symbols are words of a term (as `itlr parse` does)."""
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    q = _queries_file(tmp_path / "q.jsonl", ["t0 && t1", "t2 AND -t3", "t4", '"t5 && t6"'], ["a", "b", "c", "d"])
    note = ("itlr: note: 2 queries hold '&&', '-word' (the first 'a'): here they are part of a term; the operators "
            "are AND, OR and NOT (itlr parse shows how an expression reads)\n")
    out = tmp_path / "r.arrow"
    assert main(["search", str(index_dir), str(q), "-o", str(out), "-k", "3", "--device", "cpu"]) == 0
    assert capsys.readouterr().err.count(note) == 1
    assert read_table(out).num_rows == 12   # searched as written: "t0 && t1" is one term
    assert main(["rerank", str(index_dir), str(q), str(out), "-o", str(tmp_path / "rr.arrow")]) == 0
    assert note in capsys.readouterr().err
    assert main(["bench", str(index_dir), str(q), "--repeat", "1", "--backends", "torch-cpu"]) == 0
    assert note in capsys.readouterr().err
    plain = _queries_file(tmp_path / "p.jsonl", ["t0 AND NOT t1", '"R&D" OR t2'], ["a", "b"])
    assert main(["search", str(index_dir), str(plain), "-o", str(tmp_path / "p.arrow"), "-k", "3"]) == 0
    assert "part of a term" not in capsys.readouterr().err


def test_search_rerank_bench_note_a_term_anded_with_its_negation(index_dir, tmp_path, monkeypatch, capsys):
    """A query that ANDs a term with its own negation is searched as written (it parses), and search, rerank and
    bench say once that it scores x(1 - x); the same term negated under an OR, or another term, is no note."""
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    q = _queries_file(tmp_path / "q.jsonl", ["t0 AND t1 OR t2 AND NOT T2", "t3 AND NOT t3", "t4 OR NOT t4"],
                      ["a", "b", "c"])
    note = ('itlr: note: 2 queries hold a term ANDed with its own negation (the first \'a\': "T2" AND NOT "T2"), '
            "which scores x(1 - x): highest for documents half-similar to the term, not a ranking by it\n")
    out = tmp_path / "r.arrow"
    assert main(["search", str(index_dir), str(q), "-o", str(out), "-k", "3", "--device", "cpu"]) == 0
    assert capsys.readouterr().err.count(note) == 1
    assert read_table(out).num_rows == 9
    assert main(["rerank", str(index_dir), str(q), str(out), "-o", str(tmp_path / "rr.arrow")]) == 0
    assert note in capsys.readouterr().err
    assert main(["bench", str(index_dir), str(q), "--repeat", "1", "--backends", "torch-cpu"]) == 0
    assert note in capsys.readouterr().err
    plain = _queries_file(tmp_path / "p.jsonl", ["t0 OR NOT t0", "t1 AND NOT (t1 AND t2)", "t1 AND NOT t2"],
                          ["a", "b", "c"])
    assert main(["search", str(index_dir), str(plain), "-o", str(tmp_path / "p.arrow"), "-k", "3"]) == 0
    assert "own negation" not in capsys.readouterr().err


def test_run_output_refuses_spaced_ids_before_scoring(tmp_path, monkeypatch, capsys):
    """-o .trec: an id a run cannot hold is refused before the search, whether or not it would rank in the top k
    (an outside audit saw -k 2 pass and -k 50 fail after the whole search); .arrow takes such ids."""
    import itlr_gpu.cli_common as cli_common
    from itlr_gpu.index import Index
    from test_scale import unit_rows

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    x = unit_rows(np.random.default_rng(3), 50)
    idx = tmp_path / "idx"
    Index.from_arrays(x, [f"d{i}" for i in range(49)] + ["doc one"], dtype="float32").save(idx)
    q = _queries_file(tmp_path / "q.jsonl", ["t0", "t1 AND NOT t2"], ["a", "b"])
    for k in ("1", "50"):
        run = tmp_path / f"r{k}.trec"
        assert main(["search", str(idx), str(q), "-o", str(run), "-k", k]) == 1
        assert "doc id 'doc one' holds white space, which a TREC run's fields cannot" in capsys.readouterr().err
        assert not run.exists()
    assert main(["search", str(idx), str(q), "-o", str(tmp_path / "r.arrow"), "-k", "50"]) == 0
    rr = tmp_path / "rr.trec"
    assert main(["rerank", str(idx), str(q), str(tmp_path / "r.arrow"), "-o", str(rr)]) == 1
    assert "doc id 'doc one' holds white space" in capsys.readouterr().err and not rr.exists()
