"""Tree passes after parsing: placeholders and articles dropped from terms, a phrase shared by
alternatives distributed over them ("A or B cancer"), excluded places and asides reduced to what they
name."""

from __future__ import annotations

import re

from ...query import Node, Not, Term, make_and, make_or
from ...query.ast import And, Or
from .lexicon import (
    _ANYTHING_LINKS,
    _BECAUSE,
    _BOUND_FOLLOWERS,
    _EDGE_PUNCT,
    _fold,
    _MONTHS,
    _NO_OPERAND_END,
    _PLACEHOLDERS,
    _SEASONS,
    _title_cased,
    _TITLE_SMALL,
    _WEEKDAYS,
)
from .lexer import (
    _adjective_like,
    _COMPARED_GROUND_LINKS,
    _LATIN_AFTER_IN,
    _MAX_SHARED_PHRASE,
    _NO_SHARED_HEAD_END,
    _TIME_UNITS,
    _VERSION_RE,
)
from .parser import _MAX_SHARED_ALT, _name_like
from .sentences import _ASIDE_PERSONAL

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


_ANY_WORDS = {"any", "any one", "any of them", "either", "either one", "whichever"}


def _drop_bare_any(node: Node) -> Node:
    """"parent coffee mornings - any except Reigate", "Mario Kart (any except Double Dash)": a wanted "any" ANDed
    with a wanted topic names nothing (alone beside exclusions it stays: the reading has nothing else wanted)."""
    if not isinstance(node, And):
        return node
    kids = [c for c in node.children if not (isinstance(c, Term) and c.text in _ANY_WORDS)]
    if len(kids) == len(node.children) or all(isinstance(c, Not) for c in kids):
        return node
    return kids[0] if len(kids) == 1 else And(tuple(kids))


# a term that is one phrase in single quotes, straight or typographic, with no quote inside but a word's apostrophe
_WHOLLY_QUOTED_RE = re.compile(r"'((?:[^'\s]|(?<=\w)'(?=\w))(?:[^']|(?<=\w)'(?=\w))*?)'"
                               r"|\u2018((?:[^\u2018\u2019\s]|(?<=\w)\u2019(?=\w))"
                               r"(?:[^\u2018\u2019]|(?<=\w)\u2019(?=\w))*?)\u2019")


def _unquote_terms(node: Node) -> Node:
    """A term that is wholly one phrase in single quotes goes without them ("films by 'Kubrick' or 'Lynch'" split
    after the link, whose words kept the first name's quotes): the quotes mark a name, which the term is."""
    if isinstance(node, Term):
        m = _WHOLLY_QUOTED_RE.fullmatch(node.text)
        inner = m and (m.group(1) or m.group(2) or "").strip()
        return Term(inner) if inner else node
    if isinstance(node, Not):
        return Not(_unquote_terms(node.child))
    if isinstance(node, (And, Or)):
        return type(node)(tuple(_unquote_terms(c) for c in node.children))
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


_KINDS_SEARCHED = {"podcast", "podcasts", "leaflet", "leaflets", "factsheet", "factsheets"}


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
        if not negated and node.text not in quoted and len(words) > 1 and words[-1] in _KINDS_SEARCHED \
                and _fold(words[-2]).strip(",.;:") not in _PODCAST_KEPT and words[-2][-1:].isalnum():
            # "true crime podcasts", "Joe Rogan podcast", "knee replacement recovery leaflet": the kind searched
            return Term(" ".join(words[:-1]))
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
                 "near", "close to", "next to", "about", "around", "regarding", "concerning", "using", "via")
_SHARED_LINK_RE = re.compile(r"\s(" + "|".join(l.replace(" ", r"\s") for l in _SHARED_LINKS) + r")\s"
                             r"(?!(?:" + "|".join(_LATIN_AFTER_IN) + r")\b)", re.I)
# Links before the common ground of two compared topics ("A vs B for C", "A compared with B in C")
_PLACE_LINKS = {"in", "on", "at", "by", "from", "under", "near", "within"}   # where or how: "on board or at the port"
_MAX_OTHER_ALT = 4      # words of each other alternative
_MAX_SHARED_HEAD = 8    # words of a leading shared phrase


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
    return bool(head) and head[:1].islower() and any(w.islower() for w in head.split()) \
        and _short_name(first) and all(_short_name(c.text) for c in kids[1:])


