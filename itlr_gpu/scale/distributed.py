"""Search on a Ray cluster: one Ray task per (query batch, index shard), merged exactly.

* The index is **not** shipped through the object store: every task opens the
  index folder from the shared path (memory-mapped / ``pread``) and reads only
  its row range.  All nodes must see the index at the same path (NFS, a
  parallel file system, or a copy at the same location on every node).
* The compiled program travels as its Arrow table (``Program.to_arrow``), the
  term embeddings as one small float32 array; both are ``ray.put`` once per batch.
* Where the cluster has GPUs each task asks for ``num_gpus=1`` and scores its
  shard on the GPU with the pinned-buffer / second-stream pipeline of
  :func:`~itlr_gpu.scale.shards.search_out_of_core`; otherwise ``num_cpus=1``.
* A worker that dies (process crash, node lost, OOM-killed) makes Ray rerun the
  task (``max_retries``); if it keeps dying the job stops with one clear error
  line naming the shard -- results are never silently partial.
* For jobs of many query batches, :class:`ShardPool` keeps each shard resident in
  one Ray actor (host RAM, or GPU memory) instead of re-reading it per batch; a
  dead actor is restarted (its shard reloaded) and the call retried, with the
  same limit and the same error.

Ray is optional: ``pip install ray`` (from the repository: ``pip install -e '.[ray]'``).
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..compiler import Program
from ..errors import InputError, ItlrError
from ..ops import Ops
from .shards import merge_topk, plan_shards, split_evenly

__all__ = ["RayConfig", "require_ray", "connect", "search_ray", "ShardPool", "RayJobError"]

DEFAULT_MAX_RETRIES = 3


class RayJobError(ItlrError):
    """A shard could not be scored (its worker kept dying, or the cluster went away)."""


def require_ray():
    """Import ray or raise one clear InputError saying how to install it."""
    try:
        import ray  # noqa: F401
    except ImportError as e:
        raise InputError("Ray is not installed", "--ray",
                         "pip install ray (in the repository: pip install -e '.[ray]') to run on a Ray cluster") from e
    return ray


@dataclass
class RayConfig:
    """Where and how to run.

    ``address``: None or ``"local"`` starts a local Ray for the job
    (``ray.init(num_cpus=num_workers)``); ``"auto"`` or ``"HOST:PORT"`` (or
    ``ray://HOST:10001``) joins an existing cluster.  ``num_workers``: shards per
    batch (default: GPUs in the cluster, else CPUs).  ``shard_rows`` overrides
    that with a fixed shard size.
    """

    address: str | None = None
    num_workers: int | None = None
    shard_rows: int | None = None
    chunk_size: int | None = None
    max_retries: int = DEFAULT_MAX_RETRIES
    use_gpus: bool | None = None  # None: when the cluster has GPUs
    placement_timeout: float = 600.0  # ShardPool: seconds for every actor to be placed and load its shard


_STARTED_LOCAL = False


def connect(config: RayConfig):
    """``ray.init`` per ``config`` unless Ray is already initialised in this process; returns the module."""
    global _STARTED_LOCAL
    ray = require_ray()
    if ray.is_initialized():
        return ray
    address = config.address
    if address not in (None, "", "local"):
        _check_reachable(address)   # its own error line (not wrapped in the one below)
    try:
        with _keep_signal_handlers():
            if address in (None, "", "local"):
                num_cpus = config.num_workers or os.cpu_count() or 1
                # "local": a new local Ray even where RAY_ADDRESS names a cluster (Ray would join it, and refuse
                # num_cpus there): no address given means a local one, as the docs say
                ray.init(address="local", num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                         logging_level="ERROR", configure_logging=True)
                _STARTED_LOCAL = True
            else:
                ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    except (ConnectionError, RuntimeError, ValueError) as e:
        where = "local Ray" if address in (None, "", "local") else f"Ray cluster at {address}"
        expected = "a running cluster (ray start --head) or no address for a local one"
        if re.search(r"auth|token", str(e), re.I) or where != "local Ray":
            # Ray >= 2.5x starts clusters with token authentication: a driver without the token cannot join
            expected += ("; a cluster started with token authentication needs its token, or RAY_AUTH_MODE=disabled "
                         "for ray start and this command alike (docs/distributed.md)")
        raise InputError(f"cannot start or join Ray ({str(e).splitlines()[0] if str(e) else type(e).__name__})",
                         where, expected) from e
    return ray


@contextlib.contextmanager
def _keep_signal_handlers():
    """``ray.init`` installs its own SIGTERM handler (a crash report, then exit) over the CLI's, which raises
    so that temporaries are removed and the job says how to resume (exit 143): the CLI's handlers are put
    back (main thread only, where handlers live)."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = [getattr(signal, name) for name in ("SIGTERM", "SIGHUP", "SIGINT") if hasattr(signal, name)]
    before = {sig: signal.getsignal(sig) for sig in sigs}
    try:
        yield
    except SystemExit as e:
        # Ray's handler, while it was in place, turned a SIGTERM into sys.exit(15): a silent exit 15. It ends as
        # any SIGTERM does under the CLI's handler (exit 143, temporaries removed); Ray's exit hook stops what
        # of the local Ray had started.
        if e.code == signal.SIGTERM and before.get(signal.SIGTERM) not in (None, signal.SIG_DFL, signal.SIG_IGN):
            from ..output import Terminated

            raise Terminated(signal.SIGTERM) from None
        raise
    finally:
        for sig, handler in before.items():
            if handler is not None and signal.getsignal(sig) is not handler:
                signal.signal(sig, handler)


CONNECT_TIMEOUT = 10.0   # seconds for a cluster's head to accept a connection


ADDRESS_FORMS = "HOST:PORT, ray://HOST:PORT, auto, or no address for a local Ray"


def _host_sep_port(address: str) -> tuple[str, str, str]:
    """``HOST:PORT`` or ``ray://HOST:PORT`` split at its last ':' (the separator "" when there is none)."""
    return (address[len("ray://"):] if address.startswith("ray://") else address).rpartition(":")


def address_problem(address: str) -> str:
    """What is wrong with a ``--ray`` address's form ("" when nothing): checked with the other options, before
    any file is read."""
    if address in ("local", "auto"):
        return ""
    host, sep, port = _host_sep_port(address)
    if not sep or not host:
        return "is not HOST:PORT"
    if not port.isdigit() or not 0 < int(port) < 65536:
        return "has no valid port"
    return ""


def _check_reachable(address: str) -> None:
    """Refuse a ``HOST:PORT`` (or ``ray://HOST:PORT``) that accepts no connection: ``ray.init`` would retry
    it forever, logging a line every few seconds ("auto" is Ray's to resolve)."""
    import socket

    if address == "auto":
        return
    why = address_problem(address)
    if why:
        raise InputError(f"Ray address {address!r} {why}", "--ray", ADDRESS_FORMS)
    host, _, port = _host_sep_port(address)
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT).close()
    except OSError as e:
        why = f"no answer within {CONNECT_TIMEOUT:g} s" if isinstance(e, TimeoutError) else \
            (e.strerror or type(e).__name__)
        raise InputError(f"cannot reach a Ray cluster at {address} ({why})", "--ray",
                         "the address a running cluster's head prints (ray start --head), auto, or no address for "
                         "a local Ray") from e


