"""Check an LLM's logical form against the request's own words; let the rules repair what they refute.

A small instruct model makes mistakes that the wording of the request contradicts outright:

* **a negation with no negation cue**: ``either dark matter or dark energy`` ->
  ``("dark matter" OR "dark energy") AND NOT "dark matter"``;
* **an exclusion cue left inside a term**: ``web frameworks other than React`` kept as one term,
  or ``NOT "breakfast ideas except oatmeal"``;
* **a term that is only a connective**: ``both bees and pesticides`` ->
  ``("bees" OR "pesticides") AND "both"``.

:func:`defects` names them (the cues are the rule-based translator's own lexicon, so the two
translators agree on what a cue is).  :func:`repair` takes the rule-based translation instead
when the LLM's form has a defect and the rules translate the request without one; otherwise the
LLM's form stands (a request the rules cannot read is exactly what the LLM is for).  Forms that
are right never carry a defect: the labelled set's gold forms are checked to have none.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..query import Node, Not, canonical, parse
from ..query.ast import terms as _terms
from .rules import _MARKERS, try_translate_rules

__all__ = ["defects", "repair", "REPAIR_VERSION"]

REPAIR_VERSION = "r2"
"""Changes whenever the checks change (recorded beside the prompt version)."""

# Marker kinds of the rules' lexicon that negate (rules.py: EXCL, NOT, ...), and those that
# open an exclusion clause: one of these inside a term means the clause was not split off.
_NEGATING = {"EXCL", "NOT", "NOR", "NEITHER", "ALLBUT", "ANDNOT", "ORNOT"}
_CLAUSE = {"EXCL", "ALLBUT", "ANDNOT", "NEITHER"}
# Beyond the rules' markers, any word that may carry an exclusion counts as a cue (a missed cue would
# let the rules overrule a right NOT; a spurious one only leaves an LLM form unchecked).
_CUE_WORDS = ("no", "not", "nor", "bar", "save", "free", "less", "but", "aren", "isn", "don", "doesn", "didn",
              "won", "wasn", "weren", "haven", "hasn", "shouldn", "wouldn", "couldn", "mustn", "nix")
_CUE_STEMS = ("non", "neither", "never", "nothing", "nobody", "nowhere", "cannot", "without", "except", "exclu",
              "excl", "omit", "skip", "avoid", "ignor", "disregard", "leav", "leave", "aside", "apart", "besides",
              "other", "else", "rather", "instead", "oppos", "unrelat", "irrelevant", "minus", "unless", "barring",
              "outside", "beyond", "lack", "absen", "remov", "drop", "forget", "against", "anti", "exempt")
_CONNECTIVES = {"both", "either", "neither", "nor", "and", "or", "not", "but", "other", "others", "ones", "none", "&"}
# Clause markers that are also ordinary words of a topic ("life without parole", "coffee without sugar"):
# never taken as a sign of an unsplit clause.
_SOFT = {"without", "minus", "plus"}
# A cue right after one of these belongs to a sentence ("Vitamin D deficiency is unrelated to birth
# weight", a SciFact claim), not to the request's logic.
_VERBS = {"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "has", "have", "had", "can",
          "could", "should", "would", "will", "may", "might", "must", "seem", "seems", "remain", "remains",
          "appear", "appears", "become", "becomes", "not"}


def _phrase_regex(phrases) -> re.Pattern:
    alts = sorted({p.lower() for p in phrases}, key=len, reverse=True)
    return re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(a) for a in alts) + r")(?![\w])")


@lru_cache(maxsize=1)
def _regexes() -> tuple[re.Pattern, re.Pattern, re.Pattern]:
    negating = _phrase_regex(p for p, kind in _MARKERS if kind in _NEGATING)
    stems = re.compile(r"(?<![\w])(?:(?:" + "|".join(sorted(_CUE_WORDS, key=len, reverse=True)) + r")(?![\w])|(?:"
                       + "|".join(sorted(_CUE_STEMS, key=len, reverse=True)) + "))")
    clause = [p for p, kind in _MARKERS if kind in _CLAUSE and p not in _SOFT]
    return negating, stems, _phrase_regex(clause)


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u2019", "'")).lower()


def has_negation_cue(text: str) -> bool:
    """Does the request say "not" in any of the ways the rules know, or with any word that may negate?"""
    t = _norm(text)
    negating, stems, _ = _regexes()
    return bool(negating.search(t) or stems.search(t)) or "n't" in t


def _has_not(node: Node) -> bool:
    if isinstance(node, Not):
        return True
    return any(_has_not(c) for c in getattr(node, "children", ()))


def _after_verb(term: str, at: int) -> bool:
    before = term[:at].split()
    return bool(before) and before[-1].strip(",.;:") in _VERBS


def defects(text: str, form: str | Node) -> list[str]:
    """What in ``form`` (a logical form of request ``text``) the request's wording refutes; [] for none."""
    node = parse(form) if isinstance(form, str) else form
    found = []
    if _has_not(node) and not has_negation_cue(text):
        found.append("a NOT with no negation cue in the request")
    clause = _regexes()[2]
    for term in _terms(node):
        low = _norm(term)
        words = low.split()
        if words and all(w.strip(",.;:!?") in _CONNECTIVES for w in words):
            found.append(f"term {term!r} is only a connective")
        elif any(not _after_verb(low, m.start()) for m in clause.finditer(low)):
            found.append(f"term {term!r} holds an exclusion cue")
    return found


def repair(text: str, form: str | None) -> tuple[str | None, list[str]]:
    """(the form to use, the defects that made the rules' form replace the LLM's; [] when kept)."""
    if form is None or not isinstance(text, str):
        return form, []
    found = defects(text, form)
    if not found:
        return form, []
    ast, err = try_translate_rules(text)
    if err is not None or ast is None or defects(text, ast):
        return form, []
    fixed = canonical(ast)
    return (fixed, found) if fixed != canonical(parse(form)) else (form, [])