def _short_name(text: str) -> bool:
    """Up to three words, each capitalised or a number ("Star Alliance Gold", "Pine Island Glacier", "Route 66")."""
    return all(w[:1].isupper() or w[:1].isdigit() for w in text.split()) and 0 < len(text.split()) <= _MAX_SHARED_ALT


def _names_after_a_topic(kids: list, quoted: set[str], heads: bool) -> bool:
    """"equal pay claims Birmingham City Council or Glasgow City Council", "ice shelf calving Thwaites Glacier or
    Pine Island Glacier": a lower-case keyword string of two words or more, then names on both sides of the "or"
    (capitalised words, up to three): the names are alternatives, not titles."""
    if not heads or len(kids) < 2 or not all(isinstance(c, Term) and c.text not in quoted for c in kids):
        return False
    words = kids[0].text.split()
    n = 0
    while n < min(3, len(words)) and words[-1 - n][:1].isupper():
        n += 1
    topic = words[:len(words) - n]
    return n > 0 and len(topic) >= 2 and all(re.fullmatch(r"[a-z][a-z'-]*", w) for w in topic) \
        and topic[-1] not in _TITLE_SMALL | _NO_SHARED_HEAD_END \
        and all(_short_name(c.text) and c.text[:1].isupper() for c in kids[1:])


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


_REPEATED_LINKS = ("in", "on", "at", "from", "for", "with", "by", "to")


def _repeated_link(kids: tuple[Node, ...], quoted: set[str]) -> Node | None:
    """"X L A or L B" with the same link L before every other alternative ("Brahms German Requiem in English or in
    German", "gold nuggets from the Yukon or from Victoria in Australia"): X AND (A OR B), the link written twice
    marking where the alternatives start; None for any other alternatives."""
    if not all(isinstance(c, Term) and c.text not in quoted for c in kids):
        return None
    first, others = kids[0].text, [c.text.split() for c in kids[1:]]
    link = others[0][0].lower() if others[0] else ""
    if link not in _REPEATED_LINKS or any(len(o) < 2 or o[0].lower() != link for o in others) \
            or any(len(o) - 1 > _MAX_SHARED_ALT + 2 for o in others):
        return None
    m = re.search(rf"^(?P<x>.+?)\s+{link}\s+(?P<a>\S.*)$", first, re.I)
    if not m or len(m.group("x").split()) > _MAX_SHARED_HEAD or len(m.group("a").split()) > _MAX_SHARED_ALT + 2 \
            or m.group("x").split()[-1].lower() in _NO_SHARED_HEAD_END \
            or re.search(rf"\s{link}\s", m.group("a"), re.I):
        return None
    alternatives = [m.group("a")] + [" ".join(o[1:]) for o in others]
    # a phrase after the last one that all of them share: "city tours by boat or by bus with step-free access",
    # "guided climbing in the Cairngorms or in Glen Coe for intermediate level", "letters from Mum or from Dad
    # during the war" (not a place's own "in", "on" or "of": "Victoria in Australia")
    tail = re.search(r"^(?P<b>.+?)\s+(?:for|with|without|under|over|about|during|at|before|after)\s+(?P<t>\S.*)$",
                     alternatives[-1], re.I)
    shared: list[Node] = []
    if tail and len(tail.group("t").split()) <= _MAX_SHARED_PHRASE:
        alternatives[-1], shared = tail.group("b"), [Term(tail.group("t"))]
    return make_and([Term(m.group("x")), make_or([Term(a) for a in alternatives])] + shared)


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


def _plural(word: str) -> bool:
    return re.search(r"[^su]s$", word) is not None   # ("bees", "mumps"; not "glass", "virus", "analysis")


