"""itlr-gpu: batch engine for logical dense retrieval (ITLR).

A query is a boolean expression over short terms; a document's score is the
fuzzy composition of its per-term cosine similarities (AND=x*y, OR=x+y,
NOT=1-x by default).  Pipeline: query language -> compiler (one postfix program
per batch) -> backend (torch reference, fused Triton kernel) -> top-k in Arrow.
"""

from .compiler import Program, compile_queries
from .errors import IndexIntegrityError, InputError, ItlrError, QuerySyntaxError
from .ops import Ops
from .query import And, Not, Or, Term, canonical, parse

__version__ = "0.1.0"

__all__ = [
    "And", "Index", "IndexIntegrityError", "InputError", "ItlrError", "Not", "Ops", "Or", "Program",
    "QuerySyntaxError", "Term", "canonical", "compile_queries", "parse", "search", "translate", "__version__",
]


def __getattr__(name):
    # Heavy modules (sentence-transformers) load only when used.
    if name == "Index":
        from .index import Index

        return Index
    if name == "search":
        from .engine import search

        return search
    if name == "translate":
        from .translate import translate

        return translate
    raise AttributeError(name)