def shutdown_if_local() -> None:
    """Stop the local Ray this module started (an existing cluster is left alone)."""
    global _STARTED_LOCAL
    if _STARTED_LOCAL:
        import ray

        ray.shutdown()
        _STARTED_LOCAL = False


# --------------------------------------------------------------------------- the task


def _score_shard(index_path: str, lo: int, hi: int, program_table, terms: np.ndarray, ops: str, k: int,
                 device: str, chunk_size: int | None, fault_marker: str | None = None, linear=None):
    """Ray task body: open the index from the shared path, score rows lo:hi, return global (scores, rows)."""
    import torch

    from .shards import ShardedIndex, load_index, search_out_of_core

    if fault_marker is not None and not os.path.exists(fault_marker):
        # Test hook: simulate a worker crash on the first attempt only.
        with open(fault_marker, "w") as f:
            f.write(str(os.getpid()))
        os._exit(1)
    program = Program.from_arrow(program_table)
    # The driver verified the whole index; here only the shard files this task reads are hashed (once per
    # worker process), so a node with a stale or corrupt copy fails with the shard's name.
    index = load_index(index_path, verify=False)
    if isinstance(index, ShardedIndex):
        index.embeddings.verify(lo, hi)
    dev = torch.device("cuda" if device == "cuda" and torch.cuda.is_available() else device)
    if device == "cuda" and dev.type != "cuda":
        raise RuntimeError("task was given a GPU but torch sees no CUDA device")
    return search_out_of_core(index, terms, program, ops, k, dev, shard_rows=hi - lo, rows=(lo, hi),
                              chunk_size=chunk_size, linear=linear, backend="auto")   # the fused kernel on a GPU


_REMOTE: dict[tuple, Any] = {}


def _remote(ray, gpus: bool, max_retries: int):
    key = (gpus, max_retries)
    fn = _REMOTE.get(key)
    if fn is None:
        opts = {"num_gpus": 1, "num_cpus": 1} if gpus else {"num_cpus": 1}
        fn = ray.remote(**opts, max_retries=max_retries, retry_exceptions=False)(_score_shard)
        _REMOTE[key] = fn
    return fn


# --------------------------------------------------------------------------- driver side


