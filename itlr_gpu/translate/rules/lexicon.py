"""The rules' lexicon: the markers and their kinds, the word lists and patterns the stages match, and the
small word tests built on them.  No stage logic: every other module of the rules reads from here."""

from __future__ import annotations

import re


# (Here, the lowest module, so that every stage can raise it without importing another.)
class RuleError(ValueError):
    """The text cannot be translated by the rules (message is one line)."""


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
    ("excl.", "EXCL"), ("excl", "EXCL"), ("but excl.", "EXCL"), ("exc.", "EXCL"), ("exc", "EXCL"), ("xcept", "EXCL"),

    # conditions that exclude: "X, unless it's about Y", "X is fine as long as it isn't about Y", "X, except when
    # the focus is Y"
    ("unless it's about", "EXCL"), ("unless it is about", "EXCL"), ("unless they're about", "EXCL"),
    ("unless they are about", "EXCL"), ("unless it's for", "EXCL"), ("unless they're for", "EXCL"),
    ("unless it's", "EXCL"), ("unless they're", "EXCL"), ("unless it involves", "EXCL"),
    ("unless it is", "EXCL"), ("unless they are", "EXCL"), ("unless they involve", "EXCL"),
    ("unless it concerns", "EXCL"), ("unless they concern", "EXCL"), ("unless it mentions", "EXCL"),
    ("unless they mention", "EXCL"), ("besides", "EXCL"),
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
    ("free of", "EXCL"), ("free from", "EXCL"),   # "shampoo free of sulfates" (not "free of charge": see _lex)
    ("yet not", "EXCL"), ("and yet not", "EXCL"), ("though not", "EXCL"), ("although not", "EXCL"),
    ("however not", "EXCL"), ("though no", "EXCL"), ("although no", "EXCL"), ("but also not", "EXCL"), ("but ignore", "EXCL"), ("but ignoring", "EXCL"),
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
    # topic's own words: "lacking" ("mice lacking Sirt1"), "in the absence of", "save for" ("avoiding" only after a
    # comma or a topic: see _lex).
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
_BETWEEN_OPERANDS = {"not counting", "sans", "alongside", "minus", "besides", "combined with", "free of", "free from",
                     *_COMPARES,   # "the minus strand"
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


def _title_with_and(raw: list, i: int, pairs: bool = True) -> int:
    """The number of tokens from ``i`` that make one title with an "and" in it, or 0: a text that opens with one
    capitalised word (a number may follow it), "and", then (after an optional "the") two capitalised words at
    least, small words between them, and lower-case words after it ("Ori and the Will of the Wisps spirit shards",
    "Ratchet and Clank Rift Apart PC fix", "Design and Access Statement template"). Elsewhere two longer names side
    by side are two topics as often ("excluding Scotland and Northern Ireland"); two single capitalised words with a
    lower-case word straight after them name one thing anywhere (_pair_name_with_and)."""
    def cap(k: int) -> bool:
        return k < len(raw) and raw[k].kind == "WORD" and raw[k].text[:1].isupper() and not raw[k].text.isupper()
    if not cap(i):
        return 0
    if i != 0:
        return _pair_name_with_and(raw, i) if pairs else 0
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
    return end - i if capitals >= 2 and plain_after else _pair_name_with_and(raw, i) if pairs else 0


# nationalities, peoples and faiths, adjectives the suffixes below do not tell ("Hindu and Sikh wedding traditions",
# "Greek and Roman gods")
_PEOPLES = set("hindu sikh sunni shia greek roman french dutch thai irish welsh scottish english british american german "
               "italian spanish arab muslim protestant orthodox anglican latin celtic norse viking aztec inca maya persian "
               "turkish polish czech swiss swedish danish norwegian finnish russian african asian european jewish "
               "christian catholic buddhist sufi shinto taoist jain baptist methodist quaker mormon".split())
# what the words after a pair say when the pair is two things set side by side ("Tesco and Sainsbury price
# comparison", "Darwin and Lamarck theories compared")
_PAIR_COMPARED = set("comparison comparisons compared comparing similarities similarity differences difference overlap "
                     "contrast contrasted".split())
# a place's preposition before a pair: two places ("cheap flights to Paris and Rome"; not "in": "chorus parts in Guys
# and Dolls that ...")
_PLACE_BEFORE = set("to from near at around across via towards between".split())


def _pair_name_with_and(raw: list, i: int) -> int:
    """3 when the tokens from ``i`` are one capitalised word, "and", one capitalised word, with a lower-case word
    straight after them: one name ("Snakes and Ladders travel version", "Farrow and Ball paint", "reception of the
    1858 Darwin and Wallace paper", "Apple and Samsung patents"; measured on the outside writers' requests, 35
    read right so and 1 wrong), unless a word is an adjective or a people's ("Buddhist and Stoic views", "Sunni and
    Shia views"), a case's party ("Roe v. Wade and ..."), a function word or a verb ("... in India and In transgenic
    mice", "... and Lamins are found"), "both", "between" or a place's preposition comes before them ("flights to
    Paris and Rome"), "together" or a comparison's word after them ("Tesco and Sainsbury price comparison"), or the
    text before them is in title case; else 0."""
    if i + 3 >= len(raw) or any(raw[k].kind != "WORD" for k in range(i, i + 4)) or raw[i + 1].text != "and":
        return 0
    a, b, after = raw[i].text, raw[i + 2].text, raw[i + 3].text
    if after == "or" and i + 4 < len(raw) and raw[i + 4].kind == "WORD" and raw[i + 4].text[:1].isupper():
        after = "x"   # another name as the other alternative: "Farrow and Ball or Little Greene paint"
    words = [_fold(w).strip(".,;:!?\"'") for w in (a, b)]
    if not all(re.fullmatch(r"(?:Mc|Mac|O')?[^\W\d_][^\W\d_]+(?:[-'][^\W\d_]+)*", w.rstrip(".,;:!?"))
               and w[:1].isupper() and w[1:2].islower() and not w.rstrip(".,;:!?")[1:].isupper() for w in (a, b)) \
            or any(w in _TITLE_SMALL or w in _AUX_AFFIRMATIVE or w in _PEOPLES or w.endswith("ist")
                   or _ADJECTIVE_END_RE.fullmatch(w) or re.fullmatch(r"[a-z]{3,}(?:ian|ean)", w) for w in words) \
            or not after[:1].islower() or not after[:1].isalpha() or _fold(after) in _TITLE_SMALL | _AUX_AFFIRMATIVE \
            or _fold(after) in _CLAUSE_ENDS or a[-1:] in ",;:" or b[-1:] in ",;:.!?":
        return 0
    before = [k for k in range(max(0, i - 3), i) if raw[k].kind == "WORD" and _fold(raw[k].text) not in _TITLE_SMALL]
    opening = bool(before) and (before[-1] == 0 or raw[before[-1] - 1].kind != "WORD"
                                or raw[before[-1] - 1].text[-1:] in ".?!:") and _fold(raw[i - 1].text) == "the"
    if before and not opening and (raw[before[-1]].text[:1].isupper()
                                   or _fold(raw[before[-1]].text).rstrip(".") in ("v", "vs")):
        return 0   # a title-cased run ("Cola Have in Common and Atkins diet"), a case ("Roe v. Wade and ..."); a
        #            sentence's capitalised first word before "the" is none ("Photos from the Rose and Crown pub fire")
    if i > 0 and raw[i - 1].kind == "WORD" and _fold(raw[i - 1].text).rstrip(".") in {"v", "vs", "both"} | _PLACE_BEFORE:
        return 0   # ("both A and B", "between A and B", "flights to Paris and Rome": two things)
    rest = [_fold(t.text).strip(".,;:!?") for t in raw[i + 3:i + 9] if t.kind == "WORD"]
    if {"together", "combined", "both"} & set(rest) or _PAIR_COMPARED & set(rest):
        return 0   # "A and B research together", "A and B price comparison"
    return 3


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


# the nouns of advice: an "avoid X" after them is the advice's aim ("car maintenance tips, avoid costly repairs")
_ADVICE_NOUNS = {"tips", "advice", "guide", "guidance", "ways", "strategies", "hacks", "tricks", "help", "ideas",
                 "practice"}


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
                             # "routes to Cardiff, avoiding Newport"; "family SUV, want to avoid anything with a CVT"
                             "avoiding", "avoiding anything", "avoiding any", "want to avoid", "want to avoid anything",
                             "skipping anything", "skipping any",
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
    if _be:   # "running shoes, I'm not after trail shoes" ("not after 2010" alone is a date's)
        _CLAUSE_OPENERS.update((f"{_be} not after", f"{_be} not looking at", f"{_be} allergic to"))
for _who in ("i", "we"):   # "cheap car insurance, I don't need breakdown cover", "pizza dough, I can't eat gluten"
    _CLAUSE_OPENERS.update((f"{_who} have no interest in", f"{_who} can't eat", f"{_who} cannot eat",
                            f"{_who} can't have", f"{_who} cannot have", f"{_who} can't stand"))
# "X, as long as there's no Y" (after a comma or "but" only: "what happens to my warranty provided there is no
# receipt" asks about the condition)
_CLAUSE_OPENERS.update(f"{_if} {_there} no" for _if in ("as long as", "provided", "providing", "only if", "so long as")
                       for _there in ("there's", "there is", "there are", "it has", "they have", "it's got"))
for _neg in ("don't", "do not", "dont"):   # (after a comma, "I" only: "we don't need X" is often a claim)
    _CLAUSE_OPENERS.update((f"i {_neg} need", f"i {_neg} need any"))
for _who in ("i", "we"):
    for _would in (" would", "'d"):
        for _verb in ("prefer to avoid", "rather avoid", "rather skip", "like to skip", "like to avoid", "like to exclude",
                  "prefer to exclude",
                      "like to leave out", "prefer to leave out"):
            _CLAUSE_OPENERS.add(f"{_who}{_would} {_verb}")
for _who in ("i ", "we ", ""):   # "X, but I don't care about Y" (as "I don't care about Y, ..." first)
    for _neg in ("don't", "do not", "dont"):
        for _really in ("", " really"):
            _CLAUSE_OPENERS.add(f"{_who}{_neg}{_really} care about")
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
        "with and without", "with versus without", "with vs without", "with vs. without",   # a comparison of both
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
_AUX_AFFIRMATIVE = {w for w in _AUX if "'" not in w} - {"cannot"}   # a verb after a pair of names (_pair_name_with_and)
# words that end like adjectives ("civic", "tropical", "Stoic"; the lexer's _adjective_like)
_ADJECTIVE_END_RE = re.compile(r"[a-z]{3,}(?:ic|al|ous|ive|ful|less|able|ible|ish|ese)")


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
          r"(?:still\s+)?(?:have|has|hold|holds|own|owns|sell|sells|stock|stocks|carry|carries|keep|keeps|"
          r"subscribe\s+to|subscribes\s+to|offer|offers|do(?=\s+(?!it\b|that\b|this\b|so\b|not\b)))(?:\s+(?!to\b)|$)"
          r"(?:(?:anything|something)\s+(?:by|on|about|from|of)\s+|(?:any|some)\s+)?")
