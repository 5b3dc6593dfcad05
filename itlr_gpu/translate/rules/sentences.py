"""Sentences: a text split into sentences, the preamble before a request, exclusions written as sentences
of their own, and the closing chatter that asks for nothing."""

from __future__ import annotations

import re

from .lexicon import _ASKS, _AUX, _AUX_STRONG, _EDGE_PUNCT, _fold, _HOWTO
from .lexer import _NO_GROUP_START, _slash_parts

# A sentence ends at . ? ! (closing quotes or brackets may follow) before a capitalised word, except
# after an initial ("J. Smith", "U.S. Army") or a common abbreviation.
_SENTENCE_END_RE = re.compile(r"(?<=[.?!])[\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]*[A-Z])")
_ABBREVIATIONS = {"dr", "mr", "mrs", "ms", "st", "prof", "vs", "etc", "e.g", "i.e", "no", "fig", "al", "inc", "ltd",
                  "co", "jr", "sr", "mt", "approx", "ca", "cf", "vol", "pp", "ed", "eds", "gen", "col", "sgt", "rev",
                  "exc", "excl", "incl"}   # ("all the Beatles albums exc. Let It Be")
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
    r"leave\s+out|skip\s+(?:anything|everything|any|all|the)|ignore|avoid|"
    # "Skip Chile." (not "Skip hire.": a builder's skip; nor "Skip ahead to ...", "Drop me a line.")
    r"(?:skip|drop)\s+(?!(?:hire|hires|rope|bins?|lorr(?:y|ies)|counting|breakfast|meals?|school|class|"
    r"classes|work|a\s+grade|generation|tracing|list|lists|it|this|that|them|these|those|shipping|off|out|in|by|"
    r"me|us|him|her|you|down|ahead|to|a|an|over|back|into|through|around|forward|past)\b)"
    r"(?=\w)|(?:i|we)\s+(?:don't|do\s+not)\s+want|"
    r"(?:i|we)\s+(?:don't|do\s+not)\s+need\s+(?:anything|stuff|material|papers|articles|info|information)\s+"
    r"(?:on|about|regarding)|"
    r"(?:it\s+)?(?:must|should)\s+not\s+(?:be\s+about|include|cover|mention)|"
    r"(?:please\s+)?(?:do\s+not|don't)\s+(?:use|include|cite)\s+(?:anything|any\s+\w+)\s+(?:on|about)|"
    r"(?:do\s+not|don't|dont)\s+show(?:\s+me)?(?:\s+(?:any|anything))?|"
    r"(?:i'm|i\s+am|we're|we\s+are)\s+not\s+(?:interested|looking\s+for|looking\s+at|after)|not\s+asking\s+about|"
    r"(?:i|we)(?:'d|\s+would)\s+(?:prefer\s+to|rather|like\s+to)\s+avoid)\b")
