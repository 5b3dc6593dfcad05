"""Lexing: text -> tokens (words, quoted terms, brackets, separators and the lexicon's markers), with the
token-level decisions about what a dash, a slash, a plus, an acronym's expansion or an error message is."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from ..spans import strip_terminal_escapes
from .lexicon import (
    _ADJECTIVE_END_RE,
    _ADVICE_NOUNS,
    _AUX,
    _BETWEEN_OPERANDS,
    _BINOMIALS,
    _BOUND_FOLLOWERS,
    _CLAUSE_OPENERS,
    _COMPARATIVES,
    _COMPARES,
    _DASHES,
    _EDGE_PUNCT,
    _fold,
    _HEDGE_LEADS,
    _in_title,
    _institution_name,
    _is_number,
    _MARKER_TABLE,
    _MAX_BINOMIAL,
    _MAX_MARKER,
    _MAX_SLASH_WORDS,
    _modifies,
    _name_or_code,
    _NEGATED_BE,
    _NO_OPERAND_END,
    _NOTHING_QUALIFIES,
    _NUMBER_WORDS,
    _plural_noun,
    _RELATION_NOUNS,
    _SMALL_COUNTS,
    _TITLE_SMALL,
    _title_with_and,
    _word_run_end,
)


@dataclass
class _Tok:
    kind: str  # WORD QTERM LP RP COMMA + marker kinds
    text: str = ""
    spaced: bool = True  # preceded by white space (or the start): "X -Y" is a minus, "(H2A)-histone" is not


_INITIALS_RE = re.compile(r"(?:[A-Za-z]\.){2,}")   # "U.S.", "e.g.": the last stop is the abbreviation's
# (a '"' right after a digit and before a space or the end is an inch mark: it opens no quoted term ('5" floppy
# disks or 3.5" disks'), and _lex drops it, so that '27" or more' reads as '27 or more' does)
_LEX_RE = re.compile(
    r'(?<!\d)"((?:[^"\\]|\\.)*)"|\u201c([^\u201c\u201d]*)\u201d|\u00ab([^\u00ab\u00bb]*)\u00bb'
    r'|([()\[\]{}])|([,;])|((?:[^\s()\[\]{},;"\u201c\u201d\u00ab\u00bb]|(?<=\d),(?=\d{3}(?!\d)|\d{1,2}(?:,\d{1,2})*[-)])'
    r'|(?<=\d)"(?=[\s,;.!?)\]]|$))+)', re.S)


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
# "free of charge", "free from discrimination": a price or a right, nothing excluded
_FREE_OF_NOT_EXCLUDED = frozenset(("charge", "charges", "cost", "costs", "fees", "fee", "tax", "vat", "duty",
                                   "discrimination", "harassment", "abuse", "fear", "violence", "poverty", "debt",
                                   "pain", "worry", "stress", "interference", "bias", "error", "errors", "defects",
                                   "obligation", "restrictions", "restriction", "copyright"))
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


# an ellipsis between two words ends the first: "Diabetes...but NOT type 1", "diabetes…but not type 1"
_GLUED_ELLIPSIS_RE = re.compile(r"(?<=[^\W\d_])(\.{3,}|…)(?=[^\W\d_])")


def _clean(text: str) -> str:
    """Terminal escape sequences, control characters, odd separators and emoji become spaces; texted contractions
    get their apostrophe."""
    out = []
    for ch in strip_terminal_escapes(text):
        cat = unicodedata.category(ch)
        out.append(" " if cat in ("Cc", "Cf", "Cs", "Zl", "Zp") else ch)
    # emoji are decoration, but not inside quotes: a quoted "🐍" is the writer's own term
    parts = _QUOTED_RE.split("".join(out))
    text = "".join(p if i % 2 else _GLUED_ELLIPSIS_RE.sub(r"\1 ", _EMOTICON_RE.sub(_emoticon, _EMOJI_RE.sub(" ", p)))
                   for i, p in enumerate(parts))
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


_NOT_QUANTIFIERS = {"all", "every", "everyone", "everybody", "everything", "many", "much", "always", "necessarily"}


def _not_idiom(out: list[_Tok], i: int) -> bool:
    """The "not" at ``out[i]``, before a word, opens an idiom rather than an exclusion (see the caller)."""
    nxt = _fold(out[i + 1].text).strip(".,;:!?")
    prev = _fold(out[i - 1].text).strip(".,;:!?\"'") if i and out[i - 1].kind == "WORD" else None
    later = [u for u in out[i + 2:] if u.kind != "WORD"]
    if i == 0 and nxt in _NOT_QUANTIFIERS and len(out) > 3 and not later:
        return True
    if prev in ("the", "a", "an") and nxt in ("so", "too", "very", "quite"):
        return True
    if prev == "why" and (i == 1 or out[i - 2].kind in ("COMMA", "SEMI")):
        return True
    return nxt in ("just", "only", "merely", "simply") and i > 0 and out[i - 1].kind == "COMMA" \
        and not any(u.kind == "BUT" or _fold(u.text) in ("also", "but") for u in out[i + 2:])


_HEADLINE_PREDICATES = {"safe", "good", "bad", "enough", "worth", "true", "false", "better", "worse", "needed",
                        "necessary", "harmful", "healthy", "unhealthy", "risky", "toxic", "fit", "ready", "right",
                        "wrong", "so", "as", "always", "yet", "what", "all", "just", "only", "merely"}


def _headline_predicate(word: str) -> bool:
    """A title's word after "Not" that says something of the topic (a participle, an adjective, a degree) rather
    than naming another topic."""
    low = _fold(word).strip(".,;:!?")
    return low in _HEADLINE_PREDICATES or _adjective_like(low) or (len(low) > 4 and low.endswith("ed"))


def _modifies_plural(out: list[_Tok], at: int) -> bool:
    """An -ing word other than a device's state that modifies the plural noun after it, ending the text ("... not
    drinking games", "... not mining impacts", "... not superconducting qubits"): a thing excluded, not a state
    ("smart meter not sending readings")."""
    if _fold(out[at].text).strip(".,;:!?") in _STATES or at + 2 != len(out) or out[at + 1].kind != "WORD":
        return False
    return _plural_noun(out[at + 1].text.strip(".,;:!?"))


def _advice_clause(out: list[_Tok], end: int) -> bool:
    """The words before ``end`` back to the last stop ask for advice ("tips for first time buyers", "how to lose
    weight", "strategies to stop smoking"): an "avoid X" after them is the advice's aim."""
    start = end
    while start > 0 and out[start - 1].kind not in ("COMMA", "SEMI"):
        start -= 1
    words = [w.strip(".,;:!?") for t in out[start:end] if t.kind == "WORD" for w in _fold(t.text).split()]
    return bool(set(words) & _ADVICE_NOUNS) or "how to" in " ".join(words)   # ("best practice": "practice")


def _lex(text: str, title_start: bool | str = False, pairs: bool = True) -> list[_Tok]:
    """The tokens of ``text``; ``pairs=False`` reads no two capitalised words joined by "and" as one name (a text
    that compares: "compare Nikon and Canon mirrorless cameras")."""
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
            raw.append(_Tok("WORD", word[:-1] if word.endswith('"') else word, spaced))   # (an inch mark)
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
        named = (_institution_name(raw, i) or _title_with_and(raw, i, pairs)) if not shouting else 0
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
                    or (t.text == "VS" and nxt == "WORD" and _fold(out[i + 1].text) in ("code", "codium")) \
                    or (low in ("free of", "free from") and any(_fold(u.text).strip(".,;:!?") in _FREE_OF_NOT_EXCLUDED
                                                                for u in out[i + 1:i + 4])) \
                    or (low.startswith("anywhere") and not (prev == "COMMA" or _plural_noun(out[i - 1].text))):
                # ("sans" in a name: "Source Sans Pro", "Médecins Sans Frontières"; "anywhere but X" after a comma
                # or a plural noun only: "jobs anywhere but London", not "work from anywhere except the office")
                t.kind = "WORD"   # (a state: "a drug that is not approved in Europe"; a title: "Kramer vs. Kramer")
        elif t.kind == "EXCL" and low in _CLAUSE_OPENERS:
            # "ignore", "avoid" and "avoiding" only after a comma or semicolon ("email filtering and ignore lists"
            # names a thing; "vegan recipes. Avoid soy."; "routes to Cardiff, avoiding Newport")
            after_stop = ("COMMA", "SEMI")
            openers = {"ignore": after_stop, "disregard": after_stop, "avoid": after_stop, "avoiding": after_stop,
                       "nothing": after_stop, "nothing with": after_stop}.get(low, ("COMMA", "SEMI", "BUT", "AND"))
            # before a name "save for" excludes wherever it stands ("teddy bears save for Steiff"; "save for
            # retirement" is a task)
            named = low == "save for" and nxt == "WORD" and out[i + 1].text[:1].isupper()
            # "avoid" / "avoiding" after a comma excludes ("kids bike safety check, avoid weekends"), but not as a
            # title's word ("..., Avoiding Cooked Meat Carcinogens") nor as the aim of advice ("car maintenance
            # tips, avoid costly repairs")
            aim = low.startswith("avoid") and prev == "COMMA" and (
                not t.text[:1].islower() or i < 2 or out[i - 2].kind != "WORD" or _advice_clause(out, i - 1))
            # "avoiding" straight after a topic excludes too ("Bristol to Exeter route avoiding the A38", "circular
            # walks from Montgomery avoiding road walking"), not after a link, an adverb or an advice's noun ("for
            # avoiding plagiarism", "actively avoiding", "tips avoiding ...")
            before = _fold(out[i - 1].text).strip(".,;:!?") if prev == "WORD" else ""
            topic_before = low == "avoiding" and t.text.islower() and prev == "WORD" and before.isalnum() \
                and before not in _TITLE_SMALL | _AVOIDING_NOT_AFTER and not before.endswith("ly") \
                and not _advice_clause(out, i - 1)
            # "I don't need to fly direct": a need that is an act, not a topic excluded
            act = low.endswith(" need") and nxt == "WORD" and _fold(out[i + 1].text).split()[:1] == ["to"]
            if (prev not in openers and not named and not topic_before) or aim or act or nxt not in ("WORD", "QTERM", "LP") \
                    or (low == "nothing" and (_fold(out[i + 1].text).split() or [""])[0] in _NOTHING_QUALIFIES
                        and not (out[i + 1].text.lower() == "from" and i + 2 < len(out)
                                 and out[i + 2].text[:1].isupper())):   # "nothing from Swartland" excludes
                t.kind = "WORD"
        elif t.kind == "EITHER" and low == "either" and prev == "WORD" \
                and _fold(out[i - 1].text).split()[-1] in ("a", "an", "the"):
            t.kind = "WORD"   # a noun's modifier: "an either way offence"
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
        # a lower-case topic, then the compared names: "swarm control Demaree vs Snelgrove", "law conversion course
        # SQE vs GDL" compare the names within the topic (the topic is a term of its own)
        n = 0
        while n < min(3, i - start - 2) and _name_or_code(out[i - 1 - n].text):
            n += 1
        topic = out[start:i - n]
        if n and i + 1 < end <= i + 4 and all(_name_or_code(u.text) for u in out[i + 1:end]) \
                and len(topic) >= 2 and all(not any(c.isupper() for c in u.text) for u in topic) \
                and sum(any(c.isalpha() for c in u.text) for u in topic) >= 2 \
                and _fold(topic[-1].text) not in _TITLE_SMALL | _NO_SHARED_HEAD_END \
                and (end == len(out) or out[end].kind in ("COMMA", "SEMI")):
            ground.append(i - n)
            continue
        linked = False
        for k in range(i + 2, min(end - 1, i + 5)):
            if _fold(out[k - 1].text)[-1:] in ".?!:":   # a sentence ends first
                linked = True
                break
            timed = _fold(out[k].text) in ("after", "before")   # "... after cardiac surgery", "... before bed"
            if _fold(out[k].text) in _COMPARED_GROUND_LINKS or timed:
                linked = True
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
        if not linked:
            k = _parallel_end(out, start, i, end)
            if k is not None:
                ground.append(k)
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
                     or _fold(out[i + 1].text).strip(".,;:!?") in _STATES) and len(out[i + 1].text) > 5 \
                and not _modifies_plural(out, i + 1):
            t.kind = "WORD"   # ("screen sharing not working": a state after an -ing noun too)
        # "foods not to eat when pregnant", "things not to do in Japan": "not to" + a verb negates the verb of the
        # phrase, no topic; "not to Paris" (a place after "to") stays an exclusion
        elif t.kind == "NOT" and t.text.lower() == "not" and 0 < i < len(out) - 2 and out[i - 1].kind == "WORD" \
                and _fold(out[i + 1].text) == "to" and out[i + 2].kind == "WORD" \
                and _fold(out[i + 2].text).strip(".,;:!?") in _PLAIN_VERBS:
            t.kind = "WORD"
        # a problem's state ("refund not received", "module not found error", "404 not found"): a past participle
        # straight after a word, no comma, is what the request is about, no exclusion
        elif t.kind == "NOT" and t.text.lower() == "not" and 0 < i < len(out) - 1 and out[i - 1].kind == "WORD" \
                and out[i + 1].kind == "WORD" and _fold(out[i + 1].text).strip(".,;:!?") in _PROBLEM_STATES:
            t.kind = "WORD"
        # a hedge ("not sure whether ...", "not certain if ...") negates no topic ("not certain breeds" does)
        elif t.kind == "NOT" and t.text.lower() == "not" and i + 1 < len(out) and out[i + 1].kind == "WORD" \
                and _is_hedge(out[i + 1].text, out[i + 2].text if i + 2 < len(out) else ""):
            t.kind = "WORD"
        # idioms whose "not" excludes nothing: a claim opened by a quantifier ("not all fats are bad", "not
        # everyone benefits from statins"), a degree after an article ("the not so obvious risks"), "why not X"
        # (asks for X), and "X, not just Y" with no "but" after it (Y as well)
        elif t.kind == "NOT" and t.text.lower() == "not" and i + 1 < len(out) and out[i + 1].kind == "WORD" \
                and _not_idiom(out, i):
            t.kind = "WORD"
        # a headline's claim: "Fish Oil Not Recommended for Atrial Fibrillation", "Statins Not Effective in the
        # Elderly" (a title-cased "Not" between capitalised words, before a participle or an adjective) negates the
        # claim, no topic ("Breast Cancer Not Prostate Cancer" still excludes)
        elif t.kind == "NOT" and t.text == "Not" and 0 < i < len(out) - 1 and out[i - 1].kind == "WORD" \
                and out[i + 1].kind == "WORD" and out[i - 1].text[:1].isupper() and out[i + 1].text[:1].isupper() \
                and _headline_predicate(out[i + 1].text.split()[0]) and _in_title(out, i) \
                and not _fold(out[i - 1].text.split()[-1]).endswith("ed"):   # ("Dubbed Not Subbed" contrasts)
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
    for at, t in enumerate(out):
        if (operator(t, "-") or (searchy and operator(t, "+"))) and minus \
                and minus[-1].kind in ("WORD", "QTERM", "RP", "COMMA", "SEMI") \
                and not (minus[-1].kind in ("COMMA", "SEMI")
                         and (len(minus) < 2 or "-" in minus[-2].text or len(t.text) < 4 or flags)):
            # ("X, Y, -Z": a field of its own; not "anti-inflammatory, -bacterial and -fungal", the prefix's other
            # words, nor a command's flags: "tar command flags, -x, -z", "java heap settings, -Xmx")
            minus.append(_Tok("NOT" if t.text[0] == "-" else "AND", t.text[0]))
            if not (t.text[0] == "-" and _fold(t.text[1:]) in ("not", "no") and at + 1 < len(out)
                    and out[at + 1].kind == "WORD"):   # ("-not SEG tariff": one "not")
                minus.append(_Tok("WORD", t.text[1:]))
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
    # "no obesity or diabetes" opening the request excludes both, as "excluding obesity or diabetes" does (a
    # request-initial "not" keeps the grammar's reading: "not coffee or tea" is (NOT coffee) OR tea)
    if out and out[0].kind == "NOT" and _fold(out[0].text) == "no" and len(out) > 3 and out[1].kind == "WORD":
        nxt = next((u.kind for u in out[2:] if u.kind != "WORD"), "END")
        if nxt in ("OR", "COR"):
            out[0].kind = "EXCL"
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
    return _excepted_exclusions(_search_string_no(out))


