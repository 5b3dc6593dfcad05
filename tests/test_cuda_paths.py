"""What the CUDA-only paths decide, checked on a machine without a GPU: torch's CUDA queries are replaced by
fakes, and the decisions (device names, the resident matrix, whether it fits, the errors) are asserted.  The
real launches run in the GPU check (tests/test_gpu.py)."""

from __future__ import annotations

import gc
import warnings

import numpy as np
import pytest
import torch

from itlr_gpu import InputError, Ops, compile_queries
from itlr_gpu import backends as B
from itlr_gpu.backends import triton as TB


@pytest.fixture
def one_gpu(monkeypatch):
    """torch believes in one CUDA GPU, cuda:0, current."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    monkeypatch.setattr(torch.cuda, "current_device", lambda: 0)


def test_cuda_and_cuda0_are_one_device(one_gpu):
    assert B.same_device(torch.device("cuda"), torch.device("cuda:0"))
    assert B.same_device("cuda:0", "cuda") and B.same_device("cpu", "cpu:0")
    assert not B.same_device("cuda:1", "cuda") and not B.same_device("cpu", "cuda:0")
    assert torch.device("cuda") != torch.device("cuda:0")   # why the helper exists


def test_a_gpu_number_beyond_the_machine_is_one_error(one_gpu):
    assert B.resolve_device("cuda:0") == torch.device("cuda:0")
    with pytest.raises(InputError, match=r"device 'cuda:1': this machine has 1 CUDA GPU \(expected cuda:0 \.\. cuda:0"):
        B.resolve_device("cuda:1")


def test_backend_triton_without_triton_is_one_error(monkeypatch):
    monkeypatch.setattr(B, "triton_available", lambda: False)
    for dev in ("cpu", "cuda"):
        with pytest.raises(InputError, match="triton is not installed"):
            B.get_backend("triton", torch.device(dev))


def test_the_resident_matrix_outlives_the_backend_object_and_goes_with_its_array():
    """get_backend makes a TritonBackend per search call; the upload is shared by all of them, and freed when
    the index's array is (a weakref), or replaced by another index's."""
    TB._drop_resident()
    docs = np.random.default_rng(0).standard_normal((64, 16)).astype(np.float16)
    cpu = torch.device("cpu")
    first = TB.TritonBackend()._upload(docs, cpu)
    assert TB.TritonBackend()._upload(docs, cpu) is first and first.dtype == torch.float16
    other = np.ones((8, 16), dtype=np.float32)
    assert TB.TritonBackend()._upload(other, cpu) is not first and TB._RESIDENT[0][2].dtype == torch.float32
    del other
    gc.collect()
    assert TB._RESIDENT[0] is None   # the array is gone: so is its copy
    resident = torch.zeros((4, 16), dtype=torch.float32)
    assert TB.TritonBackend()._upload(resident, torch.device("cpu:0")) is resident   # on the device already


def _fake_memory(monkeypatch, free: int, reserved: int = 0, allocated: int = 0) -> None:
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (free, 80 << 30))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: reserved)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: allocated)


@pytest.mark.parametrize("dtype, itemsize", [(np.float16, 2), (np.float32, 4), (np.float64, 4)])
def test_whether_the_matrix_fits_counts_its_kernel_dtype_and_a_margin(one_gpu, monkeypatch, dtype, itemsize):
    TB._drop_resident()
    docs = np.zeros((1000, 100), dtype=dtype)
    need = 1000 * 100 * itemsize
    cuda = torch.device("cuda")
    _fake_memory(monkeypatch, free=need * 2)
    assert TB.resident_fits(docs, cuda)
    _fake_memory(monkeypatch, free=need)
    assert not TB.resident_fits(docs, cuda)
    _fake_memory(monkeypatch, free=need, reserved=need, allocated=need // 2)   # the allocator's cache is free too
    assert TB.resident_fits(docs, cuda)
    assert TB.resident_fits(docs, torch.device("cpu"))   # the interpreter reads host memory


def test_auto_streams_a_matrix_that_does_not_fit_and_triton_says_so(one_gpu, monkeypatch):
    """--backend auto takes the chunked torch path for a batch the kernel would win when the matrix cannot be
    resident; --backend triton refuses with one line (nothing allocated on the GPU first)."""
    TB._drop_resident()
    program = compile_queries(['"a" AND NOT "b"'] * 8)
    docs = np.zeros((10_000, 384), dtype=np.float16)
    monkeypatch.setattr(B, "cuda_choice", lambda *a, **kw: "triton")
    auto = B.AutoBackend()
    _fake_memory(monkeypatch, free=100 << 30)
    assert auto._pick(program, 10, docs, "cuda") is not auto._torch and auto.last_choice == "triton"
    _fake_memory(monkeypatch, free=1 << 20)
    assert auto._pick(program, 10, docs, "cuda") is auto._torch and auto.last_choice == "torch"

    def no_gpu_allocation(*args, **kwargs):
        raise AssertionError("allocated on the GPU before the check")

    monkeypatch.setattr(torch, "empty", no_gpu_allocation)
    with pytest.raises(InputError, match=r"the index's 10,000 x 384 matrix \(0\.0 GiB\) does not fit in the free "
                                         r"memory of cuda .*--backend auto or torch"):
        TB.TritonBackend()._upload(docs, torch.device("cuda"))


def test_a_read_only_memory_map_goes_to_a_device_without_a_warning(tmp_path):
    """An index is mapped read-only; its chunks on the way to a GPU went through torch.from_numpy, whose
    warning the CLI printed as an itlr warning.  (The meta device takes the GPU branch without a GPU.)"""
    from itlr_gpu.backends.gemm import ChunkMatmul, host_tensor

    path = tmp_path / "m.npy"
    np.save(path, np.arange(64, dtype=np.float16).reshape(8, 8))
    docs = np.load(path, mmap_mode="r")
    assert not docs.flags.writeable
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = host_tensor(docs[2:6])
        chunk = ChunkMatmul(docs, torch.ones((2, 8)), 4, torch.device("meta")).chunk(0, 4)
    assert t.dtype == torch.float16 and t.shape == (4, 8) and float(t[0, 0]) == 16.0
    assert chunk.dtype == torch.float32 and chunk.device.type == "meta" and chunk.shape == (4, 8)


def test_an_unavailable_device_is_refused_before_the_encoder_runs():
    """search(device="cuda") on a machine without a GPU: one error, and no query term was embedded first."""
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    from itlr_gpu import Index, search

    calls = []

    class Encoder:
        dim = 8

        def encode(self, texts):
            calls.append(texts)
            return np.ones((len(texts), 8), dtype=np.float32)

    index = Index.from_arrays(np.eye(8, dtype=np.float32), [f"d{i}" for i in range(8)])
    with pytest.raises(InputError, match="no CUDA GPU is visible"):
        search(index, ['"a"'], Encoder(), k=2, device="cuda")
    assert calls == []


def test_cuda_out_of_memory_is_one_error_line(monkeypatch, tmp_path, capsys):
    from itlr_gpu import cli

    oom = getattr(torch, "OutOfMemoryError", None) or torch.cuda.OutOfMemoryError

    def parse(args):
        raise oom("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.1 GiB of which "
                  "1.2 GiB is free. Including non-PyTorch memory, this process has ...")

    monkeypatch.setattr(cli, "cmd_search", parse)
    assert cli.main(["search", "idx", "q.jsonl", "-o", str(tmp_path / "r.arrow")]) == 1
    err = capsys.readouterr().err
    assert err == ("itlr: error: out of GPU memory (CUDA out of memory. Tried to allocate 2.00 GiB): try --backend "
                   "torch, --memory-cap, --shard-rows or a smaller --batch-size\n")
    monkeypatch.setattr(cli, "cmd_parse", parse)   # the hint fits the command (parse has none of search's options)
    assert cli.main(["parse", "a"]) == 1
    assert capsys.readouterr().err.endswith("): try --device cpu\n")


def test_ray_workers_take_the_kind_of_device_asked_for():
    pytest.importorskip("ray")
    import argparse

    from itlr_gpu.scale.cli import _ray_config

    base = dict(ray=None, workers=None, shard_rows=None, chunk_size=None)
    assert _ray_config(argparse.Namespace(device="cpu", **base)).use_gpus is False
    assert _ray_config(argparse.Namespace(device="cuda", **base)).use_gpus is True
    assert _ray_config(argparse.Namespace(device="auto", **base)).use_gpus is None


def test_the_kernel_wrapper_launches_on_the_matrix_device():
    """Triton launches on the current CUDA device: the wrapper makes the matrix's device current around the
    launches (a source check: without a second GPU there is nothing to run)."""
    import inspect

    from itlr_gpu.kernels import fused_logical_topk as fk

    source = inspect.getsource(fk.fused_search)
    assert 'with torch.cuda.device(device) if device.type == "cuda"' in source
    assert source.index("with torch.cuda.device(device)") < source.index("fused_logical_topk_kernel[")


def test_search_and_rerank_take_a_gpu_number(tmp_path, capsys, monkeypatch):
    """--device cuda:N reaches the search (refused there on this machine with what it lacks, one line), and a
    device that is no device is argparse's error."""
    import json

    from itlr_gpu import Index, cli, cli_common
    from itlr_gpu.cli_common import search_device_spec

    assert [search_device_spec(d) for d in ("auto", "cpu", "cuda", "cuda:1")] == ["auto", "cpu", "cuda", "cuda:1"]
    for bad in ("gpu", "cuda:", "cuda:x", "mps"):
        with pytest.raises(Exception, match="expected auto, cpu, cuda or cuda:N"):
            search_device_spec(bad)
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")

    class Encoder:
        dim = 8
        name = "test"

        def encode(self, texts):
            return np.ones((len(texts), 8), dtype=np.float32) / np.sqrt(8)

    monkeypatch.setattr(cli_common, "make_encoder", lambda model, device="cpu": Encoder())
    Index.from_arrays(np.eye(8, dtype=np.float32), [f"d{i}" for i in range(8)]).save(tmp_path / "idx")
    (tmp_path / "q.jsonl").write_text(json.dumps({"query_id": "q1", "expr": "a"}) + "\n")
    argv = ["search", str(tmp_path / "idx"), str(tmp_path / "q.jsonl"), "-o", str(tmp_path / "r.arrow")]
    assert cli.main(argv + ["--device", "cuda:1"]) == 1
    err = capsys.readouterr().err
    assert err.count("itlr: error:") == 1 and "device: device cuda:1 requested but no CUDA GPU is visible" in err
    assert not (tmp_path / "r.arrow").exists()


def test_a_bfloat16_numpy_array_goes_to_a_device_as_float32():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from itlr_gpu.backends.gemm import host_tensor

    t = host_tensor(np.ones((2, 3), dtype=ml_dtypes.bfloat16))   # (torch.from_numpy refuses ml_dtypes' bfloat16)
    assert t.dtype == torch.float32 and float(t.sum()) == 6.0
