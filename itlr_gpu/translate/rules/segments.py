"""Segments: where a spaced dash or a colon followed by a space parts two topics, and whether a reading
runs a term over such a break (then each side is read on its own)."""

from __future__ import annotations

import re

from ...query import Node
from ...query.ast import terms as terms_of
from .lexicon import _EDGE_PUNCT, _fold, _MONTHS, _SEASONS, _title_cased, _TITLE_SMALL, _WEEKDAYS
from .sentences import _EXCLUDING, _REQUEST_RE

# A spaced dash or a colon between two parts of a one-line request ("tonsillectomy recovery diet - what can they
# eat", "WW1 service records - officers only, not other ranks", "medieval leprosy: hospitals, not the theology of
# disease") ends a term: writers never run one phrase across it.
_DASH = r"(?:-{1,2}|\u2013|\u2014)"   # a spaced dash: hyphens, an en or an em dash
_SEGMENT_BREAK_RE = re.compile(rf"(?<=\S)\s+{_DASH}\s+(?=\S)|(?<=[^\W_]):\s+(?=\S)")
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
        if re.search(r"\s(?:and|&)\s", bare) and not re.search(r"\sor\s", bare) and len(bare.split()) <= 6 \
                and _title_cased(bare, least=2) and '"' not in bare:
            # a title or a name read alone is still one ("Mice and Mystics - Heart of Glorm"); with an "or" the
            # part is alternatives ("Germinal or Cotswold Seeds", "Snakes and Ladders or Pachisi")
            part = f'"{bare}"'
        if out and _SEGMENT_OPENS_EXCLUSION_RE.match(part):
            # (joined as a clause after a comma: "family life - skip deportation cases" reads as "..., skip ...")
            out[-1] = out[-1] + (", " if sep.strip() in ("-", "--", "\u2013", "\u2014") else sep) + part
        else:
            out.append(part)
        if m:
            start, sep = m.end(), m.group(0)
    return out


def _runs_over_break(node: Node, pairs: list[str]) -> bool:
    """Whether a term of ``node`` (wanted, an alternative or excluded) holds one of ``pairs``, the words beside a
    break: it runs over it ("gravel or road bikes - tyre pressure" read with an alternative "road bikes tyre
    pressure")."""
    terms = [_fold(t) for t in terms_of(node)]
    return any(pair in t for pair in pairs for t in terms)


_HYPHEN_PREFIXES = set("anti non pre post co re self semi multi inter intra over under well low high full part long "
                       "short cross ex sub ultra mid pro counter de un bi tri mono poly pan trans extra neo micro macro "
                       "mini super hyper state".split())
_RANGE_WORDS = _WEEKDAYS | _MONTHS | _SEASONS


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


_IT_WORDS = {"it", "they", "them", "this", "that", "these", "those", "he", "she", "one"}
_QUESTION_FRAME_WORDS = _IT_WORDS | {"what", "which", "how", "why", "when", "where", "who", "does", "anyone", "anybody",
                                     "know", "still", "really", "ever", "their", "its", "any", "u", "r"}


def _question_about_it(part: str) -> bool:
    """A question about what came before it, with a content word at most ("what can they eat", "is it back")."""
    words = [w.strip(_EDGE_PUNCT) for w in _fold(part).split()]
    words = [w for w in words if w]
    frame = _QUESTION_FRAME_WORDS | _CLAUSE_WORDS
    return bool(set(words) & _IT_WORDS) and sum(w not in frame for w in words) <= 1


_OWN_CIRCUMSTANCE_RE = re.compile(r"(?:i|i'm|im|i've|i'd|i\s+am|we|we're|we've|my|our|taking\s+my|"
                                  r"(?:had|done|got|seen|read)\s+(?:it|that|them|those))\b")
_GOES_ON_RE = re.compile(rf"\b(?:{_EXCLUDING}|skip|or|care|after|want|need|already|looking|interested)\b")


# "- I'm a lodger", "- I'm pregnant", "- I have a provisional licence": the writer's status is a facet of the
# topic (what follows "I'm a" is kept); "- I'm 70" (an age) names nothing
_STATUS_RE = re.compile(r"(?:i'm|im|i\s+am|we're|we\s+are|i\s+have|i've\s+got|we\s+have)\s+(?:(?:a|an|the)\s+)?"
                        r"(?P<what>[^\s,;.!?].*)$")