# "no sport except the Olympics", "excluding transfers except for Arsenal", "but not Brexit, unless it's about
# Northern Ireland": an exception to an exclusion wants what it names, `(NOT "sport" OR "the Olympics")`
_EXCLUDING = {"no", "not", "but not", "and not", "excluding", "but excluding", "without", "but without", "but no"}
_EXCEPTING = {"except", "except for", "apart from", "aside from", "other than", "unless it's", "unless it is",
              "unless it's about", "unless it is about", "unless they're", "unless they are", "unless they're about",
              "unless they are about", "with the exception of", "excepting"}
_MAX_EXCEPTION_WORDS = 4


def _excepted_exclusions(out: list[_Tok]) -> list[_Tok]:
    for i, t in enumerate(out):
        if t.kind not in ("NOT", "EXCL") or _fold(t.text) not in _EXCLUDING:
            continue
        j = i + 1
        while j < len(out) and out[j].kind == "WORD" and j - i <= _MAX_EXCEPTION_WORDS:
            j += 1
        comma = j < len(out) and out[j].kind == "COMMA"
        e = j + comma
        if j == i + 1 or e >= len(out) or out[e].kind != "EXCL" or _fold(out[e].text) not in _EXCEPTING:
            continue
        end = e + 1
        while end < len(out) and out[end].kind == "WORD":
            end += 1
        if end == e + 1 or end - e - 1 > _MAX_EXCEPTION_WORDS \
                or (end < len(out) and out[end].kind not in ("COMMA", "SEMI")):   # (the exception ends its clause)
            continue
        binary = t.kind == "EXCL" or _fold(t.text) == "and not"   # "X but not Y": X AND (...)
        head = [_Tok("AND", "and")] if binary and i > 0 and out[i - 1].kind in ("WORD", "QTERM", "RP") else []
        group = head + [_Tok("LP", "("), _Tok("NOT", "not"), *out[i + 1:j], _Tok("OR", "or"), *out[e + 1:end],
                        _Tok("RP", ")")]
        return out[:i] + group + _excepted_exclusions(out[end:])
    return out


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
# verbs of "not to" + a verb ("foods not to eat", "places not to miss", "what not to wear")
_PLAIN_VERBS = set("do eat drink wear say buy use miss visit see watch read try take make get go ask put give "
                   "invest hire trust plant feed mix wash store pack book forget skip sign".split())
