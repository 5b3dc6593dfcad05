"""The pipeline: text -> query AST, running the stages in order (rewrites, lexing, filler, normalising,
parsing, tree passes), the segments, and the public entry points."""

from __future__ import annotations

import re

from ...errors import QuerySyntaxError
from ...query import MAX_QUERY_CHARS, Node, Not, Term, canonical, make_and, make_or, parse
from ...query.ast import And, Or
from ...query.printer import printed
from ...query.ast import terms as _terms
from .lexicon import _EDGE_PUNCT, _fold, RuleError
from .lexer import _clean, _lex, _symbol_operand
from .filler import _strip_filler
from .normalise import _normalise
from .parser import _LIST_ASK_RE, _Parser
from .clauses import _drop_question_aux, _has_aux, _parentheticals, _sentence_words
from .sentences import (
    _ABBREVIATIONS,
    _already_have,
    _ASK_ONLY_WORDS,
    _asks_only,
    _EXCLUSION_SENTENCE_RE,
    _join_exclusions,
    _MAX_FRAGMENT_WORDS,
    _MAX_LETTER,
    _MAX_REQUEST,
    _preamble_limit,
    _REQUEST_RE,
    _sentences,
    _SIGN_OFF_RE,
)
from .rewrites import (
    _assignment,
    _dash_pairs,
    _drop_preference_clause,
    _drop_purpose,
    _embedded_question,
    _had_excluded,
    _hedged,
    _layout,
    _letter,
    _loose_operators,
    _MAX_REPHRASED,
    _numbered,
    _pico,
    _refusal_first,
    _rephrase,
    _restrictions,
    _spec,
    _dictated_marks,
    _spoken,
    _which_better,
)
from .tree import (
    _drop_articles,
    _drop_bare_any,
    _unquote_terms,
    _drop_placeholders,
    _excluded_asides,
    _excluded_place,
    _split_shared,
)
from .segments import (
    _CLAUSE_WORDS,
    _circumstance_topic,
    _question_about_it,
    _runs_over_break,
    _segment_breaks,
    _segments,
    _topic_question,
)

_RESEARCHING_RE = re.compile(r"(?:(?:hi|hello|hey)\W+)?(?:i|we)(?:'m|\s+am|\s+are|'re)\s+(?:currently\s+)?"
                             r"(?:researching|studying|writing\s+(?:about|on|a|an)|working\s+on)\b")


# what the writer says of the "and" or "or" they typed: "Both have to be in there", "- all three must appear -",
# "Both must appear:", ", doesn't matter which" (the reading is the same without it)
_BOTH_REQUIRED_RE = re.compile(
    r"(?:(?<=^)|(?<=[,;:.!?(])|\s+[-\u2013\u2014]+)\s*(?:(?:both|all\s+(?:two|three|four|five)|all\s+of\s+them|each\s+of\s+them)"
    r"\s+(?:(?:have|has|need|needs)\s+to|must|should)\s+(?:be\s+(?:in\s+there|there|present|in\s+it|included|mentioned)|"
    r"appear|show\s+up)|(?:it\s+)?(?:doesn't|doesnt|doesn\u2019t|does\s+not|dont|don't)\s+matter\s+which(?:\s+one)?|either\s+(?:one\s+)?is\s+fine)"
    r"\s*(?:[.!:;)]+|\s[-\u2013\u2014]+|,|$)", re.I)
# "China or Japan both ok", "Either British or Irish would do", "UK or Iceland ideally": the alternatives are the
# writer's, the verdict is not
_EITHER_FINE_RE = re.compile(
    r"\s+(?i:(?:i\s+mean\s+)?(?:both|either(?:\s+one)?|either's|any(?:\s+of\s+them)?)\s+(?:is\s+|are\s+)?(?:ok|okay|fine|good)|(?:both\s+|either\s+)?"
    r"would\s+do(?:\s+fine)?|ideally|preferably)(?=\s*(?:[.!?]+\s*)?(?:$|[.!?]|\s[A-Z]))")
# A verdict on the last alternatives: "occultations by asteroid, Vesta or Ceres is ok", "A or B would be fine"
_OR_FINE_RE = re.compile(r"(\bor\s+[^\s,;:.!?]+(?:\s+[^\s,;:.!?]+){0,3}?)\s+(?:is|are|would\s+be)\s+(?:also\s+)?"
                         r"(?:ok|okay|fine|good|acceptable)(?=\s*[.!]*\s*$)", re.I)
# What a shop or library holds, asked with its availability ("Do you have X in stock?", "..., if the library has
# it"), and "any brand except X": the availability and the "any" are no topic
_HELD_TAIL_RE = re.compile(r"(\b(?:do|does)\s+(?:you|u|the\s+\w+)\s+(?:still\s+)?(?:have|stock|sell|carry)\b[^?.!]*?)\s+"
                           r"(?:in\s+stock|available|at\s+the\s+moment|right\s+now|currently)(?=\s*[?.!]|\s*$)", re.I)
# a closing question of the thing's status: "late checkout possible?", "day tickets for saturday still available?",
# "SKU BP-44871 back in stock?", "transferring membership — possible?" (every writer's label but two drops it)
_STATUS_TAIL_RE = re.compile(r"(?<=\w)(?<!\bif)(?<!\bwhere)(?<!\bwhen)(?:\s*[,\u2013\u2014]\s*|\s+-+\s+|\s+)"
                             r"(?:(?:is|are)\s+(?:it|they|these|those)\s+)?"
                             r"(?:still\s+|back\s+|currently\s+)?(?:possible|available|in\s+stock)(?=\s*\?*\s*$)", re.I)
_IF_HELD_RE = re.compile(r",?\s+if\s+(?:the\s+\w+|you)\s+(?:still\s+)?(?:has|have|hold|holds|stock|stocks|keep|keeps)\s+"
                         r"(?:it|them|one|a\s+copy|copies)\b|"
                         r",\s+(?:do\s+)?(?:you|u)\s+(?:still\s+)?(?:have|stock|sell|carry)\s+(?:it|them|one|some|any|these|those)"
                         r"(?=\s*(?:[?.!]|$))", re.I)   # a learner's "..., you have them?"
_ANY_KIND_RE = re.compile(r"(?:\b(?:in|from|with|to|for|of|on|at|by)\s+)?\b(?:any|all)\s+(?:other\s+)?(?:(?:years?|decades?|periods?|styles?|flavou?rs?)\s+"
                          r"(?=(?:except|other\s+than|apart\s+from|excluding)\b)|(?:brands?|makes?|models?|kinds?|types?|"
                          r"colou?rs?|sizes?|editions?|versions?|languages?|disciplines?|trades?|calib(?:re|er)s?|countr(?:y|ies)|regions?|"
                          r"eras?|genres?|formats?|materials?|fields?|subjects?|sports?|breeds?|manufacturers?|"
                          r"suppliers?|airlines?|locations?|areas?|cit(?:y|ies)|towns?|companies|company|providers?|"
                          r"platforms?)\s+(?:(?=(?:except|other\s+than|apart\s+from|excluding)\b)|"
                          r"(?P<but>but|besides|bar)\s+))", re.I)
# "Do SSRIs raise suicide risk in adolescents, and if so, which ones?": a follow-up question about what the request
# already names ("and if not, why not?" too)
_IF_SO_TAIL_RE = re.compile(r"(?<=\w)\s*[,;]?\s*(?:and|or|but)?\s*,?\s*if\s+(?:so|not)\s*,?\s+(?:which|what|how|why|when|where|who)"
                            r"(?:\s+[\w']+){0,4}?\s*(?P<stop>[?.!]*)\s*$", re.I)