def _shared_noun_tail(kids: tuple[Node, ...], words: list[str]) -> bool:
    """Lone nouns before a last alternative of three words or more share its words after the first, as the
    writers of the held-out sets read them: "egg or embryo freezing costs", "dengue or chikungunya outbreaks in
    Bangladesh", "ukulele or mandolin beginner packs".  Not where the lone nouns are plural and the next word is
    not ("statins or beta blockers after heart attack", "hamsters or guinea pigs as pets": the nouns are whole, so
    is the other item), nor before an adjective ("narcolepsy or idiopathic hypersomnia treatment").  Two words stay
    one item ("milk or peanut butter", "seasoning or rust removal": only the meaning tells "prostate cancer" from
    them); a longer item that the meaning binds is split wrongly ("yoga or tai chi for back pain", "scour or ship
    impact on bridge piers"), about one for every eight read rightly in the known sets.  The caller turns it
    off after "either" (it marks where each item starts: "either tofu or tempeh recipes without soy sauce", the
    labelled set's reading) and before an article ("a telescope or a planetarium projector").
    """
    alone = [c.text for c in kids[:-1]]
    return len(words) >= 3 and all(re.fullmatch(r"[a-z][a-z-]{2,}", a) for a in alone) \
        and len(words[0]) > 2 and words[1].isalpha() and not (any(_plural(a) for a in alone) and not _plural(words[0])) \
        and not (_adjective_like(words[0]) or words[0] in _NOT_NOUNS or re.search(r"(?:ed|ary)$", words[0])
                 or re.fullmatch(r"[a-z]{3,}ing", words[0]) and words[0] not in _ING_NOUNS) \
        and words[1] not in _AFTER_EACH \
        and f"{words[0]} {re.sub(r'(?<=[^s])s$', '', words[1])}" not in _COMPOUND_NOUNS


# common two-word nouns, which stay one item after "or" ("stroke or heart attack warning signs"); a compound not
# listed is split ("yoga or tai chi for back pain" would be, were "tai chi" not here)
_COMPOUND_NOUNS = set("""
heart attack|heart disease|heart rate|heart failure|blood pressure|blood sugar|blood test|blood donor|ice cream|ice pack
olive oil|fish oil|coconut oil|palm oil|sunflower oil|engine oil|sea salt|sea level|credit card|debit card|gift card
climate change|guinea pig|high school|tai chi|brain fog|hay fever|energy drink|soft drink|sports drink|apple music
nurse practitioner|building society|baking soda|baking powder|corn syrup|maple syrup|golden syrup|sour cream
sweet potato|rest day|body weight|body fat|car park|car seat|bus stop|bus pass|train station
post office|phone case|water bottle|water heater|coffee table|coffee machine|dining table|golf course|swimming pool
fire alarm|smoke alarm|credit score|tax return|tax credit|health insurance|life insurance|day care|child care
sleep apnoea|sleep apnea|peanut butter|cocoa butter|almond milk|oat milk|soy milk|coconut milk
air fryer|air conditioning|solar panel|heat pump|wind turbine|power bank|hard drive|pressure cooker|slow cooker
food processor|text message|email address|birth control|birth certificate|school uniform|science fiction
tool box|hand luggage|sun cream|sun screen|tooth brush|hair dryer|hair loss
weight loss|pain relief|back pain|neck pain|knee pain|head lice|bed bug|fruit fly|house plant|pot plant
fire engine|teddy bear|bunk bed|camper van|council house|bank holiday|holiday cottage|ice lolly|dock leaf|tree nut
fire brigade|police officer|police station|shopping centre|town hall|city centre|high street|living room
""".replace("\n", "|").strip("|").split("|"))
# a word after the item that each alternative takes ("meat or dairy free diet plans", "bed or breakfast only
# rates")
_AFTER_EACH = {"free", "only", "based", "friendly", "proof", "related", "style", "type", "flavoured", "flavored",
               "shaped", "led", "sized", "coloured", "colored", "themed"}
# nouns ending in "ing" (a gerund before the item's noun is its own modifier: "driving licence", "horse riding")
_ING_NOUNS = {"spring", "evening", "morning", "ceiling", "building", "string", "wedding", "clothing", "bedding",
              "housing", "ginseng", "pudding", "dumpling", "herring", "sibling", "seedling", "sapling", "earring"}
# adjectives and counters with no adjective's ending ("sweet potato fries", "second hand textbooks", "all season
# tyres")
_NOT_NOUNS = {"sweet", "sour", "sore", "high", "low", "first", "second", "third", "all", "cheap", "short", "long", "deep",
              "fast", "slow", "half", "double", "single", "common", "general", "special", "standard", "basic", "extra",
              "super", "mini", "top", "best", "good", "bad", "great", "little", "real", "fake", "whole", "plain",
              "junior", "senior", "multipurpose", "multi", "non", "pre", "post", "anti", "self", "one", "two",
              "three", "four", "five", "six", "ten"}


# days, months and seasons, by kind: two of a kind on both sides of an "or" are the alternatives ("may" and "march"
# only capitalised: "you may or may not")
_TIME_KINDS = {
    **{w: "day" for w in _WEEKDAYS | {"weds", "weekday", "weekend"}},
    **{w: "month" for w in _MONTHS - {"mar", "march", "may"}},
    **{w: "season" for w in _SEASONS - {"fall"}},   # ("fall" is a verb as often)
}
_TIME_HEAD_LINKS = {"on", "in", "for", "the", "at", "during", "of", "a", "every"}
_TIME_QUALIFIERS = {"late", "early", "mid", "next", "last", "this", "every", "each", "most", "all"}


