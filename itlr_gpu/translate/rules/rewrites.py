"""Whole-text rewrites before lexing: each turns one way of writing a request (a letter, a layout, a
spec, a numbered list, examples, hashtags, loose operators, restrictions, a hedge...) into the plain
phrasing the lexer reads, and leaves every other text unchanged."""

from __future__ import annotations

import json
import re

from .lexicon import (_DOCUMENTS_NEXT, _fold, _HEDGE_RE, _is_number, _MONTH_NAMES, _OWN_WORK, _RELATION_INTRO_RE,
                      _TITLE_SMALL, _WEEKDAY_NAMES)
from .sentences import (
    _already_known,
    _asides,
    _ASK_WORDS_RE,
    _asks_for_documents,
    _asks_only,
    _CHATTER_SENTENCE_RE,
    _CIRCUMSTANCE_TOPIC_RE,
    _closing_circumstance,
    _EXCLUDING_WORDS_RE,
    _EXCLUSION_SENTENCE_RE,
    _FIRST_PERSON_RE,
    _front_exclusion,
    _has_any_aux,
    _has_strong_aux,
    _known_exclusions,
    _MAX_LETTER,
    _mutual,
    _REASON_RE,
    _REQUEST_RE,
    _sentences,
    _SIGN_OFF_RE,
    _source_preference,
    _topic_head,
)

# Rephrasings of a short request, on its text before lexing (each returns the text unchanged when it does
# not apply).  Only requests of at most _MAX_REPHRASED characters, and every pattern is bounded in words: a
# long text costs nothing here.
_MAX_REPHRASED = 500
_BULLETS = "[\u2022\u2023\u25e6\u2043\u00b7]"
_BULLET_RE = re.compile(r"\s*" + _BULLETS + r"\s*")


# A clause after a spaced dash at the end saying what the writer knows or has done ("... - I know that one well.")
# says nothing to search for, unless it asks or excludes something ("- I Will Always Love You lyrics" is a title).
_DASH_CHATTER_RE = re.compile(r"\s[-\u2013\u2014]+\s+(?:i|we)(?:'ve|\s+have|\s+already)?\s+(?:know|knew|read|seen|saw|"
                              r"watched|tried|used|visited|been|own|heard|covered)\b[^-\u2013\u2014]{0,120}?(?=[.!]*$)",
                              re.S)
_DASH_KEEP_RE = re.compile(r"\b(?:not|no|nothing|none|never|without|except|excluding|don't|dont|didn't|want|need|"
                           r"looking|prefer|interested|like|or|and|already|avoid|skip|ignore|leave)\b")


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
# a closing reference for the desk ("Order number 55812.", "Policy no. MX44718", "Ref: 2231/B"): no topic
_REFERENCE_SENTENCE_RE = re.compile(r"(?i:(?:my|our|the)\s+)?(?i:order|policy|account|booking|reference|ref|customer|"
                                    r"membership|member|claim|ticket|case|invoice|reader|library\s+card|card)"
                                    r"(?i:\s*(?:number|no\.?|#|ref(?:erence)?|id))?\s*(?:[:#.]|\s+is)?\s*"
                                    r"[A-Za-z]{0,4}[-/]?\d[\w/-]*[.!]?")
_PREFERENCE_SENTENCE_RE = re.compile(r"(?:ideally|preferably|if\s+possible|bonus\s+(?:points\s+)?if)\b")
# who the writer is, said after the request ("... in toddlers? I'm a worried mom lol", "I am a nursing student.")
_IDENTITY_SENTENCE_RE = re.compile(r"(?:i'm|i\s+am|we're|we\s+are)\s+(?:just\s+|only\s+)?(?:a|an)\s+[\w' -]{1,40}?"
                                   r"(?:\s+(?:lol|haha|lmao|btw|here))*")
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
# the writer's aside after the request, in the third person or without a subject ("..., my son is lactose
# intolerant", "..., way too pricey", "..., tried it, didn't help", "... -- everyone already covers him", "..., we
# had a bad experience", "..., got my first job offer!!")
_ASIDE_TAIL_RE = re.compile(
    r"(?:,|\s[-\u2013\u2014]+)\s+(?P<aside>(?:my|our|his|her|their)\s+[\w'-]+(?:\s+[\w'-]+)?\s+(?:is|are|was|were|has|"
    r"have|had|keeps|wants|hates|loves|won't|can't|doesn't|didn't|just)\b[^,;:()]{0,60}|"
    r"(?:we|they|he|she)(?:'re|'ve|\s+are|\s+were|\s+had|\s+have|\s+is|\s+was)\s[^,;:()]{0,60}|"
    r"(?:(?:way|far|much)\s+)?too\s+\w+[^,;:()]{0,40}|tried\s+(?:it|them|that)\b[^;:()]{0,40}|"
    r"got\s+my\s+[^,;:()]{1,40}|everyone\s+(?:already\s+)?(?:covers|knows|does|writes)\b[^,;:()]{0,40})[\s.!?]*$")


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


