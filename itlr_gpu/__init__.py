"""itlr-gpu: batch engine for logical dense retrieval (ITLR).

A query is a boolean expression over short terms; a document's score is the
fuzzy composition of its per-term cosine similarities (AND=x*y, OR=x+y,
NOT=1-x by default).  Pipeline: query language -> compiler (one postfix program
per batch) -> backend (torch reference, fused Triton kernel) -> top-k in Arrow.
"""

import importlib.abc
import importlib.util
import os
import sys

from .errors import IndexIntegrityError, InputError, ItlrError, ItlrRuntimeWarning, ItlrWarning, QuerySyntaxError
from .ops import Ops
from .query import And, Not, Or, Term, canonical, parse

__version__ = "0.1.0"

__all__ = [
    "And", "Index", "IndexIntegrityError", "InputError", "ItlrError", "ItlrRuntimeWarning", "ItlrWarning", "Not",
    "Ops", "Or", "Program",
    "QuerySyntaxError", "RECOMMENDED", "ScoreOptions", "Term", "canonical", "compile_queries", "parse", "search",
    "translate", "__version__",
]


def __getattr__(name):
    # Heavy modules (numpy and pyarrow for the compiler, sentence-transformers) load only when used, so that
    # the `itlr` console script starts in a fraction of a second.
    if name in ("Program", "compile_queries"):
        from . import compiler

        return getattr(compiler, name)
    if name == "Index":
        from .index import Index

        return Index
    if name == "search":
        from .engine import search

        return search
    if name == "translate":
        from .translate import translate

        return translate
    if name in ("ScoreOptions", "RECOMMENDED"):
        from . import scoring

        return getattr(scoring, name)
    raise AttributeError(f"module 'itlr_gpu' has no attribute {name!r}")


def __dir__():
    # the lazily loaded names too: dir(), tab completion and IDEs list the public API
    own = {n for n, v in globals().items()   # not the standard modules this file imports (os, sys, ...)
           if n.startswith("__") or getattr(v, "__name__", "").startswith(__name__ + ".")}
    return sorted(own | set(__all__))


class _SourceCheckoutKernels(importlib.abc.MetaPathFinder):
    """Finds ``itlr_gpu.kernels`` in a source checkout that is not pip-installed: the kernels live in the
    repository's top-level ``kernels/`` folder, which setuptools installs as ``itlr_gpu.kernels``."""

    def __init__(self, folder: str):
        self.folder = folder

    def find_spec(self, name, path=None, target=None):
        if name != __name__ + ".kernels":
            return None
        return importlib.util.spec_from_file_location(name, os.path.join(self.folder, "__init__.py"),
                                                      submodule_search_locations=[self.folder])


def _find_source_kernels() -> None:
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(os.path.dirname(here), "kernels")
    if not os.path.exists(os.path.join(here, "kernels")) and os.path.isfile(os.path.join(source, "__init__.py")):
        if not any(isinstance(f, _SourceCheckoutKernels) for f in sys.meta_path):
            sys.meta_path.insert(0, _SourceCheckoutKernels(source))  # before any other install's finder


_find_source_kernels()