# "Anything except neem oil for spider mites on indoor palms": what the "for" names is wanted, the short span before
# it excluded (read as "spider mites on indoor palms, anything except neem oil")
_ALL_BUT_FOR_RE = re.compile(r"^(?P<lead>(?:anything|everything|whatever)\s+(?:except(?:\s+for)?|but|other\s+than|apart\s+from|"
                             r"besides|excluding))\s+(?P<x>[\w'-]+(?:\s+[\w'-]+){0,3}?)\s+for\s+(?P<y>[\w\"'].*)$",
                             re.I | re.S)
# "carbon or HEPA, whichever you stock": a verdict on the alternatives
_WHICHEVER_RE = re.compile(r",?\s+whatever\s+(?:you|u)\s+(?:have|'ve\s+got|got)(?=\s*[.!?:)]*\s*$)|"
                           r",?\s+whichever\s+(?:(?:one\s+)?(?:you|u)\s+(?:stock|have|sell|carry|offer)|exists?|is\s+(?:available|"
                           r"cheaper|in\s+stock|easier))(?=\s*[.!?]*\s*$)", re.I)
# "A or B, not both at once", "not the ones covering both", "- one or the other": "but not both"
_NOT_BOTH_PHRASE_RE = re.compile(r"(?:\s*[-\u2013\u2014,]\s*|\s+)(?:but\s+)?not\s+(?:(?:the\s+)?ones?\s+(?:covering|mentioning|with|"
                                 r"about|that\s+(?:cover|mention|have))\s+both(?:\s+of\s+them)?(?:\s+in)?|a\s+mix\s+of\s+the\s+two|"
                                 r"both\s+(?:at\s+once|together|at\s+the\s+same\s+time|in\s+the\s+same\s+\w+))"
                                 r"(?=\s*[.!?]*\s*$|\s*,\s*(?:we|i|they|as|since|because)\b)", re.I)
_ONE_OR_OTHER_RE = re.compile(r"\s*[-\u2013\u2014,]?\s+one\s+or\s+the\s+other\b", re.I)
# "Which foot cream for diabetic feet (do) you recommend?": an ask for the thing
_RECOMMEND_RE = re.compile(r"\b(?:which|what)\s+(?P<x>[^?.!]{3,80}?)\s+(?:(?:do|would|can|could)\s+)?(?:you|u)\s+"
                           r"(?:recommend|suggest|advise)\b", re.I)
# "studies linking X to Y": the link between X and Y, read as "X and Y" ("linking" alone was scaffolding, which
# left "X to Y" as one term); only after a word that names documents, so "linking verbs" stays a topic
_LINKING_RE = re.compile(r"\b(?P<genre>studies|study|research|papers?|articles?|evidence|work|trials|reports?|data|"
                         r"anything|something|literature|reviews?)\s+(?:linking|connecting|tying|associating)\s+"
                         r"(?P<x>[^,;.?!]{2,60}?)\s+(?:to|with)\s+(?=\S)", re.I)
# a lost-property desk's "has anyone handed in X", "has a X been handed in", "X handed in?": the thing
_HANDED_IN_RE = re.compile(r"(?:^|(?<=[,.!?]\s))(?:(?:has|have)\s+(?:anyone|anybody|someone|somebody)\s+handed\s+in\s+|"
                           r"(?:has|have)\s+(?=(?:a|an|any|my|the)\s+[^?.!]{2,60}?\s+been\s+handed\s+in\b))|"
                           r"\s+(?:been\s+)?handed\s+in(?=\s*(?:[?.!,;]|$))", re.I)
# where the writer expects the thing to be: "X in your archive", "X in the collection", "X on my policy" (no topic)
_IN_YOUR_HOLDINGS_RE = re.compile(r"\s+(?:in\s+(?:(?:your|our)\s+(?:archives?|collections?|catalogues?|catalogs?|database|holdings|"
                                  r"library|shop|store|seed\s+bank)|the\s+(?:archives?|collections?|catalogues?|catalogs?|"
                                  r"holdings))|on\s+(?:my|our)\s+(?:policy|account|plan|contract|membership|booking|card|tariff))"
                                  r"(?=\s*(?:[?.!,;]|$))", re.I)   # (not "noise in the library": a topic)
# Questions of when and whether a thing is on: "what time does the X start", "when does X open", "Is the X still
# open?": the thing
_WHEN_ON_RE = re.compile(r"(?:(?:does\s+)?(?:anyone|anybody)\s+know\s+)?(?:what\s+time|when)\s+(?:does|do|will|is|are)\s+"
                         r"(?P<x>[^?.!,;]{3,80}?)\s+(?:start|open|close|finish|end|begin|kick\s+off|take\s+place)"
                         r"(?=\s*(?:[?.!]|$))|(?:is|are)\s+(?P<y>(?:the|your|this|that)\s+[^?.!,;]{3,80}?)\s+still\s+(?:open|"
                         r"available|running|on|going|happening|active|valid|accepting\s+\w+|taking\s+\w+)(?=\s*(?:[?.!]|$))|"
                         # "is turn left at orion in the library?", "is the X on display anywhere": the thing held
                         r"(?:is|are)\s+(?P<z>[^?.!,;]{3,80}?)\s+(?:in\s+the\s+library|in\s+stock|on\s+display(?:\s+anywhere)?|"
                         r"available\s+to\s+(?:borrow|buy|view|see))(?=\s*(?:[?.!]|$))",
                         re.I)
# An exclusion written after its topic: "trials of statins, pregnant women excluded", "gene therapy with cancer
# excluded", "X, Y not included": read as "X, excluding Y" (a clause of at most six words, at the end of the text
# or before a comma or a stop; "with" only before such a clause: "trials with women excluded from enrolment" goes on)
_POSTFIX_EXCLUSION_RE = re.compile(
    r"(?:,\s*|\s+with\s+|\s+--?\s+|\s*[\u2013\u2014]\s*|\s*\((?=[^()]*\)))(?:the\s+)?(?P<what>[^\s,;:.!?()]+(?:\s+[^\s,;:.!?()]+){0,5}?)\s+"
    r"(?:excluded|not\s+included|left\s+out|(?:is|are)\s+off\s+the\s+table|(?:is|are)\s+out(?:\s+of\s+scope)?|"
    r"not\s+(?:wanted|needed|required|welcome)|(?:is|are)\s+(?:a\s+)?(?:no|no-go|no\s+go|dealbreaker|deal-breaker))"
    r"\)?(?=\s*(?:[.!?]+\s*$|$|[,;]\s))", re.I)
# "tomato blight treatments no copper sprays please": a closing "no X please" excludes X though no comma sets it
# off (at most four words, lower case, after a lower-case word: not "No Man's Sky", "Dr. No")
_NO_PLEASE_RE = re.compile(r"(?<=[a-z0-9])(?<!\bbut)(?<!\band)(?<!\bor)(?<!\bwith)(?<!\bnor)\s+no\s+(?P<what>[a-zA-Z0-9][\w'-]*(?:\s+[a-z0-9][\w'-]*){0,3}?)\s+"
                           r"(?:please|pls|plz)(?=\s*[.!]*\s*$)")
