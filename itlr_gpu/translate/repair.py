"""Check an LLM's logical form against the request's own words; let the rules repair what they refute.

A small instruct model makes mistakes that the wording of the request contradicts outright:

* **a negation with no negation cue**: ``either dark matter or dark energy`` ->
  ``("dark matter" OR "dark energy") AND NOT "dark matter"``;
* **an exclusion cue left inside a term**: ``web frameworks other than React`` kept as one term,
  or ``NOT "breakfast ideas except oatmeal"``;
* **a term that is only a connective**: ``both bees and pesticides`` ->
  ``("bees" OR "pesticides") AND "both"``;

and, measured against the rules' own reading of the request (``reference``):

* **a dropped term**: ``quinine but neither benzene nor Yale`` -> ``NOT "benzene" AND NOT "Yale"``:
  no word of one of the rules' terms is in any of the LLM's terms;
* **a phrase cut where the request has no connective**: ``X has lower rates of Y`` ->
  ``"X" AND "lower rates of Y"``: two LLM terms are pieces of one rules term, and the words between
  them ("has") are not a connective;
* **a lost "or"**: ``A, B or C`` -> ``"A" AND "B" AND "C"``: the request says "or" before any
  negation, the rules read an OR, the LLM's form has none and keeps no "or" inside a term;
* **a lost negation**: ``X, excluding Y`` -> ``"X" AND "Y"``: the request holds an exclusion marker
  of the rules' lexicon outside the form's terms, the rules read a NOT, the LLM's form has none;
* **a wanted term negated**: ``Other than statins, what lowers LDL cholesterol?`` ->
  ``"statins" AND NOT "LDL cholesterol"``: every word of a term the rules read as wanted that the form
  keeps is inside the form's negated terms;
* **a shared phrase kept with one alternative**: ``hiking in Patagonia or Iceland`` ->
  ``"hiking in Patagonia" OR "Iceland"``: shared out, the form's terms are the rules' terms.

and, without the rules (they refuse texts this long):

* **most of a long request left out**: a request of at least :data:`LONG_REQUEST` content words of
  which the form's terms keep under half, e.g. one sentence of a composition of two 300-word
  arguments (ArguAna; a 1.5B model does this to 78 of 100).  A small model cannot distil such a
  text faithfully; the text itself, embedded whole as one term, is then the better query (the dense
  baseline).  The labelled set's longest request has 23 content words, and a preamble's distillation
  ("Some argue that ... Find research on X" -> ``"X"``) is right, hence the length floor.

A request with a preamble ("Some argue that ... Find research on X") is the LLM's to distil: keeping
one piece of a long rules term is not a defect, only cutting it at a non-connective or losing all of it.

:func:`defects` names them (the cues are the rule-based translator's own lexicon, so the two
translators agree on what a cue is).  :func:`repair` takes the rule-based translation instead
when the LLM's form has a defect and the rules translate the request without one; otherwise the
LLM's form stands (a request the rules cannot read is exactly what the LLM is for).  Forms that
are right never carry a defect: the labelled set's gold forms are checked to have none.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..query import And, Node, Not, Or, Term, canonical, parse
from ..query.ast import self_negated
from ..query.ast import terms as _terms
from .rules import try_translate_rules
from .rules.lexicon import _MARKERS
from .rules.tree import _split_shared

__all__ = ["defects", "repair", "REPAIR_VERSION", "LONG_REQUEST"]

REPAIR_VERSION = "r11"
"""Changes whenever the checks change (recorded beside the prompt version)."""

LONG_REQUEST = 60
"""Content words (not connectives or function words) from which a request counts as long."""
KEEPS_LITTLE = "keeps under half of a long request's words"

# Marker kinds of the rules' lexicon that negate (rules/lexicon.py: EXCL, NOT, ...), and those that
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
_CONNECTIVES = {"both", "either", "neither", "nor", "and", "or", "not", "but", "other", "others", "ones", "none", "&",
                "though", "although", "however", "yet", "whereas"}
# Clause markers that are also ordinary words of a topic ("life without parole", "coffee without sugar"):
# never taken as a sign of an unsplit clause.
_SOFT = {"without", "minus", "plus"}
# A cue right after one of these belongs to a sentence ("Vitamin D deficiency is unrelated to birth
# weight", a SciFact claim), not to the request's logic.
_VERBS = {"is", "are", "was", "were", "be", "been", "being", "am", "do", "does", "did", "has", "have", "had", "can",
          "could", "should", "would", "will", "may", "might", "must", "seem", "seems", "remain", "remains",
          "appear", "appears", "become", "becomes", "not"}
# Words between two pieces of one phrase that make cutting it there a split at a connective.
_SPLIT_AT = {"and", "or", "but", "nor", "both", "either", "neither", "not", "plus", "also", "as", "well", "with",
             "versus", "vs", "then", "&", "a", "an", "the"}
# Words that make any gap holding them a split at a connective (even with other words beside them).
_STRONG = {"and", "or", "but", "nor", "not", "either", "neither", "versus", "vs", "&"}
# Words that do not name what a term is about: a rules term made only of them is never "dropped".
_OPTIONAL = {"a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "about", "as", "into",
             "s", "some", "any", "all", "also", "just", "only", "very", "its", "their", "this", "that", "these",
             "those", "which", "who", "whose"}
_OR_WORDS = re.compile(r"(?<![\w'])(?:or|either)(?![\w'])")


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


# A search engine's exclusion: a minus sign before a word or a quote ("cordless vacuum -Dyson -Shark", '-"red meat"'),
# not a hyphen inside a word or a number's sign ("-5 degrees").
_MINUS_RE = re.compile(r'(?:(?<=\s)|^)-(?=[^\W\d_]|")')


def has_negation_cue(text: str) -> bool:
    """Does the request say "not" in any of the ways the rules know, or with any word that may negate, or with a
    search engine's minus sign?"""
    t = _norm(text)
    negating, stems, _ = _regexes()
    return bool(negating.search(t) or stems.search(t) or _MINUS_RE.search(t)) or "n't" in t


