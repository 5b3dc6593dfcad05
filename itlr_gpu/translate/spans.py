"""Align a translation's terms with the words of the request they were taken from.

A search term is meant to be a phrase of the request, copied word for word: the labelled
set follows that rule for 856 of its 861 terms, articles included ("the Premier League").
Small models drift from it in two harmless-looking ways that still change the query's
canonical form (and so its cache key and the benchmark's exact-match score): they change
the case of a phrase ("rust memory safety" for "Rust memory safety") and drop a leading
article ("Belgian Congo" for "the Belgian Congo").  :func:`align_terms` undoes both for every
term found in the request; a term the model wrote in its own words is left alone.
"""

from __future__ import annotations

import re

from ..query.ast import And, Node, Not, Or, Term

__all__ = ["align_term", "align_terms", "strip_terminal_escapes"]

# a terminal's colour or cursor sequence pasted with a request ("fish\x1b[31m and chips"): no words of it
_TERMINAL_ESCAPE_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")


def strip_terminal_escapes(text: str) -> str:
    """``text`` with terminal escape sequences replaced by a space, so that neither translator reads "[31m"
    as a word of the request."""
    return _TERMINAL_ESCAPE_RE.sub(" ", text) if "\x1b" in text else text


_ARTICLE_BEFORE = re.compile(r"(?:^|(?<=\W))(the|a|an)\s+$", re.IGNORECASE)


def align_term(term: str, request: str) -> str:
    """``term`` as written in ``request``: the first occurrence on word boundaries, ignoring
    case, with a directly preceding article ("the", "a", "an"); ``term`` itself when the
    request does not contain it."""
    if not term.strip():
        return term
    m = re.search(r"(?<!\w)" + re.escape(term) + r"(?!\w)", request, re.IGNORECASE)
    if m is None:
        return term
    start = m.start()
    art = _ARTICLE_BEFORE.search(request[:start])
    if art is not None and not re.match(r"(the|a|an)(\s|$)", term, re.IGNORECASE):
        start = art.start(1)
    return request[start:m.end()]


def align_terms(node: Node, request: str) -> Node:
    """``node`` with every term aligned by :func:`align_term`; the structure is unchanged."""
    if isinstance(node, Term):
        text = align_term(node.text, request)
        return node if text == node.text else Term(text)
    if isinstance(node, Not):
        return Not(align_terms(node.child, request))
    cls = And if isinstance(node, And) else Or
    return cls(tuple(align_terms(c, request) for c in node.children))