# A keyword string in lower case with one "no" between two phrases: "condoms no latex", "marathon training beginners
# no keto diet" (not a "no" that opens or closes it, nor "no win no fee", "yes or no", "no-fault")
_KEYWORD_NO_RE = re.compile(r"(?P<what>[a-z0-9][a-z0-9'-]*(?:\s+[a-z0-9][a-z0-9'-]*){0,7}?)"
                            r"(?<!\bor)(?<!\band)(?<!\bbut)(?<!\bwith)(?<!\bnor)(?<!\bis)(?<!\bare)(?<!\bhave)(?<!\bhas)"
                            r"(?<!\bof)(?<!\bsay)(?<!\bsays)(?<!\bsaid)(?<!\bbest)(?<!\beasy)(?<!\bquick)(?<!\btop)"
                            r"(?<!\bthe)(?<!\ba)"
                            r"\s+no\s+(?!(?:longer|more|less|matter|doubt|one|way|to|bake|knead|dig|sew|fee|win|deal|fault|"
                            r"code|show|go|return|man's|mans|limit|limits|cost|charge)\b)(?P<not>[a-z][a-z0-9'-]*(?:\s+[a-z0-9][a-z0-9'-]*){0,3})")
# "hand tools only no power tools": a "no" right after "only" opens an exclusion (not "the only no-fee account")
# (only after a topic's word: not "I want only no bake desserts", "states with only no fault divorce", nor after a
# comma: "cheesecake recipes, only no bake"; not compounds of "no": "no dig", "no sugar added")
_ONLY_NO_RE = re.compile(r"(?:(?P<det>\b(?:the|a|an|my|your|our|their|his|her|its|want|wants|with|need|needs|have|has|"
                         r"buy|see|get|show|find|like|use|sell|do|does|is|are)\s+)|(?<=[^\W\d_]|[)\"'\u201d])\s+)(?P<only>only),?\s+no\s+"
                         r"(?!(?:longer|more|less|matter|doubt|idea|one|way|fee|fees|deal|limit|cost|charge|bake|dig|sew|fault|"
                         r"deposit|kill|frills|sugar|code|knead|win|claims?|show|go|return|fuss|strings|touch|smoking)\b)"
                         # (the last clause, a few words: not "wifi only no cellular iPad mini", "NHS only no private,
                         # near Leeds")
                         r"(?=[a-z][^\s,;:.!?()]*(?:\s+[^\s,;:.!?()]+)?[.!?]*\s*$)", re.I)
# "heat stress in dairy cows, looking for stuff on both fans and sprinklers": an ask after the topic adds topics
_LATER_ASK_RE = re.compile(r",\s+(?:(?:i'm|im|i\s+am|we're|we\s+are)\s+)?(?:looking|searching)\s+for\s+(?:some\s+)?"
                           r"(?:stuff|info|information|anything|material|something|papers|articles|documents|sources)\s+"
                           r"(?:on|about|regarding)\s+(?=\S)", re.I)
# "standards for rail equipment that cover both vibration testing and shock testing", "mods that work with both X
# and Y": the relative clause's "both" adds its topics to the head
_RELATIVE_BOTH_RE = re.compile(r"(?<!\bdocuments)(?<!\barticles)(?<!\bpapers)(?<!\bstudies)(?<!\bsomething)(?<!\banything)"
                               r"(?<!\bstuff)(?<!\bsheets)(?<!\breports)(?<!\bsources)(?<!\btexts)(?<!\bresearch)"
                               r"\s+(?:that|which)\s+(?:cover|covers|discuss|discusses|mention|mentions|include|includes|"
                               r"combine|combines|address|addresses|(?:deal|deals|work|works)\s+with|compare|compares)"
                               r"\s+(?=both\s)", re.I)
# "..., but not Argentina -- we have plenty on that already", "(already have those)": the writer's reason
_HAVE_PLENTY_RE = re.compile(
    r"\s*(?:[-\u2013\u2014]+|,|\()\s*(?:(?:we|i)(?:'ve|\s+have)?\s+|(?:we|i)\s+)?(?:already\s+)?(?:have|got)\s+"
    r"(?:plenty|enough|lots|loads|those|that|them|these)(?:\s+(?:on|of|about)\s+(?:that|those|it|them|these))?"
    r"(?:\s+already)?\s*\)?(?=\s*(?:[.!?]|$))", re.I)
# "itchy scalp - neither dandruff nor lice, something else": after an exclusion, what is left names nothing
_SOMETHING_ELSE_RE = re.compile(r"(?<=\w),\s*(?:but\s+)?(?:something|anything)\s+else(?:\s+(?:please|pls|then|instead))?"
                                r"(?=\s*[.!?]*\s*$)")   # (lower case: "The Kinks vinyl, Something Else" names an album)
# "snowsuit 12-18m, nothing from smoking homes": the last clause excludes (not "..., nothing from the seller, refund
# options", "nothing from them": no answer yet)
_NOTHING_FROM_RE = re.compile(r"^(?P<before>(?:(?!\b(?:applied|sent|emailed|e-mailed|called|rang|phoned|wrote|ordered|reported|"
                              r"complained|asked|submitted|paid|booked|posted|interviewed|contacted|chased|requested|filed|"
                              r"returned|messaged|had|got|went|saw|visited|attended)\b)[^.;!?])*?),\s+nothing\s+from\s+(?!(?:them|him|her|anyone|anybody|my|"
                              r"our|your|the\s+(?:buyer|seller|recruiter|employer|landlord|company|council|bank|agent|office|"
                              r"school|insurer|airline|embassy|builder|dealer|hospital|court|university|surgery|"
                              r"consultant|doctor|gp|vet|lawyer|solicitor)s?)\b)"
                              r"(?=[^,;:.!?]+[.!?]*\s*$)", re.I)
# what the writer does not mind ("Not bothered about colour but no refinished ones", "not fussy about the brand,
# no plastic"): no exclusion, nothing to search for (the "but" after it stays)
_INDIFFERENT_RE = re.compile(r"(?:(?<=^)|(?<=[,;.!?(\u2013\u2014-]\s)|(?<=[,;.!?(]))\s*"
                             r"(?:(?:i'm|im|i\s+am|we're|we\s+are)\s+)?(?:not|nt)\s+(?:too\s+|really\s+|that\s+)?"
                             r"(?:bothered|fussed|fussy|picky|worried|particular)\s+(?:about|by|with|re|on)\s+"
                             r"(?:the\s+|its\s+|their\s+)?(?:colou?rs?|sizes?|brands?|prices?|styles?|models?|years?|makes?|"
                             r"condition|age|length|shapes?|materials?|finish|fabric|pattern|design)"
                             r"(?:\s*[,;.!]+|(?=\s+(?:but|just|only|no|not|as\s+long)\b)|\s*$)", re.I)
# "skip matilda and the bfg we have those", "not Moana we already have that one": the same without a separator,
# after an exclusion in the same sentence (not "how do I know if I have it")
_HAVE_THOSE_RE = re.compile(r"(?<=\w)\s+(?:(?:as|since|because|cause|coz|cos)\s+)?(?:we|i)(?:'ve|\s+have)?\s+(?:already\s+)?"
                            r"(?:have|got)\s+(?:that|those|them|these|it)(?:\s+ones?)?(?:\s+already)?"
                            r"(?=\s*(?:[.!?]|$))", re.I)