_AGE_RE = re.compile(r"(?:\d+|in\s+my\s+\d+s|over\s+\d+|under\s+\d+)(?:\s+(?:years?|yrs?|months?)(?:\s+old)?)?")
_MAX_STATUS_WORDS = 4


def _circumstance_topic(part: str) -> str | None:
    """What a part after a dash names when it is the writer's own circumstance: its status ("- I'm a lodger" ->
    "lodger"), nothing (None) for an age or a story, the part itself for anything else."""
    if not _own_circumstance(part):
        return part
    bare = part.strip(" " + _EDGE_PUNCT)
    m = _STATUS_RE.match(_fold(bare))
    if m and not _AGE_RE.fullmatch(m.group("what")) and len(m.group("what").split()) <= _MAX_STATUS_WORDS:
        return bare[m.start("what"):]
    return None


def _own_circumstance(part: str) -> bool:
    """The writer's own circumstance after a dash ("- I'm 70", "- my supervisor says it's been done to death",
    "- taking my nan and she hated evita"), which names no topic: in lower case but for "I" (a title is read, "- I
    Will Always Love You", and so is a clause with a name, "- my code throws TypeError"), and saying nothing more
    (one that goes on to exclude or to ask is read: "- I've read the 2020 guidance, so neither that nor X")."""
    words = part.strip(" " + _EDGE_PUNCT).split()
    if any(w.lower() != w and w.strip(_EDGE_PUNCT) not in ("I", "I'm", "I've", "I'd") for w in words[1:]):
        return False
    low = _fold(" ".join(words))
    return bool(_OWN_CIRCUMSTANCE_RE.match(low)) and not _GOES_ON_RE.search(low)


# words of a clause: with one of them the sentences are a statement or a story, not keyword fragments
_CLAUSE_WORDS = {"is", "are", "was", "were", "be", "been", "am", "do", "does", "did", "has", "have", "had", "can",
                 "could", "will", "would", "should", "may", "might", "must", "i", "i'm", "i've", "we", "we're", "you",
                 "it", "it's", "they", "he", "she", "them", "this", "that", "if", "there", "there's", "my", "our"}


# A question after a topic and a dash ("travel insurance - is it mandatory or optional?", "visiting hours PICU - are
# siblings allowed?", "oxygen concentrator on board - what paperwork do I need"): the topic, and what the question
# names once its frame is gone (its question word, auxiliary, pronouns, "do I need", a status word after a choice);
# a question that names nothing ("- who can help?", "- which is safer?") adds nothing.
_TOPIC_QUESTION_RE = re.compile(rf"^(?P<topic>[^?\u2013\u2014]*?[^\W_][^\w?]*)\s+{_DASH}\s+"
                                r"(?P<question>(?:is|are|was|were|will|would|can|could|do|does|did|should|has|have|"
                                r"which|what|whats|what's|who|where|when|how)\b[^-\u2013\u2014]*)$", re.I)
_QUESTION_FRAME = set("is are was were will would can could do does did should has have be been which what whats "
                      "what's who where when how much many long often far else it it's that this they you u i we "
                      "there one ones either".split())
_QUESTION_VERBS = set("cover covers deliver delivers ship ships serve serves stock stocks sell sells offer offers take "
                      "takes accept accepts allow allows include includes go goes run runs apply applies put pay get "
                      "find need use buy book bring wear".split())
# a participle or a verdict that opens what is left, before a preposition ("is it offered in fall", "is either
# enough for coming down X"): the phrase after the preposition is the topic
_QUESTION_LEADS = set("offered available open held run sold shown allowed covered included needed required enough "
                      "good suitable".split())
_QUESTION_PREPOSITIONS = set("in on to for about with at of into from".split())
_QUESTION_TAIL = set("need get use buy choose pick take do does i we you they should can would it is are be".split())
_CHOICE_STATUS = set("allowed covered included available permitted ok okay accepted required needed fine "
                     "better cheaper safer".split())