def _time_kind(word: str) -> str | None:
    bare = word.strip(".,;:!?")
    if bare in ("May", "March"):
        return "month"
    low = bare.lower()
    return _TIME_KINDS.get(low) or (_TIME_KINDS.get(low[:-1]) if low.endswith("s") else None)   # ("Tuesdays")


def _times_between(kids: tuple[Node, ...], quoted: set[str]) -> Node | None:
    """Two days, months or seasons around an "or" inside a keyword string are the alternatives; the words before
    the first and after the second are facets of their own: "adult beginner ballet tuesday or thursday evening" is
    "adult beginner ballet" AND ("tuesday" OR "thursday") AND "evening", "Grandstand tickets for the Saturday or
    Sunday of the May meeting" drops the links too.  None for anything else, and where a qualifier is the first
    one's own ("plants that flower in late autumn or winter")."""
    if len(kids) != 2 or not all(isinstance(c, Term) and c.text not in quoted for c in kids):
        return None
    first, second = kids[0].text.split(), kids[1].text.split()
    kind = _time_kind(first[-1])
    if not kind or kind != _time_kind(second[0]) or first[-1].lower() == second[0].lower():
        return None
    head, tail = first[:-1], second[1:]
    if head and head[-1].lower() in _TIME_QUALIFIERS:
        return None
    while head and head[-1].lower() in _TIME_HEAD_LINKS:
        head = head[:-1]
    while tail and tail[0].lower() in _TIME_HEAD_LINKS:
        tail = tail[1:]
    if len(head) > _MAX_SHARED_HEAD or len(tail) > _MAX_SHARED_PHRASE:
        return None
    return make_and(([Term(" ".join(head))] if head else []) + [make_or([Term(first[-1]), Term(second[0])])]
                    + ([Term(" ".join(tail))] if tail else []))


def _split_shared(node: Node, quoted: set[str], heads: bool = True, nouns: bool = True) -> Node:
    """Share a phrase out of alternatives (above); ``heads=False``: only a phrase after the last one;
    ``nouns=False``: lone nouns share nothing (see _shared_noun_tail)."""
    out = _split_shared_here(node, quoted, heads, nouns)
    if isinstance(node, Or) and isinstance(out, And):
        # only a head before the alternatives: a phrase shared after them keeps its clause ("... for people who
        # snore": the verb is what it says)
        first_or = next((i for i, c in enumerate(out.children) if isinstance(c, Or)), len(out.children))
        out = make_and([_without_relative_verb(c, quoted) if i < first_or else c for i, c in enumerate(out.children)])
    return out


_RELATIVE_VERB_RE = re.compile(r"(?P<head>\S.*?)\s+(?:that|which|who)\s+[a-z]+")


def _without_relative_verb(node: Node, quoted: set[str]) -> Node:
    """A shared head cut from a relative clause keeps no dangling verb: "restaurants that serve pizza or pasta"
    shares "restaurants", not "restaurants that serve"."""
    if isinstance(node, Term) and node.text not in quoted:
        m = _RELATIVE_VERB_RE.fullmatch(node.text)
        if m:
            return Term(m.group("head"))
    return node