# ", is for my master thesis", ", it's for our NGO report" closing a request: the writer's purpose
# "I'm writing a grant on X and would be grateful for recent primary research": an ask of documents after the topic
# names nothing more ("... and would appreciate any papers")
_GRATEFUL_CLAUSE_RE = re.compile(r",?\s+and\s+(?:i\s+)?(?:would|'d)\s+(?:be\s+(?:very\s+|most\s+|really\s+)?(?:grateful|thankful)\s+"
                                 r"for|appreciate|love|like)\s+(?:(?:any|some|a\s+few|the|more)\s+)?(?:(?:recent|primary|"
                                 r"good|new|relevant|useful|current|peer[- ]reviewed|published|original|key|further)\s+)*"
                                 r"(?:research|papers?|articles?|studies|sources|literature|references|reading|help|"
                                 r"pointers|suggestions|recommendations)(?=\s*(?:[.!?]|$))", re.I)
# "A or B, but only if it covers Z", "A or B, as long as it mentions Z": Z is wanted beside the whole of what came
# before (", and Z": not "A OR (B AND Z)")
_ONLY_IF_RE = re.compile(r",?\s+(?:but\s+only\s+if\s+(?:(?:it's|it\s+is|they're|they\s+are|they|it|the)\s+)?"
                         r"(?:(?:covers?|includes?|mentions?|discuss(?:es)?|has|have)\s+)?"
                         r"|(?:but\s+)?(?:as|so)\s+long\s+as\s+(?:it|they|the\s+\w+)\s+"
                         r"(?:covers?|includes?|mentions?|discuss(?:es)?|deals?\s+with|(?:is|are)\s+about)\s+)(?=\S)", re.I)
_PURPOSE_CLAUSE_RE = re.compile(r",\s*(?:it\s+is|it's|this\s+is|is)\s+for\s+(?:my|our|a|an|the)\s+[^,;.!?]{1,40}"
                                r"(?=\s*(?:[.!?]|$))", re.I)
# what the request is for: school work ("for my history essay, due friday", ", for a 5th grade report"), a meeting
# ("for a client meeting tomorrow"), a newsroom's piece ("for a feature"): no topic.  Only the writer's own work
# or a grade ("templates for a research paper" names its topic; a reader's age, "for a 10 year old", qualifies
# what is wanted).  A comma after it is kept apart for _drop_purpose.
_WORK_PURPOSE_RE = re.compile(r"(?:"
    r"(?:,\s*|\s+)for\s+(?:(?:my|our|his|her|their)\s+(?:[\w-]+\s+){0,2}?|(?:a|an|my|our)\s+(?:\d{1,2}(?:st|nd|rd|th)|"
    r"first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth)[- ]grade\s+(?:[\w-]+\s+)?)"
    r"(?:essay|report|project|assignment|homework|paper|presentation|class|thesis|dissertation|coursework|seminar|"
    r"capstone|module|course|exam|lecture)"
    r"(?:\s*,?\s*due\s+[\w ]{1,20}?)?(?=\s*(?:[.!?]+\s*$|$|[,;]\s|[-\u2013\u2014]+\s))"
    r"|(?<!it's)(?<!it\sis)(?<!this\sis)(?:,\s*|\s+)for\s+(?:a|an|the|my|our|tomorrow's|today's)\s+"
    r"(?:client|team|board|staff|committee|ward|case)\s+"
    r"(?:meeting|call|review|presentation|briefing|handover|conference)(?:\s+(?:tomorrow|today|tonight|on\s+\w+|"
    r"next\s+\w+|this\s+\w+))?(?=\s*(?:[.!?]+\s*$|$|[,;]\s|[-\u2013\u2014]+\s))"
    # a newsroom's: "for a feature", "for an explainer running next month", "for Sunday's long read"
    r"|(?<!need)(?:,\s*|\s+)for\s+(?:a|an|our|my|the|this|next\s+week's|[a-z]+day's)\s+(?:[\w-]+\s+)?(?:feature|piece|explainer|"
    r"long\s+read|sidebar|backgrounder|profile|package|segment|podcast|documentary|retrospective|op-ed|column)"
    r"(?:\s+(?:running|due|out|going\s+out)\s+[\w ]{1,20}?)?(?=\s*(?:[.!?]+(?:\s|$)|$|[,;]\s))"
    r")(?P<comma>,(?=\s))?", re.I)


# "documents containing the exact phrase "X"", "anything using the phrase "X"": the quoted phrase is the term
_EXACT_PHRASE_RE = re.compile(
    r"\b(?:(?:anything|something|documents?|texts?|pages?|papers?|articles?|results?|sources?)\s+)?(?:containing|using|"
    r"with|mentioning|including|that\s+(?:contains?|uses?|mentions?|includes?))\s+the\s+(?:exact\s+)?(?:phrase|words?|"
    r"term|expression|string)\s*(?=[\"\u201c])", re.I)


# "A or B, but in both cases not C": the exclusion applies to the whole "or", as it does without the words
_IN_EACH_CASE_RE = re.compile(r"(?P<but>\b(?:but|and))\s*,?\s+in\s+(?:both|either|each|any|all)\s+cases?\s*,?\s+(?=\S)",
                              re.I)


MAX_RULE_TERMS = 64
"""Most terms a rules reading may have (18,568 known texts: at most 20): a reading with more is of a text that is
prose or repetition, not a request (16,000 words of one sentence repeated read as 6,000 terms, whose AND of NOTs
overflowed float32 at search time)."""


def translate_rules(text: str) -> Node:
    """Translate one natural-language query; raises :class:`RuleError` when it cannot."""
    node = _unquote_terms(_drop_bare_any(_translate_segments(text)))
    terms = list(_terms(node))
    count = len(terms)
    if count > MAX_RULE_TERMS:
        raise RuleError(f"the reading has {count:,} terms (at most {MAX_RULE_TERMS}): a text this long is prose, not "
                        "a request (embed it whole with --field text, or use an LLM translator)")
    if len(set(terms)) < 2:   # one term (negated too): a whole text, a query by document
        return node
    return _cut_exclusions_at_sentence_end(node, text)   # (of the reading chosen: a segment's may stand instead)


def _translate_segments(text: str) -> Node:
    """The reading of ``text``; where a wanted term of it runs over a dash or a colon that parts two topics, the
    reading of each part, ANDed."""
    asked = _topic_question(text)
    if asked is not None:
        try:
            return make_and([_translate_once(part) for part in asked if part])
        except RuleError:
            pass   # read as one text below
    node = _translate_once(text)
    breaks = _segment_breaks(text)
    if not breaks or not _runs_over_break(node, [pair for _, pair in breaks]):
        return node
    parts = _segments(text, [m for m, _ in breaks])
    # a question after the dash about what came before it ("- what can they eat", "- is it back?") names nothing
    # nor does the writer's own circumstance ("- I'm 70"), but for a status ("- I'm a lodger": "lodger")
    parts = parts[:1] + [c for p in parts[1:] if not _question_about_it(p)
                         for c in [_circumstance_topic(p)] if c is not None]
    try:
        nodes = [_translate_once(p) for p in parts]
    except RuleError:
        return node
    return make_and(nodes)


def _opens_with_title(text: str) -> bool:
    """The text opens with a title that opens with a negation ("No Man's Sky tips"), perhaps after a short ask
    ("is Not Alone back in stock", "do you have No Thanks!")."""
    return bool(_TITLE_OPENING_RE.match(_TITLE_ASK_RE.sub("", text.lstrip(_EDGE_PUNCT), count=1)))


