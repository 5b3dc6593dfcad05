"""Hypothesis profiles.

``ci`` (the default) keeps the fuzzing harness (tests/test_fuzz_cli.py) at a few dozen hostile inputs per
reader and subcommand; ``--hypothesis-profile=long`` runs thousands (see README, "Fuzzing").  Other tests
set their own ``max_examples`` and are not affected.
"""

import os

from hypothesis import HealthCheck, settings

# Results must not depend on a timing probe: the CPU backend's BLAS choice (torch vs numpy) is probed by speed,
# and the two sum in different orders, so a derandomised example can pass or fail with the machine's load.
# Both paths are tested explicitly (tests/test_gemm.py sets or removes ITLR_MATMUL where it needs to).
os.environ.setdefault("ITLR_MATMUL", "torch")
# Likewise the encoder's default precision on a CPU follows the CPU (bf16 where it has bfloat16 instructions):
# embeddings, and so rankings, would differ between CI machines.  fp32 here; the bf16 path and the automatic
# choice are tested explicitly (tests/test_encoders.py).
os.environ.setdefault("ITLR_CPU_BF16", "0")
# Ray starts its workers at niceness 15: beside the other tests on a small machine (pytest-xdist fills every
# core) they starve, and a Ray test that takes seconds alone waited minutes.  Normal priority for the tests' Ray.
os.environ.setdefault("RAY_worker_niceness", "0")

settings.register_profile("ci", settings.get_profile("default"))
settings.register_profile("long", max_examples=3000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
settings.load_profile("ci")


# --------------------------------------------------------------------------- the interpreted-kernel child

import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

CHILD_TEST = "test_triton_kernel.py::test_in_child_process"
interpreted_kernel_child: dict = {}

# Under pytest-xdist (scripts/test.sh: -n auto --dist loadfile --no-loadscope-reorder) a file goes to the next
# free worker in collection order: the longest files go first, so that no long file starts last and runs alone.
# (Longest first on 2 cores, in seconds of one core: the interpreted kernel tests ~370, the sm_90 compile ~300,
# Ray ~130, the quality benchmark's quick runs ~100, the GPU script's dry run ~80, the encoders ~60.)
LONGEST_FIRST = ("test_triton_kernel.py", "test_triton_compile.py", "test_ray.py", "test_quality_quick.py",
                 "test_gpu_check.py", "test_encoders.py")


def _xdist_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_collection_modifyitems(session, config, items):
    if not _xdist_worker(config):
        return
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))      # stable: the rest keep their order


def pytest_collection_finish(session):
    """Start the interpreted-kernel tests (tests/test_triton_kernel.py, in a child process with
    TRITON_INTERPRET=1) as soon as collection is done, when that test is selected, so that they run beside
    the rest of the suite on the second core instead of after it; test_in_child_process waits for them.
    Under pytest-xdist the workers already fill the cores: the test runs the child itself."""
    if _xdist_worker(session.config) or not any(item.nodeid.endswith(CHILD_TEST) for item in session.items):
        return
    log = tempfile.TemporaryFile(mode="w+")
    test_file = os.path.join(os.path.dirname(__file__), "test_triton_kernel.py")
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file], env=env,
                            stdout=log, stderr=subprocess.STDOUT, text=True,
                            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    interpreted_kernel_child.update(proc=proc, log=log)


def pytest_sessionfinish(session, exitstatus):
    proc = interpreted_kernel_child.get("proc")
    if proc is not None and proc.poll() is None:  # the run stopped early (-x, Ctrl-C): leave nothing behind
        proc.kill()
        proc.wait()
