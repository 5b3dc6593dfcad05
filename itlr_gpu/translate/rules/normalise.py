"""Normalising: words merged into terms and context-dependent markers resolved, so that the parser sees
terms, separators and operators only."""

from __future__ import annotations

import re

from .lexicon import _EDGE_PUNCT, RuleError
from .lexer import _Tok
from .filler import _term_text

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


# a thing named by the quoted title after it ("the preprint titled", "a song called", "the paper entitled")
_NAMED_THING_RE = re.compile(r"(?:(?:the|a|an|this|that)\s+)?(?:[\w'-]+\s+){1,3}(?:called|titled|entitled|named)",
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
            if merged and merged[-1].kind == "TERM" and t.kind == "QTERM" \
                    and _NAMED_THING_RE.fullmatch(merged[-1].text):
                merged[-1].text = text   # "the preprint titled "X"": the title names it
            elif merged and merged[-1].kind == "TERM":
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