_TITLE_ASK_RE = re.compile(r"(?:is|are|do\s+you\s+(?:have|sell|stock)|have\s+you\s+got|any)\s+(?=(?:No|Not|Without)\s)")


def _translate_once(text: str) -> Node:
    try:
        node = _translate(text)
    except RuleError:
        if not _opens_with_title(text):
            raise
        return _translate(text, title_start=True)
    if not _wanted(node) and _opens_with_title(text):
        return _translate(text, title_start=True)
    if not _wanted(node) and _SKIP_NOUN_RE.match(text.lstrip(_EDGE_PUNCT)):
        # "skip permit for the road - not trade waste", "skip hire - no rubble": read as "skip X", nothing would
        # be wanted; the opening "skip" is then the noun (a builder's skip), not an exclusion
        stand_in = _SKIP_STAND_IN + text.lstrip(_EDGE_PUNCT)[4:]
        try:
            node = parse(canonical(_translate(stand_in)).replace(_SKIP_STAND_IN, "skip"))
        except RuleError:
            pass
        return node
    if isinstance(node, Not) and isinstance(node.child, Term) and len(node.child.text.split()) >= 2 \
            and _NO_OPENING_RE.match(text.lstrip(_EDGE_PUNCT)):
        # "no claims bonus protection", "no dig gardening", "NO KNEAD BREAD": a text that is one "no" phrase
        # names a thing (a query of one exclusion asks for almost everything; "no spoilers" alone still excludes)
        return _translate(text, title_start="no")
    return node


# an ask whose topic is a pronoun: "show me the articles about this", "Are there any real studies on that??"
_ANAPHORIC_ASK_RE = re.compile(r"\b(?:articles?|papers?|studies|study|research|information|info|anything|something|stuff|"
                               r"threads?|posts?|advice|tips|ideas|experiences?|"
                               r"materials?|documents?|literature|evidence|sources?|books?|reading)\s+(?:[\w-]+\s+)?"
                               r"(?:about|on|regarding|concerning|for|of|into)\s+(?:this|that|it|them|these|those)"
                               r"(?:\s+(?:topic|subject|issue|question|one|area|matter))?[\s?!.:;)(*]*$", re.I)
# an ask that names nothing, after the sentence that does: "Could you point me in the right direction?", "Do you
# hold any?", "Can you help?", "Where should I look?", "Any suggestions?"
_EMPTY_ASK_RE = re.compile(
    r"(?:(?:could|can|would|will)\s+(?:you|anyone|someone|somebody)\s+(?:please\s+)?|please\s+)?"
    r"(?:point\s+me\s+in\s+the\s+right\s+direction|help(?:\s+(?:me|us))?(?:\s+with\s+(?:this|that|it))?|advise|"
    r"tell\s+me\s+where\s+to\s+(?:look|start|find\s+(?:it|them|this))|point\s+me\s+(?:to|towards)\s+(?:it|them|"
    r"something|anything|the\s+right\s+(?:place|people|section|resources))|recommend\s+(?:something|anything))"
    r"(?:\s+please)?(?:,?\s+(?:thanks|thank\s+you))?"
    r"|(?:do|does)\s+(?:you|the\s+(?:library|museum|archive|collection|office))\s+(?:hold|have|keep|stock|sell)\s+"
    r"(?:any|anything|it|them|one|some|such\s+\w+)(?:\s+(?:like\s+that|of\s+(?:these|those|this|that)|in\s+(?:your|the)\s+"
    r"(?:collection|archive|catalogue|catalog|holdings)))?(?:,?\s+and\s+(?:would|could|can|may)\s+(?:it\s+be\s+possible\s+"
    r"to\s+|i\s+|we\s+)(?:view|see|visit|access|consult|borrow)\s+(?:them|it|one|some))?"
    r"|where\s+(?:should|can|could|do)\s+i\s+(?:look|start|begin|find\s+(?:it|them|this|these))"
    r"|any\s+(?:ideas|suggestions|pointers|tips|advice|recommendations|help)(?:\s+(?:welcome|appreciated|please))?"
    r"|what\s+(?:do|would)\s+you\s+(?:suggest|recommend|advise)"
    # what is in stock or on offer, asked of whatever the sentences before name: "Do you have anything in stock at
    # the moment?", "Could you let us know what you have in stock?", "Which brands do you recommend?", "What is it
    # called?"
    r"|(?:do|does)\s+(?:you|u)\s+(?:have|hold|stock|sell)\s+(?:anything|something|any)\s+(?:in\s+stock|available|"
    r"like\s+(?:that|this))(?:\s+(?:at\s+the\s+moment|right\s+now|currently|now))?"
    r"|(?:(?:could|can|would|will)\s+(?:you|u)\s+(?:please\s+)?|please\s+)?(?:tell|let)\s+(?:me|us)\s+(?:know\s+)?what\s+(?:you|u)\s+(?:have|hold|stock|can\s+offer|offer|"
    r"(?:are|'re)\s+able\s+to\s+(?:arrange|offer|do|provide))(?:\s+in\s+stock|\s+available)?"
    r"|which\s+(?:one|ones|brands?|makes?|models?|products?)\s+(?:do|would)\s+you\s+(?:recommend|suggest)"
    r"|what\s+(?:is|are)\s+(?:it|they|this|these)\s+called"
    # the writer's next step with no object of its own: "How do I arrange this?", "What should I do?"
    r"|(?:how|what)\s+(?:do|can|should|could|would)\s+(?:i|we)\s+(?:do|proceed)"
    r"|how\s+(?:do|can|should|could|would)\s+(?:i|we)\s+(?:go\s+about|arrange|sort(?:\s+out)?|fix|handle|deal\s+with|"
    r"request|claim|get|do)\s+(?:this|that|it|them)")
# a yes/no question's closing "or not" ("Can I freeze cooked rice or not?"), which negates nothing
_QUESTION_START_RE = re.compile(r"\s*(?:is|are|was|were|do|does|did|can|could|should|would|will|shall|may|has|have)\b",
                                re.I)
_OR_NOT_CLOSING_RE = re.compile(r",?\s+or\s+not(?=[\s?!.]*$)", re.I)
# ... after a clause of its own ("X, still needed or not?", "X - safe or not??"): a word or two after a comma or a dash
_OR_NOT_ASKED_RE = re.compile(r"(?:,|\s[-\u2013\u2014]|\u2014)\s*(?:[\w'-]+\s+){0,2}[\w'-]+\s+or\s+not[\s?!.]*$", re.I)
_SKIP_NOUN_RE = re.compile(r"skip\s+(?!(?:anything|everything|any|all|the|over|past|to|it|this|that|those|these|them)\b)[a-z]")
_SKIP_STAND_IN = "skipbin"   # a word no rule reads, put back as "skip" in the terms
_NO_OPENING_RE = re.compile(r"(?:no|NO)\s+[^\W\d]")


# A capitalised negation, then a capitalised word (a small word may come first): a title may open so
_TITLE_OPENING_RE = re.compile(r"(?:(?:No|Not|Without)\s+)+(?:(?:a|an|the|to|my|for|of)\s+)?[A-Z]")