_POLITE = r"(?:please|pls|plz|kindly|hi|hello|hey|yo|omg|ok|okay|so|now|yeah|yep|yes(?=,|\s+(?:i|im|i'm|we|please|pls|so|hi|hello|thanks)\b)|@\w+)\b,?"   # "@here": a chat mention
_ASKS = [  # a sentence that starts so asks for documents
    # "can you pull the clips on X": after "can you", "pull" asks ("pull the plug on X" alone names a topic)
    # "would you mind pulling up news about X", "do you mind sending me papers on X"
    r"(?:would|do)\s+(?:you|u)\s+mind\s+(?:pulling(?:\s+up)?|finding|sending|looking\s+(?:for|up)|searching\s+for|"
    r"digging\s+up|getting|sharing|checking|tracking\s+down)\s+(?:(?:me|us)\s+)?",
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
    # "can I see tribunal decisions on X", "could we read the minutes of X"
    r"(?:can|could|may)\s+(?:i|we)\s+(?:please\s+)?(?:see|read|view|look\s+at|access)\s+(?=(?:the|any|some|all|"
    r"past|published|tribunal|court|recent|previous|earlier|your)\s|" + _DOCUMENTS_NEXT[3:-1] + r"|(?:decisions|"
    r"judgments|rulings|minutes|records|plans|files|archives?|reviews?)\b)",
    # "have you published anything practical on X", "has the journal published anything on X", "has anyone posted
    # work on X"
    r"(?:have|has)\s+(?:you|u|the\s+journal|your\s+journal|anyone|anybody|someone)\s+(?:ever\s+|already\s+|recently\s+)?"
    r"(?:published|posted|written|covered|run|put\s+out)\s+(?:anything|something|any\s+(?:work|papers?|articles?|"
    r"research|studies|reviews?)|work|papers?|articles?)\s+(?:(?:practical|recent|new)\s+)?"
    r"(?:on|about|regarding|concerning)\s+",
    # what a service does: "do you allow e-scooters or e-bikes onboard?", "do you work with donor egg banks in Spain"
    r"(?:do|does)\s+(?:you|u)\s+(?:allow|accept|permit|provide|work\s+with|support)\s+(?:any\s+)?",
    # what a service or a forum's members make or do: "do you make dog-friendly birthday cakes", "does anyone grow
    # Restrepia in a Wardian case", "do you work on Marks and Spencer suites", "do u guys fix X" (not "take": "do
    # you take omeprazole before food" asks how it is taken)
    r"(?:do|does)\s+(?:you|u|anyone|anybody)(?:\s+guys)?\s+(?:(?:still|ever|also)\s+)?(?:make|fix|grow|work\s+on|"
    r"translate|restore|service|repair|buy|deliver\s+to|ship\s+to|teach|print|install|clean|host|organi[sz]e|"
    # "run" a kind of event ("do you run raku firing workshops"; not "do you run every day", "run the dishwasher")
    r"run(?=\s+(?:[\w'-]+\s+){0,5}?(?:workshops?|class(?:es)?|courses?|sessions?|trips?|tours?|events?|clubs?|"
    r"camps?|lessons?|groups?|programmes?|programs?|retreats?|tasters?)\b))\s+(?:any\s+)?"
    r"(?!(?:your|their|my|our|his|her|its|it|them|themselves|yourself|yourselves|myself|ourselves|at|behind|into|in|"
    r"on|up|out|off|a\s+living|sure|do|with|for|before|after)\b)(?=\S)",   # ("do you grow your own", "make it to")
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
    # "Could you tell me which trails allow dogs", "please tell me how to register X": the question asked (its
    # "which" / "how to" read as the question's own opening)
    r"(?:(?:can|could|would)\s+(?:you|u)\s+(?:please\s+)?|(?:please|pls|plz)\s+)?tell\s+(?:me|us)\s+"
    r"(?=(?:which|how|when|where|what|who)\b)(?!(?:which|what)(?:\s+one)?\s+(?:is|are|'s|would\s+be)\b)",
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
    r"(?:is|are)\s+there\s+still\s+(?=[A-Za-z])(?!(?:a|an|any|some|no|none|time|room|hope|a\s+chance)\b)|"
    r"(?:is|are)\s+there\s+(?:still\s+)?(?:a|an|any|some)\s+(?!(?:link|links|relationship|connection|difference|"
    r"correlation|association|evidence|proof|research|studies|study|data|literature|papers?|articles?|info|"
    r"information)\b)(?=\S)",
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
    r"(?:i|we)\s+(?:am|are)\s+(?:(?:wanting|needing)(?:\s+(?:to\s+)?know\s+about)?|need|want|"
    r"(?:searching|looking)(?:\s+(?:about|for))?|search\s+(?:about|for))\b",
    # "What has the Ombudsman said about X?", "what have the courts said on X": X
    r"what\s+(?:has|have|did)\s+(?:the\s+)?[\w'-]+\s+(?:said|written|ruled|decided)\s+(?:about|on|regarding)\b",
    # "what's the consensus on X", "what is the latest thinking on X": X
    r"(?:what's|whats|what\s+is)\s+the\s+(?:consensus|latest\s+thinking|current\s+thinking|state\s+of\s+the\s+art)\s+"
    r"(?:on|about|regarding)\b",
    # "what does the evidence say about X", "what does the research show on X": X
    r"what\s+does\s+the\s+(?:evidence|research|literature|science|data)\s+(?:say|show|tell\s+us)\s+"
    r"(?:about|on|regarding)\b",
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
    r"(?:where|how)\s+(?:can|could|do|would|should)\s+(?:i|we|one)\s+(?:find\s+out\s+(?:more\s+)?about|"
    r"find\s+out(?=\s+(?:what|how|whether|if|when|where|which|who)\b)|find|get|read\s+about|look\s+up|"
    r"search\s+for|learn\s+about)\b",
    # a forum's "Has anyone used Apiguard or Api-Bioxal for varroa?", "has anybody tried X": what was used
    r"(?:has|have)\s+(?:anyone|anybody|someone|somebody)\s+(?:here\s+)?(?:used|tried)\b",
    # "Who wrote the article about X?", "Has anyone published on X?": the article's topic
    r"who\s+wrote\s+(?:the|that|an?)\s+(?:article|paper|piece|book|study|report|review|post)\s+(?:about|on)\b",
    r"(?:has|have)\s+(?:anyone|anybody|someone|somebody)\s+(?:published|written)\s+(?:anything\s+)?(?:on|about)\b",
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
    # a librarian's own collection: "do we have any Eric Whitacre", "Do we own Alexander's Feast?" (not "do we
    # have to pay"; after the asks that take "a file on X")
    r"do\s+we\s+(?:still\s+)?(?:have|own|hold|stock)\s+(?!to\b)(?:(?:any|some)\s+)?(?=\S)",
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
    r"(?:(?:what\s+time|when|how\s+(?:long|early|late|soon))\s+(?:is|are|does|do|did|will|was|were)\s+"
    r"(?!(?:i|we|you|u|it|there|that|this|they|he|she)\b)|where'?s\s+(?=(?:the|a|an|our|my)\s)|what\s+counts\s+as\s+|"
    # "how early do I need to check in for X", "How long do you keep X": the task
    r"how\s+(?:long|early|late|soon|often|far\s+in\s+advance)\s+(?:do|should|must|can|would|will)\s+(?:i|we|you|u)\s+"
    r"(?:(?:need|have)\s+to\s+)?|"
    r"do\s+(?:you|u)\s+(?P<take>take|accept)\s+|"
    # "is it ok to swim after a tattoo", "Is it possible to brew X": the task; "is it safe to drive after X", "is
    # it legal to keep bees": the verdict asked about is the topic's (every writer's label keeps it)
    # (not "is it worth X-ing": _drop_question_aux; nor one that goes on: "... or not", "... now or wait")
    r"(?P<is_it>is\s+it\s+(?:(?:ok|okay|alright|possible|normal|common|usual)\s+(?:to\s+)?|"
    r"(?=(?:safe|legal|illegal|dangerous|wise|necessary|allowed|advisable)\s+to\s))))(?=\S)")