# Punctuation dictated as words ("... for the Munros full stop", "... to Belfast question mark", "the wards comma
# excluding paediatrics full stop"): a text with no typed mark that ends with a spoken stop, question mark or
# exclamation mark after a word of its topic is dictated, and its spoken marks are marks.  Not after a determiner or a
# verb of writing ("a full stop", "the question mark symbol", "it typed full stop"), so the punctuation itself, a
# name ("Question Mark and the Mysterians") or a phrase ("a new line of credit") stays a topic.
# (in lower case, as dictation writes them: "Full Stop Full Stop" is a title)
_DICTATED_MARK_RE = re.compile(r"(?<=\w)\s+(?P<mark>full\s+stop|question\s+mark|exclamation\s+(?:mark|point)|"
                               r"new\s+(?:line|paragraph)|comma)(?=\s*$|\s+(?P<next>\w+))")
_DICTATED_END_RE = re.compile(r"\s(?:full\s+stop|question\s+mark|exclamation\s+(?:mark|point))\s*$")
_NO_MARK_BEFORE = set("a an the my your his her its our their this that any no one each every big little small first "
                      "last new old said say says saying type typed types typing write writes writing wrote dictate "
                      "dictated dictating use using used insert inserting put putting add adding draw drawing "
                      "call called calls keeps mean means oxford serial inverted".split())


def _dictated_marks(text: str) -> str:
    if re.search(r"[.,?!;:]", text) or not _DICTATED_END_RE.search(text):
        return text

    def mark(m: re.Match) -> str:
        before = _fold(text[:m.start()]).split()[-1]
        nxt = _fold(m.group("next") or "")
        if before in _NO_MARK_BEFORE or nxt in ("splice", "splices", "symbol", "key", "sign", "character", "of"):
            return m.group(0)
        kind = m.group("mark").split()[0]   # (the pattern matches lower case only)
        if kind == "comma" and m.group("next") is None:
            return m.group(0)
        return {"comma": ",", "full": ".", "question": "?", "exclamation": "!", "new": "."}[kind]
    marked = _DICTATED_MARK_RE.sub(mark, text)
    return text if _DICTATED_END_RE.search(marked) else marked   # (dictated only where its closing mark was read)


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
    if re.search(r"\bwith\s+(?:and|or|vs\.?|versus)\s+without\b", _fold(rest)):
        return sentence   # "comparing schools with and without uniforms": one topic, seen both ways
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
# take:") goes; another head stays before the list.  Letters mark a list too, closed by a bracket only ("a) X
# b) Y": "a." is an initial).  An item that is itself an exclusion ("3) not Z", "3) no Z") stays one, after the
# alternatives: as items on their own lines or after commas read.
_NUMBER_MARK_RE = re.compile(r"(?:(?:^|(?<=[\s:;,(]))\(?(?P<n>[1-9])|(?:^|(?<=[\s:;,]))\(?(?P<l>[a-h])(?=\)))"
                             r"[).]\s+(?=\S)")   # (a letter's bracket not right after a word: "Section 3(a)")
# lower case only: "No Country for Old Men", "Never Let Me Go" are titles
_NEGATED_ITEM_RE = re.compile(r"(?:not|no|without|excluding|except)\s+\S")


def _mark_number(mark: re.Match) -> int:
    n = mark.group("n") or mark.group("l")
    return int(n) if n.isdigit() else ord(n) - ord("a") + 1
_LIST_HEAD_RE = re.compile(r"(?:.*\b(?:these|following|one\s+of|any\s+of|either|options|choices|topics?|ideas|"
                           r"which|whichever|any|all|both|i'd|i\s+would|i'll|take|terms|request|search|list|needed|"
                           r"apply|items)\b.*|)$")