# a phrase in single quotes that holds a connective: "the 'not heating' fault", "the ‘No Deal’ plan" (the
# writer quoted it as one name; an apostrophe inside or beside a word never opens one)
# (an apostrophe between letters is a word's: "the 'three strikes and you're out' law")
_SINGLE_QUOTED_RE = re.compile(
    r"(?<![\w'\u2019])(?:'(?P<a>(?=(?:[^'\n]|(?<=\w)'(?=\w)){0,60}?\b(?:not|no|and|or|nor|without|except|but)\b)"
    r"[^\s'\"](?:[^'\"\n]|(?<=\w)'(?=\w)){0,60}?(?<=[^\s'\"]))'"
    r"|\u2018(?P<b>(?=(?:[^\u2018\u2019\n]|(?<=\w)\u2019(?=\w)){0,60}?\b(?:not|no|and|or|nor|without|except|but)\b)"
    r"[^\s\u2018\u2019\"](?:[^\u2018\u2019\"\n]|(?<=\w)\u2019(?=\w)){0,60}?(?<=[^\s\u2018\u2019\"]))\u2019)"
    r"(?![\w'\u2019])", re.I)


_MAX_READ_WORDS = 100   # the longest request of the writers' sets that the rules split is 91 words


def _wanted(node: Node) -> bool:
    """Some term is asked for, not only excluded."""
    if isinstance(node, Term):
        return True
    if isinstance(node, Not):
        return False
    return any(_wanted(c) for c in node.children)


# a text that compares: two names joined by "and" are the two things compared ("compare Nikon and Canon mirrorless
# cameras", "differences between Python and Java syntax"; not "vs": "Accident and Illness plan vs Accident Only")
_COMPARING_RE = re.compile(r"\b(?:compar\w*|contrast\w*|differences?|similarit(?:y|ies))\b", re.I)


def _asked_directly(sentence: str) -> str:
    """The sentence with its embedded yes/no question asked directly (_embedded_question), only where the asks then
    take the words the turn added ("Do you stock X" -> "X"); else the sentence as written, so that no term holds a
    word the writer did not type ("Do you need X", "Were there X")."""
    turned = _embedded_question(sentence)
    if turned != sentence:
        first = next((t for t in _strip_filler(_lex(turned)) if t.kind == "WORD"), None)
        if first is None or _fold(first.text).split()[:1] == _fold(turned).split()[:1]:
            return sentence
    return turned


