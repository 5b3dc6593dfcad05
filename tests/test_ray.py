"""Ray: shards scored by Ray tasks on a local 2-CPU cluster equal the single-process results."""

from __future__ import annotations

import numpy as np
import pytest

ray = pytest.importorskip("ray", reason="ray is not installed (pip install ray); Ray tests skipped")

from itlr_gpu import Ops  # noqa: E402
from itlr_gpu.backends.reference import search_reference  # noqa: E402
from itlr_gpu.cli import main  # noqa: E402
from itlr_gpu.errors import IndexIntegrityError  # noqa: E402
from itlr_gpu.io import read_table  # noqa: E402
from itlr_gpu.scale.bulk import BatchSearcher, read_results, run_bulk  # noqa: E402
from itlr_gpu.scale.distributed import RayConfig, RayJobError, search_ray  # noqa: E402
from itlr_gpu.scale.shards import load_index, save_sharded  # noqa: E402

from test_scale import (EXPRS, HashEncoder, _queries_file, corrupt_shard_copy, make_index,  # noqa: E402
                        program_and_terms)


@pytest.fixture(autouse=True)
def one_thread():
    """Ray runs each num_cpus=1 task with one BLAS thread; the CPU matmul can round the last bit differently
    with another thread count for some shapes, so the single-process reference runs with one thread too."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def cluster():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    root = tmp_path_factory.mktemp("ray")
    index = make_index(4000, seed=5, dup_every=113)
    index.save(root / "single")
    save_sharded(index, root / "sharded", 900)
    return root, index


@pytest.mark.parametrize("layout,config", [
    ("single", RayConfig(num_workers=2)),
    ("sharded", RayConfig(shard_rows=700)),
    ("sharded", RayConfig(num_workers=3, chunk_size=256)),
])
def test_ray_equals_single_process(cluster, saved, layout, config):
    root, index = saved
    program, terms = program_and_terms()
    want = search_reference(np.asarray(index.embeddings), terms, program, Ops(), 30, chunk_size=config.chunk_size)
    seen = []
    got = search_ray(root / layout, len(index), terms, program, Ops(), 30, config, on_shard=seen.append)
    assert sum(seen) == len(index)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_array_equal(got[0], want[0])


def test_ray_bulk_batches_equal_local_bulk(cluster, saved, tmp_path):
    root, _ = saved
    index = load_index(root / "sharded")
    ids = [f"q{i}" for i in range(len(EXPRS) * 4)]
    queries = EXPRS * 4
    common = dict(k=12, ops="min,max,one_minus", index_checksum=index.manifest["checksum"], batch_size=7)
    local = BatchSearcher(index, HashEncoder(), k=12, ops="min,max,one_minus", device="cpu")
    remote = BatchSearcher(index, HashEncoder(), k=12, ops="min,max,one_minus", mode="ray",
                           ray_config=RayConfig(num_workers=2))
    run_bulk(tmp_path / "local", ids, queries, local, **common)
    report = run_bulk(tmp_path / "ray", ids, queries, remote, **common)
    assert report.num_parts == 4
    assert read_results(tmp_path / "ray").equals(read_results(tmp_path / "local"))


def test_dead_worker_is_retried(cluster, saved, tmp_path):
    root, index = saved
    program, terms = program_and_terms()
    want = search_ray(root / "single", len(index), terms, program, Ops(), 10, RayConfig(num_workers=2))
    marker = tmp_path / "crashed-once"
    got = search_ray(root / "single", len(index), terms, program, Ops(), 10, RayConfig(num_workers=2),
                     _fault_marker=str(marker))
    assert marker.exists()  # a worker really died
    np.testing.assert_array_equal(got[1], want[1])


def test_dead_worker_without_retries_fails_clearly(cluster, saved, tmp_path):
    root, index = saved
    program, terms = program_and_terms()
    with pytest.raises(RayJobError, match=r"shard \d \(rows \d+-\d+\).*worker died.*no partial result") as info:
        search_ray(root / "single", len(index), terms, program, Ops(), 10,
                   RayConfig(num_workers=2, max_retries=0), _fault_marker=str(tmp_path / "m"))
    assert "\n" not in str(info.value)


def test_corrupt_shard_found_by_the_worker(cluster, saved, tmp_path):
    root, index = saved
    broken = corrupt_shard_copy(root / "sharded", tmp_path / "idx", 2)
    program, terms = program_and_terms()
    with pytest.raises(IndexIntegrityError, match=r"shard 2 \(rows 1800-2699\) checksum mismatch"):
        search_ray(broken, len(index), terms, program, Ops(), 10, RayConfig(shard_rows=1000))


def test_cli_ray_equals_plain(cluster, saved, tmp_path, monkeypatch):
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl")
    assert main(["search", str(root / "single"), str(q), "-o", str(tmp_path / "plain.arrow"), "-k", "5",
                 "--device", "cpu"]) == 0
    assert main(["search", str(root / "sharded"), str(q), "-o", str(tmp_path / "ray.arrow"), "-k", "5",
                 "--ray", "--shard-rows", "1500"]) == 0
    assert read_table(tmp_path / "ray.arrow").equals(read_table(tmp_path / "plain.arrow"))
    assert ray.is_initialized()  # an existing Ray session is reused, not shut down


def test_ray_with_scoring_options_equals_single_process(cluster, saved):
    from itlr_gpu.backends.reference import search_with_options
    from itlr_gpu.scoring import RECOMMENDED, linearize_options

    root, index = saved
    program, terms = program_and_terms()
    whole = np.random.default_rng(4).standard_normal((program.num_queries, terms.shape[1])).astype(np.float32)
    whole /= np.linalg.norm(whole, axis=1, keepdims=True)
    want = search_with_options(np.asarray(index.embeddings), terms, program, Ops(), 20, RECOMMENDED, whole,
                               chunk_size=256)
    lin = linearize_options(load_index(root / "sharded").embeddings, terms, program, Ops(), RECOMMENDED, whole)
    got = search_ray(root / "sharded", len(index), terms, program, Ops(), 20,
                     RayConfig(num_workers=2, chunk_size=256), linear=lin)
    np.testing.assert_array_equal(got[1], want[1])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)


# --------------------------------------------------------------------------- resident shards (actors)

from itlr_gpu.scale.distributed import ShardPool  # noqa: E402


@pytest.mark.parametrize("layout,config", [("single", RayConfig(num_workers=2)),
                                           ("sharded", RayConfig(num_workers=3, chunk_size=256))])
def test_shard_pool_equals_tasks_over_several_batches(cluster, saved, layout, config):
    root, index = saved
    program, terms = program_and_terms()
    batches = (Ops(), Ops("min", "max", "reciprocal"))
    # (tasks first: the pool's actors hold the CPUs while it is open)
    wants = [search_ray(root / layout, len(index), terms, program, ops, 30, config) for ops in batches]
    with ShardPool(root / layout, len(index), config) as pool:
        assert len(pool.actors) == config.num_workers          # 3 actors share the 2 CPUs
        for ops, want in zip(batches, wants):                   # two batches on the same resident shards
            got = pool.search(terms, program, ops, 30)
            np.testing.assert_array_equal(got[1], want[1])
            np.testing.assert_array_equal(got[0], want[0])


def test_shard_pool_restarts_a_dead_actor(cluster, saved, tmp_path):
    root, index = saved
    program, terms = program_and_terms()
    want = search_reference(np.asarray(index.embeddings), terms, program, Ops(), 10)
    marker = tmp_path / "crashed-once"
    with ShardPool(root / "single", len(index), RayConfig(num_workers=2)) as pool:
        got = pool.search(terms, program, Ops(), 10, _fault_marker=str(marker))
        assert marker.exists()
        np.testing.assert_array_equal(got[1], want[1])
        again = pool.search(terms, program, Ops(), 10)          # the restarted actor serves the next batch
        np.testing.assert_array_equal(again[1], want[1])


def test_shard_pool_dead_actor_without_retries_fails_clearly(cluster, saved, tmp_path):
    root, index = saved
    program, terms = program_and_terms()
    with ShardPool(root / "single", len(index), RayConfig(num_workers=2, max_retries=0)) as pool:
        with pytest.raises(RayJobError, match=r"shard \d \(rows \d+-\d+\).*worker died.*no partial result") as info:
            pool.search(terms, program, Ops(), 10, _fault_marker=str(tmp_path / "m"))
    assert "\n" not in str(info.value)


def test_a_failure_beside_a_running_actor_task_is_the_clear_error(cluster):
    """A failed shard while another actor's task still runs: the pending actor task is cancelled (Ray refuses
    force=True for actor tasks, which used to replace the clear error by a ValueError, depending on timing)."""
    from itlr_gpu.scale.distributed import _gather_merge

    class Slow:  # defined here so Ray ships it by value (the workers cannot import the test modules)
        def run(self, seconds: float) -> int:
            import time

            time.sleep(seconds)
            return 0

        def fail(self) -> int:
            raise RuntimeError("boom")

    actor = ray.remote(num_cpus=0)(Slow)
    slow, failing = actor.remote(), actor.remote()
    try:
        pending = {slow.run.remote(30.0): (0, 0, 10), failing.fail.remote(): (1, 10, 20)}
        with pytest.raises(RayJobError, match=r"shard 1 \(rows 10-19\) failed: .*boom"):
            _gather_merge(ray, pending, 2, 5, 0, None, force_cancel=False)
    finally:
        ray.kill(slow)
        ray.kill(failing)


def test_shard_pool_corrupt_shard_is_one_clear_error(cluster, saved, tmp_path):
    root, index = saved
    broken = corrupt_shard_copy(root / "sharded", tmp_path / "idx", 1)
    with pytest.raises(IndexIntegrityError, match=r"shard 1 \(rows 900-1799\) checksum mismatch"):
        ShardPool(broken, len(index), RayConfig(shard_rows=1000))


def test_cli_ray_stream_equals_resident(cluster, saved, tmp_path, monkeypatch, capsys):
    import itlr_gpu.cli_common as cli_common

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": HashEncoder())
    root, _ = saved
    q = _queries_file(tmp_path / "q.jsonl")
    common = ["-k", "6", "--ray", "--workers", "2", "--batch-size", "3"]
    assert main(["search", str(root / "sharded"), str(q), "-o", str(tmp_path / "resident.arrow"), *common]) == 0
    assert main(["search", str(root / "sharded"), str(q), "-o", str(tmp_path / "stream.arrow"), *common,
                 "--ray-stream"]) == 0
    assert read_table(tmp_path / "stream.arrow").equals(read_table(tmp_path / "resident.arrow"))
    assert main(["search", str(root / "sharded"), str(q), "-o", str(tmp_path / "x.arrow"), "--ray-stream"]) != 0
    assert "--ray-stream only goes with --ray" in capsys.readouterr().err


def test_starting_ray_keeps_the_clis_signal_handlers(tmp_path):
    """ray.init installs its own SIGTERM handler (a crash report, then exit): the CLI's own, which removes
    temporaries and exits 143 with how to resume, must still be the one after connecting (a fresh process:
    this module's cluster is already up).  RAY_ADDRESS naming a cluster (as on a Ray node) does not stop a job
    without --ray ADDRESS from starting its local Ray."""
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import signal
        from itlr_gpu.scale.distributed import RayConfig, connect, shutdown_if_local

        def mine(signum, frame):
            raise SystemExit(99)

        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, mine)
        connect(RayConfig(num_workers=1))
        try:
            print(all(signal.getsignal(s) is mine for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)))
        finally:
            shutdown_if_local()
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env=dict(os.environ, RAY_ADDRESS="127.0.0.1:1"))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "True"


def test_a_sigterm_while_ray_starts_ends_as_any_sigterm_under_the_cli():
    """Ray's own SIGTERM handler, in place during ray.init, exits with status 15 and no message; under the CLI's
    handler that becomes Terminated (exit 143, "itlr: interrupted"); elsewhere Ray's exit stands."""
    import signal

    from itlr_gpu.output import Terminated, handle_signals
    from itlr_gpu.scale.distributed import _keep_signal_handlers

    with handle_signals():
        cli_handler = signal.getsignal(signal.SIGTERM)
        with pytest.raises(Terminated) as caught:
            with _keep_signal_handlers():
                signal.signal(signal.SIGTERM, lambda signum, frame: None)   # what ray.init installs
                raise SystemExit(signal.SIGTERM)
        assert caught.value.signum == signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) is cli_handler   # put back
        with pytest.raises(SystemExit):   # another exit is not a signal's
            with _keep_signal_handlers():
                raise SystemExit(2)
    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with pytest.raises(SystemExit):   # no handler of ours: Ray's exit is the process's
            with _keep_signal_handlers():
                raise SystemExit(signal.SIGTERM)
    finally:
        signal.signal(signal.SIGTERM, previous)