def _question_opener(words: list[str], more: bool = False) -> list[str]:
    """``words`` without a question's opening (``_QUESTION_OPENER_RE``), where it is no title's (nor an "is it"
    question that goes on after ``words``: ``more``)."""
    m = _QUESTION_OPENER_RE.match(_fold(" ".join(words)))
    if not m or more and m.group("is_it"):
        return words
    n = len(m.group(0).split())
    if n >= len(words) or any(w[:1].isupper() and w != "I" for w in words[1:n]) or words[n][:1].isupper() and (
            n == 1 or m.group("take") == "accept" or m.group("take") is None and words[n].lower() in _TITLE_SMALL):
        return words   # (a title: "How Long Is a Piece of String", "Where's My Cow", "When Is A Door ...")
    if m.group("take") == "take" and not words[n][:1].isupper():
        return words   # "do you take omeprazole before food"
    if words[0].lower().startswith("where") and n + 1 < len(words) and words[n + 1][:1].isupper():
        return words   # "Where's the Beef advert", "Where's the Line podcast"
    if _fold(words[0]) == "how" and len(words) > n + 1 and _fold(words[-1]).strip(_EDGE_PUNCT) in ("take", "last"):
        return words[n:-1]   # "how long does a standard eye examination take": the examination
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
    r"clinical|patent|legal|government|regulatory|consumer|app|hotel|earnings|analyst|hospital|discharge|appeal|"
    r"inspector'?s?'?)\s+"
    r"(?:posts?|reviews?|tickets?|notes|stories|documents?|docs|reports?|decisions?|rulings?|opinions?|"
    r"judg(?:e)?ments?|releases?|transcripts?|filings?|records?|threads?|complaints?|e-?mails?|applications?|"
    r"papers?|articles?)")

