"""Rule-based natural-language -> logical-query translator (no model, deterministic).

The translator reads common English logical phrasing and builds an AST of the
query language (:mod:`itlr_gpu.query`):

* exclusion clauses -- ``but not``, ``excluding``, ``except (for)``, ``without``,
  ``other than``, ``rather than``, ``apart from``, ``instead of``, ``as opposed to``,
  ``not including``, ``that do not mention``, ``, not`` ... -- scope over *everything
  before them*, and each item of the list after them is negated on its own:
  ``a or b but not c or d`` -> ``(("a" OR "b") AND NOT "c" AND NOT "d")``;
* ``and``, ``as well as``, ``along with``, ``together with``, ``in addition to``,
  ``plus`` are AND; ``or``, ``and/or`` are OR; a bare ``but`` joins two clauses by AND;
* ``either a or b`` and ``both a and b`` are bracketed groups; ``neither a nor b`` is
  ``(NOT "a" AND NOT "b")``; parentheses and double-quoted terms are kept;
* ``not x`` after an operator (or at the start) negates one operand, with the
  grammar's precedence NOT > AND > OR: ``a and not b or c`` ->
  ``(("a" AND NOT "b") OR "c")``;
* comma lists take the conjunction that closes them (``a, b and c``; Oxford commas
  too), while a comma-conjunction after a list of another kind joins at a lower
  level: ``a or b, and c`` -> ``(("a" OR "b") AND "c")``;
* filler is stripped: requests (``find``, ``show me``, ``I want``, ``I'm looking
  for``, ``could you``...) at the start, and generic document words with their
  relation (``documents about``, ``papers on``, ``articles discussing``, ``studies
  of``, ``news about``, ``ones about``...) at the start of any term;
* a small list of fixed binomials (``research and development``, ``rock and roll``,
  ``pros and cons``...) stays one term.

Terms are the remaining contiguous spans of the text, case and inner punctuation
kept.  :func:`translate_rules` never raises on a ``str``: text it cannot translate
(empty, only filler, too long, nested too deeply) gives a :class:`RuleError`
message instead, returned by :func:`try_translate_rules`.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..errors import QuerySyntaxError
from ..query import MAX_DEPTH, MAX_QUERY_CHARS, Node, Not, Term, canonical, make_and, make_or, parse

__all__ = ["RuleError", "translate_rules", "try_translate_rules", "RULES_VERSION"]

RULES_VERSION = "rules-1"
"""Changes whenever the rules change (part of the translation cache key)."""


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
    ("but nothing about", "EXCL"), ("but nothing on", "EXCL"), ("and nothing about", "EXCL"),
    ("and nothing on", "EXCL"), ("but nothing", "EXCL"), ("but no", "EXCL"), ("but without", "EXCL"),
    ("but excluding", "EXCL"), ("and excluding", "EXCL"), ("but except", "EXCL"), ("and without", "EXCL"),
    ("excluding", "EXCL"), ("exclude", "EXCL"), ("except for", "EXCL"), ("except", "EXCL"),
    ("with the exception of", "EXCL"), ("without", "EXCL"), ("other than", "EXCL"),
    ("rather than", "EXCL"), ("apart from", "EXCL"), ("aside from", "EXCL"), ("instead of", "EXCL"),
    ("as opposed to", "EXCL"), ("not including", "EXCL"), ("not involving", "EXCL"),
    ("not mentioning", "EXCL"), ("not about", "EXCL"), ("not related to", "EXCL"),
    ("unrelated to", "EXCL"), ("with no mention of", "EXCL"), ("with no mention", "EXCL"),
    ("with no", "EXCL"), ("minus", "EXCL"), ("leaving out", "EXCL"), ("omitting", "EXCL"),
    ("yet not", "EXCL"), ("and yet not", "EXCL"), ("but ignore", "EXCL"), ("but ignoring", "EXCL"),
    ("ignoring", "EXCL"), ("but leave out", "EXCL"), ("but exclude", "EXCL"), ("and exclude", "EXCL"),
    ("as well as", "AND"), ("along with", "AND"), ("together with", "AND"), ("in addition to", "AND"),
    ("and also", "AND"), ("but also", "AND"), ("plus", "AND"), ("and", "AND"), ("&", "AND"),
    ("and/or", "OR"), ("or else", "OR"), ("or", "OR"), ("but", "BUT"), ("nor", "NOR"), ("not", "NOT"),
    ("either", "EITHER"), ("both", "BOTH"), ("neither", "NEITHER"), ("not only", "SKIP"),
    ("anything but", "ALLBUT"), ("anything except", "ALLBUT"), ("everything but", "ALLBUT"),
    ("everything except", "ALLBUT"), ("nothing about", "ALLBUT"), ("nothing on", "ALLBUT"),
]
for _rel in ("that", "which"):
    for _aux in ("do not", "don't", "does not", "doesn't", "did not", "didn't"):
        for _verb in _V.split("|"):
            _MARKERS.append((f"{_rel} {_aux} {_verb}", "EXCL"))
    for _aux in ("are not", "aren't", "is not", "isn't"):
        _MARKERS.append((f"{_rel} {_aux} about", "EXCL"))
        _MARKERS.append((f"{_rel} {_aux} related to", "EXCL"))
    _MARKERS.append((f"{_rel} are unrelated to", "EXCL"))
    _MARKERS.append((f"{_rel} is unrelated to", "EXCL"))
for _aux in ("do not", "don't", "does not", "doesn't"):
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
        "supply and demand", "trial and error", "law and order", "black and white", "bread and butter",
        "fish and chips", "mergers and acquisitions", "checks and balances", "cause and effect",
        "arts and crafts", "q and a", "r and b", "rhythm and blues", "bed and breakfast",
        "search and rescue", "hide and seek", "give and take", "wear and tear", "peace and quiet",
        "health and safety", "drag and drop", "copy and paste", "hit and run", "stop and search",
        "cut and paste", "lock and key", "trial or error", "more or less", "sooner or later",
        "dungeons and dragons", "war and peace", "pride and prejudice", "romeo and juliet",
        "oil and gas", "food and drink", "bits and pieces", "nuts and bolts", "rules and regulations",
    )
}
_MAX_BINOMIAL = max(len(b) for b in _BINOMIALS)

# Filler at the start of the query (requests, politeness).
_INTRO = [
    r"(?:please|kindly|hi|hello|hey|ok|okay|so|now)\b,?",
    r"(?:can|could|would|will)\s+you\s+(?:please\s+)?",
    r"(?:i|we)(?:'m|\s+am|\s+are|'re)\s+(?:looking|searching|hunting)\s+for\b",
    r"(?:i|we)(?:'m|\s+am|\s+are|'re)\s+(?:interested\s+in|curious\s+about)",
    r"(?:looking|searching|hunting)\s+for\b",
    r"(?:i|we)(?:\s+would|'d|\s+really)?\s+(?:like|want|need|wish|love)(?:\s+to\s+(?:read|find|see|learn|know|"
    r"get|search|look|explore|study|understand|discover|research)(?:\s+(?:more|something|anything|up))?"
    r"(?:\s+(?:about|on|regarding|into|for))?)?\b",
    r"(?:find|show|give|get|fetch|retrieve|return|list|bring|search|display|pull\s+up|look\s+up|dig\s+up|"
    r"recommend|suggest|locate|provide|send|collect|gather)(?:\s+(?:up|out))?(?:\s+for)?(?:\s+(?:me|us))?"
    r"(?:\s+for)?\b",
    r"(?:what|how)\s+about\b",
    r"(?:what|which)\s+(?:is|are|was|were)\b",
    r"(?:which|what)\s+(?:documents?|papers?|articles?|studies|texts?|reports?|sources?|pages?|posts?|books?)\s+"
    r"(?:discuss|mention|cover|describe|explain|talk\s+about|deal\s+with|focus\s+on|are\s+about|address|"
    r"examine|explore|investigate|look\s+at)\b",
    r"tell\s+(?:me|us)(?:\s+more)?\s+about\b",
    r"what\s+(?:is|are)\s+(?:known|there|available|out\s+there)\s+(?:about|on|regarding)\b",
    r"(?:is|are)\s+there\s+(?:any\w*|some\w*)\s+(?:about|on)?\b",
    r"(?:about|on|regarding|concerning|re:?)\b",
]
_INTRO_RE = [re.compile(p) for p in _INTRO]

# Generic document words with their relation, at the start of any term.
_GENRE = (
    r"(?:(?:some|any|all|the|a|an|few|a\s+few|several|relevant|recent|good|new|latest|more|other|"
    r"scientific|academic|medical|research|news|blog|web|online|published|peer[- ]reviewed|useful|"
    r"interesting|related|similar)\s+)*"
    r"(?:documents?|docs?|papers?|articles?|texts?|posts?|pages?|studies|study|reports?|news|stories|"
    r"story|publications?|literature|sources?|results?|content|materials?|items?|entries|entry|ones|"
    r"those|anything|something|everything|stuff|information|info|works?|research|writings?|reading|"
    r"resources?|references?|records?|hits|passages?|sites?|websites?|links?|data|facts|details)"
    r"\s+(?:(?:about|on|of|regarding|concerning|discussing|covering|mentioning|describing|explaining|"
    r"addressing|examining|investigating|exploring|analy[sz]ing|featuring|involving|"
    r"related\s+to|relating\s+to|dealing\s+with|talking\s+about|focusing\s+on|focused\s+on|"
    r"in\s+relation\s+to|with\s+respect\s+to|to\s+do\s+with|around|into|for|in|from)\b"
    r"|(?:that|which)\s+(?:(?:discuss|discusses|mention|mentions|cover|covers|describe|describes|"
    r"explain|explains|talk\s+about|talks\s+about|deal\s+with|deals\s+with|focus\s+on|focuses\s+on|"
    r"concern|concerns|relate\s+to|relates\s+to|look\s+at|looks\s+at|address|addresses|examine|"
    r"examines|investigate|investigates|explore|explores|analy[sz]e|analy[sz]es|involve|involves|"
    r"feature|features|are\s+about|is\s+about|are\s+on|is\s+on|refer\s+to|refers\s+to)\b))"
)
_GENRE_RE = re.compile(_GENRE)
_TRAILING_FILLER = {"please", "thanks", "thank you", "pls", "plz", "thx"}
_EDGE_PUNCT = " \t\"'`.,;:!?-\u2013\u2014\u2026*_~/\\|"


# --------------------------------------------------------------------------- lexing


@dataclass
class _Tok:
    kind: str  # WORD QTERM LP RP COMMA + marker kinds
    text: str = ""


_LEX_RE = re.compile(r'"((?:[^"\\]|\\.)*)"|([()\[\]{}])|([,;])|([^\s()\[\]{},;"]+)', re.S)


def _clean(text: str) -> str:
    """Control characters and odd separators become spaces."""
    out = []
    for ch in text:
        cat = unicodedata.category(ch)
        out.append(" " if cat in ("Cc", "Cf", "Cs", "Zl", "Zp") else ch)
    return "".join(out)


def _lex(text: str) -> list[_Tok]:
    raw: list[_Tok] = []
    for m in _LEX_RE.finditer(text):
        q, paren, comma, word = m.groups()
        if q is not None:
            body = re.sub(r"\\(.)", r"\1", q, flags=re.S)
            if body.strip():
                raw.append(_Tok("QTERM", body))
        elif paren:
            raw.append(_Tok("LP" if paren in "([{" else "RP"))
        elif comma:
            raw.append(_Tok("COMMA"))
        else:
            raw.append(_Tok("WORD", word))
    # Sentence punctuation glued to words: "health?" / "decline." / "X:" (keep "E. coli" inside).
    for i, t in enumerate(raw):
        if t.kind == "WORD":
            last = i == len(raw) - 1 or raw[i + 1].kind in ("COMMA", "RP")
            stripped = t.text.rstrip("?!:") if not last else t.text.rstrip("?!:.")
            t.text = stripped
    raw = [t for t in raw if t.kind != "WORD" or t.text.strip(_EDGE_PUNCT)]
    # Markers and binomials, longest match first.
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
            words.append(raw[j].text.lower().strip(".,;:!?\"'"))
            j += 1
        matched = False
        for n in range(len(words), 1, -1):
            if tuple(words[:n]) in _BINOMIALS:
                out.append(_Tok("WORD", " ".join(r.text for r in raw[i:i + n])))
                i += n
                matched = True
                break
        if matched:
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
    # search-engine minus: "X -Y" -> X AND NOT Y
    minus: list[_Tok] = []
    for t in out:
        if t.kind == "WORD" and len(t.text) > 1 and t.text[0] == "-" and t.text[1].isalnum() and minus:
            minus.extend([_Tok("NOT", "-"), _Tok("WORD", t.text[1:])])
        else:
            minus.append(t)
    out = minus
    # "no" negates only where an operand starts: ", no X" / "and no X" / "no X" at the start.
    for i, t in enumerate(out):
        if t.kind == "WORD" and t.text.lower() == "no" and i + 1 < len(out) and out[i + 1].kind in ("WORD", "QTERM"):
            prev = out[i - 1].kind if i else None
            if prev in (None, "COMMA", "AND", "OR", "BUT", "LP"):
                t.kind = "NOT"
    return out


# --------------------------------------------------------------------------- filler


def _strip_prefix(words: list[str], patterns: list[re.Pattern]) -> list[str]:
    """Drop leading words matched (at word boundaries) by any pattern, repeatedly."""
    changed = True
    while changed and words:
        changed = False
        low = " ".join(w.lower() for w in words)
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


_BRIDGE = {"EITHER", "BOTH", "NEITHER", "NOT", "LP", "ALLBUT", "SKIP"}


def _strip_filler(toks: list[_Tok]) -> list[_Tok]:
    """Remove request filler at the start and genre filler at the start of every term."""
    out: list[_Tok] = []
    at_start = True  # nothing but group openers so far
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.kind == "WORD":
            j = i
            while j < len(toks) and toks[j].kind == "WORD":
                j += 1
            words = [w.text for w in toks[i:j]]
            # Words that are markers inside a filler ("documents that mention both")
            # were lexed as markers: filler patterns see only this run of words.
            if at_start:
                words = _strip_prefix(words, _INTRO_RE + [_GENRE_RE])
            else:
                words = _strip_prefix(words, [_GENRE_RE])
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


def _term_text(text: str) -> str:
    text = " ".join(text.split()).strip(_EDGE_PUNCT)
    low = text.lower()
    for tail in _TRAILING_FILLER:
        if low.endswith(" " + tail):
            text = text[: -len(tail) - 1].rstrip(_EDGE_PUNCT)
            low = text.lower()
    return text


# --------------------------------------------------------------------------- normalising


_SEPS = {"AND", "OR", "COMMA", "CAND", "COR", "NOR"}
_ITEM_END = {"TERM", "RP"}
_ITEM_START = {"TERM", "LP", "NOT", "EITHER", "BOTH", "NEITHER"}


def _normalise(toks: list[_Tok]) -> list[_Tok]:
    """Merge words into terms and resolve context-dependent markers."""
    # 1. adjacent WORD / QTERM runs -> TERM
    merged: list[_Tok] = []
    for t in toks:
        if t.kind in ("WORD", "QTERM"):
            text = _term_text(t.text) if t.kind == "WORD" else " ".join(t.text.split())
            if not text:
                continue
            if merged and merged[-1].kind == "TERM":
                merged[-1].text += " " + text
            else:
                merged.append(_Tok("TERM", text))
        elif t.kind == "SKIP":
            continue
        else:
            merged.append(_Tok(t.kind, t.text))
    # 2. context: NOT after an item is an exclusion; ", and" / ", or" / ", but" / ", not"
    out: list[_Tok] = []
    for t in merged:
        prev = out[-1].kind if out else None
        k = t.kind
        if k in ("ANDNOT", "ORNOT"):
            base = "AND" if k == "ANDNOT" else "OR"
            if prev == "COMMA":
                out.pop()
                base = "C" + base
            out.extend([_Tok(base), _Tok("NOT")])
            continue
        if k == "NOT" and prev in _ITEM_END:
            k = "EXCL"
        if prev == "COMMA":
            if k in ("EXCL", "NOT"):
                out.pop()
                k = "EXCL"
            elif k == "BUT":
                out.pop()
            elif k in ("AND", "OR"):
                out.pop()
                k = "C" + k
        if k == "EXCL" and prev in ("AND", "OR", "BUT"):
            out.pop()
        if k == "ALLBUT" and out:
            k = "EXCL"
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
        clean.pop()
    # 4. balance parentheses: drop stray ')' and unclosed '('
    depth = 0
    balanced: list[_Tok] = []
    for t in clean:
        if t.kind == "LP":
            depth += 1
        elif t.kind == "RP":
            if depth == 0:
                continue
            depth -= 1
        balanced.append(t)
    while depth:
        idx = max(i for i, t in enumerate(balanced) if t.kind == "LP")
        del balanced[idx]
        depth -= 1
    # 5. empty parentheses
    result: list[_Tok] = []
    for t in balanced:
        if t.kind == "RP" and result and result[-1].kind == "LP":
            result.pop()
            continue
        result.append(t)
    return result


# --------------------------------------------------------------------------- parsing


class _Parser:
    def __init__(self, toks: list[_Tok]):
        self.toks = toks
        self.i = 0

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
        if self.kind != "END":
            raise RuleError(f"could not read the text from {self.toks[self.i].text or self.kind!r}")
        return node

    def check(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise RuleError(f"nested too deeply (at most {MAX_DEPTH} levels)")

    def top(self, depth: int) -> Node:
        self.check(depth)
        node: Node | None = None
        if self.kind == "ALLBUT":
            self.i += 1
            return Not(self.top(depth + 1))
        if self.kind != "EXCL":
            node = self.segment(depth)
        while self.kind in ("EXCL", "BUT"):
            if self.kind == "EXCL":
                self.i += 1
                items = self.exclusions(depth)
                negs = [Not(x) for x in items]
                node = make_and(([node] if node is not None else []) + negs)
            else:
                self.i += 1
                right = self.segment(depth)
                node = right if node is None else make_and([node, right])
        if node is None:
            raise RuleError("nothing to search for")
        return node

    def exclusions(self, depth: int) -> list[Node]:
        items = [self.unary(depth)]
        while self.kind in _SEPS and self.peek() in _ITEM_START:
            self.i += 1
            items.append(self.unary(depth))
        return items

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
            elif k in _ITEM_START and k != "NOT":  # juxtaposed items: implicit AND
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
        nodes = [_precedence(part_operands, _resolve_commas(part_seps)) for part_operands, part_seps in parts]
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
        if k == "EITHER":
            self.i += 1
            items = [self.unary(depth + 1)]
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
            items = [self.unary(depth + 1)]
            while (self.kind in ("NOR", "OR", "COR") or (self.kind == "COMMA" and self.later({"NOR"}, {"AND", "CAND", "EXCL", "BUT"}))) \
                    and self.peek() in _ITEM_START:
                self.i += 1
                items.append(self.unary(depth + 1))
            return make_and([Not(x) for x in items])
        raise RuleError(f"expected a term, found {self.toks[self.i].text or k!r}" if k != "END"
                        else "expected a term at the end of the text")


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


def translate_rules(text: str) -> Node:
    """Translate one natural-language query; raises :class:`RuleError` when it cannot."""
    if not isinstance(text, str):
        raise RuleError(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS:
        raise RuleError(f"text is {len(text)} characters long (at most {MAX_QUERY_CHARS})")
    cleaned = _clean(text)
    if not cleaned.strip():
        raise RuleError("empty text")
    toks = _normalise(_strip_filler(_lex(cleaned)))
    if not toks:
        raise RuleError("nothing to search for")
    node = _Parser(toks).parse()
    expr = canonical(node)
    if len(expr) > MAX_QUERY_CHARS:
        raise RuleError(f"translation is {len(expr)} characters long (at most {MAX_QUERY_CHARS})")
    try:
        return parse(expr)
    except QuerySyntaxError as e:  # e.g. too deep for the query parser
        raise RuleError(f"translation does not parse: {e}") from None


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