# past participles that name a problem's state ("refund not received", "module not found")
_PROBLEM_STATES = set("received found returned delivered accepted recognized recognised detected shown "
                      "displayed updated saved sent refunded credited processed approved installed loaded "
                      "registered supported responding filed vested arrived issued dispatched shipped activated "
                      "verified triggered cleared".split())
_STATES = set("working loading connecting syncing responding showing opening starting printing charging booting "
              "updating displaying saving sending receiving launching installing downloading uploading finding "
              "recognising recognizing detecting pairing".split())


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


def _parallel_end(out: list, start: int, i: int, end: int) -> int | None:
    """Where the second of two compared topics ends when words follow it with no link: at the first's last word
    ("silicon anode vs graphite anode cycle life", "Schools class vs King Arthur class boiler pressures"), or as
    long as the first where both open with the same word ("Data analyst vs data scientist entry level salaries";
    not always: "lithium ion vs lithium iron phosphate battery life" is cut after "iron"); the rest is their
    common ground.  Where the first's last word does not come back, the words alone cannot tell the
    second's end ("merino wool vs polyester base layer odour", "red meat vs chicken heart disease risk"): None."""
    first = [_fold(u.text) for u in out[start:i]]
    second = [_fold(u.text).strip(".,;:!?") for u in out[i + 1:end]]
    if not 2 <= len(first) <= 4 or len(second) <= 2 or any(w[-1:] in ".?!:" for w in first + second[:-1]):
        return None
    n = next((j + 1 for j, w in enumerate(second[:-1]) if j and w == first[-1]), None)   # ("hot tea vs tea bags")
    if n is None and second[0] == first[0] and first[0] not in ("the", "a", "an") and len(second) > len(first):
        n = len(first)   # the same first word: the same shape ("Puya raimondii vs Puya berteroana germination rates")
    if n is None or second[n] in _TITLE_SMALL | _COMPARED_GROUND_LINKS | _NO_SHARED_HEAD_END | _NO_GROUND_START \
            or not any(c.isalpha() for c in second[n]) or len(second) - n > _MAX_SHARED_PHRASE:
        return None
    return i + 1 + n