# why an exclusion-only sentence excludes ("..., since I've already covered them", "..., as everyone is tired
# of it"): no part of what it excludes
_REASON_RE = re.compile(r",\s+(?:(?:since|because|bc|cause|cuz|coz|cos|as(?!\s+(?:well|in|of|for|with|to|a|an|the|"
                        r"opposed)\b))\s+.*|(?:it's|it\s+has|that's|they've|those\s+have)\s+been\s+(?:done|covered)\b.*|"
                        r"which\s+(?:we|i|they)(?:'ve|\s+have)\s+(?:already\s+)?(?:covered|done|got|seen|read)\b.*|"
                        # "Skip the Minster, been twice."
                        r"(?:(?:i've|we've)\s+)?(?:been|done|seen|read|had|tried)\s+(?:it|that|them|those|there|twice|"
                        r"already|before)\b.*|"
                        # "..., that's covered", "..., that's a separate workstream", "..., my players hate it"
                        r"(?:that's|that\s+is|it's|it\s+is|those\s+are|they're|they\s+are)\s+(?:(?:already\s+)?covered\b.*|"
                        r"(?:a\s+)?(?:separate|different|another)\b[^()]*)|"
                        r"(?:i|we|they|he|she|(?:my|our)\s+\w+)\s+(?:really\s+|just\s+)?(?:hate|hates|dislike|dislikes|"
                        r"can't\s+stand|"
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
# "Zinc too.", "Nickel as well.": a sentence that adds a topic to the request before it
_TOO_SENTENCE_RE = re.compile(r"(?!.*\b(?:me|you|us|them|him|her|it|this|that|these|those|i|we|they|he|she|same|"
                              r"mine|yours|ours|thanks|thank|love|miss|hope)\b)"
                              r"(?P<what>[^\s,;:?!.][^,;:?!.]*?),?\s+(?:too|as\s+well)\s*[.!?]*", re.I)
_MAX_TOO_WORDS = 4
# "Must be automatic.", "Has to be dog friendly.", "Needs to have parking.": a requirement of the request before it
_MUST_SENTENCE_RE = re.compile(r"(?:it\s+|they\s+|the\s+\w+\s+)?(?:must|has\s+to|have\s+to|needs\s+to|need\s+to)\s+"
                               r"(?:be\s+|have\s+|include\s+|offer\s+)"
                               # not a remark ("Has to be today.", "Must be fine.") nor a perfect tense ("must have
                               # arrived")
                               r"(?!\w+ed\b)(?!(?:fine|ok|okay|good|great|nice|possible|easy|today|tomorrow|tonight|"
                               r"soon|now|there|done|me|it|this|that|said)\s*[.!]*$)"
                               r"(?P<what>[^\s,;:?!.][^,;:?!.]*?)"
                               r"(?:,?\s+(?:please|pls|plz|ideally|if\s+possible))?\s*[.!]*", re.I)
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
        # "Used car. Must be automatic." (a facet of it), "Copper news? Zinc too." (one more topic)
        added = None if prev is None or prev.rstrip()[-1:] not in ("?", ".") else next(
            (m.group("what") for m in (p.fullmatch(s) for p in (_MUST_SENTENCE_RE, _TOO_SENTENCE_RE))
             if m and len(m.group("what").split()) <= _MAX_TOO_WORDS and not _has_any_aux(m.group("what"))), None)
        if added:
            out[-1] = prev.rstrip(" .!?") + "; " + added + ("?" if prev.rstrip().endswith("?") else ".")
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
            # "Skip Chile." excludes Chile ("Skip the X", "skip anything on X": the lexer's own markers)
            s = re.sub(r"^(?:skip|drop)\s+(?!(?:the|any|anything|everything|all)\b)", "not ", s, flags=re.I)
            s = re.sub(r"^(?:(?:and\s+)?also|please)\b,?\s*", "", s, flags=re.I)   # "Also not Amazon.", "Please no
                                                                                  # X.": "also" is no topic
            out[-1] = prev.rstrip(".!") + "; " + s      # a "?" stays: the question before keeps its reading
        else:
            out.append(s)
    return out


_MAX_LETTER = 1500   # a longer text is prose, not a letter asking for documents
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
    # "Avoid anything about crypto, I want ...", "Ignore X; ..." (before a plain topic after a comma, left alone:
    # "avoid burnout, tips for nurses" is the topic)
    r"(?:ignore|disregard|avoid)(?:\s+(?:anything|everything|all|any\s+(?:papers|articles|news|results|studies|"
    r"mention))\s+(?:about|on|with|of|regarding|related\s+to|to\s+do\s+with))?|"
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
    cue = _fold(m.group("cue") or "").split()[:1]
    asks = rest.endswith("?") or _REQUEST_RE.match(_fold(rest)) or _has_any_aux(body)
    if m.group("comma") and not m.group("care") and not asks and cue not in (["ignore"], ["disregard"]):
        return sentence
    if cue == ["avoid"] and not asks:
        return sentence   # "avoid burnout: tips for nurses" is what the tips are for
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
    r"(?:but\s+)?(?:not(?:\s+including|\s+involving|\s+about|\s+related\s+to|\s+interested\s+in)?|no|nothing(?:\s+(?:with|about|on|"
    r"involving|related\s+to|using))?|except(?:\s+for)?|excluding|apart\s+from|aside\s+from|other\s+than|outside(?:"
    r"\s+of)?|without|ignoring|avoid(?:ing)?(?:\s+(?:any|anything))?|(?:anything|everything)\s+(?:but|except)|"
    r"any\s+\w+\s+(?:except|but|other\s+than|"
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
                                  # "except Excellent Women (already have it)"
                                  r"already\s+(?:have|got|own|read|seen|done)|too\s+many(?:\s+already)?|"
                                  r"too\s+(?:pricey|expensive|dear|costly|much|far|big|small|heavy)|"
                                  r"please|lol)\b|(?:hint|btw|fyi|ps|p\.s\.|side\s+note|note)\s*:)")
# (case-sensitive: "(Mostly Harmless)" is a title; "(hint: there isn't one)", "(btw: ...)" are remarks)
_ASIDE_AFTER_NO = {"and", "or", "but", "not", "nor", "either", "both", "neither", "of", "in", "on", "for", "with",
                   "without", "to", "a", "an", "the", "AND", "OR", "NOT"}