def _numbered(text: str) -> str:
    if len(text) > _MAX_REPHRASED:
        return text
    marks = list(_NUMBER_MARK_RE.finditer(text))
    if len(marks) < 2:
        return text
    run = [marks[0]] if _mark_number(marks[0]) == 1 else []
    for m in marks[1:]:
        if run and _mark_number(m) == _mark_number(run[-1]) + 1 and (m.group("n") is None) == (run[-1].group("n") is None):
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
    negated = [item for item in items if _NEGATED_ITEM_RE.match(item)]
    wanted = [item for item in items if not _NEGATED_ITEM_RE.match(item)]
    if not wanted:
        return text
    joined = (" and " if both else " or ").join(wanted)
    if head.endswith(":") and _LIST_HEAD_RE.match(low_head[:-1]):
        head = ""
    elif re.search(r"\beither$", low_head):
        pass
    elif head:
        joined = f"({joined})" if not head.endswith(":") and len(wanted) > 1 else joined
    joined += "".join(f", {item}" for item in negated)
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
    claim = _has_any_aux(low[ask.end() if ask else 0:])
    for m in _EXAMPLES_RE.finditer(low):
        before = text[:m.start()].strip()
        if not before or not before[-1:].isalnum() and before[-1:] not in ")'\u2019":
            continue
        marked = re.match(r"\s*[(,]?\s*(?:e\.\s?g\.?|eg\.)", low[m.start():]) is not None
        if claim and not (marked and m.group("open").strip()):
            continue   # a claim's or a question's "such as" ("... is associated with diseases such as X"; its
            # "e.g." after a comma or in brackets marks examples: "Can I store vehicles, e.g. a caravan?")
        if m.group("open").strip() == "" and not marked \
                and not re.match(r"\s+(?:such\s+as|things\s+like|stuff\s+like)", low[m.start():]):
            continue   # "say", "eg" and "for example" need a comma or a bracket before them
        bracket = "(" in m.group("open")
        rest = text[m.end():]
        stop = _EXAMPLES_STOP_RE.search(rest)
        if bracket and not rest[stop.start():].startswith(")"):
            continue
        body = rest[:stop.start()].strip().rstrip(",")
        items = [p.strip() for p in re.split(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or|and/or)\s+", body)]
        if not all(items) or any(len(p.split()) > _MAX_EXAMPLE_WORDS for p in items):
            continue
        if (claim or not m.group("open").strip()) and re.match(r"(?:for|in|on|at|to|with|by|from|about)\b",
                                                               _fold(items[0])):
            continue   # an example of a circumstance ("Can students apply for hardship funds, e.g. for rent arrears?")
        if len(items) > 1 and not bracket and not re.search(r"\b(?:and|or)\s+\S+(?:\s+\S+){0,5}$", body) \
                and not re.match(r"(?:things|stuff)\s+like", low[m.start():].strip(" ,")):
            continue   # "factors, such as lncRNAs, influence X": a list without its "and" / "or" is a clause
        after = rest[stop.end():] if bracket else rest[stop.start():]
        group = items[0] if len(items) == 1 else "(" + " or ".join(items) + ")"
        return f"{before}, {group}{after}"   # (a comma, no word: a sentence read whole keeps only the writer's)
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
# "X, but leave Y out", "X; leave Y out please": an exclusion around its object (a short one, to the clause's end)
_LEAVE_OUT_RE = re.compile(r"(?<=[;,])\s*(?:but\s+|and\s+)?(?:please\s+)?leave\s+(?P<what>(?!(?:it|this|that|them|these|"
                           r"those|me|us)\b)[^,;.!?()]{1,60}?)\s+out(?:\s+(?:please|pls|plz|thanks))?(?=\s*(?:[,;.!?]|$))",
                           re.I)
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
    text = _LEAVE_OUT_RE.sub(lambda m: f" excluding {m.group('what')}", text)
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


# An embedded yes/no question asks what its direct form asks: "Could you tell me whether you stock X or Y?" is read
# as "Do you stock X or Y?", "I'd like to know if there is a course in A or B" as "Is there a course in A or B?",
# "wondering if I can park X" as "Can I park X?".  Only the forms whose direct question the asks read (what is held,
# whether there is a thing, what the writer may do), and no word is added to a term: any other clause is left as
# written ("... whether the trust is funding X", "... whether caffeine affects tendon healing").
_EMBEDDED_ASK_RE = re.compile(
    r"(?:(?:hi|hello|hey|so|and|also|but|please|pls|plz|kindly)\b[\s,]+){0,2}"
    r"(?:(?:(?:(?:can|could|would|will)\s+(?:you|u)|(?:can|could)\s+(?:someone|anyone|somebody|anybody))\s+"
    r"(?:please\s+|pls\s+|kindly\s+|just\s+)?(?:be\s+able\s+to\s+)?)?"
    r"(?:tell\s+(?:me|us)|let\s+(?:me|us)\s+know|confirm|advise(?:\s+(?:me|us))?|check|find\s+out|say)"
    r"|(?:(?:i|we)(?:'d|\s+would)\s+|would\s+)(?:like|love)\s+to\s+(?:know|ask|check|find\s+out|confirm)"
    r"|(?:(?:i|we)\s+)?(?:just\s+)?(?:want|wanted|wish|need)\s+to\s+(?:know|ask|check|find\s+out|confirm)"
    r"|(?:just\s+)?checking"
    r"|(?:(?:i|we)(?:'m|\s+am|\s+was|\s+were|'re|\s+are)\s+)?(?:just\s+)?wondering|(?:i|we)\s+(?:just\s+)?wonder(?:ed)?"
    r"|(?:does\s+)?(?:anyone|anybody|someone|somebody)\s+know|do\s+(?:you|u)\s+(?:happen\s+to\s+)?know)"
    r"\s+(?:whether|if)\s+(?=\S)")
# what a service holds or does for its users ("you stock X", "you accept X"): the direct "do you ..." is an ask
_SERVICE_VERBS = ("have hold own sell stock carry keep offer accept allow permit provide support subscribe need make "
                  "fix grow translate restore service repair buy deliver ship teach print install clean host "
                  "organise organize").split()
_YOU_GOT_RE = re.compile(r"(?P<s>you|u)(?:'ve|\s+have)\s+(?=(?:still\s+|already\s+)?got\b)")
_YOU_RE = re.compile(r"(?:you|u)\s+(?:(?:still|currently|also|ever|already|now|perhaps|possibly|actually)\s+)*"
                     r"(?P<v>[a-z]+)\b")
_YOU_CAN_RE = re.compile(r"(?P<s>you|u)\s+(?P<v>can|could)\s+(?=\S)")
_THERE_RE = re.compile(r"there(?P<v>'s|s(?=\s)|\s+(?:is|are|was|were))\s+(?=\S)")
_I_MAY_RE = re.compile(r"(?P<s>i|we)\s+(?P<v>can|could|may|should|must|need)\s+(?=\S)")


def _turned(clause: str) -> str | None:
    """The direct question of a yes/no clause of a form the asks read ("you stock X" -> "do you stock X", "there is
    X" -> "is there X", "I can park X" -> "can I park X"); None for any other clause."""
    low = _fold(clause)
    m = _THERE_RE.match(low)
    if m:
        v = {"'s": "is", "s": "is"}.get(m.group("v").strip(), m.group("v").strip())
        return f"{v} there {clause[m.end():]}"
    m = _YOU_GOT_RE.match(low)
    if m:   # "you've got X", "you have got X"
        return f"have {clause[:m.end('s')]} {clause[m.end():]}"
    m = _YOU_RE.match(low)
    if m and m.group("v") in _SERVICE_VERBS:
        return f"do {clause}"
    m = _YOU_CAN_RE.match(low)
    if m:   # "you can fit a tow bar to X"
        return f"{clause[m.start('v'):m.end('v')]} {clause[:m.end('s')]} {clause[m.end():]}"
    m = _I_MAY_RE.match(low)
    if m:
        v = m.group("v")
        return f"do {clause}" if v == "need" else f"{clause[m.start('v'):m.end('v')]} {clause[:m.end('s')]} {clause[m.end():]}"
    return None


def _embedded_question(sentence: str) -> str:
    """The sentence with an embedded yes/no question asked directly (see above); unchanged when it holds none."""
    m = _EMBEDDED_ASK_RE.match(_fold(sentence))
    turned = _turned(sentence[m.end():]) if m else None
    if turned is None:
        return sentence
    return (turned[:1].upper() if sentence[:1].isupper() else turned[:1]) + turned[1:]


# A yes/no question about a named thing asks for the thing and what is asked of it, not for the question's verb:
# "Does the Leeds studio have wheelchair access to the kiln room?" is "Leeds studio" and "wheelchair access to the
# kiln room", "Is the concessionary pass valid on the tram or the Metro?" is "concessionary pass" and "tram or
# Metro", "Is the Covid booster safe during pregnancy?" is "Covid booster" and "pregnancy".  Only a subject opened
# by a determiner ("the", "your", "my"...), ended by a verb of the list below (after "does" / "do" / "did"), by
# "been" (after "has" / "have") or by a predicate (after "is" / "are" / "was" / "were"; else by the first "in" /
# "on" after a capitalised word or a number: "Is the Boss Katana 100 MkII in the Black Friday sale?").  Where only
# the predicate is asked, a question of availability names the thing alone ("Is the 1963 omnibus issue
# available?"), any other keeps its whole clause ("Was the moon landing faked?": the predicate is the topic).  The
# held-out writers from the 100th on read such questions so, most earlier ones kept the whole clause as one term.
# verbs whose object is a topic (not "go", "get", "use", "make": "Do the clocks go back?")
_YES_NO_VERBS = {"have", "come", "cover", "affect", "apply", "stop", "work", "include", "need", "take", "accept",
                 "offer", "count", "allow", "require", "fit", "sell", "stock", "ship", "deliver", "support", "show",
                 "list", "contain", "hold", "cost", "charge", "qualify", "cause", "increase", "reduce", "improve",
                 "interact", "expire", "renew", "run", "help", "give", "provide", "involve", "mention", "feature"}
_YES_NO_PREDICATES = {"available", "valid", "ready", "back", "included", "suitable", "safe", "possible",
                      "necessary", "required", "allowed", "accepted", "refundable", "covered", "eligible", "due",
                      "still", "same", "better", "worse", "bigger", "smaller", "big", "good", "right", "correct",
                      "true", "normal", "running", "full", "sold", "listed", "been", "more", "less", "likely",
                      "called", "named", "known", "made", "built", "written", "held"}
# asked alone, these ask whether the thing is there: the thing alone is the topic
_YES_NO_AVAILABLE = {"available", "ready", "back", "running", "still", "due", "listed", "on", "in", "going", "ahead",
                     "happening"}
# a state the writers keep with its thing ("Jetboil Flash compatible with MSR IsoPro fuel", "swimming pool open in
# September", "Wire worth watching"): such a question stays as written
_YES_NO_KEPT = {"compatible", "open", "closed", "worth", "overrated", "underrated"}
_YES_NO_LINKS = {"in", "on", "to", "with", "for", "towards", "into", "at", "from", "as", "under", "than", "over",
                 "of", "by", "during", "after", "before"}
_YES_NO_DROP_END = {"still", "yet", "now", "too", "again", "any", "more", "running", "available", "on",
                    "allowed", "possible", "ok", "okay"}
_ASKED_SERVICES = {"society", "archive", "journal", "shop", "store", "library", "museum", "club", "clinic", "practice",
                   "council", "centre", "center", "school", "site", "website", "app", "service", "company", "team",
                   "venue", "hotel", "studio", "office", "surgery", "pharmacy", "server", "catalogue", "database",
                   "collection", "forum", "group", "association", "gallery", "hospital", "trust", "charity", "gym",
                   "branch", "restaurant", "cafe", "bar", "pub", "salon", "spa", "garage", "dealer", "supplier"}
_YES_NO_DETS = {"the", "a", "an", "my", "your", "our", "their", "his", "her", "this", "that", "these", "those"}
_YES_NO_RE = re.compile(rf"(?P<aux>does|do|did|is|are|was|were|has|have)\s+(?:{'|'.join(sorted(_YES_NO_DETS))})\s+"
                        r"(?P<rest>\S.*?)[\s?.!]*")
_YES_NO_STOP = re.compile(r"\b(?:not|no|but|without|except|excluding|other\s+than|apart\s+from|if|when|because|"
                          r"vs|versus|nor|either|both)\b")


def _predicate_at(aux: str, rest: list[str], low: list[str]) -> int | None:
    """Where the subject of a yes/no question ends (above), or None."""
    if aux in ("does", "do", "did"):
        return next((i for i in range(1, len(low)) if low[i] in _YES_NO_VERBS), None)
    if aux in ("has", "have"):
        return next((i for i in range(1, len(low)) if low[i] == "been"), None)
    at = next((i for i in range(1, len(low)) if rest[i].islower() and (
        low[i] in _YES_NO_PREDICATES
        # a participle at the end or before a link ("summarised in", not "fried rice", "signed or sealed")
        or len(low[i]) > 4 and low[i].endswith("ed") and low[i - 1] not in ("or", "and")
        and (i + 1 == len(low) or low[i + 1] in _YES_NO_LINKS))), None)
    if at is None:   # "Is the Boss Katana 100 MkII in the sale?", "Is the Reel Rock screening on 8 November?" (not
        #              "Is the black mould in my bathroom X?")
        at = next((i for i in range(1, len(low) - 1) if low[i] in ("in", "on")
                   and (rest[i - 1][:1].isupper() or any(c.isdigit() for c in rest[i - 1])
                        or _DATE_START_RE.match(" ".join(low[i + 1:i + 3])))), None)
    return at


_DATE_START_RE = re.compile(rf"(?:the\s+)?(?:\d|(?:{'|'.join(_WEEKDAY_NAMES)})s?\b|(?:{'|'.join(_MONTH_NAMES)})\b)")


def _without_or_article(words: list[str]) -> list[str]:
    """The words without an article after "or" ("the tram or the Metro")."""
    return [w for k, w in enumerate(words) if not (k and w.lower() in ("the", "a", "an") and words[k - 1].lower() == "or")]


def _yes_no_question(sentence: str) -> str:
    """The sentence as the subject and what is asked of it (above), or unchanged."""
    folded = _fold(sentence).strip()
    m = _YES_NO_RE.fullmatch(folded)
    if not m or len(sentence) > 160 or _YES_NO_STOP.search(folded[m.start("rest"):]) \
            or _YES_NO_KEPT & set(folded[m.start("rest"):].split()):
        return sentence
    aux = m.group("aux")
    rest = sentence.strip()[m.start("rest"):m.end("rest")].split()
    low = [w.lower().strip(",;:") for w in rest]
    at = _predicate_at(aux, rest, low)
    if at is None or at > 10:
        return sentence
    subject, asked = rest[:at], rest[at:]
    while len(subject) > 1 and subject[-1].lower() in _YES_NO_DROP_END | {"ever", "already", "currently"}:
        subject = subject[:-1]   # "Was the Mary Celeste ever salvaged?"
    last = subject[-1].lower()
    if len(subject) == 1 and last in _ASKED_SERVICES:
        return sentence   # "Does the archive have notes on X?": the service asked, read by the asks
    if last in _YES_NO_LINKS | _YES_NO_DETS | {"or", "and"} \
            or last.endswith("ing") and subject[-1].islower() and low[at] not in ("in", "on"):
        return sentence   # the clause goes on: "Is the 20mph limit being scrapped?", "Are the caps melting faster than
        #                   predicted?"
    # the verb or predicate and its link go: "come in", "apply to", "valid on", "safe during", "more reliable than"
    if aux in ("does", "do", "did"):
        cut = 1 if len(asked) > 1 and asked[1].lower() in _YES_NO_LINKS else 0
    else:
        cut = next((i for i, w in enumerate(asked[:3]) if w.lower() in _YES_NO_LINKS), None)
        if cut is None or not all(w.islower() for w in asked[:cut]):
            cut = next((i for i, w in enumerate(asked) if w.lower() not in _YES_NO_PREDICATES | _YES_NO_AVAILABLE
                        | {"enough", "very"} and not (w.islower() and w.lower().endswith("ed"))), len(asked)) - 1
    predicate, asked = [w.lower() for w in asked[:cut + 1]], asked[cut + 1:]
    while asked and asked[-1].lower().strip("?.!") in _YES_NO_DROP_END:
        asked = asked[:-1]
    while asked and asked[0].lower() in _YES_NO_DETS:
        asked = asked[1:]
    asked = _without_or_article(asked)
    if not asked:
        if aux in ("does", "do", "did") or predicate[0] != "been" and not set(predicate) <= _YES_NO_AVAILABLE | _YES_NO_LINKS:
            return sentence   # "Was the moon landing faked?": what is asked is the topic too
        return " ".join(subject)   # ("Has the deadline been extended?": whether it still holds)
    subject_text = " ".join(_without_or_article(subject))
    if re.search(r"\bor\b", subject_text, re.I):
        subject_text = f"({subject_text})"
    return f"{subject_text} and ({' '.join(asked)})"


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
        if request == sentences[at]:
            request = _yes_no_question(request)
        if request != sentences[at]:
            sentences = sentences[:at] + [request] + sentences[at + 1:]
            text = " ".join(sentences)
    return (text if text != cleaned.lstrip() else cleaned), sentences