_AVOIDING_NOT_AFTER = {"by", "for", "at", "of", "about", "on", "in", "to", "and", "or", "thus", "while", "when",
                       "from", "is", "are", "was", "were", "be", "been", "i", "we", "you", "they", "he", "she", "it",
                       "not", "without", "means", "ways", "tips", "help", "helps", "keep", "keeps", "start", "stop"}
_NO_GROUND_START = {"off", "alone", "then", "only", "up", "out", "too", "instead"}
_ASKED = {"you", "we", "i", "they", "anyone", "anybody", "someone", "somebody", "u"}
_NO_GROUP_START = {"no", "not", "but", "except", "excluding", "without", "ignore", "skip", "leave", "minus",
                   "anything", "nothing", "none", "neither", "other", "apart", "aside", "rather", "e.g", "i.e",
                   "eg", "ie", "including", "like", "such"}
_LATIN_AFTER_IN = {"vitro", "vivo", "situ", "silico", "utero", "toto", "vacuo"}   # "in vitro" is no link
_COMPARED_GROUND_LINKS = {"for", "in", "on", "among", "amongst", "during", "from", "at", "across", "within"}
_MAX_SHARED_PHRASE = 6  # words of a trailing shared phrase
_NO_SHARED_HEAD_END = {"the", "a", "an", "either", "both", "between", "whether", "and", "or", "not"}
_TIME_UNITS = {"second", "seconds", "minute", "minutes", "hour", "hours", "day", "days", "week", "weeks", "month",
               "months", "year", "years", "while", "time"}   # "itching after a week": a time, not a topic
