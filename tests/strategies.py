"""Hypothesis strategies shared by the tests: random terms and flat query ASTs."""

from __future__ import annotations

import unicodedata

from hypothesis import strategies as st

from itlr_gpu.query import Not, Term, make_and, make_or
from itlr_gpu.query.parser import _INVISIBLE

# Printable text without control characters; keywords and quotes allowed (terms get quoted); at least one
# visible character (the parser refuses a term of only white space or invisible characters such as U+200B).
term_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=12
).filter(lambda s: any(not ch.isspace() and unicodedata.category(ch) not in _INVISIBLE for ch in s))


def asts(term_strategy=term_text, max_leaves: int = 8):
    """Flat ASTs (And/Or never directly nest their own kind), as the parser builds them."""
    leaves = term_strategy.map(Term)

    def extend(children):
        return st.one_of(
            children.map(lambda c: Not(c)),
            st.lists(children, min_size=2, max_size=4).map(make_and),
            st.lists(children, min_size=2, max_size=4).map(make_or),
        )

    return st.recursive(leaves, extend, max_leaves=max_leaves)


def small_vocab_asts(vocab_size: int = 6, max_leaves: int = 6):
    """ASTs over a small vocabulary, so batches share terms."""
    return asts(st.integers(0, vocab_size - 1).map(lambda i: f"term {i}"), max_leaves=max_leaves)