def _split_shared_here(node: Node, quoted: set[str], heads: bool, nouns: bool) -> Node:
    if isinstance(node, Not):
        return Not(_split_shared(node.child, quoted, heads, nouns))
    if isinstance(node, And):
        kids = [_split_shared(c, quoted, heads, nouns) for c in node.children]
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
    models = _model_codes(kids, quoted) if heads else None
    if models is not None:   # (before the names' rules: "BSA A10 or A7 gearbox mainshaft")
        return models
    times = _times_between(kids, quoted)
    if times is not None:   # (before the titles' guard: "Grandstand tickets for the Saturday or Sunday of the May meeting")
        return times
    codes = _codes_after_head(kids, quoted) if heads else None
    if codes is not None:   # (before the titles' guard: a product's name may be title-cased, "Samsung Galaxy S22")
        return codes
    repeated = _repeated_link(kids, quoted) if heads else None
    if repeated is not None:   # (before the titles' guard too: "Brahms German Requiem in English or in German")
        return repeated
    if not all(isinstance(c, Term) and c.text not in quoted and not _title_cased(c.text) for c in kids) \
            and not _names_after_a_link(kids, quoted, heads) and not _names_after_a_topic(kids, quoted, heads):
        return make_or([_split_shared(c, quoted, heads, nouns) for c in kids])
    first, last = kids[0].text, kids[-1].text
    # lone adjectives before the last alternative qualify its noun: "public or private schools", "pneumatic or
    # electric valve actuators", "piezoelectric or thermoelectric energy harvesting from roads" (an adjective alone
    # names no topic)
    words = last.split()
    gerunds = len(kids) == 2 and all(re.fullmatch(r"[a-z]{3,}ing", w) for w in (first, words[0]))   # "neutering or
    # spaying aftercare", "swimming or running shoes" (two gerunds; not "seasoning or rust removal", "sensing,
    # fighting or mating display")
    nouns = nouns and _shared_noun_tail(kids, words)
    if all(len(c.text.split()) == 1 and (_adjective_like(c.text) or gerunds or nouns) for c in kids[:-1]) and 2 <= len(words) \
            and words[0] not in {c.text for c in kids[:-1]} \
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
            and all(w.islower() and w[:1].isalpha() for w in tail[:2]) \
            and (tail[-1] not in _TIME_UNITS or len(tail) >= 3 and any(
                w in _BOUND_FOLLOWERS | {"within", "after", "before", "over", "under"} for w in tail[1:3])) \
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
                    and all(_name_like(w) or w.isalpha() and w.islower() and len(o.split()) == 2
                            or 0 < k < len(o.split()) - 1 and w in _TITLE_SMALL for k, w in enumerate(o.split()))
                    and (len(o.split()) <= 2 or _name_like(o.split()[-1]))
                    for o in [a] + others)   # "Quercus robur": a binomial; "Pride and Prejudice": a title
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
                and not (all(w[:1].isupper() or w in _TITLE_SMALL for w in b.split() + x.split())
                         and x.split()[-1][:1].isupper()
                         and tails[0].group(1) in ("to", "of", "with", "for", "in", "on", "at")):
            # (a title's own link stays: "Catan or Ticket to Ride", "Frog and Toad or The Wind in the Willows")
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


def _parallel_slots(head: list[str], words: list[str]) -> bool:
    """The last word before an "or" and the first after it are numbers, years or versions, between a head and a
    tail of other words. (Tried on the known texts and left out: single lower-case words, 6 readings mended and 182
    lost, compounds cut in the middle, "freeze dried or air dried"; single names, 2 mended and 18 lost, "Nelson
    Mandela or Desmond Tutu".)"""
    return all(_VERSION_RE.fullmatch(w) for w in (head[-1], words[0])) \
        and not {head[-2].lower(), words[1].lower()} & (_TITLE_SMALL | _NO_SHARED_HEAD_END | _BOUND_FOLLOWERS)


def _model_codes(kids: tuple[Node, ...], quoted: set[str]) -> Node | None:
    """A maker's name, two model codes around the "or" and words after them: the maker and the words are shared
    ("BSA A10 or A7 gearbox mainshaft" is "BSA" AND ("A10" OR "A7") AND "gearbox mainshaft"); None otherwise."""
    if len(kids) != 2 or not all(isinstance(c, Term) and c.text not in quoted for c in kids):
        return None
    head, words = kids[0].text.split(), kids[1].text.split()
    if len(head) < 2 or len(words) < 2 or not all(_MODEL_CODE_RE.fullmatch(w) for w in (head[-1], words[0])) \
            or not all(w[:1].isupper() for w in head[:-1]) or head[-1][:1].isupper() != words[0][:1].isupper() \
            or len(head) > 4:
        return None
    tail = words[2:] if words[1].lower() in _SLOT_TAIL_LINKS and len(words) >= 3 else words[1:]
    if tail[0].lower() in _TITLE_SMALL | _NO_SHARED_HEAD_END | _BOUND_FOLLOWERS:
        return None
    return make_and([Term(" ".join(head[:-1])), make_or([Term(head[-1]), Term(words[0])]), Term(" ".join(tail))])


