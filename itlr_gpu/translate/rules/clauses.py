"""Token-level sentence tests: whether the words hold an auxiliary (then plain and/or/not are the sentence's
own words), a question's auxiliary to drop, where one sentence or title ends and the next begins, and
bracketed asides."""

from __future__ import annotations

import re

from .lexicon import _AUX_STRONG, _AUX_WEAK, _fold, _title_cased
from .lexer import _ASKED, _Tok


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