def _has_not(node: Node) -> bool:
    if isinstance(node, Not):
        return True
    return any(_has_not(c) for c in getattr(node, "children", ()))


def _after_verb(term: str, at: int) -> bool:
    before = term[:at].split()
    return bool(before) and before[-1].strip(",.;:") in _VERBS


def _has_or(node: Node) -> bool:
    return isinstance(node, Or) or any(_has_or(c) for c in getattr(node, "children", ()))


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", _norm(text))


def _lost_or(text: str, node: Node) -> bool:
    """Does the request say "or" (or "either") before anything that may negate it, outside the form's terms?"""
    t = _norm(text)
    said = 0
    for m in _OR_WORDS.finditer(t):
        if has_negation_cue(t[:m.start()]):
            break
        said += 1
    kept = sum(len(_OR_WORDS.findall(_norm(term))) for term in _terms(node))
    return said > kept


def _lost_not(text: str, node: Node) -> bool:
    """Does the request hold a negating marker of the rules' lexicon (or a minus sign) that none of the form's terms
    keeps?"""
    negating = _regexes()[0]

    def exclusions(t: str) -> int:
        t = _norm(t)
        return len(negating.findall(t)) + len(_MINUS_RE.findall(t))

    return exclusions(text) > sum(exclusions(term) for term in _terms(node))


def _cut_without_connective(whole: str, pieces: list[str], negated: bool = False) -> str | None:
    """The words between two of ``pieces`` (substrings of the rules term ``whole``) when they are not a
    connective, i.e. where the LLM cut one phrase in two; None when every cut is at a connective.
    ``negated``: the LLM's form has a NOT, so a gap with a word that may negate ("that avoid
    discussing") is where it read the exclusion, not a cut."""
    negating, stems, _ = _regexes()
    spans = {p: [m.start() for m in re.finditer(re.escape(p), whole)] for p in pieces}
    order = sorted(pieces, key=lambda p: spans[p][0])
    for a, b in zip(order, order[1:]):
        gaps = [whole[i + len(a):j] for i in spans[a] for j in spans[b] if j >= i + len(a)]
        if not gaps:
            continue
        gap = min(gaps, key=len)
        words = _words(gap)
        if not words or all(w in _SPLIT_AT or w in _CONNECTIVES or stems.match(w) for w in words):
            continue
        # A gap holding "or", "and", "not", ... is where the request itself has a connective: the LLM split
        # there and rephrased or dropped words around it ("startups in Berlin or Paris that are not in
        # fintech" -> "startups in Berlin" OR ... NOT "fintech"), which is not cutting one phrase.
        if _STRONG.intersection(words) or negating.search(gap):   # gap: a slice of the normalised term
            continue
        if negated and any(stems.match(w) for w in words):
            continue
        return gap.strip()
    return None


def _polar_terms(node: Node, negated: bool = False) -> tuple[list[str], list[str]]:
    """(wanted terms, negated terms) of a form: a term under an odd number of NOTs is negated."""
    if isinstance(node, Term):
        return ([], [node.text]) if negated else ([node.text], [])
    if isinstance(node, Not):
        return _polar_terms(node.child, not negated)
    wanted: list[str] = []
    unwanted: list[str] = []
    for child in node.children:
        w, u = _polar_terms(child, negated)
        wanted += w
        unwanted += u
    return wanted, unwanted