_VERSION_RE = re.compile(r"v?\d+(?:[.,]\d+)*[a-z]?")


_LATITUDE = {"similar", "equivalent", "the like", "something similar", "similar ones", "something like it",
             "something like that", "an equivalent", "a similar one", "a similar model", "comparable"}


# Adjectives by their ending ("organic", "electrical", "porous", "invasive", "disposable") and common ones that
# have none; nouns with such endings ("animal", "hospital") read the same way before "or" ("hospital or clinic
# visits").
_ADJECTIVES = {"public", "private", "male", "female", "wild", "domestic", "urban", "rural", "young", "old", "new",
               "used", "early", "late", "acute", "chronic", "primary", "secondary", "local", "foreign", "free", "paid",
               "hot", "cold", "wet", "dry", "raw", "cooked", "fresh", "frozen", "canned", "hard", "soft", "full",
               "part-time", "full-time", "short-term", "long-term", "indoor", "outdoor", "upper", "lower", "inner",
               "outer", "front", "rear", "left", "right", "major", "minor", "mild", "severe", "open", "closed",
               # states of a thing ("lost or stolen card") and languages ("french or spanish dictionary")
               "lost", "stolen", "damaged", "broken", "missing", "expired", "blocked", "french", "dutch", "greek",
               "thai", "swiss", "welsh",
               # colours, materials and sizes ("red or blue paint", "cotton or wool socks", "small or medium dogs")
               "red", "blue", "green", "black", "white", "yellow", "purple", "pink", "brown", "grey", "gray",
               "silver", "golden", "cotton", "wool", "woollen", "leather", "suede", "wooden", "metal", "plastic",
               "glass", "steel", "silk", "linen", "small", "medium", "large", "big", "heavy", "light", "dark"}


def _adjective_like(word: str) -> bool:
    return word in _ADJECTIVES or bool(_ADJECTIVE_END_RE.fullmatch(word))