# a maker's model codes ("BSA A10 or A7 gearbox mainshaft", "VW T5 or T6 pop top conversion"): letters, then a
# number, perhaps a suffix; a link before the words after them goes ("Leica M6 or M4-P in chrome")
_MODEL_CODE_RE = re.compile(r"[A-Za-z]{1,3}\d+[A-Za-z]?(?:-[A-Za-z0-9]+)?")
_SLOT_TAIL_LINKS = {"for", "in", "with"}


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
                               # "not the applesauce pouches thing I already know about", "no parakeets pls we
                               # know about those"
                               r"(?:\s+thing)?\s+(?:(?:that|which)\s+)?(?:i|we)\s+already\s+know\s+(?:about|of)\s*$|"
                               r"(?:\s+(?:pls|please|plz))?\s+(?:i|we)\s+(?:already\s+)?know\s+(?:about|of)\s+"
                               r"(?:those|that|them|it|these)\b.*$",
                               re.I | re.S)
# a clause of the writer's own after an excluded item ("not the chemo ones, my dad has his for IV antibiotics", "not
# rabies as I had that one in 2021", "Nothing about pacemakers please, he already has one"): a reason, not excluded
# (a title's words after it keep their capitals: "Just as I Am"; "since" is mostly a time: "the years since we left")
_EXCLUDED_CLAUSE_RE = re.compile(r"(?:,\s+|\s+[-\u2013\u2014]+\s+)(?:he|she|they|we|i|it|that|my|our|his|her|their)"
                                 r"(?:'s|'ve|'re|'d|'m|\u2019s|\u2019ve|\u2019re|\u2019d|\u2019m|\s)(?!\s*(?-i:[A-Z]))|"
                                 r"\s+(?:as|because|cos|coz|cause)\s+(?:it|it's|they|they're|he|she|we|i|i've|"
                                 r"we've|that|there|my|our)\b(?!\s*(?-i:[A-Z]))", re.I)
# a verdict on an excluded topic as a conjunct of its own ("- no Champagne, it blows the budget")
_EXCLUSION_VERDICT_RE = re.compile(r"(?:it|that|this|they)(?:'s|'re|\s+(?:is|are|was|were|blows|costs|breaks|kills|"
                                   r"ruins|goes|takes|makes|gets|looks|tastes|feels|sounds|ruined|broke|blew|killed|"
                                   r"leaked|stained|snapped|cracked|hurt|irritates|irritated|gave|gives))\b|"
                                   # the writer's own circumstance: "- not sea kayaks, we paddle on estuaries"
                                   r"(?:we|i)\s+(?!(?:want|need|would|like|prefer|am|are|have|had|don't|do|can't|"
                                   r"only|just|also|really)\b)[a-z]+(?:s|ed)?\s+(?:on|in|at|with|from|to)\b", re.I)
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
        if i > 0 and isinstance(term, Term) and term.text not in quoted and term.text[:1].islower() \
                and isinstance(kids[-1] if kids else None, Not) and _EXCLUSION_VERDICT_RE.match(term.text):
            continue   # "- no Champagne, it blows the budget", "except Pebeo, it ruined my brushes" (read as one more)
        if isinstance(c, Not) and isinstance(c.child, Term) and c.child.text not in quoted:
            text = c.child.text
            # an example in brackets names one of what is excluded: "the ones with milk protein (like Tooth Mousse)"
            text = re.sub(r"\s*\((?:like|e\.g\.|eg|such\s+as|for\s+example)\s[^()]*\)", "", text).strip() or text
            m = _EXCLUDED_ASIDE_RE.search(text) or _EXCLUDED_HAVE_RE.search(text) or _EXCLUDED_CLAUSE_RE.search(text)
            if m and m.start() > 0:
                text = re.sub(r"\s+(?:please|pls|plz)$", "", text[:m.start()], flags=re.I)
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
_EXCLUDED_LINK_RE = re.compile(r"(in|during|for|from|at|through|via|near|using|held\s+(?:at|in)|"
                               # "without going to a tribunal": the light verb and its article (not "going to
                               # bed", "going to the dogs")
                               r"going\s+to\s+(?:a|an|the)(?!\s+(?:dogs|wall|extremes?|pieces|town|waste)\b))\s+(?!(?:vitro|vivo|situ|silico|utero|toto|vacuo|respect|terms|spite|lieu|"
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


_MAX_SHARED_TAIL = 6   # words of a lower-case noun shared by names
_DETERMINERS = {"my", "your", "our", "his", "her", "their", "its", "this", "that", "these", "those", "some", "any",
                "no", "every", "each"}
_GENERIC_TAILS = {"style", "styles", "type", "types", "kind", "kinds", "sort", "sorts", "version", "versions", "way",
                  "ways", "variety", "varieties", "edition", "editions"}   # "(Neapolitan or New York style)"


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