def _translate(text: str, title_start: bool | str = False) -> Node:
    if not isinstance(text, str):
        raise RuleError(f"text must be a string, got {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS:
        raise RuleError(f"text is {len(text)} characters long (at most {MAX_QUERY_CHARS})")
    cleaned = _SINGLE_QUOTED_RE.sub(lambda m: f'"{m.group("a") or m.group("b")}"',
                                    _clean(_layout(text) if "\n" in text or "\r" in text else text))
    if not cleaned.strip():
        raise RuleError("empty text" if not text.strip() else "no words (only emoji, symbols or control characters): "
                        "the rules read words (write it in words, quote it, or use an LLM translator)")
    symbol = _symbol_operand(text)
    if symbol:
        raise RuleError(f"a term of emoji or symbols only ({symbol!r}): the rules read words, and leaving it out would "
                        "change the logic (write it in words, quote it, or use an LLM translator)")
    cleaned = _IN_EACH_CASE_RE.sub(r"\g<but> ", _assignment(_numbered(_spec(_pico(_spoken(_dictated_marks(cleaned)))))))
    cleaned = re.sub(r"[ \t]{2,}", " ", cleaned)   # runs of blanks: the closing-clause patterns below stay linear
    if cleaned.rstrip().endswith("?") and (_QUESTION_START_RE.match(cleaned) or _OR_NOT_ASKED_RE.search(cleaned)):
        # "Should I get a flu jab or not?", "metformin before contrast CT -- still needed or not??": the yes/no
        # question's claim (typed without its "?", a whether-question stays whole, as the labelled set has it)
        cleaned = _OR_NOT_CLOSING_RE.sub("", cleaned)
    cleaned = _HAVE_PLENTY_RE.sub("", _EITHER_FINE_RE.sub("", _BOTH_REQUIRED_RE.sub(" ", cleaned)))
    cleaned = _HAVE_THOSE_RE.sub(_had_excluded, cleaned)
    cleaned = _NOTHING_FROM_RE.sub(r"\g<before>, excluding ", _SOMETHING_ELSE_RE.sub("", _INDIFFERENT_RE.sub("", cleaned)))
    cleaned = _OR_FINE_RE.sub(r"\1", cleaned)
    cleaned = _ANY_KIND_RE.sub(lambda m: m.group(0) if "," not in m.string[m.end():] and not re.sub(
                                   r"(?i)\b(?:is|are|was|were|do|does|can|could|will|would|has|have|there)\b|\W", "",
                                   m.string[:m.start()])
                               else "excluding " if m.group("but") else "",   # (the category is the topic when nothing
                               # but a question's verb comes before it and no comma after: "any city except London for
                               # a hen do"; not "any country except China, manufacturing jobs")
                               _IF_HELD_RE.sub("", _HELD_TAIL_RE.sub(r"\1", _STATUS_TAIL_RE.sub("", cleaned))))
    cleaned = _WHICHEVER_RE.sub("", _IN_YOUR_HOLDINGS_RE.sub("", _HANDED_IN_RE.sub("", cleaned)))
    cleaned = re.sub(r",\s*anything\s+goes\s+(?=unless\b)", ", ", cleaned, flags=re.I)   # "X, anything goes unless Y"
    cleaned = _IF_SO_TAIL_RE.sub(lambda m: m.group("stop")[:1], cleaned)   # (a question stays one)
    cleaned = _ALL_BUT_FOR_RE.sub(lambda m: f"{m.group('y')}, {m.group('lead')} {m.group('x')}", cleaned)
    cleaned = _NOT_BOTH_PHRASE_RE.sub(", but not both", _ONE_OR_OTHER_RE.sub("", cleaned))
    cleaned = _RECOMMEND_RE.sub(r"Looking for \g<x>", _which_better(_refusal_first(cleaned)))
    cleaned = _LINKING_RE.sub(lambda m: f"{m.group('genre')} on {m.group('x')} and ", cleaned)
    cleaned = _WHEN_ON_RE.sub(lambda m: m.group("x") or m.group("y") or m.group("z"), cleaned)
    for late_exclusion in (_POSTFIX_EXCLUSION_RE, _NO_PLEASE_RE):   # "X, Y excluded", "X no Y please"
        cleaned = late_exclusion.sub(lambda m: ", excluding " + m.group("what"), cleaned)
    cleaned = _ONLY_NO_RE.sub(lambda m: m.group(0) if m.group("det") else " " + m.group("only") + ", excluding ",
                              cleaned)
    m = _KEYWORD_NO_RE.fullmatch(cleaned.strip())
    if m and len(re.findall(r"\bno\b", cleaned)) == 1:
        cleaned = f"{m.group('what')}, excluding {m.group('not')}"
    cleaned = _LATER_ASK_RE.sub(", and ", _RELATIVE_BOTH_RE.sub(" and ", cleaned))
    cleaned = _drop_preference_clause(_PURPOSE_CLAUSE_RE.sub("", _WORK_PURPOSE_RE.sub(_drop_purpose, cleaned))).strip()
    cleaned = _GRATEFUL_CLAUSE_RE.sub("", cleaned)
    cleaned = _ONLY_IF_RE.sub(", and ", cleaned)   # "X, but only if they cover Y": X AND Y
    cleaned = _restrictions(_hedged(_loose_operators(_EXACT_PHRASE_RE.sub("", cleaned))))
    if len(cleaned) <= _MAX_LETTER:
        found = _sentences(cleaned)
        known = [_already_have(s) for s in found]
        if known != found:   # before the letter's own asks ("..., so please find me Y") take the clause away
            cleaned = " ".join(known)
        cleaned = _letter(cleaned)
    found = _sentences(cleaned)
    if len(cleaned) <= _MAX_REPHRASED and len(found) <= 2:   # a request, not prose
        paired = _dash_pairs(cleaned)
        if paired != cleaned:
            cleaned, found = paired, _sentences(paired)
    cleaned, found = _rephrase(cleaned, found)
    empty = [i for i, s in enumerate(found) if _EMPTY_ASK_RE.fullmatch(_fold(s).strip(" .!?"))]
    if empty and any(i not in empty and not _EXCLUSION_SENTENCE_RE.match(_fold(s)) for i, s in enumerate(found)):   # "... but not opinion columns. Could you point me in the right direction?"
        found = [s for i, s in enumerate(found) if i not in empty]
        cleaned = " ".join(found)
    sentences = _join_exclusions(found)
    if len(sentences) < len(found):
        cleaned = " ".join(sentences)
    request = next((i for i, s in enumerate(sentences) if _REQUEST_RE.match(s.lower())), None)
    if request is not None and _RESEARCHING_RE.match(_fold(sentences[request])):
        # "I'm researching X for a newsletter. Could you find Y?": the writer's study is context for the ask after it
        request = next((i for i in range(request + 1, min(len(sentences), request + 3))
                        if _REQUEST_RE.match(sentences[i].lower()) and not _RESEARCHING_RE.match(_fold(sentences[i]))),
                       request)
    if request and _ANAPHORIC_ASK_RE.search(sentences[request]):
        # "... corrosion of concrete bridges in coastal climate. Please show me the articles about this.": the ask's
        # topic is a pronoun, the topic is the sentence before it
        sentences = sentences[:request] + sentences[request + 1:]
        cleaned = " ".join(sentences)
        request = next((i for i, s in enumerate(sentences) if _REQUEST_RE.match(s.lower())), None)
    if request is not None and (request > _preamble_limit(sentences, request) or len(sentences) - request > _MAX_REQUEST):
        request = None  # a request-like sentence inside paragraphs of prose ("What is true of X is ...")
    if request:  # "Some argue that X. Find research on Y": the preamble is context, not the query
        cleaned = " ".join(sentences[request:])
    embedded = [_asked_directly(s) for s in sentences[request or 0:]]
    if embedded != sentences[request or 0:]:   # "Could you tell me whether you stock X?": "Do you stock X?"
        sentences = sentences[:request or 0] + embedded
        cleaned = " ".join(sentences[request or 0:])
    prose = len(sentences) > 1 and request is None   # a joined exclusion is part of its sentence
    toks = _strip_filler(_lex(cleaned, title_start, pairs=not _COMPARING_RE.search(text)))
    quoted = {" ".join(t.text.split()) for t in toks if t.kind == "QTERM"}
    sentence_like = _has_aux(toks)
    if sentence_like:  # the query holds sentences: plain and / or / not are their words
        toks = _sentence_words(toks)
        # a joined exclusion follows its question: "Does coffee cause cancer? Not decaf."
        toks = _drop_question_aux(toks, cleaned if len(sentences) == len(found) else cleaned.split("; ", 1)[0])
    prose_error = RuleError(f"{len(found)} sentences of prose with connectives inside them: where one term ends "
                            "is not in the wording (quote each term, or use an LLM translator)")
    try:
        toks = _normalise(_parentheticals(toks))
        if not toks:
            raise RuleError("nothing to search for")
        node = _drop_articles(_drop_placeholders(_Parser(toks, bool(_LIST_ASK_RE.match(cleaned))).parse()), quoted)
        # a comma before "or" keeps alternatives apart ("either X in A, or B"); the last comma of a list lets a
        # phrase after the list be shared ("statins, aspirin, or beta blockers for stroke prevention", as without
        # that comma), not one before it ("X for A, B, or C": where the head ends, the list does not tell)
        comma_or = [m.start() for m in re.finditer(r",\s*or\b", cleaned, re.I)]
        oxford = all(re.search(r",[^,;:.!?]{1,60}$", cleaned[:at]) for at in comma_or)
        if not sentence_like and (not comma_or or oxford):
            whole = re.search(r"\beither\b|\bor\s+(?:an?|the|some|any)\s", cleaned, re.I)   # (see _shared_noun_tail)
            node = _drop_articles(_split_shared(node, quoted, heads=not comma_or, nouns=not whole), quoted)
        node = _excluded_place(node, quoted)
    except RuleError:
        if prose and sentence_like:   # the prose is the reason, not the token the parser stopped at
            raise prose_error from None
        raise
    if prose and sentence_like and len(set(_terms(node))) > 1:
        # Query-by-document: in paragraphs of prose, "and" / "or" / "not" / "without" are mostly words
        # of the sentences, and where one argument ends is a matter of meaning, not of wording.
        raise prose_error
    terms = list(_terms(node))
    if len(cleaned.split()) > _MAX_READ_WORDS and not quoted and (len(set(terms)) > 1 or not _wanted(node)) \
            and len(terms) <= MAX_RULE_TERMS:   # (more: translate_rules says how many)
        # a document, not a request (an argument with its footnotes, "(1)", "No. 1", "pp.1-22", cut at every
        # "and"; the request after a letter's preamble is what is left of it): where a term ends is a matter of
        # meaning; one term of it all is left to --fallback-text
        raise RuleError(f"a text of {len(cleaned.split()):,} words with connectives inside it reads as a document, "
                        f"not a request (at most {_MAX_READ_WORDS} words are split into terms; quote each term, "
                        "or use an LLM translator)")
    node = _split_sentence_terms(_excluded_asides(node, quoted), quoted, cleaned)
    _check_not_function_words(node, quoted)
    expr = printed(node)   # (canonical() would raise its own error for the length checked here)
    if len(expr) > MAX_QUERY_CHARS:
        raise RuleError(f"translation is {len(expr)} characters long (at most {MAX_QUERY_CHARS})")
    try:
        return parse(expr)
    except QuerySyntaxError as e:  # e.g. too deep for the query parser
        raise RuleError(f"translation does not parse: {e}") from None


# a sentence's end inside a term: a lower-case word of three letters or more, its stop, a capitalised word ("...
# tutoring platforms. Some commentators insist ..."; not "Dr. Smith", "et al. Jones", "incl. VAT")
_SENTENCE_END_IN_TERM_RE = re.compile(r"\b(?P<word>[a-z]{3,})(?P<stop>[.!?])\s+[A-Z][a-z]")
# lower-case abbreviations before a name ("approx. Boston", "incl. Paris"): no sentence ends there
_LOWER_ABBREVIATIONS = frozenset("approx incl excl esp univ dept govt intl misc assoc coll cent ave blvd hwy mfr "
                                 "mfg pkg qty ref resp".split())


def _cut_exclusions_at_sentence_end(node: Node, text: str, negated: bool = False) -> Node:
    """An exclusion that runs on past a sentence's end ("... not snowboard. Is there discount for family?", "...
    but not those about Y. Some insist that X ...") ends there: what follows is the next sentence (a question
    after the request, its context), and under the NOT it would exclude whatever that sentence names, the
    wanted topic too.  A wanted term that runs over a sentence's end keeps its words (a verbose term, not a wrong
    one); a term the text quotes is the writer's own."""
    if isinstance(node, Term):
        if not negated or any(f"{a}{node.text}{b}" in text for a, b in ('""', "\u201c\u201d", "\u00ab\u00bb")):
            return node
        m = next((m for m in _SENTENCE_END_IN_TERM_RE.finditer(node.text)
                  if m.group("word") not in _LOWER_ABBREVIATIONS), None)
        return Term(node.text[:m.start("stop")]) if m else node
    if isinstance(node, Not):
        return Not(_cut_exclusions_at_sentence_end(node.child, text, True))
    kids = [_cut_exclusions_at_sentence_end(c, text, negated) for c in node.children]
    return make_and(kids) if isinstance(node, And) else make_or(kids)


# Words that name nothing alone: articles, pronouns, question words, auxiliaries, prepositions, conjunctions
# (not those that are nouns too: "mine", "will", "can", "must", "might", "may")
_FUNCTION_WORDS = frozenset("""
    a an the this that these those some any all each every no
    i me my you your yours he him his she her hers it its we us our ours they them their theirs
    what which who whom whose when where why how whether
    is are was were be been being am do does did have has had could would shall should
    of to in on at by for from with about as into onto over under between through than then
    and or but nor so if
""".split())


def _check_not_function_words(node: Node, quoted: set[str]) -> None:
    """A request whose every term is lower-case function words ("the", "what is it", "of the and") names nothing
    to search for: its embedding would rank documents by how much they say "the".  Capitals may be a name ("The
    Who", "IT", "It" the novel) and quotes say what to search for: those stand."""
    terms = list(_terms(node))
    if terms and all(t not in quoted and t == t.lower() and all(w in _FUNCTION_WORDS for w in re.findall(r"[\w']+", t))
                     for t in terms):
        shown = " / ".join(repr(t) for t in dict.fromkeys(terms))
        raise RuleError(f"nothing to search for: {shown} holds only function words (quote a term to search for "
                        "it as written)")


_TERM_ABBREVIATIONS = {"approx", "incl", "dept", "corp", "capt", "sept", "rev", "gen", "col", "vol", "ave", "est", "jan",
                       "feb", "mar", "apr", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "univ", "govt", "intl",
                       "sgt", "hon"}
"""With ``_ABBREVIATIONS``: words that end with a full stop inside a phrase ("Prof. Okonkwo", "Sept. 2019")."""
# the word before the stop (from white space or "(" on) is part of the match: no look back over the text per stop
_TERM_SENTENCE_END_RE = re.compile(r"(?P<word>[^\s(]*\w)(?:\.+|(?P<bang>[!?]+))\s+(?=[^\W\d_])")


def _term_sentences(text: str) -> list[str]:
    """``text`` cut where a sentence ends: after a word of three letters or more, or a number, that is no
    abbreviation ("Dr.", "L.", "Prof.", "e.g." stay), and a "!" or "?" only before a capital ("Wow! signal")."""
    parts, start = [], 0
    for m in _TERM_SENTENCE_END_RE.finditer(text):
        word = m.group("word")
        if m.group("bang") and not text[m.end()].isupper():
            continue
        if not (word.isdigit() or len(word) >= 3 and word.isalpha()) \
                or word.lower() in _ABBREVIATIONS or word.lower() in _TERM_ABBREVIATIONS:
            continue
        parts.append(text[start:m.end("word")])
        start = m.end()
    return [p.strip(" ,;:") for p in parts + [text[start:]]]


def _split_sentence_terms(node: Node, quoted: set[str], text: str = "") -> Node:
    """A wanted term that runs over a sentence's end is a term per sentence: "Rent arrears. Housing association",
    "HAND CREAM FOR DRY HANDS. UNSCENTED" (short fragments, each a topic), never one phrase."""
    if isinstance(node, (And, Or)):
        kids = [_split_sentence_terms(c, quoted, text) for c in node.children]
        return make_and(kids) if isinstance(node, And) else make_or(kids)
    if isinstance(node, Not) and isinstance(node.child, Term) and node.child.text not in quoted:
        # "hotels without breakfast. City centre only.": the exclusion ends with its sentence, and the fragment
        # after it is wanted (never one excluded phrase "breakfast. City centre")
        parts = _term_sentences(node.child.text)
        if len(parts) < 2 or not all(parts) or any(len(p.split()) > _MAX_FRAGMENT_WORDS for p in parts):
            return node
        at = text.find(node.child.text)
        if at >= 0 and re.match(r"\s*,?\s*(?:or|and|nor)\b", text[at + len(node.child.text):], re.I):
            return node   # "wine not from France. Italy or Spain.": the fragment begins a list of its own
        words = {w.lower() for p in parts[1:] for w in re.findall(r"[\w']+", p)}
        if words & (_CLAUSE_WORDS | _MORE_CLAUSE_WORDS) \
                or any(re.match(r"(?:no|not|none|nothing|nobody|neither|nor)\b", p, re.I) for p in parts[1:]):
            return node
        parts = [re.sub(r"[\s,]+please$", "", p, flags=re.I) or p for p in parts]   # "No X please. Only Y."
        # an ask or a closing after the exclusion ("... not more than 8 miles a day. Any guides?", "except Nestle.
        # Saludos") names nothing wanted
        kept: list[Node] = [Not(Term(parts[0]))]
        for p in parts[1:]:
            low = _fold(p)
            if _asks_only(p) or _SIGN_OFF_RE.fullmatch(low) or set(low.split()) <= _ASK_ONLY_WORDS | _KINDS_ASKED_FOR \
                    or _REMARK_RE.match(low):
                continue   # "Any guides?", "Saludos", "Too heavy.", "Urgent."
            more = _MORE_EXCLUDED_RE.fullmatch(p)   # "but no reviews. Editorials too.": excluded as well
            kept.append(Not(Term(more.group("x") or more.group("x2"))) if more else Term(p))
        return make_and(kept)
    if not isinstance(node, Term) or node.text in quoted:
        return node
    parts = _term_sentences(node.text)
    if len(parts) < 2 or not all(parts) or any(len(p.split()) > _MAX_FRAGMENT_WORDS for p in parts):
        return node
    words = {w.lower() for p in parts for w in re.findall(r"[\w']+", p)}
    if words & _CLAUSE_WORDS or any(re.match(r"(?:no|not|none|nothing|nobody)\b", p, re.I) for p in parts):
        return node   # sentences ("Climate change is real. No one denies it"), a claim's words, not fragments
    # "Ward sister here. Anything on pressure ulcer prevention?": a fragment's ask is no words of its topic
    parts = [_ANYTHING_ON_RE.sub("", p) or p for p in parts]
    return make_and([Term(p) for p in parts])


_REMARK_RE = re.compile(r"(?:too|so|very|really|way|far)\s+\S+$|(?:urgent|asap|boring|obviously|thanks?)$")
_MORE_EXCLUDED_RE = re.compile(r"or\s+(?P<x>.+?)|(?P<x2>.+?)\s+(?:too|as\s+well|either)", re.I)
_MORE_CLAUSE_WORDS = {"we've", "we're", "they're", "they've", "she's", "he's", "you've", "you're", "i'd", "we'd"}
_KINDS_ASKED_FOR = {"any", "guide", "guides", "video", "videos", "tips", "ideas", "suggestions", "recommendations"}
_ANYTHING_ON_RE = re.compile(r"^(?:anything|something)\s+(?:on|about|regarding|re:?)\s+(?=\S)", re.I)


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
