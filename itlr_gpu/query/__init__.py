"""The ITLR query language: AST, parser and canonical printer."""

from .ast import And, Node, Not, Or, Term, count_negations, make_and, make_or, self_negated, terms
from .parser import MAX_DEPTH, MAX_QUERY_CHARS, parse, tokenize
from .printer import canonical, natural_text, quote

__all__ = [
    "And", "Node", "Not", "Or", "Term", "count_negations", "make_and", "make_or", "self_negated", "terms",
    "MAX_DEPTH", "MAX_QUERY_CHARS", "parse", "tokenize", "canonical", "natural_text", "quote",
]