def _negated_wanted(text: str, ref: Node, node: Node) -> str | None:
    """A term the rules' reading ``ref`` wants that ``node`` negates: what ``node`` keeps of its words is only
    in its negated terms, and either the request names it before any negation cue ("cats but not dogs" ->
    ``NOT "cats" AND NOT "dogs"``) or ``node`` wants a term the rules exclude (a swap: "Other than statins,
    what lowers LDL?" -> ``"statins" AND NOT "LDL"``).  A term named after a leading "no" / "not" whose reach
    the two readings differ on ("no meat or dairy recipes") is the reader's call, not a defect."""
    def split(form: Node) -> tuple[set[str], set[str]]:
        wanted, negated = _polar_terms(form)
        return {w for t in wanted for w in _words(t)}, {w for t in negated for w in _words(t)}

    def named(term: str) -> set[str]:
        return {w for w in _words(term) if w not in _OPTIONAL and w not in _CONNECTIVES}

    kept_wanted, kept_negated = split(node)
    ref_wanted, ref_negated = _polar_terms(ref)
    lost = [t for t in ref_wanted if named(t) & kept_negated and not named(t) & kept_wanted]
    if not lost:
        return None
    swapped = any(named(t) & kept_wanted and not named(t) & kept_negated for t in ref_negated)
    low = _norm(text)
    for term in lost:
        at = low.find(_norm(term).strip())
        if swapped or (at >= 0 and not has_negation_cue(low[:at])):
            return _norm(term).strip()
    return None


_ENGLISH = set("the and or not of in on for with to a an but without about is are from by as at than except "
               "excluding neither nor either both any".split())
_FOREIGN = set("le la les des du et ou mais pas sans avec pour dans sur aux sauf entre chez "                  # fr
               "el los las y pero sin con para del sobre desde hasta "                                       # es
               "der die das und oder nicht ohne mit für von auf den dem aber bei zum zur über kein keine "   # de
               "il di che non senza della delle degli nel nella "                                            # it
               "não com sem dos mas pelo pela "                                                              # pt
               "het een niet zonder maar".split())                                                            # nl


def _not_english(text: str) -> bool:
    """A request in another language (two of its function words, none of English's; or most of its letters in
    another script than Latin): the checks' cues are the rules' English lexicon, so they can only misread it
    ("maladies cardiaques mais pas l'hypertension"; "太阳能 但不是 核能" has a cue, 但不是, that they do not know)."""
    letters = [c for c in text if c.isalpha()]
    if letters and sum(ord(c) < 0x250 for c in letters) * 2 < len(letters):   # Basic Latin to Latin Extended-B
        return True
    words = {w.strip(".,;:!?\"'()").lower() for w in text.split()}
    return not words & _ENGLISH and len(words & _FOREIGN) >= 2


def _repeated_operand(node: Node) -> str | None:
    """The text of a term that stands twice among one AND's or OR's operands (``"x" AND "x" AND "x"``: a
    degenerate generation; the product would raise x to a power), else None."""
    if isinstance(node, Not):
        return _repeated_operand(node.child)
    if isinstance(node, (And, Or)):
        seen: set[str] = set()
        for child in node.children:
            if isinstance(child, Term):
                key = _norm(child.text).strip()
                if key in seen:
                    return child.text
                seen.add(key)
            found = _repeated_operand(child)
            if found is not None:
                return found
    return None


def _self_negation(node: Node) -> str | None:
    """The defect of a form that negates its own term (:func:`~itlr_gpu.query.ast.self_negated`: a small model
    writes it for two terms it cannot tell apart), else None."""
    term = self_negated(node)
    return None if term is None else f"{SELF_NEGATED} {term!r} and its negation in one AND"


def _keeps_little(text: str, node: Node) -> bool:
    """A long request (>= LONG_REQUEST content words) of which the form's terms keep under half."""
    content = [w for w in _words(text) if w not in _OPTIONAL and w not in _CONNECTIVES]
    if len(content) < LONG_REQUEST:
        return False
    have = {w for t in _terms(node) for w in _words(t)}
    return 2 * sum(w in have for w in content) < len(content)


