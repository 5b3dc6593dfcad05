"""Triton kernels of itlr-gpu (installed as ``itlr_gpu.kernels``).

``fused_logical_topk``: similarities + postfix programs + per-query top-k in one kernel.

``kernel_module(interpret)`` returns that module compiled for the GPU, or a copy
whose kernels run in Triton's interpreter.  The interpreter needs
TRITON_INTERPRET=1 set *before* ``import triton`` (Triton's own library
functions such as ``tl.zeros``/``tl.sort`` are ``@triton.jit`` functions too,
decorated when triton is imported); ``interpreter_ready()`` says whether this
process can run it.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading
from pathlib import Path

_LOCK = threading.Lock()
_INTERPRETED_NAME = __name__ + "._fused_logical_topk_interpreted"


def _yield_the_top_level_name() -> None:
    """This folder is ``itlr_gpu.kernels``; run from a checkout's root, Python also finds it as the top-level
    ``kernels``, the name of a PyPI package (Hugging Face's, which transformers >= 5.25 imports when installed:
    ``from kernels import CUDAProperties`` failed on this folder).  Imported by that name, hand it to the
    installed package when there is one (a module may replace itself in ``sys.modules`` while it loads)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [p for p in sys.path if os.path.abspath(p or os.curdir) != root]
    spec = importlib.machinery.PathFinder.find_spec(__name__, paths)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[__name__] = module
    spec.loader.exec_module(module)


if __name__ == "kernels":
    _yield_the_top_level_name()


def interpreter_ready(allow_set_env: bool = True) -> bool:
    """True when Triton runs interpreted in this process.

    If triton is not imported yet, no GPU is visible and ``allow_set_env``, sets
    TRITON_INTERPRET=1 for this process first (a CPU-only process cannot use
    compiled Triton kernels anyway).
    """
    if "triton" not in sys.modules and allow_set_env and os.environ.get("TRITON_INTERPRET") != "1":
        import torch

        if torch.cuda.is_available():
            return False
        os.environ["TRITON_INTERPRET"] = "1"
    import triton.language.standard as tl_standard

    return type(tl_standard.zeros).__name__ == "InterpretedFunction"


def kernel_module(interpret: bool):
    """The fused kernel module: compiled (``interpret=False``) or run by Triton's interpreter."""
    if not interpret:
        return importlib.import_module(__name__ + ".fused_logical_topk")
    if not interpreter_ready():
        raise RuntimeError("Triton's interpreter needs TRITON_INTERPRET=1 before triton is imported")
    with _LOCK:
        module = sys.modules.get(_INTERPRETED_NAME)
        if module is not None:
            return module
        try:  # else imported lazily at the first launch, inside the interpreter's patched tl, and fails
            import triton.experimental.gluon  # noqa: F401
        except Exception:
            pass
        path = Path(__file__).with_name("fused_logical_topk.py")
        spec = importlib.util.spec_from_file_location(_INTERPRETED_NAME, path)
        module = importlib.util.module_from_spec(spec)
        old = os.environ.get("TRITON_INTERPRET")
        os.environ["TRITON_INTERPRET"] = "1"
        sys.modules[_INTERPRETED_NAME] = module   # registered while it runs, as importlib does (dataclasses look it up)
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[_INTERPRETED_NAME]
            raise
        finally:
            if old is None:
                os.environ.pop("TRITON_INTERPRET", None)
            else:
                os.environ["TRITON_INTERPRET"] = old
        if not module.INTERPRETED:
            del sys.modules[_INTERPRETED_NAME]
            raise RuntimeError("Triton did not honour TRITON_INTERPRET=1")
        return module