# Generic document words with their relation, at the start of any term.
_GENRE = (
    r"(?:(?:some|any|all|the|a|an|few|a\s+few|several|relevant|recent|current|good|new|latest|more|most|other|"
    r"one|two|three|four|"
    r"catalogue|catalog|"   # "catalogue entries for X"
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
    r"(?:(?:recently|already)\s+)?(?:published|written)|"   # "anything published on X"
    r"we\s+have|we've\s+got)|background|clippings|(?:market|competitive)\s+(?:research|data)|prior\s+art|"
    r"documents?|docs?|papers?|articles?|texts?|posts?|pages?|studies|study|reports?|news|stories|decisions|"
    r"story|publications?|literature|sources?|results?|content|materials?|items?|entries|entry|ones|books|informations|documentation|lists?|"
    r"those|anything|something|everything|stuff|information|info|works?(?!\s+from\s+(?:home|anywhere)\b)|research|writings?|reading|"
    r"resources?|references?|records?|hits|passages?|sites?|websites?|links?|data|facts|details|evidence|readings|"
    r"arguments?|discussions?|debates?|analys[ie]s|reviews?|coverage|commentary|opinions?|write-?ups?|"
    r"(?:legal\s+)?authorit(?:y|ies)|precedents|guidance|(?:clinical\s+|randomi[sz]ed\s+)?trials|refs|researches|"
    r"patents?|abstracts|rulings|filings|transcripts|notes|judg(?:e)?ments|e-?mails|memos|case\s+law|jurisprudence|"
    r"theses|thesis|tesis|dissertations?|recipe|standards|case\s+stud(?:y|ies)|reporting|briefings?|briefing\s+papers?|guidelines?|protocols?|videos?|"
    r"podcasts?|episodes?|photos?|pics|shots|preprints?|e-?books?|documentar(?:y|ies)|"
    r"leaflets?|factsheets?|fact\s+sheets?|brochures?|booklets?|pamphlets?|handouts?|"   # "leaflets on X"
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
    r"(?:(?:a|an|the|your|some|any|good|practical|simple|easy|quick|short|brief|expert|basic|detailed|"
    r"plain[- ]language|step[- ]by[- ]step)"
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
                    "what can i do", "what to do", "what now", "idk", "if at all possible", "if at all"}