_ASIDE_DASH_RE = re.compile(r"\s+[-\u2013\u2014]+\s+")
# what a writer does not mind, said like an exclusion: "(no rush, no pressure)", "(not fussy, no preference)"
_ASIDE_HEDGE_RE = re.compile(r"(?:no|not)\s+(?:rush|hurry|pressure|worries|worry|problem|problems|stress|preference|"
                             r"idea|clue|fuss|bother|biggie|big\s+deal|urgent|fussy|sure|bothered|picky|particular|"
                             r"essential|important|a\s+scam|spam|a\s+problem|too\s+fussed)\b")


def _asides(text: str) -> str:
    def replace(m: re.Match) -> str:
        before = text[:m.start()].split()
        if not before or before[-1].strip("\"'") in _ASIDE_AFTER_NO or _fold(before[-1]) in _ASIDE_AFTER_NO:
            return m.group(0)
        body = m.group("body").strip()
        low = _fold(body)
        phrases = re.split(r"\s*[,;]\s*", body)
        first = phrases[0]   # the aside's first phrase ("not X, I've read Y")
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
            if joined == ", but not " and _ASIDE_HEDGE_RE.match(low) and clause_end:
                return ""   # "(no rush, no pressure)", "(not fussy)": what the writer does not mind
            phrase = _ASIDE_TOO_RE.sub("", first[cue.end():].strip()) if joined == ", and " else first[cue.end():]
            if joined == ", but not ":
                # "(not driving, not charity shops)", "(no pools, no spas - too noisy)": each further phrase that
                # opens with a lower-case exclusion is one more excluded item, up to a dash (the reason); the first
                # that does not ("I've read Y", "not sure about the dates", "Not Going Out": a title) ends the list
                phrase = _ASIDE_DASH_RE.split(phrase)[0]
                for more in phrases[1:]:
                    more_low = _fold(more)
                    again = pattern.match(more_low)
                    if not again or len(more) <= again.end() or not more[:1].islower() \
                            or _ASIDE_HEDGE_RE.match(more_low):
                        break
                    phrase += ", but not " + _ASIDE_DASH_RE.split(more[again.end():].strip())[0]
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


_SIGN_OFF_RE = re.compile(
    r"(?:(?:many|a\s+lot\s+of|huge|big|massive)\s+)?(?:thanks|thank\s+you)\b(?!\s+to\b)(?:,?\s+[^\s]+){0,8}|"
    r"(?:cheers|best|best\s+(?:regards|wishes)|kind(?:est)?\s+regards|warm(?:est)?\s+regards|regards|sincerely|"
    r"with\s+(?:many\s+|my\s+)?(?:thanks|gratitude|best\s+wishes|(?:kind|warm|best)\s+regards|regards)|all\s+the\s+best|"
    r"thanking\s+you(?:\s+in\s+(?:anticipation|advance))?|(?:much\s+|most\s+)?obliged|"
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
_CIRCUMSTANCE_TOPIC_RE = re.compile(r"\b(?:on|about|regarding|concerning|into)\s+(?!(?:it|them|this|that|monday|tuesday|"
                                    r"wednesday|thursday|friday|saturday|sunday|tomorrow|today|time)\b)")
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


_EXCLUDING = "not|no|nothing|none|never|without|except|excluding|avoid|skip|ignore|rather|instead|neither|nor|don't|dont"
_EXCLUDING_WORDS_RE = re.compile(rf"\b(?:{_EXCLUDING}|but)\b")
_FIRST_PERSON_RE = re.compile(r"\b(?:i|i'm|i've|i'd|my|me|we|we're|we've|our|us)\b")
# the circumstances hold no ask and no exclusion of their own ("I'm not interested in X, I want Y")
_ASK_WORDS_RE = re.compile(rf"\b(?:need|want|looking\s+for|searching\s+for|like|could\s+you|can\s+you|find|"
                           rf"(?:i|we)\s+search|{_EXCLUDING})\b")


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


def _has_strong_aux(sentence: str) -> bool:
    """Whether a sentence holds a verb's auxiliary (``is``, ``was``, ``don't`` ...): a claim, not a topic."""
    return any(_fold(w.strip(".,;:!?\"'")) in _AUX_STRONG for w in sentence.split())


def _has_any_aux(text: str) -> bool:
    """Whether the words hold an auxiliary or a modal (``is``, ``can``, ``has`` ...): a sentence, not notes."""
    return any(_fold(w.strip(".,;:!?\"'()")) in _AUX for w in text.split())


_MAX_FRAGMENT_WORDS = 8   # a longer sentence is prose (a query-by-document), one text