def plan_cluster_shards(n_rows: int, config: RayConfig, ray) -> tuple[list[tuple[int, int]], bool]:
    """Shards for the cluster: one per GPU (or CPU) unless ``shard_rows`` is set; and whether to use GPUs."""
    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    use_gpus = gpus > 0 if config.use_gpus is None else config.use_gpus
    if use_gpus and gpus == 0:
        raise InputError("GPU workers requested but the Ray cluster has no GPU", "--ray", "a cluster with GPUs")
    if config.shard_rows:
        return plan_shards(n_rows, config.shard_rows), use_gpus
    workers = config.num_workers or (gpus if use_gpus else int(resources.get("CPU", 1))) or 1
    return split_evenly(n_rows, workers), use_gpus


def search_ray(
    index_path: str | os.PathLike,
    n_rows: int,
    term_embeddings: np.ndarray,
    program: Program,
    ops: Ops | str | None,
    k: int,
    config: RayConfig | None = None,
    *,
    on_shard: Callable[[int], None] | None = None,
    linear=None,
    _fault_marker: str | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k of ``program`` over the index at ``index_path`` (``n_rows`` documents), scored by Ray tasks.

    ``linear``: scoring options folded over the whole index (``scoring.linearize_options`` on the
    driver), shipped once to every task.

    Same contract as the single-process backends: ``(scores (Q, k'), rows (Q, k'))``
    sorted by score descending, ties to the lower row.
    """
    config = config or RayConfig()
    ray = connect(config)
    shards, use_gpus = plan_cluster_shards(n_rows, config, ray)
    index_path = os.path.abspath(os.fspath(index_path))
    program_ref = ray.put(program.to_arrow())
    terms_ref = ray.put(np.ascontiguousarray(term_embeddings, dtype=np.float32))
    linear_ref = ray.put(linear) if linear is not None else None
    remote = _remote(ray, use_gpus, config.max_retries)
    device = "cuda" if use_gpus else "cpu"
    k_eff = min(int(k), n_rows)
    pending = {
        remote.remote(index_path, lo, hi, program_ref, terms_ref, str(Ops.parse(ops)), k_eff, device,
                      config.chunk_size, _fault_marker, linear_ref): (i, lo, hi)
        for i, (lo, hi) in enumerate(shards)
    }
    return _gather_merge(ray, pending, len(shards), k_eff, config.max_retries, on_shard)


def _gather_merge(ray, pending: dict, n_shards: int, k: int, retries: int,
                  on_shard: Callable[[int], None] | None, force_cancel: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Collect every shard's (scores, rows) as it finishes (``pending``: ref -> (i, lo, hi)), then merge
    exactly; on any failure cancel the rest and raise -- never a partial merge.  ``force_cancel``: kill the
    workers of unfinished tasks (Ray refuses force for actor tasks: the pool stops its actors itself)."""
    parts: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            for ref in done:
                i, lo, hi = pending.pop(ref)
                parts[i] = _get(ray, ref, i, lo, hi, retries)
                if on_shard is not None:
                    on_shard(hi - lo)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=force_cancel)
        raise
    if len(parts) != n_shards:  # defensive
        raise RayJobError(f"Ray job: only {len(parts)} of {n_shards} shards finished")
    return merge_topk([parts[i] for i in range(n_shards)], k)


def _get(ray, ref, i: int, lo: int, hi: int, retries: int):
    from ray import exceptions as rex

    where = f"shard {i} (rows {lo}-{hi - 1})"
    try:
        return ray.get(ref)
    except rex.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, ItlrError):
            raise cause from None
        first = str(cause or e).strip().splitlines()
        raise RayJobError(f"Ray job: {where} failed: {first[-1] if first else type(e).__name__}") from e
    except (rex.WorkerCrashedError, rex.NodeDiedError, rex.ObjectLostError, rex.TaskCancelledError, rex.RayActorError,
            rex.OutOfMemoryError, rex.RaySystemError) as e:
        raise RayJobError(f"Ray job: {where}: the worker died {retries + 1} time(s) ({type(e).__name__}); "
                          f"the job was stopped, no partial result is kept") from e


# --------------------------------------------------------------------------- resident shards (actors)