_NAMES_NOTHING = set("help safer better best worse cheaper easier more important enough right good ok okay possible "
                     "pay cost costs first needed necessary recommended suitable worth it one wrong back still on open "
                     "true real normal legit in stock available sold out now yet again".split())
_MAX_QUESTION_WORDS = 12
_EITHER_STATUS_RE = re.compile(r"\s+(?:allowed|permitted|ok|okay|accepted)\s+or\s+(?:not|banned|forbidden|prohibited|"
                               r"refused)$", re.I)
_GREETING_RE = re.compile(r"(?:hi|hello|hey|hiya|dear|good\s+(?:morning|afternoon|evening)|quick\s+(?:q|question|one))\b")
_COMPARATIVE_RE = re.compile(r"better|worse|best|worst|more|less|[a-z]{3,}er|[a-z]{3,}est")


def _topic_question(text: str) -> tuple[str, str] | None:
    """``(topic, what the question names)`` of "topic - question?" ("" where it names nothing); None for any
    other text."""
    if len(text) > _MAX_SEGMENTED or text.count("?") > 2 or "\n" in text:
        return None
    m = _TOPIC_QUESTION_RE.match(text.strip())
    if not m or re.search(rf"\s{_DASH}\s", m.group("topic")):
        return None
    topic = m.group("topic").strip()
    question = re.sub(r"[\s?!.]*(?:\b(?:thx|thanks|ta|pls|please)\b[\s?!.]*)*$", "", m.group("question"))
    words = question.split()
    if not words or len(words) > _MAX_QUESTION_WORDS or any(c in question for c in ",;:()\"") \
            or _title_cased(question, 2):
        return None   # (a title after the dash: "Bananarama - Is It Safe?", "Cat Stevens - Where Do the Children Play?")
    question = _EITHER_STATUS_RE.sub("", question)   # "are umbrellas allowed or banned"
    words = question.split()
    low = [_fold(w) for w in words]
    if _GREETING_RE.match(_fold(topic)) \
            or low[0] not in ("which", "what", "whats", "what's", "who", "when") and _REQUEST_RE.match(" ".join(low)):
        return None   # "Hi, quick q - where do I find X", "Hi there - do you have X": the question is the request
    if low[0] == "which" and any(_COMPARATIVE_RE.fullmatch(w) for w in low[1:4]) \
            and not set(low) & {"or", "and"}:
        # "A or B - which is better for C": two compared (read so on the whole text); nothing after the
        # comparative ("- which is safer?") names nothing
        if re.fullmatch(r"which(?:\s+one)?\s+(?:is|are|'s|would\s+be|will\s+be)\s+\S+(?:\s+for\s+(?:me|us|you))?",
                        " ".join(low)):
            return topic, ""
        return None
    if _question_about_it(question):
        return topic, ""   # "- what can they eat", "- is it back?"
    start = 0
    while start < len(low) and low[start] in _QUESTION_FRAME:
        start += 1
    if 0 < start < len(low) and {"do", "does", "did"} & set(low[:start]) and low[start] in _QUESTION_VERBS:
        start += 1   # "do you cover Harrogate or Knaresborough"
    if start + 2 < len(low) and low[start:start + 2] == ["the", "same"] and low[start + 2] in _QUESTION_PREPOSITIONS:
        start += 2   # "is it the same for Ryanair or easyJet"
    if start + 1 < len(low) and low[start] in _QUESTION_LEADS and low[start + 1] in _QUESTION_PREPOSITIONS:
        start += 1
    if start + 1 < len(low) and low[start] in _QUESTION_PREPOSITIONS:
        start += 1   # "do you deliver to X", "what else is there on X"
    end = len(low)
    while end > start and low[end - 1] in _QUESTION_TAIL:
        end -= 1
    if end > start + 2 and "or" in low[start:end] and low[end - 1] in _CHOICE_STATUS:
        end -= 1   # "are umbrellas or camping chairs allowed" (one thing's "are siblings allowed" keeps it)
    rest = low[start:end]
    if all(w in _NAMES_NOTHING for w in rest):
        return topic, ""
    return topic, " ".join(words[start:end])