def defects(text: str, form: str | Node, reference: str | Node | None = None) -> list[str]:
    """What in ``form`` (a logical form of request ``text``) the request's wording refutes; [] for none.

    ``reference`` (the rules' form of the same request) adds the checks that need a second reading:
    a dropped term, a phrase cut where the request has no connective, a lost "or", a lost negation,
    a wanted term negated.
    """
    node = parse(form) if isinstance(form, str) else form
    found = []
    if _has_not(node) and not has_negation_cue(text):
        found.append("a NOT with no negation cue in the request")
    if _keeps_little(text, node):
        found.append(KEEPS_LITTLE)
    if reference is not None:
        ref = parse(reference) if isinstance(reference, str) else reference
        mine = [_norm(t).strip() for t in _terms(node)]
        have = {w for t in mine for w in _words(t)}
        for whole in (_norm(t).strip() for t in _terms(ref)):
            named = [w for w in _words(whole) if w not in _OPTIONAL and w not in _CONNECTIVES]
            if named and not have.intersection(named):
                found.append(f"drops the request's term {whole!r}")
                continue
            pieces = [t for t in mine if t and t != whole and t in whole]
            cut = _cut_without_connective(whole, pieces, _has_not(node)) if len(pieces) > 1 else None
            if cut is not None:
                found.append(f"cuts the phrase {whole[:60]!r} at {cut[:30]!r}, not at a connective")
        lost = _negated_wanted(text, ref, node)
        if lost:
            found.append(f"negates the request's wanted term {lost!r}")
        if _has_or(ref) and not _has_or(node) and _lost_or(text, node):
            found.append('the request\'s "or" has no OR')
        if _has_not(ref) and not _has_not(node) and _lost_not(text, node):
            found.append("the request's exclusion has no NOT")
        shared = _split_shared(node, set(re.findall(r'"([^"]+)"', text)))
        if shared != node and {_norm(t).strip() for t in _terms(shared)} == {_norm(t).strip() for t in _terms(ref)}:
            found.append("keeps a phrase shared by alternatives with one of them")
    repeated = _repeated_operand(node)
    if repeated is not None:
        found.append(f"repeats the term {repeated!r} in one AND / OR")
    negated = _self_negation(node)
    if negated is not None:
        found.append(negated)
    clause = _regexes()[2]
    for term in _terms(node):
        low = _norm(term)
        words = low.split()
        if words and all(w.strip(",.;:!?") in _CONNECTIVES for w in words):
            found.append(f"term {term!r} is only a connective")
        elif any(not _after_verb(low, m.start()) for m in clause.finditer(low)):
            found.append(f"term {term!r} holds an exclusion cue")
    return found


ONLY_CONNECTIVES = "every term is only a connective: the request names nothing to search for"
SELF_NEGATED = "the form contradicts itself: it holds the term"


def only_connectives(form: str) -> bool:
    """Every word of every term of ``form`` is a connective ("but not", "either", "or")."""
    words = [w.strip(",.;:!?") for t in _terms(parse(form)) for w in _norm(t).split()]
    return bool(words) and all(w in _CONNECTIVES for w in words)


def rules_reading(text: str) -> str | None:
    """The rules' form of ``text`` when they read it without a defect of their own, else None."""
    if not isinstance(text, str) or _not_english(text):
        return None
    ast, err = try_translate_rules(text)
    return canonical(ast) if err is None and ast is not None and not defects(text, ast) else None


def repair(text: str, form: str | None) -> tuple[str | None, list[str]]:
    """(the form to use, the defects that made it replace the LLM's; [] when kept): the rules' form
    where they translate the request without a defect, else, for a long request the form keeps
    little of, the request itself as one term; None (an error row) for a form of connectives alone
    ("but not" -> ``NOT "but not"``) where the rules find nothing either.  Where the rules read a
    short request after a long preamble (a letter, an argued request: their form keeps little of
    the text and has no other defect), keeping little is the right reading, no defect of either form."""
    if form is None or not isinstance(text, str) or _not_english(text):
        return form, []
    ast, err = try_translate_rules(text)
    if err is not None and only_connectives(form):   # "but not" -> NOT "but not": nothing to search for
        return None, [ONLY_CONNECTIVES]
    own = defects(text, ast) if err is None and ast is not None else None
    distilled = own == [KEEPS_LITTLE]
    if own is None or (own and not distilled):
        node = parse(form)
        negated = _self_negation(node)
        if negated is not None:   # no reading of the rules to take instead: an error row, not x(1 - x)
            return None, [negated]
        if _keeps_little(text, node):
            whole = canonical(Term(re.sub(r"\s+", " ", text).strip()))
            return (whole, [KEEPS_LITTLE]) if whole != canonical(node) else (form, [])
        return form, []
    found = defects(text, form, reference=ast)
    if distilled:
        found = [d for d in found if d != KEEPS_LITTLE]
    if not found:
        return form, []
    fixed = canonical(ast)
    return (fixed, found) if fixed != canonical(parse(form)) else (form, [])
