"""Parsing: normalised tokens -> the query AST (NOT > AND > OR, groups, exclusion scopes, comma lists), and
the readings of comma lists whose alternatives share a topic."""

from __future__ import annotations

import re

from ...query import MAX_DEPTH, Node, Not, Term, make_and, make_or
from ...query.ast import And, Or
from .lexicon import _BOUND_FOLLOWERS, _fold, RuleError, _TITLE_SMALL
from .lexer import _adjective_like, _COMPARED_GROUND_LINKS, _Tok
from .normalise import _ITEM_START, _SEPS, _STRONG

# After an exclusion's item and a comma, a phrase opened by one of these prepositions qualifies what is wanted
# ("beach holidays excluding Spain, in October"); another item continues the exclusion's list.
_FACET_RE = re.compile(r"(?:with|in|for|near|during|on|at|from|under|over|between|before|after|within|around|"
                       r"since|until|throughout)\s+\S", re.IGNORECASE)
_FACET_LINK_RE = re.compile(r"^(?:with|in|during|for|on|at)\s+(?=\S)", re.IGNORECASE)   # a link that says nothing


class _Parser:
    """Recursive descent over the normalised tokens.

    Levels, loosest first: clauses joined by strong separators (``; or``, ``or
    else``, a comma-conjunction that does not close a comma list); a clause is a
    segment with exclusion clauses (``but not``...) scoping over it; a segment is
    items joined by and / or / commas (AND before OR); an item is a term, ``not``
    item, a parenthesised query or an either / both / neither / anything-but group.
    """

    def __init__(self, toks: list[_Tok], listed: bool = False):
        self.toks = toks
        self.i = 0
        self.listed = listed   # the request opens by asking for documents on a list ("anything on A, B or C")

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
        if self.kind == "NOTBOTH":   # "A or B but not both": one of the two, not both
            self.i += 1
            pairs = [c for c in node.children if isinstance(c, Or) and len(c.children) == 2] \
                if isinstance(node, And) else []
            if len(pairs) == 1:   # "films starring either A or B but not both": the head stays wanted
                a, b = pairs[0].children
                node = make_and([*node.children, Not(make_and([a, b]))])
            elif not isinstance(node, (And, Or)) or len(node.children) != 2:
                raise RuleError(f"{self.toks[self.i - 1].text!r} needs two alternatives, as in 'A or B but not both'")
            else:
                a, b = node.children
                node = make_and([make_or([a, b]), Not(make_and([a, b]))])
        if self.kind == "NOR":   # "cats nor dogs": a "nor" the grammar of the text did not pair
            raise RuleError(f"{self.toks[self.i].text!r} with no 'neither' to pair with (write 'neither X nor Y')")
        if self.kind != "END":
            raise RuleError(f"could not read the text from {self.toks[self.i].text or self.kind!r}")
        return node

    def check(self, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise RuleError(f"nested too deeply (at most {MAX_DEPTH} levels)")

    def top(self, depth: int) -> Node:
        """clause ((SOR | SAND) clause)*, AND before OR."""
        self.check(depth)
        nodes = [self.clause(depth)]
        ops: list[str] = []
        while self.kind in _STRONG and self.peek() in _ITEM_START | {"EXCL"}:
            ops.append(self.kind[1:])
            self.i += 1
            nodes.append(self.clause(depth))
        return _precedence(nodes, ops)

    def clause(self, depth: int) -> Node:
        """segment (EXCL exclusions | BUT segment)*."""
        self.check(depth)
        node: Node | None = None
        if self.kind != "EXCL":
            node = self.segment(depth)
        else:
            node = self.fronted_exclusion(depth)
        after_excl = False
        while True:
            k = self.kind
            if k == "EXCL":
                tok = self.toks[self.i]
                self.i += 1
                if self.kind not in _ITEM_START:
                    raise RuleError(f"nothing after {tok.text!r}")
                items = self.exclusions(depth, single=tok.text.lower() in ("not", "no", "-"))
                node = make_and(([node] if node is not None else []) + [Not(x) for x in items])
                after_excl = True
            elif k == "BUT" and self.peek() in _ITEM_START:
                self.i += 1
                right = self.segment(depth)
                node = right if node is None else make_and([node, right])
                after_excl = False
            elif after_excl and k in ("AND", "COMMA", "CAND") and self.peek() in _ITEM_START:
                # "a, not b, and c": the list goes on after a one-item exclusion
                self.i += 1
                if k == "COMMA" and self.kind == "TERM":   # "..., with free parking": the facet, not its link
                    tok = self.toks[self.i]
                    tok.text = _FACET_LINK_RE.sub("", tok.text, count=1) or tok.text
                right = self.segment(depth)
                node = make_and([node, right])
                after_excl = False
            else:
                break
        if node is None:
            raise RuleError("nothing to search for")
        return node

    def fronted_exclusion(self, depth: int) -> Node | None:
        """"Rather than X, Y" / "Apart from A and B, C": an exclusion that opens the clause ends at its last
        comma, and what follows is what to search for.  Not when the rest of the clause is one serial list
        ("excluding A, B and C", "except A, B, C"): that is the exclusion's own list.  None (nothing
        consumed) when it does not apply: the exclusion then runs on, as anywhere else."""
        end, level, seps = None, 0, []
        for j in range(self.i + 1, len(self.toks)):
            k = self.toks[j].kind
            if k == "LP":
                level += 1
            elif k == "RP":
                if level == 0:
                    break
                level -= 1
            elif level == 0 and k in _STRONG | {"EXCL", "BUT", "NOTBOTH"}:
                break
            elif level == 0 and k in _SEPS:
                seps.append(k)
                if k == "COMMA" and j + 1 < len(self.toks) and self.toks[j + 1].kind in _ITEM_START:
                    end = j
        serial = len(seps) > 1 and all(k == "COMMA" for k in seps[:-1]) \
            and seps[-1] in ("COMMA", "AND", "OR", "NOR", "CAND", "COR")
        if end is None or end == self.i + 1 or serial:
            return None
        sub = _Parser(self.toks[self.i + 1:end])
        if sub.kind not in _ITEM_START:
            return None
        items = sub.exclusions(depth)
        if sub.kind != "END":
            return None
        self.i = end + 1
        return make_and([*(Not(x) for x in items), self.segment(depth)])

    def exclusions(self, depth: int, single: bool = False) -> list[Node]:
        """The list negated by an exclusion: items joined by and / or / nor / commas.

        ``single`` (a bare ``not`` after an item, ``"a, not b and c"``): and / commas
        continue the list only before another ``not``.  An explicit ``not`` on an
        item of the list is redundant (``but not b and not c``).
        """
        items = [self.excl_item(depth)]
        while self.kind in _SEPS - _STRONG and self.peek() in _ITEM_START:
            if single and self.kind in ("AND", "COMMA", "CAND") and self.peek() != "NOT":
                break
            if self.kind == "COMMA" and self.peek() == "TERM" and _FACET_RE.match(self.toks[self.i + 1].text):
                break   # "hotels, except Premier Inn, with free parking": a facet of what is wanted, not excluded
            self.i += 1
            items.append(self.excl_item(depth))
        return items

    def excl_item(self, depth: int) -> Node:
        if self.kind == "NOT" and self.peek() in _ITEM_START - {"NOT"}:
            self.i += 1
        return self.unary(depth)

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
            elif k in _ITEM_START and k not in ("NOT", "ALLBUT"):  # juxtaposed items: implicit AND
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
        nodes = [_or_groups(part_operands, part_seps)
                 or _shared_after_or(part_operands, part_seps)
                 or _topic_then_names(part_operands, part_seps, self.listed)
                 or _or_between_commas(part_operands, part_seps, self.listed)
                 or _precedence(part_operands, _resolve_commas(part_seps))
                 for part_operands, part_seps in parts]
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
        if k == "ALLBUT":  # "anything except a or b" -> NOT a AND NOT b
            self.i += 1
            if self.kind not in _ITEM_START:
                raise RuleError("nothing to exclude")
            return make_and([Not(x) for x in self.exclusions(depth + 1)])
        if k == "EITHER":
            self.i += 1
            start = self.i
            items = [self.unary(depth + 1)]
            if self.kind == "SOR" or (self.kind not in ("OR", "COR", "COMMA", "END", "RP")
                                      and self.later({"SOR"}, set())):
                # "either a but not b, or c": alternatives are whole clauses
                self.i = start
                items = [self.clause(depth + 1)]
                while self.kind == "SOR" and self.peek() in _ITEM_START | {"EXCL"}:
                    self.i += 1
                    items.append(self.clause(depth + 1))
                return make_or(items)
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
            items = [self.excl_item(depth + 1)]
            while (self.kind in ("NOR", "OR") or (self.kind == "COMMA" and self.later({"NOR"}, {"AND", "CAND", "EXCL", "BUT"}))) \
                    and self.peek() in _ITEM_START:
                self.i += 1
                items.append(self.excl_item(depth + 1))
            return make_and([Not(x) for x in items])
        raise RuleError(f"expected a term, found {self.toks[self.i].text or k!r}" if k != "END"
                        else "expected a term at the end of the text")


_MAX_OR_GROUP_TERM = 4   # words of an alternative in the second group


def _or_groups(operands: list[Node], seps: list[str]) -> Node | None:
    """Two groups of alternatives split by a comma are two facets, both wanted: "graduate schemes in civil or
    structural engineering, London or Manchester", "galaxy cluster mass from weak lensing or SZ effect, Planck or
    SPT or ACT" (one "A, B or C" list has its commas first)."""
    if seps.count("COMMA") != 1 or any(s not in ("OR", "COMMA") for s in seps):
        return None
    cut = seps.index("COMMA") + 1   # operands before the comma
    if cut < 2 or len(operands) - cut < 2 or not all(isinstance(o, Term) for o in operands) \
            or any(len(o.text.split()) > _MAX_OR_GROUP_TERM for o in operands[cut:]):
        return None
    return make_and([make_or(operands[:cut]), make_or(operands[cut:])])


def _shared_after_or(operands: list[Node], seps: list[str]) -> Node | None:
    """Commas after the alternatives add what they share: "webpack 5 or vite, typescript monorepo setup",
    "Oatly or Silk oat milk, unsweetened", "retablos or exvotos, Mexican, painted on tin" (a list of
    alternatives has its commas first: "A, B or C")."""
    alternatives = 1 + next((k for k, s in enumerate(seps) if s != "OR"), len(seps))   # operands joined by "or"
    shared = operands[alternatives:]
    if 2 <= alternatives < len(operands) and all(s == "COMMA" for s in seps[alternatives - 1:]) \
            and all(isinstance(o, Term) and len(o.text.split()) <= _MAX_SHARED_AFTER_OR for o in shared) \
            and all(isinstance(o, Term) and len(o.text.split()) <= _MAX_OR_BEFORE_SHARED
                    for o in operands[:alternatives]) \
            and not (isinstance(operands[alternatives - 1], Term)
                     and operands[alternatives - 1].text.split()[0].lower() in _BOUND_FOLLOWERS
                     and not (_parallel_articles(operands[:alternatives])
                              and not (_parallel_articles(shared)   # ("a nurse or a doctor, a paramedic": three;
                                       and not all(o.text.split()[-1].lower() in ("one", "ones") for o in shared)))):
        # "a laptop or a tablet, a refurbished one" qualifies both)
        return make_and([make_or(operands[:alternatives]), *shared])   # (not "A or In mice, B": a claim's opening)
    return None


def _parallel_articles(alternatives: list[Node]) -> bool:
    """Every alternative opens with "a" or "an" ("a telescope or a planetarium projector, under £50")."""
    return all(isinstance(o, Term) and o.text.split()[0].lower() in ("a", "an") for o in alternatives) \
        and bool(alternatives)


def _topic_then_names(operands: list[Node], seps: list[str], listed: bool = False) -> Node | None:
    """A lower-case topic, then two names as alternatives: "signed modern firsts, Seamus Heaney or Ted Hughes",
    "metrical books from Przemyśl, Greek-Catholic or Roman-Catholic" (the topic in either); or two single words
    after a longer topic (below). Else a list of three topics keeps its shape ("vitamin d benefits, gene
    expression or insulin resistance")."""
    # (two alternatives or more joined by slashes: "chinrest fitting, Guarneri/Flesch/Kaufman")
    if len(seps) < 2 or seps[0] != "COMMA" or any(sep != "OR" for sep in seps[1:]) \
            or not all(isinstance(o, Term) for o in operands):
        return None
    topic, *alts = [o.text.split() for o in operands]
    if len(topic) >= 2 and not topic[-1][:1].isdigit() \
            and all(len(a) == 1 and re.fullmatch(r"(?:1[5-9]|20)\d\ds?|'?\d0s", a[0]) for a in alts):
        return make_and([operands[0], make_or(operands[1:])])   # years: "unfair dismissal, 2019 or 2020"
    if not listed and _longer_topic(topic, alts):
        return make_and([operands[0], make_or(operands[1:])])
    # (a topic may open with a number or a size: "12V LED navigation lights, Hella Marine or Lopolight")
    lower_start = topic[0][:1].islower() and topic[0][:1].isalpha() \
        or topic[0][:1].isdigit() and any(w[:1].islower() for w in topic[1:])
    if len(topic) < 2 or not lower_start or _name_like(topic[-1]):
        return None   # (a topic ending in a name is the list's first item: "medieval castles in Wales, Scotland or Ireland")
    if all(1 <= len(a) <= _MAX_SHARED_ALT and all(w[:1].isupper() and not w.isupper() or len(w) > 1 and w.isupper()
                                                   or k > 0 and w.isdigit() for k, w in enumerate(a)) for a in alts):
        return make_and([operands[0], make_or(operands[1:])])
    # ... or two single words after a topic of three words or more: its kinds ("mrsa decolonization before hip
    # replacement, mupirocin or chlorhexidine", "local plan housing allocations, greenfield or brownfield"; not
    # "Byzantine art, mosaics or icons", three topics; nor "methane emissions from rice, cattle or landfills",
    # whose list starts after the link)
    if len(topic) >= 3 and all(len(a) == 1 and not _name_like(a[0]) for a in alts) \
            and _fold(topic[-2]) not in _COMPARED_GROUND_LINKS | {"of", "with", "by", "to", "about"}:
        return make_and([operands[0], make_or(operands[1:])])
    # ... or qualifiers that name no topic alone: "rain pants, men's or unisex", "report bullying, online or by
    # phone" (a possessive, an adjective, a manner or a short phrase after a preposition)
    if all(_qualifier_alternative(a) for a in alts) \
            and not {a[0].lower() for a in alts if len(a) > 1} & {w.lower() for w in topic}:   # ("research by
        # harvard, by mit or by stanford": the topic's own link, a list of three)
        return make_and([operands[0], make_or(operands[1:])])
    return None


# a request that opens by asking for documents on what follows ("anything on A, B or C", "documents about A, B or
# C"): a list of topics follows, whatever their lengths
_LIST_ASK_RE = re.compile(r"\s*(?:(?:find|show|get|give)\s+(?:me\s+|us\s+)?)?(?:(?:any|all|some)\s+)?(?:documents?|texts?|"
                          r"articles?|papers?|anything|something|stuff|material|sources|reports?|info|information|"
                          r"research|books?|studies|literature|resources)\s+(?:about|on|discussing|"
                          r"regarding|concerning|covering|mentioning)\s|\s*(?:all|any|either|each)\s+of\s", re.I)


def _longer_topic(topic: list[str], alts: list[list[str]]) -> bool:
    """A topic of three words or more, then single words as alternatives, is their topic, not the first of a list,
    whatever its case and theirs: "TV 55 inch, OLED or QLED", "R&D tax credits, UK or Canada", "Carabus type
    specimens, Japan or Korea" (below, a lower-case topic with lower-case kinds had been read so already). Not
    names only ("The Beatles, Stones or Kinks"), a topic of more than eight words (claims' sentences), nor a topic
    whose list starts after its link ("methane emissions from rice, cattle or landfills") or that ends in a name
    ("castles in Wales, Scotland or Ireland"); a list of multi-word topics keeps its shape, as the composed
    requests need ("vitamin d benefits, sleep quality or insulin resistance")."""
    if not 3 <= len(topic) <= _MAX_OR_BEFORE_SHARED or any(len(a) != 1 for a in alts) or _name_like(topic[-1]) \
            or _fold(topic[-2]) in _COMPARED_GROUND_LINKS | {"of", "with", "by", "to", "about", "like", "and", "or"}:
        return False
    return not all(_name_like(w) for w in topic)


_MANNERS = {"online", "offline", "remotely", "anonymously", "in-person", "printed", "digital", "paper", "electronic",
            "unisex", "mens", "womens"}


def _qualifier_alternative(words: list[str]) -> bool:
    if len(words) == 1:
        w = words[0].lower()
        return w.isascii() and (re.fullmatch(r"[a-z]+(?:'s|s')", w) is not None or _adjective_like(w) or w in _MANNERS)
    return 2 <= len(words) <= 3 and words[0].lower() in {"by", "in", "at", "on", "via", "over", "under"} \
        and all(w.islower() and w.isalpha() for w in words)


def _or_between_commas(operands: list[Node], seps: list[str], listed: bool = False) -> Node | None:
    """Alternatives in the middle of comma-separated fields: "hiking boots with ankle support, Merrell or Salomon,
    waterproof" is the boots AND either brand AND waterproof; the comma after the alternatives ends them (a bare
    comma there took the "or" before it: four alternatives).  What comes before them is read as
    :func:`_topic_then_names` reads it (a topic, or the head of a list "A, B or C, D")."""
    if seps.count("OR") != 1 or any(s not in ("OR", "COMMA") for s in seps):
        return None
    k = seps.index("OR")
    if k == 0 or k == len(seps) - 1 or not all(isinstance(o, Term) for o in operands) \
            or any(len(o.text.split()) > _MAX_OR_BEFORE_SHARED for o in operands[:k + 2]):   # claims' sentences
        return None
    head = _topic_then_names(operands[:k + 2], seps[:k + 1], listed) or make_or(operands[:k + 2])
    after = operands[k + 2:]
    if not all(len(o.text.split()) <= _MAX_SHARED_AFTER_OR for o in after):
        return None
    return make_and([head, *after])


_MAX_SHARED_AFTER_OR = 5   # words
_MAX_OR_BEFORE_SHARED = 8   # words of each alternative (claims' sentences are no list)


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


_MAX_SHARED_ALT = 3     # words of the alternative beside the shared phrase


def _name_like(word: str) -> bool:
    """A word of a name, an acronym or a code: "Walmart", "Apple", "iPhone", "3PL" (not "the", "earnings")."""
    return any(ch.isupper() for ch in word) and word.lower() not in _TITLE_SMALL
