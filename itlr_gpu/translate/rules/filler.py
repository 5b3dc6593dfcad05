"""Filler: the wording of a request around its topics ("find me", "documents about", "how do I get")
stripped from the tokens, and a term's own edges cleaned."""

from __future__ import annotations

import re

from .lexicon import (
    _CLOSING_ASKS,
    _EDGE_PUNCT,
    _FILLERS_LONGEST_FIRST,
    _fold,
    _GENRE_RE,
    _HOWTO_RE,
    _INTRO_RE,
    _NAMING_RE,
    _OPENING_GENRE_RE,
    _OWN_TASK_RE,
    _question_opener,
    _TITLE_SMALL,
    _TRAILING_FILLER,
    _word_run_end,
)
from .lexer import _adjective_like, _INITIALS_RE, _Tok


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
            if consumed >= 2 and _title_words(words[1:consumed]):
                continue   # a title's own words: "Where Can I Find Out About You", "The Guide to Getting It On"
            if consumed:
                words = words[consumed:]
                changed = True
                break
    return words


def _task_opening(pattern: re.Pattern, words: list[str]) -> str | None:
    """The opening of ``words`` that ``pattern`` matches ("how do I", "can I"), where a lower-case word (the task)
    follows it; None otherwise ("How to Train Your Dragon" is a title)."""
    m = pattern.match(_fold(" ".join(words)))
    n = len(m.group(0).split()) if m else 0
    return m.group(0) if m and len(words) > n and words[n][:1].islower() else None


def _title_words(words: list[str]) -> bool:
    """Words after a title's first, capitalised as a title's are ("Can I Find Out About", "Guide to", "We Have
    Any"): two capitals at least ("I" aside), and no lower-case word but the small ones."""
    big = [w for w in words if w not in ("I", "I'm", "I'd", "I've") and w.lower() not in _TITLE_SMALL]
    return len(big) >= 1 and all(w[:1].isupper() for w in big) and sum(w[:1].isupper() for w in words) >= 2 \
        or len(big) == 1 and big[0][:1].isupper() and len(words) >= 2 and words[-1].lower() in _TITLE_SMALL


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
    # "skipping anything that recommends X"
    r"(?:that|which)\s+(?:recommends?|mentions?|discusses?|covers?|involves?|suggests?|uses?)|"
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
            howto = _task_opening(_HOWTO_RE, words) if at_start else None
            if howto:
                words = words[len(howto.split()):]   # the task, as the user typed it
                if len(words) > 1 and words[0] == "do" and words[1].lower() not in _DO_KEPT:
                    words = words[1:]   # "how to do eczema wet wraps": the thing done (not "how to do it")
                words = _thing_got(words, toks[j:], howto)
            elif at_start and not (len(words) > 1 and _fold(words[0]) in ("hi", "hello", "hey", "yo")
                                   and words[1][:1].isupper() and words[1] not in ("I", "I'm", "I'd", "I've")):
                # (not "Hello Kitty", "Hey Jude": titles)
                # (an "is it ok to X" opening only before nothing else: not "... or not", "... now or wait")
                more = bool(_fold(" ".join(x.text for x in toks[j:])).strip(" ?.!"))
                asked = _question_opener(words, more)
                # ("what counts as evidence in court": what follows the question's opening is the topic whole)
                stripped = asked if _fold(" ".join(words[:3])) == "what counts as" and asked != words \
                    else _strip_prefix(asked, _INTRO_RE + [_GENRE_RE, _OPENING_GENRE_RE])
                if stripped != asked:   # the question after the ask ("where can I find out how to X", "... what
                    stripped = _question_opener(stripped, more)   # counts as X")
                    howto = _task_opening(_HOWTO_RE, stripped)
                    if howto:
                        stripped = stripped[len(howto.split()):]
                own = _task_opening(_OWN_TASK_RE, words) if stripped == words else None
                if own:
                    stripped = _thing_got(words[len(own.split()):], toks[j:], own)
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
    # typographic single quotes around the whole term go as straight ones do ("not \u2018apple\u2019"); one whose
    # partner is inside stays ("\u2018OK\u2019 etymology")
    while len(text) > 2 and text[0] == "\u2018" and text[-1] == "\u2019" and "\u2018" not in text[1:] \
            and not re.search(r"\u2019(?=\s)", text):
        text = text[1:-1].strip(_EDGE_PUNCT)
    low = text.lower()
    if low in _TRAILING_FILLER and not (low in _CLOSING_ASKS and all(w[:1].isupper() for w in text.split())):
        return ""   # (a title: "Is It Possible?")
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