# a learner's closing ask after the topic ("White Stork population in Europe, you have?", "..., it is possible?"):
# filler at a term's end only (alone it is a title's: "Is It Possible?")
_CLOSING_ASKS = {"you have", "do you have", "have you got", "you have it", "do you have it", "it is possible",
                 "is it possible", "is possible"}
_TRAILING_FILLER |= _CLOSING_ASKS
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


# Calendar words: the days (with their short forms), the months' names and short forms, the seasons
_WEEKDAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WEEKDAYS = frozenset(_WEEKDAY_NAMES) | set("mon tue tues wed thu thur thurs fri sat sun".split())
_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")
_MONTHS = frozenset(_MONTH_NAMES) | set("jan feb mar apr jun jul aug sep sept oct nov dec".split())
_SEASONS = frozenset({"spring", "summer", "autumn", "fall", "winter"})


def _fold(text: str) -> str:
    """Lower case with the typographic apostrophe as "'", for matching only (terms keep the user's text):
    "Don\u2019t", "I\u2019m", "What\u2019s" match the markers and patterns written with "'".  Always the
    same length as ``text``, so that match offsets hold in it ("\u0130".lower() is two characters: such a
    character stays as it is)."""
    low = text.lower()
    if len(low) != len(text):
        low = "".join(c if len(c.lower()) != 1 else c.lower() for c in text)
    return low.replace("\u2019", "'")


_TITLE_SMALL = {"a", "an", "the", "and", "or", "of", "in", "on", "for", "to", "from", "at", "by", "with", "as", "vs",
                "vs.", "into", "over", "than"}


def _title_cased(text: str, least: int = 3) -> bool:
    """The first word and every other but the small ones capitalised, three (``least``) at least: a title ("Heart
    Disease Starts in Childhood"; not "the Industrial Revolution in Britain", nor "Hiking in Patagonia")."""
    words = text.split()
    big = [w for w in words if w.lower() not in _TITLE_SMALL and any(c.isalnum() for c in w)]   # ("&" is no word)
    return len(big) >= least and words[0][:1].isupper() and all(w[:1].isupper() or not w[:1].isalpha() for w in big)