class _ShardActor:
    """Ray actor body: rows ``lo:hi`` of the index read once and kept resident (host RAM, or GPU memory
    with a GPU) for every query batch of the job.  If the process dies Ray restarts the actor (which
    reloads its shard) and retries the call, up to ``max_retries`` times."""

    def __init__(self, index_path: str, lo: int, hi: int, device: str):
        import torch

        from .shards import ShardedIndex, load_index

        self.lo, self.hi, self.error = lo, hi, None
        self.docs = None
        try:
            index = load_index(index_path, verify=False)
            if isinstance(index, ShardedIndex):
                index.embeddings.verify(lo, hi)
            block = index.embeddings[lo:hi]
            # a single-file index is a memory map: its slice is a view of the file, read again at every
            # search; the shard is resident as documented only as a copy in this process's memory
            block = np.ascontiguousarray(block) if block.flags.owndata else np.array(block)
            self.device = torch.device("cuda" if device == "cuda" and torch.cuda.is_available() else device)
            if device == "cuda" and self.device.type != "cuda":
                raise RuntimeError("actor was given a GPU but torch sees no CUDA device")
            self.docs = torch.from_numpy(block).to(self.device) if self.device.type == "cuda" else block
        except ItlrError as e:   # reported by ready(): one clear line naming the shard, not a dead actor
            self.error = e

    def ready(self) -> int:
        if self.error is not None:
            raise self.error
        return self.hi - self.lo

    def search(self, program_table, terms: np.ndarray, ops: str, k: int, chunk_size: int | None,
               linear=None, fault_marker: str | None = None):
        from ..backends import get_backend

        if fault_marker is not None and not os.path.exists(fault_marker):
            with open(fault_marker, "w") as f:   # test hook: die once, mid-job
                f.write(str(os.getpid()))
            os._exit(1)
        engine = get_backend("auto", self.device)
        k_eff = min(int(k), self.hi - self.lo)
        if linear is not None:
            s, r = engine.search_linear(self.docs, linear, k_eff, device=self.device, chunk_size=chunk_size)
        else:
            s, r = engine.search(self.docs, terms, Program.from_arrow(program_table), Ops.parse(ops), k_eff,
                                 device=self.device, chunk_size=chunk_size)
        return s, r + self.lo


class ShardPool:
    """One resident-shard actor per shard for a whole job (many query batches): each shard is read once,
    not once per batch as with :func:`search_ray`'s tasks.  Results equal :func:`search_ray`'s.

    With more shards than CPUs (GPUs) the actors share them (fractional resources).  Use as a context
    manager, or call :meth:`close`.
    """

    def __init__(self, index_path: str | os.PathLike, n_rows: int, config: RayConfig | None = None):
        self.config = config or RayConfig()
        ray = self.ray = connect(self.config)
        self.shards, use_gpus = plan_cluster_shards(n_rows, self.config, ray)
        self.n_rows = n_rows
        resources = ray.cluster_resources()
        kind = "GPU" if use_gpus else "CPU"
        # Ray keeps resources in units of 1e-4: round the share down so n shares never exceed the total.
        share = min(1.0, math.floor(1e4 * float(resources.get(kind, 1)) / len(self.shards)) / 1e4)
        opts = {"num_gpus": share, "num_cpus": 0} if use_gpus else {"num_cpus": share}
        retries = self.config.max_retries
        cls = ray.remote(**opts, max_restarts=retries, max_task_retries=retries)(_ShardActor)
        path = os.path.abspath(os.fspath(index_path))
        device = "cuda" if use_gpus else "cpu"
        self.actors = [cls.remote(path, lo, hi, device) for lo, hi in self.shards]
        try:
            ready = {a.ready.remote(): i for i, a in enumerate(self.actors)}
            _, late = ray.wait(list(ready), num_returns=len(ready), timeout=self.config.placement_timeout)
            if late:
                i = ready[late[0]]
                lo, hi = self.shards[i]
                raise RayJobError(f"Ray job: shard {i} (rows {lo}-{hi - 1}): its actor was not ready after "
                                  f"{self.config.placement_timeout:g} s (it needs {share:g} {kind} and the shard "
                                  f"in memory); the job was stopped")
            for ref, i in ready.items():
                lo, hi = self.shards[i]
                _get(ray, ref, i, lo, hi, retries)
        except BaseException:
            self.close()
            raise

    def search(self, term_embeddings: np.ndarray, program: Program, ops: Ops | str | None, k: int, *,
               on_shard: Callable[[int], None] | None = None, linear=None,
               _fault_marker: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        ray = self.ray
        program_ref = ray.put(program.to_arrow())
        terms_ref = ray.put(np.ascontiguousarray(term_embeddings, dtype=np.float32))
        linear_ref = ray.put(linear) if linear is not None else None
        k_eff = min(int(k), self.n_rows)
        pending = {a.search.remote(program_ref, terms_ref, str(Ops.parse(ops)), k_eff, self.config.chunk_size,
                                   linear_ref, _fault_marker): (i, lo, hi)
                   for i, (a, (lo, hi)) in enumerate(zip(self.actors, self.shards))}
        return _gather_merge(ray, pending, len(self.shards), k_eff, self.config.max_retries, on_shard,
                             force_cancel=False)

    def close(self) -> None:
        for actor in getattr(self, "actors", []):
            try:
                self.ray.kill(actor)
            except Exception:  # already dead: nothing to release
                pass
        self.actors = []

    def __enter__(self) -> "ShardPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
