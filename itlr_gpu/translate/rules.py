"""Rule-based natural-language -> logical-query translator (no model, deterministic).

The translator reads common English logical phrasing and builds an AST of the
query language (:mod:`itlr_gpu.query`):

* exclusion clauses -- ``but not``, ``excluding``, ``except (for)``, ``without``,
  ``other than``, ``rather than``, ``apart from``, ``instead of``, ``as opposed to``,
  ``not including``, ``that do not mention``, ``, not`` ... -- scope over everything
  before them back to the last *strong* separator, and each item of the list after
  them is negated on its own (a redundant ``not`` on an item is dropped):
  ``a or b but not c or d`` -> ``(("a" OR "b") AND NOT "c" AND NOT "d")``;
* strong separators join whole clauses and end an exclusion's list: ``; or``,
  ``or else``, ``or alternatively``, ``; alternatively,``, and a comma-conjunction
  (``, or`` / ``, and``) that does not close a comma list:
  ``a but not b, or c`` -> ``(("a" AND NOT "b") OR "c")``, while
  ``a but not b, c, or d`` still excludes b, c and d.  ``either a but not b, or c``
  reads its alternatives as such clauses;
* ``and``, ``as well as``, ``along with``, ``together with``, ``in addition to``,
  ``plus`` are AND; ``or``, ``and/or`` are OR; a bare ``but`` joins two clauses by AND;
  ``a and b together`` / ``combined`` is ``a AND b``;
* ``either a or b``, ``any of a, b or c``, ``both a and b`` and ``all of a, b and c``
  are bracketed groups; ``neither a nor b`` is ``(NOT "a" AND NOT "b")`` (an ``and``
  between ``neither`` and ``nor`` stays inside the term); parentheses are kept;
* exclusion-only groups negate each listed item: ``anything except a or b``,
  ``everything but a``, ``nothing about a``, ``none of a, b or c``, and a generic
  subject before an exclusion (``anything not about a``, ``documents that do not
  mention a``) -> ``(NOT "a" AND NOT "b")`` / ``NOT "a"``;
* ``not x`` after an operator (or at the start) negates one operand, with the
  grammar's precedence NOT > AND > OR: ``a and not b or c`` ->
  ``(("a" AND NOT "b") OR "c")``; in ``a, not b, and c`` only b is negated;
* comma lists take the conjunction that closes them (``a, b and c``; Oxford commas
  too), while a comma-conjunction after a list of another kind joins at a lower
  level: ``a or b, and c`` -> ``(("a" OR "b") AND "c")``;
* filler is stripped: requests (``find``, ``show me``, ``I want``, ``I'm looking
  for``, ``could you``...) at the start, generic document words with their
  relation (``documents about``, ``papers on``, ``articles discussing``, ``studies
  of``, ``news about``, ``ones about``...) at the start of any term, a bare
  ``about`` after a connective (``texts about a or about b``), and ``please`` /
  ``thanks``;

Long and single-term texts:

* double-quoted spans (``"..."``, also curly ``“...”`` and ``«...»``) are
  never split: ``"law and economics" or finance`` has two terms;
* a small list of fixed binomials (``research and development``, ``rock and roll``,
  ``iron and steel``, ``pros and cons``...) stays one term;
* a text that holds a sentence -- an auxiliary or modal verb (``is``, ``are``,
  ``should``, ``does not``...) is left after the filler -- keeps plain lower-case
  ``and`` / ``or`` / ``not`` / ``but`` and commas as words of that sentence
  (``The death penalty is not a deterrent and should be abolished`` is one term),
  except at a visible boundary between two sentences or titles (a lower-case word,
  the connective, a capitalised word; a capitalised ``The`` / ``How`` / ``Is``...
  after it; a title-case run followed by a lower-case word) and except the ``or`` /
  ``and`` an ``either`` / ``both`` waits for.  Upper-case ``AND`` / ``OR`` / ``NOT``
  and the other markers (``but not``, ``excluding``...) keep their meaning.  ``not``
  right after an auxiliary (``is not``) is always part of the text;
* brackets right after a word around words only (``protein (RP) expression``) are
  part of the term; a spaced aside in brackets at the end of a clause that opens with an
  exclusion or "or" is one (``board games (nothing with small pieces)``, ``Node.js (or
  Deno)``), and one about the writer or a preference is dropped (``(asking for my dad)``,
  ``(recent work preferred)``);
* how-to questions are their task (``How do I fix X?``, ``how to X``), and a relation asked
  about names its two topics (``What links A and B?``, ``How do A and B influence each
  other?``);
* a request after a short preamble (``Some argue that X. Find research on Y but not Z``:
  at most three sentences of context, then a sentence that asks for documents, at most
  two long) is translated without the preamble;
* paragraphs of prose (two or more sentences, none of them a request) are one term
  when they hold no connective and are refused otherwise: in query-by-document text
  ("<argument> or <argument>") where one argument ends is a matter of meaning, not of
  wording, so such text falls back to the whole-text embedding (quoted terms, or an
  LLM translator, say where the terms are).  Initials and abbreviations (``J. Smith``,
  ``Dr.``, ``U.S.``) end no sentence.

Terms are the remaining contiguous spans of the text, case and inner punctuation
kept.  :func:`translate_rules` never raises on a ``str``: text it cannot translate
(empty, only filler, too long, nested too deeply) gives a :class:`RuleError`
message instead, returned by :func:`try_translate_rules`.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

from ..errors import QuerySyntaxError
from ..query import MAX_DEPTH, MAX_QUERY_CHARS, Node, Not, Term, canonical, make_and, make_or, parse
from ..query.ast import And, Or
from ..query.ast import terms as _terms
from .spans import strip_terminal_escapes

__all__ = ["RuleError", "translate_rules", "try_translate_rules", "RULES_VERSION"]

RULES_VERSION = "rules-81"
"""Changes whenever the rules change (recorded with every LLM form the rules repair)."""


class RuleError(ValueError):
    """The text cannot be translated by the rules (message is one line)."""


# --------------------------------------------------------------------------- lexicon

# Multi-word markers, longest first at each position.  Kinds:
#   EXCL  clause-level exclusion (negates each item of the following list)
#   AND / OR / BUT / NOR  connectives;  NOT  negation of one operand
#   EITHER / BOTH / NEITHER  group openers;  ALLBUT  "anything but" (negates the rest)
#   SKIP  words that carry no logic ("not only")
_V = (
    "mention|mentions|discuss|discusses|cover|covers|involve|involves|include|includes|"
    "talk about|talks about|concern|concerns|deal with|deals with|refer to|refers to|focus on|"
    "focuses on|address|addresses|relate to|relates to|feature|features|contain|contains|use|uses"
)
_MARKERS: list[tuple[str, str]] = [
    ("but not", "EXCL"), ("and not", "ANDNOT"), ("or not", "ORNOT"),
    ("pero no", "EXCL"),   # a Spanish "but not" inside an English-typed request ("hoteles pet friendly pero no X")
    ("but nothing about", "EXCL"), ("but nothing on", "EXCL"), ("and nothing about", "EXCL"),
    ("and nothing on", "EXCL"), ("but nothing", "EXCL"), ("but no", "EXCL"), ("but without", "EXCL"),
    ("but excluding", "EXCL"), ("and excluding", "EXCL"), ("but except", "EXCL"), ("and without", "EXCL"),
    ("excluding", "EXCL"), ("exclude", "EXCL"), ("except for", "EXCL"), ("except", "EXCL"),
    ("with the exception of", "EXCL"), ("without", "EXCL"), ("other than", "EXCL"),
    ("rather than", "EXCL"), ("apart from", "EXCL"), ("aside from", "EXCL"), ("instead of", "EXCL"),
    ("must not be about", "EXCL"), ("should not be about", "EXCL"), ("must not include", "EXCL"),
    ("excl.", "EXCL"), ("excl", "EXCL"), ("but excl.", "EXCL"),

    # conditions that exclude: "X, unless it's about Y", "X is fine as long as it isn't about Y", "X, except when
    # the focus is Y"
    ("unless it's about", "EXCL"), ("unless it is about", "EXCL"), ("unless they're about", "EXCL"),
    ("unless they are about", "EXCL"), ("unless it's for", "EXCL"), ("unless they're for", "EXCL"),
    ("unless it's", "EXCL"), ("unless they're", "EXCL"), ("unless it involves", "EXCL"),
    ("as long as it isn't about", "EXCL"), ("as long as it isn't", "EXCL"), ("as long as it's not about", "EXCL"),
    ("as long as it's not", "EXCL"), ("as long as they aren't", "EXCL"), ("as long as they're not", "EXCL"),
    ("as long as it doesn't mention", "EXCL"), ("as long as it does not mention", "EXCL"),
    ("as long as they don't mention", "EXCL"), ("as long as it doesn't cover", "EXCL"),
    ("as long as they don't cover", "EXCL"), ("as long as it doesn't include", "EXCL"),
    ("as long as they don't include", "EXCL"),
    ("is fine as long as it isn't about", "EXCL"), ("is fine as long as it isn't", "EXCL"),
    ("are fine as long as they aren't", "EXCL"), ("are fine as long as it isn't about", "EXCL"),
    ("are fine as long as it isn't", "EXCL"), ("except when the focus is", "EXCL"),
    ("except when it's about", "EXCL"), ("except when they're about", "EXCL"), ("except where it concerns", "EXCL"),
    ("as opposed to", "EXCL"), ("as distinct from", "EXCL"), ("as distinguished from", "EXCL"), ("not including", "EXCL"), ("not involving", "EXCL"), ("disregarding", "EXCL"),
    ("not mentioning", "EXCL"), ("not about", "EXCL"), ("not related to", "EXCL"),
    ("unrelated to", "EXCL"), ("with no mention of", "EXCL"), ("with no mention", "EXCL"),
    ("with no", "EXCL"), ("w/ no", "EXCL"), ("w/o", "EXCL"), ("minus", "EXCL"), ("leaving out", "EXCL"), ("leaving aside", "EXCL"),
    ("omitting", "EXCL"),
    ("yet not", "EXCL"), ("and yet not", "EXCL"), ("but ignore", "EXCL"), ("but ignoring", "EXCL"),
    ("ignoring", "EXCL"), ("but leave out", "EXCL"), ("but exclude", "EXCL"), ("and exclude", "EXCL"),
    ("as well as", "AND"), ("along with", "AND"), ("together with", "AND"), ("in addition to", "AND"),
    ("and also", "AND"), ("but also", "AND"), ("plus", "AND"), ("and", "AND"), ("&", "AND"),
    ("and/or", "OR"), ("or else", "ORELSE"), ("or alternatively", "ORELSE"), ("or instead", "ORELSE"),
    ("or otherwise", "ORELSE"), ("or failing that", "ORELSE"), ("alternatively", "ORELSE"), ("or perhaps", "ORELSE"),
    ("or maybe", "ORELSE"), ("or possibly", "ORELSE"), ("or", "OR"), ("but", "BUT"), ("though", "BUT"),
    ("although", "BUT"), ("however", "BUT"), ("nor", "NOR"), ("not", "NOT"),
    ("either", "EITHER"), ("both", "BOTH"), ("neither", "NEITHER"), ("not only", "SKIP"),
    ("but never", "EXCL"), ("and never", "EXCL"), ("excepting", "EXCL"),
    ("but definitely not", "EXCL"), ("but certainly not", "EXCL"), ("but absolutely not", "EXCL"),
    ("and definitely not", "EXCL"), ("but definitely no", "EXCL"), ("but certainly no", "EXCL"), ("but only if not", "EXCL"), ("only if not", "EXCL"),
    # a hedged negation ("X, preferably not Y"); the hedge alone stays a word of its phrase
    ("preferably not", "NOT"), ("ideally not", "NOT"), ("preferably without", "EXCL"), ("ideally without", "EXCL"),
    # more exclusions: "X not counting Y" (it and "alongside" only between operands: see _lex), "X but skip
    # Y"; a "please" inside the marker ("but please leave out") is politeness.  Left out as too often a
    # topic's own words: "lacking" ("mice lacking Sirt1"), "in the absence of", "save for", "avoiding".
    ("not counting", "EXCL"), ("but not counting", "EXCL"), ("sans", "EXCL"), ("but skip", "EXCL"), ("and skip", "EXCL"), ("but please leave out", "EXCL"),
    ("but please exclude", "EXCL"), ("but please ignore", "EXCL"), ("but please skip", "EXCL"),
    ("and please exclude", "EXCL"), ("and please leave out", "EXCL"), ("please exclude", "EXCL"),
    ("please leave out", "EXCL"), ("please ignore", "EXCL"), ("please skip", "EXCL"), ("alongside", "AND"),
    # "X, whether A or B": a group opener only after a comma or at the start and before an "or" (see _lex)
    ("whether", "EITHER"), ("whichever of", "EITHER"),
    # "X combined with Y": only between operands, like "alongside"; so are two compared topics ("X vs Y": both
    # topics, as nearly every outside writer reads it)
    ("combined with", "AND"), ("vs.", "AND"), ("vs", "AND"), ("versus", "AND"),
    # "A or B but not both": exactly one of the two; only at the end ("but not both A and B" is an exclusion)
    ("but not both", "NOTBOTH"), ("and not both", "NOTBOTH"), ("not both", "NOTBOTH"),
    # "placement year, anywhere except London": the place excluded (the "anywhere" asks for nothing of its own)
    ("anywhere except", "EXCL"), ("anywhere but", "EXCL"), ("anywhere other than", "EXCL"),
    ("anywhere apart from", "EXCL"),
    ("anything but", "ALLBUT"), ("anything except", "ALLBUT"), ("everything but", "ALLBUT"),
    ("everything except", "ALLBUT"), ("nothing about", "ALLBUT"), ("nothing on", "ALLBUT"),
    ("nothing abt", "ALLBUT"), ("but nothing abt", "EXCL"), ("not abt", "EXCL"),   # texting
    ("n not", "EXCL"), ("n no", "EXCL"),   # "sock yarn thats not super scratchy n not grey"
    ("anything other than", "ALLBUT"), ("everything other than", "ALLBUT"), ("anything apart from", "ALLBUT"),
    ("everything apart from", "ALLBUT"), ("anything besides", "ALLBUT"), ("everything besides", "ALLBUT"),
    ("none of", "ALLBUT"), ("nothing related to", "ALLBUT"), ("nothing involving", "ALLBUT"),
    ("nothing mentioning", "ALLBUT"), ("nothing regarding", "ALLBUT"), ("nothing concerning", "ALLBUT"),
    ("all of", "BOTH"), ("each of", "BOTH"), ("every one of", "BOTH"), ("any of", "EITHER"),
    ("any one of", "EITHER"), ("at least one of", "EITHER"), ("either of", "EITHER"),
]
# Markers that count only between two operands (see _lex); the loop below adds "that exclude" and kin.
_COMPARES = {"vs.", "vs", "versus"}   # two compared topics ("X vs Y"): both
_BETWEEN_OPERANDS = {"not counting", "sans", "alongside", "minus", "combined with", *_COMPARES,   # "the minus strand"
                     "anywhere except", "anywhere but", "anywhere other than", "anywhere apart from"}   # is a word;
# ("Anywhere But Here lyrics" is a title; "work from anywhere except the office" wants the remote work: see _lex)
_NEGATED_BE = {"not", "aren't", "arent", "isn't", "isnt"}   # the last word of "that are not" and kin
# "X, nothing else / but Y / more than Z / too long": "nothing" qualifies, it excludes no topic
_NOTHING_QUALIFIES = {"else", "but", "more", "less", "new", "much", "too", "like", "special", "fancy", "over", "under",
                      "older", "newer", "before", "after", "from", "longer", "shorter", "major", "serious"}
# Words that end no operand: a marker after them is a word of the phrase ("the minus strand", "when combined
# with", "is not counting")
_NO_OPERAND_END = {"the", "a", "an", "when", "if", "once", "while", "unless", "whether", "is", "are", "was", "were",
                   "be", "been", "being", "not"}


# The last word of a capitalised name that holds an "and" ("Crime and Disorder Act", "Food and Drug
# Administration", "Health and Safety Executive")
_INSTITUTIONS = set("act acts bill regulations regulation order directive convention treaty commission committee "
                    "department ministry council authority agency fund institute society party company trust court "
                    "tribunal service office board museum university college school hospital bank foundation "
                    "association union federation corporation administration executive inspectorate code rules "
                    "scheme programme program canal railroad railway sons".split())
_MAX_NAME_RUN = 4   # capitalised words after the "and"


def _institution_name(raw: list, i: int) -> int:
    """The number of tokens from ``i`` that make one capitalised name with an "and" and an institution's word at
    its end ("Crime and Disorder Act"), or 0."""
    def cap(k: int) -> bool:
        return k < len(raw) and raw[k].kind == "WORD" and raw[k].text[:1].isupper() and raw[k].text != "AND"
    if not cap(i) or i > 0 and cap(i - 1):   # one capitalised word before the "and": "EPIC Study and American
        return 0                              # Dental Association" names two
    k = i + 1
    if k >= len(raw) or raw[k].kind != "WORD" or raw[k].text != "and":
        return 0
    m = k + 1
    while cap(m) and m - k - 1 < _MAX_NAME_RUN:
        m += 1
    if m == k + 1 or _fold(raw[m - 1].text).strip(".,;:!?\"'") not in _INSTITUTIONS:
        return 0
    return m - i


_TITLE_INNER = {"of", "the", "a", "an", "in", "on", "to", "for", "at", "with"}
_CLAUSE_ENDS = {"and", "or", "but", "not", "nor", "except", "excluding", "without", "vs", "versus", "no"}


def _title_with_and(raw: list, i: int) -> int:
    """The number of tokens from ``i`` that make one title with an "and" in it, or 0: a text that opens with one
    capitalised word (a number may follow it), "and", then (after an optional "the") two capitalised words at
    least, small words between them, and lower-case words after it ("Ori and the Will of the Wisps spirit shards",
    "Ratchet and Clank Rift Apart PC fix", "Design and Access Statement template"). Elsewhere, or with a shorter
    second half, two names side by side are two topics as often ("excluding Scotland and Northern Ireland", "Apple
    and Samsung patents")."""
    def cap(k: int) -> bool:
        return k < len(raw) and raw[k].kind == "WORD" and raw[k].text[:1].isupper() and not raw[k].text.isupper()
    if i != 0 or not cap(i):
        return 0
    k = i + 1 + (len(raw) > i + 1 and raw[i + 1].kind == "WORD" and raw[i + 1].text.isdigit())
    if k >= len(raw) or raw[k].kind != "WORD" or raw[k].text != "and":
        return 0
    m = k + 1
    if m < len(raw) and raw[m].kind == "WORD" and raw[m].text == "the":
        m += 1
    capitals, end = 0, m
    while m < len(raw) and raw[m].kind == "WORD" and (cap(m) or raw[m].text in _TITLE_INNER and capitals):
        if cap(m):
            capitals += 1
            end = m + 1
        m += 1
    # a text all in title case tells nothing by its capitals ("Coffee and Artery Function" names two topics)
    # (in the same clause: up to a punctuation mark or a connective)
    plain_after = False
    for t in raw[end:]:
        if t.kind != "WORD" or _fold(t.text) in _CLAUSE_ENDS:
            break
        if t.text[:1].islower() and t.text not in _TITLE_SMALL:
            plain_after = True
            break
    return end - i if capitals >= 2 and plain_after else 0


def _word_run_end(toks: list, start: int) -> int:
    """The index just after the run of WORD tokens that begins at ``start`` (``start`` itself if none does)."""
    end = start
    while end < len(toks) and toks[end].kind == "WORD":
        end += 1
    return end


def _in_title(toks: list, i: int, plain: bool = False) -> bool:
    """Token ``i`` stands inside a title or a name: the capitalised (or small) words around it, two at least
    ("Veggies vs. Cancer", "Caloric Restriction vs. Plant-Based Diets"), or the same word on both sides ("Kramer
    vs. Kramer").  ``plain``: a lower-case "vs" or "versus" with no stop, which titles seldom use and requests
    between names often do ("HSA vs FSA", "Katahdin vs Dorper", "Azure vs Google Cloud"): the same word only."""
    same_word = i > 0 and i + 1 < len(toks) and toks[i - 1].text.lower() == toks[i + 1].text.lower() \
        and toks[i - 1].text[:1].isupper()   # ("liquid chalk vs chalk balls" compares)
    if plain or same_word:
        return same_word

    def title_word(t) -> bool:
        return t.kind == "WORD" and (t.text[:1].isupper() or t.text.lower() in _TITLE_SMALL)
    lo, hi = i, i
    while lo > 0 and title_word(toks[lo - 1]):
        lo -= 1
    while hi + 1 < len(toks) and title_word(toks[hi + 1]):
        hi += 1
    while lo < i and toks[lo].text.lower() in _TITLE_SMALL:   # "anything on Caloric Restriction vs. ..."
        lo += 1
    return _title_cased(" ".join(t.text for t in toks[lo:hi + 1]), least=2)


def _name_or_code(word: str) -> bool:
    """A word of a name or a code: capitalised, a number, or symbols ("D&D", "C++", "5e", "iPhone")."""
    return any(c.isupper() for c in word) or word[:1].isdigit() or not word.strip(".,;:!?").isalpha()


def _plural_noun(word: str) -> bool:
    """A word that reads as a plural noun before "anywhere but X" ("jobs", "flats"; not "is", "was", "does")."""
    low = word.lower()
    return len(low) > 3 and low.endswith("s") and not low.endswith(("ss", "us", "is")) and low not in _AUX


def _modifies(word: str) -> bool:
    """An adverb or participle before "combined with" ("best / often / taken combined with") makes it a
    phrase of its own, not a conjunction (the words of _NO_OPERAND_END are checked beside it)."""
    low = word.lower()
    return low in {"best", "well", "often", "taken", "used", "given"} or low.endswith("ly")


# Exclusions that open a clause: only after a comma, a semicolon, "but" or "and" ("X, leave out Y", "X but I
# don't want anything about Y"; "ignore" after a comma or semicolon only); elsewhere their words are a topic's
# ("how to skip breakfast").
# ("skip hire", "skip counting" are nouns: "skip" only with what it skips; "we don't need X" is often a claim)
_CLAUSE_OPENERS: set[str] = {"leave out", "skip anything", "skip everything", "skip any", "skip all", "skip the",
                             "ignore", "avoid", "avoid anything", "avoid any", "avoid all", "avoid everything",
                             "save for",   # "X, save for those relating to Y" (not "how to save for retirement")
                             # a librarian's instructions: "Pull X; drop anything that mentions Y"
                             "drop anything", "drop everything", "weed out", "weed out anything", "throw out",
                             "throw out anything", "strike out", "strike out anything", "remove anything",
                             "discard anything", "filter out", "filter out anything", "nothing to do with",
                             # "dinner ideas with chicken, nothing spicy" (after a comma: not "nothing but X")
                             "nothing", "nothing with", "nothing containing", "nothing involving", "nothing by",
                             # "X, no need for Y" (not a claim's "there is no need for Y"); "X, disregard Y"
                             "no need for", "no need for any", "disregard", "disregard anything", "disregard any"}
for _neg in ("don't", "do not", "dont"):   # "X, don't show me the Pomo ones"
    for _obj in ("", " me", " me any", " me anything", " anything", " any"):
        _CLAUSE_OPENERS.add(f"{_neg} show{_obj}")
        _CLAUSE_OPENERS.add(f"please {_neg} show{_obj}")
for _who in ("i", "we"):
    for _neg in ("don't", "do not"):
        for _obj in ("", " anything", " any"):
            _CLAUSE_OPENERS.add(f"{_who} {_neg} want{_obj}")
        for _obj in (" anything on", " anything about", " anything regarding", " stuff on", " stuff about",
                     " material on", " info on", " information on", " studies on", " studies about",
                     " papers on", " articles on", " articles about", " information about", " info about",
                     " material about", " papers about", " information regarding"):   # not "we don't need X": a claim
            _CLAUSE_OPENERS.add(f"{_who} {_neg} need{_obj}")
for _be in ("i'm", "i am", "we're", "we are", ""):
    for _about in ("in", "about", "on"):   # "I am not interested about animal studies" (second language)
        _CLAUSE_OPENERS.add(f"{_be} not interested {_about}".strip())
    _CLAUSE_OPENERS.add(f"{_be} not looking for".strip())
for _who in ("i", "we"):
    for _would in (" would", "'d"):
        for _verb in ("prefer to avoid", "rather avoid", "like to avoid", "like to exclude", "prefer to exclude",
                      "like to leave out", "prefer to leave out"):
            _CLAUSE_OPENERS.add(f"{_who}{_would} {_verb}")
for _obj in ("", " any", " anything"):   # typed "X, dont want Y", "X but I dont want Y" (after a comma or "but":
    for _neg in ("don't", "dont"):       # "cats don't want to eat" is a topic)
        _CLAUSE_OPENERS.add(f"{_neg} want{_obj}")
        _CLAUSE_OPENERS.add(f"i {_neg} want{_obj}")
_MARKERS.extend((_phrase, "EXCL") for _phrase in sorted(_CLAUSE_OPENERS))
# "two person tent i'd rather not have a tunnel tent": excludes wherever it stands
for _who in ("i", "we"):
    for _would in (" would", "'d"):
        for _verb in ("rather not have", "rather not get", "rather not see", "prefer not to have", "prefer not"):
            _MARKERS.append((f"{_who}{_would} {_verb}", "EXCL"))
for _rel in ("that", "which"):
    for _aux in ("do not", "don't", "dont", "does not", "doesn't", "doesnt", "did not", "didn't", "didnt"):
        for _verb in _V.split("|"):
            _MARKERS.append((f"{_rel} {_aux} {_verb}", "EXCL"))
            _MARKERS.append((f"{_rel} {_aux} {_verb} either", "NEITHER"))   # "... either A or B"
            _MARKERS.append((f"{_rel} also {_aux} {_verb}", "EXCL"))   # "desserts that also don't use coconut"
        _MARKERS.append((f"{_rel} {_aux} have", "EXCL"))   # "meal plans that don't have fish in them"
        for _verb in ("need", "require", "rely on", "depend on"):   # "skyrim mods that dont need SKSE" (not
            _MARKERS.append((f"{_rel} {_aux} {_verb}", "EXCL"))      # "we don't need X": often a claim)
    for _verb in _V.split("|"):
        _MARKERS.append((f"{_rel} {_verb} neither", "NEITHER"))   # "remedies that use neither honey nor lemon"
        _MARKERS.append((f"{_rel} {_verb} no", "EXCL"))
    for _be in ("are", "is"):
        _MARKERS.append((f"{_rel} {_be} neither", "NEITHER"))   # "superhero shows that are neither Marvel nor DC"
    for _aux in ("are not", "aren't", "arent", "is not", "isn't", "isnt"):
        _MARKERS.append((f"{_rel} {_aux} about", "EXCL"))
        _MARKERS.append((f"{_rel} {_aux} related to", "EXCL"))
        _MARKERS.append((f"{_rel} {_aux}", "EXCL"))   # "open world RPGs that aren't Bethesda": between operands
        _BETWEEN_OPERANDS.add(f"{_rel} {_aux}")
    for _verb in ("exclude", "excludes", "omit", "omits"):
        _MARKERS.append((f"{_rel} {_verb}", "EXCL"))   # "apps that exclude X": the "that" is the marker's
        _BETWEEN_OPERANDS.add(f"{_rel} {_verb}")
    _MARKERS.append((f"{_rel} are unrelated to", "EXCL"))
    _MARKERS.append((f"{_rel} is unrelated to", "EXCL"))
for _contracted in ("that's not", "thats not"):   # "a topper that's not memory foam", texted "thats not"
    _MARKERS.append((_contracted, "EXCL"))
    _BETWEEN_OPERANDS.add(_contracted)
for _aux in ("do not", "don't", "dont", "does not", "doesn't", "doesnt"):
    for _verb in _V.split("|"):
        _MARKERS.append((f"{_aux} {_verb}", "EXCL"))

_MARKER_TABLE: dict[tuple[str, ...], str] = {}
for _phrase, _kind in _MARKERS:
    _MARKER_TABLE.setdefault(tuple(_phrase.split()), _kind)
_MAX_MARKER = max(len(k) for k in _MARKER_TABLE)

# Fixed binomials that are one term although they contain "and"/"or".
_BINOMIALS = {
    tuple(p.split())
    for p in (
        "research and development", "rock and roll", "salt and pepper", "pros and cons",
        # a clinical question's aspects of one topic ("diagnosis and management of sepsis": "diagnosis" alone
        # would match every clinical text)
        "signs and symptoms", "diagnosis and treatment", "diagnosis and management", "prevention and treatment",
        "treatment and prevention", "prevention and control", "causes and treatment", "causes and treatments",
        "assessment and management", "screening and diagnosis", "care and management", "epidemiology and treatment",
        "costs and benefits", "benefits and costs", "benefits and risks", "risks and benefits", "benefits and harms",
        "harms and benefits", "strengths and weaknesses", "advantages and disadvantages", "opportunities and risks",
        "supply and demand", "trial and error", "law and order", "black and white", "bread and butter",
        "fish and chips", "mergers and acquisitions", "checks and balances", "cause and effect",
        "arts and crafts", "q and a", "r and b", "rhythm and blues", "bed and breakfast",
        "search and rescue", "hide and seek", "give and take", "wear and tear", "peace and quiet",
        "health and safety", "drag and drop", "copy and paste", "backup and restore",
        "find and replace", "search and replace", "plug and play", "hit and run", "stop and search",
        "cut and paste", "lock and key", "trial or error", "more or less", "sooner or later",
        "dungeons and dragons", "war and peace", "pride and prejudice", "romeo and juliet",
        "oil and gas", "food and drink", "bits and pieces", "nuts and bolts", "rules and regulations",
        "iron and steel", "science and technology", "arts and sciences", "diversity and inclusion",
        "small and medium", "small and medium-sized", "life and death", "profit and loss", "boom and bust",
        "sales and marketing", "crime and punishment", "food and beverage", "read and write", "back and forth",
        "up and down", "ups and downs", "rise and fall", "trials and tribulations", "life without parole",
        "odds and ends", "dos and don'ts", "do's and don'ts", "arts and humanities", "mind and body",
        "the birds and the bees", "wind and solar", "state and local", "federal and state", "whether or not",
        "with or without",   # "cats with or without dogs": dogs do not matter, no exclusion
        # pairs of names known as one ("the Lewis and Clark expedition")
        "lewis and clark", "antony and cleopatra", "tristan and isolde", "hansel and gretel", "jekyll and hyde",
        "sense and sensibility", "beauty and the beast", "laurel and hardy", "gilbert and sullivan",
        "rodgers and hammerstein", "watson and crick", "sacco and vanzetti", "abbott and costello",
        "lewis and harris", "father and son", "the old man and the sea", "of mice and men",
        # trade and business terms
        "track and trace", "click and collect", "buy and hold", "pick and pack", "plug and play", "brick and mortar",
        "bricks and mortar", "mom and pop", "hub and spoke", "cash and carry", "lift and shift", "hire and fire",
        "terms and conditions", "property and casualty", "learning and development", "training and development",
        "compensation and benefits", "sales and operations planning", "stocks and shares", "loss and damage",
        "buy and build", "make or buy", "build or buy", "pay and display", "park and ride", "cap and collar",
        "fit and proper", "fixtures and fittings", "goods and services", "plant and equipment",
        "property plant and equipment", "accounts payable and receivable", "general and administrative",
        "selling general and administrative", "repairs and maintenance", "operations and maintenance",
        # names of countries, firms, works, dishes and legal terms that hold an "and"
        "trinidad and tobago", "bosnia and herzegovina", "antigua and barbuda", "saint kitts and nevis",
        "st kitts and nevis", "saint vincent and the grenadines", "sao tome and principe",
        "são tomé and príncipe", "turks and caicos", "procter and gamble", "johnson and johnson",
        "marks and spencer", "barnes and noble", "simon and schuster", "bonnie and clyde",
        "mac and cheese", "macaroni and cheese", "sweet and sour", "salt and vinegar", "cookies and cream",
        "search and seizure", "show and tell", "stop and frisk", "cease and desist", "assault and battery",
        "breaking and entering", "rank and file", "room and board", "pins and needles", "hustle and bustle",
        "trick or treat", "truth or dare", "all or nothing", "double or nothing", "now or never",
        "england and wales", "drum and bass", "simon and garfunkel", "tom and jerry",
        "mumford and sons", "bosnia and hercegovina", "standard and poor", "black and decker", "ben and jerry",
        "arm and hammer", "carbon capture and storage", "hand foot and mouth", "compare and contrast",
        "bangers and mash", "cap and trade", "stop and go", "fix and flip", "fish and chip", "dolce and gabbana",
        "tongue and groove", "hot and cold", "head and shoulders", "sex and the city", "accident and emergency",
        "ear nose and throat", "obstetrics and gynaecology", "obstetrics and gynecology",
        # names that hold a "without", "not" or a leading "no"
        "doctors without borders", "reporters without borders", "engineers without borders",
        # a city's departments and a menu's dishes
        "parks and recreation", "parks and rec", "water and sewer", "sewer and water", "planning and zoning",
        "streets and sanitation", "health and human services", "fish and wildlife", "housing and urban development",
        "rice and beans", "beans and rice", "peanut butter and jelly", "surf and turf", "chicken and waffles",
        "biscuits and gravy", "shrimp and grits", "chips and salsa", "franks and beans", "foot and mouth",
        "harry potter and the",
        # services and products named with "and"
        "no knead", "no bake", "no dig", "no claims bonus", "no claims discount", "bubble and squeak",
        "lady and the tramp", "of monsters and men", "dead or alive", "not without my daughter",
        "health and social care", "weed and feed", "parent and baby", "parent and toddler", "mother and baby",
        "no child left behind", "no country for old men", "not in my back yard", "no win no fee",
    )
}
_MAX_BINOMIAL = max(len(b) for b in _BINOMIALS)

# "N or more": the comparatives of a bound, and what may follow the bound inside its phrase
_COMPARATIVES = set("more less fewer above below over under older younger higher lower greater larger smaller "
                    "longer shorter later earlier".split())
_BOUND_FOLLOWERS = set("in of for on at per a an with from to during among across by than".split())
_SMALL_COUNTS = set("one two three four five six seven eight nine ten eleven twelve".split())
_NUMBER_WORDS = set("one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
                    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
                    "hundred thousand million billion".split())


def _is_number(word: str) -> bool:
    w = word.lower().strip(".,;:!?")
    return w in _NUMBER_WORDS or re.fullmatch(r"[$€£]?\d[\d,.]*(?:%|[a-z°/]{0,4})?", w) is not None

# Auxiliaries, modals and copulas: a text that still holds one after the filler is
# stripped is a sentence (a claim, a question) rather than a list of topics.  The
# weak ones are also nouns ("free will", "tin can", "May Day") and count only inside
# a run of words, lower-case, or before "not", or as the first word.
_AUX_STRONG = set(
    "is are was were am be been being should would could cannot shall isn't aren't wasn't weren't doesn't "
    "don't didn't can't won't shouldn't wouldn't couldn't hasn't haven't hadn't mustn't".split()
)
_AUX_WEAK = set("can will may might must does do did has have had".split())
_AUX = _AUX_STRONG | _AUX_WEAK


# The nouns of a relation between two topics ("the link between X and Y"): one list for the question, the
# statement and the "between" that keeps its "and" (see _lex)
_RELATION_NOUNS = {"link", "links", "relationship", "relationships", "relation", "relations", "connection",
                   "connections", "association", "associations", "correlation", "correlations", "difference",
                   "differences", "similarities", "comparison"}
_RELATION = "(?:" + "|".join(sorted(_RELATION_NOUNS, key=len, reverse=True)) + ")"

# Filler at the start of the query (requests, politeness).
# a word for documents next ("I require materials on X"; not "We require the same when ...")
_DOCUMENTS_NEXT = (r"(?=(?:some\s+|more\s+|any\s+|further\s+)?(?:materials?|sources?|papers?|articles?|information|info|"
                   r"literature|studies|research|documents?|references?|readings?|data|evidence|reports?|guidance|"
                   r"case\s+law|authorities)\b)")
# what follows an ask verb that is also a noun when it asks: its object ("show me", "share any papers",
# "supply the latest data", "return everything on"), not a topic word ("share prices")
_ASK_OBJECT_NEXT = (r"(?=\s+(?:me|us|them|it|all|any|some|every|everything|anything|something|whatever|what|how|that|"
                    r"the|a|an|this|these|those|more|recent|relevant|good|my|our|up|out|for|about|on|regarding|"
                    r"materials?|sources?|papers?|articles?|information|info|literature|studies|research|documents?|"
                    r"docs|references?|readings?|data|evidence|reports?|results|findings|news|stuff|texts?|abstracts|"
                    r"patents|records|tickets|notes|filings|guidance|resources?|links?|books?|reviews?)\b)")
# nouns after "search" in a topic's name ("search engine optimisation", "search and rescue dogs")
_SEARCH_NOUNS = (r"(?:engines?|and\s+rescue|results?\s+pages?|warrants?|ads|advertising|marketing|terms?|queries|query|"
                 r"history|volumes?|rankings?|intent|traffic|bars?|box(?:es)?|costs?|part(?:y|ies)|algorithms?|"
                 r"functions?|features?|behaviou?r|visibility|console|trends?|space|problems?|theory|index(?:es)?|"
                 r"optimi[sz]ation|quality|relevance|tools?|dogs?|teams?|operations?|strateg(?:y|ies)|"
                 r"frictions?|models?|fund(?:s|ing)?|firms?|fees?)")
_HOLDS = (r"(?:you|u|ya|the\s+(?:library|archives?|shop|store|museum|collection|observatory|society|bookshop|club|"
          r"centre|center|gym|cinema|foundation|trust|council|garden\s+centre))\s+"
          r"(?:still\s+)?(?:have|has|hold|holds|sell|sells|stock|stocks|carry|carries|keep|keeps|"
          r"subscribe\s+to|subscribes\s+to|offer|offers|do(?=\s+(?!it\b|that\b|this\b|so\b|not\b)))(?:\s+(?!to\b)|$)"
          r"(?:(?:anything|something)\s+(?:by|on|about|from|of)\s+|(?:any|some)\s+)?")
_POLITE = r"(?:please|pls|plz|kindly|hi|hello|hey|yo|omg|ok|okay|so|now|yeah|yep|yes(?=,|\s+(?:i|im|i'm|we|please|pls|so|hi|hello|thanks)\b)|@\w+)\b,?"   # "@here": a chat mention
_ASKS = [  # a sentence that starts so asks for documents
    # "can you pull the clips on X": after "can you", "pull" asks ("pull the plug on X" alone names a topic)
    r"(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+|pls\s+)?(?:be\s+able\s+to\s+)?(?:pull(?:\s+up)?\s+(?!together\b))?",
    r"(?:can|could)\s+(?:someone|anyone|somebody|anybody)\s+(?:please\s+)?(?=(?:send|find|give|pull|share|dig)\b)",
    r"(?:can|could|would)\s+(?:the|your)\s+(?:archive|library|desk|team|librarian|research\s+desk|reference\s+desk)\s+"
    r"(?:please\s+)?(?=(?:provide|send|find|share|pull|supply|get|give|dig)\b)",
    r"(?:i|we)(?:'m|m|\s+am|\s+are|'re)\s+(?:looking|searching|hunting)\s+for\b",
    r"(?:i|we)(?:'m|\s+am|\s+are|'re)\s+(?:interested\s+in|curious\s+about)",
    # formal requests: "I am seeking literature concerning X", "I would be grateful for sources on X"
    r"(?:i|we)(?:'m|\s+am|\s+are|'re)\s+(?:seeking|after|researching)\b",
    r"(?:i|we)(?:'m|\s+am|\s+are|'re)\s+trying\s+to\s+(?:find|locate|track\s+down|dig\s+up)\b",
    r"(?:i|we)(?:'d|\s+would)\s+be\s+(?:grateful|thankful|glad)\s+for\b",
    r"(?:(?:i|we)\s+)?need\s+(?:some\s+)?help\s+(?:with|on)\b",
    # "after anything on X" (Australian and British: "I'm after"), "I search informations about X" (a learner's)
    r"after\s+(?=(?:anything|something|stuff|info|information|some\s+info)\b)",
    r"(?:i|we)\s+(?:require|request)\s+" + _DOCUMENTS_NEXT,   # "For a briefing note, I require materials on X"
    # "I request a copy of your labour charges", "we would like to request copies of X", "Please advise on X"
    r"(?:i|we)\s+(?:would\s+like\s+to\s+|wish\s+to\s+)?request\s+(?:a\s+copy\s+of|copies\s+of)\s+",
    r"advise\s+(?:me\s+|us\s+)?(?:on|about|regarding)\s+(?=\S)",
    r"(?:i|we)\s+search(?:\s+for)?\b",
    r"(?:does\s+)?(?:anyone|anybody|someone)\s+know\s+(?:of\s+)?(?:any\s+)?(?=(?:good\s+)?(?:reading|readings|books?|"
    r"papers?|articles?|sources?|studies|research|resources?|info|information|stuff|anything|something)\b)",
    r"(?:looking|searching|hunting)\s+for\b",
    # "need info on X" (typed without its subject: only before a word for documents or advice)
    r"need\s+(?=(?:some\s+|more\s+|good\s+|the\s+|quick\s+|some\s+quick\s+|all\s+)?(?:info|informations?|stuff|papers?|"
    r"everything|anything|news|abstracts|patents|wire\s+stories|(?:product\s+)?(?:defect\s+)?reports|guidance|briefings?|"
    r"articles?|sources?|studies|research|advice|tips|data|books?|resources?|recommendations?|readings?|materials?|"
    r"documentation|literature|evidence|background|clippings|references|refs|reports|(?:market|competitive|user)\s+"
    r"(?:research|data))\b)",
    # "I'm not sure whether I need to register for X": the task is the topic
    r"(?:i'm\s+|i\s+am\s+)?not\s+sure\s+(?:whether|if)\s+(?:i|we)\s+(?:need\s+to|have\s+to|should|can|must)\s+(?=\S)",
    # a typed "need a X" / "need the X" / "need cheap X" (not "need for cognition", "Need for Speed": a topic)
    r"(?:i\s+)?(?:just\s+)?need\s+(?=(?:a|an|the|some|cheap|good|new|used|decent|affordable|quiet)\s)",
    # ... and a texted "need sock yarn", "NEED SPANNER SIZE 4" before any other word but the verb's own ("need to",
    # "need it"), a topic's ("need for cognition", "need based aid", "need blind admissions") or help (above)
    r"(?:i\s+)?(?:just\s+)?need(?:\s+(?!(?:for|to|of|not|no|based|blind|help|it|this|that|these|those|you|u|your|me|"
    r"us|them|him|her|more|less|is|was|and|or)\b)(?=[a-z0-9]))",   # (before a group: _strip_filler)
    # "can anyone point me to X", "could someone point me to X"
    r"(?:can|could)\s+(?:someone|anyone|somebody|anybody)\s+(?:please\s+)?point\s+me\s+(?:to|towards|at)\s+"
    r"(?:(?:some|any|the)\s+)?(?:(?:good\s+)?(?:studies|research|papers|articles|sources|info|resources)\s+"
    r"(?:on|about|regarding)\s+)?",
    # what a library, archive or shop holds: "do you have X", "does the library hold X", "do u have anything by X",
    # "(I would be grateful if you could) tell me whether the library holds X" (not "do you have to pay ...")
    r"(?:do|does)\s+" + _HOLDS,
    # "does anyone know if the club has a X", a learner's "the club has X to borrow?"
    r"(?:(?:does\s+)?(?:anyone|anybody|someone|somebody)\s+know\s+(?:if|whether)\s+)?" + _HOLDS,
    r"(?:(?:i|we)(?:'d|\s+would)\s+be\s+(?:very\s+|most\s+)?grateful\s+if\s+you\s+could\s+|(?:can|could)\s+you\s+"
    r"(?:please\s+)?)?(?:(?:tell|let)\s+(?:me|us)\s+(?:know\s+)?|confirm\s+)(?:whether|if)\s+" + _HOLDS,
    # "who do I contact about X", "who should we ask about X": the matter asked about
    r"who\s+(?:do|should|can|could|would)\s+(?:i|we|u|you)\s+(?:contact|ask|speak\s+to|talk\s+to|call|email|e-mail)\s+"
    r"(?:about|regarding|re|for|on)\b",
    # "where is the insulin sliding scale": the thing (not "where is X in relation to Y": a question of two)
    r"where\s+(?:is|are)\s+(?=(?:the|a|an|our|my)\s)",
    # "anything with / by / featuring X" as the whole ask
    r"anything\s+(?:with|by|featuring|starring)\s+(?=\S)",
    # "how many calories in a mango lassi": the quantity's topic
    r"how\s+many\s+(?=[a-z]+\s+(?:in|are\s+in)\s)",
    # "how much does shoe rental cost", "how much lime per acre": the cost or the quantity's topic
    r"how\s+much\s+(?:(?:is|are|was|were|does|do|did|will|would|should)\s+(?!(?:i|we|you|it|there|that|this)\b)(?=\S)|"
    r"(?=[a-z]+\s+(?:per|in|for|on|to)\s))",
    # a learner's "I want buy X", "Want buy X", "I want know about X", "I want learn about X" (no "to"), "I would
    # like ask (is there) X", "Please information about X", "How I can get X?", "you have X for Y?"
    r"(?:(?:i|we)\s+)?want\s+(?:buy|find|see|know\s+about|read\s+about|learn(?:\s+about)?|join|book|borrow|rent|"
    r"order|get|apply\s+for)\b",
    r"(?:i|we)(?:\s+would|'d)\s+like\s+(?:to\s+)?ask(?:\s+(?:about|if|whether))?\b",
    r"(?:please\s+)?(?:some\s+|more\s+)?(?:information|informations|info|details)\s+(?:about|on|regarding|concerning)\b",
    r"how\s+(?:i|we)\s+(?:can|could|should|must)\s+(?:get|find|buy|book|obtain|apply\s+for)\b",
    r"(?:you|u)\s+have\s+(?!(?:to|been|a\s+right|no|not|never)\b)(?:got\s+)?(?:(?:any|some)\s+)?(?=\S)",
    # "have u got the new X", "have you got any X"
    r"(?:have|has)\s+(?:you|u|ya)\s+got\s+(?:(?:any|some)\s+)?",
    # "tell me everything (filed) about X", "tell me all you know about X"
    r"tell\s+(?:me|us)\s+(?:everything|all|anything)\s+(?:(?:filed|published|written|known|you\s+(?:have|know|can\s+find))\s+)?"
    r"(?:about|on|regarding|concerning)\b",
    # "(kindly) tell me (the) details of X"
    r"(?:tell|give|send)\s+(?:me|us)\s+(?:the\s+|some\s+|more\s+)?(?:details|information|info)\s+(?:of|about|on|regarding)\b",
    # "which documents for X" (a question of which things)
    r"which\s+(?=[a-z]+s\s+(?:for|to|on|about|in|at)\s)",
    # a learner's "looking 3 room flat ..." (without its "for"; only before a number)
    r"(?:(?:i|we)(?:'m|\s+am|\s+are|'re)\s+)?looking\s+(?=\d)",
    # "is there a stud finder that isn't X", "is there a cure for X": a question of one thing
    r"(?:is|are)\s+there\s+(?:a|an|any|some)\s+(?!(?:link|links|relationship|connection|difference|correlation|"
    r"association|evidence|proof|research|studies|study|data|literature|papers?|articles?|info|information)\b)(?=\S)",
    # homework: "for my homework I need to find out about X", "My teacher says we need 3 sources about X"
    r"(?:for\s+(?:my|our)\s+(?:homework|assignment|class|project|essay|report)\s*,?\s*)?(?:(?:i|we)\s+)?(?:need|have)\s+"
    r"to\s+(?:find\s+out|learn|research|read\s+up|write)\s+(?:about|on)\b",
    r"(?:my|our|the)\s+(?:teacher|professor|prof|tutor|lecturer|supervisor|boss|manager)\s+(?:says|said)\s+"
    r"(?:that\s+)?(?:we|i)\s+(?:need|have\s+to\s+find|should\s+find)\s+(?:\d+\s+|some\s+|three\s+|two\s+)?",
    # "pull whatever we have on X", "pull any reports on X", "run a search for X"
    r"pull\s+(?:(?:all|any)\s+(?=[a-z0-9])|(?=(?:whatever|anything|everything|any|some|all|me|us|the\s+(?:latest|most\s+recent|recent)|latest|recent|market|reports?|data|papers|articles|clippings|"
    r"stuff|abstracts|patents|notes|clinical|news|stories|wire|posts|tickets|records|filings|transcripts|support|"
    r"customer|forum|product|court|policy|press|user|"
    r"background|stats|numbers|figures)\b))",
    r"(?:run|do|conduct|perform)\s+(?:a|an)\s+(?:(?:quick|full|thorough|new|fresh|prior[- ]art|patent|literature|novelty|freedom[- ]to[- ]operate)\s+){0,2}search(?:es)?\s+(?:for|on|into)\b",
    # a search of one collection: "search the wire for X", "search clinical notes for X", "search the news
    # archive for X"; "help search about X" (a learner's)
    r"search\s+(?:the\s+|our\s+)?(?:[\w-]+\s+){0,2}?(?:wire|archives?|database|notes|tickets|records|posts|forums?|"
    r"filings|docs|documents|abstracts|patents|reviews|news|corpus|collection|transcripts)\s+for\b",
    r"help\s+(?:me\s+|us\s+)?(?:to\s+)?(?:search|find|look)(?:\s+(?:for|about|on))?\b",
    # "cant find anything on X" (the writer's failed search is the ask), "Dr. Patel asked me to find articles on X"
    r"(?:i\s+)?(?:can't|cannot|couldn't|can\s+not)\s+(?:seem\s+to\s+)?find\s+(?:anything|much|stuff|info|information|"
    r"any\s+(?:info|information|papers|studies|research|articles|data))\s+(?:on|about|regarding)\b",
    r"(?:(?:my|our|the)\s+)?(?:[\w.'-]+\s+){1,3}?asked\s+(?:me|us)\s+to\s+(?:find|look\s+for|pull|get|dig\s+up|"
    r"search\s+for|track\s+down|gather)\b",
    # "my boss wants me to find stuff on X" (not "the government wants us to get rid of cars")
    r"(?:my|our)\s+(?:[\w.'-]+\s+){1,2}?(?:wants|needs|has\s+asked|told)\s+(?:me|us)\s+to\s+(?:find|look\s+for|"
    r"pull|dig\s+up|search\s+for|track\s+down)\b",
    # "I was asked to find research on X", "I've been asked to pull X"
    r"(?:i|we)\s+(?:was|were|have\s+been|'ve\s+been|am|are|'m|'re)\s+(?:being\s+)?asked\s+to\s+(?:find|look\s+for|"
    r"pull|get|dig\s+up|search\s+for|track\s+down|gather)\b",
    # "What do we have on X?", "What's new on X?", "Could I get everything on X?"
    r"what\s+(?:do|did)\s+(?:we|you)\s+have\s+(?:on|about|regarding)\b",
    r"what\s+(?:we|you)\s+(?:have|'ve\s+got|got)\s+(?:on|about|regarding)\b",   # "show me what you have on X"
    r"what(?:'s|\s+is)\s+new\s+(?:on|about|with|in)\b",
    r"(?:could|can|may)\s+(?:i|we)\s+(?:please\s+)?(?:get|have|see)(?:\s+(?=(?:everything|anything|all|any|some|the)\b)|$)",
    # hedged asks: "I'm hoping for X", "Maybe you have something on X"
    r"(?:i|we)(?:'m|\s+am|'re|\s+are)\s+hoping\s+(?:for|to\s+find)\b",
    r"(?:maybe|perhaps|possibly)\s+(?:you\s+have|you've\s+got|there's|there\s+is)\s+(?=(?:anything|something|some|any)\b)",
    r"(?:just\s+(?=want|need)|would\s+(?=like|love)|(?:i|we)(?:\s+would|'d|\s+really|\s+just|\s+simply|\s+only)?\s+)(?:like|want|need|wish|love)(?:\s+to\s+(?:read|find|see|learn|know|"
    r"get|search|look|explore|study|understand|discover|research|download|view|access|consult|order|buy)(?:\s+(?:more|something|anything|up))?"
    r"(?:\s+(?:about|on|regarding|into|for))?)?\b",
    r"(?:find|give|get|fetch|retrieve|bring|pull\s+up|look\s+(?:up|for|into)|dig\s+up|pull\s+together|"
    r"recommend|suggest|locate|provide|send|collect|gather|furnish|obtain|identify|"
    r"list(?!\s+(?:of|prices?|pricing|rents?|brokers?|building|management|sizes?|hygiene)\b)|"
    r"search(?!\s+" + _SEARCH_NOUNS + r"\b)|"
    # verbs that name a topic's noun more often than they ask ("supply chains", "share prices", "show jumping",
    # "return policies", "display ads", "compile times"): an ask only before its object
    r"(?:show|return(?!\s+on\b)|display|share|supply|compile)" + _ASK_OBJECT_NEXT + r")"
    r"(?:\s+(?:up|out))?(?:\s+for)?(?:\s+(?:me|us))?(?:\s+for)?\b",
    r"(?:what|how)\s+about\b",
    # "what's the latest on X", "whats going on with X"
    r"what(?:'s|s|\s+is)\s+(?:the\s+)?latest(?:\s+news)?\s+(?:on|about|with|regarding)\b",
    r"what(?:'s|s|\s+is)\s+(?:going\s+on|happening)\s+(?:with|in|on|at)\b",
    # a teacher's assignment: "everyone should read up on X", "read two articles on X", "each bring a reading on X"
    r"(?:each|all|everyone|everybody|you\s+all)\s+(?:(?:should|must|will|can)\s+|needs?\s+to\s+)?"
    r"(?=(?:find|read|bring|look|choose|pick|search|locate|collect|gather)\b)",
    r"read(?:\s+up)?\s+(?:on|about)\b",
    r"read\s+(?=(?:one|two|three|four|five|a|an|some|at\s+least\s+\w+)\s+(?:\w+\s+)?(?:articles?|papers?|studies|"
    r"chapters?|readings?|books?|reviews?|sources?)\b)",
    # "Nothing on X. What I need is Y.", "What I'm after is Y"
    r"what\s+(?:i|we)(?:'m|'re|\s+am|\s+are)?\s+(?:really\s+)?(?:need|want|after|looking\s+for|hoping\s+for)\s+(?:is|are)\b",
    # asks put as statements with a question tag ("There's research on X, right?", "You'd have stuff on X, yeah?")
    r"there's\s+(?:research|something|stuff|work|anything|literature|evidence)\s+(?:on|about)\b",
    r"you'd\s+have\s+(?:stuff|something|anything|papers|research)\s+(?:on|about)\b",
    r"you\s+can\s+(?:pull\s+up|find|get)\b",
    r"look\s?up\b:?",
    # "How effective are X?", "Is there a study on X?", "..., want studies about X"
    r"how\s+(?:effective|useful|safe|common|accurate|reliable|successful)\s+(?:is|are|were|was)\b",
    r"(?:is|are)\s+there\s+(?:a|any)\s+(?:study|paper|review|trial|meta-analysis|report|briefing|briefing\s+paper|"
    r"guidance)\s+(?:on|about|of|into)\b",
    # "Any info on X?" after the writer's circumstances: the request
    r"(?:any|some)\s+(?:info|information|research|studies|papers|articles|stuff|material|data|advice|tips|"
    r"reading|books)\s+(?:on|about|regarding)\b",
    # "[I am preparing for a debate and] would be grateful for recent briefings on X"
    r"(?:(?:i|we)\s+)?would\s+be\s+(?:very\s+|most\s+)?(?:grateful|glad|thankful)\s+for\b",
    # what someone asked the writer ("A constituent has asked about X", "My client wants to know about X")
    r"(?:a|my|our|the)\s+(?:constituent|client|customer|patient|reader|member|student|colleague|manager|boss|"
    r"partner|editor)\s+(?:has\s+)?(?:asked|wants\s+to\s+know|is\s+asking|was\s+asking)\s+(?:me\s+|us\s+)?"
    r"(?:about|on|regarding)\b",
    r"want\s+(?=(?:some\s+|more\s+|good\s+)?(?:studies|papers|articles|research|literature|sources|info|data|evidence)\b)",
    # a typed "want a X" ("leave out the garlic, want a tomato sauce recipe"; not "want ads")
    r"(?:just\s+)?want\s+(?:(?:anything|something|stuff|info)\s+(?:on|about)\b|(?=(?:a|an|some|the)\s))",
    # a learner's asks: "Please to find documents about X", "I am wanting informations about X", "I want know about
    # X", "Where I can find the researches on X", "Give me please the articles of X", "I am need texts about X"
    r"(?:please\s+)?to\s+find\b",
    r"(?:i|we)\s+(?:am|are)\s+(?:wanting|needing|need|want|searching|looking)\b",
    r"(?:i|we)\s+want\s+(?:to\s+)?know\s+(?:about|on)\b",
    r"where\s+(?:i|we)\s+can\s+(?:find|get|read)\b",
    r"give\s+(?:me|us)\s+please\b",
    # "What helps with X? Not Y.", "What works for X?": the question's topic is X
    r"what(?:'s|\s+is)?\s+(?:helps?|works?|good|best)\s+(?:with|for|against)\b",
    # a formal register: "Material is sought on X", "Evidence is needed on X", "The Council seeks evidence
    # regarding X", "Counsel requests all authorities concerning X", "The Department wishes to obtain literature on X"
    r"(?:(?:some|any|all|further|more|relevant|additional)\s+)?(?:materials?|sources?|information|literature|evidence|"
    r"research|studies|papers|articles|documents?|references?|data|guidance|authorities|case\s+law|input|views)\s+"
    r"(?:is|are)\s+(?:being\s+|urgently\s+|now\s+)?(?:sought|needed|required|requested|wanted|invited)\b",
    r"(?:the\s+)?(?:[a-z'-]+\s+){0,3}?(?:department|council|authority|office|ministry|committee|board|agency|"
    r"client|counsel|firm|company|commission|directorate|service|trust|panel|court|team|unit|library|archive|"
    r"school|university|institute|government|minister|secretariat|tribunal|inquiry)\s+(?:seeks|requires|requests|"
    r"needs|wants|invites|wishes\s+to\s+(?:obtain|receive|see|review|consult|identify)|would\s+(?:like|welcome)|"
    r"is\s+(?:seeking|looking\s+for|requesting))\s+(?:(?:all|the)\s+)?" + _DOCUMENTS_NEXT,
    # questions that ask for documents ("What is known about X?", "Has anyone studied X?"), before the
    # shorter "what is" below
    r"what(?:'s|\s+has)\s+been\s+(?:written|published|said|done|reported)\s+(?:about|on|regarding)\b",
    r"what(?:'s|\s+is|\s+are|\s+has\s+been|\s+have\s+been)\s+(?:known|there|available|out\s+there|written|"
    r"published|said|reported)(?:\s+so\s+far|\s+to\s+date)?\s+(?:about|on|regarding|concerning)\b",
    # "What happened at the Council of Nicaea?", "What actually happened during X?": the event is the topic
    r"what\s+(?:actually\s+|really\s+|exactly\s+)?happened\s+(?:at|in|during|to|with|on)\b",
    # an archive's own asks: "do we have stuff on X", "Do we have a file on X?", "what's the archive got on X"
    r"(?:do|did)\s+(?:we|you|u)\s+have\s+(?:any\s+)?(?:stuff|anything|something|material|a\s+file|files|info|"
    r"coverage|clips)\s+(?:on|about|regarding)\b",
    r"what(?:'s|\s+has|\s+have)\s+(?:the|our|your)\s+(?:archive|library|desk|files?|morgue)\s+got\s+(?:on|about)\b",
    # "What do historians know about X?", "What does the law say on X?": only subjects that are no topic
    # ("What does Trump say about tariffs?" keeps its question)
    r"what\s+(?:do|does|did)\s+(?:(?:the|most|many|modern|recent|current|other)\s+)?(?:we|you|they|people|"
    r"scientists|researchers|experts|specialists|scholars|academics|historians|economists|doctors|physicians|"
    r"clinicians|psychologists|philosophers|critics|analysts|studies|science|research|law|literature|data|"
    r"courts?|judges|"
    r"evidence|sources|textbooks)\s+(?:know|say|think|tell\s+us|write|report|conclude|claim|believe)\s+"
    r"(?:about|on|regarding|of)\b",
    r"what\s+(?:research|evidence|studies|literature|work|data)\s+(?:exists?|is\s+there|are\s+there|"
    r"is\s+available|has\s+been\s+(?:done|published))\s+(?:on|about|regarding|into|for)\b",
    r"(?:is|are)\s+there\s+(?:any\s+)?(?:evidence|research|studies|data|papers|literature|work)\s+"
    r"(?:that|on|about|for|of|regarding|into)\b",
    r"(?:has|have)\s+(?:anyone|anybody|someone|somebody)\s+(?:studied|researched|written\s+(?:about|on)|"
    r"looked\s+(?:at|into)|investigated|examined|explored|modell?ed|tested|measured|compared|reviewed|analy[sz]ed)\b",
    # negated questions: "Isn't there research on X?", "Why don't we have more studies on X?", "Why hasn't anyone
    # looked at X?", "Why aren't there more studies on X?", "Don't we have anything on X?"
    r"(?:isn't|is\s+not|aren't|are\s+not)\s+there\s+(?:any\s+)?(?:research|studies|work|evidence|papers|literature|data)\s+"
    r"(?:on|about|into)\b",
    r"why\s+(?:don't|do\s+not)\s+(?:we|you|they|i)\s+have\s+(?:more\s+|any\s+)?(?:studies|research|work|papers|data|"
    r"evidence|literature)\s+(?:on|about|into)\b",
    r"why\s+(?:hasn't|has\s+not|haven't|have\s+not)\s+(?:anyone|anybody|someone|more\s+people|researchers)\s+(?:looked\s+"
    r"(?:at|into)|studied|researched|examined)\b",
    r"why\s+(?:aren't|are\s+not|isn't|is\s+not)\s+there\s+(?:more\s+|any\s+)?(?:studies|research|work|papers|data|"
    r"evidence|literature)\s+(?:on|about|into)\b",
    r"(?:don't|do)\s+(?:we|you)\s+have\s+(?:anything|something|any\s+\w+)\s+(?:on|about)\b",
    r"point\s+(?:me|us)\s+(?:towards?|to|at|in\s+the\s+direction\s+of)\b",
    r"(?:where|how)\s+(?:can|could|do|would|should)\s+(?:i|we|one)\s+(?:find|get|read\s+about|look\s+up|"
    r"search\s+for|learn\s+about)\b",
    # "where do i book the X", "where can we buy X": the thing
    r"where\s+(?:can|could|do|would|should)\s+(?:i|we|one)\s+(?:book|buy|order|get\s+tickets\s+for|sign\s+up\s+for|"
    r"register\s+for|enrol+\s+(?:on|in|for)|apply\s+for)\b",
    # "(I would like to know) if the foundation is funding X": what the body does
    r"(?:if|whether)\s+(?:the\s+\w+|you)\s+(?:is|are)\s+(?:still\s+|currently\s+|now\s+)?(?:funding|offering|running|accepting|"
    r"providing|supporting|hosting|organi[sz]ing|planning|selling|stocking)\b",
    # questions of one thing: "what happens if X", "why is my X not flowering", "what do I do about X"
    r"what\s+happens\s+(?:if|when|at|during|after)\b",
    r"(?:(?:kindly|please)\s+)?share\s+(?:(?:the|a|your)\s+recipe\s+(?:for|of)\s+)?(?=\S)(?!(?:prices?|capital|"
    r"options?|buybacks?|schemes?|plans?|ownership|issues?|of)\b)",
    r"help\s+(?:with|on)\b",
    r"why\s+(?:is|are|does|do|did)\s+(?:my|our)\b",
    r"what\s+(?:do|should|can|could)\s+(?:i|we)\s+do\s+(?:about|with)\b",
    r"what\s+(?:links|connects)\b",   # "What links X and Y?": the two topics
    r"help\s+(?:(?:me|us)\s+)?(?:to\s+)?(?:find|get|locate|look\s+up|search\s+for|dig\s+up)\b",
    r"(?:does\s+|has\s+)?(?:anyone|anybody)\s+(?:have|got)\b",
    r"(?:has|have)?\s*(?:anyone|anybody|someone|somebody)\s+(?:seen|read|come\s+across|found)\s+(?=(?:any|some|good|"
    r"the)?\s*(?:research|studies|papers|articles|work|evidence|data|literature|anything|something)\b)",   # "anyone have data on X", "anyone got good reads on X"
    r"(?:i|we)(?:'m|\s+am|\s+are|'re)\s+(?:looking|searching)(?:\s+into)?\b",   # "I am searching documents about X"
    r"(?:i|we)\s+look\s+(?:for|into)\b|looking\s+(?:into|at)\b",
    r"(?:got|have\s+you\s+got|do\s+you\s+have)\s+(?:anything|something|stuff|any\w*)\s+(?:on|about|regarding)\b",
    r"(?:got|have\s+you\s+got)\s+any\b",   # "Got any good reads on X?": the genre words go next
    # "Do you have papers on X?": the genre words go next; not "Do you have to pay taxes on X?"
    r"(?:do|does)\s+(?:you|anyone|anybody)\s+have(?:\s+any)?\b(?!\s+to\b)",
    # "What's the link between X and Y?": the two topics (before the shorter 'what is')
    r"(?:what(?:'s|\s+is|\s+are)|is\s+there|are\s+there)\s+(?:a|an|the|any)\s+(?:known\s+)?" + _RELATION
    + r"\s+between\b",
    r"(?:what|which)\s+(?:is|are|was|were)\b",
    r"what(?:'s|s)(?=\s+(?:the|a|an)\b)",   # "what's the best X" ("whats": a common typing); not "What's driving X"
    r"(?:which|what)\s+(?:documents?|papers?|articles?|studies|texts?|reports?|sources?|pages?|posts?|books?)\s+"
    r"(?:discuss|mention|cover|describe|explain|talk\s+about|deal\s+with|focus\s+on|are\s+about|address|"
    r"examine|explore|investigate|look\s+at|compare)\b",
    r"tell\s+(?:me|us)(?:\s+more)?\s+about\b",
    r"(?:is|are)\s+there\s+(?:any\w*|some\w*)\s+(?:(?:published|written|out\s+there)\s+)?(?:about|on)?\b",
    # "is there driving other cars cover on my policy?" (no article: a learner's or a typed question)
    r"(?:is|are)\s+there\s+(?!(?:a|an|any|some|no|not|anything|something|nothing|one|more|much|many|still|already|"
    r"also|really|ever|enough|too|such|other|even|actually|always|any\w+|" + _RELATION + r")\b)(?=[a-z0-9])",
    # "any summer internships in marketing??", "any recipes for X": the opening "any" of a question
    r"any\s+(?!(?:of|more|one|longer|way|chance|luck|idea|ideas|time|better|worse|kind|kinds|sort|sorts|type|types|"
    r"help|advice|thoughts|pointers)\b)"   # "Any help appreciated" thanks, it asks for nothing
    r"(?=[a-z0-9])",
    # "which antihistamines are safe in pregnancy", "Which shoes go with a navy suit?": a question's "which" before
    # its noun (not "which is better", "which of these", "which one")
    r"which\s+(?!(?:of|is|are|was|were|one|ones|way|do|does|did|can|could|should|would|will|has|have|to|i|we|you|"
    r"they|it|he|she|and|or|not)\b)(?=[a-z0-9])",
    # a prior-art question: "has anyone patented X", "Is there already a patent for X?"
    r"(?:(?:has|have|whether|if)\s+)?(?:anyone|anybody|someone|somebody|(?:any|another)\s+(?:company|firm|inventor))\s+"
    r"(?:has\s+)?(?:already\s+)?(?:patented|invented|filed\s+(?:on|for))\s+(?=\S)",
    r"(?:is|are)\s+there\s+already\s+(?=(?:a|an|any)\s)",
    # "what helps period pain", "whats good for a sore throat"
    r"what(?:'s|s|\s+is)?\s+(?:helps?|good|best|works?)\s+(?:(?:with|for|against)\s+)?(?=[a-z0-9])",
]
# the writer's own work names the topic ("I'm writing a thesis on X"): stripped, but no ask that makes the
# sentences before it a preamble ("I'm writing an essay on X. Find sources on Y.")
_OWN_WORK = (r"(?:(?:i|we)(?:'m|m|\s+am|\s+are|'re)|(?:our|my|the)\s+(?:team|desk|unit|department|group)\s+is)\s+"
             r"(?:writing|preparing|working\s+on|putting\s+together|doing)\s+(?:a|an|my|our)\s+"
             r"(?:(?:short|long|school|university|college|master's|masters|phd|research|term|seminar|conference)\s+)?"
             r"(?:thesis|essay|paper|report|dissertation|article|book|chapter|lecture|talk|presentation|blog\s+post|"
             r"review|assignment|project|homework|retrospective|feature|piece|story|explainer|profile|long\s+read|"
             r"package|investigation|documentary|podcast|briefing|backgrounder|timeline|sidebar|grant|grant\s+proposal|"
             r"proposal|literature\s+review|lit\s+review|manuscript|case\s+study)"
             r"(?:\s+(?:chapter|section|draft|proposal|outline))?"
             r"(?:\s+for\s+(?:class|school|college|uni|university|my\s+\w+))?\s+"
             r"(?:on|about|regarding|concerning)\b")
# what the writer is studying names the topic ("We are reviewing X.", "I'm researching X")
_OWN_STUDY = (r"(?:i|we)(?:'m|m|\s+am|\s+are|'re)\s+(?:(?:a|an)\s+[\w' -]{1,40}?\s+)?(?:currently\s+|now\s+)?"
              r"(?:reviewing|researching|studying|investigating|evaluating|assessing|analy[sz]ing|exploring|"
              r"looking\s+into|reading\s+up\s+on|working\s+on|writing\s+(?:about|on)|compiling\s+material\s+on|"
              r"fact-checking\s+(?:a\s+|the\s+|some\s+)?(?:claims?|story|report|piece|figures?|statistics?)\s+"
              r"(?:about|on|regarding))\b")
_INTRO_RE = [re.compile(p) for p in [_POLITE, *_ASKS, _OWN_WORK, _OWN_STUDY, r"(?:about|on|regarding|concerning|re:?|in\s+respect\s+of|"
                                                                   r"with\s+regard\s+to|pertaining\s+to)\b"]]
# "How do I fix X?", "When should I prune X?", "how to restring X": the task is the topic.  Only before a
# lower-case word ("How to Train Your Dragon" is a title) that is neither a negation nor "be", and nothing
# more is stripped after it ("how to get pregnant" keeps "get").
_HOWTO = [r"how\s+(?:(?:do|can|could|should|would)\s+(?:i|we|one|u)|do\s+you)",   # not "How can you believe X?"
          r"what\s+do\s+(?:i|we|you)\s+need\s+to",   # "what do I need to open a sidewalk cafe"
          r"when\s+(?:should|do|can|could)\s+(?:i|we|one)", r"how\s+to"]
_HOWTO_RE = re.compile(r"(?:" + "|".join(_HOWTO) + r")\s+(?!(?:not|never|be)\b)(?=\S)")
# A question's opening that names nothing: "what time does the visitor centre close", "when is the objection
# deadline", "how long is the wait for X", "wheres the impound lot", "what counts as X", "do you take Visa or
# Amex" (every writer's label drops it). Typed in sentence case only: in title case it opens a title ("How Long Is
# a Piece of String", "When Is a Door Not a Door", "Where's My Cow"); "do you take" before a name only ("do you
# take omeprazole before food" asks how it is taken)
_QUESTION_OPENER_RE = re.compile(
    r"(?:(?:what\s+time|when|how\s+long)\s+(?:is|are|does|do|did|will|was|were)\s+"
    r"(?!(?:i|we|you|u|it|there|that|this|they|he|she)\b)|where'?s\s+(?=(?:the|a|an|our|my)\s)|what\s+counts\s+as\s+|"
    r"do\s+(?:you|u)\s+(?P<take>take|accept)\s+)(?=\S)")


def _question_opener(words: list[str]) -> list[str]:
    """``words`` without a question's opening (``_QUESTION_OPENER_RE``), where it is no title's."""
    m = _QUESTION_OPENER_RE.match(_fold(" ".join(words)))
    if not m:
        return words
    n = len(m.group(0).split())
    if n >= len(words) or any(w[:1].isupper() for w in words[1:n]) or words[n][:1].isupper() and (
            n == 1 or m.group("take") == "accept" or m.group("take") is None and words[n].lower() in _TITLE_SMALL):
        return words   # (a title: "How Long Is a Piece of String", "Where's My Cow", "When Is A Door ...")
    if m.group("take") == "take" and not words[n][:1].isupper():
        return words   # "do you take omeprazole before food"
    if words[0].lower().startswith("where") and n + 1 < len(words) and words[n + 1][:1].isupper():
        return words   # "Where's the Beef advert", "Where's the Line podcast"
    return words[n:]
# a yes/no question about the writer's own task: "Can I deduct my home office if I rent?", "do I need planning
# permission for a fence", "wat can i sub for buttermilk" (the task is the topic; after the ask openers: "can u
# find stuff on X" asks for documents)
_OWN_TASK_RE = re.compile(r"(?:(?:what|wat)\s+)?(?:(?:can|could|should)\s+(?:i|we|u)|do\s+(?:i|we)\s+need(?:\s+to)?)"
                          r"\s+(?!(?:not|never|be)\b)(?=\S)")
# A hedge before the request ("Not sure if relevant, but also wind power", "No idea if this exists but papers on
# cats") is no negation: dropped with its "but (also)" (a clause of at most eight more words)
# the words that open what a hedge is unsure of ("not sure whether ...", "not certain it ..."): one list for
# the hedge before a request and for "not" read as a hedge (_is_hedge)
_HEDGE_LEADS = ("if", "whether", "about", "that", "this", "it", "it's", "what", "how", "why", "where", "when")
_HEDGE_CLAUSE = (r"\s+(?:" + "|".join(_HEDGE_LEADS) + r")\b"
                 r"(?:\s+(?!(?:or|and|nor)\b)[^\s,;:.!?]+){0,8}?")   # "not sure whether coffee or tea" names topics
_HEDGE_RE = re.compile(r"(?:(?:i'm|i\s+am)\s+)?(?:(?:not\s+sure|no\s+idea|dunno)(?:" + _HEDGE_CLAUSE + r")?|"
                       r"not\s+certain" + _HEDGE_CLAUSE + r")"   # "not certain breeds" excludes
                       r"(?:\s*[,;:]\s*(?:but\s+)?|\s+but\s+)(?:also\s+|maybe\s+)?(?=\S)")
# "The link between X and Y" names its two topics like the question "What's the link between X and Y?"; only
# a text that states nothing ("The relationship between X and Y is complex." is a claim) and names two
# ("links between pages" keeps its words)
_RELATION_INTRO_RE = re.compile(r"(?:(?:the|a|an|any)\s+)?" + _RELATION + r"\s+between\s+(?=\S)")

# A document search's document types, named with the collection they come from ("forum posts", "court rulings",
# "clinical notes", "support tickets", "wire stories", "patent applications"); with them "with" is a relation too
# ("clinical notes with tick bites")
_TYPED_DOCUMENTS = (
    r"(?:forum|product|customer|user|support|help[- ]?desk|service|bug|incident|wire|press|policy|court|"
    r"clinical|patent|legal|government|regulatory|consumer|app|hotel|earnings|analyst|hospital|discharge)\s+"
    r"(?:posts?|reviews?|tickets?|notes|stories|documents?|docs|reports?|decisions?|rulings?|opinions?|"
    r"judg(?:e)?ments?|releases?|transcripts?|filings?|records?|threads?|complaints?|e-?mails?|applications?|"
    r"papers?|articles?)")

# Generic document words with their relation, at the start of any term.
_GENRE = (
    r"(?:(?:some|any|all|the|a|an|few|a\s+few|several|relevant|recent|good|new|latest|more|most|other|one|two|three|four|"
    r"(?:the\s+)?(?:archive|library|paper|newspaper|desk)'s|original|"
    r"five|at\s+least|"
    r"scientific|academic|medical|research|news|blog|web|online|published|peer[- ]reviewed|useful|"
    r"interesting|related|similar|scholarly|newest|technical|working|primary|earlier|existing|previous|"
    r"phd|doctoral|masters?|master's|msc|mphil|undergraduate|postgraduate|honours|"   # "PhD thesis on X"
    r"(?:any|all|some|every|other)\s+(?:kinds?|sorts?|types?)\s+of)\s+)*"
    # the document types of a document search, named with the collection they come from ("forum posts", "court
    # rulings", "clinical notes", "support tickets", "wire stories", "patent applications")
    r"(?:" + _TYPED_DOCUMENTS + "|"
    r"tickets(?=\s+(?:about|abt|re|regarding|mentioning|on|that|which)\b)|"
    r"(?:anything|everything|whatever)\s+(?:(?:that\s+)?you\s+(?:can|could)(?:\s+find)?|you\s+have|you've\s+got|"
    r"we\s+have|we've\s+got)|background|clippings|(?:market|competitive)\s+(?:research|data)|prior\s+art|"
    r"documents?|docs?|papers?|articles?|texts?|posts?|pages?|studies|study|reports?|news|stories|"
    r"story|publications?|literature|sources?|results?|content|materials?|items?|entries|entry|ones|books|informations|documentation|lists?|"
    r"those|anything|something|everything|stuff|information|info|works?(?!\s+from\s+(?:home|anywhere)\b)|research|writings?|reading|"
    r"resources?|references?|records?|hits|passages?|sites?|websites?|links?|data|facts|details|evidence|readings|"
    r"arguments?|discussions?|debates?|analys[ie]s|reviews?|coverage|commentary|opinions?|write-?ups?|"
    r"(?:legal\s+)?authorit(?:y|ies)|precedents|guidance|(?:clinical\s+|randomi[sz]ed\s+)?trials|refs|researches|"
    r"patents?|abstracts|rulings|filings|transcripts|notes|judg(?:e)?ments|e-?mails|memos|case\s+law|jurisprudence|"
    r"theses|thesis|tesis|dissertations?|recipe|standards|case\s+stud(?:y|ies)|reporting|briefings?|briefing\s+papers?|guidelines?|protocols?|videos?|"
    r"podcasts?|episodes?|photos?|pics|shots|preprints?|e-?books?|documentar(?:y|ies)|"
    r"(?:earlier|existing|previous|prior|any)\s+disclosures?|"   # (a patent search's; "disclosure of HIV status" is a topic)
    r"(?:the\s+)?(?:latest\s+|current\s+|local\s+|trust\s+|council\s+)?polic(?:y|ies)|"
    r"good\s+reads)"   # "reads" alone is also a noun of sequencing ("reads on chromosome 7")
    r"\s+(?:(?:about|abt|on|of|regarding|concerning|discussing(?:\s+about)?|covering|mentioning|describing|explaining|"
    r"complaining\s+about|saying(?:\s+that)?|linking|re:?|"
    r"where\s+(?:users|people|customers|patients|buyers|owners|someone|somebody|anyone)\s+(?:talk|talks|complain|"
    r"complains|write|writes|post|posts|ask|asks)\s+about|"
    r"addressing|examining|investigating|exploring|analy[sz]ing|featuring|involving|"
    r"related\s+to|relating\s+to|dealing\s+with|talking\s+about|focusing\s+on|focused\s+on|"
    r"in\s+relation\s+to|with\s+respect\s+to|with\s+regard\s+to|pertaining\s+to|to\s+do\s+with|looking\s+(?:at|into)|"
    r"around|into|for|in|from)\b"
    r"|(?:that|which)\s+(?:(?:are\s+discussing(?:\s+about)?|discuss|discusses|mention|mentions|cover|covers|describe|describes|"
    r"explain|explains|talk\s+about|talks\s+about|deal\s+with|deals\s+with|focus\s+on|focuses\s+on|"
    r"concern|concerns|relate\s+to|relates\s+to|look\s+at|looks\s+at|address|addresses|examine|"
    r"examines|investigate|investigates|explore|explores|analy[sz]e|analy[sz]es|involve|involves|"
    r"feature|features|are\s+about|is\s+about|are\s+on|is\s+on|refer\s+to|refers\s+to)\b))"
)
# Advice words are scaffolding too, with a relation that names a topic ("tips on X", "advice for X",
# "explanations of X"; not "tips of the iceberg", "recommendations of the 9/11 commission")
_ADVICE = (
    r"(?:(?:a|an|some|any|good|practical|simple|easy|quick|short|brief|expert|basic|detailed|plain[- ]language|step[- ]by[- ]step)"
    r"\s+)*(?:(?:advice|tips|guides?|guidance|recommendations?|suggestions?|fixes)\s+(?:on|about|for|regarding|"
    r"concerning)\b|guides?\s+to\b|(?:explanations?|overviews?)\s+(?:of|on|about)\b|(?:intros?|introductions?|primers?)\s+(?:to|on)\b)"
)
_GENRE_RE = re.compile(_GENRE + "|" + _ADVICE + "|" + _TYPED_DOCUMENTS + r"\s+with\b"
                       # a show's guests: "episodes with Brene Brown on X", "eps about the Salem witch trials"
                       r"|(?:podcasts?|episodes?|eps)\s+(?:with|w/|featuring|ft\.?)(?=\s)|eps\s+(?:about|on)\b")
# A court's or a forum's documents opening the request, before a relation that no count of cases takes ("cases of
# measles", "cases on cruise ships" are topics; "excluding cases involving physicians" excludes such cases)
_OPENING_GENRE_RE = re.compile(r"(?:cases|threads)\s+(?:about|abt|regarding|concerning|involving|where)\s+(?=\S)")
_TRAILING_FILLER = {"please", "thanks", "thank you", "pls", "plz", "thx", "cheers", "asap", "lol", "idk what to do",
                    "thanks x", "thanks xx", "thanks xxx", "thank you x", "thx x", "many thanks", "thanks a lot",
                    "thanks so much", "thank you so much", "thank you very much", "thanks in advance",
                    "if possible", "if poss", "ideally", "preferably", "especially", "obviously",
                    "any ideas", "help pls", "pls help", "plz help", "please help", "help me pls", "help me please",
                    # the writer's own plight after the topic ("dog ate a sock what do i do")
                    "what do i do", "what do i do now", "what should i do", "what do we do", "what should we do",
                    "what can i do", "what to do", "what now", "idk"}
# (not "tia", which is also a transient ischaemic attack; nor after a title's "called" / "named": "songs called
# thank you very much"); the longest first, so that "many thanks" does not leave "many"
_FILLERS_LONGEST_FIRST = sorted(_TRAILING_FILLER, key=len, reverse=True)
_NAMING_RE = re.compile(r"\b(?:called|named|titled|entitled)$", re.I)
_PLACEHOLDERS = {"stuff", "ones"}
_BECAUSE = {"because", "bc", "cuz", "coz", "cos"}
_ANYTHING_LINKS = {"using", "with", "about", "on", "involving", "containing", "featuring", "that", "which", "to",
                   "from", "by", "for", "in"}
_EDGE_PUNCT = " \t\"'`.,;:!?-\u2013\u2014\u2026*_~/\\|"
_DASHES = {"-", "--", "\u2013", "\u2014"}
_MAX_SLASH_WORDS = 12   # a spaced slash is an "or" in a request of at most this many words


# --------------------------------------------------------------------------- lexing


@dataclass
class _Tok:
    kind: str  # WORD QTERM LP RP COMMA + marker kinds
    text: str = ""
    spaced: bool = True  # preceded by white space (or the start): "X -Y" is a minus, "(H2A)-histone" is not


_INITIALS_RE = re.compile(r"(?:[A-Za-z]\.){2,}")   # "U.S.", "e.g.": the last stop is the abbreviation's
_LEX_RE = re.compile(
    r'"((?:[^"\\]|\\.)*)"|\u201c([^\u201c\u201d]*)\u201d|\u00ab([^\u00ab\u00bb]*)\u00bb'
    r'|([()\[\]{}])|([,;])|((?:[^\s()\[\]{},;"\u201c\u201d\u00ab\u00bb]|(?<=\d),(?=\d{3}(?!\d)|\d{1,2}(?:,\d{1,2})*[-)]))+)', re.S)


def _fold(text: str) -> str:
    """Lower case with the typographic apostrophe as "'", for matching only (terms keep the user's text):
    "Don\u2019t", "I\u2019m", "What\u2019s" match the markers and patterns written with "'".  Always the
    same length as ``text``, so that match offsets hold in it ("\u0130".lower() is two characters: such a
    character stays as it is)."""
    low = text.lower()
    if len(low) != len(text):
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low.replace("\u2019", "'")


# Emoji and pictographs ("urban fox behaviour \U0001f98a but no mange stuff pls \U0001f645"): no word of a topic
# a typed emoticon between blanks ("he has them all :) Thx, Priya"): decoration, and where a capitalised word
# follows it the end of a sentence, as the writer meant it
_EMOTICON_RE = re.compile(r"(?<=\s)(?:[:;=]-?[()DPp\]\[/|]|\^_\^)(?=\s|$)(?P<next>(?=\s+[A-Z]))?")
# ("XD" and "<3" are left: "Adobe XD", "an xD card", "babies <3 months old")
def _emoticon(m: re.Match) -> str:
    return "." if m.group("next") is not None else " "


_EMOJI_RE = re.compile("[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\uFE0F\u20E3]")

# An emoji or symbol standing as a whole operand ("cats, dogs or 🐍", "🐱 but not 🐶"): the
# rules read words, and dropping it (as decoration elsewhere) would change the logic (an OR list read as an AND, a NOT
# with nothing after it).  Both sides a boundary (start, end, a comma, a bracket or a connective), one of them a
# connective: "cats ❤️ and dogs" and "X, 🙏" are decoration.
_CONNECTIVE = r"(?:or|and|nor|not|but|without|except|excluding|vs\.?|versus)"
_CONNECTIVE_END_RE = re.compile(rf"\b{_CONNECTIVE}$", re.I)
_CONNECTIVE_START_RE = re.compile(rf"{_CONNECTIVE}\b", re.I)
_SYMBOL_RUN_RE = re.compile(f"{_EMOJI_RE.pattern}(?:\\s*{_EMOJI_RE.pattern})*")


def _symbol_operand(text: str) -> str | None:
    """The first emoji or symbol run that stands as a whole operand next to a connective (above), or None."""
    for m in _SYMBOL_RUN_RE.finditer(text):
        before, after = text[:m.start()].rstrip(), text[m.end():].lstrip()
        left = _CONNECTIVE_END_RE.search(before) is not None
        right = _CONNECTIVE_START_RE.match(after) is not None
        if (left or right) and (left or not before or before[-1] in ",;([") \
                and (right or not after or after[0] in ",;)].!?"):
            return m.group(0).replace("\ufe0f", "")
    return None


# contractions typed without their apostrophe ("im a nursing student", "cant find anything on X"); "IM" (instant
# messaging) and "Ive" as a name keep theirs
_TEXTED_CONTRACTION_RE = re.compile(r"\b(?:(im)(?=\s+[a-z])|(cant)\b|(ive)(?=\s+(?:been|got|read|seen|tried|looked|found)\b))")


_QUOTED_RE = re.compile(r'("(?:[^"\\]|\\.)*"|\u201c[^\u201c\u201d]*\u201d|\u00ab[^\u00ab\u00bb]*\u00bb)', re.S)


def _clean(text: str) -> str:
    """Terminal escape sequences, control characters, odd separators and emoji become spaces; texted contractions
    get their apostrophe."""
    out = []
    for ch in strip_terminal_escapes(text):
        cat = unicodedata.category(ch)
        out.append(" " if cat in ("Cc", "Cf", "Cs", "Zl", "Zp") else ch)
    # emoji are decoration, but not inside quotes: a quoted "🐍" is the writer's own term
    parts = _QUOTED_RE.split("".join(out))
    text = "".join(p if i % 2 else _EMOTICON_RE.sub(_emoticon, _EMOJI_RE.sub(" ", p)) for i, p in enumerate(parts))
    return _TEXTED_CONTRACTION_RE.sub(lambda m: {"im": "i'm", "cant": "can't", "ive": "i've"}[m.group(0)], text)


# An error message quoted as it was printed: "TypeError: ...", "fatal: not a git repository", "ERROR: ..."
_ERROR_HEAD_RE = re.compile(r"(?:[\w.$]*(?:Error|Exception)|[Ee]rror|ERROR|[Ff]atal|FATAL|[Pp]anic|PANIC|"
                            r"WARNING|[Ee]xception):")


def _error_messages(raw: list[_Tok]) -> list[_Tok]:
    """An error message's words, from its head ("TypeError:", "fatal:") to the end of its clause (a comma, a
    bracket, a sentence's stop), are one phrase, kept as printed: its colon stays and its "not" / "no" are the
    message's words ("fatal: not a git repository" excludes nothing; every outside writer kept such a message
    whole, colon and all)."""
    out: list[_Tok] = []
    i = 0
    while i < len(raw):
        t = raw[i]
        if t.kind == "WORD" and _ERROR_HEAD_RE.fullmatch(t.text) and i + 1 < len(raw) and raw[i + 1].kind == "WORD":
            j, words = i + 1, [t.text]
            while j < len(raw):
                if raw[j].kind == "LP":   # the message's own bracket ("(reading 'map')"), not an aside ("(not X)")
                    k = j + 1
                    while k < len(raw) and raw[k].kind == "WORD":
                        k += 1
                    if not (k < len(raw) and raw[k].kind == "RP" and k > j + 1
                            and _fold(raw[j + 1].text) not in _NO_GROUP_START):
                        break
                    words[-1] += " (" + " ".join(w.text for w in raw[j + 1:k]) + ")"
                    j = k + 1
                    continue
                if raw[j].kind != "WORD":
                    break
                words.append(raw[j].text)
                j += 1
                if words[-1][-1:] in ".?!" and not _INITIALS_RE.fullmatch(words[-1]):
                    break
            words[-1] = words[-1].rstrip(".?!") or words[-1]
            out.append(_Tok("QTERM", " ".join(words), t.spaced))
            i = j
        else:
            out.append(t)
            i += 1
    return out


def _lex(text: str, title_start: bool | str = False) -> list[_Tok]:
    raw: list[_Tok] = []
    for m in _LEX_RE.finditer(text):
        q, q2, q3, paren, comma, word = m.groups()
        spaced = m.start() == 0 or text[m.start() - 1].isspace()
        if q is not None or q2 is not None or q3 is not None:
            body = re.sub(r"\\(.)", r"\1", q, flags=re.S) if q is not None else (q2 if q2 is not None else q3)
            if body.strip():
                raw.append(_Tok("QTERM", body, spaced))
        elif paren:
            raw.append(_Tok("LP" if paren in "([{" else "RP", spaced=spaced))
        elif comma:
            raw.append(_Tok("COMMA" if comma == "," else "SEMI"))
        else:
            raw.append(_Tok("WORD", word, spaced))
    raw = _error_messages(raw)
    raw = _acronym_expansions(raw)
    # words in lower case with no punctuation of their own ("is" in "is Not Alone back"), before it is stripped
    bare = {id(t) for t in raw if t.kind == "WORD" and t.text.islower() and t.text[-1:].isalpha()}
    # Sentence punctuation glued to words: "health?" / "decline." / "X:" (keep "E. coli" inside).
    for i, t in enumerate(raw):
        if t.kind == "WORD":
            last = i == len(raw) - 1 or raw[i + 1].kind in ("COMMA", "SEMI", "RP")
            # "the SETI Wow! signal": an exclamation mark before a word in lower case is the name's
            nxt = raw[i + 1] if i + 1 < len(raw) else None
            title_mark = (i > 0 and t.text.endswith("!") and nxt is not None and nxt.kind == "WORD"
                          and nxt.text[:1].islower())
            stripped = t.text.rstrip("?:") if title_mark else t.text.rstrip("?!:")
            if last and not _INITIALS_RE.fullmatch(stripped):   # "in the U.S." keeps its stop
                stripped = stripped.rstrip(".")
            t.text = stripped
    # a spaced dash ("romance novels - no vampires") is kept for now: before an exclusion it separates a clause;
    # a spaced slash between words is an "or" ("artificial sweeteners / aspartame"; not "and / or", "1 / 2",
    # nor two single words before their noun: "mother / daughter relationships"; in a short request only: a
    # claim's "myelopathy / tropical spastic paraparesis" names one thing twice)
    short = len(text.split()) <= _MAX_SLASH_WORDS

    for i, t in enumerate(raw):
        if t.kind == "WORD" and t.spaced and t.text in ("-", "+") and 0 < i < len(raw) - 1 \
                and raw[i + 1].kind == "QTERM" and not raw[i + 1].spaced and raw[i - 1].kind in ("WORD", "QTERM"):
            t.kind = "NOT" if t.text == "-" else "AND"   # a search engine's -"phrase" / +"phrase"
        elif t.kind == "WORD" and t.spaced and t.text in _DASHES and i + 1 < len(raw) and raw[i + 1].spaced:
            t.kind = "DASH"
        elif short and t.kind == "WORD" and t.spaced and t.text == "/" and 0 < i < len(raw) - 1 and raw[i + 1].spaced \
                and raw[i - 1].kind == raw[i + 1].kind == "WORD" \
                and _slash_alternative(raw[i - 1].text) and _slash_alternative(raw[i + 1].text) \
                and not (_short_token(raw[i - 1].text) and _short_token(raw[i + 1].text)) \
                and _fold(raw[i + 1].text) not in ("not", "without", "except", "excluding") \
                and not _compound_slash(raw, i):
            t.kind = "OR"
        elif t.kind == "WORD" and t.spaced and t.text == "+" and 0 < i < len(raw) - 1 and raw[i + 1].spaced \
                and _plus_joins(raw, i):
            t.kind = "AND"   # "federated learning + differential privacy"
    if short:
        raw = _split_slashes(raw)
    raw = [t for t in raw if t.kind != "WORD" or t.text.strip(_EDGE_PUNCT)]
    # "Procter & Gamble advertising": an ampersand between capitalised words joins a name, unless every word
    # is capitalised ("Meat & Multiple Myeloma": a title, where the capitals tell nothing)
    title = not any(t.text == "&" for t in raw) \
        or all(not t.text[:1].islower() for t in raw if t.kind == "WORD" and len(t.text) > 3)
    i = 1
    while i + 1 < len(raw) and not title:
        a, amp, b = raw[i - 1], raw[i], raw[i + 1]
        if amp.kind == "WORD" and amp.text == "&" and a.kind == b.kind == "WORD" \
                and a.text[:1].isupper() and b.text[:1].isupper():
            raw[i - 1: i + 2] = [_Tok("WORD", f"{a.text} & {b.text}")]
        else:
            i += 1
    # Markers and binomials, longest match first.  An upper-case AND/OR in a text that is not all capitals is
    # the user's operator ("bread AND butter NOT margarine"), never inside a binomial.
    shouting = not any(c.islower() for t in raw if t.kind == "WORD" for c in t.text)
    out: list[_Tok] = []
    i = 0
    while i < len(raw):
        t = raw[i]
        if t.kind != "WORD":
            out.append(t)
            i += 1
            continue
        words = []
        j = i
        while j < len(raw) and raw[j].kind == "WORD" and j - i < max(_MAX_MARKER, _MAX_BINOMIAL):
            words.append(_fold(raw[j].text).strip(".,;:!?\"'"))
            j += 1
        matched = False
        named = (_institution_name(raw, i) or _title_with_and(raw, i)) if not shouting else 0
        if named:   # "the Crime and Disorder Act", "Planning and Compulsory Purchase Act"
            out.append(_Tok("WORD", " ".join(r.text for r in raw[i:i + named])))
            i += named
            continue
        for n in range(len(words), 1, -1):
            last = words[n - 1][:-2] if words[n - 1].endswith(("'s", "\u2019s")) else words[n - 1]   # "Clyde's"
            if (tuple(words[:n]) in _BINOMIALS or (*words[:n - 1], last) in _BINOMIALS) \
                    and (shouting or not any(r.text in ("AND", "OR") for r in raw[i:i + n])):
                out.append(_Tok("WORD", " ".join(r.text for r in raw[i:i + n])))
                i += n
                matched = True
                break
        if matched:
            continue
        if len(words) >= 3 and words[0] in ("hundred", "thousand") and words[1] == "and" and words[2] in _NUMBER_WORDS \
                and not any(r.text in ("AND", "OR") for r in raw[i:i + 3]):   # "nineteen hundred and five"
            out.append(_Tok("WORD", " ".join(r.text for r in raw[i:i + 3])))
            i += 3
            continue
        for n in range(min(len(words), _MAX_MARKER), 0, -1):
            kind = _MARKER_TABLE.get(tuple(words[:n]))
            if kind:
                out.append(_Tok(kind, " ".join(r.text for r in raw[i:i + n])))
                i += n
                matched = True
                break
        if not matched:
            out.append(t)
            i += 1
    # A title that opens with "Not" ("Not the Nine O'Clock News sketches", "Not for Ourselves Alone Ken Burns"):
    # at the start, before two capitalised words (a function word may come first); "Not Python" excludes
    if out and out[0].kind == "NOT" and out[0].text == "Not" and _title_follows(out[1:4]):
        out[0].kind = "WORD"
    # ... or with "And" / "Or" ("And Then There Were None", "reviews of And the Band Played On"): before three
    # capitalised words, at the start or after a lower-case word that ends no sentence ("And Python tutorials", "And
    # New York hotels" keep a leading connective to drop)
    for i, t in enumerate(out):
        if t.kind in ("AND", "OR") and t.text in ("And", "Or") and _title_follows(out[i + 1:i + 5], least=3) and (
                i == 0 or out[i - 1].kind == "WORD" and out[i - 1].text.islower() and out[i - 1].text[-1:].isalpha()):
            t.kind = "WORD"
    # ... and inside one: "Rebel Without a Cause lobby cards", "Things Not Seen quotes": a capitalised "Without"
    # between a capitalised word and a capitalised one (a function word may come first), "Not" or "No" so after the
    # text's first word ("hotels in Spain Not Barcelona" excludes), "Not" also after two capitalised words ("Make
    # Love Not War poster"), in a text that has lower-case words of its own ("Vaccines Without Adjuvants", all
    # capitalised, excludes)
    if any(t.kind == "WORD" and t.text.islower() and t.text not in _TITLE_SMALL for t in out):
        for i in range(1, len(out) - 1):
            t, before = out[i], out[i - 1]
            after = out[i + 2] if out[i + 1].text in _TITLE_FUNCTION_WORDS and i + 2 < len(out) else out[i + 1]
            title_place = i == 1 or (t.text == "Not" and out[i - 2].kind == "WORD" and out[i - 2].text[:1].isupper())
            if (t.text == "Without" or t.text in ("Not", "No") and title_place) and before.kind == after.kind == "WORD" \
                    and before.text[:1].isupper() and after.text[:1].isupper() and not before.text.isupper():
                t.kind = "WORD"
    # A spaced dash before an exclusion ("urban gardening - ignore hydroponics", "novels - no vampires, no
    # werewolves") is a comma; elsewhere it joins nothing ("Gaming laptops - ASUS or Lenovo" is no list).
    out = [_Tok("COMMA") if t.kind == "DASH" and _dash_separates(out, i) else t for i, t in enumerate(out)]
    out = [t for t in out if t.kind != "DASH"]
    # "plus" joins two operands ("diet plus exercise"); a capitalised one after a capitalised word or a number is
    # part of a name ("Disney Plus", "iPhone 15 Plus", "SkyTeam Elite Plus"), and one with no operand after it
    # is a word too ("disney plus or netflix")
    for i, t in enumerate(out):
        if t.kind == "AND" and _fold(t.text) == "plus" and i and out[i - 1].kind == "WORD" and (
                i + 1 >= len(out) or out[i + 1].kind not in ("WORD", "QTERM", "LP")
                or (t.text == "Plus" and _names_plus(
                    (out[i - 2].text.split() if i > 1 and out[i - 2].kind == "WORD" else []) + out[i - 1].text.split()))):
            t.kind = "WORD"
    # Markers that are also plain words ("dogs not counting", "research on whether X", "whether or not") count
    # only in their place: between two operands, or opening an "or" group.
    for i, t in enumerate(out):
        if t.kind not in ("EXCL", "AND", "EITHER"):
            continue
        low = " ".join(w.strip(".,;:!?\"'") for w in _fold(t.text).split())   # as matched
        prev = out[i - 1].kind if i else None
        nxt = out[i + 1].kind if i + 1 < len(out) else None
        if t.kind in ("EXCL", "AND") and low in _BETWEEN_OPERANDS:   # ", combined with" is an aside
            if prev not in ("WORD", "QTERM", "RP", "COMMA") or nxt not in ("WORD", "QTERM", "LP") \
                    or (prev == "COMMA" and (i < 2 or out[i - 2].kind not in ("WORD", "QTERM", "RP"))) \
                    or (low == "combined with" and (prev == "COMMA" or _modifies(out[i - 1].text))) \
                    or out[i - 1].text.lower() in _NO_OPERAND_END \
                    or (out[i + 1].text[:1].isdigit()   # "3 vs 2", "iphone 14 vs 15"; "laser vs 3D camera" compares
                        and (low not in _COMPARES or _VERSION_RE.fullmatch(out[i + 1].text) is not None
                             or out[i - 1].text[:1].isdigit())) \
                    or (low.split()[-1] in _NEGATED_BE
                        and (_fold(out[i + 1].text).split() or [""])[0].endswith("ed")) \
                    or (low in _COMPARES and _in_title(out, i, t.text in ("vs", "versus"))) \
                    or (low == "sans" and t.text != "sans") \
                    or (low.startswith("anywhere") and not (prev == "COMMA" or _plural_noun(out[i - 1].text))):
                # ("sans" in a name: "Source Sans Pro", "Médecins Sans Frontières"; "anywhere but X" after a comma
                # or a plural noun only: "jobs anywhere but London", not "work from anywhere except the office")
                t.kind = "WORD"   # (a state: "a drug that is not approved in Europe"; a title: "Kramer vs. Kramer")
        elif t.kind == "EXCL" and low in _CLAUSE_OPENERS:
            # "ignore" only after a comma or semicolon ("email filtering and ignore lists" names a thing), a bare
            # "avoid" only opening a sentence of its own ("vegan recipes. Avoid soy."; "tips, avoid costly repairs")
            openers = {"ignore": ("COMMA", "SEMI"), "disregard": ("COMMA", "SEMI"), "avoid": ("SEMI",), "nothing": ("COMMA", "SEMI"),
                       "nothing with": ("COMMA", "SEMI")}.get(low, ("COMMA", "SEMI", "BUT", "AND"))
            # before a name "save for" excludes wherever it stands ("teddy bears save for Steiff"; "save for
            # retirement" is a task)
            named = low == "save for" and nxt == "WORD" and out[i + 1].text[:1].isupper()
            if (prev not in openers and not named) or nxt not in ("WORD", "QTERM", "LP") \
                    or (low == "nothing" and (_fold(out[i + 1].text).split() or [""])[0] in _NOTHING_QUALIFIES
                        and not (out[i + 1].text.lower() == "from" and i + 2 < len(out)
                                 and out[i + 2].text[:1].isupper())):   # "nothing from Swartland" excludes
                t.kind = "WORD"
        elif t.kind == "EITHER" and low in ("whether", "whichever of"):
            later = [u.kind for u in out[i + 1:]]
            if prev not in (None, "COMMA", "SEMI", "LP") or nxt == "OR" or "OR" not in later:
                t.kind = "WORD"
    # "A vs B for C": a phrase after the second of two compared topics, behind a link within three words of the
    # "vs", is their common ground, a topic of its own ("ketamine vs midazolam for procedural sedation in
    # children", "Kant vs Hume on causation", "train vs bus from Amsterdam to Brussels"), as the outside writers
    # read it; the link goes
    # Between names, the first lower-case word after the second name starts it: "Pathfinder vs D&D 5e grappling
    # rules", "C++ vs C# performance".
    ground: list[int] = []   # where an AND goes in
    for i, t in enumerate(out):
        if t.kind != "AND" or _fold(t.text) not in _COMPARES:
            continue
        end = _word_run_end(out, i + 1)
        start = i
        while start > 0 and out[start - 1].kind == "WORD":
            start -= 1
        name = i + 1
        while name < end and _name_or_code(out[name].text):
            name += 1
        if start < i and all(_name_or_code(u.text) for u in out[start:i]) and i + 1 < name < end \
                and _fold(out[name].text) not in _COMPARED_GROUND_LINKS | _TITLE_SMALL \
                and out[name].text.strip(".,;:!?").isalpha() and out[name].text.islower() \
                and end - name <= _MAX_SHARED_PHRASE:
            ground.append(name)
            continue
        for k in range(i + 2, min(end - 1, i + 5)):
            if _fold(out[k - 1].text)[-1:] in ".?!:":   # a sentence ends first
                break
            timed = _fold(out[k].text) in ("after", "before")   # "... after cardiac surgery", "... before bed"
            if _fold(out[k].text) in _COMPARED_GROUND_LINKS or timed:
                if timed and (end - k - 1 < 2 or _fold(out[k + 1].text)[:1].isdigit()):
                    # one word, or a number, is a time with its link: "coffee vs tea before bed" compares the two
                    # "before bed" (not "bed" alone, nor "tea before bed" against coffee)
                    if end - k - 1 >= 1 and _fold(out[k - 1].text) not in _NO_SHARED_HEAD_END:
                        out[k + 1] = _Tok("WORD", f"{out[k].text} {out[k + 1].text}", out[k].spaced)
                        out[k] = _Tok("AND", "and")
                    break
                if end - k - 1 <= _MAX_SHARED_PHRASE and _fold(out[k - 1].text) not in _NO_SHARED_HEAD_END \
                        and _fold(out[k + 1].text) not in _LATIN_AFTER_IN \
                        and _fold(out[end - 1].text).strip(".,;:!?") not in _TIME_UNITS:
                    out[k] = _Tok("AND", "and")
                break
    for k in reversed(ground):
        out.insert(k, _Tok("AND", "and"))
    # "trade talks between the U.S. and Japan", "trade-offs between speed or accuracy", "between 2010 and 2020":
    # the first "and" / "or" after "between" in a run of words joins the two ends of the "between" (not after
    # "link" and kin: "Is there a link between X and Y?" names two topics, see _RELATION_INTRO_RE)
    between = False
    for i, t in enumerate(out):
        if t.kind == "WORD":
            between = between or (_fold(t.text).strip(".,;:!?\"'") == "between" and not (
                i and out[i - 1].kind == "WORD" and _fold(out[i - 1].text).strip(".,;:!?\"'") in _RELATION_NOUNS))
        elif t.kind in ("AND", "OR") and t.text.lower() in ("and", "or") and between and i + 1 < len(out) \
                and out[i + 1].kind == "WORD":
            t.kind = "WORD"
            between = False
        else:
            between = False
    # "Ortlieb Back-Roller or similar", "a Brompton or equivalent": no alternative, the writer's latitude
    drop: set[int] = set()
    for i, t in enumerate(out):
        if t.kind == "OR" and t.text.lower() == "or" and 0 < i and out[i - 1].kind == "WORD":
            end = _word_run_end(out, i + 1)
            if " ".join(_fold(u.text).strip(".,;:!?") for u in out[i + 1:end]) in _LATITUDE:
                drop.update(range(i, end))
    out = [t for k, t in enumerate(out) if k not in drop]
    # "30 °C or above", "2.5% or more", "aged 5 or older": an "or" between a number (and its unit) and a
    # comparative is a bound, no alternative ("tax cuts or higher spending" has no number before it)
    for i, t in enumerate(out):
        if t.kind != "OR" or t.text.lower() != "or" or i + 1 >= len(out) or out[i + 1].kind != "WORD":
            continue
        if out[i + 1].text.lower().strip(".,;:!?") not in _COMPARATIVES:
            continue
        after = out[i + 2] if i + 2 < len(out) else None
        before = [u for u in out[max(0, i - 2):i] if u.kind == "WORD"]
        if after is not None and after.kind == "WORD" and after.text.lower() not in _BOUND_FOLLOWERS \
                and not (before and _is_number(before[-1].text.split()[-1])):   # "3 or more bedrooms"
            continue
        if before and (_is_number(before[-1].text) or (len(before) == 2 and _is_number(before[0].text)
                                                        and len(before[-1].text) <= 5)
                       or _is_number(before[-1].text.split()[-1])):
            t.kind = "WORD"
    # "two or three bedroom apartments", "3 or 4 star hotels": two small counts before a noun are a range, no
    # alternative ("two" names no topic)
    for i, t in enumerate(out):
        if t.kind == "OR" and t.text == "or" and 0 < i < len(out) - 2 and out[i - 1].kind == "WORD" \
                and out[i + 1].kind == "WORD" and out[i + 2].kind == "WORD":
            x, y = out[i - 1].text.split()[-1].lower(), out[i + 1].text.split()[0].lower()
            if all(w in _SMALL_COUNTS or w.isdigit() and int(w) < 100 for w in (x, y)) and out[i + 1].text == y \
                    and out[i + 2].text[:1].islower() and out[i + 2].text[:1].isalpha():
                t.kind = "WORD"
    # "is not", "does not", "should not": a verb's negation belongs to the text of a
    # claim ("the death penalty is not a deterrent"), it is no operator; nor is a hedge's
    for i, t in enumerate(out):
        before = [_fold(u.text).strip(".,;:!?\"'") if u.kind == "WORD" else "" for u in out[max(0, i - 2):i]]
        if t.kind == "NOT" and t.text.lower() == "not" and before and (
                before[-1] in _AUX or before[-1] == "to"   # "is not", "how to not procrastinate"
                or (len(before) == 2 and before[-1] in _ASKED and before[0] in _AUX)):   # "do I not"
            t.kind = "WORD"
        # a state ("excel vlookup not working", "wifi not connecting after update") is no exclusion; "running
        # not swimming" (the same form on both sides) is
        elif t.kind == "NOT" and t.text.lower() == "not" and 0 < i < len(out) - 1 and out[i - 1].kind == "WORD" \
                and out[i + 1].kind == "WORD" and _fold(out[i + 1].text).strip(".,;:!?").endswith("ing") \
                and (not _fold(out[i - 1].text).strip(".,;:!?").endswith("ing")
                     or _fold(out[i + 1].text).strip(".,;:!?") in _STATES) and len(out[i + 1].text) > 5:
            t.kind = "WORD"   # ("screen sharing not working": a state after an -ing noun too)
        # a hedge ("not sure whether ...", "not certain if ...") negates no topic ("not certain breeds" does)
        elif t.kind == "NOT" and t.text.lower() == "not" and i + 1 < len(out) and out[i + 1].kind == "WORD" \
                and _is_hedge(out[i + 1].text, out[i + 2].text if i + 2 < len(out) else ""):
            t.kind = "WORD"
    # search-engine minus: "X -Y" -> X AND NOT Y; not a number ("-20 degrees", "E2f-1, -2"), nor a hyphen glued
    # to what precedes it ("(H2A)-histone")
    # and its plus, "X +Y" -> X AND Y, where the request holds another such operator ("coral reef cleaning
    # stations +wrasse -shrimp"; not "HIV +ve patients")
    def operator(t: _Tok, signs: str) -> bool:
        return t.kind == "WORD" and len(t.text) > 1 and t.text[0] in signs and t.text[1].isalpha() and t.spaced

    searchy = sum(operator(t, "-+") for t in out) > 1 or any(t.text in ("-", "+") and t.kind in ("NOT", "AND")
                                                            for t in out)
    minus: list[_Tok] = []
    flags = any(_fold(t.text).strip(".,;:") in _FLAG_WORDS for t in out)
    for t in out:
        if (operator(t, "-") or (searchy and operator(t, "+"))) and minus \
                and minus[-1].kind in ("WORD", "QTERM", "RP", "COMMA", "SEMI") \
                and not (minus[-1].kind in ("COMMA", "SEMI")
                         and (len(minus) < 2 or "-" in minus[-2].text or len(t.text) < 4 or flags)):
            # ("X, Y, -Z": a field of its own; not "anti-inflammatory, -bacterial and -fungal", the prefix's other
            # words, nor a command's flags: "tar command flags, -x, -z", "java heap settings, -Xmx")
            minus.extend([_Tok("NOT" if t.text[0] == "-" else "AND", t.text[0]), _Tok("WORD", t.text[1:])])
        else:
            minus.append(t)
    out = minus
    # "no" negates only where an operand starts: ", no X" / "and no X" / "no X" at the start (", please no X" too:
    # the "please" goes)
    out = [t for i, t in enumerate(out)
           if not (t.kind == "WORD" and _fold(t.text) in ("please", "pls", "plz") and i + 2 < len(out)
                   and out[i + 1].kind == "WORD" and out[i + 1].text == "no" and out[i + 2].kind in ("WORD", "QTERM")
                   and _fold(out[i + 2].text) not in _NO_IDIOMS | {"rush", "judgement", "judgment", "pressure"}
                   and i > 0 and out[i - 1].kind in ("COMMA", "SEMI", "BUT"))]
    for i, t in enumerate(out):
        if t.kind == "WORD" and t.text.lower() == "no" and i + 1 < len(out) and out[i + 1].kind in ("WORD", "QTERM") \
                and _fold(out[i + 1].text) not in _NO_IDIOMS:   # ("no idea who to contact" excludes nothing)
            prev = out[i - 1].kind if i else None
            if prev in (None, "COMMA", "SEMI", "AND", "OR", "ORELSE", "BUT", "LP"):
                t.kind = "NOT"
    # "No Man's Sky base building tips", "No Time to Die box office": a leading "No" before capitalised words, with
    # nothing else to search for, is a title (a query of one exclusion alone asks for almost everything)
    if len(out) > 2 and out[0].kind == "NOT" and out[0].text == "No" and out[1].text[:1].isupper() \
            and sum(t.text[:1].isupper() for t in out[1:4]) >= 2 and all(t.kind == "WORD" for t in out[1:]):
        out[0].kind = "WORD"
    # "landlord ignoring repair requests": after someone who ignores, "ignoring" is the verb, no exclusion
    for i in range(1, len(out)):
        if out[i].kind == "EXCL" and _fold(out[i].text) == "ignoring" and out[i - 1].kind == "WORD" \
                and _fold(out[i - 1].text) in _AGENTS:
            out[i].kind = "WORD"
    # "is Not Alone back in stock", "do you have Not Today Satan", "shows like Not Another D&D Podcast": a capitalised
    # "Not" after a verb or a small word in lower case and before a capitalised word is a title's first word (after
    # a noun it still excludes: "hotels in paris Not London")
    for i in range(1, len(out) - 1):
        if out[i].kind == "NOT" and out[i].text == "Not" and id(out[i - 1]) in bare \
                and out[i - 1].text in _BEFORE_A_TITLE \
                and out[i + 1].kind == "WORD" and out[i + 1].text[:1].isupper():
            out[i].kind = "WORD"
        # "talks about Neither Here Nor There": a capitalised "Neither ... Nor" there is a title's too
        if out[i].kind == "NEITHER" and out[i].text == "Neither" and id(out[i - 1]) in bare \
                and out[i - 1].text in _BEFORE_NEITHER_TITLE and out[i + 1].kind == "WORD" \
                and out[i + 1].text[:1].isupper():   # (not "I like Neither Coke Nor Pepsi", "my kids watch Neither ...")
            nor = next((j for j in range(i + 2, len(out)) if out[j].kind != "WORD" or not out[j].text[:1].isupper()),
                       len(out))
            if nor < len(out) - 1 and out[nor].kind == "NOR" and out[nor].text == "Nor" \
                    and out[nor + 1].kind == "WORD" and out[nor + 1].text[:1].isupper():
                out[i].kind = out[nor].kind = "WORD"
    if title_start == "no":   # "no claims bonus protection": the opening "no" is the term's word (below)
        if out and _fold(out[0].text) == "no":
            out[0].kind = "WORD"
    elif title_start:
        _title_opening(out)
    # "YA dystopian or YA paranormal, neither Twilight nor Hunger Games": after a comma that follows a topic, a
    # "neither ... nor" excludes both from what came before (it was read as one more alternative of the list)
    for i in range(1, len(out) - 1):
        if out[i].kind == "NEITHER" and out[i - 1].kind == "COMMA" and i >= 2 and out[i - 2].kind in ("WORD", "QTERM", "RP"):
            nor = next((j for j in range(i + 1, len(out)) if out[j].kind in ("NOR", "COMMA", "SEMI", "LP", "RP")), None)
            if nor is not None and out[nor].kind == "NOR":
                out[i] = _Tok("EXCL", "excluding")
                out[nor] = _Tok("AND", "and")
    # "to be or not to be": an "or not" before the words it follows is an idiom, no alternative of an exclusion
    for i, t in enumerate(out):
        if t.kind == "ORNOT" and _fold(t.text) == "or not":
            for n in (3, 2, 1):
                before, after = out[max(0, i - n):i], out[i + 1:i + 1 + n]
                if len(before) == len(after) == n and all(u.kind == v.kind == "WORD" for u, v in zip(before, after)) \
                        and [_fold(u.text) for u in before] == [_fold(v.text) for v in after]:
                    t.kind = "WORD"
                    break
    return _search_string_no(out)


_TITLE_CUES = {"No", "Not", "Without"}
_FLAG_WORDS = {"flag", "flags", "option", "options", "switch", "switches", "argument", "arguments", "args", "command",
               "commands", "cli", "parameter", "parameters", "settings", "setting", "warnings", "compiler", "gcc",
               "clang"}
_NO_IDIOMS = {"idea", "clue", "doubt", "matter", "worries"}
_AGENTS = set("landlord landlords landlady council employer employers boss manager school company agent agency "
              "neighbour neighbours neighbor neighbors government doctor gp insurer bank police partner husband wife "
              "he she they who letting university tenant tenants owner owners".split())
_BEFORE_A_TITLE = set("is are was were be been have has had got get like love loved of the a an about called named "
                      "titled play played playing read reading watch watched watching buy bought stock sell find see "
                      "saw "
                      "hear heard listen rent borrow".split())
_BEFORE_NEITHER_TITLE = {"about", "of", "called", "named", "titled", "entitled"}
# what a thing does not do when it is broken ("screen sharing not working", "file syncing not updating")
_STATES = set("working loading connecting syncing responding showing opening starting printing charging booting "
              "updating displaying saving sending receiving launching installing downloading uploading".split())


def _title_opening(out: list[_Tok]) -> None:
    """A text that opens with a title led by a capitalised negation ("Not Without My Daughter", "Without a Trace or
    Cold Case", "No Time to Die behind the scenes"): its cues are the title's words.  Used only on a second reading,
    when the first left nothing wanted (a query of exclusions alone asks for almost everything) or failed."""
    i = 0
    while i < len(out) and out[i].text in _TITLE_CUES:
        i += 1
    run = 0
    capitals = 0
    for t in out[i:]:
        if t.kind != "WORD" or not (t.text[:1].isupper() or t.text.lower() in _TITLE_SMALL | {"my", "your"}):
            break
        run += 1
        capitals += t.text[:1].isupper()
    # at least two words after the cues, one of them capitalised, or one capitalised word before more text ("Without
    # Me but not the Eminem one"; "Not Python" alone still excludes)
    if i and capitals and (run >= 2 or i + run < len(out)):
        for t in out[:i]:
            t.kind = "WORD"


# A search string's "X no Y" ("used cars under 5000 pounds no diesel", "vegan curry no coconut no peanuts"): a
# lower-case "no" after a topic of two words or more excludes the one word after it (or a name of up to three),
# up to the end or the next such "no", in a string of at most _MAX_SEARCH_STRING words with no verb's auxiliary
# ("say no to drugs", "no longer", "with no", "There's no X", "best no bake cheesecake" are no such thing).
_MAX_SEARCH_STRING = 14
_NO_AFTER = {"say", "says", "said", "yes", "or", "and", "with", "have", "has", "had", "is", "are", "was", "were",
             "there", "by", "of", "in", "to", "for", "at", "on", "from", "as", "if", "take", "taking", "means"}
_NO_BEFORE = {"longer", "more", "less", "matter", "doubt", "way", "one", "fewer", "sooner", "later", "good", "problem",
              "idea", "need", "further", "other", "such", "than", "much", "man's", "mans"}


def _search_string_no(toks: list[_Tok]) -> list[_Tok]:
    if len(toks) > _MAX_SEARCH_STRING or any(t.kind != "WORD" for t in toks) \
            or any(_fold(t.text) in _AUX for t in toks):
        return toks
    out: list[_Tok] = []
    for i, t in enumerate(toks):
        if t.text == "no" and out and _fold(out[-1].text) not in _NO_AFTER and _fold(out[-1].text) != "no" \
                and i + 1 < len(toks) and _fold(toks[i + 1].text) not in _NO_BEFORE:
            n = next((j for j in range(i + 1, len(toks)) if toks[j].text == "no"), len(toks)) - i - 1
            after = [x.text for x in toks[i + 1:i + 1 + n]]
            # one word, or a name ("no Canada Goose"): "best no bake cheesecake", "no code tools" are compounds
            # (an adjective and its noun after a topic of three words or more: "PhD studentships in cancer biology
            # no clinical trials"; not "best no bake cheesecake")
            if len(out) >= 2 and (n == 1 or 1 < n <= 3 and all(w[:1].isupper() for w in after)
                                  or n == 2 and len(out) >= 3 and _adjective_like(after[0].lower())) \
                    and not any(w[:1].isdigit() for w in after):
                out.extend([_Tok("COMMA", ","), _Tok("NOT", t.text)])
                continue
        out.append(t)
    return out


_EXPANSION_SKIP = {"and", "or", "of", "the", "to", "in", "for", "on", "&", "a", "an"}


def _acronym_expansions(raw: list[_Tok]) -> list[_Tok]:
    """"PONV (postoperative nausea and vomiting)": an acronym and its expansion in brackets are one word (the
    "and" inside names one thing); the expansion's initials, in order, are the acronym's letters."""
    out: list[_Tok] = []
    i = 0
    while i < len(raw):
        t = raw[i]
        if t.kind == "WORD" and 2 <= len(t.text) <= 8 and t.text.isupper() and t.text.isalpha() \
                and i + 2 < len(raw) and raw[i + 1].kind == "LP":
            end = next((j for j in range(i + 2, min(len(raw), i + 14)) if raw[j].kind != "WORD"), None)
            if end is not None and raw[end].kind == "RP" and end > i + 2:
                words = [w for x in raw[i + 2:end] for w in re.split(r"[-\s]+", x.text) if w]
                initials = [w[0].lower() for w in words if w.lower() not in _EXPANSION_SKIP and w[:1].isalpha()]
                letters = iter(t.text.lower())
                if initials and initials[0] == t.text[0].lower() and len(initials) >= len(t.text) - 2 \
                        and all(c in letters for c in initials) \
                        and any(x.text.lower() in ("and", "or", "not", "&") for x in raw[i + 2:end]):
                    body = " ".join(x.text for x in raw[i + 2:end])
                    out.append(_Tok("WORD", f"{t.text} ({body})", t.spaced))
                    i = end + 1
                    continue
        out.append(t)
        i += 1
    return out


_TITLE_FUNCTION_WORDS = {"the", "a", "an", "for", "of", "in", "to", "my", "our", "with", "without", "on", "at"}


def _title_follows(toks: list[_Tok], least: int = 2) -> bool:
    """``toks`` open with ``least`` capitalised words (a function word may come first)."""
    words = [t.text for t in toks if t.kind == "WORD"]
    if len(words) < len(toks) or not words:
        return False
    if words[0] in _TITLE_FUNCTION_WORDS:
        words = words[1:]
    return len(words) >= least and all(w[:1].isupper() for w in words[:least])


def _names_plus(before: list[str]) -> bool:
    """Whether a capitalised "Plus" after these words is part of a name: after a number ("iPhone 15 Plus") or a
    capitalised word ("Disney Plus"); after a single capital only where a capitalised word precedes it ("Moto G
    Plus", "Galaxy S Plus"; "vitamin C Plus zinc" joins)."""
    last = before[-1].strip(".,") if before else ""
    if last[-1:].isdigit():
        return True
    if not last[:1].isupper():
        return False
    return len(last) > 1 or (len(before) > 1 and before[-2][:1].isupper())


def _plus_joins(toks: list[_Tok], i: int) -> bool:
    """A spaced "+" between two phrases of two words or more joins topics ("federated learning + differential
    privacy"); not keys, formulas or names ("Ctrl + Alt + Delete", "kinetic + potential energy", "CD4 + T
    cells", "2 + 2")."""
    def phrase(step: int) -> list[str]:
        words, j = [], i + step
        while 0 <= j < len(toks) and toks[j].kind == "WORD" and toks[j].text != "+":
            words.append(toks[j].text)
            j += step
        return words
    left, right = phrase(-1), phrase(1)
    return len(left) > 1 and len(right) > 1 and not any(w[-1:].isdigit() for w in (left[0], right[0]))


def _is_hedge(word: str, after: str) -> bool:
    """Whether "not" + ``word`` (+ the token ``after``) hedges: "not sure", "not certain if / whether ..."."""
    word, after = (_fold(w).strip(".,;:!?\"'") for w in (word, after))
    first = word.split()[0] if word.split() else ""
    rest = word.split()[1] if len(word.split()) > 1 else after.split()[0] if after.split() else ""
    return first == "sure" or (first == "certain" and rest in (*_HEDGE_LEADS, ""))


def _slash_alternative(word: str) -> bool:
    """A word beside a spaced slash that may make it an "or": not "and / or", "yes / no" nor a number ("1 / 2");
    two short tokens ("TCP / IP", "AC / DC") are a compound (see _lex)."""
    w = word.strip(_EDGE_PUNCT)
    return not w[:1].isdigit() and not w[-1:].isdigit() and _fold(w) not in ("and", "or", "yes", "no")


_SLASH_PART_RE = re.compile(r"[^\W\d_][\w'\u2019-]*[^\W\d_]", re.U)
_SLASH_PAIRS = {"and", "or", "either", "he", "she", "his", "her", "him", "hers", "yes", "no", "on", "off", "true",
                "false", "input", "output", "in", "out", "win", "lose", "pass", "fail", "read", "write", "open",
                "close", "start", "stop", "up", "down", "left", "right", "buy", "sell", "male", "female", "plus",
                "minus", "per", "with", "without", "via"}
# Words before an unspaced slash that leave its left side one word ("the client/server model")
_SLASH_OPENERS = {"the", "a", "an", "of", "in", "on", "for", "to", "with", "about", "and", "or", "by", "from",
                  "at", "as", "into", "my", "our", "your", "their", "his", "her", "its"}


def _slash_parts(word: str) -> list[str]:
    """The alternatives of a word such as "records/turntables" (see _split_slashes); [] for any other word."""
    parts = word.split("/")
    if len(parts) < 2 or not all(_SLASH_PART_RE.fullmatch(p) for p in parts) or any(len(p) < 3 for p in parts) \
            or all(p.isupper() for p in parts) or any(_fold(p) in _SLASH_PAIRS for p in parts):
        return []
    return parts


def _split_slashes(raw: list[_Tok]) -> list[_Tok]:
    """An unspaced slash between words is an "or" in a short request ("vinyl records/turntables", "Gaming
    laptops: ASUS/Lenovo", "heat pumps/biomass boilers for off-grid homes"), unless it joins a compound: two
    acronyms ("TCP/IP", "HIV/AIDS"), a pair that names one thing ("input/output", "his/her"), numbers or units
    ("km/h", "24/7", "mg/day"), a path or a URL (more than one slash is no list of words unless every part is
    a word), or two single words before the noun they share ("client/server architecture")."""
    out: list[_Tok] = []
    for i, t in enumerate(raw):
        parts = _slash_parts(t.text) if t.kind == "WORD" else []
        if not parts:
            out.append(t)
            continue
        prev = raw[i - 1] if i else None
        nxt = raw[i + 1] if i + 1 < len(raw) else None
        single_left = prev is None or prev.kind != "WORD" or _fold(prev.text) in _SLASH_OPENERS
        if single_left and nxt is not None and nxt.kind == "WORD":
            out.append(t)   # "mother/daughter relationships"
            continue
        for k, part in enumerate(parts):
            if k:
                out.append(_Tok("OR", "/"))
            out.append(_Tok("WORD", part, t.spaced if k == 0 else False))
    return out


def _short_token(word: str) -> bool:
    w = word.strip(_EDGE_PUNCT)
    return len(w) <= 2 or (w.isupper() and len(w) <= 3)


def _compound_slash(toks: list[_Tok], i: int) -> bool:
    """Two single words around the slash ``toks[i]`` before the noun they share ("client / server
    architecture"): one compound, no alternatives."""
    single_left = i < 2 or toks[i - 2].kind != "WORD"
    return single_left and i + 2 < len(toks) and toks[i + 2].kind == "WORD" and toks[i + 2].text[:1] not in _EDGE_PUNCT


def _dash_separates(toks: list[_Tok], i: int) -> bool:
    """Whether the spaced dash ``toks[i]`` stands between an operand and an exclusion."""
    if not 0 < i < len(toks) - 1 or toks[i - 1].kind not in ("WORD", "QTERM", "RP"):
        return False
    nxt = toks[i + 1]
    if nxt.kind == "WORD" and nxt.text.lower() == "no":   # not a title's "No" ("Radiohead - No Surprises")
        after = toks[i + 2] if i + 2 < len(toks) else None
        return not (nxt.text == "No" and after is not None and after.kind == "WORD" and after.text[:1].isupper())
    if toks[0].kind == "NEITHER" and any(t.kind == "NOR" for t in toks[:i]) \
            and not any(t.kind in ("COMMA", "SEMI", "DASH") for t in toks[:i]):
        return True   # "Neither Bosch nor Denso - want NGK plugs": the exclusion put first ends at the dash
    return nxt.kind in ("EXCL", "NOT", "ALLBUT", "NEITHER")


# --------------------------------------------------------------------------- filler


def _strip_prefix(words: list[str], patterns: list[re.Pattern]) -> list[str]:
    """Drop leading words matched (at word boundaries) by any pattern, repeatedly."""
    changed = True
    while changed and words:
        changed = False
        low = _fold(" ".join(words))   # same length: offsets hold
        for pat in patterns:
            m = pat.match(low)
            if not m or m.end() == 0:
                continue
            end = len(low[: m.end()].rstrip())
            if end < len(low) and low[end] != " ":
                continue
            # words (a merged binomial holds spaces) that the match covers
            consumed, covered = 0, -1
            for w in words:
                if covered + 1 + len(w) > end:
                    break
                covered += 1 + len(w)
                consumed += 1
            if consumed:
                words = words[consumed:]
                changed = True
                break
    return words


_REL_RE = re.compile(r"(?:about|abt|on|regarding|concerning)\b")  # "not on X", "or about Y"
_MAX_CLAUSE_ASK_WORDS = 40
# the writer's ask opening a clause after a comma ("neither A nor B, i want C", "Rather than X, I want Y")
_CLAUSE_ASK_RE = re.compile(
    r"(?:(?:(?:i|we)(?:'d|\s+would)?\s+(?:really\s+|just\s+|only\s+)?(?:want|need|like|prefer)|(?:just\s+)?(?:want|need))"
    r"(?:\s+to\s+(?:read|find|see|"
    r"learn|know|get)(?:\s+(?:more\s+)?(?:about|on))?)?|(?:i'm|i\s+am|we're|we\s+are)\s+(?:looking|searching)\s+for|"
    r"(?:i|we)\s+(?:search|look)(?:\s+for)?)\b")
# After a negation, the verb that says what the documents do with the topic is not part of it: "without
# mentioning X", "but not discussing X", "excluding any mention of X", "without reference to X"
_DISCOURSE_RE = re.compile(
    r"(?:(?:any|a|the|some)\s+)?(?:mentions?\s+of|mentioning|discussions?\s+of|discussing|involving|covering|"
    r"addressing|referencing|citing|references?\s+to|touching\s+(?:on|upon)|talking\s+about|dealing\s+with|"
    r"focusing\s+on|relating\s+to|related\s+to|having\s+to\s+do\s+with|"
    r"(?:if|when)\s+(?:it's|it\s+is|they're|they\s+are)\s+(?:about|on|for))\b")   # "but not if it's about X"
_NEGATING = {"EXCL", "NOT", "NOR", "NEITHER", "ANDNOT", "ORNOT", "ALLBUT"}
_AFTER_SEP = {"AND", "OR", "ORELSE", "COMMA", "SEMI", "BUT", "EXCL", "NOR", "ANDNOT", "ORNOT", "EITHER", "BOTH",
              "NEITHER", "ALLBUT", "NOT"}
_BRIDGE = {"EITHER", "BOTH", "NEITHER", "NOT", "LP", "ALLBUT", "SKIP"}


_DO_KEPT = {"not", "it", "this", "that", "so", "well", "more", "less", "nothing", "something", "anything", "without",
            "your", "my", "our", "his", "her", "their", "one's"}


# "How do I get wheelchair seats for Hamilton?", "Can I get a discount for paying by direct debit?": what is got
# is the topic; "get" stays where it makes the task ("get pregnant", "get rid of X", "get my deposit back")
_GET_KEPT_NEXT = {"rid", "to", "into", "out", "over", "through", "back", "started", "pregnant", "married", "divorced",
                  "involved", "better", "used", "fit", "paid", "it", "them", "him", "her", "this", "that", "there",
                  "away", "off", "on", "in", "up", "around", "round", "ahead", "along", "by", "past", "home", "one"}
_GET_KEPT_LAST = {"back", "reversed", "refunded", "fixed", "removed", "changed", "replaced", "repaired", "done",
                  "taken", "sorted", "cancelled", "canceled", "reimbursed", "approved", "signed", "updated", "off"}


def _thing_got(words: list[str], rest: list[_Tok], opener: str) -> list[str]:
    """``words`` without an opening "get" whose object is the thing asked for (see ``_GET_KEPT_NEXT``); not
    after "should" ("Should I get a flu jab?" asks whether to do it) or "what" ("what can I get my dad")."""
    if len(words) < 2 or {"should", "what", "wat"} & set(opener.split()) or words[0].lower() != "get":
        return words
    second = _fold(words[1]).strip(_EDGE_PUNCT)
    if second in _GET_KEPT_NEXT or second.endswith(("ed", "er")) or second in _GET_BECOMES:
        return words   # "get pregnant", "get taller", "get hold of X", "get the hang of X"
    clause = []
    for w in words[1:]:   # the object, up to a clause of its own ("if I quit my job", "for a cancelled flight")
        low = _fold(w).strip(_EDGE_PUNCT)
        if low in _GET_OBJECT_ENDS:
            break
        clause.append(low)
    if set(clause[1:]) & _GET_PARTICLES or clause[:2] == ["the", "hang"]:
        return words   # "get my money back", "get my dog to stop barking", "get ink out of a carpet"
    if any(w.endswith("ed") for w in clause[1:]) or len(clause) > 1 and clause[-1].endswith("en") \
            or clause and clause[-1] in _GET_KEPT_LAST:
        return words   # what is done to it: "get the charge reversed", "get my passport renewed"
    if (not rest or rest[0].kind != "WORD") and _fold(words[-1]).strip(_EDGE_PUNCT) in _GET_KEPT_LAST:
        return words
    return words[1:]


_GET_BECOMES = {"hold", "ready", "sober", "rich", "high", "laid", "life", "drunk", "lost", "sick", "ill", "well", "worse",
                "fit", "dressed", "going", "moving", "working", "organised", "organized", "even", "ahead", "together"}
_GET_PARTICLES = {"to", "back", "out", "off", "down", "up", "into", "onto", "away", "over", "through", "round",
                  "around", "across", "rid", "started", "going", "working", "fixed", "done", "hold", "together",
                  "again", "life", "word"}
_GET_OBJECT_ENDS = {"if", "when", "for", "because", "after", "before", "while", "since", "so", "as", "on", "at", "in",
                    "from", "with", "without", "by"}


def _strip_filler(toks: list[_Tok]) -> list[_Tok]:
    """Remove request filler at the start and genre filler at the start of every term."""
    out: list[_Tok] = []
    at_start = True  # nothing but group openers so far
    short = sum(len(t.text.split()) for t in toks if t.kind == "WORD") <= _MAX_CLAUSE_ASK_WORDS   # no prose
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "WORD":
            j = _word_run_end(toks, i)
            words = [w.text for w in toks[i:j]]
            # Words that are markers inside a filler ("documents that mention both")
            # were lexed as markers: filler patterns see only this run of words.
            howto = _HOWTO_RE.match(_fold(" ".join(words))) if at_start else None
            if howto and len(words) > len(howto.group(0).split()) and words[len(howto.group(0).split())][:1].islower():
                words = words[len(howto.group(0).split()):]   # the task, as the user typed it
                if len(words) > 1 and words[0] == "do" and words[1].lower() not in _DO_KEPT:
                    words = words[1:]   # "how to do eczema wet wraps": the thing done (not "how to do it")
                words = _thing_got(words, toks[j:], howto.group(0))
            elif at_start and not (len(words) > 1 and _fold(words[0]) in ("hi", "hello", "hey", "yo")
                                   and words[1][:1].isupper() and words[1] not in ("I", "I'm", "I'd", "I've")):
                # (not "Hello Kitty", "Hey Jude": titles)
                asked = _question_opener(words)
                # ("what counts as evidence in court": what follows the question's opening is the topic whole)
                stripped = asked if _fold(" ".join(words[:3])) == "what counts as" and asked != words \
                    else _strip_prefix(asked, _INTRO_RE + [_GENRE_RE, _OPENING_GENRE_RE])
                own = _OWN_TASK_RE.match(_fold(" ".join(words))) if stripped == words else None
                if own and len(words) > len(own.group(0).split()) and words[len(own.group(0).split())][:1].islower():
                    stripped = _thing_got(words[len(own.group(0).split()):], toks[j:], own.group(0))
                words = stripped
                if [_fold(w) for w in words] == ["need"] and j < len(toks) and toks[j].kind in ("EITHER", "BOTH"):
                    words = []   # "omg need either X or Y"
            elif out and out[-1].kind in _AFTER_SEP:  # "texts about x or about y"
                if out[-1].kind in ("COMMA", "SEMI") and len(words) > 2 and words[1][:1].islower() and short:
                    words = _strip_prefix(words, [_CLAUSE_ASK_RE])   # "not X, I want Y" ("I Want You Back" is
                words = _strip_prefix(words, [_GENRE_RE, _REL_RE]
                                      + ([_DISCOURSE_RE] if out[-1].kind in _NEGATING else []))   # a title)
            else:
                words = _strip_prefix(words, [_GENRE_RE])
            owner = _document_owner(words)
            if owner:   # "Procter and Gamble patents on absorbent cores": the owner AND the topic
                first = _owner_alternatives(out)   # "Samsung or LG patents on X": either owner, the same topic
                if first is not None:
                    out.insert(first, _Tok("LP", "("))
                out.extend([_Tok("WORD", " ".join(words[:owner]))] + ([_Tok("RP", ")")] if first is not None else [])
                           + [_Tok("AND", "and")])
                words = words[owner + 2:]
            if len(words) == 1 and _fold(words[0]).rstrip(",.!") in ("no", "nope", "noo", "nooo") \
                    and (at_start or (out and out[-1].kind == "SEMI")) \
                    and [t.kind for t in toks[j:j + 2]] in (["NOT"], ["NOT", "WORD"], ["COMMA", "NOT"]):
                words = []   # a correction: "no, not the Delaware one. NY ..."
            # "that mention" etc. left dangling before a group opener
            while words and words[-1].lower() in ("that", "which", "who", "mention", "mentions", "mentioning"):
                if j < len(toks) and toks[j].kind in _BRIDGE:
                    words = words[:-1]
                else:
                    break
            if words:
                out.append(_Tok("WORD", " ".join(words)))
                at_start = False
            i = j
            continue
        if t.kind not in _BRIDGE:
            at_start = False
        out.append(t)
        i += 1
    return out


def _owner_alternatives(out: list[_Tok]) -> int | None:
    """Where the names before a document owner's "or" begin ("Samsung or LG patents on X", "Sony, Canon or Nikon
    reports about Y"): the index of the first name in ``out``, or None when no name and "or" come just before."""
    i, ors = len(out), 0
    while i >= 2 and out[i - 1].kind in ("OR", "COMMA") and out[i - 2].kind == "WORD":
        words = out[i - 2].text.split()
        if not (len(words) <= 3 and all(w[:1].isupper() and _fold(w) not in _TITLE_SMALL for w in words)) \
                or re.search(r"['\u2019]s?$", words[-1]):   # ("Alzheimer's or NIH studies on X": a topic's name)
            break
        ors += out[i - 1].kind == "OR"
        i -= 2
    return i if ors and out[len(out) - 1].kind == "OR" else None


_OWNED_DOCUMENTS = {"patents", "patent", "reports", "papers", "studies", "publications", "research"}   # (not "Supreme
# Court rulings on X", "court filings": a kind of document that its name's words qualify)
_OWNED_RELATIONS = {"on", "about", "regarding", "concerning"}


def _document_owner(words: list[str]) -> int:
    """The number of words of a name that owns the documents named after it ("Procter and Gamble patents on absorbent
    cores", "NASA reports about dust storms", "Siemens patents on X"), or 0: a name of up to three capitalised
    words opening the words (one word that is no qualifier, or an acronym or a brand's inner capital: "Official
    reports on X", "Early studies on X" are qualified documents), a kind of document, a relation, the topic after
    it."""
    for k in range(1, min(4, len(words) - 2)):
        kind, relation = _fold(words[k]), _fold(words[k + 1])
        if kind in _OWNED_DOCUMENTS and relation in _OWNED_RELATIONS:
            name = words[:k]
            if all(w[:1].isupper() and _fold(w) not in _TITLE_SMALL and w not in ("I", "I'm") for w in name) \
                    and (len(name) > 1 or " " in name[0] or _acronym_or_brand(name[0]) or not _qualifier(name[0])):
                return k
            return 0
    return 0


_QUALIFIERS = set("""official independent initial early earlier older old new newer recent latest preliminary historical
annual many several few some other more most first further additional government national international internal
external published unpublished original relevant related academic scientific clinical medical technical legal public
private expert primary secondary major minor key seminal landmark classic famous important late past current future
detailed quarterly monthly weekly daily human animal mouse field lab laboratory pilot large small conflicting
observational ongoing local global regional federal state european american british chinese""".split())


def _qualifier(word: str) -> bool:
    """A capitalised word opening "<Word> reports on X" that qualifies the documents ("Official", "Early",
    "Observational", "Chinese"), not a name that owns them ("Siemens", "Pfizer", "Ofsted")."""
    low = word.lower()
    return low in _QUALIFIERS or _adjective_like(low) or low.endswith(("ing", "ed"))


def _acronym_or_brand(word: str) -> bool:
    """"NASA", "IBM", "McKinsey", "iRobot": a capital that no sentence's first word has ("Official", "Early" and
    any capitalised qualifier opening a request look like a one-word name)."""
    letters = [c for c in word if c.isalpha()]
    return len(letters) >= 2 and (all(c.isupper() for c in letters) or any(c.isupper() for c in letters[1:]))


def _term_text(text: str) -> str:
    text = " ".join(text.split())
    initials = _INITIALS_RE.fullmatch(text.rstrip(_EDGE_PUNCT.replace(".", "")).rsplit(" ", 1)[-1])
    raw = text
    text = text.strip(_EDGE_PUNCT)
    if initials and not text.endswith("."):
        text += "."
    for q in ("'", "\u2019"):   # "etymology of 'OK'", "'OK' etymology": a quote whose partner is inside stays
        if not text:
            break
        opened = len(re.findall(rf"(?:^|\s){q}(?=\S)", text))   # quotes that open a word
        closed = len(re.findall(rf"(?<=\S){q}(?:\s|$)", text))  # quotes that end one
        if raw.rstrip(" .,;:!?").endswith(q) and opened > closed:
            text += q
        elif raw.lstrip(" .,;:!?").startswith(q) and closed > opened:
            text = q + text
    low = text.lower()
    if low in _TRAILING_FILLER:
        return ""
    stripped = True
    while stripped:   # "what do i do pls help": one filler after another, in any order
        stripped = False
        for tail in _FILLERS_LONGEST_FIRST:
            if low.endswith(" " + tail) and _NAMING_RE.search(low[: -len(tail) - 1]):
                break   # a title: "songs called many thanks" keeps its name whole
            if low.endswith(" " + tail):
                text = text[: -len(tail) - 1].rstrip(_EDGE_PUNCT)
                low, stripped = text.lower(), True
    return text


# --------------------------------------------------------------------------- normalising


_SEPS = {"AND", "OR", "COMMA", "CAND", "COR", "NOR", "SAND", "SOR"}
_LINKING_PARTICIPLES = {"made", "caused", "related", "dealing", "treated", "based", "written", "produced", "driven",
                        "funded", "led", "built", "used", "focused", "focusing"}
_GROUP_PREPOSITIONS = {"in", "on", "at", "for", "from", "with", "by", "about", "to", "into", "of", "during", "among"}
_STRONG = {"SAND", "SOR"}
_ITEM_END = {"TERM", "RP"}
_ITEM_START = {"TERM", "LP", "NOT", "EITHER", "BOTH", "NEITHER", "ALLBUT"}
_OPENERS = {"EXCL", "LP", "NOT", "EITHER", "BOTH", "NEITHER", "ALLBUT"}

# A generic subject that only carries an exclusion: "anything not about X",
# "documents that do not mention X", "everything else except X" -> NOT X.
_GENERIC_RE = re.compile(
    r"(?:(?:any|all|other|the|some|those|these)\s+)?"
    r"(?:anything|everything|something|documents?|docs?|texts?|articles?|papers?|ones|stuff|material|"
    r"content|results?|items?|pages?|posts?|sources?|studies|reports?|things|records|entries|passages?|"
    r"stories|news|publications|literature|information|info|websites?|sites?)(?:\s+else)?"
)
# "X and Y together": the adverb only marks the conjunction.
_AND_TAIL_RE = re.compile(r"\s+(?:together|combined|jointly|at\s+once|at\s+the\s+same\s+time|alike|as\s+well|too)$",
                          re.IGNORECASE)


def _normalise(toks: list[_Tok]) -> list[_Tok]:
    """Merge words into terms and resolve context-dependent markers."""
    # 1. adjacent WORD / QTERM runs -> TERM
    merged: list[_Tok] = []
    punct = ""   # a sentence's comma, joined only when words of the term follow it ("X, what do i do": none)
    for t in toks:
        if t.kind in ("WORD", "QTERM"):
            text = _term_text(t.text) if t.kind == "WORD" else " ".join(t.text.split())
            if not text:
                continue
            if merged and merged[-1].kind == "TERM":
                merged[-1].text += punct + (" " if t.spaced else "") + text
            else:
                merged.append(_Tok("TERM", text))
            punct = ""
        elif t.kind == "SKIP":
            continue
        elif t.kind == "PUNCT":  # a comma inside a sentence
            if merged and merged[-1].kind == "TERM":
                punct += t.text
        else:
            punct = ""
            if t.kind in ("COMMA", "SEMI") and merged and merged[-1].kind in ("COMMA", "SEMI"):
                if t.kind == "SEMI":   # two separators left by dropped filler ("Rome, please, no Vatican"): one
                    merged[-1] = _Tok("SEMI", t.text)
            else:
                merged.append(_Tok(t.kind, t.text))
    # 1a. a preposition before a group opener belongs to no term ("sea ice algae in either the Barents Sea or
    #     Fram Strait", "keepers, in either Britain or the US"): the group is the operand it introduces
    for i in range(len(merged) - 2, -1, -1):
        if merged[i].kind == "TERM" and merged[i + 1].kind in ("EITHER", "BOTH", "NEITHER"):
            words = merged[i].text.split()
            # "electrodes made from either A or B", "erosion caused by either A or B", "books dealing with either"
            if len(words) > 2 and words[-2].lower() in _LINKING_PARTICIPLES and words[-1].lower() in _GROUP_PREPOSITIONS:
                words = words[:-1]
            if len(words) > 1 and words[-1].lower() in _LINKING_PARTICIPLES | {"using", "via", "through"}:
                merged[i].text = " ".join(words[:-1])
            elif words and words[-1].lower() in _GROUP_PREPOSITIONS:
                if len(words) > 1:
                    merged[i].text = " ".join(words[:-1])
                else:
                    del merged[i]
    # 1b. "but not both" ends the text; elsewhere it is an exclusion of a "both" group
    for i in range(len(merged) - 2, -1, -1):
        if merged[i].kind == "NOTBOTH":
            words = merged[i].text.split()
            merged[i:i + 1] = [_Tok("EXCL", " ".join(words[:-1])), _Tok("BOTH", words[-1])]
    # 2. context: NOT after an item is an exclusion; ", and" / ", or" / ", but" / ", not";
    #    "; or" and "or else" are strong disjunctions
    out: list[_Tok] = []
    for t in merged:
        prev = out[-1].kind if out else None
        k = t.kind
        if k in ("ANDNOT", "ORNOT"):
            base = "AND" if k == "ANDNOT" else "OR"
            if prev in ("COMMA", "SEMI"):
                out.pop()
                base = ("C" if prev == "COMMA" or base == "AND" else "S") + base
            out.extend([_Tok(base), _Tok("NOT")])
            continue
        if k == "ORELSE":
            while out and out[-1].kind in ("COMMA", "SEMI", "OR", "COR", "SOR"):
                out.pop()
            out.append(_Tok("SOR", t.text))
            continue
        if k == "NOT" and prev in _ITEM_END:
            k = "EXCL"
        if prev in ("COMMA", "SEMI"):
            if k in ("EXCL", "NOT") or (k == "ALLBUT" and len(out) > 1 and out[-2].kind in _ITEM_END):
                out.pop()   # "cats or dogs, nothing on fleas": the clause's exclusion, as ", but nothing on"
                k = "EXCL"
            elif k == "BUT":
                out.pop()
            elif k in ("AND", "OR"):
                out.pop()
                k = ("S" if prev == "SEMI" and k == "OR" else "C") + k
        if k == "EXCL" and prev in ("AND", "OR", "BUT"):
            out.pop()
        if k == "NOTBOTH" and prev in ("COMMA", "SEMI"):
            out.pop()
        if k == "ALLBUT" and out and out[-1].kind in _ITEM_END | {"BUT"}:
            if out[-1].kind == "BUT":
                out.pop()
            k = "EXCL"
        # "anything not about X": a generic subject before an exclusion is no term
        if k == "EXCL" and prev == "TERM" and _GENERIC_RE.fullmatch(out[-1].text.lower()):
            before = out[-2].kind if len(out) > 1 else None
            if before is None or before in _SEPS | {"SEMI", "BUT", "EITHER", "LP"}:
                out.pop()
                k = "ALLBUT"
        if k == "SEMI":
            k = "COMMA"
        out.append(_Tok(k, t.text))
    # 3. drop separators that join nothing (start, end, doubled, before ')')
    clean: list[_Tok] = []
    for t in out:
        if t.kind in _SEPS or t.kind == "BUT":
            if not clean or clean[-1].kind in _SEPS | {"BUT", "EXCL", "LP", "NOT", "EITHER", "BOTH",
                                                       "NEITHER", "ALLBUT"}:
                continue
        if t.kind == "RP" and clean and clean[-1].kind in _SEPS | {"BUT"}:
            clean.pop()
        clean.append(t)
    while clean and clean[-1].kind in _SEPS | {"BUT", "EXCL", "NOT", "EITHER", "BOTH", "NEITHER", "LP",
                                               "ALLBUT"}:
        if clean[-1].kind in ("EXCL", "NOT", "NEITHER", "ALLBUT"):   # "cats but not": what to exclude is lost
            raise RuleError(f"nothing after {clean[-1].text or clean[-1].kind.lower()!r} at the end of the text")
        clean.pop()
    # 4. balance parentheses: drop stray ')' and unclosed '(' (one pass: a text of many "(" stays linear)
    open_at: list[int] = []
    kept: list[_Tok] = []
    for t in clean:
        if t.kind == "LP":
            open_at.append(len(kept))
        elif t.kind == "RP":
            if not open_at:
                continue
            open_at.pop()
        kept.append(t)
    unclosed = set(open_at)
    balanced = [t for i, t in enumerate(kept) if i not in unclosed]
    # 5. empty parentheses
    result: list[_Tok] = []
    for t in balanced:
        if t.kind == "RP" and result and result[-1].kind == "LP":
            result.pop()
            continue
        result.append(t)
    # 6. "neither iron and steel nor x": an "and" between "neither" and "nor" is inside a term
    i = 0
    while i < len(result):
        if result[i].kind == "NEITHER":
            j = i + 1
            while j + 1 < len(result) and result[j].kind == "TERM" and result[j + 1].kind == "AND":
                j += 2
            if j > i + 1 and j + 1 < len(result) and result[j].kind == "TERM" and result[j + 1].kind == "NOR":
                text = " ".join(t.text or "and" for t in result[i + 1:j + 1])
                result[i + 1:j + 1] = [_Tok("TERM", text)]
        i += 1
    # 6b. "X and Y together": drop the adverb from the last item of a conjunction
    for i, t in enumerate(result):
        if t.kind == "TERM" and i and result[i - 1].kind in ("AND", "CAND", "SAND"):
            stripped = _AND_TAIL_RE.sub("", t.text)
            if stripped.strip(_EDGE_PUNCT):
                t.text = stripped
    # 7. comma-conjunctions: ", or" / ", and" that close a comma list ("a, b, or c")
    #    stay list separators; any other one ("a but not b, or c") joins whole clauses
    for i, t in enumerate(result):
        if t.kind in ("CAND", "COR") and _prev_separator(result, i) != "COMMA":
            t.kind = "S" + t.kind[1:]
    return result


def _prev_separator(toks: list[_Tok], i: int) -> str | None:
    """Kind of the separator before the item that ends at ``i - 1`` (same depth)."""
    depth = 0
    for j in range(i - 1, -1, -1):
        k = toks[j].kind
        if k == "RP":
            depth += 1
        elif k == "LP":
            if depth == 0:
                return None
            depth -= 1
        elif depth == 0 and (k in _SEPS or k in ("EXCL", "BUT")):
            return k
    return None


# --------------------------------------------------------------------------- parsing


class _Parser:
    """Recursive descent over the normalised tokens.

    Levels, loosest first: clauses joined by strong separators (``; or``, ``or
    else``, a comma-conjunction that does not close a comma list); a clause is a
    segment with exclusion clauses (``but not``...) scoping over it; a segment is
    items joined by and / or / commas (AND before OR); an item is a term, ``not``
    item, a parenthesised query or an either / both / neither / anything-but group.
    """

    def __init__(self, toks: list[_Tok], listed: bool = False):
        self.toks = toks
        self.i = 0
        self.listed = listed   # the request opens by asking for documents on a list ("anything on A, B or C")

    @property
    def kind(self) -> str:
        return self.toks[self.i].kind if self.i < len(self.toks) else "END"

    def peek(self, k: int = 1) -> str:
        j = self.i + k
        return self.toks[j].kind if j < len(self.toks) else "END"

    def later(self, kinds: set[str], stop: set[str]) -> bool:
        """Whether a token of ``kinds`` comes before one of ``stop`` at this depth."""
        depth = 0
        for t in self.toks[self.i + 1:]:
            if t.kind == "LP":
                depth += 1
            elif t.kind == "RP":
                if depth == 0:
                    return False
                depth -= 1
            elif depth == 0:
                if t.kind in kinds:
                    return True
                if t.kind in stop:
                    return False
        return False

    def parse(self) -> Node:
        node = self.top(0)
        if self.kind == "NOTBOTH":   # "A or B but not both": one of the two, not both
            self.i += 1
            pairs = [c for c in node.children if isinstance(c, Or) and len(c.children) == 2] \
                if isinstance(node, And) else []
            if len(pairs) == 1:   # "films starring either A or B but not both": the head stays wanted
                a, b = pairs[0].children
                node = make_and([*node.children, Not(make_and([a, b]))])
            elif not isinstance(node, (And, Or)) or len(node.children) != 2:
                raise RuleError(f"{self.toks[self.i - 1].text!r} needs two alternatives, as in 'A or B but not both'")
            else:
                a, b = node.children
                node = make_and([make_or([a, b]), Not(make_and([a, b]))])
        if self.kind == "NOR":   # "cats nor dogs": a "nor" the grammar of the text did not pair
            raise RuleError(f"{self.toks[self.i].text!r} with no 'neither' to pair with (write 'neither X nor Y')")
        if self.kind != "END":
            raise RuleError(f"could not read the text from {self.toks[self.i].text or self.kind!r}")
        return node

    def check(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise RuleError(f"nested too deeply (at most {MAX_DEPTH} levels)")

    def top(self, depth: int) -> Node:
        """clause ((SOR | SAND) clause)*, AND before OR."""
        self.check(depth)
        nodes = [self.clause(depth)]
        ops: list[str] = []
        while self.kind in _STRONG and self.peek() in _ITEM_START | {"EXCL"}:
            ops.append(self.kind[1:])
            self.i += 1
            nodes.append(self.clause(depth))
        return _precedence(nodes, ops)

    def clause(self, depth: int) -> Node:
        """segment (EXCL exclusions | BUT segment)*."""
        self.check(depth)
        node: Node | None = None
        if self.kind != "EXCL":
            node = self.segment(depth)
        else:
            node = self.fronted_exclusion(depth)
        after_excl = False
        while True:
            k = self.kind
            if k == "EXCL":
                tok = self.toks[self.i]
                self.i += 1
                if self.kind not in _ITEM_START:
                    raise RuleError(f"nothing after {tok.text!r}")
                items = self.exclusions(depth, single=tok.text.lower() in ("not", "no", "-"))
                node = make_and(([node] if node is not None else []) + [Not(x) for x in items])
                after_excl = True
            elif k == "BUT" and self.peek() in _ITEM_START:
                self.i += 1
                right = self.segment(depth)
                node = right if node is None else make_and([node, right])
                after_excl = False
            elif after_excl and k in ("AND", "COMMA", "CAND") and self.peek() in _ITEM_START:
                # "a, not b, and c": the list goes on after a one-item exclusion
                self.i += 1
                right = self.segment(depth)
                node = make_and([node, right])
                after_excl = False
            else:
                break
        if node is None:
            raise RuleError("nothing to search for")
        return node

    def fronted_exclusion(self, depth: int) -> Node | None:
        """"Rather than X, Y" / "Apart from A and B, C": an exclusion that opens the clause ends at its last
        comma, and what follows is what to search for.  Not when the rest of the clause is one serial list
        ("excluding A, B and C", "except A, B, C"): that is the exclusion's own list.  None (nothing
        consumed) when it does not apply: the exclusion then runs on, as anywhere else."""
        end, level, seps = None, 0, []
        for j in range(self.i + 1, len(self.toks)):
            k = self.toks[j].kind
            if k == "LP":
                level += 1
            elif k == "RP":
                if level == 0:
                    break
                level -= 1
            elif level == 0 and k in _STRONG | {"EXCL", "BUT", "NOTBOTH"}:
                break
            elif level == 0 and k in _SEPS:
                seps.append(k)
                if k == "COMMA" and j + 1 < len(self.toks) and self.toks[j + 1].kind in _ITEM_START:
                    end = j
        serial = len(seps) > 1 and all(k == "COMMA" for k in seps[:-1]) \
            and seps[-1] in ("COMMA", "AND", "OR", "NOR", "CAND", "COR")
        if end is None or end == self.i + 1 or serial:
            return None
        sub = _Parser(self.toks[self.i + 1:end])
        if sub.kind not in _ITEM_START:
            return None
        items = sub.exclusions(depth)
        if sub.kind != "END":
            return None
        self.i = end + 1
        return make_and([*(Not(x) for x in items), self.segment(depth)])

    def exclusions(self, depth: int, single: bool = False) -> list[Node]:
        """The list negated by an exclusion: items joined by and / or / nor / commas.

        ``single`` (a bare ``not`` after an item, ``"a, not b and c"``): and / commas
        continue the list only before another ``not``.  An explicit ``not`` on an
        item of the list is redundant (``but not b and not c``).
        """
        items = [self.excl_item(depth)]
        while self.kind in _SEPS - _STRONG and self.peek() in _ITEM_START:
            if single and self.kind in ("AND", "COMMA", "CAND") and self.peek() != "NOT":
                break
            self.i += 1
            items.append(self.excl_item(depth))
        return items

    def excl_item(self, depth: int) -> Node:
        if self.kind == "NOT" and self.peek() in _ITEM_START - {"NOT"}:
            self.i += 1
        return self.unary(depth)

    def segment(self, depth: int) -> Node:
        """operand (sep operand)* with comma resolution and precedence."""
        operands = [self.unary(depth)]
        seps: list[str] = []
        while True:
            k = self.kind
            if k in ("AND", "OR", "COMMA", "CAND", "COR") and self.peek() in _ITEM_START:
                seps.append(k)
                self.i += 1
                operands.append(self.unary(depth))
            elif k in _ITEM_START and k not in ("NOT", "ALLBUT"):  # juxtaposed items: implicit AND
                seps.append("AND")
                operands.append(self.unary(depth))
            else:
                break
        if not seps:
            return operands[0]
        # high-level splits at comma-conjunctions that do not close a comma list
        parts: list[tuple[list[Node], list[str]]] = [([operands[0]], [])]
        high_ops: list[str] = []
        run: list[str] = []
        for sep, operand in zip(seps, operands[1:]):
            if sep in ("CAND", "COR"):
                if run and all(s == "COMMA" for s in run):
                    parts[-1][1].append(sep[1:])
                    parts[-1][0].append(operand)
                    run.append(sep[1:])
                    continue
                high_ops.append(sep[1:])
                parts.append(([operand], []))
                run = []
                continue
            parts[-1][1].append(sep)
            parts[-1][0].append(operand)
            run.append(sep)
        nodes = [_shared_after_or(part_operands, part_seps)
                 or _topic_then_names(part_operands, part_seps, self.listed)
                 or _or_between_commas(part_operands, part_seps, self.listed)
                 or _precedence(part_operands, _resolve_commas(part_seps))
                 for part_operands, part_seps in parts]
        return _precedence(nodes, high_ops)

    def unary(self, depth: int) -> Node:
        self.check(depth)
        k = self.kind
        if k == "NOT":
            self.i += 1
            if self.kind not in _ITEM_START:
                raise RuleError("'not' without anything to negate")
            return Not(self.unary(depth + 1))
        if k == "TERM":
            text = self.toks[self.i].text
            self.i += 1
            return Term(text)
        if k == "LP":
            self.i += 1
            node = self.top(depth + 1)
            if self.kind == "RP":
                self.i += 1
            return node
        if k == "ALLBUT":  # "anything except a or b" -> NOT a AND NOT b
            self.i += 1
            if self.kind not in _ITEM_START:
                raise RuleError("nothing to exclude")
            return make_and([Not(x) for x in self.exclusions(depth + 1)])
        if k == "EITHER":
            self.i += 1
            start = self.i
            items = [self.unary(depth + 1)]
            if self.kind == "SOR" or (self.kind not in ("OR", "COR", "COMMA", "END", "RP")
                                      and self.later({"SOR"}, set())):
                # "either a but not b, or c": alternatives are whole clauses
                self.i = start
                items = [self.clause(depth + 1)]
                while self.kind == "SOR" and self.peek() in _ITEM_START | {"EXCL"}:
                    self.i += 1
                    items.append(self.clause(depth + 1))
                return make_or(items)
            while (self.kind in ("OR", "COR") or (self.kind == "COMMA" and self.later({"OR", "COR"}, {"AND", "CAND", "EXCL", "BUT"}))) \
                    and self.peek() in _ITEM_START:
                self.i += 1
                items.append(self.unary(depth + 1))
            return make_or(items)
        if k == "BOTH":
            self.i += 1
            items = [self.unary(depth + 1)]
            while (self.kind in ("AND", "CAND") or (self.kind == "COMMA" and self.later({"AND", "CAND"}, {"OR", "COR", "EXCL", "BUT"}))) \
                    and self.peek() in _ITEM_START:
                self.i += 1
                items.append(self.unary(depth + 1))
            return make_and(items)
        if k == "NEITHER":
            self.i += 1
            items = [self.excl_item(depth + 1)]
            while (self.kind in ("NOR", "OR") or (self.kind == "COMMA" and self.later({"NOR"}, {"AND", "CAND", "EXCL", "BUT"}))) \
                    and self.peek() in _ITEM_START:
                self.i += 1
                items.append(self.excl_item(depth + 1))
            return make_and([Not(x) for x in items])
        raise RuleError(f"expected a term, found {self.toks[self.i].text or k!r}" if k != "END"
                        else "expected a term at the end of the text")


def _shared_after_or(operands: list[Node], seps: list[str]) -> Node | None:
    """Commas after the alternatives add what they share: "webpack 5 or vite, typescript monorepo setup",
    "Oatly or Silk oat milk, unsweetened", "retablos or exvotos, Mexican, painted on tin" (a list of
    alternatives has its commas first: "A, B or C")."""
    alternatives = 1 + next((k for k, s in enumerate(seps) if s != "OR"), len(seps))   # operands joined by "or"
    shared = operands[alternatives:]
    if 2 <= alternatives < len(operands) and all(s == "COMMA" for s in seps[alternatives - 1:]) \
            and all(isinstance(o, Term) and len(o.text.split()) <= _MAX_SHARED_AFTER_OR for o in shared) \
            and all(isinstance(o, Term) and len(o.text.split()) <= _MAX_OR_BEFORE_SHARED
                    for o in operands[:alternatives]) \
            and not (isinstance(operands[alternatives - 1], Term)
                     and operands[alternatives - 1].text.split()[0].lower() in _BOUND_FOLLOWERS
                     and not (_parallel_articles(operands[:alternatives])
                              and not (_parallel_articles(shared)   # ("a nurse or a doctor, a paramedic": three;
                                       and not all(o.text.split()[-1].lower() in ("one", "ones") for o in shared)))):
        # "a laptop or a tablet, a refurbished one" qualifies both)
        return make_and([make_or(operands[:alternatives]), *shared])   # (not "A or In mice, B": a claim's opening)
    return None


def _parallel_articles(alternatives: list[Node]) -> bool:
    """Every alternative opens with "a" or "an" ("a telescope or a planetarium projector, under £50")."""
    return all(isinstance(o, Term) and o.text.split()[0].lower() in ("a", "an") for o in alternatives) \
        and bool(alternatives)


def _topic_then_names(operands: list[Node], seps: list[str], listed: bool = False) -> Node | None:
    """A lower-case topic, then two names as alternatives: "signed modern firsts, Seamus Heaney or Ted Hughes",
    "metrical books from Przemyśl, Greek-Catholic or Roman-Catholic" (the topic in either); or two single words
    after a longer topic (below). Else a list of three topics keeps its shape ("vitamin d benefits, gene
    expression or insulin resistance")."""
    if seps != ["COMMA", "OR"] or not all(isinstance(o, Term) for o in operands):
        return None
    topic, *alts = [o.text.split() for o in operands]
    if not listed and _longer_topic(topic, alts):
        return make_and([operands[0], make_or(operands[1:])])
    if len(topic) < 2 or not topic[0][:1].islower() or not topic[0][:1].isalpha() or _name_like(topic[-1]):
        return None   # (a topic ending in a name is the list's first item: "medieval castles in Wales, Scotland or Ireland")
    if all(1 <= len(a) <= _MAX_SHARED_ALT and all(w[:1].isupper() and not w.isupper() or len(w) > 1 and w.isupper()
                                                   or k > 0 and w.isdigit() for k, w in enumerate(a)) for a in alts):
        return make_and([operands[0], make_or(operands[1:])])
    # ... or two single words after a topic of three words or more: its kinds ("mrsa decolonization before hip
    # replacement, mupirocin or chlorhexidine", "local plan housing allocations, greenfield or brownfield"; not
    # "Byzantine art, mosaics or icons", three topics; nor "methane emissions from rice, cattle or landfills",
    # whose list starts after the link)
    if len(topic) >= 3 and all(len(a) == 1 and not _name_like(a[0]) for a in alts) \
            and _fold(topic[-2]) not in _COMPARED_GROUND_LINKS | {"of", "with", "by", "to", "about"}:
        return make_and([operands[0], make_or(operands[1:])])
    # ... or qualifiers that name no topic alone: "rain pants, men's or unisex", "report bullying, online or by
    # phone" (a possessive, an adjective, a manner or a short phrase after a preposition)
    if all(_qualifier_alternative(a) for a in alts) \
            and not {a[0].lower() for a in alts if len(a) > 1} & {w.lower() for w in topic}:   # ("research by
        # harvard, by mit or by stanford": the topic's own link, a list of three)
        return make_and([operands[0], make_or(operands[1:])])
    return None


# a request that opens by asking for documents on what follows ("anything on A, B or C", "documents about A, B or
# C"): a list of topics follows, whatever their lengths
_LIST_ASK_RE = re.compile(r"\s*(?:(?:find|show|get|give)\s+(?:me\s+|us\s+)?)?(?:(?:any|all|some)\s+)?(?:documents?|texts?|"
                          r"articles?|papers?|anything|something|stuff|material|sources|reports?|info|information|"
                          r"research|books?|studies|literature|resources)\s+(?:about|on|discussing|"
                          r"regarding|concerning|covering|mentioning)\s|\s*(?:all|any|either|each)\s+of\s", re.I)


def _longer_topic(topic: list[str], alts: list[list[str]]) -> bool:
    """A topic of three words or more, then single words as alternatives, is their topic, not the first of a list,
    whatever its case and theirs: "TV 55 inch, OLED or QLED", "R&D tax credits, UK or Canada", "Carabus type
    specimens, Japan or Korea" (below, a lower-case topic with lower-case kinds had been read so already). Not
    names only ("The Beatles, Stones or Kinks"), a topic of more than eight words (claims' sentences), nor a topic
    whose list starts after its link ("methane emissions from rice, cattle or landfills") or that ends in a name
    ("castles in Wales, Scotland or Ireland"); a list of multi-word topics keeps its shape, as the composed
    requests need ("vitamin d benefits, sleep quality or insulin resistance")."""
    if not 3 <= len(topic) <= _MAX_OR_BEFORE_SHARED or any(len(a) != 1 for a in alts) or _name_like(topic[-1]) \
            or _fold(topic[-2]) in _COMPARED_GROUND_LINKS | {"of", "with", "by", "to", "about", "like", "and", "or"}:
        return False
    return not all(_name_like(w) for w in topic)


_MANNERS = {"online", "offline", "remotely", "anonymously", "in-person", "printed", "digital", "paper", "electronic",
            "unisex", "mens", "womens"}


def _qualifier_alternative(words: list[str]) -> bool:
    if len(words) == 1:
        w = words[0].lower()
        return w.isascii() and (re.fullmatch(r"[a-z]+(?:'s|s')", w) is not None or _adjective_like(w) or w in _MANNERS)
    return 2 <= len(words) <= 3 and words[0].lower() in {"by", "in", "at", "on", "via", "over", "under"} \
        and all(w.islower() and w.isalpha() for w in words)


def _or_between_commas(operands: list[Node], seps: list[str], listed: bool = False) -> Node | None:
    """Alternatives in the middle of comma-separated fields: "hiking boots with ankle support, Merrell or Salomon,
    waterproof" is the boots AND either brand AND waterproof; the comma after the alternatives ends them (a bare
    comma there took the "or" before it: four alternatives).  What comes before them is read as
    :func:`_topic_then_names` reads it (a topic, or the head of a list "A, B or C, D")."""
    if seps.count("OR") != 1 or any(s not in ("OR", "COMMA") for s in seps):
        return None
    k = seps.index("OR")
    if k == 0 or k == len(seps) - 1 or not all(isinstance(o, Term) for o in operands) \
            or any(len(o.text.split()) > _MAX_OR_BEFORE_SHARED for o in operands[:k + 2]):   # claims' sentences
        return None
    head = _topic_then_names(operands[:k + 2], seps[:k + 1], listed) or make_or(operands[:k + 2])
    after = operands[k + 2:]
    if not all(len(o.text.split()) <= _MAX_SHARED_AFTER_OR for o in after):
        return None
    return make_and([head, *after])


_MAX_SHARED_AFTER_OR = 5   # words
_MAX_OR_BEFORE_SHARED = 8   # words of each alternative (claims' sentences are no list)


def _resolve_commas(seps: list[str]) -> list[str]:
    """A bare comma takes the kind of the next conjunction (else the previous, else AND)."""
    out = list(seps)
    nxt = None
    for i in range(len(out) - 1, -1, -1):
        if out[i] == "COMMA":
            if nxt is not None:
                out[i] = nxt
        else:
            nxt = out[i]
    prev = "AND"
    for i, s in enumerate(out):
        if s == "COMMA":
            out[i] = prev
        else:
            prev = s
    return ["AND" if s == "NOR" else s for s in out]


def _precedence(operands: list[Node], ops: list[str]) -> Node:
    """Combine with AND binding tighter than OR."""
    groups: list[list[Node]] = [[operands[0]]]
    for op, operand in zip(ops, operands[1:]):
        if op == "OR":
            groups.append([operand])
        else:
            groups[-1].append(operand)
    return make_or([make_and(g) for g in groups])


# --------------------------------------------------------------------------- API


def _has_aux(toks: list[_Tok]) -> bool:
    """Whether the words left after the filler hold an auxiliary or modal verb
    (``is``, ``should``, ``does``...): the query is (or holds) a sentence."""
    for n, t in enumerate(toks):
        if t.kind != "WORD":
            continue
        words = [w.strip(".,;:!?\"'") for w in t.text.split()]
        for i, w in enumerate(words):
            low = _fold(w)
            if i and words[i - 1].lower() == "to" and low in _AUX_WEAK | {"be"}:
                continue   # an infinitive ("things to do in Lisbon", "how to be happy") is no auxiliary
            if low in _AUX_STRONG:
                return True
            if low in _AUX_WEAK and (
                (n == 0 and i == 0 and len(words) > 2)
                or (w == low and 0 < i < len(words) - 1)
                or (i + 1 < len(words) and words[i + 1].lower() == "not")
            ):
                return True
    return False


_ASKED = {"you", "we", "i", "they", "anyone", "anybody", "someone", "somebody", "u"}


_MAX_UNMARKED_QUESTION = 12   # words of a yes/no question typed without its "?"
_QUESTION_AUX = {"do", "does", "did", "is", "are", "was", "were", "can", "could", "should", "will", "would", "has",
                 "have"}
_NO_SUBJECT = {"it", "there", "this", "that", "these", "those", "he", "she", "my", "our", "your", "not"}
_UNMARKED_AUX = {"is", "are", "does", "did"}
_DETERMINERS_AFTER_AUX = {"the", "a", "an", "some", "most", "all", "any", "people", "kids", "children"}
# the verb of a question's claim, second or third after "can" / "do" ("can dogs eat grapes", "do cats get cold",
# "can pregnant women eat prawns"; "can opener electric", "do loop in VBA" have none)
_COMMON_VERBS = set("""eat eats have get cause be take use go make help drink see hear feel live play work affect need come
give keep run fly swim sleep dream bite grow change stop reduce increase improve lower raise prevent treat cure
trigger survive recover die smell taste catch spread pass carry transmit sense remember recognise recognize
understand know learn read walk climb jump share visit stay travel apply claim pay""".split())


def _unmarked_question(words: list[str]) -> bool:
    """A yes/no question typed without its "?": "is" / "are" / "does" / "did" first, or a lower-case "do" / "can"
    before a determiner or a subject and a common verb ("can the council refuse ...", "can dogs eat grapes"; not
    "can opener", "do loop", "can bus"), and not a title ("Do Androids Dream of Electric Sheep")."""
    first = words[0].lower()
    if first not in _UNMARKED_AUX and not (first in ("do", "can") and len(words) > 2 and words[1].islower() and (
            words[1].lower() in _DETERMINERS_AFTER_AUX or words[2].lower() in _COMMON_VERBS
            or len(words) > 3 and words[3].lower() in _COMMON_VERBS)):
        return False
    return not _title_cased(" ".join(words))


def _drop_question_aux(toks: list[_Tok], text: str) -> list[_Tok]:
    """"Do electric cars reduce emissions?" asks about the claim "electric cars reduce emissions", "Is Bitcoin a
    hedge against inflation?" about "Bitcoin a hedge against inflation": a yes/no question loses its leading
    auxiliary (not "Do you have ...", a request; not "Is it true ...", whose subject is no topic; "Should I
    ...", "Can we ..." lose their subject too, with the filler: _OWN_TASK_RE; a "why" question loses its "why" and
    its auxiliary, with or without its "?").  Without the "?" only "is", "are", "does", "do", "did", "can" ("is free will
    compatible with determinism", "does exercise help with depression", "can siblings visit on PICU"; not "do not
    disturb"), in a text of one short sentence that does not end in "or not" (a whether-question, kept whole)."""
    if not toks or toks[0].kind != "WORD":
        return toks
    words = toks[0].text.split()
    if len(words) >= 3 and words[0].lower() == "why" and words[1].lower() in _QUESTION_AUX \
            and words[2].lower() not in _ASKED | _NO_SUBJECT - {"my", "our", "your"} | {"so", "i"}:
        # "Why are swifts declining in European cities?", "why is pluto not a planet": the state asked about (its
        # "not" stays the claim's word: the text was read as a sentence)
        return [_Tok("WORD", " ".join(words[2:]), toks[0].spaced), *toks[1:]]
    if len(words) >= 5 and words[0].lower() in ("is", "was") and words[1].lower() == "it" \
            and words[2].lower() in ("really", "actually", "even"):
        words = words[:2] + words[3:]   # "is it really worth X-ing"
    if len(words) >= 4 and [w.lower() for w in words[:3]] in (["is", "it", "worth"], ["was", "it", "worth"]) \
            and words[3].lower().endswith("ing"):
        # "Is it worth switching to no-till?", "is it worth getting a dog or not": the step weighed (a closing
        # "or not" typed without its "?", a word of its own here, goes with the question's words)
        after = toks[1:]
        if len(after) == 1 and after[0].kind == "WORD" and _fold(after[0].text) == "or not":
            after = []
        return [_Tok("WORD", " ".join(words[3:]), toks[0].spaced), *after]
    if not text.rstrip().endswith("?") and (
            not _unmarked_question(words) or len(text.split()) > _MAX_UNMARKED_QUESTION
            or re.search(r"[.!?;:]|\bor\s+not\s*$", text.strip(), re.I)):
        return toks
    if len(words) < 3 or words[0].lower() not in _QUESTION_AUX or words[1].lower() in _ASKED | _NO_SUBJECT:
        return toks
    return [_Tok("WORD", " ".join(words[1:]), toks[0].spaced), *toks[1:]]


def _starts_upper(t: _Tok | None) -> bool:
    if t is None or t.kind != "WORD":
        return False
    w = t.text.split()[0].lstrip("\"'([")
    return w[:1].isupper() and w != "I"


def _ends_upper(t: _Tok | None) -> bool:
    if t is None or t.kind != "WORD":
        return False
    w = t.text.split()[-1].lstrip("\"'([")
    return w[:1].isupper()


def _sentence_words(toks: list[_Tok]) -> list[_Tok]:
    """In a text that holds sentences, plain ``and`` / ``or`` / ``not`` / ``but`` and
    commas are words of those sentences ("Employers and others expect...", "is not
    a deterrent"), except at a visible boundary between two sentences: a lower-case
    word, the connective, then a capitalised word ("...defective cells or Stacking
    is..."); upper-case AND / OR / NOT and all other markers keep their meaning."""
    out: list[_Tok] = []
    pending: set[str] = set()  # the connective an "either" / "both" still waits for
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < len(toks) else None
        if t.kind == "EITHER":
            pending.add("OR")
        elif t.kind == "BOTH":
            pending.add("AND")
        if t.kind in pending:
            pending.discard(t.kind)
            out.append(t)
            continue
        boundary = _boundary(prev, nxt)
        if t.kind in ("AND", "OR", "NOT", "BUT", "ANDNOT", "ORNOT") and not t.text.isupper() and not boundary \
                and not (t.text in ("-", "+") and nxt is not None and nxt.text[:1].islower()) \
                and prev is not None and prev.kind == "WORD" and (nxt is None or nxt.kind == "WORD"):
            # (a search engine's "-y" / "+y" is an operator in any text: "beverage can lid -crown -cork"; before a
            # capital it may be a dash of prose, "an American PMC -Military Professional Resources Inc - trains")
            out.append(_Tok("WORD", t.text))
        elif t.kind in ("COMMA", "SEMI") and not boundary and prev is not None and prev.kind == "WORD" \
                and nxt is not None and nxt.kind == "WORD":
            out.append(_Tok("PUNCT", "," if t.kind == "COMMA" else ";"))
        else:
            out.append(t)
    return out


# Capitalised words that start a new sentence or title after a connective.
_SENTENCE_STARTS = set(
    "How What Why When Where Which Who Whose Is Are Was Were Should Can Could Does Do Did Will Would Has Have "
    "The A An This These Those There It".split()
)


def _boundary(prev: _Tok | None, nxt: _Tok | None) -> bool:
    """Whether a connective between ``prev`` and ``nxt`` visibly separates two sentences."""
    if prev is None or nxt is None or prev.kind != "WORD" or nxt.kind != "WORD":
        return False
    first = nxt.text.split()[0].lstrip("\"'([")
    if first in _SENTENCE_STARTS:
        return True
    if _starts_upper(nxt):
        return not _ends_upper(prev)  # "...defective cells or Stacking is..."
    # "...Worse Than Sugar Water or flax oil": a title ends, a lower-case topic starts
    tail = [w.lstrip("\"'([") for w in prev.text.split()[-2:]]
    return len(tail) == 2 and all(w[:1].isupper() for w in tail) and first[:1].islower()


def _parentheticals(toks: list[_Tok]) -> list[_Tok]:
    """``protein (RP) expression``: brackets right after a word around words only
    are part of the term, not a group."""
    out: list[_Tok] = []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "LP" and out and out[-1].kind == "WORD" and i + 3 < len(toks) and toks[i + 1].kind == "OR" \
                and toks[i + 2].kind == "WORD" and toks[i + 3].kind == "RP" and len(toks[i + 2].text.split()) <= 4:
            # "vitamin D (or calcium) and bone density": the bracket's alternative is one to the words before it
            out[-1:] = [_Tok("LP", spaced=out[-1].spaced), out[-1], toks[i + 1], toks[i + 2], toks[i + 3]]
            i += 4
            continue
        if t.kind == "LP" and out and out[-1].kind == "WORD":
            j = i + 1
            while j < len(toks) and toks[j].kind in ("WORD", "PUNCT", "COMMA"):
                j += 1
            if j < len(toks) and toks[j].kind == "RP" and j > i + 1:
                inner = "".join(("" if x.kind != "WORD" or k == 0 else " ") + (x.text if x.kind == "WORD" else ",")
                                for k, x in enumerate(toks[i + 1:j]))
                out.append(_Tok("WORD", "(" + inner + ")", t.spaced))   # "401(k)" stays glued
                i = j + 1
                continue
        out.append(t)
        i += 1
    return out


# A sentence ends at . ? ! (closing quotes or brackets may follow) before a capitalised word, except
# after an initial ("J. Smith", "U.S. Army") or a common abbreviation.
_SENTENCE_END_RE = re.compile(r"(?<=[.?!])[\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]*[A-Z])")
_ABBREVIATIONS = {"dr", "mr", "mrs", "ms", "st", "prof", "vs", "etc", "e.g", "i.e", "no", "fig", "al", "inc", "ltd",
                  "co", "jr", "sr", "mt", "approx", "ca", "cf", "vol", "pp", "ed", "eds", "gen", "col", "sgt", "rev"}
# A sentence that asks for documents: a later one makes what comes before it a preamble.
_MAX_PREAMBLE, _MAX_REQUEST = 3, 2  # sentences of context before a request, sentences of the request
_MAX_LETTER_PREAMBLE = 8   # a letter's context: the writer's own circumstances, in a text of at most _MAX_LETTER


def _preamble_limit(sentences: list[str], request: int) -> int:
    """How many sentences of context may come before the request: more in a letter ("Our brewery has been getting
    complaints ... We've already replaced the yeast. ... Can you find material on X?"), where most of them are
    about the writer, than in prose that holds a request-like sentence."""
    before = sentences[:request]
    if sum(len(x) for x in sentences) > _MAX_LETTER or not before:
        return _MAX_PREAMBLE
    personal = sum(1 for x in before if _FIRST_PERSON_RE.search(_fold(x)))
    return _MAX_LETTER_PREAMBLE if 2 * personal >= len(before) else _MAX_PREAMBLE
_REQUEST_RE = re.compile(r"(?:(?:please|so|now|ok|okay),?\s+){0,2}(?:" + "|".join(_ASKS + _HOWTO) + r")")


def _sentences(text: str) -> list[str]:
    """The text's sentences (stripped); one item when it holds one sentence or none."""
    out: list[str] = []
    start = 0
    for m in _SENTENCE_END_RE.finditer(text):
        # the word before the stop: a bounded look-back, so a text of many initials stays linear
        word = text[max(start, m.start() - 64):m.start()].rstrip(".?!\"'\u201d\u2019)]").rsplit(None, 1)[-1:] or [""]
        w = word[0].lower().lstrip("(\"'\u201c\u2018")
        if (len(w) == 1 and w.isalpha()) or w in _ABBREVIATIONS or re.fullmatch(r"(?:[a-z]\.)+[a-z]?", w):
            continue  # "J. Smith", "Dr. Who", "U.S. Army"
        out.append(text[start:m.start()].strip())
        start = m.end()
    out.append(text[start:].strip())
    split: list[str] = []
    for sentence in out:   # "Is The Wire worth watching? no spoilers pls"
        parts = re.split(r"(?<=\?)\s+(?=[a-z])", sentence)
        split.append(parts[0])
        for part in parts[1:]:
            if _QUESTION_EXCLUSION_RE.match(_fold(part)):
                split.append(part)
            else:
                split[-1] += " " + part
    out = []
    for sentence in split:   # typed in lower case: "... crisis? need it by thursday. thanks, Mara" ends in chatter
        parts = re.split(r"(?<=[.?!])\s+(?=[a-z])", sentence)
        tail: list[str] = []
        while len(parts) > 1 and (_closing_chatter(parts[-1]) or _own_statement(parts[-1])):
            tail.insert(0, parts.pop())
        out += [" ".join(parts), *tail]
    return [s for s in out if s]


def _closing_chatter(sentence: str) -> bool:
    low = _fold(sentence).strip().rstrip(" .!?")
    return _SIGN_OFF_RE.fullmatch(low) is not None or _CHATTER_SENTENCE_RE.fullmatch(low) is not None


# A short sentence that only excludes ("No Langston Hughes please.", "I'm not interested in MRSA.") after a
# request or a topic (a sentence without an auxiliary verb) belongs to it: joined with a semicolon.
_EXCLUSION_SENTENCE_RE = re.compile(
    r"(?:(?:but|and|also|and\s+also|please),?\s+)?(?:no(?!\s+(?:idea|worries|problem|rush|hurry|pressure|thanks|one|need\s+to)\b)|"
    r"not(?!\s+(?:sure|certain|only|just|yet|necessarily)\b)|nothing(?!\s+else\b)|none|excluding|exclude|except|without|"
    r"leave\s+out|skip\s+(?:anything|everything|any|all)|ignore|avoid|(?:i|we)\s+(?:don't|do\s+not)\s+want|"
    r"(?:i|we)\s+(?:don't|do\s+not)\s+need\s+(?:anything|stuff|material|papers|articles|info|information)\s+"
    r"(?:on|about|regarding)|"
    r"(?:it\s+)?(?:must|should)\s+not\s+(?:be\s+about|include|cover|mention)|"
    r"(?:please\s+)?(?:do\s+not|don't)\s+(?:use|include|cite)\s+(?:anything|any\s+\w+)\s+(?:on|about)|"
    r"(?:do\s+not|don't|dont)\s+show(?:\s+me)?(?:\s+(?:any|anything))?|"
    r"(?:i'm|i\s+am|we're|we\s+are)\s+not\s+(?:interested|looking\s+for)|not\s+asking\s+about|"
    r"(?:i|we)(?:'d|\s+would)\s+(?:prefer\s+to|rather|like\s+to)\s+avoid)\b")
# why an exclusion-only sentence excludes ("..., since I've already covered them", "..., as everyone is tired
# of it"): no part of what it excludes
_REASON_RE = re.compile(r",\s+(?:(?:since|because|bc|cause|cuz|coz|cos|as(?!\s+(?:well|in|of|for|with|to|a|an|the|"
                        r"opposed)\b))\s+.*|(?:it's|it\s+has|that's|they've|those\s+have)\s+been\s+(?:done|covered)\b.*|"
                        r"which\s+(?:we|i|they)(?:'ve|\s+have)\s+(?:already\s+)?(?:covered|done|got|seen|read)\b.*|"
                        # "..., that's covered", "..., that's a separate workstream", "..., my players hate it"
                        r"(?:that's|that\s+is|it's|it\s+is|those\s+are|they're|they\s+are)\s+(?:(?:already\s+)?covered\b.*|"
                        r"(?:a\s+)?(?:separate|different|another)\b[^()]*)|"
                        r"(?:i|we|they|(?:my|our)\s+\w+)\s+(?:hate|hates|dislike|dislikes|can't\s+stand|"
                        r"(?:don't|doesn't|do\s+not|does\s+not)\s+like)\s+(?:it|them|that|those|this)\b[^()]*)$",   # (an aside's own)
                        re.S)
_MAX_EXCLUSION_WORDS = 12
# After a question, only an unmistakable exclusion ("? no spoilers pls", "? not interested in type 1"): "? no
# experience with C++", "? not anymore", "? not according to my doctor" answer or qualify the question.
_QUESTION_EXCLUSION_RE = re.compile(
    r"(?:(?:but|and),?\s+)?(?:not\s+interested\s+in|not\s+asking\s+about|nothing\s+(?:on|about|abt)|excluding|exclude|"
    r"except|without|"
    r"leave\s+out|skip|avoid|ignore|(?:i|we)\s+(?:don't|do\s+not)\s+want|"
    r"(?:i|we)\s+(?:don't|do\s+not)\s+need\s+anything\s+(?:on|about|regarding)|"
    r"(?:please\s+)?(?:leave\s+out|exclude|skip|ignore)|no\s+\S+(?:\s+\S+)?\s+(?:please|pls|plz)\b|"
    # "is the hat in size L? not the kids version" (not a contrast, "not the pro, the regular"; nor a remark, "not
    # the first time", "not any more than tea")
    r"(?<!and\s)(?<!and,\s)not\s+(?:the|any)\b(?!\s+(?:first|last|end|same|only|point|case|issue|problem|time|more|"
    r"less|longer|better|worse|kind|way|one)\b)(?![^?]*\?)(?![^,;]*(?:,|;|\bbut\b|\bjust\b|\bonly\b)))"
    r"(?=\s|$)")


# A sentence that adds an alternative to the request before it ("Or Y would also work.", "Failing that, Y is a
# reasonable substitute.", "Alternatively Y."): joined to it as an "or else"; its closing words go.
_ALTERNATIVE_SENTENCE_RE = re.compile(r"(?:or|failing\s+that|alternatively|otherwise|or\s+else)\b[\s,]*(?:failing\s+that\b[\s,]*)?"
                                      r"(?:maybe\s+|perhaps\s+|possibly\s+)?(?=\S)")
_ALTERNATIVE_TAIL_RE = re.compile(r"\s+(?:would|could|might|will)\s+(?:also\s+)?(?:work|do|help|suffice|be\s+(?:fine|ok|okay|"
                                  r"good|useful|helpful|great|acceptable|welcome))(?:\s+as\s+(?:a|an)\s+\w+)?|\s+(?:is|are)"
                                  r"\s+(?:also\s+)?(?:fine|ok|okay|good|acceptable|a\s+(?:reasonable|good|fine|acceptable)\s+"
                                  r"(?:substitute|alternative|fallback))|\s+(?:also\s+)?works?(?:\s+too)?|\s+(?:too|as\s+well)"
                                  r"(?=[\s.!?]*$)")
_MAX_ALTERNATIVE_WORDS = 20


def _first_exclusion_last(sentences: list[str]) -> list[str]:
    """"Nothing on X. What I need is Y.": a short exclusion-only sentence right before the request is joined to it,
    after it."""
    if len(sentences) < 2:
        return sentences
    before, last = _fold(sentences[-2]), _fold(sentences[-1])
    m = _EXCLUSION_SENTENCE_RE.match(before) or re.match(r"(?:skip|ignore|exclude|leave\s+out)\s+(?=\S)", before)
    reason = _REASON_RE.search(sentences[-2])
    if m and reason:   # "Skip Black Summer, it's been done."
        sentences = sentences[:-2] + [sentences[-2][:reason.start()] + ".", sentences[-1]]
        before = _fold(sentences[-2])
    if not m or _EXCLUSION_SENTENCE_RE.match(last) or len(sentences[-2].split()) > _MAX_EXCLUSION_WORDS \
            or not before[m.end():].strip(" .!?,;:\"'") or _has_strong_aux(before[m.end():]):
        return sentences
    verb = re.match(r"(?:skip|ignore|exclude|leave\s+out)\s+", before)
    if verb:   # "Skip Black Summer." ("skip" alone opens no clause in the lexer: "skip hire")
        return sentences[:-2] + [_with_exclusion(sentences[-1], sentences[-2][verb.end():].rstrip(" .!"))]
    return sentences[:-2] + [sentences[-1].rstrip(" .!") + "; " + sentences[-2]]


_MAX_FRAGMENT_WORDS = 6
_CHAIN_LEAD_RE = re.compile(r"(?P<lead>and|also|plus|what\s+about|how\s+about|or)\b[\s,]*(?:(?:on|in|about|for)\s+)?(?=\S)")


def _fragment(sentence: str) -> bool:
    """A telegraphic sentence: a few words naming a topic ("Ghost towns.", "Pacific only."), no verb's auxiliary,
    no ask, no question."""
    words = sentence.split()
    low = _fold(sentence)
    return 0 < len(words) <= _MAX_FRAGMENT_WORDS and sentence.rstrip().endswith(".") \
        and not _has_any_aux(sentence) and "," not in sentence \
        and not re.match(r"(?:specifically|in\s+particular|particularly)\b", low) \
        and not _REQUEST_RE.match(low) and not _EXCLUSION_SENTENCE_RE.match(low) and not any(q in sentence for q in _QUOTES)


def _telegraphic(sentences: list[str]) -> bool:
    """Three sentences or more, each a fragment, an exclusion-only sentence or an "Also X." / "Or X." (a text of
    notes: "Ghost towns. American West. Mining booms."); two sentences may be a statement ("Rome. Nothing else
    matters.")."""
    def note(x: str) -> bool:
        low = _fold(x)
        lead = _CHAIN_LEAD_RE.match(low)
        return _fragment(x) or bool(_EXCLUSION_SENTENCE_RE.match(low)) and len(x.split()) <= _MAX_FRAGMENT_WORDS \
            or bool(lead and lead.group("lead") in ("also", "or") and _fragment(x[lead.end():]))
    return len(sentences) >= 3 and all(note(x) for x in sentences)


_RESEARCHING_RE = re.compile(r"(?:(?:hi|hello|hey)\W+)?(?:i|we)(?:'m|\s+am|\s+are|'re)\s+(?:currently\s+)?"
                             r"(?:researching|studying|writing\s+(?:about|on|a|an)|working\s+on)\b")
# "I don't need the Airbnb tax discussion though.": a sentence of its own after a request ("we don't need X" is
# often a claim elsewhere)
_DONT_NEED_RE = re.compile(r"(?:but\s+|and\s+)?(?:i|we)\s+(?:don't|do\s+not|dont)\s+(?:really\s+)?need\s+"
                           r"(?P<what>(?:the|any|anything\s+(?:on|about))\s+[^.!?]+?)"
                           r"(?:,?\s+(?:though|tho|thanks|thank\s+you|please))?[.!]?$", re.I)


def _join_exclusions(sentences: list[str]) -> list[str]:
    out: list[str] = []
    notes = _telegraphic(sentences)
    for s in _first_exclusion_last(sentences):
        prev = out[-1] if out else None
        low = _fold(s)
        # a chain of questions ("Anything on X? What about Y? And Z?", "X? Or Y?") or of telegraphic sentences
        # ("Ghost towns. American West. Also mining booms."): one request, its parts ANDed (an "Or" ORed)
        chain = _CHAIN_LEAD_RE.match(low) if prev is not None and len(s.split()) <= _MAX_ALTERNATIVE_WORDS else None
        if chain and prev.rstrip().endswith("?") and not _has_strong_aux(s[chain.end():]):
            joint = ", or " if chain.group("lead") == "or" else "; "
            out[-1] = prev.rstrip(" ?") + joint + s[chain.end():].rstrip(" ?") + "?"
            continue
        last = prev.split("; ")[-1] if prev is not None else ""
        if notes and prev is not None and _fragment(last if last.endswith(".") else last + ".") \
                and (_fragment(s) or (chain and chain.group("lead") in ("also", "or") and _fragment(s[chain.end():]))):
            part = s[chain.end():] if chain and chain.group("lead") in ("also", "or") else s
            part = part.rstrip(" .")
            if re.search(r"\b(?:or|and)\b", _fold(part)):
                part = f"({part})"   # "UK or Germany." stays one part of the AND
            head = prev.rstrip(" .")
            if chain and chain.group("lead") == "or":   # "Olivetti. Or Olympia.": an alternative to the last part
                cut = head.rfind("; ")
                head = head[:cut + 2] + "(" + head[cut + 2:] + " or " + part.strip("()") + ")" if cut >= 0 \
                    else head + " or " + part.strip("()")
                out[-1] = head + "."
            else:
                out[-1] = head + "; " + part + "."
            continue
        narrowing = re.match(r"(?:more\s+)?(?:specifically|in\s+particular|particularly)\b[\s,:]*(?=\S)", low) \
            if prev is not None else None
        if narrowing and len(s.split()) <= _MAX_ALTERNATIVE_WORDS and not _has_strong_aux(s):
            out[-1] = prev.rstrip(" .!?") + "; " + s[narrowing.end():]   # "Looking at X. Specifically Y."
            continue
        alternative = _ALTERNATIVE_SENTENCE_RE.match(low) if prev is not None else None
        if alternative and len(s.split()) <= _MAX_ALTERNATIVE_WORDS and not s.startswith("OR") \
                and not any(q in s + prev for q in _QUOTES):   # (the operator, and a quoted span's sentences)
            body = s[alternative.end():].rstrip(" .!")
            body = _ALTERNATIVE_TAIL_RE.sub("", body).rstrip(" ,.!")
            if body:
                out[-1] = prev.rstrip(" .!?") + ", or else " + body   # "X. Or Y would also work."
                continue
        need = _DONT_NEED_RE.match(s) if prev is not None and not _EXCLUSION_SENTENCE_RE.match(low) and (
            prev.rstrip().endswith("?") or _REQUEST_RE.match(_fold(prev))) else None
        if need:   # "Could you find X? I don't need the Y though.": after a request, what it does not need
            s, low = f"Not {need.group('what')}.", _fold(f"Not {need.group('what')}.")
        m = _EXCLUSION_SENTENCE_RE.match(low)
        rest = low[m.end():].strip(" .!?,;:\"'") if m else ""
        asked = prev is not None and prev.endswith("?") and _QUESTION_EXCLUSION_RE.match(low) is not None
        if m:
            reason = _REASON_RE.search(s, m.end())
            if reason:
                s = s[:reason.start()] + s[len(s.rstrip(" .!?")):]
                rest = _fold(s)[m.end():].strip(" .!?,;:\"'")
        ask = _REQUEST_RE.match(_fold(prev)) if prev is not None else None   # "We are looking for X.": its
        topic = prev[ask.end():] if ask else prev                               # "are" is the ask's
        if prev is not None and m and rest and len(s.split()) <= _MAX_EXCLUSION_WORDS \
                and (asked or not _has_strong_aux(topic)) and not _has_strong_aux(rest):
            s = re.sub(r"^(?:(?:and\s+)?also|please)\b,?\s*", "", s, flags=re.I)   # "Also not Amazon.", "Please no
                                                                                  # X.": "also" is no topic
            out[-1] = prev.rstrip(".!") + "; " + s      # a "?" stays: the question before keeps its reading
        else:
            out.append(s)
    return out


# Rephrasings of a short request, on its text before lexing (each returns the text unchanged when it does
# not apply).  Only requests of at most _MAX_REPHRASED characters, and every pattern is bounded in words: a
# long text costs nothing here.
_MAX_REPHRASED = 500
_MAX_LETTER = 1500   # a longer text is prose, not a letter asking for documents
_BULLETS = "[\u2022\u2023\u25e6\u2043\u00b7]"
_BULLET_RE = re.compile(r"\s*" + _BULLETS + r"\s*")
_QUOTES = "\"\u201c\u201d\u201e\u00ab\u00bb"
_WORD = r"[^\s,;:?!.\u2013\u2014-][^\s,;:?!.\u2013\u2014]*"   # no separator inside, no dash alone

# An exclusion put first before a question or a sentence ("Excluding children, what are the effects of
# melatonin?", "Other than statins, what lowers LDL?"), before a colon, semicolon or spaced dash ("Anything
# but sci-fi: board games for two"), or "I don't care about X, just want news on Y": read as the rest with the
# exclusion at its end.  (Before a comma and a plain topic the parser reads it in place, serial lists
# included: "excluding A, B and C"; after a comma, a rest with a comma of its own may be such a list: left
# alone.)  Only a
# short excluded span, and not a clause ("Except when it rains, ...", "Besides being cheap, ..."); a pronoun
# excludes nothing ("Apart from that, ..."); text with quoted terms is left to the parser.
_FRONT_EXCLUSION_RE = re.compile(
    r"(?:(?P<cue>excluding|except(?:\s+for)?|apart\s+from|aside\s+from|other\s+than|besides|not\s+counting|"
    r"leaving\s+aside|setting\s+aside|ignoring|rather\s+than|instead\s+of|leave\s+out|leaving\s+out|skip|without|"
    r"nothing\s+(?:with|on|about)|"
    r"(?:(?:i'm|i\s+am|we're|we\s+are)\s+)?not\s+(?:interested\s+in|looking\s+for)|"
    r"(?:anything|everything)\s+(?:but|except|other\s+than|apart\s+from))"
    r"|(?P<care>(?:i|we)\s+(?:don't|do\s+not)\s+care\s+about))\s+"
    rf"(?P<what>{_WORD}(?:\s+{_WORD}){{0,7}}?)\s*(?:(?P<comma>,)|[;:]|\s[-\u2013\u2014]+|(?P<wh>(?=\s(?:what|which|how|"
    r"where|why|who|when)\b)))\s+(?P<rest>\S.*)$", re.S)
_NOT_EXCLUDED = set("this these those it them him her us me you all everything anything something "
                    "when if where while whether because since being having what which who how why".split())
_PRONOUNS = {"that", "this", "it", "these", "those"}


def _front_exclusion(sentence: str) -> str:
    m = None if any(q in sentence for q in _QUOTES) else _FRONT_EXCLUSION_RE.match(_fold(sentence))
    if not m:
        return sentence
    what = sentence[m.start("what"):m.end("what")].strip()
    words = what.split()
    rest = sentence[m.start("rest"):].rstrip()
    if re.match(r"(?:or|and/or|nor)\b", _fold(rest)):
        return sentence   # "everything except X; or Y" is (NOT X) OR Y, no exclusion from Y
    if (len(words) == 1 and words[0].lower() in _PRONOUNS) or " ".join(words[:2]).lower() == "the fact":
        return rest   # "Apart from that, what about solar?", "Apart from the fact that ...,": no exclusion
    body = rest.rstrip(".?!")
    if m.group("comma") and not m.group("care") and not rest.endswith("?") and not _REQUEST_RE.match(_fold(rest)) \
            and not _has_any_aux(body):
        return sentence
    if words[0].lower() in _NOT_EXCLUDED or (words[0].lower().endswith("ing") and len(words) > 1) \
            or not body.strip(_EDGE_PUNCT) or (m.group("comma") and "," in body) \
            or _FRONT_EXCLUSION_RE.match(_fold(body)):
        return sentence
    return f"{body}, excluding {what}{rest[len(body):]}"


# A topic, then a colon or a spaced dash, then alternatives, a conjunction or a comparison ("electric vehicles:
# Tesla or BYD", "Gaming laptops - ASUS or Lenovo", "knife skills: julienne vs brunoise") asks for the topic AND
# the group after it; a label before the colon
# ("Topic: cats or dogs") is no topic.  A short topic without connectives, a short group with one, no
# exclusion opening the group (a dash before an exclusion is a comma: see _lex), no claim.
_HEAD_WORD = r"[^\s:;,?!.()\[\]\"\u201c\u201d\u201e\u00ab\u00bb\u2013\u2014-][^\s:;,?!.()\[\]\"\u201c\u201d\u201e\u00ab\u00bb]*"
_TOPIC_HEAD_RE = re.compile(rf"(?P<head>{_HEAD_WORD}(?:\s+{_HEAD_WORD}){{0,5}})\s*(?::|\s[-\u2013\u2014]+)\s+"
                            r"(?P<tail>[^:;()\[\]\"\u201c\u201d\u201e\u00ab\u00bb]+)$", re.S)
_GROUP_WORDS = {"or", "and", "/", "&", "and/or", "either", "both", "vs", "versus"}   # ("knife skills: A vs B")
_HEAD_STOPS = {"or", "and", "not", "but", "nor", "no", "with", "without", "except", "excluding", "either", "both",
               "neither", "vs", "versus"}
_LABELS = {"topic", "topics", "query", "question", "q", "request", "search", "subject", "keywords", "keyword", "re",
           "title", "task", "terms", "search terms", "looking for", "interested in", "need", "note", "nb", "fyi",
           "example", "examples", "context", "background", "tldr", "wanted", "wtd", "wtb", "iso", "seeking"}
# a head that says who asks or what kind of search it is ("Prior art search:", "Market research ask from product:",
# "Newsroom library request:", "Quick ask for the science desk:", "PM here --", "Grant writer here:")
_FRAMING_HEAD_RE = re.compile(
    r"(?:.*\b(?:request|ask|question|search|prior[\s-]art|eli5|til|iirc|tl;?dr)\b.*|.*\bhere|"
    r"(?:market|competitive|user|desk|background|product|literature|lit)\s+(?:research|review|search|question|"
    r"needed|wanted)(?:\s.*)?|(?:for|from)\s+(?:the|our)\s+\w+(?:\s+\w+)?\s+(?:desk|team|section|unit)|"
    r"(?:new|quick|small|urgent)\s+(?:one|request|ask|question)|prior\s+art(?:\s+needed)?|.*\b(?:opposite|contrary)\b.*|"
    r".*\b(?:for|from)\s+(?:a|an|the|our|my)\s+(?:[\w-]+\s+){0,2}(?:proposal|application|bid|grant|profile|piece|story|"
    r"feature|explainer|briefing|brief|thesis|dissertation|essay|homework|assignment|coursework)\b.*|"
    r"(?:[\w-]+\s+){0,2}(?:assignment|homework|coursework|essay|project)(?:\s+\w+)?|"
    r"(?:[\w'-]+\s+){1,2}note)")   # "Examiner note: search for X" (not "Release notes: X", what is sought)
_MAX_GROUP = 12   # words
_NO_GROUP_START = {"no", "not", "but", "except", "excluding", "without", "ignore", "skip", "leave", "minus",
                   "anything", "nothing", "none", "neither", "other", "apart", "aside", "rather", "e.g", "i.e",
                   "eg", "ie", "including", "like", "such"}


_DOCUMENT_WORDS = set("source sources paper papers article articles study studies case readings reading references "
                      "literature books material materials info information resources examples data evidence research "
                      "some any good recent more relevant academic scholarly peer-reviewed abstracts patents rulings "
                      "filings transcripts tickets posts reviews reports news stories documents docs notes decisions "
                      "support customer forum product court clinical wire policy patent press user".split())
# a document type that alone, before a colon, names what to search ("abstracts: X"; not "Research: X", "Reading: X")
_DOCUMENT_LABELS = {"abstracts", "patents", "rulings", "filings", "transcripts", "tickets", "papers", "articles"}


def _asks_for_documents(head: str) -> bool:
    """Whether ``head`` only asks for documents: an ask and words for documents ("need sources", "looking for
    case studies", "any good readings")."""
    low = _fold(head)
    ask = _REQUEST_RE.match(low)
    rest = low[ask.end():] if ask else low
    words = rest.split()
    return bool(words) and (ask is not None or len(words) > 1 or words[0] in _DOCUMENT_LABELS) \
        and all(w in _DOCUMENT_WORDS for w in words) \
        and any(w not in ("some", "any", "good", "recent", "more", "relevant") for w in words)


def _topic_head(sentence: str) -> str:
    m = _TOPIC_HEAD_RE.match(sentence)
    if not m:
        return sentence
    head, tail = m.group("head").strip(), m.group("tail").strip()
    head_words = _fold(head).split()
    tail_words = [w.strip(",.!?") for w in _fold(tail).split()]
    if (" ".join(head_words) in _LABELS or _FRAMING_HEAD_RE.fullmatch(" ".join(head_words))) and tail_words:
        return tail   # "Question: does aspirin prevent cancer?", "Note: not about mice", "Prior art search: X"
    if tail_words and _asks_for_documents(head):
        return tail   # "Need sources: X", "Looking for case studies: X" (not "Looking for Alaska: themes")
    grouped = _GROUP_WORDS & set(tail_words) or any(_slash_parts(w) for w in tail.split())   # "ASUS/Lenovo"
    if not tail_words or len(tail_words) > _MAX_GROUP or not grouped \
            or tail_words[0] in _NO_GROUP_START | _GROUP_WORDS or _has_strong_aux(sentence):
        return sentence
    if _HEAD_STOPS & set(head_words):
        return sentence
    body = tail.rstrip(".?!")
    return f"{head} and ({body}){tail[len(body):]}"


# An aside in brackets after a clause ("board games (nothing with small pieces, our baby crawls)", "memory leaks
# in Node.js (or Deno, if that's easier)", "restring a guitar (asking for my dad)"): one that opens with an
# exclusion excludes its first phrase, one that opens with "or" adds an alternative, one about the writer or
# a preference ("(bees mostly)", "(recent work preferred)") is dropped.  Only a spaced bracket after a word
# that is no connective, the exclusion and the alternative only at the end of a clause; anything else stays
# for the lexer (an acronym "(ALS)", a group "and (A or B)", "401(k)").
_ASIDE_RE = re.compile(r"(?<=[^\s(\[{])(?P<gap>\s+)\((?P<body>[^()\[\]{}\"\u201c\u201d]{1,160})\)(?=[\s,;.!?]|$)")
_ASIDE_EXCLUSION_RE = re.compile(
    r"(?:but\s+)?(?:not(?:\s+including|\s+involving|\s+about|\s+related\s+to)?|no|nothing(?:\s+(?:with|about|on|"
    r"involving|related\s+to|using))?|except(?:\s+for)?|excluding|apart\s+from|aside\s+from|other\s+than|outside(?:"
    r"\s+of)?|without|ignoring|(?:anything|everything)\s+(?:but|except)|any\s+\w+\s+(?:except|but|other\s+than|"
    r"apart\s+from))\s+(?=\S)")
_ASIDE_ALTERNATIVE_RE = re.compile(r"or(?:\s+maybe|\s+perhaps|\s+possibly)?\s+(?=\S)")
_ASIDE_ADDITION_RE = re.compile(r"(?:and|plus)(?:\s+also)?\s+(?=\S)")   # "(and antibody engineering too)"
_ASIDE_TOO_RE = re.compile(r"\s+(?:too|as\s+well|also)$")
# "(or lack thereof)", "(or not)", "(or so)", "(or similar)": no alternative topic
_NO_ALTERNATIVE = set("lack not otherwise so something anything whatever similar equivalent vice more less rather both all "
                      "it them that this thereabouts".split())
_ASIDE_PERSONAL = set("i i'm i've i'd i'll me my mine we we're we've we'd our ours us you you're your yours he "
                      "she his her they they're their".split())
_ASIDE_PREFERENCE_RE = re.compile(r"(?:.*\b(?:preferred|preferably|ideally|mostly|mainly|if\s+possible|"
                                  r"is\s+fine|are\s+fine|either\s+way|asking\s+for|just\s+curious|thanks|"
                                  r"please|lol)\b|(?:hint|btw|fyi|ps|p\.s\.|side\s+note|note)\s*:)")
# (case-sensitive: "(Mostly Harmless)" is a title; "(hint: there isn't one)", "(btw: ...)" are remarks)
_ASIDE_AFTER_NO = {"and", "or", "but", "not", "nor", "either", "both", "neither", "of", "in", "on", "for", "with",
                   "without", "to", "a", "an", "the", "AND", "OR", "NOT"}


def _asides(text: str) -> str:
    def replace(m: re.Match) -> str:
        before = text[:m.start()].split()
        if not before or before[-1].strip("\"'") in _ASIDE_AFTER_NO or _fold(before[-1]) in _ASIDE_AFTER_NO:
            return m.group(0)
        body = m.group("body").strip()
        low = _fold(body)
        first = re.split(r"\s*[,;]\s*", body, maxsplit=1)[0]   # the aside's first phrase ("not X, I've read Y")
        clause_end = re.match(r"\s*(?:[,;.!?]|$)", text[m.end():]) is not None
        known = _already_known(body)
        if known is not None:
            return (", but not " + known if known else "") if clause_end else m.group(0)
        for pattern, joined in ((_ASIDE_EXCLUSION_RE, ", but not "), (_ASIDE_ALTERNATIVE_RE, ", or "),
                                (_ASIDE_ADDITION_RE, ", and ")):
            cue = pattern.match(low)
            if not cue or len(first) <= cue.end():
                continue
            if joined == ", or " and (_fold(first[cue.end():]).split() or [""])[0] in _NO_ALTERNATIVE:
                return ""   # "(or lack thereof)", "(or so)": a remark
            phrase = _ASIDE_TOO_RE.sub("", first[cue.end():].strip()) if joined == ", and " else first[cue.end():]
            return joined + phrase.strip() if clause_end else m.group(0)
        # the writer's words: a pronoun or a preference typed in lower case ("I" aside) in an aside of two words
        # or more ("(US)", "(ME)", "(Her)", "(Mostly Harmless)" are acronyms and titles)
        words = [w.strip(".,;:!?\"'").replace("\u2019", "'") for w in body.split()]
        personal = {w for w in words if w.islower() or w in ("I", "I'm", "I've", "I'd", "I'll")}
        if len(words) > 1 and ({w.lower() for w in personal} & _ASIDE_PERSONAL or _ASIDE_PREFERENCE_RE.match(body)):
            return ""
        return m.group(0)
    return _ASIDE_RE.sub(replace, text)


# "I've already read the LoRA paper, so nothing on LoRA", "(already know Patagonia, so skip it)", "I've already
# read the 1994 study, so leave that out": what the writer knows is excluded (a pronoun points back to it).
_ALREADY_RE = re.compile(
    r"(?:[^,;.!?]{0,40}?\b)?already\s+(?:read|know|seen|watched|tried|used|covered|done|have|own|visited|attended|"
    r"completed|finished|had|"
    r"been\s+to)\s+(?:(?:everything|all|a\s+lot|enough|plenty)\s+(?:about|on)\s+)?"
    r"(?P<known>[^,;:.!?]{1,80}?)\s*[,;]?\s+so\s+(?:please\s+)?(?:nothing\s+(?:on|about|abt)|no|not|skip|"
    r"leave\s+out|leave|exclude|ignore|avoid|drop|without)\s+(?P<what>[^,;:.!?]{1,80}?)(?:\s+out)?(?:\s+(?:please|pls))?"
    r"\s*[.!]*$", re.S)
_BACK_REFERENCES = {"it", "that", "this", "them", "those", "these", "that one", "this one", "those ones", "those too"}


# A clause after a spaced dash at the end saying what the writer knows or has done ("... - I know that one well.")
# says nothing to search for, unless it asks or excludes something ("- I Will Always Love You lyrics" is a title).
_DASH_CHATTER_RE = re.compile(r"\s[-\u2013\u2014]+\s+(?:i|we)(?:'ve|\s+have|\s+already)?\s+(?:know|knew|read|seen|saw|"
                              r"watched|tried|used|visited|been|own|heard|covered)\b[^-\u2013\u2014]{0,120}?(?=[.!]*$)",
                              re.S)
_DASH_KEEP_RE = re.compile(r"\b(?:not|no|nothing|none|never|without|except|excluding|don't|dont|didn't|want|need|"
                           r"looking|prefer|interested|like|or|and|already|avoid|skip|ignore|leave)\b")


def _already_known(clause: str) -> str | None:
    """What the clause says the writer already knows, to exclude; "" when that is only a pronoun ("I've already
    read it, so skip it": the clause says nothing); None when the clause is no such thing."""
    m = _ALREADY_RE.match(_fold(clause.strip()))
    if not m:
        return None
    start = len(clause) - len(clause.lstrip())
    group = "known" if m.group("what").strip() in _BACK_REFERENCES else "what"
    known = clause[start + m.start(group):start + m.end(group)].strip()
    return "" if _fold(known) in _BACK_REFERENCES else known


def _with_exclusion(request: str, excluded: str) -> str:
    body = request.rstrip().rstrip(".!?")
    return f"{body}, excluding {excluded}{request.rstrip()[len(body):]}"


# "I've already got plenty on X, so please send me material on Y", "We already have X, so we need other evidence
# on Y", "I've read everything on X already; what else is there on Y?": Y, excluding X
_ALREADY_HAVE_RE = re.compile(
    r"(?=[^,;:.!?]{0,60}?\balready\b)(?:(?:i|we)(?:'ve|\s+have)?\s+)?(?:already\s+)?(?:got|have|read|know|seen|"
    r"covered|own|tried|used)\s+(?:already\s+)?(?:(?:plenty|a\s+lot|lots|loads|enough|everything|all|most)\s+(?:on|about|of)\s+)?"
    r"(?P<known>[^,;:.!?]{1,80}?)(?:\s+already)?\s*[,;]\s*(?:so\s+|and\s+)?(?=\S)")


_KNOWN_SENTENCE_RE = re.compile(
    r"(?:i|we)(?:'ve|\s+have)?\s+already\s+(?:know|knew|read|seen|covered|got|have|tried)\s+(?:(?:all|everything|"
    r"plenty|a\s+lot|lots)\s+)?(?:about|on|of)?\s*(?P<known>[^,;:.!?]{1,60}?)\s*[.!]?")


_GOT_RE = re.compile(r"(?:i|we)(?:'ve|\s+have)\s+(?:got|read)\s+(?P<known>[^,;:!?]{1,80}?)\s*[,;]\s*(?:so\s+)?"
                     r"(?=(?:(?:i|we)\s+)?(?:need|want)\s+(?:other|more|further)|(?:other|more|further)\s+)")
_OTHER_WORK_RE = re.compile(r"(?:(?:i|we)\s+)?(?:need|want)?\s*(?:(?:some\s+)?(?:other|more|further|additional)\s+"
                            r"(?:work|papers|research|studies|evidence|material|sources|literature|books|articles|ideas|"
                            r"options)|something\s+else|anything\s+else)\s+(?:on|about|for)\s+")
# "X, but I have Y already": X excluding Y
_HAVE_ALREADY_TAIL_RE = re.compile(r",?\s+but\s+(?:i|we)(?:'ve|\s+have)?\s+(?:have|got|read)\s+(?P<known>[^,;:!?]{1,60}?)"
                                   r"\s+already[.!]?$")


def _already_have(request: str) -> str:
    tail = _HAVE_ALREADY_TAIL_RE.search(_fold(request))
    if tail and tail.start() > 0:
        return _with_exclusion(request[:tail.start()], request[tail.start("known"):tail.end("known")])
    m = _ALREADY_HAVE_RE.match(_fold(request)) or _GOT_RE.match(_fold(request))
    if not m:
        return request
    rest = request[m.end():]
    other = _OTHER_WORK_RE.match(_fold(rest))
    if other:   # "..., so other work on Y please", "...; need other work on Y"
        rest = rest[other.end():]
    elif not (_REQUEST_RE.match(_fold(rest)) or re.match(r"what\s+else\s+(?:is\s+there|have\s+you\s+got|do\s+you\s+have)",
                                                         _fold(rest))):
        return request
    known = request[m.start("known"):m.end("known")].strip()
    if _fold(known) in _BACK_REFERENCES:
        return rest
    if _REQUEST_RE.match(_fold(rest)):
        rest = rest[:1].upper() + rest[1:]   # the ask opens a sentence of its own (a letter's request)
    rest = re.sub(r"^what\s+else\s+(?:is\s+there|have\s+you\s+got|do\s+you\s+have)\s+", "", rest, flags=re.I)
    rest = re.sub(r"\b(?:other|more|further|additional)\s+(?=(?:evidence|material|sources|papers|studies|research|"
                  r"literature|information|work)\b)", "", rest, count=1, flags=re.I)
    return _with_exclusion(rest, known)


def _known_exclusions(sentences: list[str], at: int) -> tuple[list[str], int]:
    """The request (``sentences[at]``) with what earlier sentences, the sentence after it, or a clause after its own
    dash or semicolon, say the writer already knows excluded; those sentences and clauses dropped.  Returns the
    sentences and the request's index among them."""
    request, kept = sentences[at], []
    for sentence in sentences[:at]:
        known = _already_known(sentence)
        if known is None and (alone := _KNOWN_SENTENCE_RE.fullmatch(_fold(sentence))):
            known = sentence[alone.start("known"):alone.end("known")]   # "I already know about X."
        if known:
            request = _with_exclusion(request, known)
        elif known is None:
            kept.append(sentence)
    parts = re.split(r"\s[-\u2013\u2014]+\s|;\s+", request, maxsplit=1)
    if len(parts) == 2 and parts[0].strip():
        known = _already_known(parts[1])
        if known is not None:
            head = parts[0].rstrip(" ,")
            end = request.rstrip()[len(request.rstrip().rstrip(".!?")):]   # the request's own "?" or "."
            request = _with_exclusion(head, known) if known else head + end
    after = sentences[at + 1:]
    if after and (known := _already_known(after[0])) is not None:   # "Find X? I've already done Y, so leave that out."
        request = _with_exclusion(request, known) if known else request
        after = after[1:]
    if request == sentences[at] and len(after) == len(sentences) - at - 1:
        return sentences, at
    return kept + [request] + after, len(kept)


# "How did Motown and the civil rights movement influence each other?", "How are A and B related?": the two
# topics of a relation asked about.
_MUTUAL_RE = re.compile(
    r"(?:how|in\s+what\s+ways?)\s+(?:do|does|did|have|has|can|could|might|would)\s+(?P<pair>.+?\s(?:and|&)\s.+?)\s+"
    r"(?:(?:influenced?|affected|affect|shaped?|impacted|impact|interacted\s+with|interact\s+with|related\s+to|"
    r"relate\s+to|depended\s+on|depend\s+on|compared?\s+(?:to|with))\s+(?:each\s+other|one\s+another)|relate|"
    r"interact|compare|differ)\s*[?.!]*$"
    r"|(?:how|in\s+what\s+ways?)\s+(?:are|is|were|was)\s+(?P<pair2>.+?\s(?:and|&)\s.+?)\s+"
    r"(?:related|connected|linked|associated)(?:\s+to\s+(?:each\s+other|one\s+another))?\s*[?.!]*$", re.S)


def _mutual(sentence: str) -> str:
    m = _MUTUAL_RE.match(_fold(sentence.strip()))
    if not m:
        return sentence
    group = "pair" if m.group("pair") is not None else "pair2"
    start = len(sentence) - len(sentence.lstrip())
    return sentence[start + m.start(group):start + m.end(group)]


# A request written as a letter: a salutation before it, a sign-off and a preference after it, and the
# writer's circumstances in front of the ask ("Dear librarian, I'm a Year 9 teacher ... Could you point me
# towards materials for X? Thank you.").  Only at the edges, and only sentences that say nothing else.
_SALUTATION_RE = re.compile(
    r"\s*(?:dear\s+[^\s,.!?:;]+(?:\s+[^\s,.!?:;]+){0,3}\s*[,:!]\s*|good\s+(?:morning|afternoon|evening|day)\b[\s,.!]*|"
    r"to\s+whom\s+it\s+may\s+concern\s*[,:!]\s*|as+alam(?:u|o)?\s*(?:o\s+)?alaikum\s*[,:!.]\s*|respected\s+(?:sir|madam|sir/madam|sir\s+or\s+madam|team|librarian)\s*[,:!]\s*|"
    r"(?:(?:hi|hello|hey|greetings|howdy|hiya)(?:\s+(?:there|all|everyone|everybody|folks|guys|y'all|"
    r"(?:[a-z]+\s+)?(?:team|desk|staff|colleagues|librarians?|library|archive|editors|admins?|moderators|mods|"
    r"experts|community|devs|developers|helpers|volunteers)))?|"
    r"sir|madam|sir\s+or\s+madam|sir/madam|g'day(?:\s+mate)?|hola|buenas(?:\s+(?:tardes|noches))?|bonjour|hallo|namaste|salaam|ciao|hej|ol\u00e1|ahoj|"
    r"buongiorno|buonasera|buenos\s+d[i\u00ed]as|guten\s+tag|dzie\u0144\s+dobry|dzien\s+dobry|dear|"
    r"(?:good\s+)?(?:morning|afternoon|evening)(?:\s+(?:team|all|everyone|everybody|folks))?|"
    r"merhaba|habari|naomba\s+msaada|urgent|urgente|asap)\s*(?:[,.!:]+|\s[-\u2013\u2014]+)\s*)"
    r"(?=\S)")
# a chat opener after the greeting ("Hi Priya, quick one -- could you ...", "Hey, quick q from the newsroom: ...")
_CHAT_OPENER_RE = re.compile(r"(?:quick|small|short)\s+(?:one|q|question|request|favour|favor|ask)\b"
                             r"(?:\s+(?:from|for)\s+[^,.!?:;\u2013\u2014]{1,40}?)?\s*(?:[,.!:]|\s[-\u2013\u2014]+)\s*(?=\S)")
# "Hi Priya, ...": a greeting and a name (capitalised in the text) before a comma
_NAMED_SALUTATION_RE = re.compile(r"\s*(?:hi|hello|hey)\s+(?P<name>[^\s,.!?:;]+(?:\s+[^\s,.!?:;]+)?)\s*,\s*(?=\S)", re.I)
_SIGN_OFF_RE = re.compile(
    r"(?:(?:many|a\s+lot\s+of|huge|big|massive)\s+)?(?:thanks|thank\s+you)\b(?!\s+to\b)(?:,?\s+[^\s]+){0,8}|"
    r"(?:cheers|best|best\s+(?:regards|wishes)|kind(?:est)?\s+regards|warm(?:est)?\s+regards|regards|sincerely|"
    r"with\s+(?:many\s+|my\s+)?(?:thanks|gratitude|best\s+wishes|(?:kind|warm|best)\s+regards|regards)|all\s+the\s+best|"
    r"thanking\s+you(?:\s+in\s+(?:anticipation|advance))?|"
    r"yours\s+(?:sincerely|truly|faithfully)|take\s+care|thx|ty|tia|ta|(?:please\s+|kindly\s+)?do\s+the\s+needful|"
    # thanks in the writer's first language
    r"asante(?:\s+sana)?|merci(?:\s+d'avance|\s+beaucoup)?|gracias|saludos|cordialement|atentamente|danke(?:\s+sch(?:\u00f6|oe)n)?|obrigad[oa]|shukran|"
    r"arigat(?:o|ou)(?:\s+gozaimasu)?|spasibo|te[s\u015f]ekk(?:u|\u00fc)rler|xie\s*xie|dhanyavaad|grazie(?:\s+mille)?|muchas\s+gracias|(?:please\s+|kindly\s+)?revert(?:\s+(?:back|soon|asap))?|"
    r"dzi(?:e|\u0119)kuj(?:e|\u0119)|dzi(?:e|\u0119)ki|pozdrawiam|shukriya|gamsahamnida|kamsahamnida|c\u1ea3m\s+\u01a1n|cam\s+on)"
    r"(?:\s*,\s*[^\s,]+(?:\s+[^\s,]+){0,5}){0,3}|"   # "Best, Tom Alvarez, Metro Desk"
    r"(?:(?:all|any)\s+)?(?:help|pointers|suggestions|ideas|advice|recommendations|tips|input|leads)"
    r"(?:\s+(?:would\s+be|will\s+be|is|are|much|greatly|very\s+much|really|gratefully|most))*\s+(?:appreciated|welcome)"
    r"(?:\s*[,.!]*\s*(?:thanks|thank\s+you|cheers|thx|ty)(?:\s+(?:so\s+much|a\s+lot|in\s+advance))?)?|"   # ", thanks!"
    r"(?:much|greatly|really)\s+appreciated")
# a closing reference for the desk ("Order number 55812.", "Policy no. MX44718", "Ref: 2231/B"): no topic
_REFERENCE_SENTENCE_RE = re.compile(r"(?i:(?:my|our|the)\s+)?(?i:order|policy|account|booking|reference|ref|customer|"
                                    r"membership|member|claim|ticket|case|invoice|reader|library\s+card|card)"
                                    r"(?i:\s*(?:number|no\.?|#|ref(?:erence)?|id))?\s*(?:[:#.]|\s+is)?\s*"
                                    r"[A-Za-z]{0,4}[-/]?\d[\w/-]*[.!]?")
_PREFERENCE_SENTENCE_RE = re.compile(r"(?:ideally|preferably|if\s+possible|bonus\s+(?:points\s+)?if)\b")
# a sentence of preferences among kinds of sources ("Trial results preferred but reviews are fine too.", "Case
# series are fine.", "Government or academic sources ideally.", "Nothing too technical please."): no topic
_SOURCE_WORDS = set("source sources result results trial trials review reviews case series study studies paper papers "
                    "episode episodes podcast podcasts video videos "
                    "article articles report reports data government academic peer-reviewed scholarly official grey "
                    "literature preprints preprint theses thesis books book news standards guidelines guideline "
                    "meta-analyses meta-analysis rcts rct clinical systematic primary secondary ones".split())
_PREFERENCE_WORDS = set("preferred preferable fine ok okay too also ideally would be great best ideal welcome are is "
                        "long short longer shorter "
                        "but or and nothing technical please better good the a mainly mostly only more less "
                        "very".split())
_PREFERS = {"preferred", "preferable", "fine", "ok", "okay", "ideally", "welcome", "better", "technical"}
_SOURCE_QUALITIES = {"synthetic", "older", "newer", "recent", "used", "new", "secondhand", "second-hand",
                     "refurbished"}   # "synthetic ones also okay", "Used is ok."


def _source_preference(sentence: str) -> bool:
    words = [w for w in (w.strip(",.;:!?()") for w in _fold(sentence).split()) if w and w not in _SOURCE_QUALITIES]
    named = set(words) & _PREFERS or (set(words) & _SOURCE_WORDS) - {"ones"}
    return bool(words) and len(words) <= 12 and bool(named) \
        and all(w in _SOURCE_WORDS or w in _PREFERENCE_WORDS for w in words)
# who the writer is, said after the request ("... in toddlers? I'm a worried mom lol", "I am a nursing student.")
_IDENTITY_SENTENCE_RE = re.compile(r"(?:i'm|i\s+am|we're|we\s+are)\s+(?:just\s+|only\s+)?(?:a|an)\s+[\w' -]{1,40}?"
                                   r"(?:\s+(?:lol|haha|lmao|btw|here))*")
# a ticket's or a newsroom's closing chatter: no topic ("Please advise.", "Nothing urgent.", "Deadline is 4pm.",
# "Ticket priority: low.", "Exec review Friday.", "Need it for a pricing review.", "Running an explainer next week.")
_CHATTER_SENTENCE_RE = re.compile(
    r"(?:please\s+advise|nothing\s+urgent|no\s+(?:rush|hurry)|not\s+urgent|(?:ticket\s+)?priority\s*:?\s*\w+|"
    r"ref(?:erence)?\s*(?:no\.?|number|#)?\s*:?\s*#?\w+|(?:the\s+)?deadline\s+is\s+[^.!?]{1,30}|"
    r"(?:(?:i|we)\s+)?(?:due|needed|need\s+it)\s+(?:by|before|on)\s+[^.!?]{1,30}|"
    r"(?:exec(?:utive)?|board|team|client|partner|committee)\s+(?:review|meeting|call|hearing)\s+"
    r"[^.!?]{1,20}|(?:(?:i|we)\s+)?need\s+it\s+for\s+(?:a|an|the|our|my)\s+[^.!?]{1,40}|"
    # "I want it for my father his birthday.", "We need them for the wedding."
    r"(?:i|we)\s+(?:want|need|would\s+like|'d\s+like)\s+(?:it|them|this|one)\s+(?:for|as)\s+(?:a|an|the|our|my|his|her|"
    r"their)\s+[^.!?]{1,40}|running\s+(?:an?|the)\s+[^.!?]{1,40}|"
    r"(?:(?:i|we)\s+)?need\s+(?:it|this|them)\s+(?:asap|urgently|today|tomorrow|soon|quickly|now)|"
    r"deadline\s*:?\s+(?:is\s+)?[^.!?]{1,30}|by\s+(?:\d{1,2}(?::\d\d)?\s*(?:am|pm)|cob|eod|close\s+of\s+business|noon|"
    r"monday|tuesday|wednesday|thursday|friday|tomorrow|today)(?:\s+(?:if\s+poss(?:ible)?|please|pls|ideally))?|"
    r"(?:please\s+)?help(?:\s+(?:me|us))?(?:\s+please)?|sounds\s+wild|just\s+curious|(?:thx|thanks)\s+in\s+advance|not\s+sure\s+(?:it|this|that|if\s+it|if\s+this)\s+"
    r"exists|(?:either|any)\s+(?:one\s+)?(?:is|works|would\s+do|would\s+work)(?:\s+fine)?|"
    r"(?:both|all)\s+(?:of\s+them\s+)?(?:have|need)\s+to\s+be\s+covered|"
    # what the writer needs it for, the language wanted ("It is for a conservation project in Chartres.", "Is
    # possible to find also in Russian language?")
    r"(?:it\s+is|it's|this\s+is|is)\s+for\s+(?:a|an|my|our|the)\s+[^.!?]{1,60}|"
    r"(?:is\s+(?:it\s+)?possible\s+to\s+(?:find|get|have)\s+(?:it\s+|them\s+|some\s+)?)?(?:also\s+)?(?:in|into)\s+"
    r"(?:the\s+)?[a-z]+\s+language|"
    r"results?\s+by\s+[^.!?]{1,30}?\s+would\s+be\s+(?:great|good|ideal|helpful|perfect)|only\s+in\s+english(?:\s+please)?|(?:i\s+need\s+)?(?:papers|sources|studies)\s+"
    r"that\s+cover\s+(?:both|all)(?:\s+of\s+them)?|that's\s+the\s+only\s+(?:part|thing|aspect)\s+i\s+care\s+about)"
    r"[\s.!?]*")
# the writer's circumstances as a closing sentence, after the request ("I have to brief the sourcing team on
# Monday.", "I am preparing a training for our inspectors.", "Our CFO wants to try it next year."); not when it
# names a topic ("I'm preparing a report on biochar.")
_CIRCUMSTANCE_SENTENCE_RE = re.compile(
    r"(?:(?:i|we)\s+(?:have|need|got)\s+to\s+(?:brief|present|report\s+to|prepare|update|advise|train|pitch|"
    r"finish|submit|deliver|send)|(?:i'm|i\s+am|we're|we\s+are)\s+(?:preparing|drafting|putting\s+together|building|"
    r"planning|organi[sz]ing|running|giving)\s+(?:a|an|the|our|my|some)|"
    r"(?:our|my)\s+(?:cfo|ceo|coo|cto|boss|manager|director|team|client|board|vp|head\s+of\s+\w+|lead|supervisor)\s+"
    r"(?:wants|needs|plans|is\s+planning|asked|has\s+asked)\s+to|"
    r"(?:(?:the|my|our)\s+)?(?:editor|boss|producer|desk|news\s+editor)\s+wants\s+(?:a|an|it|this|one)|"
    r"(?:the|my|our)\s+[\w-]+(?:\s+[\w-]+)?\s+(?:wants|needs|asked\s+for)\s+(?:it|this|them)\b|"
    r"(?:(?:i'm|i\s+am)\s+)?(?:doing|writing|working\s+on)\s+(?:my|our|a|an)\s+(?:\w+\s+)?(?:dissertation|thesis|essay|"
    r"project|assignment|coursework|report)\s+on\s+(?:it|this|that|them))\s*[^.!?]{0,80}[.!?]*")
_CIRCUMSTANCE_TOPIC_RE = re.compile(r"\b(?:on|about|regarding|concerning|into)\s+(?!(?:it|them|this|that|monday|tuesday|"
                                    r"wednesday|thursday|friday|saturday|sunday|tomorrow|today|time)\b)")
# the writer's aside after the request, in the third person or without a subject ("..., my son is lactose
# intolerant", "..., way too pricey", "..., tried it, didn't help", "... -- everyone already covers him", "..., we
# had a bad experience", "..., got my first job offer!!")
_ASIDE_TAIL_RE = re.compile(
    r"(?:,|\s[-\u2013\u2014]+)\s+(?P<aside>(?:my|our|his|her|their)\s+[\w'-]+(?:\s+[\w'-]+)?\s+(?:is|are|was|were|has|"
    r"have|had|keeps|wants|hates|loves|won't|can't|doesn't|didn't|just)\b[^,;:()]{0,60}|"
    r"(?:we|they|he|she)(?:'re|'ve|\s+are|\s+were|\s+had|\s+have|\s+is|\s+was)\s[^,;:()]{0,60}|"
    r"(?:(?:way|far|much)\s+)?too\s+\w+[^,;:()]{0,40}|tried\s+(?:it|them|that)\b[^;:()]{0,40}|"
    r"got\s+my\s+[^,;:()]{1,40}|everyone\s+(?:already\s+)?(?:covers|knows|does|writes)\b[^,;:()]{0,40})[\s.!?]*$")
_OWN_SENTENCE_RE = re.compile(r"(?:i|i'm|i've|i'd|i'll|my|mine|we|we're|we've|we'd|our)\s")
_NAMES_TOPIC_RE = re.compile(r"\b(?:especially|particularly|specifically|mainly|mostly|focus|focused|interest|interested|"
                             r"topic|question|subject|about|regarding|concerning|also|too)\b")
_MAX_CIRCUMSTANCE_WORDS = 25


def _own_statement(sentence: str) -> bool:
    """A first-person statement with no ask, no exclusion and no word that names a topic ("our team visits
    families at home", "My grandson is doing a school project.")."""
    low = _fold(sentence).strip()
    return _OWN_SENTENCE_RE.match(low) is not None and len(low.split()) <= _MAX_CIRCUMSTANCE_WORDS \
        and not _ASK_WORDS_RE.search(low) and not _EXCLUDING_WORDS_RE.search(low) \
        and not _CIRCUMSTANCE_TOPIC_RE.search(low) and not _NAMES_TOPIC_RE.search(low)


def _closing_circumstance(sentences: list[str]) -> bool:
    """The last sentence tells of the writer after a whole request ("Could you find X? My grandson is doing a
    school project.", "Any books on X? Mine keeps going flat."): a first-person statement with no ask, no
    exclusion and no word that names a topic."""
    if len(sentences) < 2:
        return False
    prev = _fold(sentences[-2]).strip()
    return (prev.endswith("?") or _REQUEST_RE.match(prev) is not None) and _own_statement(sentences[-1])


_SIGNATURE_RE = re.compile(r"(?<=[.!?])\s+[-\u2013\u2014]+\s*[A-Z][\w.'-]*(?:\s+[A-Z][\w.'-]*)?"
                           r"(?:\s*,\s*[A-Za-z][\w .()'-]{0,40})?\s*$")
# an ask after the writer's circumstances in one sentence ("I coordinate a choir and we are looking for X",
# "For an exhibit I'm curating, I need sources on X")
# "For a Wellcome application I need evidence on X": after a purpose, the ask needs no comma
_PURPOSE_ASK_RE = re.compile(r"\s+(?=(?:i|we)\s+(?:need|want|require|am\s+looking\s+for|'m\s+looking\s+for)\b|"
                             r"(?:i|we)(?:'d|\s+would)\s+be\s+(?:very\s+|most\s+)?grateful\b)")
_MID_ASK_RE = re.compile(
    r"(?:\s*,\s*|\s+(?:and|so|but)\s+|\s*[;:]\s*|\s+[-\u2013\u2014]+\s+)(?=(?:(?:i|we)(?:'m|'re|\s+am|\s+are)\s+(?:looking|searching|hunting)\s+for|"
    r"(?:i|we)(?:'d|\s+would)\s+(?:like|love|appreciate)|(?:(?:i|we)\s+)?(?:need|want)|would\s+(?:like|love)|"
    r"(?:i|we)\s+(?:search|look\s+for)|"
    r"(?:(?:i|we)\s+)?would\s+be\s+(?:very\s+|most\s+)?(?:grateful|glad|thankful)\s+for|"
    r"so\s+(?:please\s+)?(?:find|send|show|get)\s+(?:me|us)|(?:i|we)\s+(?:require|request)\s+" + _DOCUMENTS_NEXT + "|"
    r"(?:could|can|would)\s+you|(?:please\s+)?(?:find|send|show|get)\s+(?:me|us)|please\s+(?:send|find|pull)\b)\b)")
# the last clause of a request after a comma: the writer's circumstances or a closing ask
_CLOSING_ASK = (r"(?:(?:can|could|would)\s+(?:you|u|anyone|someone)\s+help(?:\s+(?:me|us))?|"
                r"[^,]{1,40}?\s+(?:preferred|preferable|a\s+plus|welcome)|any\s+(?:jurisdiction|language|year|date|format|"
                r"country|region|period)|"
                r"any\s+(?:ideas|help|thoughts|pointers|suggestions|leads|tips)|"
                r"(?:does\s+)?(?:anyone|anybody)\s+know\s+where\s+to\s+(?:start|look)|where\s+(?:should|do|would|can)\s+"
                r"(?:i|we)\s+(?:start|look|begin)|if\s+(?:any(?:\s+\w+)?\s+exists?|that\s+makes\s+sense|any|you\s+can)|"
                r"(?:please|pls|plz)\s+send\s+(?:me|us)\s+(?:some\s+|any\s+)?(?:sources|papers|links|articles|references)|"
                r"(?:whichever|whatever)\s+(?:you\s+(?:have|find|can\s+find|got)|is\s+(?:available|easier|quicker)|works)"
                r"(?:\s+to\s+find)?|(?:ideally|preferably)\s+[^,]{1,40})")
# the writer's purpose after the request: "... so we can size the market", "... to inform a feature"
_PURPOSE_TAIL_RE = re.compile(r"\s+(?:so\s+(?:that\s+)?(?:we|i)\s+(?:can|could)|to\s+inform\s+(?:a|an|the|our|my)|"
                              r"and\s+(?:would|'d)\s+(?:really\s+)?(?:appreciate|welcome|love|be\s+grateful\s+for)\s+"
                              r"(?:any|anything|whatever|all|some))\s+[^,;:.!?]{1,40}"
                              r"[.!?]?$")
_CLOSING_ASK_RE = re.compile(r"(?:,|\s[-\u2013\u2014]+)\s+" + _CLOSING_ASK)
_CLOSING_CLAUSE_RE = re.compile(r"(?:,\s++(?:(?:i|we)(?:'ve|'m|'re|'d|'ll)?\s++(?!(?:want|need|would|'d)\b)[^,()\[\]]*+|"
                                + _CLOSING_ASK + r")|\s[-\u2013\u2014]++\s++" + _CLOSING_ASK
                                + r")[\s.!?]*+$")   # possessive: linear on a run of spaces
# a clause that names a topic of its own: a relation before a noun, not a pronoun ("on the Refugee Convention";
# not "present on it")
_TOPIC_IN_CLAUSE_RE = re.compile(r"\b(?:on|about|regarding|concerning|into|for)\s+(?!(?:it|them|this|that|these|those|"
                                 r"friday|monday|tuesday|wednesday|thursday|saturday|sunday|tomorrow|today|now|"
                                 r"time|sure)\b)\w|\b(?:materials?|sources?|papers?|articles?|literature|studies|"
                                 r"information|info|readings?|references?|documents?)\b")
_EXCLUDING = "not|no|nothing|none|never|without|except|excluding|avoid|skip|ignore|rather|instead|neither|nor|don't|dont"
_EXCLUDING_WORDS_RE = re.compile(rf"\b(?:{_EXCLUDING}|but)\b")
_FIRST_PERSON_RE = re.compile(r"\b(?:i|i'm|i've|i'd|my|me|we|we're|we've|our|us)\b")
# the circumstances hold no ask and no exclusion of their own ("I'm not interested in X, I want Y")
_ASK_WORDS_RE = re.compile(rf"\b(?:need|want|looking\s+for|searching\s+for|like|could\s+you|can\s+you|find|"
                           rf"(?:i|we)\s+search|{_EXCLUDING})\b")


# An aside between two spaced dashes of one kind ("debt rescheduling -- Brazil or Mexico -- but not the IMF") is
# a bracket: a short span, no sentence punctuation or other dash inside, words on both sides.
_DASH_PAIR_RE = re.compile(r"(?<=\S)\s+(?P<dash>--|\u2013|\u2014)\s+(?P<body>[^\s.?!;:()\[\]\u2013\u2014-]"
                           r"[^.?!;:()\[\]\u2013\u2014]{0,78}?)\s+(?P=dash)\s+(?=\S)")
_MAX_PAIR_WORDS = 8


def _dash_pairs(text: str) -> str:
    def bracket(m: re.Match) -> str:
        body = m.group("body")
        if len(body.split()) > _MAX_PAIR_WORDS or " - " in body:
            return m.group(0)
        return f" ({body}) "

    return _DASH_PAIR_RE.sub(bracket, text)


# A dictated request ("um can you like find stuff on uh feline hyperthyroidism"): its hesitation words go, and so
# does a "like" that only fills a pause; only in a text that holds a hesitation word or opens with an assistant's
# wake words, where "like" is no verb ("I'd like", "looks like" keep theirs: see _FILLER_LIKE_RE).
_WAKE_RE = re.compile(r"\s*(?:(?:ok(?:ay)?|hey|hi)\s+(?:google|siri|alexa|cortana)|alexa|siri)\b[\s,.!]*", re.I)
_HESITATION_RE = re.compile(r"(?<![\w'-])(?:u+m+|u+h+|e+r+m+|e+r+|h+m+)(?![\w'-])[,.]?\s*")
_FILLER_LIKE_RE = re.compile(r"(?:^|(?<=\s)|\b(?P<before>so|you|not|just|and|but|find|is|it's|what's|about|on|me|for|or|was)\s+)"
                             r"like\b,?\s+")


def _spoken(text: str) -> str:
    wake = _WAKE_RE.match(text)
    if not wake and not _HESITATION_RE.search(text):
        return text
    if wake:
        text = text[wake.end():]
    out = _HESITATION_RE.sub("", text)
    low = _fold(out)
    for m in reversed(list(_FILLER_LIKE_RE.finditer(low))):
        if m.group("before") is None and m.start() > 0:
            continue   # "birds that look like dinosaurs"
        keep = out[m.start():m.start() + len(m.group("before")) + 1] if m.group("before") else ""
        out = out[:m.start()] + keep + out[m.end():]
    return out.strip() or text


# "Compare X with Y", "comparing X and Y": the two topics
_COMPARE_RE = re.compile(r"(?:please\s+)?(?:compare|comparing|contrast|contrasting)\s+(?=\S)")
_COMPARE_WITH_RE = re.compile(r"\s+(?:with|to|against|and|versus|vs\.?)\s+")


# "Which is better, Android or iOS?", "which is best for beginners: yoga or pilates" (the question first; after
# the alternatives: _WHICH_BETTER_RE below): two compared topics, as
# "A vs B (for X)" (the verdict asked for is no topic, and the "or" is no alternative)
_COMPARATIVE_ALTS = "(?:" + "|".join(sorted("""cheaper cheapest safer safest healthier healthiest faster fastest easier
    easiest stronger strongest quicker quickest sturdier sturdiest pricier priciest older oldest newer newest quieter
    quietest louder loudest bigger biggest smaller smallest lighter lightest heavier heaviest longer longest shorter
    shortest warmer warmest cooler coolest colder coldest hotter hottest softer softest harder hardest slower slowest
    cleaner cleanest greener greenest wider widest thinner thinnest thicker thickest higher highest lower lowest nicer
    nicest tougher toughest brighter brightest darker darkest fresher freshest richer richest simpler simplest closer
    closest larger largest earlier earliest tastier tastiest weaker weakest riskier riskiest spicier spiciest greater
    greatest cuter cutest busier busiest cosier cozier smarter smartest nearer nearest wealthier poorer happier
    friendlier prettier funnier scarier sweeter saltier crispier juicier rarer rarest""".split(), key=len, reverse=True)) + ")"
_WHICH_FIRST_RE = re.compile(
    r"(?i:(?:so\s+|ok\s+)?(?:(?:which|what)(?:\s+one)?(?:\s+is|'s|\s+would\s+be)\s+(?:the\s+)?(?:better|best|cheaper|"
    r"cheapest|safer|safest|healthier|healthiest|faster|fastest|easier|easiest)|"
    # after "which", any comparative of a list, with a word or two of its own ("Which is sturdier second hand, A or
    # B?"; a list, since many nouns end in -er: "What is the paper size, A4 or Letter?" asks for a size; and not
    # after "what": "What is lower back pain, muscle or kidney?")
    r"which(?:\s+one)?(?:\s+is|'s|\s+would\s+be)\s+(?:the\s+)?(?-i:worse|worst|(?:more|most|less|least)\s+[a-z]+|"
    + _COMPARATIVE_ALTS + r"))(?:\s+(?!(?:for|in|on|at|with)\b)[a-z-]+){0,2}"
    r"(?P<ground>\s+(?:for|in|on|at|with)\s+[^,:;?!.]{1,60}?)?\s*[,:]\s*)"
    r"(?P<a>[^,:;?!.]+?)\s+(?i:or)\s+(?P<b>[^,:;?!.]+?)\s*\?*\s*$")


# "I don't want cats, I want dogs", "i dont want horror, comedy films": a refusal first, then what is wanted
_REFUSAL_FIRST_RE = re.compile(
    r"(?i:(?:(?:i|we)\s+(?:do\s+not|don't|dont|don\u2019t)\s+(?:want|need)\s+(?!to\b)(?:any(?:thing)?\s+(?:on|about)\s+)?"
    # "(I'm) not interested in reviews, only primary research on statins"
    r"|(?:(?:i'm|i\u2019m|im|i\s+am|we're|we\s+are)\s+)?not\s+interested\s+in\s+))"
    r"(?P<x>[^,.;:!?]{1,80}?)\s*[,.;]\s*(?i:(?:but\s+)?(?:(?:i|we)(?:'d|\s+would)?\s+(?:want|need|prefer|like)|"
    r"(?:i'm|i\s+am|we're|we\s+are)\s+(?:looking|searching)\s+for|only|just|rather)\s+)?"
    r"(?P<y>[^,.;:!?]{1,120}?)\s*[.!]?\s*$")


def _rewrite_whole(text: str, pattern: re.Pattern, checked: tuple[str, ...], connectives: str, form: str) -> str:
    """``text`` written as ``form`` (its groups filled in, a missing one empty) where ``pattern`` matches it
    whole and the ``checked`` groups hold none of the ``connectives`` (a regex); else ``text``."""
    m = pattern.match(text.strip())
    if not m or re.search(connectives, " ".join(m.group(g) for g in checked), re.I):
        return text
    return form.format(**{k: v or "" for k, v in m.groupdict().items()})


def _which_better(text: str) -> str:
    return _rewrite_whole(text, _WHICH_FIRST_RE, ("a", "b"), r"\b(?:or|and|not|vs)\b", "{a} vs {b}{ground}")


def _refusal_first(text: str) -> str:
    return _rewrite_whole(text, _REFUSAL_FIRST_RE, ("y",), r"\b(?:not|no|don't|dont|without|except)\b",
                          "{y}, excluding {x}")


def _compare(sentence: str) -> str:
    m = _COMPARE_RE.match(_fold(sentence))
    if not m or _has_strong_aux(sentence):
        return sentence
    rest = sentence[m.end():]
    links = list(_COMPARE_WITH_RE.finditer(_fold(rest)))
    if len(links) != 1 or re.search(r"\b(?:and|or|not|but)\b", _fold(rest[:links[0].start()] + rest[links[0].end():])):
        return sentence
    return f"{rest[:links[0].start()]} and {rest[links[0].end():]}"


# A systematic review's question by its parts ("P: adults over 65; I: befriending; O: loneliness", "Population:
# ... Intervention: ... Outcome: ..."): each part is a topic of the search, ANDed; the parts' labels and what
# comes before the first one ("For a Cochrane-style review --") go.
_PICO_LABEL = (r"(?:p|population|patients?|participants|problem|i|interventions?|exposures?|e|c|comparators?|"
               r"comparisons?|control|o|outcomes?)")
_PICO_RE = re.compile(r"(?:^|(?<=[\s;.,(\u2013\u2014-]))" + _PICO_LABEL + r"\s*:\s*")


def _pico(text: str) -> str:
    low = _fold(text)
    labels = list(_PICO_RE.finditer(low))
    names = {m.group(0).rstrip(": ")[:1] for m in labels}   # the parts' initials: at least P or E and I or O
    if len(labels) < 2 or not ({"p", "e"} & names and {"i", "o", "c"} & names) or len(text) > _MAX_REPHRASED:
        return text
    parts = [text[m.end():(labels[k + 1].start() if k + 1 < len(labels) else len(text))] for k, m in enumerate(labels)]
    parts = [p.strip().strip(";,.").strip() for p in parts]
    return "; ".join(p for p in parts if p) or text


# A request laid out in lines (an e-mail or a ticket, markdown): read before the lines are joined.  A subject line
# with a body after it goes (the body asks), as do a "Body:" label, markdown's "#" and emphasis; a short header
# line labels what follows ("## Topic" / "## Not wanted": a spec's labels); bullet lines are a list, joined with
# "or" where the text says any one will do ("any of these", "Either is fine.", "- OR X"), with "and" where it
# says all ("all must apply", "Need all three covered together."), else with commas; a line that introduces the
# list and names no topic ("Need sources on any of these:", "Topics needed (all must apply):") goes.
_SUBJECT_RE = re.compile(r"\s*(?:subject|subj|re|fwd?)\s*:", re.I)
_BODY_RE = re.compile(r"\s*body\s*:\s*", re.I)
_TICKET_SUBJECT_RE = re.compile(r"\b(?:search|query|queries|help|request|ticket|question|results?|filter|access|loan|"
                                r"login|re|fwd|follow-up|please|urgent)\b")
_BULLET_LINE_RE = re.compile(r"\s*(?:[-*\u2022\u2023\u25e6\u2043]|\d{1,2}[.)])\s+(?=\S)")
_HEADER_RE = re.compile(r"\s*#{1,6}\s*")
_EMPHASIS_RE = re.compile(r"\*\*|__|(?<![\w*])\*(?=\S)|(?<=\S)\*(?![\w*])")
_ALL_CUE_RE = re.compile(r"\b(?:all|both|each|every|together)\b")
_ANY_CUE_RE = re.compile(r"\b(?:any|either|one\s+of|whichever)\b")
_CUE_SENTENCE_RE = re.compile(r"(?:need\s+|want\s+)?(?:all|both|each|any|either)\b[^.!?]{0,40}?\b(?:covered|together|fine|"
                              r"works?|ok|okay|do|apply|applies|good|one|welcome)\b[^.!?]{0,20}[.!]?")


def _layout(text: str) -> str:
    lines = [ln.strip() for ln in re.split(r"\r\n|\r|\n", text)]
    lines = [ln for ln in lines if ln]
    if len(lines) < 2 or len(text) > _MAX_LETTER:
        return text
    subject = _SUBJECT_RE.match(lines[0])
    if subject and (_BODY_RE.match(lines[1]) or _TICKET_SUBJECT_RE.search(_fold(lines[0][subject.end():]))
                    or _SALUTATION_RE.match(_fold(lines[1])) or _REQUEST_RE.match(_fold(lines[1]))):
        lines = lines[1:]   # (a "Subject:" before "Must include:" lines is the spec's topic)
    out: list[str] = []   # sentences
    items: list[str] = []
    head = ""

    def flush_list(after: str) -> None:
        if not items:
            return
        low = _fold(head + " " + after)
        ors = [bool(re.match(r"or\s+", _fold(x))) for x in items]
        plain = [re.sub(r"^(?:or|and)\s+", "", x, flags=re.I).rstrip(" .;,") for x in items]
        if any(ors) or (_ANY_CUE_RE.search(low) and not _ALL_CUE_RE.search(low)):
            body = " or ".join(plain)
        elif _ALL_CUE_RE.search(low):
            body = " and ".join(plain)
        else:
            body = ", ".join(plain)
        h = head.rstrip(" :")
        if out and out[-1] == head:
            out.pop()
        if h and not _LIST_HEAD_RE.fullmatch(_fold(h)) and not _asks_for_documents(h):
            out.append(f"{h}: {body}")
        else:
            out.append(body)
        items.clear()

    for k, line in enumerate(lines):
        line = _BODY_RE.sub("", _EMPHASIS_RE.sub("", line), count=1).strip()
        if not line:
            continue
        header = _HEADER_RE.match(line)
        if header and line.startswith("#"):
            line = line[header.end():].strip()
            if len(line.split()) <= 4 and not line.endswith(":"):
                line += ":"
        bullet = _BULLET_LINE_RE.match(line)
        if bullet:
            if not items and out:
                head = out[-1]
            items.append(line[bullet.end():].strip())
            continue
        if items:
            cue = _CUE_SENTENCE_RE.fullmatch(_fold(line))
            flush_list(line if cue else "")
            if cue:
                continue
        out.append(line)
    flush_list("")
    if len(out) >= 2 and _BARE_NAME_RE.fullmatch(out[-1]) and out[-2][-1:] in ".!?":
        out.pop()   # a name signed on a line of its own ("...?\n\nDorota Nowak"; not "Looking for:\nTolstoy")
    joined = []
    for sentence in out:   # a label's line joins what follows, as does a line that ends with a comma (a
        if joined and joined[-1].endswith((":", ",")):   # letter's "Dear desk," or "Best,"); other lines are
            joined[-1] += " " + sentence                  # sentences
        elif joined and _SIGN_OFF_RE.fullmatch(_fold(joined[-1]).rstrip(" .!")) and len(sentence.split()) <= 6 \
                and not sentence.endswith("?") and len(joined) > 1:
            joined[-1] += ", " + sentence   # "Best,\nJames\nOffice of Jane Doe MP": the signature's lines
        else:
            joined.append(sentence)
    return " ".join(x if x[-1:] in ".?!:;" else x.rstrip(",") + "." for x in joined)


# A search written as a spec ("Topic: X. Must include: Y. Must not include: Z.", "Subject: X\nMust include: Y",
# "Spec - must include: A; must not include: B"): each wanted part a topic, ANDed; each unwanted part excluded;
# what comes before the first label goes when it only names the search ("Watch literature search.", "Spec -").
_SPEC_LABEL_RE = re.compile(
    r"(?:^|(?<=[\s;.,(\u2013\u2014-]))(?:(?P<neg>must\s+not\s+(?:include|contain|cover|mention|have)|"
    r"mustn't\s+(?:include|contain|cover|mention|have)|should\s+not\s+(?:include|contain|cover|mention)|"
    r"exclude|excluded|exclusions?|not\s+wanted|unwanted|not|no|avoid)|(?P<alt>alternatives|options|either|any\s+of)|(?P<pos>must\s+(?:include|contain|cover|mention|have)|"
    r"should\s+(?:include|contain|cover|mention)|include|required|wanted|need|needed)|(?P<topic>topic|subject|"
    r"main\s+topic|keywords?|subtopic|query|scope|region|era|period|aspect|context|setting|place|country|focus|"
    r"also)|(?P<skip>format|type|deadline|due|date|dates|years?|language|"
    r"notes?|priority|ref|ticket))\s*[:=]\s*")
_SPEC_HEAD_RE = re.compile(r"(?:.*\b(?:search|spec|specification|query|request|brief|criteria)\b)?[\s.:\-\u2013\u2014]*$")
_MAX_SPEC = 1000


_JSON_KEYS = {"must": "and", "include": "and", "all": "and", "all_of": "and", "topic": "and", "topics": "and",
              "keywords": "and", "query": "and", "subject": "and", "required": "and", "any": "or", "any_of": "or",
              "should": "or", "either": "or", "one_of": "or", "must_not": "not", "exclude": "not", "none_of": "not",
              "not": "not", "excluded": "not", "without": "not"}


def _json_spec(text: str) -> str | None:
    """A search written as JSON ({"must": [...], "must_not": [...], "any_of": [...], "topic": "..."}): as words
    the lexer reads (each string quoted: a JSON value is one term); None when it is no such object."""
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    if not isinstance(obj, dict) or not obj:
        return None
    parts: dict[str, list[str]] = {"and": [], "or": [], "not": []}
    for key, value in obj.items():
        kind = _JSON_KEYS.get(str(key).strip().lower().replace("-", "_"))
        values = value if isinstance(value, list) else [value]
        if kind is None or not all(isinstance(v, str) and v.strip() for v in values):
            return None
        parts[kind] += [v.strip() for v in values]
    if not parts["and"] and not parts["or"]:
        return None
    quote = lambda v: '"' + v.replace('"', "'") + '"'   # noqa: E731
    groups = [quote(v) for v in parts["and"]]
    if parts["or"]:
        groups.append("(" + " or ".join(quote(v) for v in parts["or"]) + ")" if len(parts["or"]) > 1
                      else quote(parts["or"][0]))
    return " and ".join(groups) + "".join(f" and not {quote(v)}" for v in parts["not"])


def _spec(text: str) -> str:
    if len(text) > _MAX_SPEC:
        return text
    if text.lstrip().startswith("{"):
        as_json = _json_spec(text.strip())
        if as_json is not None:
            return as_json
    low = _fold(text)
    labels = list(_SPEC_LABEL_RE.finditer(low))
    if len(labels) == 1 and labels[0].start() == 0 and labels[0].group("topic") and ";" in text[labels[0].end():]:
        return text[labels[0].end():]   # "Keywords: A; B."
    if len(labels) < 2 or not (any(m.group("neg") or m.group("pos") or m.group("alt") for m in labels)
                               or all(m.group("topic") for m in labels)):   # "subject: X | subtopic: Y"
        return text
    head = text[:labels[0].start()]
    if head.strip() and not _SPEC_HEAD_RE.fullmatch(_fold(head)):
        return text   # a label inside a sentence of its own ("Please include: ...")
    wanted, unwanted = [], []
    for k, m in enumerate(labels):
        part = text[m.end():(labels[k + 1].start() if k + 1 < len(labels) else len(text))].strip().strip(";,.|").strip()
        if part and m.group("alt"):   # "Alternatives: A, B, or C"
            items = [x.strip() for x in re.split(r"\s*,\s*(?:or\s+)?|\s+or\s+", part) if x.strip()]
            wanted.append("(" + " or ".join(items) + ")" if len(items) > 1 else part)
        elif part and not m.group("skip"):
            (unwanted if m.group("neg") else wanted).append(part)
    if not wanted:
        return text
    return "; ".join(wanted) + "".join(f"; not {p}" for p in unwanted)


# A numbered list ("Looking for any of these: 1) X 2) Y 3) Z", "either 1) X or 2) Y"): its items are alternatives
# (an "and" before the last one, or "all" / "both" before the list, makes them topics to AND).  A head that ends
# with a colon and only introduces the list ("Need one of:", "Which of these is best documented:", "Topics I'd
# take:") goes; another head stays before the list.
_NUMBER_MARK_RE = re.compile(r"(?:^|(?<=[\s:;,(]))\(?(?P<n>[1-9])[).]\s+(?=\S)")
_LIST_HEAD_RE = re.compile(r"(?:.*\b(?:these|following|one\s+of|any\s+of|either|options|choices|topics?|ideas|"
                           r"which|whichever|any|all|both|i'd|i\s+would|i'll|take|terms|request|search|list|needed|"
                           r"apply|items)\b.*|)$")


def _numbered(text: str) -> str:
    if len(text) > _MAX_REPHRASED:
        return text
    marks = list(_NUMBER_MARK_RE.finditer(text))
    if len(marks) < 2:
        return text
    run = [marks[0]] if marks[0].group("n") == "1" else []
    for m in marks[1:]:
        if run and int(m.group("n")) == int(run[-1].group("n")) + 1:
            run.append(m)
    if len(run) < 2:
        return text
    end = re.search(r"(?<=[^\s.])[.?!](?:\s+|$)", text[run[-1].end():])   # the last item ends with its sentence
    stop = run[-1].end() + end.start() if end else len(text)
    items, joins = [], []
    for k, m in enumerate(run):
        item = text[m.end():(run[k + 1].start() if k + 1 < len(run) else stop)].strip()
        tail = re.search(r"(?:[\s,;]+(?P<c>and|or|and/or))?[\s,;]*$", item)
        joins.append(_fold(tail.group("c") or ""))
        items.append(item[:tail.start()].strip())
    if not all(items):
        return text
    head = text[:run[0].start()].rstrip()
    low_head = _fold(head)
    both = "and" in joins[:-1] or re.search(r"\b(?:all|both|each|every)\b", low_head)
    joined = (" and " if both else " or ").join(items)
    if head.endswith(":") and _LIST_HEAD_RE.match(low_head[:-1]):
        head = ""
    elif re.search(r"\beither$", low_head):
        pass
    elif head:
        joined = f"({joined})" if not head.endswith(":") else joined
    rest = text[stop:]
    return (f"{head} {joined}" if head else joined) + rest


# Examples of a topic ("X (e.g. A, B)", "X, e.g. A or B", "X such as A and B", "X, for instance A"): the topic
# ANDed with any of its examples; the examples run to a bracket's end, the sentence's end, or an exclusion.
_EXAMPLES_RE = re.compile(r"(?P<open>\s*\(\s*|\s*,\s*|\s+)(?:e\.?\s?g\.?|eg|such\s+as|for\s+example|for\s+instance|"
                          r"say|things\s+like|stuff\s+like)\s*[,:]?\s+(?=\S)")
_EXAMPLES_STOP_RE = re.compile(r"\)|[.?!;](?:\s|$)|,?\s+(?:but|not|no|nothing|except|excluding|without|other\s+than|"
                               r"rather\s+than|though|although|and\s+not|or\s+not|skip|ignore|leave\s+out)\b|$")
_MAX_EXAMPLE_WORDS = 6


def _examples(text: str) -> str:
    if len(text) > _MAX_REPHRASED:
        return text
    low = _fold(text)
    ask = _REQUEST_RE.match(low)
    if _has_any_aux(low[ask.end() if ask else 0:]):
        return text   # a claim's or a question's "such as" ("... is associated with diseases such as X")
    for m in _EXAMPLES_RE.finditer(low):
        before = text[:m.start()].strip()
        if not before or not before[-1:].isalnum() and before[-1:] not in ")'\u2019":
            continue
        if m.group("open").strip() == "" and not re.match(r"\s+(?:such\s+as|things\s+like|stuff\s+like)",
                                                          _fold(text[m.start():])):
            continue   # "e.g." and "say" need a comma or a bracket before them
        bracket = "(" in m.group("open")
        rest = text[m.end():]
        stop = _EXAMPLES_STOP_RE.search(rest)
        if bracket and not rest[stop.start():].startswith(")"):
            continue
        body = rest[:stop.start()].strip().rstrip(",")
        items = [p.strip() for p in re.split(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or|and/or)\s+", body)]
        if not all(items) or any(len(p.split()) > _MAX_EXAMPLE_WORDS for p in items):
            continue
        if len(items) > 1 and not bracket and not re.search(r"\b(?:and|or)\s+\S+(?:\s+\S+){0,5}$", body) \
                and not re.match(r"(?:things|stuff)\s+like", low[m.start():].strip(" ,")):
            continue   # "factors, such as lncRNAs, influence X": a list without its "and" / "or" is a clause
        after = rest[stop.end():] if bracket else rest[stop.start():]
        group = items[0] if len(items) == 1 else "(" + " or ".join(items) + ")"
        return f"{before} and {group}{after}"
    return text


# A teacher's assignment: the class it is addressed to and its date ("Class, for Thursday please read ...",
# "Students: find ...", "For next week, everyone should read up on ..."), and "X and one on Y" (a reading on each)
_ADDRESSEES_RE = re.compile(r"(?:(?:hey|hi|ok|okay|yo)\s+)?(?:class|students|pupils|everyone|everybody|team|folks|"
                            r"year\s+\d+|grade\s+\d+|form\s+\d+\w?|assistant|bot|computer|ai)\s*[,:\u2013\u2014-]\s*(?=\S)",
                            re.I)
_ASSIGNMENT_DATE_RE = re.compile(
    r"for\s+(?:next\s+(?:week|class|time|lesson|session|term)|tomorrow|tonight|(?:this\s+|next\s+)?(?:monday|tuesday|"
    r"wednesday|thursday|friday|saturday|sunday|weekend)|(?:the|our|this|next)\s+(?:workshop|seminar|class|lecture|"
    r"lesson|tutorial|meeting|session|exam|test|module|unit))\s*,?\s+(?=(?:please|everyone|everybody|each|all|you|"
    r"read|find|bring|choose|pick|look)\b)", re.I)
_ONE_ON_RE = re.compile(r"\b(?P<and>and|plus)\s+(?:one|another)\s+(?:on|about|regarding)\s+(?=\S)", re.I)


# Hedged asks: "I'm maybe interested in X", "Possibly a long shot, but anything on X?": the hedge names nothing
_MAYBE_RE = re.compile(r"\b(?P<who>i'm|i\s+am|i'd|i\s+would|we're|we'd|we\s+would)\s+(?:maybe|possibly|perhaps)\s+", re.I)
_LONG_SHOT_RE = re.compile(r"\s*(?:(?:possibly|probably|maybe|perhaps)\s+)?(?:a\s+|this\s+is\s+a\s+)?(?:long\s+shot|"
                           r"niche\s+one|weird\s+one|odd\s+one|strange\s+one|tough\s+one|big\s+ask|random\s+one)"
                           r"\s*(?:[,:;]|\s[-\u2013\u2014]+)\s*(?:but\s+)?(?=\S)", re.I)


_EXCLUSION_CUE_RE = re.compile(r"\b(?:not|no|without|except|excluding|but\s+not)\s+\S|[,;]\s*skip\s+\S", re.I)


def _sentence_before(m: re.Match) -> str:
    """What comes before ``m`` in its sentence."""
    return re.split(r"[.!?;]\s", m.string[:m.start()])[-1]


def _had_excluded(m: re.Match) -> str:
    """The match of _HAVE_THOSE_RE dropped when an exclusion comes before it in its sentence, else kept."""
    return "" if _EXCLUSION_CUE_RE.search(_sentence_before(m)) else m.group(0)   # ("skip" only after a comma)


def _hedged(text: str) -> str:
    text = _MAYBE_SUGGESTION_RE.sub(_suggested, text)
    return _MAYBE_RE.sub(r"\g<who> ", _LONG_SHOT_RE.sub("", text, count=1) if _LONG_SHOT_RE.match(text) else text)


# "red wine for lamb, maybe a Rioja or a Côtes du Rhône?": a suggestion after the topic is wanted too (its "or" no
# alternative of the topic's list); after an exclusion it is _ONLY_AFTER_EXCLUSION_RE's
_MAYBE_SUGGESTION_RE = re.compile(r"(?<![Nn]ot)(?<![Nn]o)(?<!without)(?<!excluding)(?<!except)"
                                  r"(?<=[^\W\d_]),\s+(?:maybe|perhaps|possibly)\s+(?:(?:a|an|some)\s+)?"
                                  r"(?!(?:if|when|as|because|not|no|i|we|you|it|they|that|this|there|something|anything)\b)"
                                  r"(?P<alts>[^\W\d_][^,;:.!?()\"]{0,60}?\bor\s+[^,;:.!?()\"]{1,60}?)"
                                  r"(?=\s*(?:[,;:.!?]|$))")


def _suggested(m: re.Match) -> str:
    """_MAYBE_SUGGESTION_RE's alternatives ANDed, unless its sentence is a statement or question of its own ("my son
    has a rash, maybe measles or chickenpox?": a guess) or the alternatives replace the topic ("..., maybe Boston or
    Philadelphia instead")."""
    before = _sentence_before(m)
    words = before.split()
    alts = [re.sub(r"^(?:a|an|some)\s+", "", a, flags=re.I).split() for a in re.split(r"\s+or\s+", m.group("alts"),
                                                                                      flags=re.I)]
    if _AUX_WORD_RE.search(before) and not _ASK_IN_RE.search(before) or re.search(r"\binstead\b", m.group("alts"), re.I) \
            or any(not a or _fold(a[0]) in _STATES_OF_THINGS for a in alts) \
            or len(words) > 1 and words[-1][:1].isupper() and all(a[0][:1].isupper() for a in alts) \
            or len(words) > 1 and _fold(words[-2]) in ("in", "to", "from", "near", "around", "visit", "at") \
            or len(words) <= 3 and before.strip().islower() and all(a[0].islower() for a in alts) \
            or re.fullmatch(r"\s*(?:an?|the)\s+\S+(?:\s+\S+)?\s*", before, re.I):
        # (nor a guess at what happened, "lost my cat, maybe stolen or run away", nor names beside the topic's last
        # name, "flights to London, maybe Paris or Amsterdam", or a place, "hotels in rome, maybe florence or venice":
        # more places of the same kind; nor more things like a short topic: "a kindle, maybe a kobo or a nook",
        # "nike pegasus, maybe asics or brooks")
        return m.group(0)
    return f", and ({m.group('alts')})"


_STATES_OF_THINGS = {"stolen", "broken", "taken", "eaten", "hidden", "run", "gone", "lost", "left", "sick", "ill",
                     "dead", "injured", "hurt", "missing", "damaged", "infected", "blocked", "cracked", "hacked",
                     "flooded", "stuck", "poisoned"}
# an ask in the sentence before the suggestion: "I'm looking for a new sofa, maybe velvet or leather"
_ASK_IN_RE = re.compile(r"\b(?:looking\s+for|searching\s+for|after|want|need|recommend|suggest|buy|find|get)\b", re.I)


_AUX_WORD_RE = re.compile(r"\b(?:is|are|was|were|has|have|had|do|does|did|can|could|should|would|will|i'm|it's|he's|"
                          r"she's|they're|we're|won't|can't|don't|doesn't|isn't|aren't|wasn't|didn't|wont|cant|dont|"
                          r"doesnt|isnt)\b", re.I)


def _assignment(text: str) -> str:
    if len(text) > _MAX_REPHRASED:
        return text
    out = _ADDRESSEES_RE.sub("", text, count=1) if _ADDRESSEES_RE.match(text) else text
    out = _ASSIGNMENT_DATE_RE.sub("", out, count=1) if _ASSIGNMENT_DATE_RE.match(out) else out
    if out == text:
        return text
    return _ONE_ON_RE.sub(r"\g<and> ", out)


# what the writer says of the "and" or "or" they typed: "Both have to be in there", "- all three must appear -",
# "Both must appear:", ", doesn't matter which" (the reading is the same without it)
_BOTH_REQUIRED_RE = re.compile(
    r"(?:(?<=^)|(?<=[,;:.!?(])|\s+[-\u2013\u2014]+)\s*(?:(?:both|all\s+(?:two|three|four|five)|all\s+of\s+them|each\s+of\s+them)"
    r"\s+(?:(?:have|has|need|needs)\s+to|must|should)\s+(?:be\s+(?:in\s+there|there|present|in\s+it|included|mentioned)|"
    r"appear|show\s+up)|(?:it\s+)?(?:doesn't|doesnt|doesn\u2019t|does\s+not|dont|don't)\s+matter\s+which(?:\s+one)?|either\s+(?:one\s+)?is\s+fine)"
    r"\s*(?:[.!:;)]+|\s[-\u2013\u2014]+|,|$)", re.I)
# "China or Japan both ok", "Either British or Irish would do", "UK or Iceland ideally": the alternatives are the
# writer's, the verdict is not
_EITHER_FINE_RE = re.compile(
    r"\s+(?i:(?:i\s+mean\s+)?(?:both|either(?:\s+one)?|either's|any(?:\s+of\s+them)?)\s+(?:is\s+|are\s+)?(?:ok|okay|fine|good)|(?:both\s+|either\s+)?"
    r"would\s+do(?:\s+fine)?|ideally|preferably)(?=\s*(?:[.!?]+\s*)?(?:$|[.!?]|\s[A-Z]))")
# A verdict on the last alternatives: "occultations by asteroid, Vesta or Ceres is ok", "A or B would be fine"
_OR_FINE_RE = re.compile(r"(\bor\s+[^\s,;:.!?]+(?:\s+[^\s,;:.!?]+){0,3}?)\s+(?:is|are|would\s+be)\s+(?:also\s+)?"
                         r"(?:ok|okay|fine|good|acceptable)(?=\s*[.!]*\s*$)", re.I)
# What a shop or library holds, asked with its availability ("Do you have X in stock?", "..., if the library has
# it"), and "any brand except X": the availability and the "any" are no topic
_HELD_TAIL_RE = re.compile(r"(\b(?:do|does)\s+(?:you|u|the\s+\w+)\s+(?:still\s+)?(?:have|stock|sell|carry)\b[^?.!]*?)\s+"
                           r"(?:in\s+stock|available|at\s+the\s+moment|right\s+now|currently)(?=\s*[?.!]|\s*$)", re.I)
# a closing question of the thing's status: "late checkout possible?", "day tickets for saturday still available?",
# "SKU BP-44871 back in stock?", "transferring membership — possible?" (every writer's label but two drops it)
_STATUS_TAIL_RE = re.compile(r"(?<=\w)(?<!\bif)(?<!\bwhere)(?<!\bwhen)(?:\s*[,\u2013\u2014]\s*|\s+-+\s+|\s+)"
                             r"(?:(?:is|are)\s+(?:it|they|these|those)\s+)?"
                             r"(?:still\s+|back\s+|currently\s+)?(?:possible|available|in\s+stock)(?=\s*\?*\s*$)", re.I)
_IF_HELD_RE = re.compile(r",?\s+if\s+(?:the\s+\w+|you)\s+(?:still\s+)?(?:has|have|hold|holds|stock|stocks|keep|keeps)\s+"
                         r"(?:it|them|one|a\s+copy|copies)\b|"
                         r",\s+(?:do\s+)?(?:you|u)\s+(?:still\s+)?(?:have|stock|sell|carry)\s+(?:it|them|one|some|any|these|those)"
                         r"(?=\s*(?:[?.!]|$))", re.I)   # a learner's "..., you have them?"
_ANY_KIND_RE = re.compile(r"\b(?:any|all)\s+(?:other\s+)?(?:(?:years?|decades?|periods?|styles?|flavou?rs?)\s+"
                          r"(?=(?:except|other\s+than|apart\s+from|excluding)\b)|(?:brands?|makes?|models?|kinds?|types?|"
                          r"colou?rs?|sizes?|editions?|versions?)\s+(?:(?=(?:except|other\s+than|apart\s+from|excluding)\b)|"
                          r"(?P<but>but|besides|bar)\s+))", re.I)
# "carbon or HEPA, whichever you stock": a verdict on the alternatives
_WHICHEVER_RE = re.compile(r",?\s+whatever\s+(?:you|u)\s+(?:have|'ve\s+got|got)(?=\s*[.!?:)]*\s*$)|"
                           r",?\s+whichever\s+(?:(?:one\s+)?(?:you|u)\s+(?:stock|have|sell|carry|offer)|exists?|is\s+(?:available|"
                           r"cheaper|in\s+stock|easier))(?=\s*[.!?]*\s*$)", re.I)
# "A or B, not both at once", "not the ones covering both", "- one or the other": "but not both"
_NOT_BOTH_PHRASE_RE = re.compile(r"(?:\s*[-\u2013\u2014,]\s*|\s+)(?:but\s+)?not\s+(?:(?:the\s+)?ones?\s+(?:covering|mentioning|with|"
                                 r"about|that\s+(?:cover|mention|have))\s+both(?:\s+of\s+them)?(?:\s+in)?|a\s+mix\s+of\s+the\s+two|"
                                 r"both\s+(?:at\s+once|together|at\s+the\s+same\s+time|in\s+the\s+same\s+\w+))"
                                 r"(?=\s*[.!?]*\s*$|\s*,\s*(?:we|i|they|as|since|because)\b)", re.I)
_ONE_OR_OTHER_RE = re.compile(r"\s*[-\u2013\u2014,]?\s+one\s+or\s+the\s+other\b", re.I)
# "Which foot cream for diabetic feet (do) you recommend?": an ask for the thing
_RECOMMEND_RE = re.compile(r"\b(?:which|what)\s+(?P<x>[^?.!]{3,80}?)\s+(?:(?:do|would|can|could)\s+)?(?:you|u)\s+"
                           r"(?:recommend|suggest|advise)\b", re.I)
# a lost-property desk's "has anyone handed in X", "has a X been handed in", "X handed in?": the thing
_HANDED_IN_RE = re.compile(r"(?:^|(?<=[,.!?]\s))(?:(?:has|have)\s+(?:anyone|anybody|someone|somebody)\s+handed\s+in\s+|"
                           r"(?:has|have)\s+(?=(?:a|an|any|my|the)\s+[^?.!]{2,60}?\s+been\s+handed\s+in\b))|"
                           r"\s+(?:been\s+)?handed\s+in(?=\s*(?:[?.!,;]|$))", re.I)
# where the writer expects the thing to be: "X in your archive", "X in the collection", "X on my policy" (no topic)
_IN_YOUR_HOLDINGS_RE = re.compile(r"\s+(?:in\s+(?:(?:your|our)\s+(?:archives?|collections?|catalogues?|catalogs?|database|holdings|"
                                  r"library|shop|store|seed\s+bank)|the\s+(?:archives?|collections?|catalogues?|catalogs?|"
                                  r"holdings))|on\s+(?:my|our)\s+(?:policy|account|plan|contract|membership|booking|card|tariff))"
                                  r"(?=\s*(?:[?.!,;]|$))", re.I)   # (not "noise in the library": a topic)
# Questions of when and whether a thing is on: "what time does the X start", "when does X open", "Is the X still
# open?": the thing
_WHEN_ON_RE = re.compile(r"(?:(?:does\s+)?(?:anyone|anybody)\s+know\s+)?(?:what\s+time|when)\s+(?:does|do|will|is|are)\s+"
                         r"(?P<x>[^?.!,;]{3,80}?)\s+(?:start|open|close|finish|end|begin|kick\s+off|take\s+place)"
                         r"(?=\s*(?:[?.!]|$))|(?:is|are)\s+(?P<y>(?:the|your|this|that)\s+[^?.!,;]{3,80}?)\s+still\s+(?:open|"
                         r"available|running|on|going|happening|active|valid|accepting\s+\w+|taking\s+\w+)(?=\s*(?:[?.!]|$))|"
                         # "is turn left at orion in the library?", "is the X on display anywhere": the thing held
                         r"(?:is|are)\s+(?P<z>[^?.!,;]{3,80}?)\s+(?:in\s+the\s+library|in\s+stock|on\s+display(?:\s+anywhere)?|"
                         r"available\s+to\s+(?:borrow|buy|view|see))(?=\s*(?:[?.!]|$))",
                         re.I)
# An exclusion written after its topic: "trials of statins, pregnant women excluded", "gene therapy with cancer
# excluded", "X, Y not included": read as "X, excluding Y" (a clause of at most six words, at the end of the text
# or before a comma or a stop; "with" only before such a clause: "trials with women excluded from enrolment" goes on)
_POSTFIX_EXCLUSION_RE = re.compile(
    r"(?:,\s*|\s+with\s+|\s+--?\s+|\s*[\u2013\u2014]\s*|\s*\((?=[^()]*\)))(?:the\s+)?(?P<what>[^\s,;:.!?()]+(?:\s+[^\s,;:.!?()]+){0,5}?)\s+"
    r"(?:excluded|not\s+included|left\s+out|(?:is|are)\s+off\s+the\s+table|(?:is|are)\s+out(?:\s+of\s+scope)?|"
    r"not\s+(?:wanted|needed|required|welcome)|(?:is|are)\s+(?:a\s+)?(?:no|no-go|no\s+go|dealbreaker|deal-breaker))"
    r"\)?(?=\s*(?:[.!?]+\s*$|$|[,;]\s))", re.I)
# "tomato blight treatments no copper sprays please": a closing "no X please" excludes X though no comma sets it
# off (at most four words, lower case, after a lower-case word: not "No Man's Sky", "Dr. No")
_NO_PLEASE_RE = re.compile(r"(?<=[a-z0-9])(?<!\bbut)(?<!\band)(?<!\bor)(?<!\bwith)(?<!\bnor)\s+no\s+(?P<what>[a-zA-Z0-9][\w'-]*(?:\s+[a-z0-9][\w'-]*){0,3}?)\s+"
                           r"(?:please|pls|plz)(?=\s*[.!]*\s*$)")
# A keyword string in lower case with one "no" between two phrases: "condoms no latex", "marathon training beginners
# no keto diet" (not a "no" that opens or closes it, nor "no win no fee", "yes or no", "no-fault")
_KEYWORD_NO_RE = re.compile(r"(?P<what>[a-z0-9][a-z0-9'-]*(?:\s+[a-z0-9][a-z0-9'-]*){0,7}?)"
                            r"(?<!\bor)(?<!\band)(?<!\bbut)(?<!\bwith)(?<!\bnor)(?<!\bis)(?<!\bare)(?<!\bhave)(?<!\bhas)"
                            r"(?<!\bof)(?<!\bsay)(?<!\bsays)(?<!\bsaid)(?<!\bbest)(?<!\beasy)(?<!\bquick)(?<!\btop)"
                            r"(?<!\bthe)(?<!\ba)"
                            r"\s+no\s+(?!(?:longer|more|less|matter|doubt|one|way|to|bake|knead|dig|sew|fee|win|deal|fault|"
                            r"code|show|go|return|man's|mans|limit|limits|cost|charge)\b)(?P<not>[a-z][a-z0-9'-]*(?:\s+[a-z0-9][a-z0-9'-]*){0,3})")
# "hand tools only no power tools": a "no" right after "only" opens an exclusion (not "the only no-fee account")
# (only after a topic's word: not "I want only no bake desserts", "states with only no fault divorce", nor after a
# comma: "cheesecake recipes, only no bake"; not compounds of "no": "no dig", "no sugar added")
_ONLY_NO_RE = re.compile(r"(?:(?P<det>\b(?:the|a|an|my|your|our|their|his|her|its|want|wants|with|need|needs|have|has|"
                         r"buy|see|get|show|find|like|use|sell|do|does|is|are)\s+)|(?<=[^\W\d_]|[)\"'\u201d])\s+)(?P<only>only),?\s+no\s+"
                         r"(?!(?:longer|more|less|matter|doubt|idea|one|way|fee|fees|deal|limit|cost|charge|bake|dig|sew|fault|"
                         r"deposit|kill|frills|sugar|code|knead|win|claims?|show|go|return|fuss|strings|touch|smoking)\b)"
                         # (the last clause, a few words: not "wifi only no cellular iPad mini", "NHS only no private,
                         # near Leeds")
                         r"(?=[a-z][^\s,;:.!?()]*(?:\s+[^\s,;:.!?()]+)?[.!?]*\s*$)", re.I)
# "heat stress in dairy cows, looking for stuff on both fans and sprinklers": an ask after the topic adds topics
_LATER_ASK_RE = re.compile(r",\s+(?:(?:i'm|im|i\s+am|we're|we\s+are)\s+)?(?:looking|searching)\s+for\s+(?:some\s+)?"
                           r"(?:stuff|info|information|anything|material|something|papers|articles|documents|sources)\s+"
                           r"(?:on|about|regarding)\s+(?=\S)", re.I)
# "standards for rail equipment that cover both vibration testing and shock testing", "mods that work with both X
# and Y": the relative clause's "both" adds its topics to the head
_RELATIVE_BOTH_RE = re.compile(r"(?<!\bdocuments)(?<!\barticles)(?<!\bpapers)(?<!\bstudies)(?<!\bsomething)(?<!\banything)"
                               r"(?<!\bstuff)(?<!\bsheets)(?<!\breports)(?<!\bsources)(?<!\btexts)(?<!\bresearch)"
                               r"\s+(?:that|which)\s+(?:cover|covers|discuss|discusses|mention|mentions|include|includes|"
                               r"combine|combines|address|addresses|(?:deal|deals|work|works)\s+with|compare|compares)"
                               r"\s+(?=both\s)", re.I)
# "..., but not Argentina -- we have plenty on that already", "(already have those)": the writer's reason
_HAVE_PLENTY_RE = re.compile(
    r"\s*(?:[-\u2013\u2014]+|,|\()\s*(?:(?:we|i)(?:'ve|\s+have)?\s+|(?:we|i)\s+)?(?:already\s+)?(?:have|got)\s+"
    r"(?:plenty|enough|lots|loads|those|that|them|these)(?:\s+(?:on|of|about)\s+(?:that|those|it|them|these))?"
    r"(?:\s+already)?\s*\)?(?=\s*(?:[.!?]|$))", re.I)
# "itchy scalp - neither dandruff nor lice, something else": after an exclusion, what is left names nothing
_SOMETHING_ELSE_RE = re.compile(r"(?<=\w),\s*(?:but\s+)?(?:something|anything)\s+else(?:\s+(?:please|pls|then|instead))?"
                                r"(?=\s*[.!?]*\s*$)")   # (lower case: "The Kinks vinyl, Something Else" names an album)
# "snowsuit 12-18m, nothing from smoking homes": the last clause excludes (not "..., nothing from the seller, refund
# options", "nothing from them": no answer yet)
_NOTHING_FROM_RE = re.compile(r"^(?P<before>(?:(?!\b(?:applied|sent|emailed|e-mailed|called|rang|phoned|wrote|ordered|reported|"
                              r"complained|asked|submitted|paid|booked|posted|interviewed|contacted|chased|requested|filed|"
                              r"returned|messaged|had|got|went|saw|visited|attended)\b)[^.;!?])*?),\s+nothing\s+from\s+(?!(?:them|him|her|anyone|anybody|my|"
                              r"our|your|the\s+(?:buyer|seller|recruiter|employer|landlord|company|council|bank|agent|office|"
                              r"school|insurer|airline|embassy|builder|dealer|hospital|court|university|surgery|"
                              r"consultant|doctor|gp|vet|lawyer|solicitor)s?)\b)"
                              r"(?=[^,;:.!?]+[.!?]*\s*$)", re.I)
# what the writer does not mind ("Not bothered about colour but no refinished ones", "not fussy about the brand,
# no plastic"): no exclusion, nothing to search for (the "but" after it stays)
_INDIFFERENT_RE = re.compile(r"(?:(?<=^)|(?<=[,;.!?(\u2013\u2014-]\s)|(?<=[,;.!?(]))\s*"
                             r"(?:(?:i'm|im|i\s+am|we're|we\s+are)\s+)?(?:not|nt)\s+(?:too\s+|really\s+|that\s+)?"
                             r"(?:bothered|fussed|fussy|picky|worried|particular)\s+(?:about|by|with|re|on)\s+"
                             r"(?:the\s+|its\s+|their\s+)?(?:colou?rs?|sizes?|brands?|prices?|styles?|models?|years?|makes?|"
                             r"condition|age|length|shapes?|materials?|finish|fabric|pattern|design)"
                             r"(?:\s*[,;.!]+|(?=\s+(?:but|just|only|no|not|as\s+long)\b)|\s*$)", re.I)
# "skip matilda and the bfg we have those", "not Moana we already have that one": the same without a separator,
# after an exclusion in the same sentence (not "how do I know if I have it")
_HAVE_THOSE_RE = re.compile(r"(?<=\w)\s+(?:(?:as|since|because|cause|coz|cos)\s+)?(?:we|i)(?:'ve|\s+have)?\s+(?:already\s+)?"
                            r"(?:have|got)\s+(?:that|those|them|these|it)(?:\s+ones?)?(?:\s+already)?"
                            r"(?=\s*(?:[.!?]|$))", re.I)
# ", is for my master thesis", ", it's for our NGO report" closing a request: the writer's purpose
# "I'm writing a grant on X and would be grateful for recent primary research": an ask of documents after the topic
# names nothing more ("... and would appreciate any papers")
_GRATEFUL_CLAUSE_RE = re.compile(r",?\s+and\s+(?:i\s+)?(?:would|'d)\s+(?:be\s+(?:very\s+|most\s+|really\s+)?(?:grateful|thankful)\s+"
                                 r"for|appreciate|love|like)\s+(?:(?:any|some|a\s+few|the|more)\s+)?(?:(?:recent|primary|"
                                 r"good|new|relevant|useful|current|peer[- ]reviewed|published|original|key|further)\s+)*"
                                 r"(?:research|papers?|articles?|studies|sources|literature|references|reading|help|"
                                 r"pointers|suggestions|recommendations)(?=\s*(?:[.!?]|$))", re.I)
# "A or B, but only if it covers Z", "A or B, as long as it mentions Z": Z is wanted beside the whole of what came
# before (", and Z": not "A OR (B AND Z)")
_ONLY_IF_RE = re.compile(r",?\s+(?:but\s+only\s+if\s+(?:(?:it's|it\s+is|they're|they\s+are|they|it|the)\s+)?"
                         r"(?:(?:covers?|includes?|mentions?|discuss(?:es)?|has|have)\s+)?"
                         r"|(?:but\s+)?(?:as|so)\s+long\s+as\s+(?:it|they|the\s+\w+)\s+"
                         r"(?:covers?|includes?|mentions?|discuss(?:es)?|deals?\s+with|(?:is|are)\s+about)\s+)(?=\S)", re.I)
_PURPOSE_CLAUSE_RE = re.compile(r",\s*(?:it\s+is|it's|this\s+is|is)\s+for\s+(?:my|our|a|an|the)\s+[^,;.!?]{1,40}"
                                r"(?=\s*(?:[.!?]|$))", re.I)
# what the request is for: school work ("for my history essay, due friday", ", for a 5th grade report"), a meeting
# ("for a client meeting tomorrow"), a newsroom's piece ("for a feature"): no topic.  Only the writer's own work
# or a grade ("templates for a research paper" names its topic; a reader's age, "for a 10 year old", qualifies
# what is wanted).  A comma after it is kept apart for _drop_purpose.
_WORK_PURPOSE_RE = re.compile(r"(?:"
    r"(?:,\s*|\s+)for\s+(?:(?:my|our|his|her|their)\s+(?:[\w-]+\s+){0,2}?|(?:a|an|my|our)\s+(?:\d{1,2}(?:st|nd|rd|th)|"
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)[- ]grade\s+(?:[\w-]+\s+)?)"
    r"(?:essay|report|project|assignment|homework|paper|presentation|class|thesis|dissertation|coursework|seminar|"
    r"capstone|module|course|exam|lecture)"
    r"(?:\s*,?\s*due\s+[\w ]{1,20}?)?(?=\s*(?:[.!?]+\s*$|$|[,;]\s|[-\u2013\u2014]+\s))"
    r"|(?<!it's)(?<!it\sis)(?<!this\sis)(?:,\s*|\s+)for\s+(?:a|an|the|my|our|tomorrow's|today's)\s+"
    r"(?:client|team|board|staff|committee|ward|case)\s+"
    r"(?:meeting|call|review|presentation|briefing|handover|conference)(?:\s+(?:tomorrow|today|tonight|on\s+\w+|"
    r"next\s+\w+|this\s+\w+))?(?=\s*(?:[.!?]+\s*$|$|[,;]\s|[-\u2013\u2014]+\s))"
    # a newsroom's: "for a feature", "for an explainer running next month", "for Sunday's long read"
    r"|(?<!need)(?:,\s*|\s+)for\s+(?:a|an|our|my|the|this|next\s+week's|[a-z]+day's)\s+(?:[\w-]+\s+)?(?:feature|piece|explainer|"
    r"long\s+read|sidebar|backgrounder|profile|package|segment|podcast|documentary|retrospective|op-ed|column)"
    r"(?:\s+(?:running|due|out|going\s+out)\s+[\w ]{1,20}?)?(?=\s*(?:[.!?]+(?:\s|$)|$|[,;]\s))"
    r")(?P<comma>,(?=\s))?", re.I)


def _drop_purpose(m: re.Match) -> str:
    """The purpose goes; a comma after it stays, unless the purpose opened its clause ("Hey team -- for my Sunday
    feature, can you ...")."""
    before = m.string[:m.start()].rstrip()
    opens = not before or before[-1] in "-\u2013\u2014:;.!?"
    return "," if m.group("comma") and not opens else ""


# ", clinical trial is better", ", synthetic ones also okay": a preference among kinds of sources
_PREFERENCE_CLAUSE_RE = re.compile(r",\s*(?P<clause>[^,;.!?]{1,60})(?=\s*[.!?]*\s*$)")


def _drop_preference_clause(text: str) -> str:
    m = _PREFERENCE_CLAUSE_RE.search(text)
    return text[:m.start()] + text[m.end("clause"):] if m and m.start() > 0 and _source_preference(m.group("clause")) \
        else text


# "documents containing the exact phrase "X"", "anything using the phrase "X"": the quoted phrase is the term
_EXACT_PHRASE_RE = re.compile(
    r"\b(?:(?:anything|something|documents?|texts?|pages?|papers?|articles?|results?|sources?)\s+)?(?:containing|using|"
    r"with|mentioning|including|that\s+(?:contains?|uses?|mentions?|includes?))\s+the\s+(?:exact\s+)?(?:phrase|words?|"
    r"term|expression|string)\s*(?=[\"\u201c])", re.I)


# Boolean operators typed loosely in a search string: "A | B | C" is an "or"; with a spaced " + " in the string,
# a spaced " - " before a word excludes ("social housing + energy retrofits - heat pumps").
_PIPE_RE = re.compile(r"(?<=\S)\s+\|\s+(?=\S)")
_LOOSE_MINUS_RE = re.compile(r"(?<=\w)\s+-\s+(?=[^\W\d])")


_EMPHASIS_MARK_RE = re.compile(r"(?<![\w*])\*{1,2}(?P<word>[^\W_][\w'-]*(?:\s+[\w'-]+){0,3})\*{1,2}(?![\w*])")
# a double negation requires: "X -- not without Y", "X, and nothing that doesn't use Y", "X -- I don't want
# anything that isn't about Y", "X -- no results that aren't about Y", "X -- skip anything not about Y"
_DOUBLE_NEGATION_RE = re.compile(
    r"(?:\s*,\s*|\s+[-\u2013\u2014]+\s*|\s+)(?:and\s+|but\s+)?(?:not\s+without|(?:nothing|no\s+(?:results?|papers|studies|"
    r"articles|sources)|(?:skip|ignore|drop)\s+anything|(?:i|we)\s+(?:don't|do\s+not)\s+want\s+(?:anything|results|papers|"
    r"studies))\s+(?:that\s+|which\s+)?(?:(?:doesn't|don't|isn't|aren't|does\s+not|do\s+not|is\s+not|are\s+not)\s+"
    r"(?:use|mention|cover|include|deal\s+with|about)|lacks?|not\s+about))\s+(?:some\s+|any\s+)?(?=\S)", re.I)
# "A or B (or both) and C": the remark closes the alternatives ("A or B, and C"), it names nothing
_OR_BOTH_RE = re.compile(r"\s*\((?:or|and/or)\s+(?:both|all\s+(?:three|of\s+them))\)(?P<more>(?=\s+\w))?", re.I)
# "X; skip Y", "X, skip Y": an exclusion ("skip hire", "skip counting" after a comma are still topics)
_SKIP_CLAUSE_RE = re.compile(r"(?<=[;,])\s*skip\s+(?!(?:the|any|anything|everything|all|hire|hires|rope|bins?|lorr(?:y|ies)|"
                             r"counting|breakfast|meals?|"
                             r"school|class|classes|work|a\s+grade|generation|tracing|list|lists)\b)(?=\w)", re.I)
# "X, including A and B": the parts named are required too
_INCLUDING_RE = re.compile(r"\s*,\s*including\s+(?:both\s+)?(?=\S)", re.I)
# "at least one of A, B, C", "any of the following: A, B or C": alternatives, to the clause's end
_ANY_OF_RE = re.compile(r"\b(?:at\s+least\s+one\s+of|any\s+(?:one\s+)?of)(?:\s+the\s+following)?\s*:?\s+(?=\S)", re.I)


def _any_of_lists(text: str) -> str:
    m = _ANY_OF_RE.search(text)
    if not m:
        return text
    end = re.search(r"\s+[-\u2013\u2014]+\s|[;.!?](?:\s|$)|$", text[m.end():])
    body = text[m.end():m.end() + end.start()]
    if re.search(r"\b(?:or|and|nor)\b", text[m.end():], re.I):
        return text   # "any of A, B or C": the connectives group it already ("iron and steel" is one item)
    items = [p.strip() for p in body.split(",") if p.strip()]   # "at least one of A, B, C": commas only
    if len(items) < 2 or any(len(p.split()) > 8 for p in items):
        return text
    return text[:m.start()] + "(" + " or ".join(items) + ")" + text[m.end() + end.start():]


# "X, in particular Y", "X -- specifically Y", "X: specifically Y": Y narrows X, and both are required
_NARROWING_RE = re.compile(r"(?P<sep>\s*[,:]\s*|\s+[-\u2013\u2014]+\s*)(?:in\s+particular|specifically|more\s+specifically)"
                           r"\s*,?\s+(?=\S)", re.I)
_HASHTAG_RE = re.compile(r"(?<![\w#])(?P<sign>[-+]?)#(?P<tag>\w[\w'-]*)")
_BRACKET_ASIDE_RE = re.compile(r"(?<=\S)\s+[\[{](?P<body>[^\[\]{}()]{1,160})[\]}](?=[\s,;.!?]|$)")
_SPACED_PLUS_RE = re.compile(r"(?<=[^\W\d_])\s+\+\s+(?=[^\W\d_])")
# "X, esp. Y", "X w/ a focus on Y": a preference, not a requirement (the writers drop it)
_PREFERENCE_TAIL_RE = re.compile(r"(?:,\s*|\s+)(?:esp\.|especially|particularly|preferably|ideally|(?:w/|with)\s+(?:a\s+|"
                                 r"particular\s+|special\s+)?(?:focus|emphasis)\s+on)\s+(?!(?:not|no|without|excluding)\b)"
                                 r"[^,;.!?()]{1,80}(?=[,;.!?]|$)", re.I)
# the writer's reason at the end: "... b/c our farm has heavy clay"
_BECAUSE_TAIL_RE = re.compile(r"\s+(?:b/c|bc|because|cuz)\s+(?:our|my|we|we're|i|i'm|the\s+client)\b[^.;?!\u2013\u2014]{0,120}$",
                              re.I)
_KEYS = {"ctrl", "alt", "shift", "cmd", "command", "option", "delete", "del", "tab", "enter", "esc", "fn", "win", "super"}


def _hashtags(text: str) -> str:
    """"#KelpFarming #BlueCarbon -#Subsidies": two hashtags or more with nothing else but operators are topics,
    ANDed ("-#X" excludes, "OR" stays)."""
    tags = list(_HASHTAG_RE.finditer(text))
    if len(tags) < 2:
        return text
    rest = _HASHTAG_RE.sub(" ", text)
    if re.sub(r"\b(?:AND|OR|NOT|and|or|not)\b|[()\s,]", "", rest):
        return text
    out, prev_end = [], 0
    for m in tags:
        gap = text[prev_end:m.start()]
        if prev_end and not re.search(r"\b(?:AND|OR|NOT|and|or|not)\b|[()]", gap):
            gap = " and "
        out.append(gap + ("not " if m.group("sign") == "-" else "") + m.group("tag"))
        prev_end = m.end()
    return "".join(out) + text[prev_end:]


# Alternatives beside their shared words in a keyword string: a capital OR between lower-case words binds as
# little as web search engines' OR does ("dark matter direct detection xenon OR argon", "Sylvanian families OR
# calico critters bakery", "2br apartment brooklyn OR queens no broker fee"); a lower-case "or" only between
# two numbers or two measures of one kind ("pressure treated 2x4 8ft or 10ft", "webpack node 17 or node 18")
_KEYWORD_BOUNDS = {"and", "not", "no", "nor", "neither", "either", "both", "but", "without", "except", "excluding",
                   "vs", "vs.", "versus", "with", "w/", "for", "in", "on", "at", "to", "from", "of", "about", "near",
                   "by", "under", "over", "around", "into", "during", "like", "the", "a", "an"}
_KEYWORD_TOKEN_RE = re.compile(r"[\w$£€][\w'&+./%°$£€-]*")


def _has_digits(*words: str) -> bool:
    return all(re.search(r"\d", w) for w in words)


def _keyword_alternatives(text: str) -> str:
    """The text with such alternatives in parentheses ("... (xenon OR argon)"); any other text as it is."""
    if len(text) > 200 or re.search(r'[\n(";]|:\s', text) or len(_sentences(text)) > 1:
        return text   # a keyword string is one line of words (not a form's "Aspect: A OR B use.", not prose)
    capital = re.search(r"(?<!\S)OR(?!\S)", text) is not None
    if capital and (re.search(r"(?<!\S)or(?!\S)", text) or re.search(r"(?<!\S)(?:AND|NOT)(?!\S)", text)
                    or sum(w.isupper() for w in text.split()) * 2 > len(text.split())):
        return text   # search syntax of its own (see _loose_operators), or a text in capitals
    edits = []   # (start, end) character spans to parenthesise
    segment: list[re.Match] = []

    def close() -> None:
        words = [m.group(0) for m in segment]
        ors = [i for i, w in enumerate(words) if w == ("OR" if capital else "or")]
        if len(ors) != 1 or any(w.lower() == "or" for i, w in enumerate(words) if i not in ors):
            return
        at = ors[0]
        left, right = words[:at], words[at + 1:]
        a, b = len(left), len(right)
        k = 0
        low = [w.lower() for w in words]
        if a >= 2 and b == 1 and _has_digits(left[-1], right[0]) and _is_number(left[-1]) and _is_number(right[0]):
            k = 1   # "pressure treated 2x4 8ft or 10ft"
        elif a >= 2 and b >= 2 and (a > 2 or b > 2) and low[at - 2:at] != low[at + 1:at + 3] and (
                low[at - 2] == low[at + 1] and _has_digits(left[-1], right[1])   # "node 17 or node 18"
                or low[at - 1] == low[at + 2] and _is_number(left[-2]) and _is_number(right[0])):   # "2 inch or
            k = 2   # 3 inch" (not "pixel 8 or pixel 8 pro", "V15 Detect or V12 Detect Slim": names)
        elif capital:   # the fewest words beside OR that match the other side's length
            if a < b and a <= 2 and low[0] != low[at + 1] and low[at + a] not in _TITLE_SMALL:
                k = a   # "Sylvanian families OR calico critters bakery"
            elif a > b and (b == 1 and a >= 3 or b == 2 and low[at - 2] == low[at + 1]):
                k = b   # "dark matter direct detection xenon OR argon" (not "fossil fuels OR renewables")
        if k and (a > k or b > k):
            first, last = segment[at - k], segment[at + k]
            edits.append((first.start(), last.end()))

    for m in _KEYWORD_TOKEN_RE.finditer(text):
        gap = text[segment[-1].end():m.start()] if segment else ""
        if segment and (gap.strip() or m.group(0).lower() in _KEYWORD_BOUNDS):
            close()
            segment = []
        if m.group(0).lower() in _KEYWORD_BOUNDS:
            continue
        segment.append(m)
    if segment:
        close()
    for start, end in reversed(edits):
        after = text[end:]
        comma = "," if re.match(r"\s+no\s", after, re.I) else ""   # "brooklyn OR queens no broker fee": an exclusion
        text = f"{text[:start]}({text[start:end]}){comma}{after}"
    return text


# "A vs B difference(s)": what a comparison asks for, no topic of its own ("council tax band A vs band B how much
# difference"); only at the end of a text with "vs" / "versus" ("gender pay difference" is a topic)
_COMPARISON_DIFFERENCE_RE = re.compile(r"(\b(?:vs\.?|versus)\s[^,;.?!]*?)\s+(?:how\s+much\s+|what'?s\s+the\s+|any\s+|the\s+)?"
                                       r"differences?(?=\s*[?.!]*\s*$)", re.I)


def _loose_operators(text: str) -> str:
    if len(text) > _MAX_REPHRASED:
        return text
    text = _COMPARISON_DIFFERENCE_RE.sub(r"\1", text)
    text = _EMPHASIS_MARK_RE.sub(lambda m: m.group("word"), text)   # "*only*", "**not**"
    text = re.sub(r"(?<=[^\W\d_]),(?=[^\W\d_])", ", ", text)            # "trout,not catfish"
    if len(text) <= 200 and len(_sentences(text)) == 1:   # a request's, not an argument's ("at least not without")
        text = _DOUBLE_NEGATION_RE.sub(" and ", text)
    text = _OR_BOTH_RE.sub(lambda m: "," if m.group("more") is not None else "", text)
    text = _SKIP_CLAUSE_RE.sub(" excluding ", text)
    text = _INCLUDING_RE.sub(", and ", text)
    text = _any_of_lists(text)
    text = _NARROWING_RE.sub(lambda m: " and " if m.group("sep").strip() in ("", "-", "\u2013", "\u2014") else ", and ",
                             _hashtags(text))
    text = _BRACKET_ASIDE_RE.sub(lambda m: f" ({m.group('body')})", text)   # "X [not Y]", "X {or Y}": asides
    if not _has_strong_aux(text) and len(_sentences(text)) == 1:   # a request's tail, not an argument's words
        text = _BECAUSE_TAIL_RE.sub("", _PREFERENCE_TAIL_RE.sub("", text))
    # "biochar + soil microbiome + drought" (two pluses or more; "kinetic + potential energy formula" and
    # "Ctrl + Alt + Delete" name one thing)
    pluses = list(_SPACED_PLUS_RE.finditer(text))
    if len(pluses) >= 2 and not re.search(r"\s-\s", text) and not any(
            _fold(w) in _KEYS for m in pluses for w in (text[:m.start()].split()[-1:] + text[m.end():].split()[:1])):
        text = _SPACED_PLUS_RE.sub(" and ", text)
    fields = _PIPE_RE.split(text)
    # a field with an "or" of its own: the pipes separate fields, each its own group ("UX designer | fintech or
    # healthcare | Berlin" is the designer AND either sector AND Berlin)
    if len(fields) > 1 and any(re.search(r"\bor\b", f, re.I) for f in fields) \
            and not any(re.search(r"[()]", f) for f in fields):
        text = ", ".join(f"({f})" if re.search(r"\bor\b", f, re.I) else f for f in fields)
    else:
        text = " or ".join(fields)
    text = _keyword_alternatives(text)
    if re.search(r"\w\s+\+\s+\w", text):
        text = _LOOSE_MINUS_RE.sub(" but not ", text)
    return text


# "Only X, not Y", "just X, no Y", "I only want X", "X only -- not Y": the restriction is the exclusion that
# follows; "only" / "just" name no topic ("just war theory", "Only Fools and Horses" keep theirs)
_ONLY_RE = re.compile(r"(?:(?<=^)|(?<=[:;,.!?]\s))(?:(?:[Ii]|[Ww]e)\s+)?(?:(?:[Oo]nly|[Jj]ust)\s+looking\s+(?:at|for|into)\s+|"
                      r"(?:[Oo]nly|ONLY|[Jj]ust)\s+(?:(?:want|need|care\s+about)\s+)?"
                      r"(?=(?!(?:war|cause|transition|in\s+time|deserts|culture|world|sayings|about|curious|like|a|an|the|"
                      r"one|few|some|half|when|if|after|once|then|those|these|this|that|because|as|to|for|in)\b)"
                      r"(?:[a-z]|[A-Z]{2,}\b)))")
_NOT_JUST_RE = re.compile(r"\bnot\s+just\s+(?=[^.;?!]{1,120}?\bbut\s+(?:also\s+)?\S)", re.I)   # "not just X but also Y"
# "X without Y, only Z", "neither A nor B, just C please", "no Y, Z only": what is wanted after an exclusion's
# comma, which would otherwise be one more excluded item of its list
_ONLY_AFTER_EXCLUSION_RE = re.compile(
    r"(?P<head>\b(?:not|no|nothing|without|excluding|except|neither|nor|never)\b[^.;:!?()]*?,)\s+"
    r"(?:(?:only|just|maybe|perhaps|possibly)\s+(?!(?:if|when|as|because|once|after|before|until|unless|looking|want|"
    r"wanted|need|needed|care|not|no|i|we|you|it|they|that|this|there|also|even)\b)"
    # (a further exclusion hedged: "no dairy, perhaps soy as well")
    r"(?![^,;:.!?()]*\b(?:as\s+well|too|either|also)\b)(?:(?:a|an|some)\s+)?(?P<x>[^\W\d_])"
    r"|(?P<y>[^\W\d_][^,;:.!?()]{0,60}?)\s+only(?=\s*(?:[.;!?]|$)))", re.I)
_ONLY_AFTER_RE = re.compile(r"(?<=\w)\s+(?:only|ONLY)(?=\s*(?:[,;:.\u2013\u2014]|\s-\s|$))")
# "something similar to X but without Y", "like X minus Y", "papers similar to work on X": X is the topic
_SIMILAR_RE = re.compile(r"(?:(?:something|anything|papers?|work|research|studies|articles?)\s+)?(?:similar\s+to|like)\s+"
                         r"(?:(?:work|research|papers?|studies)\s+on\s+)?(?=\S)", re.I)
_SIMILAR_CUE_RE = re.compile(r"\b(?:but\s+without|but\s+not|minus|without|except)\b", re.I)
# Dates the search cannot use: "after 2015", "since 2000,", "Post-2018 work:", "2010-2020", "1970s through 1990s",
# "Anything published before 1980 about X", "Research from the 1990s on X"
_YEAR = r"(?:1[5-9]|20)\d\d"
_DATES_RE = re.compile(
    rf"^(?:since|after|before)\s+{_YEAR}s?\s*,\s*"                                   # "Since 2000, what's been ..."
    rf"|^(?P<lead>(?:anything|something|research|studies|papers|work|articles)\s+)(?:(?:published|written)\s+)?"
    rf"(?:(?:from\s+the\s+{_YEAR}s)|(?:after|before|since)\s+{_YEAR}|{_YEAR}\s*[-\u2013]\s*{_YEAR})\s+(?=on\b|about\b)"
    rf"|^(?:post|pre)-?{_YEAR}\s+(?:work|research|studies|papers)\s*:\s*"           # "Post-2018 work: X"
    rf"|,\s*(?:the\s+)?{_YEAR}s?\s+(?:through|to|until)\s+(?:the\s+)?{_YEAR}s?\s*$", re.I)   # "X, 1970s through 1990s"


# an unpunctuated closing remark ("... i mean either one is fine", "... would work for me", "... whatever you have")
_SPOKEN_TAIL_RE = re.compile(r",?\s+(?:(?:right|yeah|yes|ok|okay|no)\?|(?:don't|doesn't|isn't|aren't|won't|can't)\s+(?:they|it|there|"
                             r"you|we)\?)$|"
                             r"\s+(?:(?:i\s+mean\s+)?(?:either|any)\s+(?:one\s+)?(?:is|works|would\s+(?:do|work))(?:\s+fine)?|"
                             r"would\s+(?:work|do|be\s+fine)\s+for\s+(?:me|us)|whatever\s+you\s+(?:have|got|can\s+find)|"
                             # "landlord changing locks without notice what do i do": the writer's next step, no topic
                             r"(?:[,.!?-]+\s*)?(?:what|wat|wot)\s+(?:do|should|can|shall)\s+(?:i|we|u)\s+do(?:\s+now)?\??)"
                             r"[\s.!?]*$", re.I)


# A writer correcting themselves: "X -- sorry, I meant Y", "X, no, I meant Y", "X -- scratch that, I meant Y",
# "X, hold on, I mean Y": Y replaces X (a preposition's phrase only: "hops in Kent, sorry, in Herefordshire")
_CORRECTION_RE = re.compile(r"\s*(?:--|\u2014|\u2013|,|\.)\s*(?:(?:no|sorry|oops|scratch\s+that|hold\s+on|wait|that's\s+wrong|"
                            r"correction)[,.:]\s+|(?:sorry|oops|scratch\s+that|hold\s+on|that's\s+wrong)\s+)+"
                            r"(?:(?:actually,?\s+)?i\s+mean[t]?,?\s+)?(?=\S)", re.I)
_PREPOSITIONS = ("in", "on", "for", "from", "at", "under", "with", "of", "during", "among")
# a reason given for an exclusion ("No PVA, because it isn't reversible; no animal glue either, since ...", "pad thai
# without peanuts since my son is allergic"): it names nothing to search for
_EXCLUSION_REASON_RE = re.compile(
    r"(?:(?<=^)|(?<=[;,.]\s)|(?<=[;,])|(?<=\s)(?=(?:but\s+)?(?:without|excluding|except)\b))"
    r"(?P<keep>\s*(?:(?:and|but)\s+)?(?:no|not|without|excluding|skip|leave\s+out|except)\b"
    r"[^;,.]{1,80}?)(?:(?:,\s+(?:because|since|as)\s+(?=(?:we|we're|we've|i|i'm|i've|it|it's|that|that's|they|they're|"
    r"our|my|ours|mine|theirs|yours|everyone|nobody|nothing|there|this|these|those)\b)|\s+because\s+|\s+since\s+(?=(?:i've|i'm|we're|we've|"
    r"it's|that's|they're|my|our)\b))[^;.]*|"
    # with another subject, to the clause's end ("..., as she went last year", "..., since parents bring their own";
    # "since" only with a present tense: not "since he left the UK"; not a possessive, whose noun names an event:
    # "since his Twitter takeover")
    r"(?:,\s+(?:because|as)\s+(?=(?:he|he's|she|she's|you|you're|parents|kids|children|people)\b)|"
    r",\s+since\s+(?=(?:he|he's|she|she's|you|you're|parents|kids|children|people)\s+(?!(?:\w+ed|left|was|were|began|"
    r"came|became|got|went|took|had|made|moved|lost|won|met|ran|saw|said|told|broke|fell|grew|gave)\b)))[^;.,]*)", re.I)
# "X but not carolina reaper, i'm not insane", "... but not butternut, it never ripens here": a remark about the
# excluded thing, a clause of its own after the comma (not an ask: "..., it must be Y"), up to the clause's end
_EXCLUSION_REMARK_RE = re.compile(
    r"(?P<keep>\b(?:but\s+)?(?:not|no|without|except|excluding)\s[^;,.()]{1,80}?),\s+"
    r"(?:(?:it|it's|its|i'm|im|i\s+am|they're|that's)\s+(?!(?:must|has\s+to|have\s+to|should|needs?|wants?)\b)"
    r"(?:never|not|always|just|too|so|really|only|all|am|is|are|was|were|doesn't|don't|won't|didn't|can't|isn't|"
    r"aren't|[a-z]+s)|there(?:'s|\s+is|\s+are)\s+(?:enough|plenty|lots|loads|too\s+much|too\s+many)"
    r"(?=(?:\s+(?:of|on|about)\s+(?:that|it|those|them|this|these))?(?:\s+already)?\s*(?:[;.!?]|$))|"
    r"(?:he|she|we|they|i)\s+(?:has|have|had|owns?)\s+(?:them|it|those|these|that|"
    r"this|all|every|both)|(?:my|our|his|her|their)\s+[a-z]+\s+(?:hate|hates|dislike|dislikes|can't\s+stand|"
    r"(?:don't|doesn't|do\s+not|does\s+not)\s+like|(?:is|are)\s+allergic)|"
    # subjectless: ", had bad luck with both", ", tried them"
    r"(?:had|hated|disliked|returned|tried)\s+(?!to\b)(?:bad|poor|them|it|one|those|these|both|a\s+bad|an?\s+awful|"
    r"a\s+terrible))\b[^;,.()]*?(?=\s*(?:[;.!?]|$))", re.I)
# "X, in A or B" / "X, for A or B": a qualifier of X with alternatives (without the comma, "X in A or B" is shared
# out after parsing: _split_shared)
_QUALIFIER_ALTERNATIVES_RE = re.compile(
    r",\s+(?:in|for(?!\s+(?:example|instance)\b)|among)\s+(?P<a>[^,;.()]{1,60}?)\s+or\s+(?:in\s+|for\s+|among\s+)?"
    r"(?P<b>[^,;.()]{1,60}?)"
    r"(?=\s*(?:[,;.]|but\b|$))", re.I)
# "A or B, for X" / "A or B, in X": X qualifies the whole "or" ("ketogenic diet or modified Atkins diet, for
# epilepsy in kids")
_ALTERNATIVES_THEN_PURPOSE_RE = re.compile(r"^(?P<alts>[^,;.]{1,80}\bor\b[^,;.]{1,80}),\s+(?:for|in|among)\s+"
                                           r"(?P<x>(?:(?!\bor\b)[^,;.]){1,80})(?P<end>[.!?]?)$", re.I)
# a formal register's relations between parts: "X, regarding Y, and concerning Z"
_FORMAL_RELATION_RE = re.compile(r",\s+(?:and\s+)?(?:regarding|concerning|in\s+respect\s+of|with\s+regard\s+to|pertaining\s+to)"
                                 r"\s+(?=\S)", re.I)


def _corrected(text: str) -> str:
    m = _CORRECTION_RE.search(text)
    if not m or m.start() == 0:
        return text
    old, new = text[:m.start()], text[m.end():]
    first = _fold(new.split()[0]) if new.split() else ""
    if first in _PREPOSITIONS and f" {first} " in _fold(old):   # "hops in Kent, sorry, in Herefordshire"
        return old[:_fold(old).rfind(f" {first} ")] + " " + new
    if len(new.split()) < 2 and not re.search(r"\bmean", _fold(m.group(0))):
        return text
    ask = _REQUEST_RE.match(_fold(old))
    return (old[:ask.end()] + " " if ask and ask.end() < len(old) else "") + new


# conditions numbered in prose: "First, X; second, Y; and thirdly, not Z", "One: X. Two: Y.", "First condition: X"
_ORDINAL_RE = re.compile(r"(?:(?<=^)|(?<=[;,.]\s)|(?<=[;,.]))\s*(?:and\s+)?(?:first(?:ly)?|second(?:ly)?|third(?:ly)?|fourth(?:ly)?|"
                         r"one|two|three|four)(?:\s+condition)?\s*[,:]\s*(?:it\s+(?:has\s+to|must|should)\s+(?:be\s+about|cover|"
                         r"include)\s+|(?:the\s+topic\s+is|it's)\s+)?(?=\S)", re.I)
_CONDITIONS_HEAD_RE = re.compile(r"(?:two|three|four|some|these)\s+conditions\s*:\s*", re.I)


def _ordinals(text: str) -> str:
    marks = list(_ORDINAL_RE.finditer(text))
    if len(marks) < 2 or not re.match(r"\s*(?:first|one)", text[marks[0].start():], re.I):
        return text
    out = _CONDITIONS_HEAD_RE.sub("", _ORDINAL_RE.sub(lambda m: " " if m.start() else "", text)).strip()
    return re.sub(r"(?<=\w)\.\s+(?=[a-z])", "; ", out)   # "One: X. Two: Y." -> "X; y"


def _restrictions(text: str) -> str:
    if len(text) > _MAX_REPHRASED:
        return text
    text = _SPOKEN_TAIL_RE.sub("", text)
    text = _ordinals(_CONDITIONS_HEAD_RE.sub("", text) if _CONDITIONS_HEAD_RE.match(text) else text)
    if not _has_strong_aux(text) or len(_sentences(text)) <= 2:
        text = _corrected(text)
    text = _EXCLUSION_REASON_RE.sub(lambda m: m.group("keep"), text)
    text = _EXCLUSION_REMARK_RE.sub(lambda m: m.group("keep"), text)
    if not _has_strong_aux(text):
        text = _QUALIFIER_ALTERNATIVES_RE.sub(lambda m: f" and ({m.group('a')} or {m.group('b')})", text)
        text = _FORMAL_RELATION_RE.sub(", and ", text)
        text = _ALTERNATIVES_THEN_PURPOSE_RE.sub(lambda m: f"{m.group('alts')}, and {m.group('x')}", text)

    text = _ONLY_AFTER_EXCLUSION_RE.sub(lambda m: m.group("head") + " but " + (m.group("x") or m.group("y")), text)
    out = _ONLY_AFTER_RE.sub("", _ONLY_RE.sub("", _NOT_JUST_RE.sub("", text)))
    similar = _SIMILAR_RE.match(out)
    if similar and _SIMILAR_CUE_RE.search(out, similar.end()):
        out = out[similar.end():]
    dated = _DATES_RE.sub(lambda m: m.group("lead") or "", out)
    if dated != out and re.search(r"[^\W\d_]{3}", dated):   # something left to search for
        out = re.sub(r"\s{2,}", " ", dated).strip(" ,;")
        out = re.sub(r"^[,;:]\s*|\s+([,;:])", lambda m: m.group(1) or "", out)
    return out


# "A or B, but in both cases not C": the exclusion applies to the whole "or", as it does without the words
_IN_EACH_CASE_RE = re.compile(r"(?P<but>\b(?:but|and))\s*,?\s+in\s+(?:both|either|each|any|all)\s+cases?\s*,?\s+(?=\S)",
                              re.I)


_ASK_ONLY_WORDS = _DOCUMENT_WORDS | set("me us to the a an relevant useful helpful suitable appropriate further "
                                          "anything something where where's help with this that please newspaper "
                                          "on it them what whatever everything all you can could have has got find "
                                          "by today tomorrow asap soon monday tuesday wednesday thursday friday "
                                          "saturday sunday most latest briefing briefings guidance right correct "
                                          "page pages place link links section website site webpage".split())


def _asks_only(sentence: str) -> bool:
    """A sentence that asks and names nothing ("Could you point me to relevant sources?", "Can you help with
    this?"): after an earlier sentence's topic, no topic of its own."""
    low = _fold(sentence)
    ask = _REQUEST_RE.match(low)
    if not ask:
        return False
    rest = low[ask.end():].lstrip()
    while (more := _REQUEST_RE.match(rest)) and more.end() > 0:   # "could you" + "point me to"
        rest = rest[more.end():].lstrip()
    words = rest.strip(" ?.!").split()
    return all(w.strip(",") in _ASK_ONLY_WORDS for w in words)


# a name signed on a line of its own: "Ewa", "Dorota Nowak", "Prof. M. Haddad", "J. Almeida"
_BARE_NAME_RE = re.compile(r"(?:(?:Dr|Prof|Mr|Mrs|Ms|Mx|Fr|Rev|Sr|Sra)\.?\s+)?(?:[A-Z]\.\s*)*"
                           r"[A-Z][\w'\u2019-]*(?:\s+(?:[A-Z]\.|[A-Z][\w'\u2019-]*|van|von|de|da|der|den|di|du|le|la)){0,3}")


# a cry for help before the request ("pls help!! my monstera has brown spots", "help, croup in toddlers at night",
# "Please help: ..."); a capitalised "Help!" alone may open a title ("Help! soundtrack"), so it needs a "please"
# or a "me" / "needed" with it
_HELP_CRY_RE = re.compile(r"\s*(?:(?i:please|pls|plz)\s+(?i:help)|h(?i:elp)|HELP|Help\s+(?i:me|us|needed|please|pls|plz))"
                          r"(?:\s+(?i:me|us|needed|please|pls|plz))?\s*(?:[,.!:]+|\s[-\u2013\u2014]+)\s*(?=\S)")


def _without_cry(text: str) -> str:
    cry = _HELP_CRY_RE.match(text)
    return text[cry.end():] if cry else text


def _letter(text: str) -> str:
    """The text without a letter's framing (see above); unchanged when it is no letter."""
    text = _without_cry(text)
    salutation = _SALUTATION_RE.match(_fold(text))
    named = _NAMED_SALUTATION_RE.match(text) if salutation is None else None
    if named and all(w[:1].isupper() for w in named.group("name").split()) and named.group("name") not in ("I", "I'm"):
        rest = _fold(text[named.end():])   # "Hi Priya, could you ...", not "Hello Kitty, the brand's history"
        if _CHAT_OPENER_RE.match(rest) or _REQUEST_RE.match(rest) or _FIRST_PERSON_RE.match(rest):
            salutation = named
    if salutation:
        text = _without_cry(text[salutation.end():])   # "Hi, pls help, ..."
    opener = _CHAT_OPENER_RE.match(_fold(text)) if salutation else None
    if opener:
        text = text[opener.end():]
    changed = salutation is not None
    signature = _SIGNATURE_RE.search(text)
    if signature:   # "... Deadline is 4pm. -- Dev", "Nothing urgent. -- Kim, Vet Library"
        text = text[:signature.start()]
    sentences = _sentences(text)
    changed = changed or signature is not None
    # (not "I've already done X, so please leave that out": an exclusion, read with the request)
    while len(sentences) > 1 and _already_known(sentences[-1]) is None and (
            _SIGN_OFF_RE.fullmatch(_fold(sentences[-1]).rstrip(" .!?")) is not None
                                  or _CHATTER_SENTENCE_RE.fullmatch(_fold(sentences[-1])) is not None
                                  or _REFERENCE_SENTENCE_RE.fullmatch(sentences[-1].strip()) is not None
                                  or _PREFERENCE_SENTENCE_RE.match(_fold(sentences[-1])) is not None
                                  or _source_preference(sentences[-1])
                                  or (_IDENTITY_SENTENCE_RE.fullmatch(_fold(sentences[-1]).rstrip(" .!?")) is not None
                                      and not _EXCLUDING_WORDS_RE.search(_fold(sentences[-1])))
                                  or _asks_only(sentences[-1])
                                  or (_CIRCUMSTANCE_SENTENCE_RE.fullmatch(_fold(sentences[-1]).strip()) is not None
                                      and not _CIRCUMSTANCE_TOPIC_RE.search(_fold(sentences[-1])))
                                  or _closing_circumstance(sentences)
                                  # a name after a sign-off on the same line: "... Thank you very much. Klaus"
                                  or (len(sentences) > 2 and len(sentences[-1].split()) <= 3
                                      and _BARE_NAME_RE.fullmatch(sentences[-1].strip(" .!?")) is not None
                                      and _SIGN_OFF_RE.fullmatch(_fold(sentences[-2]).rstrip(" .!?,")) is not None)):
        sentences.pop()
        changed = True
    # the writer's reason or circumstances after the request ("X, since the details matter to me", "X, I have
    # to present on it friday"), or a closing ask ("X, can you help?", "X, whichever you have")
    low = _fold(sentences[-1]) if sentences else ""
    reason = _REASON_RE.search(low)
    if not (reason and reason.start() > 0 and _FIRST_PERSON_RE.search(reason.group(0))):
        reason = _CLOSING_CLAUSE_RE.search(low)
        if reason and not _CLOSING_ASK_RE.match(reason.group(0)) and (
                _ASK_WORDS_RE.search(reason.group(0)) or _TOPIC_IN_CLAUSE_RE.search(reason.group(0))):
            reason = None   # "X, I want Y", "X, we don't need Y", "For a briefing note, I require materials on Y"
    purpose = _PURPOSE_TAIL_RE.search(low) if low else None
    if purpose and purpose.start() > 0 and not reason:
        sentences[-1] = sentences[-1][:purpose.start()]
        changed = True
    aside = _ASIDE_TAIL_RE.search(low) if low and not reason else None
    if aside and aside.start() > 0 and not _ASK_WORDS_RE.search(aside.group("aside")) \
            and not _EXCLUDING_WORDS_RE.search(aside.group("aside")) and not _TOPIC_IN_CLAUSE_RE.search(aside.group("aside")):
        sentences[-1] = sentences[-1][:aside.start()]   # "pasta dishes without cheese, my son is lactose intolerant"
        changed = True
    covered = reason is not None and re.match(r",\s+which\s", reason.group(0)) is not None   # "..., which we've covered"
    if reason and reason.start() > 0 and not _EXCLUDING_WORDS_RE.search(reason.group(0)) \
            and (covered or not re.match(r"(?:for|as)\s", low)):   # "For a briefing, I ...": the clause is the sentence's own
        sentences[-1] = sentences[-1][:reason.start()]
        changed = True
    for i, sentence in enumerate(sentences):
        low = _fold(sentence)
        if _REQUEST_RE.match(low):
            break
        m = _MID_ASK_RE.search(low) or (_PURPOSE_ASK_RE.search(low) if re.match(r"for\s", low) else None)
        if m and (_FIRST_PERSON_RE.search(low[:m.start()]) or re.match(r"(?:for|as|preparing|drafting|writing)\s", low)) \
                and not _ASK_WORDS_RE.search(low[:m.start()]) \
                and not re.match(_OWN_WORK, low) and not re.match(r"\s*(?:i|we)(?:'d|\s+would)\s+(?:like|prefer)\s+"
                                                                  r"to\s+(?:exclude|avoid|skip|leave\s+out)\b",
                                                                  low[m.end():]):
            sentences = sentences[i + 1:] if not sentence[m.end():].strip() else [sentence[m.end():]] + sentences[i + 1:]
            changed = True   # (the sentences before it are the writer's context too)
            break
    return " ".join(sentences) if changed else text


# "A or B - which is better for C?", "A or B, which one is easier to learn": a comparison names both (and C)
_COMPARED = (r"(?P<a>[^\s,;:?!.]+(?:\s+[^\s,;:?!.]+){0,5}?)\s+(?:or|vs\.?|versus)\s+"
             r"(?P<b>[^\s,;:?!.]+(?:\s+[^\s,;:?!.]+){0,5}?)")
_BETTER = (r"(?:better|best|easier|cheaper|safer|worse|faster|stronger|more\s+effective|healthier|quicker)"
           r"(?:\s+(?:for|to)\s+(?:me|us|you)|")   # (the verdict's ground follows, or "for me": no topic)
_WHICH_BETTER_RE = re.compile(_COMPARED + r"(?:\s*,\s*|\s+[-\u2013\u2014]+\s+|\?*\s+)which\s+(?:one\s+)?(?:"
                              r"(?:is|are|'s|works)\s+" + _BETTER +
                              r"\s+(?:(?:for|on|in|with|to(?!\s+[^\s,;:?!.]+$))|if\s+(?:you're|you\s+are|i'm|i\s+am|we're|we\s+are))\s+"
                              r"(?:a\s+|an\s+|the\s+)?(?P<c>[^,;:?!.]{1,60})"
                              r"|\s+to\s+[^\s,;:?!.]+"   # "which is cheaper to run": no topic
                              r"|\s+(?P<c1>(?!(?:for|on|in|to|with|if|and|or|but|now|here|overall|really|tbh|imo|imho|"
                              r"honestly|guys|folks|lol|pls|please|anyway|though|btw|mate|thanks|ty|thx|then)\b)"
                              r"[^\s,;:?!.]+))?"
                              # "which is rarer", "which one do I need for C", "which has lower fees", "which to read
                              # first", "which lasts longer": the verdict asked for, its ground kept
                              r"|(?:(?:is|are|'s)\s+(?:more\s+[a-z]+|" + _COMPARATIVE_ALTS + r")"
                              r"|(?:do|does|should|would|will|can)\s+(?:i|we|you|u|[a-z]+)\s+(?:need|use|get|buy|choose|"
                              r"pick|take|want|recommend)"
                              r"|to\s+(?:read|learn|buy|get|choose|pick|watch|play|use|take|try|start)(?:\s+first)?"
                              r"|(?:lasts|reads|saves|photographs|works|sounds|looks|tastes|performs|holds)\s+"
                              r"(?:better|longer|more|best)|(?:has|have|gives|offers|gets|uses)\s+(?P<c3>(?:better|lower|"
                              r"higher|more|less|fewer|cheaper|longer|shorter|bigger|smaller)\s+[^\s,;:?!.]+(?:\s+(?!for\b)[^\s,;:?!.]+){0,2}))"
                              r"(?:\s+for\s+(?:a\s+|an\s+|the\s+)?(?P<c2>[^,;:?!.]{1,60}))?)")
# "Is cycling or swimming better for knee osteoarthritis?", "are e-bikes or scooters safer in cities": a comparison
# asked as a yes/no question, two compared topics and what for
_IS_BETTER_RE = re.compile(r"(?:is|are|would|will)\s+(?!(?:there|it|you|we|i|they|this|that|these|those)\b)"
                           + _COMPARED + r"\s+(?:be\s+)?" + _BETTER +
                           r"\s+(?:for|on|in|with)\s+(?:a\s+|an\s+|the\s+)?(?P<c>[^,;:?!.]{1,60}))?")
# ("which is cheaper for me": no topic)
# A negated question of which things ("Which houseplants are not toxic to dogs?", "which SGLT2 inhibitors are not
# associated with ketoacidosis", "Which flowers are neither toxic to cats nor toxic to dogs?")
_WHICH_NOT_RE = re.compile(r"(?:which|what)\s+(?P<x>[^\s,;:?!.]+(?:\s+[^\s,;:?!.]+){0,5}?)\s+(?:are|is|do|does)\s+"
                           r"(?:(?P<neither>neither)|not)\s+(?P<y>[^,;:?!.]+(?:\s+nor\s+[^,;:?!.]+)?)")
# A question of taking two things together ("is it safe to take melatonin with sertraline", "can I drink alcohol
# while taking metronidazole"): both things, ANDed
_TOGETHER_PART = r"[^\s,;:?!.]+(?:\s+(?!(?:with|and|while|together|or|not|if|when)\b)[^\s,;:?!.]+){0,3}"
_TOGETHER_RE = re.compile(
    r"(?:(?:is\s+it|it\s+is)\s+(?:safe|ok|okay|dangerous|bad|fine)\s+to\s+(?:take|mix|combine|drink|use|have)\s+"
    r"(?P<a>" + _TOGETHER_PART + r")\s+(?:with|and|together\s+with|while\s+(?:on|taking|using))\s+"
    r"(?P<b>" + _TOGETHER_PART + r")(?:\s+(?:together|at\s+the\s+same\s+time))?|"
    r"(?:can|should)\s+(?:i|you|we|one)\s+(?:safely\s+)?(?:take|drink|use|have)\s+(?P<a2>" + _TOGETHER_PART + r")\s+"
    r"while\s+(?:on|taking|using)\s+(?P<b2>" + _TOGETHER_PART + r"))")


def _rephrase(cleaned: str, sentences: list[str]) -> tuple[str, list[str]]:
    """A hedge, "the link between X and Y", an exclusion put first, a topic before a colon: the text and its
    sentences as the lexer is to read them.  The exclusion and the topic only in the request (the last
    sentence, or the one before a closing exclusion-only sentence), so that no later sentence joins their
    lists."""
    if len(cleaned) > _MAX_REPHRASED:
        return cleaned, sentences
    text = cleaned.lstrip()
    if len(_BULLET_RE.findall(text)) > 1:   # "need help with: • deck staining • fence post repair": a list
        text = _BULLET_RE.sub(", ", re.sub(r":\s*" + _BULLETS + r"\s*", ": ", text)).strip(" ,")
        sentences = _sentences(text)
    examples = _examples(text)
    if examples != text:
        text = examples
        sentences = _sentences(text)
    asides = _asides(text)
    if asides != text:
        text = asides
        sentences = _sentences(text)
    hedge = _HEDGE_RE.match(_fold(text))
    if hedge:
        text = text[hedge.end():]
        sentences = _sentences(text)
    asked = _fold(text).rstrip(" ?.!")
    better = (_WHICH_BETTER_RE.fullmatch(asked) or _IS_BETTER_RE.fullmatch(asked)) if len(sentences) == 1 else None
    if better and not re.search(r"\b(?:and|or|not|but|vs|that|than)\b",
                                _fold(better.group("a") + " " + better.group("b"))) \
            and not re.search(r"\b(?:or|not|but|vs|than)\b", _fold(better.group("c") or "")):
        # "Bob Dylan or Joan Baez - which is better for protest songs?": both, and what for
        parts = [text[better.start(g):better.end(g)] for g in better.re.groupindex if better.group(g)]
        text = " and ".join(parts)
        sentences = [text]
    which = _WHICH_NOT_RE.fullmatch(_fold(text).rstrip(" ?.!")) if len(sentences) == 1 else None
    if which:   # "Which houseplants are not toxic to dogs?": the things, without the property
        x, y = text[which.start("x"):which.end("x")], text[which.start("y"):which.end("y")]
        text = f"{x}, neither {y}" if which.group("neither") else f"{x} but not {y}"
        sentences = [text]
    together = _TOGETHER_RE.fullmatch(_fold(text).rstrip(" ?.!")) if len(sentences) == 1 else None
    if together:   # "is it safe to take melatonin with sertraline?": the two things taken together
        a, b = ("a", "b") if together.group("a") else ("a2", "b2")
        text = f"{text[together.start(a):together.end(a)]} and {text[together.start(b):together.end(b)]}"
        sentences = [text]
    relation = _RELATION_INTRO_RE.match(_fold(text))
    if relation and len(sentences) == 1 and not _has_strong_aux(text) \
            and re.search(r"\band\b", _fold(text[relation.end():])):
        text = text[relation.end():]
        sentences = [text.strip()]
    # the request: the last sentence, or the one before a short exclusion-only sentence ("... ? Not in mice.")
    at = len(sentences) - 1
    if at > 0 and (_EXCLUSION_SENTENCE_RE.match(_fold(sentences[at])) or _already_known(sentences[at]) is not None):
        at -= 1
    if at >= 0:
        chatter = _DASH_CHATTER_RE.search(_fold(sentences[at]))
        if chatter and not _DASH_KEEP_RE.search(_fold(chatter.group(0))):   # "... apart from Apollo 11 - I know that
            sentences = sentences[:at] + [sentences[at][:chatter.start()].rstrip() + sentences[at][chatter.end():]] \
                + sentences[at + 1:]                                     # one well."
            text = " ".join(sentences)
        known, at = _known_exclusions(sentences, at)
        if known != sentences:
            sentences = known
            text = " ".join(sentences)
        request = _front_exclusion(sentences[at])
        if request == sentences[at]:
            request = _mutual(request)
        if request == sentences[at]:
            request = _topic_head(request)
        if request == sentences[at] and len(sentences) == 1:
            request = _compare(request)
        if request != sentences[at]:
            sentences = sentences[:at] + [request] + sentences[at + 1:]
            text = " ".join(sentences)
    return (text if text != cleaned.lstrip() else cleaned), sentences


def _has_strong_aux(sentence: str) -> bool:
    """Whether a sentence holds a verb's auxiliary (``is``, ``was``, ``don't`` ...): a claim, not a topic."""
    return any(_fold(w.strip(".,;:!?\"'")) in _AUX_STRONG for w in sentence.split())


def _has_any_aux(text: str) -> bool:
    """Whether the words hold an auxiliary or a modal (``is``, ``can``, ``has`` ...): a sentence, not notes."""
    return any(_fold(w.strip(".,;:!?\"'()")) in _AUX for w in text.split())


_EXCLUDED_KINDS = {"papers", "articles", "essays", "studies", "reports"}
# what an excluded "anything that ..." does with its topic: "skip anything that needs Script Extender"
_EXCLUDED_RELATIONS = {"mentions", "mention", "discusses", "covers", "concerns", "involves", "needs", "need",
                       "requires", "require", "uses", "use"}


def _drop_placeholders(node: Node) -> Node:
    """"skip the Great Barrier Reef stuff", "w/o the motorized ones", "not futsal ones", "except the Rolling
    Stones one", "nothing blockchain related", "not anything using railway sleepers": in an excluded term a
    placeholder names nothing (a wanted "The Right Stuff" or "baby stuff" keeps it; "stuff" and "one" only
    after "the")."""
    if isinstance(node, Not) and isinstance(node.child, Term):
        words = node.child.text.split()
        low = [_fold(w) for w in words]
        cut = next((k for k in range(1, len(low) - 1) if words[k] in _BECAUSE and words[k + 1].islower()
                    and low[k + 1] in _ASIDE_PERSONAL), None)
        if cut is not None:   # "not thailand bc we've been"
            words, low = words[:cut], low[:cut]
        # as typed in lower case: "By the Way", "Anything Goes", "With Teeth" are titles
        if len(words) > 2 and low[0] == "the" and (words[-1] in _PLACEHOLDERS | {"one"}
                                                    or len(words) > 3 and words[-1] in _EXCLUDED_KINDS):
            words = words[:-1]   # ("without the gene therapy papers": the papers are the kind, not the topic)
        elif len(words) > 1 and words[-1] in ("ones", "related", "stuff"):   # "no Dead Sea Scrolls stuff"
            words = words[:-1]
        elif len(words) > 2 and low[0] in ("those", "ones", "anything", "cases", "studies") and " ".join(low[1:3]) in (
                "relating to", "related to", "dealing with", "concerned with", "specific to"):   # "save for those
            words = words[3:]                                                                  # relating to X"
        elif len(words) > 4 and low[0] == "any" and " ".join(low[2:4]) in ("relating to", "related to", "specific to"):
            words = words[4:]   # "excluding any disclosures relating to X"
        elif len(words) > 2 and low[0] in ("that", "which") and low[1] in _EXCLUDED_RELATIONS:
            words = words[2:]   # "drop anything that mentions X" (the opener took "anything")
        elif len(words) > 3 and low[0] in ("anything", "everything", "items") and low[1] in ("that", "which") \
                and low[2] in _EXCLUDED_RELATIONS | {"is"}:
            words = words[4:] if low[2] == "is" and low[3] == "about" else words[3:]   # "anything that mentions X"
        elif len(words) > 1 and words[0] == "anything":
            words = words[2:] if len(words) > 2 and words[1] in _ANYTHING_LINKS else words[1:]
        elif len(words) > 1 and words[0] in ("with", "by"):   # "not with tofu", "not by Christopher Nolan"
            words = words[1:]

        text = " ".join(words).rstrip(_EDGE_PUNCT)
        return Not(Term(text)) if text and text != node.child.text else node
    if isinstance(node, Not):
        return Not(_drop_placeholders(node.child))
    if isinstance(node, (And, Or)):
        return type(node)(tuple(_drop_placeholders(c) for c in node.children))
    return node


_ARTICLE_KEPT = {"priori", "posteriori", "fortiori", "cappella", "capella", "la", "lot", "few", "little", "bit"}
_QUANTIFIER_KEPT = {"like", "of", "more", "other", "time", "times", "day", "days", "kind", "sort", "way", "ways", "one",
                    "longer", "how", "where", "people", "body", "thing", "things"}
_MAX_ARTICLE_TERM = 8   # words: a request's topic, not a claim's sentence
_MAX_LOWER_ARTICLE_TERM = 14   # a lower-case "a": the object of an ask taken off ("looking for an antique ...")
_CLAIM_VERBS = {"is", "are", "was", "were", "has", "have", "had", "does", "do", "did", "can", "will", "may", "increases",
                "decreases", "improves", "reduces", "causes", "leads", "promotes", "inhibits", "induces", "prevents",
                "affects", "alters", "raises", "lowers", "enhances", "impairs", "predicts"}   # (a claim keeps its "a")


# A word before a trailing lower-case "podcast(s)" that makes the podcast itself the topic: "a podcast", "my
# podcast", "on podcasts", "short podcasts", "video podcasts" stay whole; after anything else the word names the
# kind of document searched ("true crime podcasts", "Joe Rogan podcast"), as every writer of a podcast app's
# requests leaves it out (a title keeps its capital: "Not Another Politics Podcast")
_PODCAST_KEPT = set("a an the my your our his her their its this that these those of on in for about to from with "
                    "and or own short long shorter longer new newer latest recent old older best good great favourite "
                    "favorite first last next one two three some any more many few free paid popular top video audio "
                    "weekly daily start starting launch launching host hosting record recording grow growing "
                    "monetise monetize apple google spotify amazon pocket".split())


def _drop_articles(node: Node, quoted: set[str], negated: bool = False) -> Node:
    """"without an ND filter", "not a router problem", "a loft or a basement": every writer of the labelled and
    held-out sets leaves a term's leading "a" / "an" out (none of their terms starts with one); "A Tale of Two
    Cities", "a priori", "a cappella", a claim's sentence and a term the user quoted keep theirs."""
    if isinstance(node, Term):
        words = node.text.split()
        longest = _MAX_LOWER_ARTICLE_TERM if words[0] in ("a", "an") and not any(
            w.lower() in _CLAIM_VERBS for w in words) else _MAX_ARTICLE_TERM
        if node.text not in quoted and 1 < len(words) <= longest and words[0] in ("a", "an", "A", "An") \
                and (words[0].islower() or words[1][:1].islower() or node.text.isupper()) \
                and words[1].lower() not in _ARTICLE_KEPT:   # (all capitals: "NEED A 7 SEATER DIESEL")
            return Term(" ".join(words[1:]))
        if node.text not in quoted and 1 < len(words) <= _MAX_ARTICLE_TERM and words[0] == "your":
            return Term(" ".join(words[1:]))   # "send me your policy on X", "your returns policy": the asked's own
        if node.text not in quoted and 1 < len(words) <= _MAX_ARTICLE_TERM and words[0] in ("some", "any") \
                and words[1].lower() not in _QUANTIFIER_KEPT:   # "some shade-loving perennials" (not "some like it hot")
            return Term(" ".join(words[1:]))
        if not negated and node.text not in quoted and len(words) > 1 and words[-1] in ("podcast", "podcasts") \
                and _fold(words[-2]).strip(",.;:") not in _PODCAST_KEPT and words[-2][-1:].isalnum():
            return Term(" ".join(words[:-1]))   # "true crime podcasts", "Joe Rogan podcast": the kind searched
        return node
    if isinstance(node, Not):   # (an excluded "political podcasts" excludes the podcasts: the kind stays there)
        return Not(_drop_articles(node.child, quoted, not negated))
    if isinstance(node, (And, Or)):
        return type(node)(tuple(_drop_articles(c, quoted, negated) for c in node.children))
    return node


# A phrase shared by alternatives: "wheat crop reports for Ukraine or Kazakhstan" is the reports AND either
# country, "sepsis or septic shock in post-op patients" either condition AND the patients (not the first
# alternative with the phrase and the second alone); "X linked to Y", "X compared with Y" name two topics.
# Not "of" ("balance of payments, corn or livestock"), not titles ("Foods for Glaucoma or flax oil"), not
# alternatives a comma keeps apart ("either X in A, or B").
_SHARED_LINKS = ("linked to", "compared with", "compared to", "in", "on", "for", "to", "from", "at", "among", "by",
                 "with", "during", "after", "across", "within", "under", "compatible with",
                 "near", "close to", "next to", "about", "around", "regarding", "concerning")
_LATIN_AFTER_IN = {"vitro", "vivo", "situ", "silico", "utero", "toto", "vacuo"}   # "in vitro" is no link
_SHARED_LINK_RE = re.compile(r"\s(" + "|".join(l.replace(" ", r"\s") for l in _SHARED_LINKS) + r")\s"
                             r"(?!(?:" + "|".join(_LATIN_AFTER_IN) + r")\b)", re.I)
# Links before the common ground of two compared topics ("A vs B for C", "A compared with B in C")
_PLACE_LINKS = {"in", "on", "at", "by", "from", "under", "near", "within"}   # where or how: "on board or at the port"
_COMPARED_GROUND_LINKS = {"for", "in", "on", "among", "amongst", "during", "from", "at", "across", "within"}
_MAX_SHARED_ALT = 3     # words of the alternative beside the shared phrase
_MAX_OTHER_ALT = 4      # words of each other alternative
_MAX_SHARED_PHRASE = 6  # words of a trailing shared phrase
_MAX_SHARED_HEAD = 8    # words of a leading shared phrase
_NO_SHARED_HEAD_END = {"the", "a", "an", "either", "both", "between", "whether", "and", "or", "not"}
_TIME_UNITS = {"second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month",
               "months", "year", "years", "while", "time"}   # "itching after a week": a time, not a topic
_TITLE_SMALL = {"a", "an", "the", "and", "or", "of", "in", "on", "for", "to", "from", "at", "by", "with", "as", "vs",
                "vs.", "into", "over", "than"}


def _names_after_a_link(kids: list, quoted: set[str], heads: bool) -> bool:
    """"status match program for Star Alliance Gold or SkyTeam Elite Plus", "flights to New York City or San
    Francisco Bay": a lower-case head, a link, then names of three capitalised words or more on both sides of the
    "or": the names are alternatives, not titles ("Foods for Glaucoma or flax oil" has no lower-case head)."""
    if not heads or len(kids) < 2 or not all(isinstance(c, Term) and c.text not in quoted for c in kids):
        return False
    links = _links(kids[0].text)
    if not links:
        return False
    head, first = _around(kids[0].text, links[-1])
    def name(text: str) -> bool:
        return all(w[:1].isupper() or w[:1].isdigit() for w in text.split()) and 0 < len(text.split()) <= _MAX_SHARED_ALT
    return bool(head) and head[:1].islower() and any(w.islower() for w in head.split()) \
        and name(first) and all(name(c.text) for c in kids[1:])


def _title_cased(text: str, least: int = 3) -> bool:
    """The first word and every other but the small ones capitalised, three (``least``) at least: a title ("Heart
    Disease Starts in Childhood"; not "the Industrial Revolution in Britain", nor "Hiking in Patagonia")."""
    words = text.split()
    big = [w for w in words if w.lower() not in _TITLE_SMALL and any(c.isalnum() for c in w)]   # ("&" is no word)
    return len(big) >= least and words[0][:1].isupper() and all(w[:1].isupper() or not w[:1].isalpha() for w in big)


def _mixed_case(alternatives: list[str]) -> bool:
    """Capitalised and lower-case alternatives side by side ("chickpeas or Foods for Glaucoma"): a title or a name
    among topics, whose words are not to be shared out (acronyms and numbers count as neither).  A leading article
    tells nothing: "the UK or Ireland" are two names, "the elderly or children" two topics."""
    firsts = []
    for a in alternatives:
        words = a.split()
        if len(words) > 1 and words[0].lower() in ("the", "a", "an"):
            words = words[1:]
        if words:
            firsts.append(words[0])
    kinds = {"cap" if w[:1].isupper() and w[1:2].islower() else "low" if w[:1].islower() and w.islower() else None
             for w in firsts}
    return {"cap", "low"} <= kinds


def _links(text: str) -> list[re.Match]:
    padded = f" {text} "
    return [m for m in _SHARED_LINK_RE.finditer(padded) if not _adjective_link(padded, m)]


_ADVERB_LINKS = {"near", "about", "around"}


def _adjective_link(padded: str, m: re.Match) -> bool:
    """"near", "about", "around" that link nothing: first, or after an article or "far" ("in the near infrared",
    "for the near future", "the far or near infrared"), or "about" / "around" before a plain number ("walks of
    around 5 km")."""
    word = m.group(1).lower()
    if word not in _ADVERB_LINKS:
        return False
    before = padded[:m.start()].split()[-1:]
    after = padded[m.end():].split()[:1]
    return bool(not before or before[0].lower() in {"the", "a", "an", "far", "or", "and"}
                or word != "near" and after and re.fullmatch(r"\d+(?:[.,]\d+)*", after[0]))
    # (first: "near infrared" as an alternative of its own; "about 5 km" is a quantity, "about 3D printers" and
    # "too near the motorway" link)


def _around(text: str, link: re.Match) -> tuple[str, str]:
    """The words of ``text`` before and after ``link`` (a match of :func:`_links`, on the padded text)."""
    padded = f" {text} "
    return padded[:link.start()].strip(), padded[link.end():].strip()


def _shared_phrase(link: re.Match, phrase: str) -> str:
    """A phrase shared by alternatives, without the link before it ("books on foxes or badgers for toddlers":
    "toddlers") but for "under" before a number, a limit ("under 500 calories")."""
    if link.group(1).lower() == "under" and re.match(r"[$£€]?\d", phrase):
        return f"{link.group(1)} {phrase}"
    return phrase


_YEAR_RE = re.compile(r"(?:1[5-9]|20)\d\d(?:'?s)?")


def _code_like(words: list[str]) -> bool:
    """One or two words ending in a number or a code, a capitalised word or a code before it ("S23", "RX 6800",
    "Beijing 2008")."""
    last = words[-1] if words else ""
    roman = len(words) == 2 and words[0].isupper() and len(words[0]) > 1 and re.fullmatch(r"[IVX]{1,4}", last)
    return 1 <= len(words) <= 2 and bool(re.search(r"\d", last) or roman) \
        and re.fullmatch(r"[\w.+/-]+", last) is not None \
        and all(w[:1].isupper() or re.search(r"\d", w) for w in words[:-1])   # ("ASME IX": a code's roman part)


def _codes_after_head(kids: tuple[Node, ...], quoted: set[str]) -> Node | None:
    """Models and codes after what they are models of: "Samsung Galaxy S22 or S23", "graphics card RTX 3070 or RX
    6800", "100m Berlin 2009 or Beijing 2008": the other alternative is code-like (:func:`_code_like`), the first
    ends in as many words of its shape, and the words before them are shared.  (A lone number after "or" has a rule
    of its own: "iphone 14 or 15".)"""
    if len(kids) != 2 or not all(isinstance(c, Term) and c.text not in quoted for c in kids):
        return None
    head, words = kids[0].text.split(), kids[1].text.split()
    n = len(words)
    if _code_like(words) and len(head) > n and _code_like(head[-n:]) \
            and head[-n - 1].lower() not in _TITLE_SMALL | _NO_SHARED_HEAD_END \
            and not (n == 1 and re.fullmatch(r"[\d.,]+", words[0])) \
            and (n == 1 or re.search(r"\d|^[A-Z]+$", words[0]) or any(w.islower() for w in head[:-n])):
        # (a name and a model, "Nothing Phone 2a or Pixel 8a", are two products unless a topic comes first)
        return make_and([Term(" ".join(head[:-n])), make_or([Term(" ".join(head[-n:])), kids[1]])])
    return None


def _split_shared(node: Node, quoted: set[str], heads: bool = True) -> Node:
    """Share a phrase out of alternatives (above); ``heads=False``: only a phrase after the last one."""
    if isinstance(node, Not):
        return Not(_split_shared(node.child, quoted, heads))
    if isinstance(node, And):
        kids = [_split_shared(c, quoted, heads) for c in node.children]
        # "templates for A or B but not both": the "not both" pairs the alternatives as shared out, not
        # "templates for A" and "B"
        shared = {old.children: alts.children for old, new in zip(node.children, kids)
                  if isinstance(old, Or) and isinstance(new, And)
                  for alts in [next((c for c in new.children if isinstance(c, Or)), None)] if alts is not None}
        kids = [Not(make_and(shared[k.child.children])) if isinstance(k, Not) and isinstance(k.child, And)
                and k.child.children in shared else k for k in kids]
        return make_and(kids)
    if isinstance(node, Term):
        if node.text in quoted:
            return node
        years = _trailing_years(node.text)
        if years:   # "carnival queen 1960s 1970s", "ads for Woolworths Christmas 1965 1966 1967": any of the years
            head = node.text.split()[:-len(years)]
            return make_and([Term(" ".join(head)), make_or([Term(y) for y in years])])
        links = _links(node.text)
        if links and links[0].group(1).lower() in _SHARED_LINKS[:3]:   # "smoke linked to asthma admissions"
            x, y = _around(node.text, links[0])
            ground: list[Node] = []   # "semaglutide compared with tirzepatide for obesity": its common ground
            if len(links) == 2 and links[0].group(1).lower() != "linked to":   # (see _lex)
                link = _links(y)[0]
                b, c = _around(y, link)
                if link.group(1).lower() in _COMPARED_GROUND_LINKS and b and c and len(b.split()) <= 3 \
                        and len(c.split()) <= _MAX_SHARED_PHRASE and b.split()[-1].lower() not in _NO_SHARED_HEAD_END \
                        and c.split()[-1].lower().strip(".,;:!?") not in _TIME_UNITS:
                    ground, y = [Term(c)], b
            if x and y and len(links) == 1 + len(ground) \
                    and x.split()[-1].lower() not in _NO_SHARED_HEAD_END | _NO_OPERAND_END:   # "... when compared"
                return make_and([Term(x), Term(y)] + ground)
        return node
    if not isinstance(node, Or):
        return node
    kids = node.children
    codes = _codes_after_head(kids, quoted) if heads else None
    if codes is not None:   # (before the titles' guard: a product's name may be title-cased, "Samsung Galaxy S22")
        return codes
    if not all(isinstance(c, Term) and c.text not in quoted and not _title_cased(c.text) for c in kids) \
            and not _names_after_a_link(kids, quoted, heads):
        return make_or([_split_shared(c, quoted, heads) for c in kids])
    first, last = kids[0].text, kids[-1].text
    # lone adjectives before the last alternative qualify its noun: "public or private schools", "pneumatic or
    # electric valve actuators", "piezoelectric or thermoelectric energy harvesting from roads" (an adjective alone
    # names no topic; nouns before "or" stay as they are: "milk or peanut butter")
    words = last.split()
    gerunds = len(kids) == 2 and all(re.fullmatch(r"[a-z]{3,}ing", w) for w in (first, words[0]))   # "neutering or
    # spaying aftercare", "swimming or running shoes" (two gerunds; not "seasoning or rust removal", "sensing,
    # fighting or mating display")
    if all(len(c.text.split()) == 1 and (_adjective_like(c.text) or gerunds) for c in kids[:-1]) and 2 <= len(words) \
            and words[0].isalpha() and words[0].islower() and words[0] not in _TITLE_SMALL \
            and words[1].islower() and words[1] not in _TITLE_SMALL \
            and not (len(words) == 2 and words[1] in _GENERIC_TAILS | _TIME_UNITS):
        return make_and([make_or([Term(c.text) for c in kids[:-1]] + [Term(words[0])]), Term(" ".join(words[1:]))])
    # years after a topic: "romeo and juliet 1968 or 1996", "ward 6 budget 2023 or 2024" (the topic in each year)
    head = first.split()
    if len(head) >= 2 and all(_YEAR_RE.fullmatch(w) for w in [head[-1]] + [c.text for c in kids[1:]]) \
            and not _YEAR_RE.fullmatch(head[-2]) and head[-2].lower() not in _TITLE_SMALL | _BOUND_FOLLOWERS \
            and head[-2].lower() not in {"since", "until", "till", "before", "after", "circa", "c.", "ca."}:
        return make_and([Term(" ".join(head[:-1])), make_or([Term(head[-1])] + [Term(c.text) for c in kids[1:]])])
    # the head first: "X in A or B", "X for A, B or C"; the last link of the first alternative
    head_links = _links(first) if heads else []
    if head_links:
        m = head_links[-1]
        (x, a), link = _around(first, m), m.group(1).lower()
        x = re.sub(r"\s+(?:too|so|very|quite|really)$", "", x, flags=re.I)   # "houses too near the motorway or railway"
        others = [re.sub(rf"^{re.escape(link)}\s+", "", c.text, flags=re.I) for c in kids[1:]]
        tail = None   # "recipes with lentils or chickpeas under 500 calories": a phrase after the last one too
        last_links = _links(others[-1]) if others else []
        if len(last_links) == 1 and all(not _links(o) for o in others[:-1]) \
                and last_links[0].group(1).lower() != link:   # "Concussion in rugby or concussion in ice hockey"
            b, t = _around(others[-1], last_links[0])
            if b and t and len(b.split()) <= _MAX_SHARED_ALT and len(t.split()) <= _MAX_SHARED_PHRASE \
                    and len(a.split()) == len(b.split()) == 1 and t.split()[-1].lower() not in _TIME_UNITS:
                others, tail = others[:-1] + [b], Term(_shared_phrase(last_links[0], t))
        if x and a and len(a.split()) <= _MAX_SHARED_ALT and len(x.split()) <= _MAX_SHARED_HEAD \
                and x.split()[-1].lower() not in _NO_SHARED_HEAD_END \
                and all(len(o.split()) <= _MAX_OTHER_ALT and not _links(o) for o in others) \
                and not _mixed_case([a] + others):
            return make_and([Term(x), make_or([Term(a)] + [Term(o) for o in others])] + ([tail] if tail else []))
        # "electric car charging on board or at the port": the other alternative opens with a link of its own, so
        # both keep theirs
        other = kids[1].text.split() if len(kids) == 2 and tail is None else []
        if x and a and 2 <= len(other) <= _MAX_SHARED_ALT and other[0].lower() != link \
                and other[0].lower() in _PLACE_LINKS and link in _PLACE_LINKS \
                and len(a.split()) <= 2 and 2 <= len(x.split()) <= _MAX_SHARED_HEAD \
                and x.split()[-1].lower() not in _NO_SHARED_HEAD_END and not _links(" ".join(other[1:])) \
                and all(w.islower() for w in a.split() + other):
            return make_and([Term(x), make_or([Term(f"{m.group(1)} {a}"), kids[1]])])
    # names, the last with a lower-case phrase after it: "Walmart or Target earnings", "3PL or 4PL providers",
    # "Tintin or Asterix albums in French first editions" (the whole phrase is shared, links and all; not
    # lower-case nouns: "dog or cat bites" shares its noun, "milk or peanut butter", "lard or kidney beans" and
    # "fatigue or brain fog" do not, and only the meaning tells them apart)
    n = 0
    while n < len(words) and (_name_like(words[n]) or n > 0 and words[n].isdigit()   # "Section 21"
                              or n > 0 and re.fullmatch(r"[A-Z]\.", words[n - 1])):      # "E. coli"
        n += 1
    tail = words[n:]
    if 0 < n <= _MAX_SHARED_ALT and 0 < len(tail) <= (_MAX_SHARED_TAIL if not set(tail) & _TITLE_SMALL else
                                                      _MAX_SHARED_PHRASE + 2) \
            and tail[0].islower() and tail[0][:1].isalpha() and tail[0] not in _TITLE_SMALL \
            and all(w.islower() and w[:1].isalpha() for w in tail[:2]) and tail[-1] not in _TIME_UNITS \
            and not (len(tail) == 1 and tail[0] in _GENERIC_TAILS) \
            and all(0 < len(c.text.split()) <= _MAX_SHARED_ALT and _name_like(c.text.split()[0])
                    and all(_name_like(w) or w.isdigit() for w in c.text.split()) for c in kids[:-1]):
        return make_and([make_or([Term(c.text) for c in kids[:-1]] + [Term(" ".join(words[:n]))]),
                         Term(" ".join(tail))])
    # a lower-case topic, then names: "meteorite fall reports Scotland / Northern Ireland", "hotels London or Paris"
    # (the topic in each place; only names of two letters or more: "vitamin D or E" stays)
    head = first.split()
    n = 0
    while n < len(head) - 1 and (_name_like(head[-1 - n]) and len(head[-1 - n]) > 1
                                 or _case_v(head, len(head) - 1 - n)):   # a case's "Donoghue v Stevenson"
        n += 1
    topic = head[:len(head) - n]
    sentence_case = len(topic) >= 2 and topic[0][:1].isupper() and topic[0][1:].islower() \
        and all(w.islower() for w in topic[1:]) \
        and not {w.lower() for w in topic} & _NOT_A_TOPIC   # "Journalism work experience BBC or Guardian"
    if 0 < n <= _MAX_SHARED_ALT and topic and (topic[0][:1].islower() or sentence_case) and topic[0][:1].isalpha() \
            and topic[-1].lower() not in _TITLE_SMALL | _NO_SHARED_HEAD_END | {"like", "including", "such", "than", "e.g.", "per", "via",
                                                                  "about", "regarding", "near", "around"} \
            and any(w.islower() for w in topic) and (len(topic) >= 2 or topic[0].endswith("s")) \
            and len(topic) <= _MAX_SHARED_HEAD \
            and all(0 < len(c.text.split()) <= _MAX_SHARED_ALT
                    and all(_name_like(w) and len(w) > 1 for w in c.text.split()) for c in kids[1:]):
        return make_and([Term(" ".join(topic)), make_or([Term(" ".join(head[len(topic):]))] + [Term(c.text) for c in kids[1:]])])
    # "X of A or B" when X is two words or more, or A and B are names ("larval dispersal of clownfish or
    # damselfish", "spectroscopy of Betelgeuse or Antares"; not "balance of payments, corn or livestock", "cup of
    # tea or coffee", "Department of Health or Education")
    of = first.lower().rfind(" of ")
    if of > 0 and heads:
        x, a = first[:of].strip(), first[of + 4:].strip()
        others = [c.text for c in kids[1:]]
        names = all(len(o.split()) <= _MAX_SHARED_ALT and _name_like(o.split()[0]) and len(o.split()[0]) > 1
                    and all(_name_like(w) or w.isalpha() and w.islower() and len(o.split()) == 2 for w in o.split())
                    for o in [a] + others)   # "Quercus robur": a binomial
        single = all(len(o.split()) == 1 and o.islower() for o in [a] + others)
        if x and a and x.split()[-1].islower() and x.split()[-1].lower() not in _NO_SHARED_HEAD_END | _TITLE_SMALL \
                and len(x.split()) <= _MAX_SHARED_HEAD and not _links(x) \
                and (names or single and len(x.split()) >= 2):
            return make_and([Term(x), make_or([Term(a)] + [Term(o) for o in others])])
    # the phrase last: "A or B in X"; the first link of the last alternative
    tails = _links(last)
    if tails and not any(_links(c.text) for c in kids[:-1]):
        b, x = _around(last, tails[0])
        if b and x and len(b.split()) <= _MAX_SHARED_ALT and len(x.split()) <= _MAX_SHARED_PHRASE \
                and all(len(c.text.split()) <= _MAX_SHARED_ALT for c in kids[:-1]) \
                and not _mixed_case([c.text for c in kids[:-1]] + [b]) and x.split()[-1].lower() not in _TIME_UNITS \
                and b.split()[-1].lower() not in _NO_SHARED_HEAD_END \
                and not (all(w[:1].isupper() for w in b.split() + x.split()) and tails[0].group(1) in ("to", "of", "with", "for")):
            # (a title's own link stays: "Catan or Ticket to Ride")
            return make_and([make_or([Term(c.text) for c in kids[:-1]] + [Term(b)]), Term(_shared_phrase(tails[0], x))])
    # two numbers or versions side by side inside a keyword string: "Eurovision 1974 or 1975 full broadcast",
    # "Cummins 5.9 or 6.7 injectors": the words before and after are shared by both
    if len(kids) == 2 and heads and len(head) >= 2 and len(words) >= 2 and _parallel_slots(head, words):
        return make_and([Term(" ".join(head[:-1])), make_or([Term(head[-1]), Term(words[0])]),
                         Term(" ".join(words[1:]))])
    # a lower-case keyword string, then one word as the other alternative: "bulky waste collection fridge or sofa",
    # "cheap hostels lisbon or porto" share the string before the last word (17 of the 19 such requests by outside
    # writers so; "flaxseed oil or crisco" is the miss, and two words before "or" stay: "olive oil or butter")
    if len(kids) == 2 and len(words) == 1 and len(head) >= 3 and heads \
            and all(re.fullmatch(r"[a-z0-9][a-z0-9'-]*", w) for w in head + words) \
            and not {w for w in head + words} & (_TITLE_SMALL | _NO_SHARED_HEAD_END | _BOUND_FOLLOWERS | {"than", "other"}) \
            and words[0] not in _GENERIC_TAILS | _TIME_UNITS | {"less", "more", "fewer", "above", "below", "so", "similar"} \
            and head[-2] not in _DETERMINERS:   # ("fixing my sink or toilet": the noun goes with its "my")
        return make_and([Term(" ".join(head[:-1])), make_or([Term(head[-1]), Term(words[0])])])
    return node


# words that make a capitalised opening the writer's chatter, no topic ("Help me choose Dell or HP", "Not sure Dell or
# HP", "Thanks so much BBC or ITV")
_NOT_A_TOPIC = set("me you i us we my your help sure not thanks thank sorry please bother appreciated so much any "
                   "which choose pick decide".split())
_VERSION_RE = re.compile(r"v?\d+(?:[.,]\d+)*[a-z]?")


def _parallel_slots(head: list[str], words: list[str]) -> bool:
    """The last word before an "or" and the first after it are numbers, years or versions, between a head and a
    tail of other words. (Tried on the known texts and left out: single lower-case words, 6 readings mended and 182
    lost, compounds cut in the middle, "freeze dried or air dried"; single names, 2 mended and 18 lost, "Nelson
    Mandela or Desmond Tutu".)"""
    return all(_VERSION_RE.fullmatch(w) for w in (head[-1], words[0])) \
        and not {head[-2].lower(), words[1].lower()} & (_TITLE_SMALL | _NO_SHARED_HEAD_END | _BOUND_FOLLOWERS)


def _excluded_place(node: Node, quoted: set[str]) -> Node:
    """An excluded place or time keeps no preposition: "crop insurance except in India" excludes India,
    "observing nights not held at Brackenhurst" Brackenhurst, "heat stroke in older adults, but not in nursing
    homes" nursing homes (every outside writer so, the topic's own "in" or not)."""
    if isinstance(node, (And, Or)):
        kids = [_excluded_place(c, quoted) for c in node.children]
        if isinstance(node, And):
            kids = [_drop_leading_link(c, quoted) for c in kids]
        return make_and(kids) if isinstance(node, And) else make_or(kids)
    return node


# What the writer says of an excluded topic in a relative clause ("..., excluding the restaurant industry, which has
# been studied to death already", "but not the Great Barrier Reef, which has been covered"): a reason, not part of
# what is excluded.  Only "which" / "who" with a verb that tells (an auxiliary or a past tense) or a pronoun ("which
# I read last year"), after a comma or as a conjunct of its own ("the Beatles, who changed pop music"); inside a
# wanted term such a clause is the claim's own content ("BMP4, which is earlier than T") and stays.
_RELATIVE_ASIDE = (r"(?:which|who)\s+(?:i|i've|i'd|we|we've|we'd|you|they|my|our|is|are|was|were|has|have|had|"
                   r"will|would|can|could|may|might|must|\w+ed|led|made|won|took|became|began|gave|got|went|ran|"
                   r"wrote|found|left|lost|came|saw|brought|built|sold|held|kept|fell|rose)\b")
# What opens an excluded term without naming it: "but not the ones from Mylan", "but not which have preservative
# inside", "which is not contain caffeine" (a learner's), and a reason after it ("nothing with milk because he's
# allergic")
_EXCLUDED_HEAD_RE = re.compile(
    r"(?:(?:(?:the\s+)?ones?\s+)?(?:which|that|who)\s+(?:(?:have|has)(?!\s+(?:been|already|not|never|no|\w+ed|\w+en)\b)|"
    r"contain|contains|use|uses|include|includes|need|needs|require|requires|mention|mentions|involve|involves)|"
    r"(?:the\s+)?ones?\s+(?:with|by|from|containing|using|made\s+(?:by|with|from|of)|focused\s+on|about)|"
    # "not the bit about insurance", "disregarding the section on sale items"
    r"(?:the\s+)?(?:bits?|parts?|sections?|chapters?)\s+(?:about|on|covering|regarding|dealing\s+with)|"
    r"asking\s+(?:about|for)|"   # "(not asking about hotel costs)"
    r"contains?|containing|(?-i:(?:it's\s+|it\s+has\s+)?got|includes?|including|(?:when|if|where)\s+(?:(?:it's|it\s+is|they're|they\s+are|it\s+was)\s+)?"
    r"(?:caused\s+by|due\s+to|made\s+(?:by|with|from)|from|by)))\s+(?=\S)", re.I)   # (lower case: not a claim's "Including")
_EXCLUDED_REASON_RE = re.compile(r"^(?P<what>\S+(?:\s+\S+){0,5}?)(?:\s+(?:please|pls|plz))?(?:\s+(?:because|bc|cuz|coz)|"
                                 r"\s+(?:please|pls|plz)\s+(?:as|since)|,(?=\s+(?:i|we)\s+(?:have|had|am|don't|do\s+not|can't|"
                                 r"cannot)\b))\s+(?:he|she|i|we|they|my|our|his|her|it|he's|she's|i'm|we're|they're|it's)\b.*$",
                                 re.I | re.S)
# the writer's own clause after an excluded topic, told by a lower-case "i" ("lozenges i hate them")
_EXCLUDED_I_CLAUSE_RE = re.compile(r"(?:\s+in\s+(?:it|them))?\s*,?\s+(?:(?:as|since|because|cos|coz|bc|cuz)\s+)?"
                                   r"(?-i:i)\s+(?!(?:and|or|not)\b)[a-z']+\b.*$", re.S)
_EXCLUDED_ASIDE_RE = re.compile(rf",\s+{_RELATIVE_ASIDE}.*$", re.I | re.S)
# what the writer already has, said of an excluded topic ("leave out Carnap - I have his material already", "not
# the civil entries as I have those already"): a reason (only with what is had named by a pronoun or "plenty")
_EXCLUDED_HAVE_RE = re.compile(r"(?:\s*,\s*|\s+)(?:(?:as|since|because|cause|coz)\s+)?(?:i|we)(?:'ve|\s+have|\s+already\s+have|"
                               r"'ve\s+already\s+got|'ve\s+got|\s+already\s+own|\s+own|\s+got)\s+(?:his|her|their|its|those|these|"
                               r"them|that|this|it|plenty|enough|lots)\b.*$|"
                               # "... who I studied already", "please ive read it"
                               r"\s+(?:who|which|that)\s+(?:i|we)(?:'ve|\s+have)?\s+(?:already\s+)?(?:studied|read|seen|covered|"
                               r"done|visited|consulted)(?:\s+already)?\s*$|"
                               r"(?:\s+please)?\s+(?:i|we)(?:'ve|\s+have|ve)\s+(?:already\s+)?(?:read|seen|done|got)\s+"
                               r"(?:it|them|that|those)\b.*$|"
                               # "not the applesauce pouches thing I already know about"
                               r"(?:\s+thing)?\s+(?:(?:that|which)\s+)?(?:i|we)\s+already\s+know\s+(?:about|of)\s*$",
                               re.I | re.S)
# a verdict on an excluded topic as a conjunct of its own ("- no Champagne, it blows the budget")
_EXCLUSION_VERDICT_RE = re.compile(r"(?:it|that|this|they)(?:'s|'re|\s+(?:is|are|was|were|blows|costs|breaks|kills|"
                                   r"ruins|goes|takes|makes|gets|looks|tastes|feels|sounds))\b", re.I)
_ASIDE_ONLY_RE = re.compile(_RELATIVE_ASIDE, re.I)


def _excluded_asides(node: Node, quoted: set[str]) -> Node:
    """Exclusions without the writer's relative clauses, and no conjunct that is only such a clause (above)."""
    if isinstance(node, Or):
        return make_or([_excluded_asides(c, quoted) for c in node.children])
    if not isinstance(node, And):
        return node
    kids = []
    for i, c in enumerate(node.children):
        term = c.child if isinstance(c, Not) else c
        if i > 0 and isinstance(term, Term) and term.text not in quoted and term.text[:1].islower() \
                and _ASIDE_ONLY_RE.match(term.text) and (term is c or any(isinstance(k, Not) for k in kids)) \
                and not _EXCLUDED_HEAD_RE.match(term.text):
            continue   # "X but not Y, which has been covered": a conjunct NOT "which has been covered"
        if i > 0 and c is term and isinstance(term, Term) and term.text not in quoted and term.text[:1].islower() \
                and isinstance(kids[-1] if kids else None, Not) and _EXCLUSION_VERDICT_RE.match(term.text):
            continue   # "- no Champagne, it blows the budget"
        if isinstance(c, Not) and isinstance(c.child, Term) and c.child.text not in quoted:
            text = c.child.text
            m = _EXCLUDED_ASIDE_RE.search(text) or _EXCLUDED_HAVE_RE.search(text)
            if m and m.start() > 0:
                text = text[:m.start()]
            head = _EXCLUDED_HEAD_RE.match(text)
            if head and head.end() < len(text):
                text = text[head.end():]
            if len(text.split()) > 1:   # "... that don't have fish in them"
                text = re.sub(r"\s+(?:inside|in\s+(?:it|them))$", "", text)
            text = _EXCLUDED_REASON_RE.sub(r"\g<what>", text)
            m = _EXCLUDED_I_CLAUSE_RE.search(text)   # "not lozenges i hate them", "no X in it as i drive at 5am"
            if m and m.start() > 0:
                text = text[:m.start()]
            bare = re.sub(r"\s+ones?$", "", text)   # "but not the Short Stuff ones"
            if bare != text and [w for w in bare.split() if w.lower() not in ("the", "a", "an", "any")]:
                text = bare
            if text != c.child.text and text.strip():
                c = Not(Term(text))
        kids.append(_excluded_asides(c, quoted) if isinstance(c, (And, Or)) else c)
    if not any(not isinstance(c, Not) for c in kids):
        return node   # nothing wanted would be left
    return make_and(kids)


_MAX_EXCLUDED_PLACE = 6   # words
_EXCLUDED_LINK_RE = re.compile(r"(in|during|for|from|at|through|via|near|using|held\s+(?:at|in))\s+(?!(?:vitro|vivo|situ|silico|utero|toto|vacuo|respect|terms|spite|lieu|"
                               r"addition|favou?r|case|general|particular|short|brief|example|instance|sure|all|least|most|once|first|times)\b)(?=\S)", re.I)


def _drop_leading_link(node: Node, quoted: set[str]) -> Node:
    if not (isinstance(node, Not) and isinstance(node.child, Term)) or node.child.text in quoted:
        return node
    m = _EXCLUDED_LINK_RE.match(node.child.text)
    # lower case, a short phrase: not a claim's opening ("In mouse models, ...")
    # (or all in capitals: "GLASSES NOT FROM AMAZON")
    if not m or not (m.group(1).islower() or node.child.text.isupper()) \
            or not 2 <= len(node.child.text.split()) <= _MAX_EXCLUDED_PLACE:
        return node
    return Not(Term(node.child.text[m.end():]))


_LATITUDE = {"similar", "equivalent", "the like", "something similar", "similar ones", "something like it",
             "something like that", "an equivalent", "a similar one", "a similar model", "comparable"}
_MAX_SHARED_TAIL = 6   # words of a lower-case noun shared by names
_DETERMINERS = {"my", "your", "our", "his", "her", "their", "its", "this", "that", "these", "those", "some", "any",
                "no", "every", "each"}
_GENERIC_TAILS = {"style", "styles", "type", "types", "kind", "kinds", "sort", "sorts", "version", "versions", "way",
                  "ways", "variety", "varieties", "edition", "editions"}   # "(Neapolitan or New York style)"


# Adjectives by their ending ("organic", "electrical", "porous", "invasive", "disposable") and common ones that
# have none; nouns with such endings ("animal", "hospital") read the same way before "or" ("hospital or clinic
# visits").
_ADJECTIVE_END_RE = re.compile(r"[a-z]{3,}(?:ic|al|ous|ive|ful|less|able|ible|ish|ese)")
_ADJECTIVES = {"public", "private", "male", "female", "wild", "domestic", "urban", "rural", "young", "old", "new",
               "used", "early", "late", "acute", "chronic", "primary", "secondary", "local", "foreign", "free", "paid",
               "hot", "cold", "wet", "dry", "raw", "cooked", "fresh", "frozen", "canned", "hard", "soft", "full",
               "part-time", "full-time", "short-term", "long-term", "indoor", "outdoor", "upper", "lower", "inner",
               "outer", "front", "rear", "left", "right", "major", "minor", "mild", "severe", "open", "closed",
               # states of a thing ("lost or stolen card") and languages ("french or spanish dictionary")
               "lost", "stolen", "damaged", "broken", "missing", "expired", "blocked", "french", "dutch", "greek",
               "thai", "swiss", "welsh"}


def _adjective_like(word: str) -> bool:
    return word in _ADJECTIVES or bool(_ADJECTIVE_END_RE.fullmatch(word))


_YEAR_OR_DECADE_RE = re.compile(r"(?:1[5-9]|20)\d(?:\d|0s)")


def _trailing_years(text: str) -> list[str]:
    """Two years or decades at least, side by side at the end of a phrase of two words or more that holds none of
    its own; [] otherwise."""
    words = text.split()
    n = 0
    while n < len(words) and _YEAR_OR_DECADE_RE.fullmatch(words[-1 - n]):
        n += 1
    head = words[:len(words) - n]
    if n < 2 or len(head) < 2 or any(_YEAR_OR_DECADE_RE.fullmatch(w) for w in head) \
            or head[-1].lower() in _TITLE_SMALL | _BOUND_FOLLOWERS | {"between", "from", "and", "to"}:
        return []
    return words[len(words) - n:]


def _case_v(words: list[str], i: int) -> bool:
    """Word ``i`` is the "v" of a case's name between two capitalised words ("Donoghue v Stevenson")."""
    return words[i] in ("v", "v.") and 0 < i < len(words) - 1 and words[i - 1][:1].isupper() \
        and words[i + 1][:1].isupper()


def _name_like(word: str) -> bool:
    """A word of a name, an acronym or a code: "Walmart", "Apple", "iPhone", "3PL" (not "the", "earnings")."""
    return any(ch.isupper() for ch in word) and word.lower() not in _TITLE_SMALL


MAX_RULE_TERMS = 64
"""Most terms a rules reading may have (18,568 known texts: at most 20): a reading with more is of a text that is
prose or repetition, not a request (16,000 words of one sentence repeated read as 6,000 terms, whose AND of NOTs
overflowed float32 at search time)."""


def translate_rules(text: str) -> Node:
    """Translate one natural-language query; raises :class:`RuleError` when it cannot."""
    node = _translate_segments(text)
    count = sum(1 for _ in _terms(node))
    if count > MAX_RULE_TERMS:
        raise RuleError(f"the reading has {count:,} terms (at most {MAX_RULE_TERMS}): a text this long is prose, not "
                        "a request (embed it whole with --field text, or use an LLM translator)")
    return node


# A spaced dash or a colon between two parts of a one-line request ("tonsillectomy recovery diet - what can they
# eat", "WW1 service records - officers only, not other ranks", "medieval leprosy: hospitals, not the theology of
# disease") ends a term: writers never run one phrase across it.
_SEGMENT_BREAK_RE = re.compile(r"(?<=\S)\s+(?:-{1,2}|\u2013|\u2014)\s+(?=\S)|(?<=[^\W_]):\s+(?=\S)")
_MAX_SEGMENTED = 200   # characters: a longer text is prose, whose dashes are its sentences' own
_SEGMENT_OPENS_EXCLUSION_RE = re.compile(rf"(?:{_EXCLUDING}|but|and|or|apart|other\s+than|ideally)\b", re.I)


# second halves of hyphenated words that a tokeniser spaced out ("recombination - defective cells")
_COMPOUND_SECOND = set("defective deficient associated dependent independent induced mediated related specific derived "
                       "resistant sensitive range scale wide term based".split())
_WORD_RE = re.compile(r"[\w'&.+/-]+")


def _segment_breaks(text: str) -> list[tuple[re.Match, str]]:
    """The dashes and colons of ``text`` that part two topics (see ``_hyphen_joins``, ``_title_colon``), each with
    the two words beside it as a term would hold them ("diet what")."""
    if len(text) > _MAX_SEGMENTED or "\n" in text or "\r" in text or '"' in text or "(" in text \
            or re.search(r"\s[+|]\s", text):
        return []
    breaks = []
    for m in _SEGMENT_BREAK_RE.finditer(text):
        before, after = _WORD_RE.findall(text[:m.start()]), _WORD_RE.findall(text[m.end():])
        if not before or not after:
            continue
        a, b = before[-1].strip("."), after[0].strip(".")
        part = re.split(r"[,;.!?()]|\s[-\u2013\u2014]+\s|:\s", text[:m.start()])[-1]
        if "&" in part and len(part.split()) <= 4:
            continue   # a name with "&" is read whole only in its context ("Marks & Spencer: opening hours")
        pair = f"{a} {b}".lower()
        if m.group(0).startswith(":"):
            if not _title_colon(before, after):
                breaks.append((m, pair))
            continue
        if len(a) < 2 or len(b) < 2 and b not in ("I", "A", "a") or a.isdigit() or b.isdigit() \
                or b.lower() in _COMPOUND_SECOND:
            continue   # a tokeniser's spaced hyphen: "CTLA - 4", "the G - quadruplex", "Long - range"
        if not _hyphen_joins(text[:m.start()], a, b, m.group(0).strip() == "-"):
            breaks.append((m, pair))
    return breaks


def _title_colon(before: list[str], after: list[str]) -> bool:
    """A colon inside a title or a message: an article after it ("star wars: the last jedi"), a capitalised word
    (or a number after one) before it and title-cased words after it ("Biodiversity and Ecosystem Functioning:
    Current Knowledge", "The Witcher 3: Wild Hunt", "The Legend of Zelda: Tears of the Kingdom"), a capitalised name
    and a sentence-case subtitle ("Vitamin D: Shedding some light on ..."), or a field's label ("wtd: X")."""
    def title_words(words: list[str]) -> bool:
        return all(w[:1].isupper() or w[:1].isdigit() or w.lower() in _TITLE_SMALL for w in words) \
            and any(w[:1].isupper() and w.lower() not in _TITLE_SMALL for w in words)
    if len(before) == 1 or after[0].lower() in ("the", "a", "an"):
        return True   # (a subtitle opens with an article: "star wars: the last jedi", "machine learning: a
    last = before[-1]  # probabilistic perspective"; a facet after a colon seldom does)
    if not (last[:1].isupper() or last[:1].isdigit() and before[-2][:1].isupper()):
        return False
    return title_words(after[:2]) or after[0][:1].isupper() and all(w[:1].isupper() for w in before[-2:])


def _segments(text: str, breaks: list[re.Match]) -> list[str]:
    """``text`` cut at ``breaks``; a part that opens with an exclusion stays with the part before it."""
    out, start, sep = [], 0, ""
    for m in breaks + [None]:
        part = text[start:m.start() if m else len(text)]
        bare = part.strip(" ?!.")
        if re.search(r"\s(?:and|&|or)\s", bare) and len(bare.split()) <= 6 and _title_cased(bare, least=2) \
                and '"' not in bare:
            part = f'"{bare}"'   # a title or a name read alone is still one ("Mice and Mystics - Heart of Glorm")
        if out and _SEGMENT_OPENS_EXCLUSION_RE.match(part):
            out[-1] = out[-1] + sep + part
        else:
            out.append(part)
        if m:
            start, sep = m.end(), m.group(0)
    return out


def _runs_over_break(node: Node, pairs: list[str]) -> bool:
    """Whether a wanted term of ``node`` holds one of ``pairs``, the words beside a break: it runs over it."""
    kids = node.children if isinstance(node, And) else [node]
    terms = [_fold(k.text) for k in kids if isinstance(k, Term)]
    return any(pair in t for pair in pairs for t in terms)


_HYPHEN_PREFIXES = set("anti non pre post co re self semi multi inter intra over under well low high full part long "
                       "short cross ex sub ultra mid pro counter de un bi tri mono poly pan trans extra neo micro macro "
                       "mini super hyper state".split())
_RANGE_WORDS = set("mon tue tues wed thu thur thurs fri sat sun monday tuesday wednesday thursday friday saturday sunday "
                   "jan feb mar apr jun jul aug sep sept oct nov dec january february march april may june july august "
                   "september october november december spring summer autumn fall winter".split())


def _hyphen_joins(before: str, a: str, b: str, hyphen: bool) -> bool:
    """A dash that joins its two words rather than parting two topics: the first word stands alone since
    the text's start or its last stop ("London - Paris train times", "French - English dictionary", "doctor -
    patient confidentiality", "state - of - the - art"), a prefix ("anti - inflammatory"), a range ("1980s -
    1990s", "Mon - Fri", "9am - 5pm") or, with a plain hyphen, a one-word name ("Rolls - Royce", "US - China",
    "NF - kB")."""
    part = re.split(r"[,;:.!?()]|\s[-\u2013\u2014]+\s", before)[-1].split()
    if len(part) <= 1 or a.lower() in _HYPHEN_PREFIXES:
        return True
    numeric = lambda w: any(c.isdigit() for c in w) or w.lower() in _RANGE_WORDS
    if numeric(a) and numeric(b):
        return True
    upper = lambda w: any(c.isupper() for c in w)
    return hyphen and upper(a) and upper(b) and not upper(part[-2]) and part[-2].lower() not in _TITLE_SMALL \
        and b not in ("I", "A")   # ("Mice and Mystics - Heart of Glorm": a title's last word)


def _translate_segments(text: str) -> Node:
    """The reading of ``text``; where a wanted term of it runs over a dash or a colon that parts two topics, the
    reading of each part, ANDed."""
    node = _translate_once(text)
    breaks = _segment_breaks(text)
    if not breaks or not _runs_over_break(node, [pair for _, pair in breaks]):
        return node
    parts = _segments(text, [m for m, _ in breaks])
    # a question after the dash about what came before it ("- what can they eat", "- is it back?") names nothing
    parts = parts[:1] + [p for p in parts[1:] if not _question_about_it(p)]
    try:
        nodes = [_translate_once(p) for p in parts]
    except RuleError:
        return node
    return make_and(nodes)


_IT_WORDS = {"it", "they", "them", "this", "that", "these", "those", "he", "she", "one"}
_QUESTION_FRAME_WORDS = _IT_WORDS | {"what", "which", "how", "why", "when", "where", "who", "does", "anyone", "anybody",
                                     "know", "still", "really", "ever", "their", "its", "any", "u", "r"}


def _question_about_it(part: str) -> bool:
    """A question about what came before it, with a content word at most ("what can they eat", "is it back")."""
    words = [w.strip(_EDGE_PUNCT) for w in _fold(part).split()]
    words = [w for w in words if w]
    frame = _QUESTION_FRAME_WORDS | _CLAUSE_WORDS
    return bool(set(words) & _IT_WORDS) and sum(w not in frame for w in words) <= 1


def _opens_with_title(text: str) -> bool:
    """The text opens with a title that opens with a negation ("No Man's Sky tips"), perhaps after a short ask
    ("is Not Alone back in stock", "do you have No Thanks!")."""
    return bool(_TITLE_OPENING_RE.match(_TITLE_ASK_RE.sub("", text.lstrip(_EDGE_PUNCT), count=1)))


_TITLE_ASK_RE = re.compile(r"(?:is|are|do\s+you\s+(?:have|sell|stock)|have\s+you\s+got|any)\s+(?=(?:No|Not|Without)\s)")


def _translate_once(text: str) -> Node:
    try:
        node = _translate(text)
    except RuleError:
        if not _opens_with_title(text):
            raise
        return _translate(text, title_start=True)
    if not _wanted(node) and _opens_with_title(text):
        return _translate(text, title_start=True)
    if not _wanted(node) and _SKIP_NOUN_RE.match(text.lstrip(_EDGE_PUNCT)):
        # "skip permit for the road - not trade waste", "skip hire - no rubble": read as "skip X", nothing would
        # be wanted; the opening "skip" is then the noun (a builder's skip), not an exclusion
        stand_in = _SKIP_STAND_IN + text.lstrip(_EDGE_PUNCT)[4:]
        try:
            node = parse(canonical(_translate(stand_in)).replace(_SKIP_STAND_IN, "skip"))
        except RuleError:
            pass
        return node
    if isinstance(node, Not) and isinstance(node.child, Term) and len(node.child.text.split()) >= 2 \
            and _NO_OPENING_RE.match(text.lstrip(_EDGE_PUNCT)):
        # "no claims bonus protection", "no dig gardening", "NO KNEAD BREAD": a text that is one "no" phrase
        # names a thing (a query of one exclusion asks for almost everything; "no spoilers" alone still excludes)
        return _translate(text, title_start="no")
    return node


# an ask whose topic is a pronoun: "show me the articles about this", "Are there any real studies on that??"
_ANAPHORIC_ASK_RE = re.compile(r"\b(?:articles?|papers?|studies|study|research|information|info|anything|something|stuff|"
                               r"materials?|documents?|literature|evidence|sources?|books?|reading)\s+(?:[\w-]+\s+)?"
                               r"(?:about|on|regarding|concerning|for|of|into)\s+(?:this|that|it|them|these|those)"
                               r"(?:\s+(?:topic|subject|issue|question|one|area|matter))?[\s?!.:;)(*]*$", re.I)
# an ask that names nothing, after the sentence that does: "Could you point me in the right direction?", "Do you
# hold any?", "Can you help?", "Where should I look?", "Any suggestions?"
_EMPTY_ASK_RE = re.compile(
    r"(?:(?:could|can|would|will)\s+(?:you|anyone|someone|somebody)\s+(?:please\s+)?|please\s+)?"
    r"(?:point\s+me\s+in\s+the\s+right\s+direction|help(?:\s+(?:me|us))?(?:\s+with\s+(?:this|that|it))?|advise|"
    r"tell\s+me\s+where\s+to\s+(?:look|start|find\s+(?:it|them|this))|point\s+me\s+(?:to|towards)\s+(?:it|them|"
    r"something|anything|the\s+right\s+(?:place|people|section|resources))|recommend\s+(?:something|anything))"
    r"(?:\s+please)?(?:,?\s+(?:thanks|thank\s+you))?"
    r"|(?:do|does)\s+(?:you|the\s+(?:library|museum|archive|collection|office))\s+(?:hold|have|keep|stock|sell)\s+"
    r"(?:any|anything|it|them|one|some|such\s+\w+)(?:\s+(?:like\s+that|of\s+(?:these|those|this|that)|in\s+(?:your|the)\s+"
    r"(?:collection|archive|catalogue|catalog|holdings)))?(?:,?\s+and\s+(?:would|could|can|may)\s+(?:it\s+be\s+possible\s+"
    r"to\s+|i\s+|we\s+)(?:view|see|visit|access|consult|borrow)\s+(?:them|it|one|some))?"
    r"|where\s+(?:should|can|could|do)\s+i\s+(?:look|start|begin|find\s+(?:it|them|this|these))"
    r"|any\s+(?:ideas|suggestions|pointers|tips|advice|recommendations|help)(?:\s+(?:welcome|appreciated|please))?"
    r"|what\s+(?:do|would)\s+you\s+(?:suggest|recommend|advise)"
    # the writer's next step with no object of its own: "How do I arrange this?", "What should I do?"
    r"|(?:how|what)\s+(?:do|can|should|could|would)\s+(?:i|we)\s+(?:do|proceed)"
    r"|how\s+(?:do|can|should|could|would)\s+(?:i|we)\s+(?:go\s+about|arrange|sort(?:\s+out)?|fix|handle|deal\s+with|"
    r"request|claim|get|do)\s+(?:this|that|it|them)")
# a yes/no question's closing "or not" ("Can I freeze cooked rice or not?"), which negates nothing
_QUESTION_START_RE = re.compile(r"\s*(?:is|are|was|were|do|does|did|can|could|should|would|will|shall|may|has|have)\b",
                                re.I)
_OR_NOT_CLOSING_RE = re.compile(r",?\s+or\s+not(?=[\s?!.]*$)", re.I)
# ... after a clause of its own ("X, still needed or not?", "X - safe or not??"): a word or two after a comma or a dash
_OR_NOT_ASKED_RE = re.compile(r"(?:,|\s[-\u2013\u2014]|\u2014)\s*(?:[\w'-]+\s+){0,2}[\w'-]+\s+or\s+not[\s?!.]*$", re.I)
_SKIP_NOUN_RE = re.compile(r"skip\s+(?!(?:anything|everything|any|all|the|over|past|to|it|this|that|those|these|them)\b)[a-z]")
_SKIP_STAND_IN = "skipbin"   # a word no rule reads, put back as "skip" in the terms
_NO_OPENING_RE = re.compile(r"(?:no|NO)\s+[^\W\d]")


# A capitalised negation, then a capitalised word (a small word may come first): a title may open so
_TITLE_OPENING_RE = re.compile(r"(?:(?:No|Not|Without)\s+)+(?:(?:a|an|the|to|my|for|of)\s+)?[A-Z]")


# a phrase in single quotes that holds a connective: "the 'not heating' fault", "the ‘No Deal’ plan" (the
# writer quoted it as one name; an apostrophe inside or beside a word never opens one)
# (an apostrophe between letters is a word's: "the 'three strikes and you're out' law")
_SINGLE_QUOTED_RE = re.compile(
    r"(?<![\w'\u2019])(?:'(?P<a>(?=(?:[^'\n]|(?<=\w)'(?=\w)){0,60}?\b(?:not|no|and|or|nor|without|except|but)\b)"
    r"[^\s'\"](?:[^'\"\n]|(?<=\w)'(?=\w)){0,60}?(?<=[^\s'\"]))'"
    r"|\u2018(?P<b>(?=(?:[^\u2018\u2019\n]|(?<=\w)\u2019(?=\w)){0,60}?\b(?:not|no|and|or|nor|without|except|but)\b)"
    r"[^\s\u2018\u2019\"](?:[^\u2018\u2019\"\n]|(?<=\w)\u2019(?=\w)){0,60}?(?<=[^\s\u2018\u2019\"]))\u2019)"
    r"(?![\w'\u2019])", re.I)


def _wanted(node: Node) -> bool:
    """Some term is asked for, not only excluded."""
    if isinstance(node, Term):
        return True
    if isinstance(node, Not):
        return False
    return any(_wanted(c) for c in node.children)


def _translate(text: str, title_start: bool | str = False) -> Node:
    if not isinstance(text, str):
        raise RuleError(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS:
        raise RuleError(f"text is {len(text)} characters long (at most {MAX_QUERY_CHARS})")
    cleaned = _SINGLE_QUOTED_RE.sub(lambda m: f'"{m.group("a") or m.group("b")}"',
                                    _clean(_layout(text) if "\n" in text or "\r" in text else text))
    if not cleaned.strip():
        raise RuleError("empty text" if not text.strip() else "no words (only emoji, symbols or control characters): "
                        "the rules read words (write it in words, quote it, or use an LLM translator)")
    symbol = _symbol_operand(text)
    if symbol:
        raise RuleError(f"a term of emoji or symbols only ({symbol!r}): the rules read words, and leaving it out would "
                        "change the logic (write it in words, quote it, or use an LLM translator)")
    cleaned = _IN_EACH_CASE_RE.sub(r"\g<but> ", _assignment(_numbered(_spec(_pico(_spoken(cleaned))))))
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)   # runs of blanks: the closing-clause patterns below stay linear
    if cleaned.rstrip().endswith("?") and (_QUESTION_START_RE.match(cleaned) or _OR_NOT_ASKED_RE.search(cleaned)):
        # "Should I get a flu jab or not?", "metformin before contrast CT -- still needed or not??": the yes/no
        # question's claim (typed without its "?", a whether-question stays whole, as the labelled set has it)
        cleaned = _OR_NOT_CLOSING_RE.sub("", cleaned)
    cleaned = _HAVE_PLENTY_RE.sub("", _EITHER_FINE_RE.sub("", _BOTH_REQUIRED_RE.sub(" ", cleaned)))
    cleaned = _HAVE_THOSE_RE.sub(_had_excluded, cleaned)
    cleaned = _NOTHING_FROM_RE.sub(r"\g<before>, excluding ", _SOMETHING_ELSE_RE.sub("", _INDIFFERENT_RE.sub("", cleaned)))
    cleaned = _OR_FINE_RE.sub(r"\1", cleaned)
    cleaned = _ANY_KIND_RE.sub(lambda m: "excluding " if m.group("but") else "",
                               _IF_HELD_RE.sub("", _HELD_TAIL_RE.sub(r"\1", _STATUS_TAIL_RE.sub("", cleaned))))
    cleaned = _WHICHEVER_RE.sub("", _IN_YOUR_HOLDINGS_RE.sub("", _HANDED_IN_RE.sub("", cleaned)))
    cleaned = re.sub(r",\s*anything\s+goes\s+(?=unless\b)", ", ", cleaned, flags=re.I)   # "X, anything goes unless Y"
    cleaned = _NOT_BOTH_PHRASE_RE.sub(", but not both", _ONE_OR_OTHER_RE.sub("", cleaned))
    cleaned = _RECOMMEND_RE.sub(r"Looking for \g<x>", _which_better(_refusal_first(cleaned)))
    cleaned = _WHEN_ON_RE.sub(lambda m: m.group("x") or m.group("y") or m.group("z"), cleaned)
    for late_exclusion in (_POSTFIX_EXCLUSION_RE, _NO_PLEASE_RE):   # "X, Y excluded", "X no Y please"
        cleaned = late_exclusion.sub(lambda m: ", excluding " + m.group("what"), cleaned)
    cleaned = _ONLY_NO_RE.sub(lambda m: m.group(0) if m.group("det") else " " + m.group("only") + ", excluding ",
                              cleaned)
    m = _KEYWORD_NO_RE.fullmatch(cleaned.strip())
    if m and len(re.findall(r"\bno\b", cleaned)) == 1:
        cleaned = f"{m.group('what')}, excluding {m.group('not')}"
    cleaned = _LATER_ASK_RE.sub(", and ", _RELATIVE_BOTH_RE.sub(" and ", cleaned))
    cleaned = _drop_preference_clause(_PURPOSE_CLAUSE_RE.sub("", _WORK_PURPOSE_RE.sub(_drop_purpose, cleaned))).strip()
    cleaned = _GRATEFUL_CLAUSE_RE.sub("", cleaned)
    cleaned = _ONLY_IF_RE.sub(", and ", cleaned)   # "X, but only if they cover Y": X AND Y
    cleaned = _restrictions(_hedged(_loose_operators(_EXACT_PHRASE_RE.sub("", cleaned))))
    if len(cleaned) <= _MAX_LETTER:
        found = _sentences(cleaned)
        known = [_already_have(s) for s in found]
        if known != found:   # before the letter's own asks ("..., so please find me Y") take the clause away
            cleaned = " ".join(known)
        cleaned = _letter(cleaned)
    found = _sentences(cleaned)
    if len(cleaned) <= _MAX_REPHRASED and len(found) <= 2:   # a request, not prose
        paired = _dash_pairs(cleaned)
        if paired != cleaned:
            cleaned, found = paired, _sentences(paired)
    cleaned, found = _rephrase(cleaned, found)
    empty = [i for i, s in enumerate(found) if _EMPTY_ASK_RE.fullmatch(_fold(s).strip(" .!?"))]
    if empty and any(i not in empty and not _EXCLUSION_SENTENCE_RE.match(_fold(s)) for i, s in enumerate(found)):   # "... but not opinion columns. Could you point me in the right direction?"
        found = [s for i, s in enumerate(found) if i not in empty]
        cleaned = " ".join(found)
    sentences = _join_exclusions(found)
    if len(sentences) < len(found):
        cleaned = " ".join(sentences)
    request = next((i for i, s in enumerate(sentences) if _REQUEST_RE.match(s.lower())), None)
    if request is not None and _RESEARCHING_RE.match(_fold(sentences[request])):
        # "I'm researching X for a newsletter. Could you find Y?": the writer's study is context for the ask after it
        request = next((i for i in range(request + 1, min(len(sentences), request + 3))
                        if _REQUEST_RE.match(sentences[i].lower()) and not _RESEARCHING_RE.match(_fold(sentences[i]))),
                       request)
    if request and _ANAPHORIC_ASK_RE.search(sentences[request]):
        # "... corrosion of concrete bridges in coastal climate. Please show me the articles about this.": the ask's
        # topic is a pronoun, the topic is the sentence before it
        sentences = sentences[:request] + sentences[request + 1:]
        cleaned = " ".join(sentences)
        request = next((i for i, s in enumerate(sentences) if _REQUEST_RE.match(s.lower())), None)
    if request is not None and (request > _preamble_limit(sentences, request) or len(sentences) - request > _MAX_REQUEST):
        request = None  # a request-like sentence inside paragraphs of prose ("What is true of X is ...")
    if request:  # "Some argue that X. Find research on Y": the preamble is context, not the query
        cleaned = " ".join(sentences[request:])
    prose = len(sentences) > 1 and request is None   # a joined exclusion is part of its sentence
    toks = _strip_filler(_lex(cleaned, title_start))
    quoted = {" ".join(t.text.split()) for t in toks if t.kind == "QTERM"}
    sentence_like = _has_aux(toks)
    if sentence_like:  # the query holds sentences: plain and / or / not are their words
        toks = _sentence_words(toks)
        # a joined exclusion follows its question: "Does coffee cause cancer? Not decaf."
        toks = _drop_question_aux(toks, cleaned if len(sentences) == len(found) else cleaned.split("; ", 1)[0])
    prose_error = RuleError(f"{len(found)} sentences of prose with connectives inside them: where one term ends "
                            "is not in the wording (quote each term, or use an LLM translator)")
    try:
        toks = _normalise(_parentheticals(toks))
        if not toks:
            raise RuleError("nothing to search for")
        node = _drop_articles(_drop_placeholders(_Parser(toks, bool(_LIST_ASK_RE.match(cleaned))).parse()), quoted)
        # a comma before "or" keeps alternatives apart ("either X in A, or B"); the last comma of a list lets a
        # phrase after the list be shared ("statins, aspirin, or beta blockers for stroke prevention", as without
        # that comma), not one before it ("X for A, B, or C": where the head ends, the list does not tell)
        comma_or = [m.start() for m in re.finditer(r",\s*or\b", cleaned, re.I)]
        oxford = all(re.search(r",[^,;:.!?]{1,60}$", cleaned[:at]) for at in comma_or)
        if not sentence_like and (not comma_or or oxford):
            node = _drop_articles(_split_shared(node, quoted, heads=not comma_or), quoted)
        node = _excluded_place(node, quoted)
    except RuleError:
        if prose and sentence_like:   # the prose is the reason, not the token the parser stopped at
            raise prose_error from None
        raise
    if prose and sentence_like and len(set(_terms(node))) > 1:
        # Query-by-document: in paragraphs of prose, "and" / "or" / "not" / "without" are mostly words
        # of the sentences, and where one argument ends is a matter of meaning, not of wording.
        raise prose_error
    node = _split_sentence_terms(_excluded_asides(node, quoted), quoted, cleaned)
    expr = canonical(node)
    if len(expr) > MAX_QUERY_CHARS:
        raise RuleError(f"translation is {len(expr)} characters long (at most {MAX_QUERY_CHARS})")
    try:
        return parse(expr)
    except QuerySyntaxError as e:  # e.g. too deep for the query parser
        raise RuleError(f"translation does not parse: {e}") from None


_TERM_ABBREVIATIONS = {"approx", "incl", "dept", "corp", "capt", "sept", "rev", "gen", "col", "vol", "ave", "est", "jan",
                       "feb", "mar", "apr", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "univ", "govt", "intl",
                       "sgt", "hon"}
"""With ``_ABBREVIATIONS``: words that end with a full stop inside a phrase ("Prof. Okonkwo", "Sept. 2019")."""
# the word before the stop (from white space or "(" on) is part of the match: no look back over the text per stop
_TERM_SENTENCE_END_RE = re.compile(r"(?P<word>[^\s(]*\w)(?:\.+|(?P<bang>[!?]+))\s+(?=[^\W\d_])")
_MAX_FRAGMENT_WORDS = 8   # a longer sentence is prose (a query-by-document), one text
# words of a clause: with one of them the sentences are a statement or a story, not keyword fragments
_CLAUSE_WORDS = {"is", "are", "was", "were", "be", "been", "am", "do", "does", "did", "has", "have", "had", "can",
                 "could", "will", "would", "should", "may", "might", "must", "i", "i'm", "i've", "we", "we're", "you",
                 "it", "it's", "they", "he", "she", "them", "this", "that", "if", "there", "there's", "my", "our"}


def _term_sentences(text: str) -> list[str]:
    """``text`` cut where a sentence ends: after a word of three letters or more, or a number, that is no
    abbreviation ("Dr.", "L.", "Prof.", "e.g." stay), and a "!" or "?" only before a capital ("Wow! signal")."""
    parts, start = [], 0
    for m in _TERM_SENTENCE_END_RE.finditer(text):
        word = m.group("word")
        if m.group("bang") and not text[m.end()].isupper():
            continue
        if not (word.isdigit() or len(word) >= 3 and word.isalpha()) \
                or word.lower() in _ABBREVIATIONS or word.lower() in _TERM_ABBREVIATIONS:
            continue
        parts.append(text[start:m.end("word")])
        start = m.end()
    return [p.strip(" ,;:") for p in parts + [text[start:]]]


def _split_sentence_terms(node: Node, quoted: set[str], text: str = "") -> Node:
    """A wanted term that runs over a sentence's end is a term per sentence: "Rent arrears. Housing association",
    "HAND CREAM FOR DRY HANDS. UNSCENTED" (short fragments, each a topic), never one phrase."""
    if isinstance(node, (And, Or)):
        kids = [_split_sentence_terms(c, quoted, text) for c in node.children]
        return make_and(kids) if isinstance(node, And) else make_or(kids)
    if isinstance(node, Not) and isinstance(node.child, Term) and node.child.text not in quoted:
        # "hotels without breakfast. City centre only.": the exclusion ends with its sentence, and the fragment
        # after it is wanted (never one excluded phrase "breakfast. City centre")
        parts = _term_sentences(node.child.text)
        if len(parts) < 2 or not all(parts) or any(len(p.split()) > _MAX_FRAGMENT_WORDS for p in parts):
            return node
        at = text.find(node.child.text)
        if at >= 0 and re.match(r"\s*,?\s*(?:or|and|nor)\b", text[at + len(node.child.text):], re.I):
            return node   # "wine not from France. Italy or Spain.": the fragment begins a list of its own
        words = {w.lower() for p in parts[1:] for w in re.findall(r"[\w']+", p)}
        if words & (_CLAUSE_WORDS | _MORE_CLAUSE_WORDS) \
                or any(re.match(r"(?:no|not|none|nothing|nobody|neither|nor)\b", p, re.I) for p in parts[1:]):
            return node
        parts = [re.sub(r"[\s,]+please$", "", p, flags=re.I) or p for p in parts]   # "No X please. Only Y."
        # an ask or a closing after the exclusion ("... not more than 8 miles a day. Any guides?", "except Nestle.
        # Saludos") names nothing wanted
        kept: list[Node] = [Not(Term(parts[0]))]
        for p in parts[1:]:
            low = _fold(p)
            if _asks_only(p) or _SIGN_OFF_RE.fullmatch(low) or set(low.split()) <= _ASK_ONLY_WORDS | _KINDS_ASKED_FOR \
                    or _REMARK_RE.match(low):
                continue   # "Any guides?", "Saludos", "Too heavy.", "Urgent."
            more = _MORE_EXCLUDED_RE.fullmatch(p)   # "but no reviews. Editorials too.": excluded as well
            kept.append(Not(Term(more.group("x") or more.group("x2"))) if more else Term(p))
        return make_and(kept)
    if not isinstance(node, Term) or node.text in quoted:
        return node
    parts = _term_sentences(node.text)
    if len(parts) < 2 or not all(parts) or any(len(p.split()) > _MAX_FRAGMENT_WORDS for p in parts):
        return node
    words = {w.lower() for p in parts for w in re.findall(r"[\w']+", p)}
    if words & _CLAUSE_WORDS or any(re.match(r"(?:no|not|none|nothing|nobody)\b", p, re.I) for p in parts):
        return node   # sentences ("Climate change is real. No one denies it"), a claim's words, not fragments
    # "Ward sister here. Anything on pressure ulcer prevention?": a fragment's ask is no words of its topic
    parts = [_ANYTHING_ON_RE.sub("", p) or p for p in parts]
    return make_and([Term(p) for p in parts])


_REMARK_RE = re.compile(r"(?:too|so|very|really|way|far)\s+\S+$|(?:urgent|asap|boring|obviously|thanks?)$")
_MORE_EXCLUDED_RE = re.compile(r"or\s+(?P<x>.+?)|(?P<x2>.+?)\s+(?:too|as\s+well|either)", re.I)
_MORE_CLAUSE_WORDS = {"we've", "we're", "they're", "they've", "she's", "he's", "you've", "you're", "i'd", "we'd"}
_KINDS_ASKED_FOR = {"any", "guide", "guides", "video", "videos", "tips", "ideas", "suggestions", "recommendations"}
_ANYTHING_ON_RE = re.compile(r"^(?:anything|something)\s+(?:on|about|regarding|re:?)\s+(?=\S)", re.I)


def try_translate_rules(text) -> tuple[Node | None, str | None]:
    """``(ast, None)`` or ``(None, error message)``; never raises."""
    try:
        return translate_rules(text), None
    except RuleError as e:
        return None, str(e)
    except RecursionError:
        return None, "text nested too deeply"
    except Exception as e:  # a bug: still a row, never a lost batch
        return None, f"rules translator failed: {type(e).__name__}: {e}"
