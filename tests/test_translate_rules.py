"""Rule-based translator: accuracy on the labelled set, phrasing units, never crashing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from itlr_gpu.query import canonical, parse
from itlr_gpu.translate import translate, translate_table
from itlr_gpu.translate.rules import RuleError, translate_rules, try_translate_rules

PAIRS = Path(__file__).parent / "data" / "translation_pairs.jsonl"


def load_pairs():
    return [json.loads(line) for line in PAIRS.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_labelled_set_is_well_formed():
    pairs = load_pairs()
    assert len(pairs) >= 200
    assert len({p["id"] for p in pairs}) == len(pairs)
    assert len({p["text"] for p in pairs}) == len(pairs)
    for p in pairs:
        assert canonical(parse(p["expr"])) == p["expr"], p  # labels are canonical
        assert p["split"] in ("dev", "test"), p
    test = [p for p in pairs if p["split"] == "test"]
    free = [p for p in pairs if p["group"].startswith("free-form")]
    assert len(test) >= 100 and len(free) >= 40
    assert sum(p["split"] == "test" for p in free) >= len(free) // 2  # free-form cases are in the test split too


def test_rules_accuracy_on_labelled_set():
    # The free-form cases (long argumentative texts, questions, "and"/"or"/"not" inside a topic
    # name) are what the LLM translators are for; the rules' regression set is the rest.
    pairs = [p for p in load_pairs() if not p["group"].startswith("free-form")]
    rows = translate([p["text"] for p in pairs])
    wrong = [(p["text"], p["expr"], r.expr or r.error) for p, r in zip(pairs, rows) if r.expr != p["expr"]]
    accuracy = 1 - len(wrong) / len(pairs)
    assert accuracy >= 0.95, f"accuracy {accuracy:.3f}; first misses: {wrong[:10]}"


@pytest.mark.parametrize(
    "text, expr",
    [
        ("vitamin D benefits but not bone health", '("vitamin D benefits" AND NOT "bone health")'),
        ("cats or dogs but not fleas or ticks", '(("cats" OR "dogs") AND NOT "fleas" AND NOT "ticks")'),
        ("a and not b or c", '(("a" AND NOT "b") OR "c")'),
        ("a or b and c", '("a" OR ("b" AND "c"))'),
        ("a, b and c", '("a" AND "b" AND "c")'),
        ("a, b, or c", '("a" OR "b" OR "c")'),
        ("a or b, and c", '(("a" OR "b") AND "c")'),
        ("x and either y or z", '("x" AND ("y" OR "z"))'),
        ("neither x nor y", '(NOT "x" AND NOT "y")'),
        ("both x and y", '("x" AND "y")'),
        # "though" / "although" / "however" join clauses as "but" does
        ("river pollution, though nothing on plastics", '("river pollution" AND NOT "plastics")'),
        ("river pollution, although not plastics", '("river pollution" AND NOT "plastics")'),
        ("x or y, however not z", '(("x" OR "y") AND NOT "z")'),
        ("migraine drugs or acupuncture, but never opioids", '(("migraine drugs" OR "acupuncture") AND NOT "opioids")'),
        ("earthquake prediction, preferably not deep learning", '("earthquake prediction" AND NOT "deep learning")'),
        ("screening based primarily on cytology", '"screening based primarily on cytology"'),
        ("Aspirin never causes ulcers", '"Aspirin never causes ulcers"'),
        ("x as well as y", '("x" AND "y")'),
        ("x other than y", '("x" AND NOT "y")'),
        ("x rather than y", '("x" AND NOT "y")'),
        ("x without y", '("x" AND NOT "y")'),
        ("x except y", '("x" AND NOT "y")'),
        ("x excluding y", '("x" AND NOT "y")'),
        ("not x", 'NOT "x"'),
        ("Find documents about solar power", '"solar power"'),
        ("I want articles discussing tides", '"tides"'),
        ('"rock and roll" OR "a \\"quoted\\" b"', '("rock and roll" OR "a \\"quoted\\" b")'),
        ("(a or b) and not (c or d)", '(("a" OR "b") AND NOT ("c" OR "d"))'),
        ("x but not both y and z", '("x" AND NOT ("y" AND "z"))'),
        # strong disjunctions end an exclusion's scope
        ("a but not b, or c", '(("a" AND NOT "b") OR "c")'),
        ("a without b; or c", '(("a" AND NOT "b") OR "c")'),
        ("a, or else b but not c", '("a" OR ("b" AND NOT "c"))'),
        ("either a, excluding b, or c", '(("a" AND NOT "b") OR "c")'),
        ("a but not b, c, or d", '("a" AND NOT "b" AND NOT "c" AND NOT "d")'),  # Oxford list: still excluded
        ("either a or b without c", '(("a" OR "b") AND NOT "c")'),
        # exclusion-only groups
        ("everything except a, or else b", '(NOT "a" OR "b")'),
        ("anything not about a; or b", '(NOT "a" OR "b")'),
        ("documents that do not mention q", 'NOT "q"'),   # (a lone "a" is an article: nothing to search for)
        ("texts on none of a, b or c", '(NOT "a" AND NOT "b" AND NOT "c")'),
        ("neither a nor b, or c", '((NOT "a" AND NOT "b") OR "c")'),
        ("all of a, b and c", '("a" AND "b" AND "c")'),
        ("any of a, b or c", '("a" OR "b" OR "c")'),
        ("a and b together, or c", '(("a" AND "b") OR "c")'),
        ("a, not b, and c", '("a" AND NOT "b" AND "c")'),
        ("a, not b and not c", '("a" AND NOT "b" AND NOT "c")'),
        ("texts about a or about b", '("a" OR "b")'),
        # sentences, quotes and fixed phrases stay one term
        ("The death penalty is not a deterrent and should be abolished",
         '"The death penalty is not a deterrent and should be abolished"'),
        ('"research and development" or marketing', '("research and development" OR "marketing")'),
        ("\u201csalt and pepper shakers\u201d or grinders", '("salt and pepper shakers" OR "grinders")'),
        ("free will or determinism", '("free will" OR "determinism")'),
        ("neither iron and steel nor copper", '(NOT "iron and steel" AND NOT "copper")'),
        # names, quotes and nouns among function words stand (rules-90)
        ("The Who", '"The Who"'), ("IT", '"IT"'), ('"the"', '"the"'), ("mine", '"mine"'), ("will", '"will"'),
        ("WHO", '"WHO"'),
        # "linking X to Y" (rules-92); colours, materials and sizes share their noun (rules-91)
        ("studies linking sugar to hyperactivity", '("sugar" AND "hyperactivity")'),
        ("Is there any research linking sugar to hyperactivity?", '("sugar" AND "hyperactivity")'),
        ("papers linking smoking with lung cancer", '("smoking" AND "lung cancer")'),
        ("Any studies linking sugar to hyperactivity in children?", '("sugar" AND "hyperactivity in children")'),
        ("studies linking sugar to hyperactivity but not ADHD medication",
         '("sugar" AND "hyperactivity" AND NOT "ADHD medication")'),
        ("linking verbs in English", '"linking verbs in English"'),
        ("red or blue paint", '(("red" OR "blue") AND "paint")'),
        ("linen or linen blend for summer trousers", '(("linen" OR "linen blend") AND "summer trousers")'),
        # a head shared out of a relative clause keeps no dangling verb; a phrase shared after the alternatives
        # keeps its clause, the verb is what it says (rules-93)
        ("restaurants that serve pizza or pasta", '("restaurants" AND ("pizza" OR "pasta"))'),
        ("films that star Tom Hanks or Meg Ryan", '("films" AND ("Tom Hanks" OR "Meg Ryan"))'),
        ("restaurants that serve pizza", '"restaurants that serve pizza"'),
        ("aspirin or ibuprofen for people who snore", '(("aspirin" OR "ibuprofen") AND "people who snore")'),
        # rules-94: exclusion verbs put first; "don't care about"; idioms whose "not" excludes nothing
        ("avoid anything about cryptocurrency, I want stock market news",
         '("stock market news" AND NOT "cryptocurrency")'),
        ("ignore cryptocurrency, stock market news", '("stock market news" AND NOT "cryptocurrency")'),
        ("avoid burnout, tips for nurses", '("avoid burnout" AND "nurses")'),
        ("avoid burnout: tips for nurses", '("avoid burnout" AND "nurses")'),
        ("show me articles on inflation; I don't care about Brazil", '("inflation" AND NOT "Brazil")'),
        ("news about the merger, but I do not care about stock price movements",
         '("the merger" AND NOT "stock price movements")'),
        ("why people don't care about climate change", '"why people don\'t care about climate change"'),
        ("not all fats are bad", '"not all fats are bad"'),
        ("not everyone benefits from statins", '"not everyone benefits from statins"'),
        ("not all salads", 'NOT "all salads"'),
        ("the not so obvious risks of sunbathing", '"the not so obvious risks of sunbathing"'),
        ("why not ban smoking in cars", '"why not ban smoking in cars"'),
        ("college should be free for all, not just the poor", '"college should be free for all, not just the poor"'),
        ("salads, not only lettuce but also kale", '("salads" AND "lettuce" AND "kale")'),
        ("cats, not dogs", '("cats" AND NOT "dogs")'),
        ("beer or wine and heart health", '("beer" OR ("wine" AND "heart health"))'),   # the grammar's precedence
        ("Diabetes...but NOT type 1!!!", '("Diabetes" AND NOT "type 1")'),
        ("diabetes\u2026but not type 1", '("diabetes" AND NOT "type 1")'),
        ("version 1...3", '"version 1...3"'),
        # rules-95: "unless it is / they concern X" and a "besides X" between operands exclude; a headline's "Not"
        # before a participle or an adjective negates its claim; "and if so, which ones?" asks nothing new
        ("F1 race results, unless it is Monaco", '("F1 race results" AND NOT "Monaco")'),
        ("immigration law updates unless they concern asylum", '("immigration law updates" AND NOT "asylum")'),
        ("What are the side effects of metformin besides stomach upset?",
         '("the side effects of metformin" AND NOT "stomach upset")'),
        ("Besides being cheap, is it safe?", '"Besides being cheap, is it safe"'),
        ("Besides sleep, what helps with fatigue", '("fatigue" AND NOT "sleep")'),
        ("Fish Oil Not Recommended for Atrial Fibrillation", '"Fish Oil Not Recommended for Atrial Fibrillation"'),
        ("Statins Not Effective in the Elderly", '"Statins Not Effective in the Elderly"'),
        ("Breast Cancer Not Prostate Cancer", '("Breast Cancer" AND NOT "Prostate Cancer")'),
        ("Coffee, Not Tea", '("Coffee" AND NOT "Tea")'),
        ("Anime Dubbed Not Subbed", '("Anime Dubbed" AND NOT "Subbed")'),
        ("vegan friendly wines not filtered with isinglass", '("vegan friendly wines" AND NOT "filtered with isinglass")'),
        ("Do SSRIs increase suicide risk in adolescents, and if so, which ones?",
         '"SSRIs increase suicide risk in adolescents"'),
        ("Anything except neem oil for spider mites on indoor palms", '("spider mites on indoor palms" AND NOT "neem oil")'),
        ("anything but statins for high cholesterol", '("high cholesterol" AND NOT "statins")'),
        ("anything except cryptocurrency", 'NOT "cryptocurrency"'),
        # an exception to an exclusion wants what it names
        ("world news, no sport except the Olympics", '("world news" AND (NOT "sport" OR "the Olympics"))'),
        ("EU politics but not Brexit, unless it's about Northern Ireland",
         '("EU politics" AND (NOT "Brexit" OR "Northern Ireland"))'),
        ("football news excluding transfers except for Arsenal", '("football news" AND (NOT "transfers" OR "Arsenal"))'),
        ("vegan recipes, no nuts except almonds, no soy",
         '("vegan recipes" AND (NOT "nuts" OR "almonds") AND NOT "soy")'),
        ("sport except the Olympics", '("sport" AND NOT "the Olympics")'),
        ("Would you mind pulling up news about the Greek debt crisis, excluding anything after 2015?",
         '("the Greek debt crisis" AND NOT "after 2015")'),
        ("do you mind sending me articles on tariffs", '"tariffs"'),
        # rules-96: "using" / "via" share a head; a lower-case topic before compared names; two groups of
        # alternatives; "do you allow / work with X"
        ("robotic lawnmower boundary detection using RTK GPS or a vision camera",
         '("robotic lawnmower boundary detection" AND ("RTK GPS" OR "vision camera"))'),
        ("CRISPR delivery via lipid nanoparticles or AAV vectors",
         '("CRISPR delivery" AND ("lipid nanoparticles" OR "AAV vectors"))'),
        ("Drop off zone or short stay", '("Drop off zone" OR "short stay")'),
        ("swarm control Demaree vs Snelgrove", '("swarm control" AND "Demaree" AND "Snelgrove")'),
        ("law conversion course SQE vs GDL", '("law conversion course" AND "SQE" AND "GDL")'),
        ("acer palmatum bloodgood vs osakazuki", '("acer palmatum bloodgood" AND "osakazuki")'),
        ("Procter and Gamble vs Unilever", '("Procter and Gamble" AND "Unilever")'),
        ("graduate schemes in civil engineering or structural engineering, London or Manchester",
         '("graduate schemes" AND ("civil engineering" OR "structural engineering") AND ("London" OR "Manchester"))'),
        ("red, green or blue", '("red" OR "green" OR "blue")'),
        ("Do you work with donor egg banks in Spain or Cyprus?", '("donor egg banks" AND ("Spain" OR "Cyprus"))'),
        ("boiler service - do you cover York or Selby?", '("boiler service" AND ("York" OR "Selby"))'),
        # rules-97: "have you published anything on X", "can I see decisions on X"; "-not X"
        ("I'm a water engineer at a utility, not an academic. Have you published anything practical on reservoir "
         "sedimentation?", '"reservoir sedimentation"'),
        ("Has the journal published anything on ketamine or esketamine?", '("ketamine" OR "esketamine")'),
        ("my employer changed my shift pattern without consultation and I think it's a breach of contract. Can I "
         "see tribunal decisions on unilateral changes to working hours?",
         '"tribunal decisions on unilateral changes to working hours"'),
        ("can I see a GP without registering", '("see a GP" AND NOT "registering")'),
        ("export readings for solar panels -not SEG tariff", '("export readings for solar panels" AND NOT "SEG tariff")'),
        ("cats -no", '("cats" AND NOT "no")'),
        # rules-98: a title with "and" among named alternatives
        ("sentiment analysis of Pride and Prejudice or Emma", '("sentiment analysis" AND ("Pride and Prejudice" OR "Emma"))'),
        ("larval dispersal of Quercus robur or Fagus sylvatica",
         '("larval dispersal" AND ("Quercus robur" OR "Fagus sylvatica"))'),
        ("Department of Health or Education", '("Department of Health" OR "Education")'),
    ],
)
def test_phrasings(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "find", "documents about", "((()))", "and or but", "not"])
def test_untranslatable_texts_are_error_rows(text):
    (row,) = translate([text])
    if row.error is None:  # a lone leftover word is a valid (if odd) one-term query
        assert parse(row.expr)
    else:
        assert row.expr is None and "\n" not in row.error
    with pytest.raises(RuleError):
        translate_rules("")


def test_error_rows_in_table_do_not_lose_the_batch():
    import pyarrow as pa

    t = pa.table({"query_id": ["1", "2", "3"], "text": ["cats but not dogs", "", None]})
    out = translate_table(t)
    assert out.column_names == ["query_id", "text", "expr", "translator", "error", "llm_expr", "repaired"]
    rows = out.to_pylist()
    assert all(r["llm_expr"] is None and r["repaired"] is None for r in rows)   # nothing to repair in the rules' own
    assert rows[0]["expr"] == '("cats" AND NOT "dogs")' and rows[0]["error"] is None
    assert rows[1]["expr"] is None and rows[1]["error"]
    assert rows[2]["expr"] is None and rows[2]["error"]


def test_deep_nesting_and_long_text_are_errors_not_crashes():
    # "a (" * 6666: 6,666 unclosed brackets (balanced in one pass since rules-11; they took 5 s before)
    for text in ["(" * 5000 + "a" + ")" * 5000, "not " * 3000 + "a", "either " * 2000 + "a", "a " * 20000, "a (" * 6666]:
        ast, err = try_translate_rules(text)
        assert (ast is None) != (err is None)
        if ast is not None:
            parse(canonical(ast))


def _check_total(text):
    ast, err = try_translate_rules(text)
    assert (ast is None) != (err is None)
    if ast is not None:
        assert parse(canonical(ast)) == ast
    else:
        assert isinstance(err, str) and err and not err.startswith("rules translator failed"), err


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_never_crashes_on_arbitrary_text(text):
    _check_total(text)


_VOCAB = [
    "and", "or", "not", "but", "but not", "either", "neither", "nor", "both", "excluding", "except",
    "without", "other than", "rather than", "as well as", ",", "(", ")", '"', "find", "documents about",
    "papers on", "I want", "cats", "dogs", "the", "no", "anything but", "and/or", ";", "?", ".", "\\",
    '"x y"', "AND", "OR", "NOT", "that do not mention", "rock and roll",
]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_VOCAB), max_size=25))
def test_never_crashes_on_marker_soup(words):
    _check_total(" ".join(words))


# Term phrases for the render_natural round trip: varied domains, multi-word.
_ROUND_TRIP_PHRASES = [
    "coffee brewing", "interest rates", "type 2 diabetes", "Rust compiler internals", "the Cold War",
    "wine pairing with cheese", "E. coli outbreaks", "Shakespeare's comedies", "climate change effects on coral reefs",
    "K-pop fandoms", "3D printing", "deep-sea fish",
]


def _truth_table(node, phrases):
    from itlr_gpu.synthetic import answer_set

    docs = {str(i): frozenset(p for k, p in enumerate(phrases) if (i >> k) & 1) for i in range(2 ** len(phrases))}
    return answer_set(node, docs, {p: p for p in phrases})


def test_render_natural_round_trip_is_semantically_equivalent():
    """Every natural rendering of the 32 three-term templates translates back to an
    equivalent query (same answer set on every assignment of the three terms)."""
    import random

    from itlr_gpu.synthetic import TEMPLATES_3, build_expr, render_natural

    cases = []
    for seed in range(6):
        rng = random.Random(seed)
        for template in TEMPLATES_3:
            phrases = rng.sample(_ROUND_TRIP_PHRASES, 3)
            cases.append((template, phrases, render_natural(template, phrases, random.Random(rng.random()))))
    rows = translate([text for _, _, text in cases])
    misses = []
    for (template, phrases, text), row in zip(cases, rows):
        want = _truth_table(build_expr(template, phrases), phrases)
        try:
            got = _truth_table(parse(row.expr), phrases) if row.expr else None
        except KeyError:  # a term that is not one of the phrases
            got = None
        if got != want:
            misses.append((template.name, text, row.expr or row.error))
    rate = 1 - len(misses) / len(cases)
    assert rate >= 0.95, f"equivalence rate {rate:.3f}; first misses: {misses[:10]}"


def test_a_run_of_spaces_after_a_closing_clause_stays_linear():
    """rules-17's closing-clause pattern backtracked cubically on "X, i" + 1,400 spaces + "(" (2.5 s)."""
    import time

    start = time.perf_counter()
    assert try_translate_rules("cats, i" + " " * 1400 + "(")[0] is not None
    assert time.perf_counter() - start < 1.0


def test_deterministic():
    texts = [p["text"] for p in load_pairs()[:50]]
    assert [r.expr for r in translate(texts)] == [r.expr for r in translate(texts)]


@pytest.mark.parametrize("ext", [".arrow", ".parquet"])
def test_run_translate_cli_writes_the_table(tmp_path, ext):
    import argparse

    from itlr_gpu.io import read_table
    from itlr_gpu.translate import add_translate_arguments, run_translate_cli

    src = tmp_path / "q.jsonl"
    src.write_text(
        json.dumps({"query_id": "a", "text": "papers on tides but not the Moon"}) + "\n"
        + json.dumps({"query_id": "b", "text": ""}) + "\n",
        encoding="utf-8",
    )
    ap = argparse.ArgumentParser()
    add_translate_arguments(ap)
    dst = tmp_path / f"out{ext}"
    args = ap.parse_args([str(src), "-o", str(dst)])
    assert run_translate_cli(args) == 0
    rows = read_table(dst).to_pylist()
    assert [r["query_id"] for r in rows] == ["a", "b"]
    assert rows[0]["expr"] == '("tides" AND NOT "the Moon")' and rows[0]["translator"] == "rules"
    assert rows[1]["expr"] is None and rows[1]["error"] == "empty text"


# --------------------------------------------------------------------------- preambles and prose

_TOPICS = ["school uniforms", "wind farms", "the minimum wage", "organic farming yields", "cycle lanes",
           "nuclear power", "sugar taxes", "compulsory voting"]
_CLAIMS = ["Some argue that {a} is overrated.", "Critics say that {a} does not work.",
           "My essay claims that {a} harms {b}.", "There is a debate on whether {a} should be banned.",
           "A friend insists that {a} and {b} are linked.", "People keep telling me that {a} is not enough."]
_REQUESTS = ["Find research on {a} but not {b}.", "I need evidence on {a} and {b}.",
             "Show me studies on {a} or {b}.", "Look for papers about {a}, excluding {b}.",
             "Please find articles on {a}."]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_CLAIMS), min_size=1, max_size=3), st.sampled_from(_REQUESTS),
       st.lists(st.sampled_from(_TOPICS), min_size=4, max_size=4, unique=True))
def test_a_preamble_before_a_request_is_context(preamble, request, topics):
    # Oracle: the request sentence translated on its own.
    a, b, c, d = topics
    text = " ".join(s.format(a=c, b=d) for s in preamble) + " " + request.format(a=a, b=b)
    assert canonical(translate_rules(text)) == canonical(translate_rules(request.format(a=a, b=b)))


@pytest.mark.parametrize("text", [
    # two arguments joined by "or": where the first ends is a matter of meaning
    "Fines must be low enough not to be unpayable for those who do not earn much. They fail to deter the rich, "
    "who can afford to break the law, or The state should promote the efficient distribution of income. "
    "All goods suffer from diminishing marginal utility, and this includes money.",
    "Citizens deserve the right to know what is done in their name. It is up to the public to decide whether "
    "those actions are right or wrong, excluding Journalists should not act as a filter in that process.",
    # the reason given is the prose, not where the parser stopped ("could not read the text from 'both'")
    "Most animals can suffer more than some people. We could go for one of three options. Either we could "
    "experiment on animals, but not such people. We could allow both, but do we want to do painful medical "
    "research on the disabled? Or, we could do neither.",
])
def test_prose_with_connectives_inside_is_refused(text):
    ast, err = try_translate_rules(text)
    assert ast is None and "sentences of prose" in err


def test_prose_without_connectives_is_one_term_and_quotes_still_split():
    text = "Zoos cannot justify keeping elephants in captivity. Elephants walk many miles a day in the wild."
    assert canonical(translate_rules(text)) == '"' + text.rstrip(".") + '"'
    quoted = f'"{text}" OR "Sanctuaries are the alternative. They give elephants room."'
    assert canonical(translate_rules(quoted)).startswith('("Zoos cannot')


@pytest.mark.parametrize("text, expr", [
    # initials and abbreviations end no sentence: one request, translated as usual
    ("J. Smith or Dr. Jones but not St. Louis", '(("J. Smith" OR "Dr. Jones") AND NOT "St. Louis")'),
    ("U.S. Army logistics and E. coli outbreaks", '("U.S. Army logistics" AND "E. coli outbreaks")'),
])
def test_abbreviations_end_no_sentence(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # questions that ask for documents lose their opening
    ("What has been written about urban beekeeping?", '"urban beekeeping"'),
    ("what do researchers know about sleep and memory?", '("sleep" AND "memory")'),
    ("Are there any studies on bilingual children, not counting twins?",
     '("bilingual children" AND NOT "twins")'),
    ("Has anybody looked into coral bleaching or ocean acidification?",
     '("coral bleaching" OR "ocean acidification")'),
    ("Where could I find papers about glacier retreat without Greenland?",
     '("glacier retreat" AND NOT "Greenland")'),
    ("help us find articles on microfinance", '"microfinance"'),
    ("plz show me electric buses", '"electric buses"'),
    # more exclusion and conjunction words
    ("street food vendors but please exclude night markets", '("street food vendors" AND NOT "night markets")'),
    ("wildlife corridors that exclude highways", '("wildlife corridors" AND NOT "highways")'),
    ("tidal energy alongside wave energy", '("tidal energy" AND "wave energy")'),
    ("museum funding, whether public grants or private donors",
     '("museum funding" AND ("public grants" OR "private donors"))'),
    # names and abbreviations
    ("Johnson & Johnson lawsuits or Bayer lawsuits", '("Johnson & Johnson lawsuits" OR "Bayer lawsuits")'),
    ("E.U. or U.K. fishing quotas", '(("E.U." OR "U.K.") AND "fishing quotas")'),   # shared out (rules-30)
    ("trade policy in the U.S.", '"trade policy in the U.S."'),
])
def test_rules5_phrasings(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # the same words where they are a topic's own: no operator
    ("research on whether fasting improves focus", '"whether fasting improves focus"'),
    ("whether or not to fast", '"whether or not to fast"'),
    ("athletes not counting", '"athletes not counting"'),
    ("mice lacking the leptin gene", '"mice lacking the leptin gene"'),
    ("how to save for retirement", '"save for retirement"'),   # "how to" is a question's scaffolding
    ("avoiding burnout at work", '"avoiding burnout at work"'),
    ("teaching alongside", '"teaching alongside"'),
    ("Meat & Multiple Myeloma", '("Meat" AND "Multiple Myeloma")'),   # a title: the capitals tell nothing
])
def test_rules5_markers_only_in_their_place(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text", ["cats nor dogs", "tea nor coffee please"])
def test_an_unpaired_nor_says_so(text):
    ast, err = try_translate_rules(text)
    assert ast is None and "no 'neither' to pair with" in err


@pytest.mark.parametrize("text, expr", [
    # "but not both": exactly one of two alternatives (the end of the text only)
    ("either cats or dogs but not both", '(("cats" OR "dogs") AND NOT ("cats" AND "dogs"))'),
    ("papers on tea or coffee, but not both", '(("tea" OR "coffee") AND NOT ("tea" AND "coffee"))'),
    ("cats but not both dogs and birds", '("cats" AND NOT ("dogs" AND "birds"))'),     # an exclusion, mid-text
    # an exclusion that opens the text ends at its comma: what follows is searched for
    ("Rather than surgery, drug treatment of back pain",
     '(NOT "surgery" AND "drug treatment of back pain")'),
    ("instead of coffee, tea studies", '(NOT "coffee" AND "tea studies")'),
    ("Apart from cats and dogs, birds or fish", '(NOT "cats" AND NOT "dogs" AND ("birds" OR "fish"))'),
    ("without exercise, weight loss but not surgery", '(NOT "exercise" AND "weight loss" AND NOT "surgery")'),
    # ... unless the rest is one serial list: the exclusion's own
    ("excluding cats, dogs and birds", '(NOT "cats" AND NOT "dogs" AND NOT "birds")'),
    ("except cats, dogs, birds", '(NOT "cats" AND NOT "dogs" AND NOT "birds")'),
])
def test_rules5_not_both_and_fronted_exclusions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a hyphen or "minus" inside a name or a number is no exclusion (SciFact's claims)
    ("the minus strand of viral DNA", '"the minus strand of viral DNA"'),
    ("temperatures of -20 degrees", '"temperatures of -20 degrees"'),
    ("temperatures minus 20 degrees", '"temperatures minus 20 degrees"'),
    ("Differentiated E2f-1, -2, -3 TKO cells do not exhibit apoptosis.",
     '"Differentiated E2f-1, 2, 3 TKO cells do not exhibit apoptosis"'),
    ("Histone 2A (H2A)-histone 2B dimers", '"Histone 2A (H2A) histone 2B dimers"'),
    # ... while the search-engine minus and "minus" between two topics still are
    ("cats -dogs", '("cats" AND NOT "dogs")'),
    ("all sports minus football", '("all sports" AND NOT "football")'),
    # "with or without X": X does not matter
    ("cats with or without dogs", '"cats with or without dogs"'),
])
def test_rules6_hyphens_minus_and_with_or_without(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a comma between digits belongs to the number
    ("10,000 steps a day and mortality", '("10,000 steps a day" AND "mortality")'),
    ("1,000 genomes project", '"1,000 genomes project"'),
    ("cats, dogs, and birds", '("cats" AND "dogs" AND "birds")'),
    # "w/o" is "without"
    ("vegan desserts w/o coconut or cashews", '("vegan desserts" AND NOT "coconut" AND NOT "cashews")'),
    # names and set phrases that hold an "and" are one term; other pairs still split
    ("employment law in Trinidad and Tobago or Barbados",
     '("employment law" AND ("Trinidad and Tobago" OR "Barbados"))'),
    ("baked mac and cheese recipes", '"baked mac and cheese recipes"'),
    ("Bonnie and Clyde's crime spree", '"Bonnie and Clyde\'s crime spree"'),
    ("search and seizure law", '"search and seizure law"'),
    ("France and Germany trade relations", '"France and Germany trade relations"'),
    # an upper-case AND is the user's operator, unless the whole text is in capitals
    ("bread AND butter NOT margarine", '("bread" AND "butter" AND NOT "margarine")'),
    ("BREAD AND BUTTER PUDDING", '"BREAD AND BUTTER PUDDING"'),
    # "What do <subject> know about X?" asks for X; a longer subject may be the topic and stays
    ("What do historians know about the Bronze Age collapse?", '"the Bronze Age collapse"'),
    ("What does the law say about squatting?", '"squatting"'),
    ("What do aspirin trials say about bleeding?", '"What do aspirin trials say about bleeding"'),
    ("return on investment in education", '"return on investment in education"'),
    # a yes/no question asks about its claim, typed without its "?" too (rules-61: eight outside writers against
    # the labelled set's one); "Do you have ..." asks for documents
    ("Does smoking cause bladder cancer?", '"smoking cause bladder cancer"'),
    ("Do you have papers on cats?", '"cats"'),
    ("Does homeschooling harm or help social skills", '"homeschooling harm or help social skills"'),
    ("Do's and don'ts of hiking?", '"Do\'s and don\'ts of hiking"'),
    ("cats, leaving aside lions", '("cats" AND NOT "lions")'),
    # "N or more": a bound, not an alternative; without a number before it, "or" is OR
    ("GDP growth of 2.5% or more in emerging markets", '"GDP growth of 2.5% or more in emerging markets"'),
    ("coral bleaching at 30 °C or above", '"coral bleaching at 30 °C or above"'),
    ("children aged five or older", '"children aged five or older"'),
    ("tax cuts or higher spending", '("tax cuts" OR "higher spending")'),
    ("5 cats or more dogs", '("5 cats" OR "more dogs")'),
    ("divorce law in England and Wales, but skip child custody",
     '("divorce law in England and Wales" AND NOT "child custody")'),
    ("Got any good reads on jazz?", '"jazz"'),
    ("reads on chromosome 7", '"reads on chromosome 7"'),
    # a subject that may be the topic keeps its question; "have to" is no request; a list of years stays a list
    ("What does Trump say about tariffs?", '"What does Trump say about tariffs"'),
    ("Do you have to pay taxes on gifts?", '"Do you have to pay taxes on gifts"'),
    ("papers from 2019,2020 and 2021", '("2019" AND "2020" AND "2021")'),
    ("phosphatidylinositol-3,4-biphosphate and Src", '("phosphatidylinositol-3,4-biphosphate" AND "Src")'),
])
def test_rules7_numbers_names_capitals_and_questions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an exclusion that opens a clause after a comma, "but" or "and" ...
    ("cryptocurrency regulation, leave out Bitcoin", '("cryptocurrency regulation" AND NOT "Bitcoin")'),
    ("Tour de France history, skip anything about Lance Armstrong",
     '("Tour de France history" AND NOT "Lance Armstrong")'),
    ("lentil soup or chickpea curry, but I don't want anything spicy",
     '(("lentil soup" OR "chickpea curry") AND NOT "spicy")'),
    ("train travel, I don't want anything about Eurostar", '("train travel" AND NOT "Eurostar")'),
    ("cats, but I'm not interested in lions", '("cats" AND NOT "lions")'),
    # ... and nowhere else: the words are a topic's
    ("how to skip breakfast safely", '"skip breakfast safely"'),
    ("I don't want to lose weight too fast", '"I don\'t want to lose weight too fast"'),
    ("students not interested in math", '"students not interested in math"'),
    # a short sentence that only excludes belongs to the request or topic before it
    ("I need sources about the Harlem Renaissance poets. No Langston Hughes please.",
     '("the Harlem Renaissance poets" AND NOT "Langston Hughes")'),
    ("Find studies on antibiotic resistance in hospitals. I'm not interested in MRSA.",
     '("antibiotic resistance in hospitals" AND NOT "MRSA")'),
    ("Solar panel efficiency. Excluding perovskites.", '("Solar panel efficiency" AND NOT "perovskites")'),
    ("Find papers on solar panels. No idea if this exists.", '"solar panels. No idea if this exists"'),
    ("Climate change is real. No one denies it.", '"Climate change is real. No one denies it"'),
    # "the link between X and Y" asks for both
    ("What's the link between coffee consumption and liver disease?", '("coffee consumption" AND "liver disease")'),
    ("Is there any association between red meat and colon cancer?", '("red meat" AND "colon cancer")'),
    # "combined with" between operands is AND; "when combined with" and ", combined with" are words
    ("gut microbiome combined with diet interventions", '("gut microbiome" AND "diet interventions")'),
    ("risks of opioids when combined with alcohol", '"risks of opioids when combined with alcohol"'),
    ("whichever of ACL or meniscus injuries", '("ACL" OR "meniscus injuries")'),
    # an infinitive is no auxiliary verb: the "or" stays an operator
    ("things to do in Lisbon or Porto", '("things to do" AND ("Lisbon" OR "Porto"))'),
    ("carbon capture and storage costs", '"carbon capture and storage costs"'),
    ("Standard and Poor's downgrades", '"Standard and Poor\'s downgrades"'),
    # what a joined sentence or an opener must not take (review of rules-8)
    ("Does coffee cause cancer? Not decaf.", '("coffee cause cancer" AND NOT "decaf")'),
    ("Rome, please. No Vatican.", '("Rome" AND NOT "Vatican")'),
    ("Find documents about vaccine safety. No evidence of harm was found in children.",
     '"vaccine safety. No evidence of harm was found in children"'),
    ("Harlem poets. No one denies their importance.", '"Harlem poets. No one denies their importance"'),
    ("Rome. Nothing else matters.", '"Rome. Nothing else matters"'),
    ("Cats. No!", '"Cats. No"'),
    ("waste removal, skip hire prices", '("waste removal" AND "skip hire prices")'),
    ("vitamins are useless, and we don't need supplements", '("vitamins are useless" AND "we don\'t need supplements")'),
    ("cats, but I\u2019m not interested in lions", '("cats" AND NOT "lions")'),
    ("What\u2019s the link between tea and sleep?", '("tea" AND "sleep")'),
    ("pick whichever of them is cheaper", '"pick whichever of them is cheaper"'),
    ("drugs best combined with food", '"drugs best combined with food"'),
])
def test_rules8_clause_exclusions_and_questions_of_a_link(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an exclusion put first, before a question or a sentence, a colon or a spaced dash: read at the end
    ("Excluding children, what are the effects of melatonin supplements?",
     '("the effects of melatonin supplements" AND NOT "children")'),
    ("Other than statins, what lowers LDL cholesterol?", '("what lowers LDL cholesterol" AND NOT "statins")'),
    ("anything except sci-fi: board games for two players", '("board games for two players" AND NOT "sci-fi")'),
    ("Everything but jazz - live concerts in Berlin", '("live concerts in Berlin" AND NOT "jazz")'),
    ("I don't care about the stock market, just want news on cryptocurrency regulation",
     '("cryptocurrency regulation" AND NOT "the stock market")'),
    # ... not a pronoun, a clause, a serial list or a quoted span
    ("Apart from that, what about solar?", '"solar"'),
    ("Besides being cheap, is Linux good?", '"Besides being cheap, is Linux good"'),
    ("Excluding A, B and C", '(NOT "A" AND NOT "B" AND NOT "C")'),
    ('Excluding "salt, pepper", what spices?', '(NOT "salt, pepper" AND "what spices")'),
    # a spaced dash before an exclusion is a comma; "ignore" opens an exclusion clause
    ("urban gardening - ignore anything about hydroponics", '("urban gardening" AND NOT "hydroponics")'),
    ("romance novels - no vampires, no werewolves", '("romance novels" AND NOT "vampires" AND NOT "werewolves")'),
    ("Find me reviews of robot vacuums; ignore Roomba.", '("robot vacuums" AND NOT "Roomba")'),
    ("how to ignore a narcissist", '"ignore a narcissist"'),
    ("It can simply ignore. Nobody cares.", '"It can simply ignore. Nobody cares"'),
    ("World War II - the Pacific theatre", '("World War II" AND "the Pacific theatre")'),   # rules-77: a dash ends a term
    # a topic, then a colon or dash, then a group: the topic AND the group (a label is no topic)
    ("electric vehicles: Tesla or BYD", '("electric vehicles" AND ("Tesla" OR "BYD"))'),
    ("Gaming laptops - ASUS or Lenovo", '("Gaming laptops" AND ("ASUS" OR "Lenovo"))'),
    ("Topic: cats or dogs", '("cats" OR "dogs")'),
    ("COVID-19: a review", '"COVID-19 a review"'),
    # a spaced slash between words is an "or"
    ("artificial sweeteners / aspartame safety", '("artificial sweeteners" OR "aspartame safety")'),
    ("cups 1 / 2", '"cups 1 2"'),
    # filler: "what's the", "studies looking at", "the relationship between X and Y" (not in a claim)
    ("whats the best dog food for puppies without grain", '("the best dog food for puppies" AND NOT "grain")'),
    ("What's driving the obesity epidemic?", '"What\'s driving the obesity epidemic"'),
    ("studies looking at the mediterranean diet along with cognitive decline",
     '("the mediterranean diet" AND "cognitive decline")'),
    ("relationship between income inequality and crime rates", '("income inequality" AND "crime rates")'),
    ("The relationship between sleep and memory is complex.", '"The relationship between sleep and memory is complex"'),
    # after "the", a placeholder noun of an excluded term names nothing
    ("anything on coral bleaching but skip the Great Barrier Reef stuff",
     '("coral bleaching" AND NOT "the Great Barrier Reef")'),
    ("standing desks w/o the motorized ones", '("standing desks" AND NOT "the motorized")'),
    ("baby stuff", '"baby stuff"'),
    ("The Right Stuff", '"The Right Stuff"'),
    # what an outside review of rules-9 found, each now left alone or read right
    ("Radiohead - No Surprises lyrics", '"Radiohead No Surprises lyrics"'),
    ("novels - No vampires", '("novels" AND NOT "vampires")'),
    ("TCP / IP networking", '"TCP IP networking"'),
    ("yes / no questions", '"yes no questions"'),
    ("mother / daughter relationships", '"mother daughter relationships"'),
    ("ASUS / Lenovo", '("ASUS" OR "Lenovo")'),
    ("links between pages", '"links between pages"'),
    ("cats, not certain breeds", '("cats" AND NOT "certain breeds")'),
    ("not certain types of cancer, but all cancers", '(NOT "certain types of cancer" AND "all cancers")'),
    ("besides rice, potatoes and pasta, what staples are there?",
     '"besides rice, potatoes and pasta, what staples are there"'),
    ("just like heaven lyrics", '"just like heaven lyrics"'),
    ("email filtering and ignore lists", '("email filtering" AND "ignore lists")'),
    ("Note: cats or dogs", '("cats" OR "dogs")'),
    ("Excluding \u0130zmir, what are the best Turkish beaches?", '("the best Turkish beaches" AND NOT "\u0130zmir")'),
    # ... and what a second review found: a closing exclusion sentence, a list after a colon, bare hedges
    ("Excluding children, what are the effects of melatonin? Not in mice.",
     '("the effects of melatonin" AND NOT "children" AND NOT "mice")'),
    ("Gaming laptops - ASUS or Lenovo. Not Acer.", '("Gaming laptops" AND ("ASUS" OR "Lenovo") AND NOT "Acer")'),
    ("Excluding children: effects of melatonin, sleep and mood",
     '("effects of melatonin" AND "sleep" AND "mood" AND NOT "children")'),
    ("not sure, but solar panels", '"solar panels"'),
    ("dunno, solar or wind", '("solar" OR "wind")'),
    # a third writer's requests (shopping, IT, finance): a glued bracket stays glued, a state is no exclusion,
    # ", skip the X" excludes, a yes/no question loses its auxiliary as "Do ...?" does
    ("Roth IRA or 401(k) contribution limits 2024", '("Roth IRA" OR "401(k) contribution limits 2024")'),
    ("protein (RP) expression", '"protein (RP) expression"'),
    ("excel vlookup not working", '"excel vlookup not working"'),
    ("wifi not connecting after update", '"wifi not connecting after update"'),
    ("running not swimming", '("running" AND NOT "swimming")'),
    ("Python not Java", '("Python" AND NOT "Java")'),
    # rules-88 (an outside audit of misreadings): a problem's state ("not received", "not found") straight after a
    # word and "not to" + a verb are the request's topic, no exclusion; "not paid work", "not to Paris" exclude
    ("refund not received after 30 days", '"refund not received after 30 days"'),
    ("module not found error python", '"module not found error python"'),
    ("package not received but marked delivered", '("package not received" AND "marked delivered")'),
    ("foods not to eat when pregnant", '"foods not to eat when pregnant"'),
    ("places not to miss in Rome", '"places not to miss in Rome"'),
    ("volunteering not paid work", '("volunteering" AND NOT "paid work")'),
    ("flights to Europe, not to Paris", '("flights to Europe" AND NOT "to Paris")'),
    ("cars not made in China", '("cars" AND NOT "made in China")'),
    # rules-89: "with and without X" compares (no exclusion); a request that opens with "no A or B" excludes both
    # ("not coffee or tea" keeps the grammar's reading, as the labelled set has it)
    ("recipes with and without sugar", '"recipes with and without sugar"'),
    ("comparing schools with and without uniforms", '"comparing schools with and without uniforms"'),
    ("patients with vs without diabetes", '"patients with vs without diabetes"'),
    ("no obesity or diabetes", '(NOT "obesity" AND NOT "diabetes")'),
    ("no garlic or onions, pasta recipes", '(NOT "garlic" AND NOT "onions" AND "pasta recipes")'),
    ("not coffee or tea", '(NOT "coffee" OR "tea")'),
    ("No Country for Old Men or There Will Be Blood", '("No Country for Old Men" OR "There Will Be Blood")'),
    ("Schengen visa requirements, skip the transit visa", '("Schengen visa requirements" AND NOT "transit visa")'),
    ("Is Bitcoin a hedge against inflation?", '"Bitcoin a hedge against inflation"'),
    ("Is it true that cats purr?", '"Is it true that cats purr"'),
    ("Should I pay off my mortgage early?", '"pay off my mortgage early"'),   # (the task; rules-51: outside writers)
    # a user probe: a wh-word ends a fronted exclusion, a hedge that names topics is kept, slashes in a row,
    # a slash before "not", a label before any tail, "apart from the fact that" excludes nothing
    ("Apart from vitamin D what improves bone health", '("what improves bone health" AND NOT "vitamin D")'),
    ("Not sure whether coffee or tea, but not milk", '(("Not sure whether coffee" OR "tea") AND NOT "milk")'),
    ("vitamin D / calcium / magnesium", '("vitamin D" OR "calcium" OR "magnesium")'),
    ("coffee or tea / not milk", '(("coffee" OR "tea") AND NOT "milk")'),
    ("Question: does aspirin prevent cancer?", '"aspirin prevent cancer"'),
    ("note: not about mice", 'NOT "mice"'),
    ("apart from the fact that it is cheap, why is aspirin used?", '"aspirin used"'),
    # a hedge is no negation
    ("Not sure if relevant, but also wind power", '"wind power"'),
    ("No idea if this exists, but studies on geothermal or tidal power",   # rules-37: adjectives share the noun
     '(("geothermal" OR "tidal") AND "power")'),
    ("Not sure", '"Not sure"'),
    ("cats but not certainty", '("cats" AND NOT "certainty")'),
])
def test_rules9_fronted_exclusions_dashes_colons_and_slashes(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an aside in brackets: an exclusion, an alternative, or the writer's own words (dropped)
    ("vegan lasagne (not with tofu, my partner hates it)", '("vegan lasagne" AND NOT "tofu")'),
    ("open-source CAD software (nothing about Blender)", '("open-source CAD software" AND NOT "Blender")'),
    ("world cup finals (any decade except the 1990s)", '("world cup finals" AND NOT "the 1990s")'),
    ("Rust web frameworks (or Go, if there is more)", '("Rust web frameworks" OR "Go")'),
    ("sourdough starters (asking for my mum)", '"sourdough starters"'),
    ("hiking boots (waterproof preferred) and gaiters", '("hiking boots" AND "gaiters")'),
    ("wind or solar (either is fine) but not nuclear", '(("wind" OR "solar") AND NOT "nuclear")'),
    ("mice (but not rats)", '("mice" AND NOT "rats")'),
    # brackets that are no aside stay as before
    ("amyotrophic lateral sclerosis (ALS) and diet", '("amyotrophic lateral sclerosis (ALS)" AND "diet")'),
    ("cats and (dogs or birds)", '("cats" AND ("dogs" OR "birds"))'),
    ("401(k) rollovers", '"401(k) rollovers"'),
    # how-to questions and a relation asked about
    ("How do I fix a leaking tap?", '"fix a leaking tap"'),
    ("when should we plant garlic", '"plant garlic"'),
    ("how to not procrastinate", '"how to not procrastinate"'),
    ("How do I not overthink?", '"How do I not overthink"'),
    ("What links sleep and memory?", '("sleep" AND "memory")'),
    ("How do jazz and hip hop influence each other?", '("jazz" AND "hip hop")'),
    ("How are inflation and unemployment related?", '("inflation" AND "unemployment")'),
    # advice words are scaffolding like "papers on"
    ("tips on growing tomatoes indoors", '"growing tomatoes indoors"'),
    ("I need advice on renting a flat and recommendations for movers",
     '("renting a flat" AND "movers")'),
    # placeholders in an excluded term
    ("hiking trails, but not the coastal ones", '("hiking trails" AND NOT "the coastal")'),
    ("cover songs except acoustic ones", '("cover songs" AND NOT "acoustic")'),
    ("Beatles albums except the Abbey Road one", '("Beatles albums" AND NOT "the Abbey Road")'),
    ("distributed systems but nothing cloud related", '("distributed systems" AND NOT "cloud")'),
    ("stir fry recipes but not anything with peanuts", '("stir fry recipes" AND NOT "peanuts")'),
    # negated relative clauses, typed without the apostrophe too; "that use neither"
    ("headache remedies that dont involve pills", '("headache remedies" AND NOT "pills")'),
    ("cakes that use neither eggs nor butter", '("cakes" AND NOT "eggs" AND NOT "butter")'),
    # a spaced plus between words is an "and"; not in a name or a sum
    ("graph neural networks + drug discovery", '("graph neural networks" AND "drug discovery")'),
    ("transformers + time series", '"transformers + time series"'),
    ("CD4 + T cells", '"CD4 + T cells"'),
    # a capitalised connective inside a name
    ("Doctors Without Borders funding but not Ebola", '("Doctors Without Borders funding" AND NOT "Ebola")'),
    ("compare and contrast essays", '"compare and contrast essays"'),
])
def test_rules10_asides_how_to_questions_and_placeholders(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # formal requests and "need help with"
    ("I am seeking literature concerning tidal energy in Scotland.", '"tidal energy in Scotland"'),
    ("We would be grateful for sources on medieval guilds, not including Italy.",
     '("medieval guilds" AND NOT "Italy")'),
    ("need help with: \u2022 tiling a floor \u2022 grouting", '("tiling a floor" AND "grouting")'),
    # what the writer already knows is excluded
    ("I've already read the BERT paper, so nothing on BERT. Looking for encoder pretraining methods.",
     '("encoder pretraining methods" AND NOT "BERT")'),
    ("budget airlines in Asia (already know AirAsia, so skip it)", '("budget airlines in Asia" AND NOT "AirAsia")'),
    ("papers on gut microbiome and mood \u2014 I've already read the 2019 Valles-Colomer study, so leave that out.",
     '("gut microbiome" AND "mood" AND NOT "the 2019 Valles-Colomer study")'),
    ("the history of the Tudors apart from Henry VIII \u2014 I know him well.",
     '("the history of the Tudors" AND NOT "Henry VIII")'),
    # an exclusion after a question, typed in lower case
    ("Is Breaking Bad worth watching? no spoilers pls", '("Breaking Bad worth watching" AND NOT "spoilers")'),
    # texting: "abt", "no X" in a lower-case keyword string, "bc we've been"
    ("landlord repairs, nothing abt deposits", '("landlord repairs" AND NOT "deposits")'),
    ("point of no return", '"point of no return"'),
    ("city breaks in europe but not paris bc we've been", '("city breaks in europe" AND NOT "paris")'),
    ("anime series that are neither shonen nor isekai", '("anime series" AND NOT "shonen" AND NOT "isekai")'),
    ("Gothic cathedrals - avoid anything on Notre-Dame", '("Gothic cathedrals" AND NOT "Notre-Dame")'),
    ("graph databases (and vector search too)", '("graph databases" AND "vector search")'),
    # names: a capitalised "No" before a title; two capitalised words after "No" may be an excluded name
    ("No Country for Old Men or Fargo themes", '("No Country for Old Men" OR "Fargo themes")'),
    ("Harlem Renaissance poets. No Langston Hughes please.", '("Harlem Renaissance poets" AND NOT "Langston Hughes")'),
    ("Dolce and Gabbana perfume or Chanel", '("Dolce and Gabbana perfume" OR "Chanel")'),
    # a hedge's words are one list wherever it stands
    ("solar panels, not certain this is relevant", '"solar panels, not certain this is relevant"'),
    ("cats, not certain breeds", '("cats" AND NOT "certain breeds")'),
])
def test_rules10_requests_of_other_registers(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # what an outside review of rules-10 / -11 found, each now left alone or read right
    ("cheap hotels in Spain Not Barcelona", '("cheap hotels in Spain" AND NOT "Barcelona")'),
    ("Paris And London weather", '("Paris" AND "London weather")'),
    ("Fantasy series to binge. No Game of Thrones.", '("Fantasy series to binge" AND NOT "Game of Thrones")'),
    ("best no bake cheesecake", '"best no bake cheesecake"'),
    ("chanel no 5 perfume", '"chanel no 5 perfume"'),
    ("no win no fee solicitors", '"no win no fee solicitors"'),
    ("how to get pregnant", '"get pregnant"'),
    ("How to Get Away with Murder season 6", '"How to Get Away with Murder season 6"'),
    ("Whitney Houston - I Will Always Love You lyrics", '("Whitney Houston" AND "I Will Always Love You lyrics")'),
    ("python list comprehension - my code throws TypeError",   # rules-77: a dash ends a term
     '("python list comprehension" AND "my code throws TypeError")'),
    ("books like Dune - I've already read it, so skip it", '"books like Dune"'),
    ("employment law (US)", '"employment law (US)"'),
    ("Spike Jonze movie (Her) soundtrack", '"Spike Jonze movie (Her) soundtrack"'),
    ("The Hitchhiker's Guide (Mostly Harmless) sequel", '"The Hitchhiker\'s Guide (Mostly Harmless) sequel"'),
    ("Is Rust hard to learn? no experience with C++", '"Is Rust hard to learn no experience with C++"'),
    ("Is Pluto a planet? not anymore", '"Is Pluto a planet not anymore"'),
    ("Red Hot Chili Peppers albums except By the Way", '("Red Hot Chili Peppers albums" AND NOT "By the Way")'),
    ("Cole Porter musicals except Anything Goes", '("Cole Porter musicals" AND NOT "Anything Goes")'),
    ("hymns excluding Just as I Am", '("hymns" AND NOT "Just as I Am")'),
    ("UK trade statistics, excluding the years since we left the EU",
     '("UK trade statistics" AND NOT "the years since we left the EU")'),
    ("recommendations of the 9/11 commission", '"recommendations of the 9/11 commission"'),
    ("tips of the iceberg", '"tips of the iceberg"'),
    ("evidence for homeopathy (or lack thereof)", '"homeopathy"'),
    ("Ctrl + Alt + Delete not working", '"Ctrl + Alt + Delete not working"'),
    ("kinetic + potential energy formula", '"kinetic + potential energy formula"'),
    ("car maintenance tips, avoid costly repairs", '("car maintenance tips" AND "avoid costly repairs")'),
    ("vegan recipes. Avoid soy.", '("vegan recipes" AND NOT "soy")'),
    ("papers abt sleep but not abt naps", '("sleep" AND NOT "naps")'),
    ("How have jazz and hip hop influenced each other?", '("jazz" AND "hip hop")'),
    ("How do jazz and hip hop relate?", '("jazz" AND "hip hop")'),
    # the first "and" / "or" after "between" joins the two ends of the "between" (a user probe's request)
    ("trade talks between the U.S. and Japan but not semiconductors",
     '("trade talks between the U.S. and Japan" AND NOT "semiconductors")'),
    ("price gaps between cats and dogs or birds", '("price gaps between cats and dogs" OR "birds")'),
    # (a difference, like a link, names its two topics: "differences between cats and dogs" is cats AND dogs)
    ("differences between cats and dogs or birds", '(("cats" AND "dogs") OR "birds")'),
    ("Is there a link between gut microbiome and autism?", '("gut microbiome" AND "autism")'),
    # a remark in brackets ("hint:", "btw:") is the writer's
    ("what's the link between autism and vaccines? (hint: there isn't one)", '("autism" AND "vaccines")'),
    ("solar panels (btw: our roof faces north) and batteries", '("solar panels" AND "batteries")'),
])
def test_rules11_review_cases(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a request written as a letter: salutation, the writer's circumstances, sign-off, a preference after it
    ("Dear Sir or Madam, I work at a small museum. Could you point me to materials on conserving old maps? "
     "Kind regards, Anna", '"conserving old maps"'),
    ("Good evening. I run a bakery and we are looking for sourdough hydration charts. Thanks so much!",
     '"sourdough hydration charts"'),
    ("Hi all, I teach year 5 and would like some readings on the water cycle. Ideally short ones. Cheers",
     '"the water cycle"'),
    ("For a podcast we're making, I need sources on both the Tunguska event and ball lightning. Much appreciated.",
     '("the Tunguska event" AND "ball lightning")'),
    ("We are looking for violin etudes for beginners. We'd prefer to avoid Kreutzer, since our pupils find it hard.",
     '("violin etudes for beginners" AND NOT "Kreutzer")'),
    ("I'm writing a thesis on canal history. I'm not looking for anything on the Suez Canal, as it is covered.",
     '("canal history" AND NOT "the Suez Canal")'),
    ("I'm writing an essay on early modern trade. Find sources on the Hanseatic League.", '"the Hanseatic League"'),
    # not a letter: a request that opens with "Best", a thanks in a title, an exclusion before the ask
    ("I bake bread. Best practices for sourdough starters?", '"I bake bread. Best practices for sourdough starters"'),
    ("Dear all, could you share papers on microplastics in rivers? Best, Tom", '"microplastics in rivers"'),
    ("Hi Team, need info on glacier retreat", '"glacier retreat"'),
    ("Hello Kitty merchandise history", '"Hello Kitty merchandise history"'),
    ("Hey Jude chords", '"Hey Jude chords"'),
    ("Need for Speed review", '"Need for Speed review"'),
    ("Thanks for the Memories lyrics", '"Thanks for the Memories lyrics"'),
    ("Minimum wage rises in Germany. Thanks to them, poverty fell.",   # "thanks to" is no sign-off
     '("Minimum wage rises in Germany. Thanks to them" AND "poverty fell")'),
    ("I'm not interested in Marvel, I want indie comics", '("indie comics" AND NOT "Marvel")'),
    # an exclusion put first, then the writer's ask
    ("Not interested in romance - I want thrillers set in Norway", '("thrillers set in Norway" AND NOT "romance")'),
    ("rather than tablets, i need info on vaccines", '("vaccines" AND NOT "tablets")'),
    ("neither jazz nor blues, i want folk songs from Brittany",
     '(NOT "jazz" AND NOT "blues" AND "folk songs from Brittany")'),
    ("cats, I Want You Back lyrics", '("cats" AND "I Want You Back lyrics")'),
    # a search engine's operators on a quoted phrase, and its plus beside another operator
    ('jaguar speed -"jaguar cars"', '("jaguar speed" AND NOT "jaguar cars")'),
    ('volcanoes +"lava tubes"', '("volcanoes" AND "lava tubes")'),
    ("tide pools +anemones -starfish", '("tide pools" AND "anemones" AND NOT "starfish")'),
    ("HIV +ve patients", '"HIV +ve patients"'),
    # an aside between two spaced dashes is a bracket (a user probe's request)
    ("grain exports -- Canada or Australia -- but nothing about tariffs",
     '("grain exports" AND ("Canada" OR "Australia") AND NOT "tariffs")'),
    ("solar farms \u2014 Spain or Chile \u2014 and battery storage",
     '("solar farms" AND ("Spain" OR "Chile") AND "battery storage")'),
    ("Whitney Houston - I Will Always Love You - live",   # rules-77: a dash ends a term
     '("Whitney Houston" AND "I Will Always Love You" AND "live")'),
    # a quote closed inside a term, a placeholder in an excluded term
    ("history of the word 'robot'", '"history of the word \'robot\'"'),
    ("'Ode to Joy' arrangements", '"\'Ode to Joy\' arrangements"'),
    ("jazz standards, no bebop stuff", '("jazz standards" AND NOT "bebop")'),
    ("baby stuff", '"baby stuff"'),
])
def test_rules15_letters_and_search_syntax(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a dictated request: hesitation words, a "like" that fills a pause, an assistant's wake words
    ("um can you uh find stuff on glacier lakes", '"glacier lakes"'),
    ("so like uh river dolphins but not like the Amazon ones", '("river dolphins" AND NOT "the Amazon")'),
    ("hey siri look for papers on tidal power", '"tidal power"'),
    ("birds that look like dinosaurs", '"birds that look like dinosaurs"'),      # no hesitation: "like" kept
    ("uh birds that look like dinosaurs", '"birds that look like dinosaurs"'),   # a verb's "like" kept
    ("I would like papers on moss", '"moss"'),
    # letters and chat: a greeting with a name, a chat opener, a sign-off with a name after a comma
    ("Hi Marta, quick question: could you find anything you can on peat fires? Thanks, Leo", '"peat fires"'),
    ("Hey, quick one from the lab: need stuff on both zebrafish fins and regeneration",
     '("zebrafish fins" AND "regeneration")'),
    ("G'day, after anything on cane toads", '"cane toads"'),
    ("Sir, I want material regarding jute exports. Please do the needful.", '"jute exports"'),
    ("Hello Kitty, the brand's history", '("Hello Kitty" AND "the brand\'s history")'),   # no ask after it
    # a learner's asks, "books on", "anyone know"
    ("I search informations about wind erosion", '"wind erosion"'),
    ("books on either the Cathars or the Waldensians", '("the Cathars" OR "the Waldensians")'),
    ("anyone know good books on lichen identification?", '"lichen identification"'),
    # two topics compared; a compound that stays one
    ("Compare rooftop solar with community solar", '("rooftop solar" AND "community solar")'),
    ("what are the differences between lagers and ales", '("lagers" AND "ales")'),
    ("compare and contrast essay outlines", '"compare and contrast essay outlines"'),
    # "that aren't X" between operands; a state is no exclusion
    ("strategy games that aren't set in space", '("strategy games" AND NOT "set in space")'),
    ("vaccines that are not licensed in Japan", '"vaccines that are not licensed in Japan"'),
    ("games that aren't (Bethesda or Ubisoft)", '("games" AND NOT ("Bethesda" OR "Ubisoft"))'),   # a group: no crash
    # ", nothing on X" after an "or" list excludes from the whole list, as ", but nothing on X" does
    ("cats or dogs, nothing on fleas", '(("cats" OR "dogs") AND NOT "fleas")'),
    ("Sri Lanka or Nepal; anything but trekking", '(("Sri Lanka" OR "Nepal") AND NOT "trekking")'),
    # a term's leading "a" / "an" goes (no writer keeps it); a title's, a fixed phrase's and a quoted one stay
    ("bread without a stand mixer", '("bread" AND NOT "stand mixer")'),
    ("an octopus or a squid", '("octopus" OR "squid")'),
    ("A Tale of Two Cities themes", '"A Tale of Two Cities themes"'),
    ("a priori knowledge", '"a priori knowledge"'),
    ('"a stand mixer" or whisks', '("a stand mixer" OR "whisks")'),
    # an unspaced slash between words in a short request is an "or"; compounds, acronyms and units stay
    ("ski boots/bindings", '("ski boots" OR "bindings")'),
    ("Phones: Pixel/iPhone", '("Phones" AND ("Pixel" OR "iPhone"))'),
    ("TCP/IP tuning", '"TCP/IP tuning"'),
    ("client/server architecture", '"client/server architecture"'),
    ("his/her pronoun usage", '"his/her pronoun usage"'),
    ("speed in km/h conversion", '"speed in km/h conversion"'),
    # an exclamation mark inside a name
    ("history of the Yahoo! search engine", '"history of the Yahoo! search engine"'),
    # a systematic review's question by its parts
    ("PICO -- P: smokers over 50; I: varenicline; C: nicotine patches; O: quit rates",
     '("smokers over 50" AND "varenicline" AND "nicotine patches" AND "quit rates")'),
    ("Population: stroke survivors. Intervention: mirror therapy. Outcome: arm function.",
     '("stroke survivors" AND "mirror therapy" AND "arm function")'),
    # an ask for documents before a colon; a topic before one
    ("Need papers: peatland restoration or rewetting", '("peatland restoration" OR "rewetting")'),
    ("research methods: surveys or interviews", '("research methods" AND ("surveys" OR "interviews"))'),
    # the writer's reason after the request; a clause that is the topic's own
    ("medieval siege engines, since my students keep asking about them", '"medieval siege engines"'),
    ("bird flu in cattle, as the virus spreads", '("bird flu in cattle" AND "as the virus spreads")'),
])
def test_rules16_spoken_chat_compare_and_slashes(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a search engine's minus after a closing bracket
    ('tea AND (green OR "white tea") -matcha', '("tea" AND ("green" OR "white tea") AND NOT "matcha")'),
    # emoji are no words of a topic
    ("\U0001f431 cat allergies but no medication pls \U0001f64f", '("cat allergies" AND NOT "medication")'),
    # a title that opens with "Not"; an exclusion that does
    ("Not Fade Away recordings", '"Not Fade Away recordings"'),
    ("Not the Ten O'Clock News reruns", '"Not the Ten O\'Clock News reruns"'),
    ("Not Python but Rust", '(NOT "Python" AND "Rust")'),
    # a preposition before a group opener belongs to no term
    ("glacier retreat in either the Alps or the Andes", '("glacier retreat" AND ("the Alps" OR "the Andes"))'),
    ("rail fares, in either Spain or Italy", '("rail fares" AND ("Spain" OR "Italy"))'),
    # the writer's circumstances or a closing ask after the last comma; an ask or exclusion there stays
    ("poultry vaccination schedules, I have an exam on it monday", '"poultry vaccination schedules"'),
    ("I search informations about kiln design, can you help?", '"kiln design"'),
    ("mangrove carbon storage, please send me sources", '"mangrove carbon storage"'),
    ("tidal mills or windmills, whichever you have", '("tidal mills" OR "windmills")'),
    ("cats, I want dogs", '("cats" AND "dogs")'),
    ("lemurs (not ring-tailed, I've read about them)", '("lemurs" AND NOT "ring-tailed")'),
    # more asks: "anyone have", "I am searching", "looking into", "help find", "documentation", "published on"
    ("anyone have data on ferry delays?", '"ferry delays"'),
    ("I am searching documents about salt marsh birds and also mudflats", '("salt marsh birds" AND "mudflats")'),
    ("Looking into rope access techniques. Not interested in caving.", '("rope access techniques" AND NOT "caving")'),
    ("Please help find the report about bridge scour", '"bridge scour"'),
    ("Need documentation for either Ansible or Salt", '("Ansible" OR "Salt")'),
    ("Is there anything published on hedgehog road deaths?", '"hedgehog road deaths"'),
    ("@here need stuff on tram signal priority asap", '"tram signal priority"'),
    # letters: a thesis chapter before an exclusion, a purpose before "I require", "so please find me" after the
    # writer's circumstances, a closing sentence that only asks; "we require" in prose is no ask
    ("I'm writing a review chapter on soil fungi, but I'd like to exclude mycorrhizae.",
     '("soil fungi" AND NOT "mycorrhizae")'),
    ("For a policy memo, I require sources on congestion charging.", '"congestion charging"'),
    ("Good morning. I run a small museum. We have had damp for years, so please find me material on lime plaster "
     "repair. Many thanks", '"lime plaster repair"'),
    ("Dear librarian, I am researching tin mining in Cornwall. Could you point me to relevant sources? Best, Jo",
     '"tin mining in Cornwall"'),
    ("We require the same standards as others.", '"We require the same standards as others"'),
    ("yo anyone got tips on longboard slides?", '"longboard slides"'),
    ("Yo La Tengo albums", '"Yo La Tengo albums"'),
    ("For a briefing, I have to leave early on Friday", '"For a briefing, I have to leave early on Friday"'),
    # a fronted exclusion before a disjunction is no exclusion from it (it made ~300 of the quality benchmark's
    # 6,197 Reuters compositions wrong: "everything except X; or Y" is (NOT X) OR Y)
    ("everything except tin; or rapeseed without soybeans", '(NOT "tin" OR ("rapeseed" AND NOT "soybeans"))'),
    ("everything except zinc, or else silver", '(NOT "zinc" OR "silver")'),
    ("everything except zinc, what about silver?", '("silver" AND NOT "zinc")'),
    # a letter with a long preamble about the writer, the ask last
    ("We run a small dairy. Our cows have had more lameness this winter. We changed the bedding in October. "
     "The vet is not sure why. I was asked to read up before the next visit. Can you find material on "
     "digital dermatitis in dairy cattle?", '"digital dermatitis in dairy cattle"'),
])
def test_rules17_search_syntax_titles_closing_clauses_and_long_letters(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a search spec by its labels
    ("Topic: hedgehog hibernation. Must include: garden ponds. Must not include: road deaths.",
     '("hedgehog hibernation" AND "garden ponds" AND NOT "road deaths")'),
    ("Literature search.\nMust include: sourdough starters\nMust not include: commercial yeast",
     '("sourdough starters" AND NOT "commercial yeast")'),
    # numbered alternatives (an "and" or "all" makes them topics)
    ("Any of these would do: 1) kelp farming 2) oyster reefs 3) seagrass planting",
     '("kelp farming" OR "oyster reefs" OR "seagrass planting")'),
    ("I need all of: (1) lichen dyes (2) madder root", '("lichen dyes" AND "madder root")'),
    ("either 1) tram signalling or 2) metro automation. Not freight.",
     '(("tram signalling" OR "metro automation") AND NOT "freight")'),
    # examples of a topic: the topic with any of them
    ("harbour seals (e.g. pups, moulting)", '("harbour seals" AND ("pups" OR "moulting"))'),
    ("root vegetables such as parsnips and swedes", '("root vegetables" AND ("parsnips" OR "swedes"))'),
    ("glaze chemistry, for example celadon or tenmoku, but not raku",
     '("glaze chemistry" AND ("celadon" OR "tenmoku") AND NOT "raku")'),
    ("Mutations such as BRCA1 are associated with breast cancer",   # a claim keeps its words
     '"Mutations such as BRCA1 are associated with breast cancer"'),
    # "in both cases" before an exclusion
    ("either ferns or mosses, but in both cases no tropical species",
     '(("ferns" OR "mosses") AND NOT "tropical species")'),
    # a formal register
    ("Information is sought regarding peat bog restoration.", '"peat bog restoration"'),
    ("The Committee requests evidence on tidal lagoons, as distinct from barrages.",
     '("tidal lagoons" AND NOT "barrages")'),
    ("Counsel seeks all authorities on easements, save for those relating to rights of light.",
     '("easements" AND NOT "rights of light")'),
    # a question's stem and an exclusion sentence after it
    ("What helps with tinnitus? I don't need anything on hearing aids.", '("tinnitus" AND NOT "hearing aids")'),
    # what the writer already has
    ("We've already got the 2019 audit, so please send other material on cladding fires.",
     '("cladding fires" AND NOT "the 2019 audit")'),
    ("I've read everything on Shackleton already; what else is there on polar rations?",
     '("polar rations" AND NOT "Shackleton")'),
    ("I already know about hand rearing. Has anyone seen research on weaning lambs?",
     '("weaning lambs" AND NOT "hand rearing")'),
    # a teacher's assignment
    ("Class, for Monday please read two articles on tide pools and one on barnacles.",
     '("tide pools" AND "barnacles")'),
    ("Students: find papers on volcanic winters. Do not use anything on Pompeii.",
     '("volcanic winters" AND NOT "Pompeii")'),
    # a search string's "no"
    ("camping stoves no gas", '("camping stoves" AND NOT "gas")'),
    ("say no to plastic bags", '"say no to plastic bags"'),
    ("pressing plants no longer operating", '"pressing plants no longer operating"'),
    # asks
    ("Would you be able to find something on clock towers?", '"clock towers"'),
    ('pages containing the exact phrase "slow violence" and also ecocriticism', '("slow violence" AND "ecocriticism")'),
])
def test_rules21_specs_lists_examples_formal_asks_and_assignments(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # laid out in lines: a ticket's subject and body, markdown headers and bullets
    ("Subject: search help\n\nBody: Hello, could you find articles on glacier lakes or moraine dams? Thanks, Sam",
     '("glacier lakes" OR "moraine dams")'),
    ("Subject: kelp forests\nMust include: sea urchins\nMust not include: aquaculture",
     '("kelp forests" AND "sea urchins" AND NOT "aquaculture")'),
    ("## Topic\nstone walls in Yorkshire\n## Not wanted\ndry stone walling courses",
     '("stone walls in Yorkshire" AND NOT "dry stone walling courses")'),
    ("Any of these would help:\n- bog bodies\n- peat preservation\n- Iron Age ritual",
     '("bog bodies" OR "peat preservation" OR "Iron Age ritual")'),
    ("Topics (all must apply):\n- eel migration\n- hydropower\n- fish passes",
     '("eel migration" AND "hydropower" AND "fish passes")'),
    ("- sourdough hydration\n- rye starters", '("sourdough hydration" AND "rye starters")'),
    # the constraint first; an alternative in a sentence of its own
    ("Nothing on cruise ships. What I need is ferry emissions in the Baltic.",
     '("ferry emissions in the Baltic" AND NOT "cruise ships")'),
    ("Skip the Titanic, it's been done. What I need is lifeboat regulations.",
     '("lifeboat regulations" AND NOT "the Titanic")'),
    ("I need research on tidal mills. Or windmill restoration would also work.", '("tidal mills" OR "windmill restoration")'),
    ("Looking for work on moss gardens. Failing that, fern propagation is a reasonable substitute.",
     '("moss gardens" OR "fern propagation")'),
    # operators typed loosely
    ("oat milk | almond milk | soy milk", '("oat milk" OR "almond milk" OR "soy milk")'),
    ("kayak rolls + cold water - surf kayaking", '("kayak rolls" AND "cold water" AND NOT "surf kayaking")'),
    ("Whitney Houston - I Will Always Love You lyrics", '("Whitney Houston" AND "I Will Always Love You lyrics")'),
    # an acronym's expansion with an "and" inside
    ("Looking for research on COPD (chronic obstructive pulmonary disease) and air pollution",
     '("COPD (chronic obstructive pulmonary disease)" AND "air pollution")'),
    # who asks and why: framing heads, purposes, hedges, closing chatter
    ("Market research: oat milk pricing, excluding private labels.", '("oat milk pricing" AND NOT "private labels")'),
    ("For a Nuffield application I need evidence on rural bus services.", '"rural bus services"'),
    ("Maybe you have something on canal tunnels? Not sure it exists.", '"canal tunnels"'),
    ("Possibly a long shot, but anything on medieval beekeeping?", '"medieval beekeeping"'),
    ("I'm maybe interested in sea shanties and work songs, if that makes sense.", '("sea shanties" AND "work songs")'),
    ("Can you pull any reports on e-bike batteries so we can size the market? Exec review Friday.", '"e-bike batteries"'),
    ("Wind turbine blade recycling - any pointers?", '"Wind turbine blade recycling"'),
])
def test_rules22_layout_constraint_first_loose_operators_and_framing(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # "only" / "just" restrict; titles and claims keep them
    ("Only barn owls in Wales, not tawny owls.", '("barn owls in Wales" AND NOT "tawny owls")'),
    ("just cargo bikes, no e-scooters", '("cargo bikes" AND NOT "e-scooters")'),
    ("I only want sourdough starters or rye breads, not yeast", '(("sourdough starters" OR "rye breads") AND NOT "yeast")'),
    ("Only a minority of patients respond to the drug", '"Only a minority of patients respond to the drug"'),
    ("just war theory", '"just war theory"'),
    # conditions that exclude; "not just X but also Y"
    ("tidal energy, unless it's about barrages", '("tidal energy" AND NOT "barrages")'),
    ("roof gardens are fine as long as it isn't about green walls", '("roof gardens" AND NOT "green walls")'),
    ("I want papers on not just ankle sprains but also wrist sprains", '("ankle sprains" AND "wrist sprains")'),
    # "similar to X but without Y"; dates the search cannot use
    ("something like canal restoration but without the tourism angle",
     '("canal restoration" AND NOT "the tourism angle")'),
    ("Since 1990, what's been written about hedgerow loss?", '"hedgerow loss"'),
    ("Research from the 1980s on acid rain and lakes", '("acid rain" AND "lakes")'),
    ("Post-2015 work: peat restoration", '"peat restoration"'),
    ("Incidence of asthma has risen from 2009 to 2014", '"Incidence of asthma has risen from 2009 to 2014"'),
    # forms
    ("topic=moth traps; exclude=light pollution", '("moth traps" AND NOT "light pollution")'),
    ('{"must": ["slow worms", "gardens"], "must_not": ["grass snakes"]}',
     '("slow worms" AND "gardens" AND NOT "grass snakes")'),
    ('{"any_of": ["otters", "mink"], "topic": "river surveys"}', '("river surveys" AND ("otters" OR "mink"))'),
    ("Keywords: tide mills; millponds.", '("tide mills" AND "millponds")'),
    ("subject: organ pipes | subtopic: voicing", '("organ pipes" AND "voicing")'),
    # homework, an assistant addressed, speech
    ("for my homework I need to find out about how volcanoes form", '"how volcanoes form"'),
    ("My teacher says we need 2 sources about castles or moats", '("castles" OR "moats")'),
    ("Hey assistant, can you pull up research on frog calls and rainfall?", '("frog calls" AND "rainfall")'),
    ("uh yeah so im looking for stuff about ski wax and also snow friction", '("ski wax" AND "snow friction")'),
    ("find me papers about bread or pastry i mean either one is fine", '("bread" OR "pastry")'),
    # what the writer already has
    ("I've got Smith 2019 on dune grasses; need other work on dune stabilisation",
     '("dune stabilisation" AND NOT "Smith 2019 on dune grasses")'),
    ("bog snorkelling history, but I have Jones et al. 2001 already",
     '("bog snorkelling history" AND NOT "Jones et al. 2001")'),
])
def test_rules23_restrictions_conditions_dates_forms_homework(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # hashtags, loose plus signs, bracket asides, shorthand
    ("#tidepools #limpets -#tourism", '("tidepools" AND "limpets" AND NOT "tourism")'),
    ("#hedgehogs OR #dormice", '("hedgehogs" OR "dormice")'),
    ("peat bogs + carbon storage + drainage", '("peat bogs" AND "carbon storage" AND "drainage")'),
    ("kinetic + potential energy formula", '"kinetic + potential energy formula"'),
    ("Ctrl + Alt + Delete not working", '"Ctrl + Alt + Delete not working"'),
    ("canal locks [excl. restoration]", '("canal locks" AND NOT "restoration")'),
    ("lighthouse lenses {or lighthouse lamps}", '("lighthouse lenses" OR "lighthouse lamps")'),
    ("orchard pollination excl. honeybees", '("orchard pollination" AND NOT "honeybees")'),
    ("need refs on hedge laying & dormice b/c our farm has old hedges", '("hedge laying" AND "dormice")'),
    # preferences and narrowing
    ("flood defences, esp. in the Fens", '"flood defences"'),
    ("earthquake prediction, preferably not deep learning", '("earthquake prediction" AND NOT "deep learning")'),
    ("Seed banks, in particular cryopreservation", '("Seed banks" AND "cryopreservation")'),
    ("Looking at fungal networks. Specifically nitrogen transfer. Nothing on truffles.",
     '("fungal networks" AND "nitrogen transfer" AND NOT "truffles")'),
    # "(or both)", "including", "at least one of"
    ("otters or beavers (or both) and river restoration", '(("otters" OR "beavers") AND "river restoration")'),
    ("Wetland birds, including waders and ducks. Both have to be covered.", '("Wetland birds" AND "waders" AND "ducks")'),
    ("at least one of kestrels, buzzards, kites", '("kestrels" OR "buzzards" OR "kites")'),
    ("any of iron and steel, rubber or soybeans", '("iron and steel" OR "rubber" OR "soybeans")'),
    # fixed pairs, negated questions
    ("costs and benefits of rewilding; skip ethics", '("costs and benefits of rewilding" AND NOT "ethics")'),
    ("Isn't there any research on hiccups in infants?", '"hiccups in infants"'),
    ("Why hasn't anyone looked at moss on gravestones?", '"moss on gravestones"'),
])
def test_rules24_hashtags_shorthand_narrowing_and_alternatives(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # notes, one per sentence; question chains
    ("Mill ponds. Water voles. Winter surveys.", '("Mill ponds" AND "Water voles" AND "Winter surveys")'),
    ("Cider apples. Somerset only. No perry pears.", '("Cider apples" AND "Somerset" AND NOT "perry pears")'),
    ("Tram depots. Leeds or Sheffield. Not buses.", '("Tram depots" AND ("Leeds" OR "Sheffield") AND NOT "buses")'),
    ("Sewing machines. Singer. Or Jones. No treadles.",
     '("Sewing machines" AND ("Singer" OR "Jones") AND NOT "treadles")'),
    ("Rome. Nothing else matters.", '"Rome. Nothing else matters"'),   # two sentences: a statement
    ("Anything on tide clocks? What about tide tables? And tide mills?",
     '("tide clocks" AND "tide tables" AND "tide mills")'),
    # labels
    ("Scope: canal boats in winter. Exclusions: hire boats.", '("canal boats in winter" AND NOT "hire boats")'),
    ("Topic: sundials. Alternatives: moondials, nocturnals or astrolabes.",
     '("sundials" AND ("moondials" OR "nocturnals" OR "astrolabes"))'),
    # double negation; a librarian's instructions
    ("green walls -- not without some maintenance costs please", '("green walls" AND "maintenance costs")'),
    ("bonsai pots -- I don't want anything that isn't about glazes", '("bonsai pots" AND "glazes")'),
    ("Pull everything on tin mines; drop anything that mentions Cornwall.", '("tin mines" AND NOT "Cornwall")'),
    ("ice roads in Finland, nothing to do with trucks", '("ice roads in Finland" AND NOT "trucks")'),
    # emphasis; a learner's asks
    ("*only* otters, **not** beavers", '("otters" AND NOT "beavers")'),
    ("Please to find documents about clock repair", '"clock repair"'),
    ("Where I can find the researches on salt caves?", '"salt caves"'),
])
def test_rules25_notes_question_chains_labels_double_negation_and_instructions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # self-corrections
    ("Wren song, hold on, I mean robin song in winter.", '"robin song in winter"'),
    ("Apple scab in Kent, sorry, in Sussex", '"Apple scab in Sussex"'),
    ("cats, no dogs", '("cats" AND NOT "dogs")'),   # "no" alone is no correction
    # a reason for each exclusion
    ("Pond liners. No clay, because it cracks; no concrete either, since we're on chalk.",
     '("Pond liners" AND NOT "clay" AND NOT "concrete")'),
    ("UK trade statistics, excluding the years since we left the EU",
     '("UK trade statistics" AND NOT "the years since we left the EU")'),
    # "things like" examples; a qualifier's alternatives after a comma
    ("Garden birds, things like wrens, robins.", '("Garden birds" AND ("wrens" OR "robins"))'),
    ("the effect of frost on grapevines, in Riesling or Pinot Noir",
     '("the effect of frost on grapevines" AND ("Riesling" OR "Pinot Noir"))'),
    ("glaze chemistry, for example celadon or tenmoku, but not raku",
     '("glaze chemistry" AND ("celadon" OR "tenmoku") AND NOT "raku")'),
    # a formal register's repeated relations
    ("Material is sought in respect of harbour dues, regarding fishing boats, and concerning Orkney.",
     '("harbour dues" AND "fishing boats" AND "Orkney")'),
    # question tags, statements that ask
    ("There's research on otter holts, right?", '"otter holts"'),
    ("You'd have stuff on tide mills or watermills, yeah?", '("tide mills" OR "watermills")'),
    # conditions numbered in prose
    ("First, it has to be about dew ponds; second, it should cover chalk downland; and thirdly, not cattle troughs.",
     '("dew ponds" AND "chalk downland" AND NOT "cattle troughs")'),
    ("One: peat cutting. Two: place names. Three: skip anything on whisky.",
     '("peat cutting" AND "place names" AND NOT "whisky")'),
])
def test_rules26_corrections_reasons_qualifiers_tags_and_numbered_conditions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    ("roof tiles made from either slate or clay", '("roof tiles" AND ("slate" OR "clay"))'),
    ("leaf damage caused by either aphids or mites", '("leaf damage" AND ("aphids" OR "mites"))'),
    ("bridge repair using either steel plates or carbon fibre", '("bridge repair" AND ("steel plates" OR "carbon fibre"))'),
    ("can u find stuff on canal history", '"canal history"'),
    ("How effective are speed bumps in school zones?", '"speed bumps in school zones"'),
    ("Is there a study on hiccups in horses?", '"hiccups in horses"'),
    ("I'm a beekeeper, want studies about varroa mites and oxalic acid", '("varroa mites" AND "oxalic acid")'),
    ("cycling or walking, for commuting in winter", '(("cycling" OR "walking") AND "commuting in winter")'),
    ("AI regulation in the EU rather than in the US", '("AI regulation in the EU" AND NOT "the US")'),
])
def test_rules27_participles_before_either_and_everyday_asks(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text", ["cats but not", "cats excluding", "cats, not", "tea without"])
def test_an_exclusion_with_nothing_after_it_is_an_error_row(text):
    ast, err = try_translate_rules(text)
    assert ast is None and "nothing after" in err and "at the end of the text" in err


def test_not_both_needs_two_alternatives():
    ast, err = try_translate_rules("cats, dogs or birds but not both")
    assert ast is None and "needs two alternatives" in err


def test_a_request_like_sentence_deep_inside_prose_is_not_a_request():
    prose = " ".join(f"Sentence {w} is about the harbour and the town." for w in "one two three four".split())
    text = prose + " What is true of ports is true of airports. Both need roads and rail."
    ast, err = try_translate_rules(text)
    assert ast is None and "sentences of prose" in err


@pytest.mark.parametrize("texts, kind", [("coffee or tea", "a single string"), (b"coffee", "a single string"),
                                         ({"q1": "a or b"}, "of type dict"), (None, "None"), (5, "of type int")])
def test_translate_wants_a_list_of_texts(texts, kind):
    from itlr_gpu.errors import InputError
    from itlr_gpu.translate import translate

    with pytest.raises(InputError, match=f"translate\\(\\): texts is {kind} \\(expected a list of texts"):
        translate(texts)


@pytest.mark.parametrize("text, expr", [
    # a phrase shared by alternatives is shared out: before them ...
    ("flood insurance claims in Louisiana or Mississippi", '("flood insurance claims" AND ("Louisiana" OR "Mississippi"))'),
    ("peer tutoring for dyslexic pupils, autistic pupils or ESL pupils",
     '("peer tutoring" AND ("dyslexic pupils" OR "autistic pupils" OR "ESL pupils"))'),
    ("beekeeping in Scotland or Wales, not varroa", '("beekeeping" AND ("Scotland" OR "Wales") AND NOT "varroa")'),
    ("kelp farming for biofuel or for animal feed", '("kelp farming" AND ("biofuel" OR "animal feed"))'),
    # ... and after them
    ("tremor or stiffness in early Parkinson's patients", '(("tremor" OR "stiffness") AND "early Parkinson\'s patients")'),
    ("coffee or tea with oat milk", '(("coffee" OR "tea") AND "oat milk")'),
    # not a time, a quoted term, a title, a sentence, "of", alternatives a comma keeps apart
    ("tattoo fading or blistering after a week", '("tattoo fading" OR "blistering after a week")'),
    ('"piracy in Somalia" or Yemen', '("piracy in Somalia" OR "Yemen")'),
    ("Treating Eczema With Oats or honey", '("Treating Eczema With Oats" OR "honey")'),
    ("Is sugar harmful in children or adults?", '"sugar harmful in children or adults"'),
    ("balance of payments, wheat or cotton", '("balance of payments" OR "wheat" OR "cotton")'),
    ("either grazing in uplands, or hedgerows", '("grazing in uplands" OR "hedgerows")'),
    # two topics linked or compared; a title keeps its "vs."
    ("ozone exposure linked to preterm birth", '("ozone exposure" AND "preterm birth")'),
    ("bike lanes compared with bus lanes", '("bike lanes" AND "bus lanes")'),
    ("heat pumps vs gas boilers, running costs", '("heat pumps" AND "gas boilers" AND "running costs")'),
    ("Kramer vs. Kramer", '"Kramer vs. Kramer"'),
    ("Caloric Restriction vs. Plant-Based Diets", '"Caloric Restriction vs. Plant-Based Diets"'),
    # a document search's document types and asks
    ("search forum posts for brake squeal on the Model 3", '"brake squeal on the Model 3"'),
    ("Please pull support tickets mentioning refund delays", '"refund delays"'),
    ("customer reviews complaining about battery swelling", '"battery swelling"'),
    ("Court rulings on data scraping, excluding the EU", '("data scraping" AND NOT "the EU")'),
    ("patents regarding sodium-ion cathodes", '"sodium-ion cathodes"'),
    ("What do we have on grain silo explosions?", '"grain silo explosions"'),
    ("What's new on lithium recycling?", '"lithium recycling"'),
    ("Search the news archive for dam failures in Brazil", '"dam failures in Brazil"'),
    ("support tickets: printer driver crashes", '"printer driver crashes"'),
    ("abstracts: gut microbiome and autism", '("gut microbiome" AND "autism")'),
    ("Looking for any kind of news on hail damage to vineyards", '"hail damage to vineyards"'),
    # what the writer says of their own "and" / "or", and who they are
    ("wind farm noise and sleep quality - all three must appear - and property values",
     '("wind farm noise" AND "sleep quality" AND "property values")'),
    ("Either rye or spelt sourdough, doesn't matter which.", '("rye" OR "spelt sourdough")'),
    ("drone deliveries, but only if not Amazon", '("drone deliveries" AND NOT "Amazon")'),
    ("hi im a vet tech, need info on feline asthma thx", '"feline asthma"'),
    ("cant find anything on shipwreck law in Malta", '"shipwreck law in Malta"'),
    ("My editor asked me to find coverage of the port strike", '"the port strike"'),
    ("Any research on hoof abscesses in donkeys? I'm a farrier lol", '"hoof abscesses in donkeys"'),
    ("IM apps in schools", '"IM apps in schools"'),
    ("Can you pull clinical notes with chest pain or syncope?", '("chest pain" OR "syncope")'),
    ("papers with code on diffusion", '"papers with code on diffusion"'),
    ("bug reports about sync failures on Windows or macOS", '("sync failures" AND ("Windows" OR "macOS"))'),
    ("Hola, I need news of the peso rally", '"the peso rally"'),
    ("Urgent!! need all wire stories about the rail strike", '"the rail strike"'),
    ("urgent care clinics in Ohio", '"urgent care clinics in Ohio"'),
])
def test_rules28_shared_phrases_comparisons_and_document_types(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # preferences among kinds of sources, the writer's purpose and thanks: no topic
    ("tinnitus and hearing aids. Trial results preferred but reviews are fine too.", '("tinnitus" AND "hearing aids")'),
    ("beech bark disease. Case series are fine.", '"beech bark disease"'),
    ("bog bodies in Denmark. Nothing too technical please.", '"bog bodies in Denmark"'),
    ("carbon border taxes. Government or academic sources ideally.", '"carbon border taxes"'),
    ("research on kelp forests, review articles also okay", '"kelp forests"'),
    ("Hello, I search documents about tea rust in Kenya, is for my master thesis. Thank you",
     '"tea rust in Kenya"'),
    ("Do you have documents on fresco cleaning? It is for a conservation project in Padua.", '"fresco cleaning"'),
    ("I need articles about salt glaze kilns. Is possible to find also in German language?", '"salt glaze kilns"'),
    ("Habari. I am looking for research on solar mini-grids in Tanzania. Asante sana", '"solar mini-grids in Tanzania"'),
    ("Kindly provide the studies on snakebite antivenom. Kindly do the needful.", '"snakebite antivenom"'),
    # the verdict on the alternatives, and what the writer already has, are not topics
    # (since rules-42 a lower-case topic before two names is shared by them: "topic, A or B")
    ("pension reform, Chile or Peru both ok", '("pension reform" AND ("Chile" OR "Peru"))'),
    ("rammed earth walls. Either Moroccan or Spanish would do.", '("rammed earth walls" AND ("Moroccan" OR "Spanish"))'),
    ("tiny house zoning, Oregon or Vermont ideally", '("tiny house zoning" AND ("Oregon" OR "Vermont"))'),
    ("bank bail-ins, but not Cyprus - we have plenty on that already.", '("bank bail-ins" AND NOT "Cyprus")'),
    ("Send anything on preprint servers, unless it's about physics (already have those).",
     '("preprint servers" AND NOT "physics")'),
    # document kinds and asks
    ("find case law on drone surveillance", '"drone surveillance"'),
    ("standards for boiler inspection on heritage railways", '"boiler inspection on heritage railways"'),
    ("theses on the Zanzibar clove trade", '"the Zanzibar clove trade"'),
    ("Can someone send me a short overview on hybrid work and productivity?", '("hybrid work" AND "productivity")'),
    # kept: a word that only looks like a preference, "would do" inside a sentence
    ("applications of graph theory, chemistry is better", '"applications of graph theory, chemistry is better"'),
    ("You have to ask why a teacher would do this.", '"You have to ask why a teacher would do this"'),
])
def test_rules29_preferences_purposes_and_verdicts(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an ask verb that is also a noun asks only before its object; in a topic it is the topic's word
    ("articles on supply chain resilience, apart from chip shortages",
     '("supply chain resilience" AND NOT "chip shortages")'),
    ("share prices of utilities", '"share prices of utilities"'),
    ("search engine marketing but not paid social", '("search engine marketing" AND NOT "paid social")'),
    ("show jumping saddles", '"show jumping saddles"'),
    ("return policies for furniture retailers", '"return policies for furniture retailers"'),
    ("compile times in Rust", '"compile times in Rust"'),
    ("please share any studies on hybrid work", '"hybrid work"'),
    ("show me papers on freight rates", '"freight rates"'),
    ("supply the latest data on cocoa prices", '"cocoa prices"'),
    ("search for lithium brine projects", '"lithium brine projects"'),
    ("list of tax treaties with Brazil", '"tax treaties with Brazil"'),
    ("list vegan bakeries in Leeds", '"vegan bakeries in Leeds"'),
    # names, the last with a lower-case noun after it, share the noun
    ("Walmart or Costco loyalty schemes", '(("Walmart" OR "Costco") AND "loyalty schemes")'),
    ("Airbus or Embraer order backlogs, not military", '(("Airbus" OR "Embraer") AND "order backlogs" AND NOT "military")'),
    ("ISO or ANSI thread standards", '(("ISO" OR "ANSI") AND "thread standards")'),
    ("Paris or cheap hotels", '("Paris" OR "cheap hotels")'),   # not a name and its noun
    ("Lisbon or Porto style", '("Lisbon" OR "Porto style")'),   # too generic a noun to share
    # an excluded place or time keeps no preposition (since rules-50 also where the topic has one)
    ("crop rotation except in Iowa", '("crop rotation" AND NOT "Iowa")'),
    ("hospital staffing, not during night shifts", '("hospital staffing" AND NOT "night shifts")'),
    ("soil testing but not for lawns", '("soil testing" AND NOT "lawns")'),
    ("bike lanes in Paris rather than in London", '("bike lanes in Paris" AND NOT "London")'),
    ("rat studies but not in vitro", '("rat studies" AND NOT "in vitro")'),
    # business binomials, the writer's study and circumstances, "also" before a closing exclusion
    ("click and collect in grocery retail", '"click and collect in grocery retail"'),
    ("Hello, we are reviewing supplier audits. Nothing about food safety please.",
     '("supplier audits" AND NOT "food safety")'),
    ("Could you find case studies of warehouse automation? I have to brief the board on Friday.",
     '"warehouse automation"'),
    ("Looking for a primer on transfer pricing. Our CFO wants to present it next quarter.", '"transfer pricing"'),
    ("heat pumps for flats, but nothing about subsidies. Also not Daikin.",
     '("heat pumps for flats" AND NOT "subsidies" AND NOT "Daikin")'),
    ("what's the latest on container shipping rates", '"container shipping rates"'),
    ("whats going on with cocoa futures", '"cocoa futures"'),
    # kept: a topic in the closing sentence
    ("Quick question. I'm preparing a report on biochar.", '"Quick question. I\'m preparing a report on biochar"'),
])
def test_rules30_ask_verbs_named_alternatives_and_excluded_places(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # the school work a request is for is no topic; a reader's age and a paper's kind are
    ("I need a source on the Suez Crisis for my history essay, due monday!!", '"the Suez Crisis"'),
    ("volcanoes or earthquakes, for a 4th grade report", '("volcanoes" OR "earthquakes")'),
    ("templates for a research paper", '"templates for a research paper"'),
    ("Roth IRA or traditional IRA for a 25 year old", '("Roth IRA" OR "traditional IRA for a 25 year old")'),
    # pairs of names known as one
    ("the Lewis and Clark expedition, not Sacagawea", '("the Lewis and Clark expedition" AND NOT "Sacagawea")'),
    ("Gilbert and Sullivan operettas", '"Gilbert and Sullivan operettas"'),
])
def test_rules30_school_work_and_name_pairs(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # letters on several lines: a line that ends with a comma ("Dear desk,", "Best,") joins the next one
    ("Dear desk,\nI'm researching coastal erosion in Norfolk for a feature. Please send what you can by Monday.\n"
     "Best,\nLena", '"coastal erosion in Norfolk"'),
    ("Hello,\nI am a PhD student in geography working on the Dust Bowl. Could the library provide newspaper articles "
     "on it?\nMany thanks,\nAnna Berg", '"the Dust Bowl"'),
    ("Dear Library,\nFor my dissertation I need sources on Fabian socialism or Guild socialism, but nothing on the "
     "1920s. Could you help?\nKind regards,\nPiotr",
     '(("Fabian socialism" OR "Guild socialism") AND NOT "the 1920s")'),
    ("Hi archive team,\nFor next week's long read I need background on the Falklands War, everything except the "
     "sinking of the Belgrano, which we've covered already.\nCheers,\nTom",
     '("the Falklands War" AND NOT "the sinking of the Belgrano")'),
    ("Dear colleagues,\nI'm compiling material on rail strikes, not including the 1984 strike, for an explainer "
     "running next month. Please send anything relevant.\nRegards,\nAmy Lee, Data Team",
     '("rail strikes" AND NOT "the 1984 strike")'),
    ("Dear research desk,\nI'm fact-checking a claim about the minimum wage and would appreciate any archive "
     "material you have.\nBest,\nTom Ruiz, Metro Desk", '"the minimum wage"'),
    ("Hi - our team is putting together a retrospective on the Good Friday Agreement. Could you send whatever you "
     "have? Thanks, Priya", '"the Good Friday Agreement"'),
    # typed in lower case: the closing chatter is no topic
    ("hi, can you pull everything you have on the suez crisis? need it by friday. thanks, Ola", '"the suez crisis"'),
    ("Hey library team - for my Sunday feature, can you dig up anything on tin mining or slate quarries?",
     '("tin mining" OR "slate quarries")'),
])
def test_rules30_letters_on_lines_and_newsroom_requests(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an archive's own asks and kinds of document
    ("any reporting on the Aberfan disaster", '"the Aberfan disaster"'),
    ("looking for the original reporting on the Profumo affair", '"the Profumo affair"'),
    ("could you send me the archive's reporting on the miners' strike but without Orgreave?",
     '("the miners\' strike" AND NOT "Orgreave")'),
    ("yo do we have stuff on rent strikes, not glasgow or dublin", '("rent strikes" AND NOT "glasgow" AND NOT "dublin")'),
    ("what's the archive got on lighthouse keepers", '"lighthouse keepers"'),
    ("What is known so far about bird flu in cattle?", '"bird flu in cattle"'),
    ("What actually happened at the Congress of Vienna?", '"the Congress of Vienna"'),
    ("Do we have a file on port strikes? Editor wants a sidebar.", '"port strikes"'),
    ("I need studies about pressure ulcers for my nursing capstone", '"pressure ulcers"'),
    ("reporting standards for charities", '"reporting standards for charities"'),   # not a kind of document here
])
def test_rules30_archive_asks(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a capitalised name with an "and" before an institution's word is one term; two names stay two
    ("youth diversion schemes, leave out the Crime and Disorder Act",
     '("youth diversion schemes" AND NOT "the Crime and Disorder Act")'),
    ("Food and Drug Administration warning letters", '"Food and Drug Administration warning letters"'),
    ("Harvard Nurses Study, excluding EPIC Study and American Heart Association",
     '("Harvard Nurses Study" AND NOT "EPIC Study" AND NOT "American Heart Association")'),
    ("Spain and Portugal", '("Spain" AND "Portugal")'),
    # names with numbers share the noun after them
    ("Section 21 or Section 8 notices", '(("Section 21" OR "Section 8") AND "notices")'),
    ("Windows 10 or Windows 11 drivers", '(("Windows 10" OR "Windows 11") AND "drivers")'),
    # letters: the signature's lines, deadlines, calls and what someone asked the writer
    ("Hi,\nA constituent has asked about bus franchising. Could you point me to the most recent briefings?\n"
     "Best,\nJames\nOffice of Jane Doe MP", '"bus franchising"'),
    ("Dear Library,\n\nI am preparing for a committee debate next Tuesday and would be grateful for recent briefings "
     "on hospice funding.\n\nKind regards,\nTom Hughes\nParliamentary Assistant", '"hospice funding"'),
    ("Hi all,\n\nCould someone pull together anything we have on force majeure? Client call Thursday morning.\n\n"
     "Thanks,\nPriya", '"force majeure"'),
    ("Hello,\n\nFor a client matter I need everything on non-compete clauses as well as garden leave. Deadline COB "
     "Monday.\n\nBest,\nMark", '("non-compete clauses" AND "garden leave")'),
    ("Could you send me the latest research on prison overcrowding? I need it for a constituent letter by Friday.",
     '"prison overcrowding"'),
    ("Hi, need anything on sick pay or holiday pay - not agency workers please. by 5pm if poss. Ta, Lee",
     '(("sick pay" OR "holiday pay") AND NOT "agency workers")'),
    ("got anything on zero-hours contracts? need it asap", '"zero-hours contracts"'),
    ("Looking for briefings on the Barnett formula please", '"the Barnett formula"'),
    ("Please, I search the seismic design codes but not Eurocode 8, thank you",
     '("the seismic design codes" AND NOT "Eurocode 8")'),
])
def test_rules31_names_with_and_signatures_and_deadlines(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a closing statement about the writer, in lower case too, and what someone else wants it for
    ("Can someone send me the latest policy on safeguarding? our team visits families at home", '"safeguarding"'),
    ("Any studies about hearing loss in musicians? Doing my dissertation on it.", '"hearing loss in musicians"'),
    ("Is there any guidance on legionella testing? The contractor wants it by Friday.", '"legionella testing"'),
    ("Can you look for anything linking noise, sleep and blood pressure? Our union rep wants it for the review.",
     '("noise" AND "sleep" AND "blood pressure")'),
    ("i need info on council tax appeals for a client meeting tomorrow", '"council tax appeals"'),
    ("Good morning, I'm looking for articles on cold chains. It's for a client meeting tomorrow, so anything "
     "recent helps", '"cold chains"'),
    ("I'm researching the Reformation for my coursework - excluding Luther", '("the Reformation" AND NOT "Luther")'),
    ("Hi team - anything on speed bumps? We don't need anything about cameras, that's covered already.",
     '("speed bumps" AND NOT "cameras")'),
    # kinds of document, names and asks
    ("could you find me guidelines on sepsis screening please", '"sepsis screening"'),
    ("Could I get either the NICE or SIGN guidance on asthma", '(("the NICE" OR "SIGN guidance") AND "asthma")'),
    ("sickle cell disease without the gene therapy papers", '("sickle cell disease" AND NOT "the gene therapy")'),
    ("coral reefs, exclude the marine studies", '("coral reefs" AND NOT "the marine studies")'),   # too short to cut
    ("triage in Accident and Emergency", '"triage in Accident and Emergency"'),
    # lower-case nouns before "or" keep the noun after the last with it: only the meaning tells them apart
    ("milk or peanut butter", '("milk" OR "peanut butter")'),
    ("stroke or heart attack warning signs", '("stroke" OR "heart attack warning signs")'),
    ("pasta or sweet potato fries calories", '("pasta" OR "sweet potato fries calories")'),
])
def test_rules31_closing_statements_and_kinds_of_document(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # short requests after the writer's circumstances were error rows (prose): the request is "Any info on X"
    ("We're moving house next month and the dog is anxious. Any info on calming collars, but not sprays?",
     '("calming collars" AND NOT "sprays")'),
    ("Quick one: anything on tidal lagoons? I don't need stuff on Swansea.", '("tidal lagoons" AND NOT "Swansea")'),
])
def test_rules32_short_requests_after_circumstances_are_no_error_rows(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # the writer's aside after the request is no topic; a phrase that names one stays
    ("curry recipes without peanuts, my daughter is allergic", '("curry recipes" AND NOT "peanuts")'),
    ("city breaks in Italy but not Venice, way too crowded", '("city breaks in Italy" AND NOT "Venice")'),
    ("insomnia remedies other than melatonin, tried it, didn't help", '("insomnia remedies" AND NOT "melatonin")'),
    ("the Tudors apart from Henry VIII - everyone already covers him", '("the Tudors" AND NOT "Henry VIII")'),
    ("interview questions for nurses, got my first interview!!", '"interview questions for nurses"'),
    ("videos about knitting socks", '"knitting socks"'),
    ("cats and dogs, my favourite animals", '("cats" AND "dogs" AND "my favourite animals")'),
])
def test_rules34_asides_after_the_request(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an article before a name does not make it a lower-case alternative: the phrase before is shared out
    ("rail fares in the Netherlands or Denmark", '("rail fares" AND ("the Netherlands" OR "Denmark"))'),
    ("drought insurance in the US or in Mexico", '("drought insurance" AND ("the US" OR "Mexico"))'),
    ("falls prevention in the elderly or children", '("falls prevention" AND ("the elderly" OR "children"))'),
    ("lentils or Recipes for Busy Parents", '("lentils" OR "Recipes for Busy Parents")'),   # a title stays whole
    # what the writer says of an excluded topic in a relative clause is no part of it
    ("glacier retreat, but not the Alps, which we covered last month", '("glacier retreat" AND NOT "the Alps")'),
    ("wave power excluding the Pelamis project, which was abandoned in 2008",
     '("wave power" AND NOT "the Pelamis project")'),
    ("poetry by Heaney except Digging, which I already know", '("poetry by Heaney" AND NOT "Digging")'),
    ("early punk bands, who changed British music", '"early punk bands"'),
    # inside a wanted term such a clause is the claim's own content; a leading "Who" asks
    ("Ketamine lowers suicidal ideation, which is sustained for a week.",
     '"Ketamine lowers suicidal ideation, which is sustained for a week"'),
    ("Who has won more Tour de France stages, Merckx or Cavendish?",
     '("Who has won more Tour de France stages" AND "Merckx or Cavendish")'),
    ('"the band, who were famous" and guitars', '("the band, who were famous" AND "guitars")'),   # quoted: as written
])
def test_rules35_articles_before_names_and_relative_clauses(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a terminal's escape sequences pasted with the text are no words ("[31m" was read as a term)
    ("solar panels\x1b[31m but not\x1b[0m China", '("solar panels" AND NOT "China")'),
    ("tea\x1b]0;window title\x07 or coffee", '("tea" OR "coffee")'),
    ("bees\x1b and wasps", '("bees" AND "wasps")'),
    ("ctrl\x00\x07 chars and tabs\there", '("ctrl chars" AND "tabs here")'),
])
def test_terminal_escapes_and_control_characters_are_white_space(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text", ["owls, hawks or \U0001F98A", "\U0001F98A or owls", "owls but not \U0001F985",
                                  "(\u2605 OR owls) AND hawks", "owls vs \U0001F98A\U0001F985!"])
def test_an_emoji_standing_as_a_term_is_refused_not_dropped(text):
    """Dropped as decoration, an emoji that is a whole operand would change the logic (an OR list read as an AND,
    a NOT with nothing after it): one clear error instead."""
    with pytest.raises(RuleError, match="a term of emoji or symbols only"):
        translate_rules(text)


@pytest.mark.parametrize("text, expr", [
    ("I love owls \U0001F60D but not hawks", '("owls" AND NOT "hawks")'),   # decoration beside a word
    ("owls \u2764\ufe0f and hawks", '("owls" AND "hawks")'),
    ("anything on barn owls, \U0001F64F", '"barn owls"'),
    ('owls or "\U0001F98A"', '("owls" OR "\U0001F98A")'),                     # quoted: the writer's own term
])
def test_emoji_as_decoration_or_quoted(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # "that's not" (and texted "thats not") reads as "that is not"; a state after it stays a phrase
    ("a standing desk that's not electric", '("standing desk" AND NOT "electric")'),
    ("yoga mats thats not purple", '("yoga mats" AND NOT "purple")'),
    ("a vaccine that's not licensed in Canada", '"vaccine that\'s not licensed in Canada"'),
    # the writer's reason after an exclusion, with "since" and no comma
    ("banana bread but without walnuts since my daughter is allergic", '("banana bread" AND NOT "walnuts")'),
    ("UK trade statistics, excluding the years since we left the EU",
     '("UK trade statistics" AND NOT "the years since we left the EU")'),        # a time, not a reason
    # ", nothing X" excludes X; "nothing else" / "nothing but X" / "nothing over $5" qualify
    ("lunch ideas with tofu or tempeh, nothing fried", '("lunch ideas" AND ("tofu" OR "tempeh") AND NOT "fried")'),
    ("soup recipes, nothing with mushrooms", '("soup recipes" AND NOT "mushrooms")'),
    ("soup recipes, nothing else", '("soup recipes" AND "nothing else")'),
    # a bare "too X" after the request is the writer's aside
    ("ski resorts in Austria but not Ischgl, too crowded", '("ski resorts in Austria" AND NOT "Ischgl")'),
])
def test_rules35_shop_and_kitchen_phrasings(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a phrase after alternatives is shared out when it holds a second link too ("for X in Y")
    ("ACE inhibitors or ARBs for hypertension in pregnancy", '(("ACE inhibitors" OR "ARBs") AND "hypertension in pregnancy")'),
    ("metformin or insulin in gestational diabetes with obesity",
     '(("metformin" OR "insulin") AND "gestational diabetes with obesity")'),
    # a clinical question's aspects of one topic stay one term
    ("diagnosis and management of Lyme disease", '"diagnosis and management of Lyme disease"'),
    ("signs and symptoms of dengue but not malaria", '("signs and symptoms of dengue" AND NOT "malaria")'),
])
def test_rules35_clinical_questions(text, expr):
    assert canonical(translate_rules(text)) == expr


def test_a_text_of_emoji_only_is_no_empty_text():
    with pytest.raises(RuleError, match=r"no words \(only emoji, symbols or control characters\)"):
        translate_rules("\U0001F431\U0001F436\U0001F680")
    with pytest.raises(RuleError, match="^empty text$"):
        translate_rules("  \t ")


@pytest.mark.parametrize("text, expr", [
    # after a negation, the verb saying what the documents do with the topic is not part of the topic
    ("climate change impacts on agriculture without mentioning drought",
     '("climate change impacts on agriculture" AND NOT "drought")'),
    ("gene therapy without discussing cancer", '("gene therapy" AND NOT "cancer")'),
    ("gene therapy without any mention of cancer", '("gene therapy" AND NOT "cancer")'),
    ("gene therapy without reference to cancer", '("gene therapy" AND NOT "cancer")'),
    ("gene therapy, neither covering cancer nor diabetes", '("gene therapy" AND NOT "cancer" AND NOT "diabetes")'),
    ("gene therapy but not if it's about cancer", '("gene therapy" AND NOT "cancer")'),
    ("gene therapy excepting cancer", '("gene therapy" AND NOT "cancer")'),
    ("gene therapy but definitely not cancer", '("gene therapy" AND NOT "cancer")'),
    # elsewhere the same verbs belong to the topic
    ("papers citing Smith but not Jones", '("papers citing Smith" AND NOT "Jones")'),
    ("machine learning involving graphs but not images", '("machine learning involving graphs" AND NOT "images")'),
])
def test_rules36_discourse_verbs_after_a_negation(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # exclusions typed into a search box: ", no need for X", ", disregard X", "sans X", "but not counting X"
    ("school board elections, no need for the candidate profiles",
     '("school board elections" AND NOT "the candidate profiles")'),
    ("flood insurance claims, disregard commercial buildings",
     '("flood insurance claims" AND NOT "commercial buildings")'),
    ("pizza recipes sans the cheese", '("pizza recipes" AND NOT "the cheese")'),
    ("marathon results but not counting relay teams", '("marathon results" AND NOT "relay teams")'),
    # ... while "Sans" inside a name and a claim's "no need for" stay words
    ("Noto Sans or Source Sans Pro", '("Noto Sans" OR "Source Sans Pro")'),
    ("There is no need for antibiotics in viral infections", '"There is no need for antibiotics in viral infections"'),
    ("comic sans or helvetica", '("comic sans" OR "helvetica")'),
    # "can you pull X" asks; "pull the plug on X" alone is a topic
    ("could you pull the clips on the transit strike", '"the clips on the transit strike"'),
    ("pull the plug on coal plants", '"pull the plug on coal plants"'),
    # a canal's or a railway's name holding "and"
    ("history of the Chesapeake and Ohio Canal towpath", '"history of the Chesapeake and Ohio Canal towpath"'),
])
def test_rules36_search_box_exclusions_and_names(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # the serial ("Oxford") comma before "or" shares a phrase after the list as the list without it does ...
    ("statins, aspirin, or beta blockers for stroke prevention",
     '(("statins" OR "aspirin" OR "beta blockers") AND "stroke prevention")'),
    ("statins, aspirin or beta blockers for stroke prevention",
     '(("statins" OR "aspirin" OR "beta blockers") AND "stroke prevention")'),
    # ... not a head before it, and a lone comma before "or" still keeps alternatives apart
    ("tree surveys for flood risk, soil maps, or rainfall records",
     '("tree surveys for flood risk" OR "soil maps" OR "rainfall records")'),
    ("either cats in Paris, or dogs", '("cats in Paris" OR "dogs")'),
])
def test_rules36_serial_comma_before_or(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an exclusion written after its topic
    ("gene therapy, cancer excluded", '("gene therapy" AND NOT "cancer")'),
    ("gene therapy with cancer excluded", '("gene therapy" AND NOT "cancer")'),
    ("hip fractures in the elderly, nursing home residents not included, no surgery",
     '("hip fractures in the elderly" AND NOT "nursing home residents" AND NOT "surgery")'),
    ("solar or wind, subsidies left out.", '(("solar" OR "wind") AND NOT "subsidies")'),
    # ... not a sentence's or a topic's own "excluded"
    ("trials with women excluded from enrolment", '"trials with women excluded from enrolment"'),
    ("Why were women excluded from clinical trials?", '"women excluded from clinical trials"'),
])
def test_rules36_postfix_exclusion(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an excluded source or place keeps no "from" / "at" where the wanted topic has none
    ("omega-3, but not from fish", '("omega-3" AND NOT "fish")'),
    ("steel imports but not from China", '("steel imports" AND NOT "China")'),
    ("restaurants but not at the airport", '("restaurants" AND NOT "the airport")'),
    # a parallel one goes too (rules-50: every outside writer so); "at least" and kin stay
    ("quotes from Lincoln but not from Douglass", '("quotes from Lincoln" AND NOT "Douglass")'),
    ("hotels but not at least 5 km away", '("hotels" AND NOT "at least 5 km away")'),
])
def test_rules36_excluded_source_or_place(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # "but not both" pairs the alternatives as they are once a shared phrase is taken out of them
    ("recipes with chicken or fish but not both",
     '("recipes" AND ("chicken" OR "fish") AND NOT ("chicken" AND "fish"))'),
    ("grants from Wellcome or Gates but not both",
     '("grants" AND ("Wellcome" OR "Gates") AND NOT ("Wellcome" AND "Gates"))'),
    ("tea or coffee but not both", '(("tea" OR "coffee") AND NOT ("tea" AND "coffee"))'),
])
def test_rules37_not_both_after_a_shared_phrase(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # lone adjectives before "or" qualify the last alternative's noun
    ("public or private schools", '(("public" OR "private") AND "schools")'),
    ("organic or conventional farming in Kenya", '(("organic" OR "conventional") AND "farming in Kenya")'),
    ("hydraulic or mechanical brakes, no drum brakes",
     '(("hydraulic" OR "mechanical") AND "brakes" AND NOT "drum brakes")'),
    # ... nouns before "or" and a generic noun after an adjective stay as they are
    ("milk or peanut butter", '("milk" OR "peanut butter")'),
    ("stroke or heart attack warning signs", '("stroke" OR "heart attack warning signs")'),
    ("pasta or sweet potato fries calories", '("pasta" OR "sweet potato fries calories")'),
    ("classical or modern style", '("classical" OR "modern style")'),
])
def test_rules37_adjectives_share_the_noun(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # more ways to exclude: "don't show me X", "that don't need X", a closing "no X please", "Please no X."
    ("ceramic vases, don't show me the Ming ones", '("ceramic vases" AND NOT "the Ming")'),
    ("quilts but please don't show me anything from Ohio", '("quilts" AND NOT "Ohio")'),
    ("phone apps that don't require an account", '("phone apps" AND NOT "account")'),
    ("laptop games, skip anything that needs a GPU", '("laptop games" AND NOT "GPU")'),
    ("sourdough starter tips no rye flour please", '("sourdough starter tips" AND NOT "rye flour")'),
    ("Looking for ghost stories for kids. Please no gore, my kids hate it.",
     '("ghost stories for kids" AND NOT "gore")'),
    ("vegan desserts. Please avoid coconut.", '("vegan desserts" AND NOT "coconut")'),
    # ... not a claim's "we don't need X", nor a name's "No" ("Dr. No")
    ("we don't need more reports on this", '"we don\'t need more reports on this"'),
    ("books on Dr. No please", '"Dr. No"'),
])
def test_rules37_more_exclusions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # asks and relative verbs that are no topic's words
    ("how do you fix a leaking tap", '"fix a leaking tap"'),
    ("How can you believe in polls?", '"How can you believe in polls"'),   # a rhetorical question stays whole
    ("Do you have any maps of Lisbon?", '"maps of Lisbon"'),
    ("Could you show me what you have on the 1906 earthquake", '"the 1906 earthquake"'),
    ("hip dysplasia in dogs, looking for info on surgery or physiotherapy",
     '("hip dysplasia in dogs" AND ("surgery" OR "physiotherapy"))'),
    ("guidelines for bridges that cover both corrosion and fatigue",
     '("bridges" AND "corrosion" AND "fatigue")'),   # guidelines: a kind of document
    ("Minecraft mods that work with both Forge and Fabric", '("Minecraft mods" AND "Forge" AND "Fabric")'),
    ("Looking for documents that mention both tides and eels", '("tides" AND "eels")'),
])
def test_rules37_asks_and_relative_verbs(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a capitalised "Without" / "Not" / "No" inside a title, in a text with lower-case words of its own
    ("Gone Without a Trace cast interviews", '"Gone Without a Trace cast interviews"'),
    ("Things Not Seen book reviews", '"Things Not Seen book reviews"'),
    ("No Time to Die box office", '"No Time to Die box office"'),
    # ... while a request written all in capitals, or a plain "No X", excludes
    ("Vaccines Without Adjuvants", '("Vaccines" AND NOT "Adjuvants")'),
    ("No sugar diets", 'NOT "sugar diets"'),
    ("Python without Django tutorials", '("Python" AND NOT "Django tutorials")'),
])
def test_rules37_titles_with_a_negation(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a text that opens with a title led by a capitalised negation: read again as a title when the first
    # reading left nothing wanted or failed
    ("Not Without Her Sister", '"Not Without Her Sister"'),
    ("No Country Road Songs behind the scenes -interview",
     '("No Country Road Songs behind the scenes" AND NOT "interview")'),
    # ... a lone capitalised word and lower case still exclude
    ("Not Python", 'NOT "Python"'),
    ("Without sugar", 'NOT "sugar"'),
    # "W or not W" is an idiom, no alternative of an exclusion
    ("to be or not to be", '"to be or not to be"'),
    ("Much Ado or Not Much Ado", '"Much Ado or Not Much Ado"'),
    ("cats or not dogs", '("cats" OR NOT "dogs")'),
])
def test_rules38_titles_opening_with_a_negation(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # "X either A or B but not both": the head stays wanted, the pair is A and B
    ("biographies about either Ali or Frazier but not both",
     '("biographies" AND ("Ali" OR "Frazier") AND NOT ("Ali" AND "Frazier"))'),
    ("pancakes with either blueberries or bananas but not both",
     '("pancakes" AND ("blueberries" OR "bananas") AND NOT ("blueberries" AND "bananas"))'),
    ("either tea or coffee but not both", '(("tea" OR "coffee") AND NOT ("tea" AND "coffee"))'),
])
def test_rules38_not_both_after_a_head(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # an exclusion put first with "skip" / "leave out", a typed "want a X"
    ("skip the onions, want a lentil soup recipe", '("lentil soup recipe" AND NOT "the onions")'),
    ("leave out the capital city, looking for Peru travel guides",
     '("Peru travel guides" AND NOT "the capital city")'),
    # "I don't need the X" after a request; not a claim standing alone
    ("Could you pull planning minutes on bike lanes? I don't need the parking debate though.",
     '("planning minutes on bike lanes" AND NOT "the parking debate")'),
    ("We don't need the death penalty.", '"We don\'t need the death penalty"'),
    # the writer's own study before the ask is context
    ("I'm researching flood risk for a community group. Can you find insurance claims data for the 2019 floods?",
     '"insurance claims data for the 2019 floods"'),
    # what opens an excluded term without naming it, and a reason after it
    ("moisturiser for dry skin, but not which have fragrance inside", '("moisturiser for dry skin" AND NOT "fragrance")'),
    ("sunscreen which is not contain oxybenzone", '("sunscreen" AND NOT "oxybenzone")'),
    ("granola bars but not the ones from Kellogg", '("granola bars" AND NOT "Kellogg")'),
    ("lunch box ideas, nothing with peanuts or sesame because she's allergic",
     '("lunch box ideas" AND NOT "peanuts" AND NOT "sesame")'),
    ("gluten-free breads that also don't use rice flour", '("gluten-free breads" AND NOT "rice flour")'),
    # ... a relative clause about an excluded topic is still an aside
    ("coral reefs, excluding the Great Barrier Reef, which has been studied to death",
     '("coral reefs" AND NOT "the Great Barrier Reef")'),
])
def test_rules38_exclusions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # years after a topic are its alternatives; a preposition before them is the existing head rule's
    ("hamlet 1948 or 1990", '("hamlet" AND ("1948" OR "1990"))'),
    ("school board minutes 2021 or 2022", '("school board minutes" AND ("2021" OR "2022"))'),
    ("floods in 1927 or 1937", '("floods" AND ("1927" OR "1937"))'),
    # a city's departments and dishes hold an "and"
    ("parks and recreation master plan", '"parks and recreation master plan"'),
    # one comma after the alternatives adds what they share; a claim's opening phrase does not
    ("python or rust, command line parsing", '(("python" OR "rust") AND "command line parsing")'),
    ("hiking boots or trail runners, waterproof", '(("hiking boots" OR "trail runners") AND "waterproof")'),
    ("cats, dogs or birds", '("cats" OR "dogs" OR "birds")'),
    ("A or In mice, the cells divide", '("A" OR "In mice" OR "the cells divide")'),
    # taking two things together; a question of one, and a plain "what do I need to X"
    ("is it ok to take zinc with iron", '("zinc" AND "iron")'),
    ("can I drink coffee while taking antibiotics", '("coffee" AND "antibiotics")'),
    ("can you take aspirin", '"take aspirin"'),
    ("what do we need to register a charity", '"register a charity"'),
])
def test_rules38_shared_parts_and_questions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a typed "need a X"; "need for X" and "Need for Speed" are topics
    ('need a torque wrench for bike repairs', '"torque wrench for bike repairs"'),
    ('need the Miranda decision', '"the Miranda decision"'),
    ('need for cognition and persuasion', '("need for cognition" AND "persuasion")'),
    ('Need for Speed soundtrack', '"Need for Speed soundtrack"'),
    # more asks: "how do u", "could someone point me to", "is there a X" (not "is there any evidence that")
    ('how do u reset a garage door opener', '"reset a garage door opener"'),
    ('could someone point me to research on recess?', '"recess"'),
    ('is there a drill that isnt DeWalt', '("drill" AND NOT "DeWalt")'),
    ('is there any evidence that recess improves attention', '"recess improves attention"'),
    ('Is there a link between sleep and grades?', '("sleep" AND "grades")'),
    # a Spanish "but not", "X is off the table" / "out of scope" after a comma or dash
    ('hostales en Lima pet friendly pero no en Miraflores', '("hostales en Lima pet friendly" AND NOT "en Miraflores")'),
    ('hiking maps -- the national park is off the table', '("hiking maps" AND NOT "national park")'),
    ('lab manuals, chemistry is out of scope', '("lab manuals" AND NOT "chemistry")'),
    ('trials with women excluded from enrolment', '"trials with women excluded from enrolment"'),
    # "neither A nor B" put first ends at a dash
    ('Neither Makita nor Ryobi — want a cordless drill', '(NOT "Makita" AND NOT "Ryobi" AND "cordless drill")'),
    ('neither wolves nor bears - I want studies on guard dogs', '(NOT "wolves" AND NOT "bears" AND "guard dogs")'),
    # a closing "idk what to do"; "I'm trying to find X" asks, after a self-introduction too
    ('flat tire on my bike idk what to do', '"flat tire on my bike"'),
    ("I'm trying to find studies on recess and attention.", '("recess" AND "attention")'),
    ("Hi, I'm a school nurse. I'm trying to find guidance on head lice in classrooms. Nothing about shampoos please.",
     '("head lice in classrooms" AND NOT "shampoos")'),
])
def test_rules39_asks_and_late_exclusions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # what the writer already read or tried, then "need something else on X": excluded
    ("I've already read Freakonomics, need something else on behavioural economics",
     '("behavioural economics" AND NOT "Freakonomics")'),
    ("I've already tried vinegar, need something else for fruit flies in the kitchen",
     '("fruit flies in the kitchen" AND NOT "vinegar")'),
    # a hedge that is the task, an ask that names only "the right page", a grant's "would be grateful for" studies
    ("Hi, I'm not sure if I need to file a tax return as a student. Could you point me to the right page? Thanks",
     '"file a tax return as a student"'),
    ("I'm writing a literature review on sleep and memory consolidation and would be grateful for recent studies.",
     '("sleep" AND "memory consolidation")'),
    # an exclusion put first before a question; a title still reads as one
    ('Without a car, how do I get to Yosemite?', '("get to Yosemite" AND NOT "car")'),
    ('Without a Trace or Cold Case', '("Without a Trace" OR "Cold Case")'),
    # an alternative in brackets is one to the words before it
    ('omega-3 (or fish oil) and heart rhythm', '(("omega-3" OR "fish oil") AND "heart rhythm")'),
    ('rock climbing (or bouldering) for beginners', '(("rock climbing" OR "bouldering") AND "for beginners")'),
    ('lichens (or mosses)', '("lichens" OR "mosses")'),
    # after a comma, "neither A nor B" excludes both from the alternatives before
    ('space opera or military sci-fi, neither Star Wars nor Star Trek',
     '(("space opera" OR "military sci-fi") AND NOT "Star Wars" AND NOT "Star Trek")'),
    # a device's state is no exclusion, after an -ing noun too; two activities still are
    ('printer not responding on the office network', '"printer not responding on the office network"'),
    ('video calls not connecting', '"video calls not connecting"'),
    ('jogging not running', '("jogging" AND NOT "running")'),
    # a negated question of which things: the things without the property
    ('Which houseplants are not safe for rabbits?', '("houseplants" AND NOT "safe for rabbits")'),
    ('which antibiotics are not safe in pregnancy', '("antibiotics" AND NOT "safe in pregnancy")'),
    ('Which dog breeds are neither large nor noisy?', '("dog breeds" AND NOT "large" AND NOT "noisy")'),
])
def test_rules40_known_things_brackets_and_negated_questions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # "A or B - which is better for C": a comparison names both (and C)
    ('Python or Go — which is better for command line tools?', '("Python" AND "Go" AND "command line tools")'),
    ('tea or coffee, which is better for focus', '("tea" AND "coffee" AND "focus")'),
    ('kombucha or kefir, which one is easier to make', '("kombucha" AND "kefir")'),   # rules-67: "to make" no topic
    # "but only if (they cover) Y" adds Y
    ('reports on school meals in Peru, but only if they cover rural areas',
     '("school meals in Peru" AND "rural areas")'),
    ("travel insurance but only if it's for skiing", '("travel insurance" AND "for skiing")'),
    # a title of one capitalised word after a negation, with more after it; "Not Python" alone still excludes
    ('Without You but not the Mariah Carey one', '("Without You" AND NOT "the Mariah Carey")'),
    ('Not Python', 'NOT "Python"'),
    # "A, B or C" is a list of three (the quality benchmark renders a OR b OR c so), whatever the first item's length
    ('vitamin d benefits, gene expression or insulin resistance',
     '("vitamin d benefits" OR "gene expression" OR "insulin resistance")'),
    ('red wine, beer or spirits', '("red wine" OR "beer" OR "spirits")'),
    ('microplastics in oysters, mussels or clams', '("microplastics" AND ("oysters" OR "mussels" OR "clams"))'),
])
def test_rules41_comparisons_conditions_and_lists(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # names before "or", the last with a lower-case phrase after it: the whole phrase is shared, links and all
    ('Marvel or DC comics in hardcover omnibus editions',
     '(("Marvel" OR "DC") AND "comics in hardcover omnibus editions")'),
    ('Nikon or Canon lenses for wildlife photography', '(("Nikon" OR "Canon") AND "lenses for wildlife photography")'),
    ('Streptococcus or S. aureus infections after surgery', '(("Streptococcus" OR "S. aureus") AND "infections after surgery")'),
    ('Neapolitan or New York style', '("Neapolitan" OR "New York style")'),   # one generic noun: kept
    # a lower-case topic, then names: the topic in each
    ('ferry timetables Corsica or Sardinia', '("ferry timetables" AND ("Corsica" OR "Sardinia"))'),
    ('vitamin D or E', '("vitamin D" OR "E")'),   # single letters are no names to share a topic with
    ('films like Alien or Aliens', '("films like Alien" OR "Aliens")'),
    # "topic, A or B" with names; a topic ending in a name, or three topics, stay a list
    ('first editions, Graham Greene or Evelyn Waugh', '("first editions" AND ("Graham Greene" OR "Evelyn Waugh"))'),
    ('ruined abbeys in Yorkshire, Durham or Cumbria', '("ruined abbeys" AND ("Yorkshire" OR "Durham" OR "Cumbria"))'),
    ('sleep hygiene, screen time or caffeine', '("sleep hygiene" OR "screen time" OR "caffeine")'),
    # a verdict on the alternatives
    ('rooftop bars, Lisbon or Porto is fine', '("rooftop bars" AND ("Lisbon" OR "Porto"))'),
    # what a library or a shop holds; a purpose sentence after the ask
    ('does the archive hold the 1911 census returns for Cork', '"the 1911 census returns for Cork"'),
    ('Do you stock Riesling from the Mosel? We need it for our anniversary.', '"Riesling from the Mosel"'),
    ('could you tell me whether the library has the Loeb edition of Tacitus', '"the Loeb edition of Tacitus"'),
    ('do u have anything by Ursula Le Guin', '"Ursula Le Guin"'),
    ('I simply want to download the 2019 tide tables', '"the 2019 tide tables"'),
    ('which visas for students to Japan', '"visas for students to Japan"'),
    # letters: "To whom it may concern", "With thanks", a name signed on its own line, "Thanks!"
    ('To whom it may concern,\nI am looking for the minutes of the 1923 parish council.\nWith thanks,\nA. Byrne',
     '"the minutes of the 1923 parish council"'),
    ('Hello,\nI need a quiet hotel near Lake Bled.\nThanks!\nMarta', '"quiet hotel near Lake Bled"'),
    ('Could you find the Lusitania crew lists?\n\nDr. K. Osei', '"the Lusitania crew lists"'),
    ('Looking for:\nTolstoy', '"Tolstoy"'),   # a name after a colon is the topic, not a signature
    # a lower-case article goes from a longer object too; a claim keeps its own
    ('Good evening, I am looking for a first edition of Ulysses printed in Paris in 1922 please',
     '"first edition of Ulysses printed in Paris in 1922"'),
    # exclusions said after the topic, in brackets, as verdicts; what opens an excluded term without naming it
    ('hiking boots, leather not wanted', '("hiking boots" AND NOT "leather")'),
    ('studio flats in Leeds, ground floor is a no', '("studio flats in Leeds" AND NOT "ground floor")'),
    ('baggage allowance (infants excluded)', '("baggage allowance" AND NOT "infants")'),
    ('Rioja reserva, nothing from Bodegas Faustino', '("Rioja reserva" AND NOT "Bodegas Faustino")'),
    ('roof repairs but not include the chimney', '("roof repairs" AND NOT "the chimney")'),
    ('refunds for delays except when caused by weather', '("refunds for delays" AND NOT "weather")'),
    # the writer's reasons after an exclusion
    ('Bauhaus furniture, leave out Breuer - I have his catalogue already', '("Bauhaus furniture" AND NOT "Breuer")'),
    ('parish registers but not the bishop\'s transcripts as we have those', '("parish registers" AND NOT "the bishop\'s transcripts")'),
    ('wedding venues in Kent - no castles, it ruins the budget', '("wedding venues in Kent" AND NOT "castles")'),
    # number words joined by "and"
    ('weather records for the winter of eighteen hundred and sixty', '"weather records for the winter of eighteen hundred and sixty"'),
])
def test_rules42_names_letters_holdings_and_exclusion_tails(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # "X of A or B": a head of two words or more, or names as the alternatives
    ('seed dormancy of oak or beech', '("seed dormancy" AND ("oak" OR "beech"))'),
    ('history of Venice or Genoa', '("history" AND ("Venice" OR "Genoa"))'),
    ('cup of tea or coffee', '("cup of tea" OR "coffee")'),
    ('Bank of England or ECB', '("Bank of England" OR "ECB")'),
    # a lower-case topic first, capitalised: "Podcasts about X, A or B" (the kind of source goes)
    ('Podcasts about chess openings, Magnus Carlsen or Hikaru Nakamura',
     '("chess openings" AND ("Magnus Carlsen" OR "Hikaru Nakamura"))'),
    # asks: who to contact about X, where the X is, anything with / by X, a subscription, availability
    ('Who should I contact about parking permits for carers?', '"parking permits for carers"'),
    ('where is the fire evacuation plan for level 3', '"the fire evacuation plan for level 3"'),
    ('anything by Joan Didion or Nora Ephron', '("Joan Didion" OR "Nora Ephron")'),
    ('does the library subscribe to Marine Policy', '"Marine Policy"'),
    ('Do you have the Lego Technic Land Rover in stock?', '"the Lego Technic Land Rover"'),
    ('Do you stock either Pokemon Violet or Pokemon Scarlet?', '("Pokemon Violet" OR "Pokemon Scarlet")'),
    ('I would like to see the 1952 flood photographs, if the archive has them', '"the 1952 flood photographs"'),
    # a preference among kinds of source after the request; podcasts and episodes as kinds
    ('Anything on the Silk Road? Short episodes are fine.', '"the Silk Road"'),
    ('podcasts about urban beekeeping', '"urban beekeeping"'),
    # exclusions typed without apostrophe or comma; "any brand except"; "not the X ones"
    ('rain jackets, dont want ponchos', '("rain jackets" AND NOT "ponchos")'),
    ('a quiet campsite i\'d rather not have electric hook-up pitches', '("quiet campsite" AND NOT "electric hook-up pitches")'),
    ('why dogs dont want to walk', '"why dogs dont want to walk"'),   # (the writer's own spelling kept)
    ('running shoes, any brand except Nike', '("running shoes" AND NOT "Nike")'),
    ('jazz standards but not the bebop ones', '("jazz standards" AND NOT "the bebop")'),
])
def test_rules43_of_heads_asks_held_items_and_typed_exclusions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # letters: "Respected Sir/Madam", "Thanking you"; an ask of what a shop offers; "which X do you recommend"
    ('Respected Sir,\nKindly send the catalogue of rare bulbs from Crete except Tulipa saxatilis.\nThanking you,\nR. Nair',
     '("the catalogue of rare bulbs from Crete" AND NOT "Tulipa saxatilis")'),
    ('My knees hurt after running. Do you offer a gait analysis service?', '"gait analysis service"'),
    ('my son has eczema. Which bath oil for sensitive skin do you recommend?', '"bath oil for sensitive skin"'),
    ('Can you confirm whether you stock nitrile gloves size S?', '"nitrile gloves size S"'),
    ('how many carbs in a banana', '"carbs in a banana"'),
    # a head, alternatives and a phrase after them; "under" kept before a number only
    ('soups with leeks or potatoes under 300 calories', '("soups" AND ("leeks" OR "potatoes") AND "under 300 calories")'),
    ('picture books on foxes or badgers for toddlers', '("picture books" AND ("foxes" OR "badgers") AND "toddlers")'),
    ('Flooding in Leeds or flooding in York', '("Flooding in Leeds" OR "flooding in York")'),
    ('USB hubs compatible with Mac or Linux', '("USB hubs" AND ("Mac" OR "Linux"))'),
    ('type specimens of Rosa canina or Rosa rubiginosa', '("type specimens" AND ("Rosa canina" OR "Rosa rubiginosa"))'),
    # exclusions: "ones that need Y", "that don't have Y in them", "any make besides Y", "but Y" after "any brand"
    ('grants for artists, ignoring the ones that need a portfolio', '("grants for artists" AND NOT "a portfolio")'),
    ("curries that don't have coconut in them", '("curries" AND NOT "coconut")'),
    ('kettles, any make besides Russell Hobbs', '("kettles" AND NOT "Russell Hobbs")'),
    ('wall clocks, any brand but Ikea', '("wall clocks" AND NOT "Ikea")'),
    # a verdict on the alternatives; "not both" said otherwise; fixed pairs of words
    ('A3 or A2 frames, whichever you stock', '(("A3" OR "A2") AND "frames")'),
    ('either Python or Go, not both at once', '(("Python" OR "Go") AND NOT ("Python" AND "Go"))'),
    ('news on either the pier or the lido, not the ones covering both',
     '(("the pier" OR "the lido") AND NOT ("the pier" AND "the lido"))'),
    ('backup and restore for sqlite', '"backup and restore for sqlite"'),
])
def test_rules44_letters_shared_tails_held_items_and_not_both(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # "not both" said otherwise, with a reason after it
    ("prints by either Hokusai or Hiroshige - not one with both of them in, we have that catalogue",
     '("prints" AND ("Hokusai" OR "Hiroshige") AND NOT ("Hokusai" AND "Hiroshige"))'),
    ('a party with either a magician or a bouncy castle but not a mix of the two',
     '("party" AND ("magician" OR "bouncy castle") AND NOT ("magician" AND "bouncy castle"))'),
    # "any edition bar Y", "and nothing by Y"
    ('Bach cello suites, any edition bar Bärenreiter', '("Bach cello suites" AND NOT "Bärenreiter")'),
    ('folk songs for choir, and nothing by Vaughan Williams', '("folk songs for choir" AND NOT "Vaughan Williams")'),
    # a learner's asks without "to"; "have u got X"; "we search X" after the writer's circumstances
    ('I want buy a season ticket, not the family one', '("season ticket" AND NOT "the family")'),
    ('I want know about puppy training classes', '"puppy training classes"'),
    ('have you got any reading lamps with a clamp', '"reading lamps with a clamp"'),
    ('We are two students from Lyon, we search a hostel near the station', '"hostel near the station"'),
    # adjectives before "or": states, languages, two gerunds
    ('lost or damaged parcel', '(("lost" OR "damaged") AND "parcel")'),
    ('dutch or english subtitles', '(("dutch" OR "english") AND "subtitles")'),
    ('hiking or climbing boots', '(("hiking" OR "climbing") AND "boots")'),
    ('seasoning or rust removal', '("seasoning" OR "rust removal")'),
    # two lower-case topics compared, the same word on both sides ("Kramer vs. Kramer" stays a title)
    ('hot tea vs tea bags', '("hot tea" AND "tea bags")'),
    ('Kramer vs. Kramer', '"Kramer vs. Kramer"'),
])
def test_rules45_not_both_said_otherwise_learners_asks_and_adjectives(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # greetings and thanks in the writer's language; "tell me details of X"; "Please help."; "Used is ok."
    ('Hello, I need the tram map for Sundays but without the night trams please. Dziekuje',
     '("the tram map for Sundays" AND NOT "the night trams")'),
    ('Assalam o alaikum, kindly tell me details of the student rail card', '"the student rail card"'),
    ('I want to know about boiler grants or insulation grants. Please help.', '("boiler grants" OR "insulation grants")'),
    ('Looking for a Leica M6 or a Nikon FM2. Used is ok.', '("Leica M6" OR "Nikon FM2")'),
    # where the writer expects the thing to be; what the writer has read already, after an exclusion
    ('Do you have Ming celadon bowls in your collection?', '"Ming celadon bowls"'),
    ('Japanese woodblock prints, apart from Hokusai who I studied already', '("Japanese woodblock prints" AND NOT "Hokusai")'),
    ('tariff changes, nothing about the price cap please ive read it', '("tariff changes" AND NOT "the price cap")'),
    # "not through / via Y"; "anything goes unless it's got Y"
    ('renew a parking permit online not through the council office', '("renew a parking permit online" AND NOT "the council office")'),
    ("pentax 67 body, anything goes unless it's got fungus", '("pentax 67 body" AND NOT "fungus")'),
])
def test_rules46_greetings_holdings_and_reasons(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a text that is one "no" phrase names a thing; "no X" alone still excludes
    ('no dig vegetable beds', '"no dig vegetable beds"'),
    ('NO WIN NO FEE SOLICITORS', '"NO WIN NO FEE SOLICITORS"'),
    ('no spoilers', 'NOT "spoilers"'),
    # questions of one thing: whether and when it is on, why it does something, what happens, where to book it
    ('Is the community allotment scheme still open?', '"the community allotment scheme"'),
    ('what time does the farmers market open', '"the farmers market"'),
    ('is there windscreen cover on my policy?', '"windscreen cover"'),
    ('why is my fig tree dropping leaves', '"fig tree dropping leaves"'),
    ('what happens if my tenant stops paying rent', '"my tenant stops paying rent"'),
    ('where can I book the beginners pottery course', '"the beginners pottery course"'),
    ('does anyone know if the club has a tandem to hire', '"tandem to hire"'),
    ('any cheap flights to Krakow in march??', '"cheap flights to Krakow in march"'),
    # learners' asks and greetings; what the writer asks a body to fund; a closing reference number
    ('I would like ask is there bursary for mature students?', '"bursary for mature students"'),
    ('Please information about evening courses in Italian', '"evening courses in Italian"'),
    ('How I can get refund for cancelled ticket?', '"refund for cancelled ticket"'),
    ('hola, I search wooden toys for toddler, you have them?', '"wooden toys for toddler"'),
    ('Buongiorno, seeds of basil genovese please. Grazie mille, Marco', '"seeds of basil genovese"'),
    ('Dear,\nI would like to know if the trust is funding community theatre projects.\nKind regards,\nAnna',
     '"community theatre projects"'),
    ('Hello, my order arrived damaged. How I can get a replacement lamp shade? Order number 77310.',
     '"replacement lamp shade"'),
    # an opening "some" / "all" after an ask; reasons after an exclusion; what the writer has done, after the ask
    ('Please pull all invoices from the catering supplier', '"invoices from the catering supplier"'),
    ("Hello, I'm after some drought tolerant grasses, but nothing invasive please as we back onto a nature reserve.",
     '("drought tolerant grasses" AND NOT "invasive")'),
    ('walking boots for wide feet, not in the sale section, I have enough of those',
     '("walking boots for wide feet" AND NOT "the sale section")'),
    ("Could you find reviews of standing desks? I've already tried the Flexispot one, so please leave that out.",
     '("standing desks" AND NOT "the Flexispot")'),
    # a search string's "no" before an adjective and its noun, or a code before "pls"
    ('wedding venues near Bath no religious ceremonies', '("wedding venues near Bath" AND NOT "religious ceremonies")'),
    ('cycle routes under 30 miles no A30 pls', '("cycle routes under 30 miles" AND NOT "A30")'),
    ('best no bake cheesecake', '"best no bake cheesecake"'),
    # services and products named with "and"
    ('weed and feed for clay soil', '"weed and feed for clay soil"'),
])
def test_rules47_questions_of_one_thing_learners_and_no_phrases(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a lost-property desk's asks: the thing
    ('has anyone handed in a green scarf?', '"green scarf"'),
    ('has a silver bracelet been handed in', '"silver bracelet"'),
    # verdicts on the alternatives
    ('either a beagle or a spaniel, whatever you have', '("beagle" OR "spaniel")'),
    ("vegetable samosas or onion bhajis, either's fine", '("vegetable samosas" OR "onion bhajis")'),
    # generic kinds: a recipe, a thesis, a guide to; asks: "kindly share", "help with", "what happens at"
    ('Kindly share the recipe for rava dosa. Kindly revert.', '"rava dosa"'),
    ('Hola, I search a recipe of gazpacho without cucumber. Muchas gracias, Ana', '("gazpacho" AND NOT "cucumber")'),
    ('a thesis about river restoration in the Alps', '"river restoration in the Alps"'),
    ('a guide to renting out a spare room', '"renting out a spare room"'),
    ('help with council tax arrears', '"council tax arrears"'),
    ('what happens at a tribunal hearing?', '"tribunal hearing"'),
    ('recipes for sourdough bread but not rye', '("recipes for sourdough bread" AND NOT "rye")'),
    # fixed phrases holding "no" / "and"
    ('no bake flapjacks but no honey', '("no bake flapjacks" AND NOT "honey")'),
    ('bubble and squeak cakes', '"bubble and squeak cakes"'),
    ('share prices in Europe', '"share prices in Europe"'),
])
def test_rules48_lost_property_verdicts_and_generic_kinds(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # two compared topics and their common ground after a link: three topics
    ('aspirin vs clopidogrel for stroke prevention', '("aspirin" AND "clopidogrel" AND "stroke prevention")'),
    ('bike vs tram from Zurich to Basel', '("bike" AND "tram" AND "Zurich to Basel")'),
    ('Locke versus Rousseau on property', '("Locke" AND "Rousseau" AND "property")'),
    ('lidocaine compared with bupivacaine for dental blocks', '("lidocaine" AND "bupivacaine" AND "dental blocks")'),
    # between names, the first lower-case word after the second name starts the common ground
    ('Rust vs Go 1.22 compile times', '("Rust" AND "Go 1.22" AND "compile times")'),
    # a plain lower-case "vs" between names compares; a title keeps its "vs." or the same word on both sides
    ('PEP vs PrEP', '("PEP" AND "PrEP")'),
    ('Kramer vs. Kramer', '"Kramer vs. Kramer"'),
    ('Veggies vs. Cancer', '"Veggies vs. Cancer"'),
    # not a time, not Latin, not a claim's "when compared with"
    ('cats vs dogs for 2 weeks', '("cats" AND "dogs for 2 weeks")'),
    ('cells vs organoids in vitro', '("cells" AND "organoids in vitro")'),
    # a second link that starts no common ground leaves the comparison as it was
    ('wages compared with prices by region', '"wages compared with prices by region"'),
])
def test_rules49_comparisons_and_their_common_ground(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a texted "need X", and "omg" before it
    ('need wide fit wellies size 6', '"wide fit wellies size 6"'),
    ('omg need either rose or peony bouquets', '("rose" OR "peony bouquets")'),
    ('need for cognition scale', '"need for cognition scale"'),
    ('NEED A 3 BED BUNGALOW WITH GARAGE', '"3 BED BUNGALOW WITH GARAGE"'),
    # exclusions: "save for" a name, "n not", "disregarding the section on", "not from", "not held at", "near"
    ('vintage pens save for Parker', '("vintage pens" AND NOT "Parker")'),
    ('how to save for a mortgage deposit', '"save for a mortgage deposit"'),
    ('wool socks thats not itchy n not beige', '("wool socks" AND NOT "itchy" AND NOT "beige")'),
    ('BIRD FEEDERS NOT FROM EBAY', '("BIRD FEEDERS" AND NOT "EBAY")'),
    ('quiz nights not held at the Crown', '("quiz nights" AND NOT "the Crown")'),
    ('Please provide your complaints procedure, disregarding the section on refunds.',
     '("complaints procedure" AND NOT "refunds")'),
    ("camping kit - stove, tent pegs - but not a kettle we've got plenty",   # rules-77: a dash ends a term
     '("camping kit" AND "stove" AND "tent pegs" AND NOT "kettle")'),
    # formal asks: "I request a copy of", "Please advise on"
    ('Dear Sir,\nI request a copy of your tariff for boiler servicing, not including landlord certificates.\nYours faithfully,\nJ. Reed',
     '("tariff for boiler servicing" AND NOT "landlord certificates")'),
    ('Please advise on the evidence needed for a flight delay claim.', '"the evidence needed for a flight delay claim"'),
    # a yes/no question typed without its "?"; a question of a thing held
    ('is nuclear power safer than coal', '"nuclear power safer than coal"'),
    ('Is working from home more productive or not', '"Is working from home more productive or not"'),
    ('is the goblet of fire first edition in the library?', '"the goblet of fire first edition"'),
    ('are the Lego Technic sets from 1985 on display anywhere', '"the Lego Technic sets from 1985"'),
])
def test_rules49_texted_needs_exclusions_and_questions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a heading, then two compared topics: the heading is a topic of its own
    ('wood stoves: cast iron vs steel', '("wood stoves" AND "cast iron" AND "steel")'),
    ('Pensions - defined benefit versus defined contribution', '("Pensions" AND "defined benefit" AND "defined contribution")'),
    ('Question: tea vs coffee', '("tea" AND "coffee")'),
    # a capitalised "Not" after two capitalised words is a title's; after one word of a place it excludes
    ('Eat Pray Not Love tote bag', '"Eat Pray Not Love tote bag"'),
    ('Hearts Minds Not Wallets poster, not the framed print', '("Hearts Minds Not Wallets poster" AND NOT "the framed print")'),
    ('ferries to Ireland Not Wales', '("ferries to Ireland" AND NOT "Wales")'),
    # commas after two alternatives add what they share, one or several
    ('kayaks or canoes, inflatable, two-person', '(("kayaks" OR "canoes") AND "inflatable" AND "two-person")'),
    ('bulbs, corms or tubers', '("bulbs" OR "corms" OR "tubers")'),
    # a topic of three words or more, then two single words: its kinds
    ('loft insulation grants for older homes, full or partial', '("loft insulation grants for older homes" AND ("full" OR "partial"))'),
    ('cake decorating, piping or fondant', '("cake decorating" OR "piping" OR "fondant")'),
    ('nitrate leaching from wheat, barley or oats', '("nitrate leaching" AND ("wheat" OR "barley" OR "oats"))'),
    # "or similar", "or equivalent": the writer's latitude, no alternative
    ('a Thule roof box or similar, not the 300 litre model', '("Thule roof box" AND NOT "the 300 litre model")'),
    ('Makita drill driver or equivalent', '"Makita drill driver"'),
    ('Brompton or similar folding bikes', '("Brompton" OR "similar folding bikes")'),
    # a correction's "no" before "not"
    ('no, not the 2015 edition. The revised Highway Code', '("The revised Highway Code" AND NOT "the 2015 edition")'),
    ('no not the paperback, the hardback of Wolf Hall', '(NOT "the paperback" AND "the hardback of Wolf Hall")'),
    ('no smoking policies in prisons', '"no smoking policies in prisons"'),
    # an excluded place or time keeps no preposition, the topic's own "in" or not
    ('screen time in toddlers, not in teenagers', '("screen time in toddlers" AND NOT "teenagers")'),
    ('hedgehog rescues in Kent but not in Sussex', '("hedgehog rescues in Kent" AND NOT "Sussex")'),
    # degree theses and dissertations are document kinds
    ('PhD thesis on peat bog restoration', '"peat bog restoration"'),
    ('masters dissertations about tidal energy, not wave power', '("tidal energy" AND NOT "wave power")'),
])
def test_rules50_headings_lists_corrections_and_exclusions(text, expr):
    assert canonical(translate_rules(text)) == expr


@pytest.mark.parametrize("text, expr", [
    # a capital OR between lower-case words binds the words beside it, as many as the other side has
    ('cordless OR corded hedge trimmers', '(("cordless" OR "corded") AND "hedge trimmers")'),
    ('solar panel output winter OR summer', '("solar panel output" AND ("winter" OR "summer"))'),
    ('freshwater aquarium heaters OR chillers, no glass ones',
     '("freshwater aquarium" AND ("heaters" OR "chillers") AND NOT "glass")'),
    ('fossil fuels OR renewables in Germany', '(("fossil fuels" OR "renewables") AND "Germany")'),   # two words
    ('opioid addiction OR opioid use disorder', '("opioid addiction" OR "opioid use disorder")'),    # whole
    ('hydro OR wind power, NOT nuclear', '("hydro" OR "wind power") AND NOT "nuclear"'),   # search syntax of its own
    # a lower-case "or" only between numbers or two measures of one kind
    ('roofing nails 2 inch or 3 inch', '("roofing nails" AND ("2 inch" OR "3 inch"))'),
    ('python 3.11 or python 3.12 release notes', '(("python 3.11" OR "python 3.12") AND "release notes")'),
    ('tire pressure sensor 315mhz or 433mhz', '("tire pressure sensor" AND ("315mhz" OR "433mhz"))'),
    ('galaxy s23 or galaxy s23 ultra cases', '("galaxy s23" OR "galaxy s23 ultra cases")'),
    ('milk or peanut butter', '("milk" OR "peanut butter")'),
    # counts and bounds: "N or more", "two or three" before a noun are no alternatives
    ('houses with 4 or more bedrooms in Leeds', '"houses with 4 or more bedrooms in Leeds"'),
    ('firms with 50 or fewer staff', '"firms with 50 or fewer staff"'),
    ('three or four day walking routes in Snowdonia', '"three or four day walking routes in Snowdonia"'),
    ('cats or dogs for allergy sufferers', '(("cats" OR "dogs") AND "allergy sufferers")'),
    # a question about the writer's own task: the task ("can u find anything on X" still asks for documents)
    ('Can we bring a tent on the ferry to Skye?', '"bring a tent on the ferry to Skye"'),
    ('should i repot a cactus in winter', '"repot a cactus in winter"'),
    ('do I need to register a drone under 250g', '"register a drone under 250g"'),
    ('can u find anything on medieval guilds', '"medieval guilds"'),
    ('Can I Kick It remix', '"Can I Kick It remix"'),
    # "which is better, A or B?": two compared topics (and what they are compared for)
    ('Which one is safer, Uber or Lyft', '("Uber" AND "Lyft")'),
    ('which is better for hair, argan oil or coconut oil', '("argan oil" AND "coconut oil" AND "hair")'),
    # more document kinds, hedges at the end of a term, "w/ no"
    ('ebooks about interior design', '"interior design"'),
    ('pics of the 1966 World Cup final', '"the 1966 World Cup final"'),
    ('preprints on protein folding, not AlphaFold', '("protein folding" AND NOT "AlphaFold")'),
    ('bus routes to the airport, night buses ideally', '("bus routes to the airport" AND "night buses")'),
    ('vegan cheese, cashew-free if possible', '("vegan cheese" AND "cashew-free")'),
    ('tents w/ no fibreglass poles', '("tents" AND NOT "fibreglass poles")'),
    # a refusal first, then what is wanted (not "I don't want to ...": a task)
    ("i dont want horror, i want comedy films", '("comedy films" AND NOT "horror")'),
    ("We don't need hotels. We'd like hostels in Porto", '("hostels in Porto" AND NOT "hotels")'),
    ("I don't want cats, I want dogs or rabbits", '(("dogs" OR "rabbits") AND NOT "cats")'),
    ("I don't want to pay tax on my pension, what are the options",
     '"I don\'t want to pay tax on my pension, what are the options"'),
])
def test_rules51_keyword_alternatives_counts_and_own_tasks(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # a title that opens with "And" / "Or" keeps it (a leading lower-case or lone connective is still dropped)
    ('And the Band Played On', '"And the Band Played On"'),
    ('reviews of And Then There Were None', '"And Then There Were None"'),
    ('And Python tutorials', '"Python tutorials"'),
    # alternatives between comma-separated fields: the comma after them ends them
    ('trail running shoes with a rock plate, Hoka or Altra, wide fit',
     '("trail running shoes with a rock plate" AND ("Hoka" OR "Altra") AND "wide fit")'),
    ('plums, damsons or greengages, for jam', '(("plums" OR "damsons" OR "greengages") AND "for jam")'),
    # pipes between fields, one of which has its own "or": each field is a group (plain pipes are still "or")
    ('nurse | ICU or ER | nights, not agency', '("nurse" AND ("ICU" OR "ER") AND "nights" AND NOT "agency")'),
    ('sourdough | rye | spelt', '("sourdough" OR "rye" OR "spelt")'),
    # an error message as printed: its colon stays, its "not" is the message's, its own bracket too (not an aside)
    ('ValueError: not enough values to unpack', '"ValueError: not enough values to unpack"'),
    ('npm ERROR: code ELIFECYCLE (exit status 1), windows only, not mac',
     '("npm ERROR: code ELIFECYCLE (exit status 1)" AND "windows" AND NOT "mac")'),
    ('KeyError: user_id in the billing job (not the cron one)',
     '("KeyError: user_id in the billing job" AND NOT "the cron")'),
    # courts and judges are authorities whose sayings are the documents
    ('what do judges say about sentencing of first offenders', '"sentencing of first offenders"'),
    # the writer's own plight after the topic
    ('fridge making a buzzing noise what should i do', '"fridge making a buzzing noise"'),
    ('flooded basement what do i do now pls help', '"flooded basement"'),
    ('cracked phone screen, what now', '"cracked phone screen"'),
    ('"tea," AND "coffee"', '("tea," AND "coffee")'),     # a quoted term keeps its comma ('" , "' too)
    ('" , "', '","'),
    # a court's or a forum's documents opening the request (not counts of cases, not an excluded kind of case)
    ('cases involving noise complaints against pubs', '"noise complaints against pubs"'),
    ('threads about sourdough starters that smell of acetone', '"sourdough starters that smell of acetone"'),
    ('cases of dengue in Brazil', '"cases of dengue in Brazil"'),
    ('tenancy deposit disputes, excluding cases involving students',
     '("tenancy deposit disputes" AND NOT "cases involving students")'),
])
def test_rules52_titles_fields_plights_and_cases(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # a lower-case keyword string, then one word as the other alternative: the string before the last word is shared
    ('garden shed felt roof repair torn or leaking', '("garden shed felt roof repair" AND ("torn" OR "leaking"))'),
    ('air fryer cod or haddock', '("air fryer" AND ("cod" OR "haddock"))'),
    ('olive oil or butter', '("olive oil" OR "butter")'),                # two words before "or" stay
    ('help fixing my sink or toilet', '("help fixing my sink" OR "toilet")'),   # the noun goes with its "my"
    # models and codes after what they are of
    ('Dell XPS 13 9310 or 9315', '("Dell XPS 13" AND ("9310" OR "9315"))'),
    ('mountain bike Deore M6100 or SLX M7100', '("mountain bike" AND ("Deore M6100" OR "SLX M7100"))'),
    ('Nothing Phone 2a or Pixel 8a', '("Nothing Phone 2a" OR "Pixel 8a")'),   # two products
    # "not using X" excludes X; "A vs B difference(s)" compares A and B
    ('sourdough bread without using commercial yeast', '("sourdough bread" AND NOT "commercial yeast")'),
    ('tea vs coffee differences', '("tea" AND "coffee")'),
    ('gender pay difference', '"gender pay difference"'),
])
def test_rules53_keyword_alternatives_codes_and_comparisons(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # keyword fragments over a sentence's end are a term each; abbreviations, "Wow!" and sentences with a clause stay
    ('Rent arrears. Housing association, NOT private landlord.',
     '("Rent arrears" AND "Housing association" AND NOT "private landlord")'),
    ('airport noise. effects on sleep. not military airfields.',
     '("airport noise" AND "effects on sleep" AND NOT "military airfields")'),
    ('thesis by supervisor Prof. Okonkwo in linguistics', '"thesis by supervisor Prof. Okonkwo in linguistics"'),
    ('explanations for the SETI Wow! signal', '"explanations for the SETI Wow! signal"'),
    ('Climate change is real. No one denies it.', '"Climate change is real. No one denies it"'),
    # the writer's own clause after an excluded topic
    ('whats good for a sore throat thats not lozenges i hate them', '("sore throat" AND NOT "lozenges")'),
    ('herbal sleep aid, valerian or chamomile, nothing with antihistamine in it as i drive at 5am',
     '("herbal sleep aid" AND ("valerian" OR "chamomile") AND NOT "antihistamine")'),
    # a question's "which" before its noun; "which is better" compares
    ('which antihistamines are safe in pregnancy', '"antihistamines are safe in pregnancy"'),
    ('Which shoes go with a navy suit? No brown please', '("shoes go with a navy suit" AND NOT "brown")'),
    ('Which papers compare solar panels and wind turbines?', '("solar panels" AND "wind turbines")'),
    # one "no" inside a lower-case keyword string excludes; "no" of a compound or a phrase does not
    ('condoms no latex', '("condoms" AND NOT "latex")'),
    ('marathon training beginners no keto diet', '("marathon training beginners" AND NOT "keto diet")'),
    ('best no bake cheesecake', '"best no bake cheesecake"'),
    ('point of no return', '"point of no return"'),
    ('sci-fi novels but no space opera', '("sci-fi novels" AND NOT "space opera")'),
    # a show's guests and prior-art questions
    ('episodes with Brene Brown on vulnerability or shame', '("Brene Brown" AND ("vulnerability" OR "shame"))'),
    ('interviews with Michelle Obama or Jill Biden', '("interviews" AND ("Michelle Obama" OR "Jill Biden"))'),
    ('Is there already a patent for a kettle that tells you by voice when the water reaches tea temperature?',
     '"kettle that tells you by voice when the water reaches tea temperature"'),
    ('has anyone patented a self-cooling pillow', '"self-cooling pillow"'),
])
def test_rules54_fragments_own_clauses_which_questions_and_keyword_no(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # an ask whose topic is a pronoun takes the sentence before it; "Any help appreciated" asks for nothing
    ('I am retired engineer from Poland and very interest in corrosion of reinforced concrete bridges in coastal '
     'climate. Please can you show me the articles about this.',
     '"I am retired engineer from Poland and very interest in corrosion of reinforced concrete bridges in coastal '
     'climate"'),
    ("Hello! My daughter (she's 14) is doing a science fair project on whether plants grow better with music. Are "
     "there any real studies on that?? Thank you so much",
     '"My daughter (she\'s 14) is doing a science fair project on whether plants grow better with music"'),
    # a yes/no question's closing "or not" negates nothing; without the "?" a whether-question stays whole
    ("Should I get a flu jab or not?", '"get a flu jab"'),
    ("Can I freeze cooked rice or not?", '"freeze cooked rice"'),
    ("Do dogs dream or not?", '"dogs dream"'),
    ("Is remote work more productive than office work or not",
     '"Is remote work more productive than office work or not"'),
    ("to be or not to be", '"to be or not to be"'),
    # a builder's skip: an opening "skip" that would leave nothing wanted is the noun
    ("skip permit for the road outside my house - not trade waste",
     '("skip permit for the road outside my house" AND NOT "trade waste")'),
    ("skip bags - no rubble", '("skip bags" AND NOT "rubble")'),
    # a request that ends "40 of them" is no pronoun ask
    ("Neighbour lent us tarps for now. What we really need is box profile roof sheets, 3m, anthracite, 40 of them.",
     '("box profile roof sheets" AND "3m" AND "anthracite" AND "40 of them")'),
])
def test_rules55_pronoun_asks_take_the_topic_before_them(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # a phrase shared by alternatives after "near", "about", "close to": the link goes with the phrase
    ("manure spreading rules near rivers or streams", '("manure spreading rules" AND ("rivers" OR "streams"))'),
    ("line cook OR prep cook OR dishwasher near 60614", '(("line cook" OR "prep cook" OR "dishwasher") AND "60614")'),
    ("cafes close to Leeds or York", '("cafes" AND ("Leeds" OR "York"))'),
    ("podcasts in easy French about culture or cooking, not politics",
     '("easy French" AND ("culture" OR "cooking") AND NOT "politics")'),
    # a trailing lower-case "podcast(s)" names the kind of document, not the topic
    ("true crime podcasts not about serial killers", '("true crime" AND NOT "serial killers")'),
    ("mental health podcasts in Hindi or Urdu", '("mental health" AND ("Hindi" OR "Urdu"))'),
    ("Dungeons and Dragons actual play podcast", '"Dungeons and Dragons actual play"'),
    # ... unless the podcast is the topic, or the word is a title's
    ("advertising on podcasts", '"advertising on podcasts"'),
    ("how to start a podcast", '"start a podcast"'),
    ("short podcasts", '"short podcasts"'),
    ("Not Another Politics Podcast", '"Not Another Politics Podcast"'),
    ('"true crime podcasts"', '"true crime podcasts"'),
    # "near" as an adjective links nothing; an excluded podcast stays a podcast (from a review of rules-58)
    ("imaging in the near infrared or visible range", '("imaging" AND ("the near infrared" OR "visible range"))'),
    ("plans for the near future or next year", '("plans" AND ("the near future" OR "next year"))'),
    ("news about elections excluding political podcasts", '("elections" AND NOT "political podcasts")'),
    ("apple podcasts", '"apple podcasts"'),
    # a search engine's minus keeps its meaning where a word looks like an auxiliary ("can"), not before a capital
    ("beverage can resealable lid -crown -cork", '("beverage can resealable lid" AND NOT "crown" AND NOT "cork")'),
])
def test_rules58_shared_links_and_podcast_kinds(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # a capitalised "Plus" after a name or a number is part of it; a "plus" with nothing after it is a word
    ("Disney Plus or Netflix", '("Disney Plus" OR "Netflix")'),
    ("disney plus or netflix", '("disney plus" OR "netflix")'),
    ("iPhone 15 Plus cases", '"iPhone 15 Plus cases"'),
    ("diet plus exercise", '("diet" AND "exercise")'),
    ("vitamin C Plus zinc", '("vitamin C" AND "zinc")'),   # a single capital letter is no name
    # names of three capitalised words after a link are alternatives sharing the head, not titles
    ("status match program for Star Alliance Gold or SkyTeam Elite Plus",
     '("status match program" AND ("Star Alliance Gold" OR "SkyTeam Elite Plus"))'),
    ("convict transportation to Tasmania or New South Wales",
     '("convict transportation" AND ("Tasmania" OR "New South Wales"))'),
    # a cry for help before the request asks for nothing
    ("pls help, croup in toddlers at night", '"croup in toddlers at night"'),
    ("HELP!!! boiler pressure dropping", '"boiler pressure dropping"'),
    ("Please help: sourdough starter smells of acetone", '"sourdough starter smells of acetone"'),
    ("Help desk software", '"Help desk software"'),
    ("Hi, pls help, croup in toddlers at night", '"croup in toddlers at night"'),   # after a greeting too
    ("Hello! Please help: my dog ate grapes", '"my dog ate grapes"'),
    # an ask that names nothing is no topic: the sentence before it is read
    ("I need newspaper reports on the collapse of Lehman Brothers, but not opinion columns. Could you point me in "
     "the right direction?", '("newspaper reports on the collapse of Lehman Brothers" AND NOT "opinion columns")'),
    ("I need info on knee surgery recovery. Can you help?", '"knee surgery recovery"'),
    ("vitamin D and bone health. Any suggestions?", '("vitamin D" AND "bone health")'),
    ("Can you help?", '"help"'),   # alone it is all there is (as before)
    # sign-offs: "With regards," and its name, a name after "Thank you very much.", a closing "thanks x"
    ("sodium-ion batteries for grid storage\nWith regards,\nR. Kulkarni", '"sodium-ion batteries for grid storage"'),
    ("hip fracture in elderly people. Thank you very much. Klaus", '"hip fracture in elderly people"'),
    ("dance course, salsa or bachata, but not tango, thanks x",
     '(("dance course" OR "salsa" OR "bachata") AND NOT "tango")'),
])
def test_rules59_plus_names_and_cries_for_help(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


def test_rules60_not_interested_about():
    # second-language "not interested about / on" excludes as "not interested in" does (writer 63)
    got = canonical(translate_rules("I search informations about the effect of air pollution on premature births "
                                    "in big cities of China. I am not interested about animal studies."))
    assert got == canonical(parse('"the effect of air pollution on premature births in big cities of China" '
                                  'AND NOT "animal studies"'))


@pytest.mark.parametrize("text, expr", [
    # from a review of rules-59/60: "tia" is a topic (a transient ischaemic attack), a song may be called "thank you
    # very much"; "about 3D printers" and "too near the motorway" link; "Moto G Plus" is a name; an empty ask after
    # an exclusion sentence of its own is left out too
    ("aspirin after tia", '"aspirin after tia"'),
    ("difference between stroke and tia", '("stroke" AND "tia")'),
    ("songs called thank you very much", '"songs called thank you very much"'),
    ("story for children age 6 in french or in simple english, thank you very much",
     '("children age 6" AND ("french" OR "simple english"))'),   # ("story for": a document kind)
    ("blogs about 3D printers or laser cutters", '("blogs" AND ("3D printers" OR "laser cutters"))'),
    ("houses too near the motorway or railway", '("houses" AND ("the motorway" OR "railway"))'),
    # from a review of these: closings typed without a comma go too, "many thanks" whole; a title keeps its words
    ("papers on stroke thanks in advance", '"stroke"'),
    ("papers on stroke many thanks", '"stroke"'),
    ("songs called many thanks", '"songs called many thanks"'),
    ("walks of around 5 km or 10 km", '("walks of around 5 km" OR "10 km")'),   # a quantity: no link
    ("Could you help? Not in London though.", '("help" AND NOT "London")'),     # an exclusion alone is no topic
    ("Moto G Plus battery replacement", '"Moto G Plus battery replacement"'),
    ("Info on dog walking jobs. Not in London though. Any suggestions?", '("dog walking jobs" AND NOT "London")'),
])
def test_rules60_review_cases(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


def test_rules55_any_help_appreciated_is_no_ask():
    got = canonical(translate_rules("Our tutor asked us to find evidence on pressure ulcer prevention in elderly "
                                    "patients. Any help appreciated, thanks!"))
    assert "pressure ulcer prevention in elderly patients" in got and "help appreciated" not in got


@given(st.lists(st.sampled_from(["Rent", "arrears", "housing", "Prof.", "Dr.", "e.g.", "Wow!", "it", "is", "x.",
                                 "12.", "etc.", "no", "sleep?", "Noise"]), min_size=1, max_size=12))
def test_term_sentences_give_back_the_words(words):
    from itlr_gpu.translate.rules.pipeline import _term_sentences

    text = " ".join(words)
    parts = _term_sentences(text)
    # every part is a piece of the text in order, and only sentence marks and blanks are lost between them
    assert re.sub(r"[\s.!?,;:]", "", "".join(parts)) == re.sub(r"[\s.!?,;:]", "", text)


def test_a_reading_with_more_terms_than_any_request_is_an_error_row():
    # one sentence repeated 2,000 times read as 6,001 terms (an AND of NOTs that overflowed float32 at search time):
    # an error row naming the count and what to do; a request's reading is untouched
    from itlr_gpu.translate.rules import MAX_RULE_TERMS

    rows = translate(["vaccines and autism or measles but not mumps. " * 2000, "diabetes but not obesity"],
                     translator="rules", cache=False)
    # (6,001 terms until rules-66; since rules-67 an exclusion ends with its sentence: 8,000)
    assert rows[0].expr is None and re.match(rf"the reading has \d{{1,2}},\d{{3}} terms \(at most {MAX_RULE_TERMS}\)",
                                             rows[0].error)
    assert rows[1].expr == '("diabetes" AND NOT "obesity")' and rows[1].error is None


@pytest.mark.parametrize("text, expr", [
    # a text that opens with a title holding an "and" (one capitalised word, "and", two capitalised words at least,
    # lower-case words after it); a pair of single names, a text all in title case, or a name later in the text
    # stay two topics
    ("Ratchet and Clank Rift Apart PC stutter fix (not the Steam Deck)",
     '("Ratchet and Clank Rift Apart PC stutter fix" AND NOT "the Steam Deck")'),
    ("Kirby and the Forgotten Land world 3 waddle dee locations",
     '"Kirby and the Forgotten Land world 3 waddle dee locations"'),
    ("Design and Access Statement template for householder applications",
     '"Design and Access Statement template for householder applications"'),
    ("Apple and Samsung patents", '"Apple and Samsung patents"'),
    # two single names joined by "and" before a lower-case word name one thing, anywhere in the text; not
    # adjectives, a case's parties, "both A and B", a verb or a function word after the "and"
    ("electronic Snakes and Ladders board game", '"electronic Snakes and Ladders board game"'),
    ("reception of the 1858 Darwin and Wallace paper", '"reception of the 1858 Darwin and Wallace paper"'),
    ("Ernst and Young layoffs but not Deloitte", '("Ernst and Young layoffs" AND NOT "Deloitte")'),
    ("Buddhist and Stoic views on death", '("Buddhist" AND "Stoic views on death")'),
    ("Roe v. Wade and Planned Parenthood v. Casey, but not Dobbs",
     '("Roe v. Wade" AND "Planned Parenthood v. Casey" AND NOT "Dobbs")'),
    ("gardening in Leeds and In season vegetables", '("gardening in Leeds" AND "In season vegetables")'),
    ("both Michigan and Fort robotic", '("Michigan" AND "Fort robotic")'),
    ("Coffee and Artery Function", '("Coffee" AND "Artery Function")'),
    ("Putin and Xi Jinping", '("Putin" AND "Xi Jinping")'),
    ("tenancy deposit disputes excluding Scotland and Northern Ireland",
     '("tenancy deposit disputes" AND NOT "Scotland" AND NOT "Northern Ireland")'),
    # numbers or versions side by side share the words around them
    ("Eurovision 1974 or 1975 full broadcast", '("Eurovision" AND ("1974" OR "1975") AND "full broadcast")'),
    ("Ottoman Empire or Byzantine Empire", '("Ottoman Empire" OR "Byzantine Empire")'),
    # kinds of documents and asks of an archive or a patent office
    ("documentaries on the Aberfan disaster, but not the 2016 anniversary coverage",
     '("the Aberfan disaster" AND NOT "the 2016 anniversary coverage")'),
    ("Is there existing prior art for using ultrasonic waves to detect ripeness in fruit?",
     '"using ultrasonic waves to detect ripeness in fruit"'),
    ("Tell me everything filed about vertical farming LED light recipes", '"vertical farming LED light recipes"'),
    ("Could you please run a prior-art search for collapsible drinking containers made of silicone?",
     '"collapsible drinking containers made of silicone"'),
    ("Examiner note: search for gripper fingers with variable stiffness. Exclude soft pneumatic actuators.",
     '("gripper fingers with variable stiffness" AND NOT "soft pneumatic actuators")'),
    ("Procter and Gamble patents on absorbent cores without superabsorbent polymer",
     '("Procter and Gamble" AND "absorbent cores" AND NOT "superabsorbent polymer")'),
    ("Supreme Court rulings on free speech", '"Supreme Court rulings on free speech"'),
    ("Is it worth switching from conventional to no-till for cotton on heavy clay?",
     '"switching from conventional to no-till for cotton on heavy clay"'),
    # questions typed without their "?", "why" and "how much" questions
    ("does chlorhexidine bathing reduce CLABSI in adult ICU", '"chlorhexidine bathing reduce CLABSI in adult ICU"'),
    ("do not disturb sign", '"do not disturb sign"'),
    ("why are swifts declining in European cities", '"swifts declining in European cities"'),
    ("why is pluto not a planet", '"pluto not a planet"'),   # (its "not" is the claim's)
    ("Why is it so cold in here?", '"Why is it so cold in here"'),
    ("how much does shoe rental cost for the day", '"shoe rental cost for the day"'),
    ("how much lime per acre for acidic pasture", '"lime per acre for acidic pasture"'),
    # a closing "or not?" after a clause of its own; greetings to a site's editors
    ("metformin withholding before contrast CT, still needed or not??",
     '("metformin withholding before contrast CT" AND "still needed")'),
    ("Hey wiki editors, is there a page for Thunderfury in WoW Classic? Not the retail version please",
     '("Thunderfury in WoW Classic" AND NOT "the retail version")'),
    # ... but the context before "Anything on X?" keeps its topic (rules-62, from an outside review)
    ("Patient on warfarin. Anything on cranberry juice interactions?",
     '("Patient on warfarin" AND "cranberry juice interactions")'),
    # compared topics: a digit-led code after "vs" is the second topic, the ground after "after"
    ("milking robot teat detection laser vs 3D camera", '("milking robot teat detection laser" AND "3D camera")'),
    ("iphone 14 vs 15", '"iphone 14 vs 15"'),
    ("restrictive transfusion vs liberal transfusion after cardiac surgery",
     '("restrictive transfusion" AND "liberal transfusion" AND "cardiac surgery")'),
])
def test_rules61_titles_with_and_archive_asks_and_unmarked_questions(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # a boss's or a registrar's ask, and a passive one, are asks ("my mum wants me to find a cheap flight to Rome")
    ("my boss wants me to find stuff on hyponatraemia correction rate", '"hyponatraemia correction rate"'),
    ("I was asked to find research on bed bugs", '"bed bugs"'),
    ("the government wants us to get rid of cars", '"the government wants us to get rid of cars"'),
])
def test_rules61_asks_made_for_someone_else(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # from an outside review of rules-61: words that look like a question's auxiliary, a qualifier that looks like
    # an owner's name, notes that are what is sought, a time that is the context of one side, a disclosure that is
    # the topic, an "is it worth" question typed without its "?"
    ("can bus protocol tutorial", '"can bus protocol tutorial"'),
    ("can opener electric for arthritis", '"can opener electric for arthritis"'),
    ("do loop in VBA example", '"do loop in VBA example"'),
    ("Do Androids Dream of Electric Sheep first edition", '"Do Androids Dream of Electric Sheep first edition"'),
    ("can the council refuse a dropped kerb", '"the council refuse a dropped kerb"'),
    ("Official reports on the Grenfell fire", '"Official reports on the Grenfell fire"'),
    ("NASA reports on Mars dust storms", '("NASA" AND "Mars dust storms")'),
    ("Release notes: Firefox 120", '("Release notes" AND "Firefox 120")'),   # rules-79: a colon ends a term
    ("coffee vs tea before bed", '("coffee" AND "tea" AND "before bed")'),
    ("disclosure of HIV status to sexual partners", '"disclosure of HIV status to sexual partners"'),
    ("Looking for earlier disclosures of a folding stroller", '"folding stroller"'),
    ("is it worth getting a dog or not", '"getting a dog"'),
    ("Is it worth learning Latin?", '"learning Latin"'),
    # "and Sons" names a firm; names before a lower-case noun of up to six words share it
    ("photos of the Holloway and Sons mill", '"the Holloway and Sons mill"'),
    ("Rab or Montane insulated jacket mens XL black", '(("Rab" OR "Montane") AND "insulated jacket mens XL black")'),
])
def test_rules62_review_of_rules61(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # writers 67 and 68's misses: a brand with "&" among alternatives, a case's "v" inside names, "A vs B, which is
    # better", sentence case before names, "anywhere except X", years side by side, "do you do X"
    ("Head & Shoulders or Nizoral for dandruff", '(("Head & Shoulders" OR "Nizoral") AND "dandruff")'),
    ("cases citing Donoghue v Stevenson or Caparo, except medical negligence",
     '("cases citing" AND ("Donoghue v Stevenson" OR "Caparo") AND NOT "medical negligence")'),
    ("athlete's foot cream vs spray, which is better??", '("athlete\'s foot cream" AND "spray")'),
    ("period pain - naproxen or mefenamic acid? which is stronger",
     '("period pain" AND "naproxen" AND "mefenamic acid")'),
    ("Flex Variable vs Fixed 12M v3 - which is cheaper for me", '("Flex Variable" AND "Fixed 12M v3")'),
    ("Journalism work experience BBC or Guardian, not sports desk",
     '("Journalism work experience" AND ("BBC" OR "Guardian") AND NOT "sports desk")'),
    ("jobs anywhere but London", '("jobs" AND NOT "London")'),
    ("anywhere but here lyrics", '"anywhere but here lyrics"'),
    ("carnival queen 1960s 1970s", '("carnival queen" AND ("1960s" OR "1970s"))'),
    ("between 1990 2000", '"between 1990 2000"'),
    ("do you do gift wrapping", '"gift wrapping"'),
    ("do you do it yourself", '"do you do it yourself"'),
])
def test_rules63_writers_67_and_68(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # from an outside review of rules-62 and rules-63
    ("Siemens patents on wind turbines", '("Siemens" AND "wind turbines")'),
    ("Early studies on penicillin resistance", '"Early studies on penicillin resistance"'),
    ("Is it really worth switching to no-till?", '"switching to no-till"'),
    ("Ward sister here. Anything on pressure ulcer prevention in ICU?",
     '("Ward sister here" AND "pressure ulcer prevention in ICU")'),
    ("ibuprofen vs paracetamol after surgery", '("ibuprofen" AND "paracetamol" AND "after surgery")'),
    ("work from anywhere except the office", '"work from anywhere except the office"'),
    ("work from home jobs", '"work from home jobs"'),
    ("can dogs eat grapes", '"dogs eat grapes"'),
    ("do cats get cold at night", '"cats get cold at night"'),
    ("Can Can dance history", '"Can Can dance history"'),
    ("how to do your own tax return", '"do your own tax return"'),
])
def test_rules64_review_of_rules62_and_63(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, not_a_term", [
    # the writer's chatter before names is no topic of its own; "Daughters" is no firm's last word (before a
    # comma: with a lower-case word straight after it the pair is one name, _pair_name_with_and)
    ("Help me choose Dell or HP", "Help me choose"),
    ("Thanks so much BBC or ITV", "Thanks so much"),
    ("Fathers and Daughters, relationship advice", "Fathers and Daughters"),
])
def test_rules64_no_term_of_chatter_or_false_firm(text, not_a_term):
    terms = re.findall(r'"((?:[^"\\]|\\.)*)"', canonical(translate_rules(text)))
    assert terms and not_a_term not in terms


@pytest.mark.parametrize("text, expr", [
    # writers 69 to 72's misses: a standard's roman part, codes after a comma list
    ("welding procdure qualification ISO 15614 or ASME IX pls",
     '("welding procdure qualification" AND ("ISO 15614" OR "ASME IX"))'),
    ("pull-off adhesion of coatings, D4541 or ISO 4624",
     '("pull-off adhesion of coatings" AND ("D4541" OR "ISO 4624"))'),
    # "X, not Y and Z" keeps its in-order reading, X AND NOT Y AND Z: the synthetic benchmark's renderer writes that
    # listing so (itlr_gpu.synthetic); three outside writers meant "not (Y and Z)" ("not Biff and Chip"), which only
    # the meaning tells apart (tried in rules-65 and taken back)
    ("articles discussing corn, not animal feed meal and grain",
     '("corn" AND NOT "animal feed meal" AND "grain")'),
    ("Stoicism for beginners, not Marcus Aurelius and not Ryan Holiday",
     '("Stoicism for beginners" AND NOT "Marcus Aurelius" AND NOT "Ryan Holiday")'),
])
def test_rules65_codes_and_excluded_pairs(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


def test_the_synthetic_renderer_reads_back_exactly():
    """Every phrasing of the synthetic benchmark's renderer (the demo's and the quality report's queries: "X, not Y
    and Z", "either X, or both Y and Z", "X but neither Y nor Z", ...) reads back to its template's expression for
    plain topic phrases: rules-65 read "X, not Y and Z" as one excluded pair and no test saw it."""
    import random

    from itlr_gpu import synthetic as S

    phrases = ["black holes", "jazz music", "origami paper folding", "coral reefs", "volcanic eruptions",
               "medieval castles", "honey bees", "solar panels", "chess openings", "sourdough bread"]
    templates = list(S.TEMPLATES_3) + S.chain_templates(range(2, 6)) + S.chain_templates(range(2, 5), op="OR")
    rng = random.Random(5)
    cases = []
    for template in templates:
        for _ in range(12):
            chosen = rng.sample(phrases, template.n_terms)
            cases.append((S.render_natural(template, chosen, rng), S.build_expr(template, chosen)))
    from itlr_gpu.query.ast import And, Not, Term

    def unordered(node) -> str:   # the same expression up to the order of AND / OR operands
        if isinstance(node, Term):
            return repr(node.text)
        if isinstance(node, Not):
            return "NOT " + unordered(node.child)
        op = " AND " if isinstance(node, And) else " OR "
        return "(" + op.join(sorted(unordered(c) for c in node.children)) + ")"

    wrong = [(text, canonical(translate_rules(text))) for text, gold in cases
             if unordered(translate_rules(text)) != unordered(gold)]
    assert len(cases) == 12 * len(templates) and not wrong, wrong[:3]


@pytest.mark.parametrize("text, expr", [
    # what is wanted after an exclusion's comma or sentence ("only Z", "just Z", "Z only") is wanted, not one more
    # excluded item (rules-66 excluded it: the reading reversed)
    ("hotels in Rome without breakfast, only city centre", '("hotels in Rome" AND NOT "breakfast" AND "city centre")'),
    ("hotels in Rome without breakfast, city centre only", '("hotels in Rome" AND NOT "breakfast" AND "city centre")'),
    ("gift card or voucher - neither physical nor posted, just email please",
     '(("gift card" OR "voucher") AND NOT "physical" AND NOT "posted" AND "email")'),
    ("no acrylic, just looking for chunky wool for a blanket", '(NOT "acrylic" AND "chunky wool for a blanket")'),
    # an exclusion ends with its sentence: the next fragment is wanted, an empty ask or a closing is no term
    ("hotels in Rome without breakfast. City centre only.", '("hotels in Rome" AND NOT "breakfast" AND "City centre")'),
    ("I would like a replacement, not a refund. How do I arrange this?", '("replacement" AND NOT "refund")'),
    ("coffee capsules, except Nestle. Saludos, Andres", '("coffee capsules" AND NOT "Nestle")'),
    # "but only if it covers Z", "as long as it mentions Z": Z beside the whole of the alternatives
    ("cats or dogs, as long as it mentions allergies", '(("cats" OR "dogs") AND "allergies")'),
    ("cats or dogs, but only if it covers allergies", '(("cats" OR "dogs") AND "allergies")'),
    ("cats or dogs, as long as it isn't about allergies", '(("cats" OR "dogs") AND NOT "allergies")'),
    # a comparison asked as a yes/no question, or with "which is better" after it
    ("Is cycling or swimming better for knee osteoarthritis?", '("cycling" AND "swimming" AND "knee osteoarthritis")'),
    ("Terraforming Mars vs Ark Nova which is better solo", '("Terraforming Mars" AND "Ark Nova" AND "solo")'),
    ("heat pump or gas boiler, which is cheaper to run", '("heat pump" AND "gas boiler")'),
    # a quoted name that holds a connective; a capitalised "Not" inside a clause opens a title
    ("how do i fix the 'not heating' problem on a Worcester Bosch combi boiler",
     '"fix the not heating problem on a Worcester Bosch combi boiler"'),
    ("the students' union and the teachers' lounge", '("the students\' union" AND "the teachers\' lounge")'),
    ("actual play shows like Not Another D&D Podcast", '"actual play shows like Not Another D&D Podcast"'),
    ("Which trails in Zion don't require a permit? Not Angels Landing obviously",
     '("trails in Zion don\'t require a permit" AND NOT "Angels Landing")'),
    # a typed emoticon is decoration, and before a capitalised word a sentence's end
    ("Looking for a game like Catan :) Thx, Priya", '"game like Catan"'),
    ("sci-fi novels ;) not Dune", '("sci-fi novels" AND NOT "Dune")'),
    ("landlord changin locks wivout notice wat do i do", '"landlord changin locks wivout notice"'),
    ("cookbooks but not Ottolenghi, I have them all", '("cookbooks" AND NOT "Ottolenghi")'),
])
def test_rules67_what_follows_an_exclusion_and_comparison_questions(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # from a review of rules-67: a capitalised "Not" after a noun still excludes; "XD" and "<3" are words
    ("hotels in paris Not London", '("hotels in paris" AND NOT "London")'),
    ("Adobe XD tutorials for beginners", '"Adobe XD tutorials for beginners"'),
    ("toys for babies <3 months old", '"toys for babies <3 months old"'),
    # a fragment after an exclusion's sentence that extends it is excluded too; a remark is no term
    ("papers on sepsis but no reviews. Editorials too.", '("sepsis" AND NOT "reviews" AND NOT "Editorials")'),
    ("thrillers but not Stephen King. Dean Koontz as well.",
     '("thrillers" AND NOT "Stephen King" AND NOT "Dean Koontz")'),
    ("hiking boots, not leather. Too heavy.", '("hiking boots" AND NOT "leather")'),
    # a comparison question needs its own subject and a ground without a connective; a chatter word is no ground
    ("Are there studies on cycling or swimming better for knee pain?",
     '(("cycling" OR "swimming") AND "better for knee pain")'),
    ("iphone or pixel which is better tbh", '"iphone or pixel which is better tbh"'),
    # a remark after an excluded thing goes; "as long as it doesn't mention" excludes
    ("chilli seeds hotter than scotch bonnet but not carolina reaper, i'm not insane",
     '("chilli seeds hotter than scotch bonnet" AND NOT "carolina reaper")'),
    ("squash seeds that store well over winter but not butternut, it never ripens here in Scotland",
     '("squash seeds that store well over winter" AND NOT "butternut")'),
    ("hip replacement rehab as long as it doesn't mention fractures", '("hip replacement rehab" AND NOT "fractures")'),
    ("2 large dogs welcome devon or dorset no extra pet fee",
     '("2 large dogs welcome" AND ("devon" OR "dorset") AND NOT "extra pet fee")'),
])
def test_rules68_review_of_rules67(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-69: "(I'm) not interested in X, only Y" is Y without X (it was one wanted phrase "not interested in X")
    ("not interested in reviews, only primary research on statins", '("statins" AND NOT "reviews")'),
    ("I'm not interested in reviews, only statin trials in the elderly", '("statin trials in the elderly" AND NOT "reviews")'),
    ("I don't want cats, I want dogs", '("dogs" AND NOT "cats")'),
    # a single-quoted name may hold a word's apostrophe
    ("the 'three strikes and you're out' law", '"the three strikes and you\'re out law"'),
])
def test_rules69_not_interested_first(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-70, from writers 77 and 78: after someone who ignores, "ignoring" is the verb; "no idea" excludes nothing
    ("black mould in rented flat, landlord ignoring repair requests",
     '("black mould in rented flat" AND "landlord ignoring repair requests")'),
    ("cheap flights ignoring budget airlines", '("cheap flights" AND NOT "budget airlines")'),
    ("lost jacket on the coach, no idea who to contact", '("lost jacket on the coach" AND "no idea who to contact")'),
    ("vegan recipes, no dairy", '("vegan recipes" AND NOT "dairy")'),
])
def test_rules70_agents_ignoring_and_no_idea(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-71, from writers 79 and 80: a capitalised "Neither ... Nor" after "about" is a title (lower case, or
    # opening the text, it still excludes both)
    ("any episode where Bill Bryson talks about Neither Here Nor There",
     '"episode where Bill Bryson talks about Neither Here Nor There"'),
    ("Neither Cats Nor Dogs", '(NOT "Cats" AND NOT "Dogs")'),
    ("neither cats nor dogs", '(NOT "cats" AND NOT "dogs")'),
    # either owner of the documents, the same topic (it was "Samsung" OR ("LG" AND topic))
    ("Samsung or LG patents on OLED burn-in compensation", '(("Samsung" OR "LG") AND "OLED burn-in compensation")'),
    ("Sony, Canon or Nikon reports about sensor dust", '(("Sony" OR "Canon" OR "Nikon") AND "sensor dust")'),
    ("NASA reports about dust storms", '("NASA" AND "dust storms")'),
    # a reason or a remark after an exclusion names nothing (it was excluded, or wanted)
    ("recalls of baby purees or teething biscuits, but not formula, since parents bring their own",
     '(("recalls of baby purees" OR "teething biscuits") AND NOT "formula")'),
    ("tent under 4 lbs. No Big Agnes or Nemo, had bad luck with both",
     '("tent under 4 lbs" AND NOT "Big Agnes" AND NOT "Nemo")'),
    ("spices recalled for lead, but not the applesauce pouches thing I already know about",
     '("spices recalled for lead" AND NOT "the applesauce pouches")'),
    ("Ukulele songbooks for kids - Disney or Frozen but not Moana we already have that one",
     '("Ukulele songbooks for kids" AND ("Disney" OR "Frozen") AND NOT "Moana")'),
    # "not the ..." after a question excludes (it was one term with the question)
    ("is the red hat in size L? not the kids version", '("the red hat in size L" AND NOT "the kids version")'),
    # "X only no Y" after a comma; "the only no fee card" is a name
    ("woodworking podcast, hand tools only no power tools", '("woodworking" AND "hand tools" AND NOT "power tools")'),
    ("the only no fee credit card", '"the only no fee credit card"'),
    # a suggestion with alternatives after the topic is wanted, its "or" its own (it was one more alternative)
    ("Red wine for lamb on Sunday, not too tannic, maybe a Rioja or a Cotes du Rhone?",
     '("Red wine for lamb on Sunday" AND NOT "too tannic" AND ("Rioja" OR "Cotes du Rhone"))'),
    ("hiking boots, maybe Salomon or Merrell", '("hiking boots" AND ("Salomon" OR "Merrell"))'),
])
def test_rules71_titles_owners_and_remarks(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-72, from writers 78 and 80: qualifiers after a topic's comma are its alternatives, not two more topics
    ("rain pants, men's or unisex, NOT Frogg Toggs",
     '("rain pants" AND ("men\'s" OR "unisex") AND NOT "Frogg Toggs")'),
    ("how to report bullying anonymously, online or by phone",
     '("report bullying anonymously" AND ("online" OR "by phone"))'),
    ("parking permits, paper or digital", '("parking permits" AND ("paper" OR "digital"))'),
    ("Byzantine art, mosaics or icons", '("Byzantine art" OR "mosaics" OR "icons")'),
    # an alternative with a link of its own: both keep theirs, the head is shared
    ("electric car charging on board or at the port", '("electric car charging" AND ("on board" OR "at the port"))'),
    ("sickle cell crisis pain management at home or in school",
     '("sickle cell crisis pain management" AND ("at home" OR "in school"))'),
    ("hotels in paris or in rome", '("hotels" AND ("paris" OR "rome"))'),
])
def test_rules72_qualifier_and_place_alternatives(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-73, from writers 81 and 82: "Which is <any comparative>, A or B?" compares A and B
    ("Which is sturdier second hand, a solid wood bed frame or an upholstered ottoman bed?",
     '("solid wood bed frame" AND "upholstered ottoman bed")'),
    ("Which is more reliable, Toyota or Honda?", '("Toyota" AND "Honda")'),
    # "doesnt matter which" typed without its apostrophe says nothing either
    ("looking for a cot or a crib, doesnt matter which, no drop side ones pls",
     '(("cot" OR "crib") AND NOT "drop side")'),
    # "I do not need information about X" excludes X
    ("guidance on payroll. I do not need information about pensions.", '("payroll" AND NOT "pensions")'),
    # alternatives that each open with "a" share what follows their comma ("A or In mice, B" stays a claim's list)
    ("a telescope or a planetarium projector, under £50", '(("telescope" OR "planetarium projector") AND "under £50")'),
    # a remark after an exclusion with a possessive subject names nothing
    ("funny movies for family night but no animated ones, my teens hate cartoons",
     '("funny movies for family night" AND NOT "animated")'),
])
def test_rules73_comparatives_and_remarks(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-74, from writers 83 and 84: a search-engine minus after a comma excludes (it was one more topic)
    ("dairy cow methane emissions, seaweed feed additives, -Asparagopsis",
     '("dairy cow methane emissions" AND "seaweed feed additives" AND NOT "Asparagopsis")'),
    ("E2f-1, -2", '("E2f-1" AND "2")'),
    # what the writer does not mind is neither wanted nor excluded (it was excluded)
    ("rickenbacker basses. Not bothered about colour but no refinished ones",
     '("rickenbacker basses" AND NOT "refinished")'),
    ("rickenbacker basses, not fussed about colour, no refinished ones", '("rickenbacker basses" AND NOT "refinished")'),
])
def test_rules74_minus_after_comma_and_indifference(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-74, from an outside review of rules-71 to rules-73: what those rounds read worse than rules-70 reads
    # as rules-70 did. Nouns in -er are no comparatives ("paper size" is asked for)
    ("What is the paper size, A4 or Letter?", '("the paper size" AND ("A4" OR "Letter"))'),
    # "I have it" goes only after an exclusion
    ("how do I know if I have it", '"know if I have it"'),
    # a reason needs a subject and a verb ("since his Twitter takeover" is a time); "because of" is a topic's
    ("flight cancellations, not refunds, because of weather",
     '("flight cancellations" AND NOT "refunds" AND "because of weather")'),
    # a "no" phrase with a reason after it still excludes (it is no name: "no claims bonus protection"; the reason
    # stays, as rules-70 read it: a reason without a subject is left alone)
    ("no hotels near the airport, because the noise", '(NOT "hotels near the airport" AND "because the noise")'),
    ("no claims bonus protection", '"no claims bonus protection"'),
    # three parallel items stay three; a list with the topic's own link stays a list
    ("a nurse or a doctor, a paramedic", '("nurse" OR "doctor" OR "paramedic")'),
    ("research by harvard, by mit or by stanford", '("research" AND ("harvard" OR "mit" OR "stanford"))'),
])
def test_rules74_review_of_rules71_to_73(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, words, excluded", [
    # (readings left as rules-70 had them; what matters is what they no longer do)
    ("I like Neither Coke Nor Pepsi, what else is there", "Coke", True),     # still excluded, no title
    ("not Canon, had no issues with Nikon though", "Nikon", False),          # the brand the writer likes kept
    ("Elon Musk news, excluding Tesla, since his Twitter takeover", "Twitter takeover", None),   # a time, kept
    ("is Paris expensive? not the hotels, the food", "the food", False),     # not excluded with the hotels
    ("I want only no bake desserts", "no bake desserts", False),             # "no bake" is no exclusion
])
def test_rules74_review_keeps(text, words, excluded):
    got = canonical(translate_rules(text))
    assert words in got
    if excluded is not None:
        assert bool(re.search(rf'NOT "[^"]*{re.escape(words)}', got)) == excluded


@pytest.mark.parametrize("text, not_this", [
    ("Alzheimer's or NIH studies on amyloid", '(("Alzheimer\'s" OR "NIH") AND "amyloid")'),
    ("cheap flights to London, maybe Paris or Amsterdam", '("cheap flights to London" AND ("Paris" OR "Amsterdam"))'),
    ("lost my cat, maybe stolen or run away", '("lost my cat" AND ("stolen" OR "run") AND "away")'),
])
def test_rules74_review_avoids(text, not_this):
    assert canonical(translate_rules(text)) != canonical(parse(not_this))


@pytest.mark.parametrize("text, expr", [
    # rules-75, from writers 85 and 86 (each reading below recurred in older writers' sets): ", please no X"
    # excludes (it was the wanted phrase "please no X")
    ("toddler clothes, please no character prints", '("toddler clothes" AND NOT "character prints")'),
    ("please no spoilers", 'NOT "spoilers"'),
    # "nothing from X" after a comma excludes
    ("snowsuit 12-18m, nothing from smoking homes", '("snowsuit 12-18m" AND NOT "smoking homes")'),
    # "Not asking about X" after a question, or in brackets, excludes X
    ("Can I bring my CPAP machine on board? Not asking about oxygen concentrators.",
     '("bring my CPAP machine on board" AND NOT "oxygen concentrators")'),
    ("luggage delayed (not asking about hotel costs)", '("luggage delayed" AND NOT "hotel costs")'),
    # "any year except X"; ", something else" after an exclusion; "there's enough of that" after one
    ("school logbooks from Elm Road Infants, any year except the 1970s",
     '("school logbooks from Elm Road Infants" AND NOT "the 1970s")'),
    ("itchy scalp - neither dandruff nor lice, something else", '("itchy scalp" AND NOT "dandruff" AND NOT "lice")'),
    ("books on bees, not honey, there's plenty on that", '("bees" AND NOT "honey")'),
])
def test_rules75_please_no_and_not_asking_about(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-75, from an outside review of rules-74: comparatives are a longer list ("bigger" had been left out)
    ("Which is bigger, Texas or Alaska?", '("Texas" AND "Alaska")'),
    # names of signs and "no" compounds stay names ("please" goes only after a separator; a "no" phrase is a name
    # unless a reason follows it)
    ("Please No Smoking sign printable", '"No Smoking sign printable"'),
    ("no code website builder, thanks", '"no code website builder"'),
    # "Not asking about X" opening a text excludes X (it had become the wanted phrase)
    ("Not asking about legality, what's the best VPN for Netflix",
     '(NOT "legality" AND "what\'s the best VPN for Netflix")'),
    # "we have that one" after an exclusion that opens its sentence; indifference never runs into what follows
    ("not Moana we already have that one", 'NOT "Moana"'),
    ("second hand sofa, not fussy about colour just not leather", '("second hand sofa" AND NOT "leather")'),
    # "as she went last year" is a reason whatever its tense ("since he left" is a time)
    ("city breaks, not Paris, as she went last year", '("city breaks" AND NOT "Paris")'),
    ("a laptop or a tablet, a refurbished one", '(("laptop" OR "tablet") AND "refurbished one")'),
    ("The Kinks vinyl, Something Else", '("The Kinks vinyl" AND "Something Else")'),
    # a title's own link stays ("Catan or Ticket to Ride"); a place after "from" is still shared
    ("Catan or Ticket to Ride", '("Catan" OR "Ticket to Ride")'),
    ("Gewürztraminer, Pinot Gris or Muscat from Alsace",
     '(("Gewürztraminer" OR "Pinot Gris" OR "Muscat") AND "Alsace")'),
])
def test_rules75_review_of_rules74(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, words", [
    # what the review found excluded that is not: a preference, a prefix's other words, a remark's wanted thing, what
    # follows a report of no answer
    ("vintage guitars, any decade but mainly 60s", "mainly 60s"),
    ("anti-inflammatory, -bacterial and -fungal properties of garlic", "bacterial"),
    ("vegetarian recipes, no tofu, there's plenty of lentils in the pantry", "lentils"),
    ("ordered on Amazon, nothing from the seller, refund options", "refund options"),
])
def test_rules75_review_not_excluded(text, words):
    got = canonical(translate_rules(text))
    assert words in got and not re.search(rf'NOT "[^"]*{re.escape(words)}', got)


@pytest.mark.parametrize("text, expr", [
    # rules-76, from a third outside review (582 requests, rules-70 against rules-75): the comparatives' longer
    # list only after "which", in lower case ("lower back pain", "Greater London" name a topic)
    ("What is lower back pain, muscle or kidney?", '("lower back pain" AND ("muscle" OR "kidney"))'),
    ("Which is the Greater London borough, Croydon or Watford?",
     '("the Greater London borough" AND ("Croydon" OR "Watford"))'),
])
def test_rules76_review_of_rules75(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, words, excluded", [
    # "X only no Y" only as the last clause of a word or two (the exclusion had run into what followed it)
    ("dentist, NHS only no private, near Leeds", "near Leeds", False),
    ("wifi only no cellular iPad mini", "iPad mini", False),
    # a command's flags are wanted; a reason stops at its clause; a "no" compound before a reason stays a name
    ("tar command flags, -x, -z, -f explained", "z", False),
    ("not Ryanair, because the baggage fees, cheap flights to Malaga", "cheap flights to Malaga", False),
    ("no fault divorce, because we both agree, how long does it take", "no fault divorce", False),
    # a report of no answer yet; a capitalised "Neither" after "watch" still excludes
    ("applied for a visa, nothing from the embassy", "the embassy", False),
    ("my kids watch Neither Netflix Nor YouTube, educational apps", "Netflix", True),
])
def test_rules76_review_readings(text, words, excluded):
    got = canonical(translate_rules(text))
    assert words in got and bool(re.search(rf'NOT "[^"]*{re.escape(words)}', got)) == excluded


@pytest.mark.parametrize("text, not_this", [
    # more of the same kind after a place or a short lower-case topic are not its narrowing
    ("hotels in rome, maybe florence or venice", '("hotels in rome" AND ("florence" OR "venice"))'),
    ("nike pegasus, maybe asics or brooks", '("nike pegasus" AND ("asics" OR "brooks"))'),
])
def test_rules76_review_avoids(text, not_this):
    assert canonical(translate_rules(text)) != canonical(parse(not_this))


@pytest.mark.parametrize("text, expr", [
    # a spaced dash ends a term: each side is read on its own and both are wanted
    ("garden shed insurance - storm damage to the roof", '"garden shed insurance" AND "storm damage to the roof"'),
    ("ferry timetable - winter sailings only, not summer", '"ferry timetable" AND "winter sailings" AND NOT "summer"'),
    ("vegan lasagne \u2013 cashew ricotta or tofu ricotta", '"vegan lasagne" AND ("cashew ricotta" OR "tofu ricotta")'),
    ("Romeo and Juliet \u2014 the Zeffirelli film", '"Romeo and Juliet" AND "the Zeffirelli film"'),
    # a question after the dash about what came before it names nothing
    ("boiler service - what does it include", '"boiler service"'),
    ("loft insulation grant - is it still open?", '"loft insulation grant"'),
    # readings that never ran over the dash stay as they were
    ("Gaming laptops - ASUS or Lenovo", '"Gaming laptops" AND ("ASUS" OR "Lenovo")'),
    ("urban gardening - ignore hydroponics", '"urban gardening" AND NOT "hydroponics"'),
    ("Hi there \u2014 do you have reports on venture debt?", '"venture debt"'),
    # a tokeniser's spaced hyphen inside a word is no dash
    ("Long - range transport of dust", '"Long range transport of dust"'),
    ("CTLA - 4 blockade in melanoma", '"CTLA 4 blockade in melanoma"'),
    ("mismatch repair - deficient tumours", '"mismatch repair deficient tumours"'),
    # what is got is the topic; "get" stays where it makes the task
    ("How do I get a parking permit for my street?", '"parking permit for my street"'),
    ("can I get a refund for a lost bus pass", '"refund for a lost bus pass"'),
    ("how do I get my money back from a seller", '"get my money back from a seller"'),
    ("how do I get the late fee reversed", '"get the late fee reversed"'),
    ("how to get rid of moss on a lawn", '"get rid of moss on a lawn"'),
    ("how to get pregnant after 40", '"get pregnant after 40"'),
])
def test_rules77_dash_segments_and_things_got(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


def test_rules77_prose_keeps_its_dashes():
    # a long text is prose: its dashes are its sentences' own, never a cut into wanted terms
    text = ("Allowing regulators to decide what may be said - or printed - is not something with a happy history, "
            "and the long record of censorship boards shows why the power tends to grow once it is granted to them")
    assert len(text) > 200
    terms = [t for t in re.findall(r'"([^"]*)"', canonical(translate_rules(text)))]
    assert not any(t.startswith(("or printed", "is not something")) for t in terms)


@pytest.mark.parametrize("text, expr", [
    # rules-78, from an outside review of rules-77: a dash that joins its two words is no break
    ("anti - inflammatory diet for arthritis", '"anti inflammatory diet for arthritis"'),
    ("Spanish - German phrasebook", '"Spanish German phrasebook"'),
    ("cheap Leeds - York train tickets", '"cheap Leeds York train tickets"'),
    ("second hand Rolls - Royce Silver Shadow", '"second hand Rolls Royce Silver Shadow"'),
    ("gym opening hours Mon - Fri", '"gym opening hours Mon Fri"'),
    ("nurse - patient ratios", '"nurse patient ratios"'),
    # the break stays where two topics meet
    ("heat pump grants - eligibility for flats", '"heat pump grants" AND "eligibility for flats"'),
    ("bomb damage maps WW1 \u2014 Hull, not Leeds", '"bomb damage maps WW1" AND "Hull" AND NOT "Leeds"'),
    # "get" stays where it is the task: removal, causatives, idioms, what is done to the thing
    ("how do I get my cat to stop scratching the sofa", '"get my cat to stop scratching the sofa"'),
    ("how do I get red wine out of a rug", '"get red wine out of a rug"'),
    ("how can I get hold of the council planning officer", '"get hold of the council planning officer"'),
    ("how do I get my boiler serviced quickly", '"get my boiler serviced quickly"'),
    ("how to get healthier after 50", '"get healthier after 50"'),
    ("what can I get my sister for her birthday", '"get my sister for her birthday"'),
])
def test_rules78_review_of_rules77(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-79: a colon between a topic and its facet ends a term, as a dash does
    ("coastal erosion: managed retreat, not sea walls", '"coastal erosion" AND "managed retreat" AND NOT "sea walls"'),
    ("Viking trade routes: Baltic amber", '"Viking trade routes" AND "Baltic amber"'),
    # a title's or a label's colon stays
    ("Attention Is Not All You Need: Pure Attention Loses Rank", '"Attention Is Not All You Need Pure Attention Loses Rank"'),
    ("Vitamin C: Separating fact from fiction", '"Vitamin C Separating fact from fiction"'),
    # a question's opening names nothing: "when is", "what time does", "how long is", "what counts as", "do you take"
    ("when is the deadline for the spring photography competition", '"the deadline for the spring photography competition"'),
    ("What time does the museum cafe close on Sundays?", '"the museum cafe close on Sundays"'),
    ("how long is the waiting list for allotments", '"the waiting list for allotments"'),
    ("what counts as a reasonable adjustment at work", '"reasonable adjustment at work"'),
    ("Do you take Visa or Mastercard?", '"Visa" OR "Mastercard"'),
    ("When Harry Met Sally soundtrack", '"When Harry Met Sally soundtrack"'),
    ("when is it too late to prune roses", '"when is it too late to prune roses"'),
    # a topic of three words or more, longer than each alternative after it, is their topic
    ("Bathroom extractor fans, ducted or inline, quiet", '"Bathroom extractor fans" AND ("ducted" OR "inline") AND "quiet"'),
    ("Norwegian knitting patterns, Selbu or Setesdal", '"Norwegian knitting patterns" AND ("Selbu" OR "Setesdal")'),
    ("garden office cabins, insulated or uninsulated", '"garden office cabins" AND ("insulated" OR "uninsulated")'),
    # a list of like items, names, claims, or a list asked for as such, keeps its shape
    ("otters, beavers or water voles", '"otters" OR "beavers" OR "water voles"'),
    ("The Kinks, Blur or Oasis", '"The Kinks" OR "Blur" OR "Oasis"'),
    ("anything on coastal flood defences, dune planting or saltmarsh restoration",
     '"coastal flood defences" OR "dune planting" OR "saltmarsh restoration"'),
])
def test_rules79_colons_question_openers_and_topics_before_alternatives(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-80, from an outside review of rules-79: titles' colons, titles that open like a question, "&" names
    ("harry potter: the half-blood prince audiobook", '"harry potter the half-blood prince audiobook"'),
    ("The Witcher 3: Wild Hunt mods", '"The Witcher 3 Wild Hunt mods"'),
    ("The Legend of Zelda: Tears of the Kingdom walkthrough", '"The Legend of Zelda Tears of the Kingdom walkthrough"'),
    ("Ben & Jerry's: new flavours", '"Ben & Jerry\'s new flavours"'),
    ("How Long Is a Piece of String", '"How Long Is a Piece of String"'),
    ("Where's the Beef advert", '"Where\'s the Beef advert"'),
    ("do you take omeprazole before food", '"do you take omeprazole before food"'),
    ("what counts as evidence in a tribunal", '"evidence in a tribunal"'),
    ("info on Crohn's disease flare ups, fatigue or anaemia", '"Crohn\'s disease flare ups" OR "fatigue" OR "anaemia"'),
    # a one-word want label goes
    ("WANTED: oak dining table for eight, no veneer", '"oak dining table for eight" AND NOT "veneer"'),
    ("wtb: road bike 56cm frame", '"road bike 56cm frame"'),
    # "which gives better X" after a comparison: both, and the better thing
    ("Cairngorms or Lake District, which gives better winter walking?",
     '"Cairngorms" AND "Lake District" AND "better winter walking"'),
])
def test_rules80_review_of_rules79(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-81: a closing question of the thing's status names nothing
    ("late checkout possible?", '"late checkout"'),
    ("family rooms for the 12th still available?", '"family rooms for the 12th"'),
    ("Ticket to Ride Europe back in stock?", '"Ticket to Ride Europe"'),
    ("gluten free base if possible", '"gluten free base"'),
    # a title or a name with "and" read on its own side of a dash stays one
    ("Simon and Garfunkel - The Boxer chords", '"Simon and Garfunkel" AND "The Boxer chords"'),
    ("Pride and Prejudice - the 1995 series", '"Pride and Prejudice" AND "the 1995 series"'),
])
def test_rules81_status_questions_and_titles_beside_a_dash(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-82: every exclusion of a bracketed aside, and "(not interested in X)"
    ("ground cover for dry shade (not ivy, not vinca)", '"ground cover for dry shade" AND NOT "ivy" AND NOT "vinca"'),
    ("hotels in Rome (no pools, no spas)", '"hotels in Rome" AND NOT "pools" AND NOT "spas"'),
    ("board games (nothing with small pieces, our baby crawls)", '"board games" AND NOT "small pieces"'),
    ("climbers for a fence (no thorns, no roses - too spiky)", '"climbers for a fence" AND NOT "thorns" AND NOT "roses"'),
    ("wedding dresses (no rush, no pressure)", '"wedding dresses"'),
    ("cheap holidays in Majorca (no kids, not sure about the dates)", '"cheap holidays in Majorca" AND NOT "kids"'),
    ("Heat exhaustion on summer hikes (not interested in desert trekking)",
     '"Heat exhaustion on summer hikes" AND NOT "desert trekking"'),
    # punctuation dictated as words, in a text without typed marks
    ("search for pharmacokinetics of tramadol in horses after oral dosing full stop",
     '"pharmacokinetics of tramadol in horses after oral dosing"'),
    ("how much does shoe rental cost for the day question mark", '"shoe rental cost for the day"'),
    ("search blood culture rates versus the wards comma excluding paediatrics full stop",
     '"blood culture rates" AND "the wards" AND NOT "paediatrics"'),
    # ... not the punctuation as a topic, a name or a phrase, nor a text that ends otherwise
    ("how to insert a new line in Excel cell", '"insert a new line in Excel cell"'),
    ("I said full stop and it typed full stop", '"I said full stop" AND "it typed full stop"'),
    ("songs by Question Mark and the Mysterians", '"songs by Question Mark" AND "the Mysterians"'),
    ("Full Stop Full Stop - the Boyzone single", '"Full Stop Full Stop" AND "the Boyzone single"'),
    ("oxford comma rules", '"oxford comma rules"'),
    # "could you tell me which ...": the question asked
    ("Could you tell me which trails allow dogs on leash?", '"trails allow dogs on leash"'),
    ("could you tell me which is cheaper, Aldi or Lidl", '"tell me which is cheaper" AND "Aldi or Lidl"'),
    # a topic, a dash and a question: the topic and what the question names
    ("travel insurance - is it mandatory or optional??", '"travel insurance" AND ("mandatory" OR "optional")'),
    ("prohibited items list - are umbrellas or camping chairs allowed?",
     '"prohibited items list" AND ("umbrellas" OR "camping chairs")'),
    ("visiting hours PICU - are siblings allowed?", '"visiting hours PICU" AND "siblings allowed"'),
    ("oxygen concentrator on board - what paperwork do I need", '"oxygen concentrator on board" AND "paperwork"'),
    ("will writing / lasting power of attorney - who can help?", '"will writing" OR "lasting power of attorney"'),
    ("Delay Repay 15 or Delay Repay 30 - which one does Southeastern use?",
     '("Delay Repay 15" OR "Delay Repay 30") AND "Southeastern"'),
    ("SOC 215 Gender and Society - is it offered in fall?", '"SOC 215 Gender and Society" AND "fall"'),
    ("tonsillectomy recovery diet - what can they eat", '"tonsillectomy recovery diet"'),
    ("Peloton bike - is it back in stock?", '"Peloton bike"'),
    ("Turkey - is it safe to travel?", '"Turkey" AND "safe to travel"'),
    ("Glastonbury - are umbrellas allowed or banned?", '"Glastonbury" AND "umbrellas"'),
    ("Bananarama - Is It Safe?", '"Bananarama Is It Safe"'),
    ("Bob Dylan or Joan Baez — which is better for protest songs?", '"Bob Dylan" AND "Joan Baez" AND "protest songs"'),
    ("Hi there — do you have reports on venture debt? Thx", '"venture debt"'),
    # the writer's reason after an excluded item
    ("travel vaccinations for India, not rabies as I had that one in 2021",
     '"travel vaccinations for India" AND NOT "rabies"'),
    ("caring for a PICC line at home but not the chemo ones, my dad has his for IV antibiotics",
     '"caring for a PICC line at home" AND NOT "the chemo"'),
    ("shade-loving perennials, but nothing poisonous please as we have a new puppy",
     '"shade-loving perennials" AND NOT "poisonous"'),
    ("hymns excluding Just as I Am", '"hymns" AND NOT "Just as I Am"'),
    ("UK trade statistics, excluding the years since we left the EU",
     '"UK trade statistics" AND NOT "the years since we left the EU"'),
    # "without going to / having / joining X"
    ("agency worker holiday pay without going to a tribunal", '"agency worker holiday pay" AND NOT "tribunal"'),
    ("how to keep fit without going to bed late", '"keep fit" AND NOT "going to bed late"'),
    ("why did he leave without having a word", '"why did he leave" AND NOT "having a word"'),
    # "is it ok to X" asks about X; "is it safe to X" keeps its verdict; a whether-question stays whole
    ("Is it possible to brew a non-alcoholic beer at home?", '"brew a non-alcoholic beer at home"'),
    ("is it legal to keep bees in a back garden in Leeds", '"legal to keep bees in a back garden in Leeds"'),
    ("is it ok to swim after getting a tattoo or not", '"is it ok to swim after getting a tattoo or not"'),
    ("is it wise to buy a house now or wait", '"is it wise to buy a house now or wait"'),
    ("Is It Safe To Eat Raw Cookie Dough", '"Is It Safe To Eat Raw Cookie Dough"'),
    # a leaflet or a factsheet named as the kind of document
    ("knee replacement recovery leaflet", '"knee replacement recovery"'),
    ("leaflets on diet for type 2 diabetes in Polish or Urdu", '"diet for type 2 diabetes" AND ("Polish" OR "Urdu")'),
    ("12V LED navigation lights, Hella Marine or Lopolight", '"12V LED navigation lights" AND ("Hella Marine" OR "Lopolight")'),
])
def test_rules82_asides_dictation_topic_questions_and_reasons(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-83: an exclusion after a dash reads as a clause after a comma
    ("immigration article 8 family life — skip deportation of foreign criminals",
     '"immigration article 8 family life" AND NOT "deportation of foreign criminals"'),
    ("hanging basket plants - skip fuchsias and petunias",
     '"hanging basket plants" AND NOT "fuchsias" AND NOT "petunias"'),
    # years, or names joined by slashes, after a topic
    ("unfair dismissal, 2019 or 2020", '"unfair dismissal" AND ("2019" OR "2020")'),
    ("population statistics, 1990s or 2000s", '"population statistics" AND ("1990s" OR "2000s")'),
    ("pages 12, 13 or 14", '"pages 12" OR "13" OR "14"'),
    ("chinrest fitting, Guarneri/Flesch/Kaufman", '"chinrest fitting" AND ("Guarneri" OR "Flesch" OR "Kaufman")'),
    # a sign-off, an example in brackets and what the writer knows, after an exclusion
    ("Could someone point me to raptor records except the common buzzard and kestrel ones?\nMuch obliged,\nGraham",
     '"raptor records" AND NOT "the common buzzard" AND NOT "kestrel"'),
    ("toothpastes, neither the ones with milk protein (like Tooth Mousse) nor anything with SLS",
     '"toothpastes" AND NOT "milk protein" AND NOT "SLS"'),
    ("escaped cage birds?? no parakeets pls we know about those", '"escaped cage birds" AND NOT "parakeets"'),
    ("songs, not I Know About You", '"songs" AND NOT "I Know About You"'),
])
def test_rules83_dash_exclusions_years_slashes_and_sign_offs(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-84: a dash ends a term inside alternatives too ("A or B - C": the OR group, then C)
    ("market trader licence or street trading consent - fees?",
     '("market trader licence" OR "street trading consent") AND "fees"'),
    ("shift work or jet lag - how to reset body clock", '("shift work" OR "jet lag") AND "reset body clock"'),
    ("bronchiolitis or croup in babies under 6 months - signs of breathing difficulty",
     '("bronchiolitis" OR "croup in babies under 6 months") AND "signs of breathing difficulty"'),
    # ... and inside an excluded term ("X, avoid A and B - C")
    ("bread without yeast - soda bread or flatbread?", '"bread" AND NOT "yeast" AND ("soda bread" OR "flatbread")'),
    # a part of names with an "or" is alternatives, not one title
    ("grass seed mix for horse paddocks, low sugar - Germinal or Cotswold Seeds",
     '"grass seed mix for horse paddocks" AND "low sugar" AND ("Germinal" OR "Cotswold Seeds")'),
    ("Mice and Mystics - Heart of Glorm", '"Mice and Mystics" AND "Heart of Glorm"'),
    # the writer's own circumstance after a dash names nothing; a title or a name after it does
    ("vaccines for Kenya, not yellow fever - had it last year", '"vaccines for Kenya" AND NOT "yellow fever"'),
    ("cats or starlight express, not evita — taking my nan and she hated evita lol",
     '("cats" OR "starlight express") AND NOT "evita"'),
    ("Whitney Houston - I Will Always Love You lyrics", '"Whitney Houston" AND "I Will Always Love You lyrics"'),
    ("python list comprehension - my code throws TypeError",
     '"python list comprehension" AND "my code throws TypeError"'),
    # "avoid" / "avoiding" after a comma or a dash excludes; not as advice's aim, nor in a title
    ("kids bike safety check, avoid weekends", '"kids bike safety check" AND NOT "weekends"'),
    ("Action Man - avoid 1990s relaunch figures", '"Action Man" AND NOT "1990s relaunch figures"'),
    ("family SUV, want to avoid anything with a CVT gearbox", '"family SUV" AND NOT "CVT gearbox"'),
    ("winter gullies in Glen Coe, grade II to III, avoiding avalanche-prone slopes",
     '"winter gullies in Glen Coe" AND "grade II to III" AND NOT "avalanche-prone slopes"'),
    ("car maintenance tips, avoid costly repairs", '"car maintenance tips" AND "avoid costly repairs"'),
    ("IGF-1 but none of spearmint, Avoiding Cooked Meat Carcinogens or salmon",
     '"IGF-1" AND NOT "spearmint" AND NOT "Avoiding Cooked Meat Carcinogens" AND NOT "salmon"'),
    ("strategies for avoiding burnout", '"strategies for avoiding burnout"'),
    # a sentence of "Skip the X", "skipping anything that recommends X", "exc."
    ("avian influenza in wild birds. Skip the poultry papers.",
     '"avian influenza in wild birds" AND NOT "poultry papers"'),
    ("members' DWV recovery, skipping anything that recommends requeening or shook swarms please",
     '"members\' DWV recovery" AND NOT "requeening" AND NOT "shook swarms"'),
    ("impressionist landscapes exc. Monet", '"impressionist landscapes" AND NOT "Monet"'),
    # what the writer already has, in brackets after an excluded item
    ("Anything by Barbara Pym except Excellent Women (already have it)",
     '"Barbara Pym" AND NOT "Excellent Women"'),
    # asks: "find out about / how / what", "who wrote the article about", "has anyone published on / used",
    # "the guide on", "your guidance on", "the current evidence on", "catalogue entries for", "decisions on"
    ("Where can I find out about redress schemes?", '"redress schemes"'),
    ("where can i find out how to appeal a parking fine", '"appeal a parking fine"'),
    ("Who wrote the article about Kittiwakes on the Tyne Bridge?", '"Kittiwakes on the Tyne Bridge"'),
    ("Has anyone used Apiguard or Api-Bioxal for varroa in a poly hive?",
     '("Apiguard" OR "Api-Bioxal") AND "varroa in a poly hive"'),
    ("hi yes I need the guide on a tenant dying during a fixed term tenancy thank you",
     '"tenant dying during a fixed term tenancy"'),
    ("I would like your guidance on right to rent checks", '"right to rent checks"'),
    ("What is the current evidence on tafenoquine for vivax malaria?", '"tafenoquine for vivax malaria"'),
    ("Could you point me to catalogue entries for toy kitchens?", '"toy kitchens"'),
    ("i need decisions about holiday lets or shepherds huts in the cotswolds AONB",
     '("holiday lets" OR "shepherds huts") AND "the cotswolds AONB"'),
    ("planning applications on Mill Lane", '"planning applications on Mill Lane"'),
    ("treatment decisions for elderly patients", '"treatment decisions for elderly patients"'),
    # "how long / early do I need to X": the task; a title keeps its words
    ("How early do I need to check in for the Liverpool to Douglas ferry with a caravan?",
     '"check in for the Liverpool to Douglas ferry with a caravan"'),
    ("How Long Do You Need to Boil an Egg", '"How Long Do You Need to Boil an Egg"'),
    # a learner's closing "you have?", "it is possible?"; "is it the same for A or B" after a dash
    ("I search article about White Stork population in Europe, you have?", '"White Stork population in Europe"'),
    ("Wheelchair assistance from check-in to gate - is it the same for Ryanair or easyJet?",
     '"Wheelchair assistance from check-in to gate" AND ("Ryanair" OR "easyJet")'),
    ("toy soldiers made by anyone except Britains", '"toy soldiers made by anyone" AND NOT "Britains"'),
])
def test_rules84_dashes_in_alternatives_avoid_and_asks(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-85: a quoted title after "the preprint titled / called" names the thing
    ('Looking for the preprint titled “Itch and Scratch: a diary study”', '"Itch and Scratch: a diary study"'),
    ('Where is the preprint called "Rivers and Roads: Culvert Design"?', '"Rivers and Roads: Culvert Design"'),
    # a wanted "any" beside a topic names nothing; alone beside exclusions it stays
    ("parent coffee mornings - any except Reigate", '"parent coffee mornings" AND NOT "Reigate"'),
    ("Mario Kart (any except Double Dash)", '"Mario Kart" AND NOT "Double Dash"'),
    ("documents about both tower and Anything", '"tower" AND "Anything"'),
    # "xcept"; a reason after an excluded item ("he really hates it")
    ("choral pieces by ola gjeilo xcept northern lights", '"choral pieces by ola gjeilo" AND NOT "northern lights"'),
    ("Activities for siblings aged 8-12. Nothing craft based please, he really hates it.",
     '"Activities for siblings aged 8-12" AND NOT "craft based"'),
    # asks: "I am wanting know about", "I am search about", "what does the evidence say about", "anything
    # published on", "do we have any" / "do we own" (not "do we have to"); "how long does X take"
    ("I am wanting know about eye drop for allergy, without steroid in it please",
     '"eye drop for allergy" AND NOT "steroid"'),
    ("I am search about Singer sewing machines", '"Singer sewing machines"'),
    ("what does the evidence say about eggs and cholesterol?", '"eggs" AND "cholesterol"'),
    ("Could you point me to anything published on the DASH diet in pregnancy?", '"the DASH diet in pregnancy"'),
    ("do we have any Eric Whitacre that isn't Lux Aurumque or Sleep",
     '"Eric Whitacre" AND NOT "Lux Aurumque" AND NOT "Sleep"'),
    ("Do we have a file on cryptocurrency regulation?", '"cryptocurrency regulation"'),
    ("do we have to pay for parking", '"do we have to pay for parking"'),
    ("How long does a standard eye examination take?", '"standard eye examination"'),
    # a link written before each alternative marks where they start
    ("Brahms German Requiem in English or in German?", '"Brahms German Requiem" AND ("English" OR "German")'),
    ("gold nuggets from the Yukon or from Victoria in Australia",
     '"gold nuggets" AND ("the Yukon" OR "Victoria in Australia")'),
    ("guided climbing in the Cairngorms or in Glen Coe for intermediate level",
     '"guided climbing" AND ("the Cairngorms" OR "Glen Coe") AND "intermediate level"'),
    ("city tours by boat or by bus with step-free access", '"city tours" AND ("boat" OR "bus") AND "step-free access"'),
])
def test_rules85_titles_any_asks_and_repeated_links(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-86 (an outside review of rules-84 and rules-85, and writers 111 to 114): the writer's status after a
    # dash is a facet; an age or a story names nothing
    ("flu jab - I'm pregnant", '"flu jab" AND "pregnant"'),
    ("eviction notice - I'm a lodger", '"eviction notice" AND "lodger"'),
    ("driving abroad - I have a provisional licence", '"driving abroad" AND "provisional licence"'),
    ("pneumococcal vaccine info, but not for children — I'm 70", '"pneumococcal vaccine info" AND NOT "children"'),
    # a title's words are no ask
    ("The Guide to Getting It On", '"The Guide to Getting It On"'),
    ("Where Can I Find Out About You - song", '"Where Can I Find Out About You" AND "song"'),
    ("Do We Have Any Time - poem", '"Do We Have Any Time" AND "poem"'),
    ("Your Guide to Menopause - book", '"Your Guide to Menopause" AND "book"'),
    ("Is It Possible? - Stevie Wonder", '"Is It Possible"'),
    ("Do you have The Hobbit", '"The Hobbit"'),
    # "avoid X" after advice anywhere in the clause is its aim
    ("tips for first time buyers, avoid gazumping", '"first time buyers" AND "avoid gazumping"'),
    ("how to lose weight, avoid sugar", '"lose weight" AND "avoid sugar"'),
    ("kids bike safety check, avoid weekends", '"kids bike safety check" AND NOT "weekends"'),
    # "exc." before a capital; "been twice" after a "Skip the X" sentence
    ("all the Beatles albums exc. Let It Be", '"all the Beatles albums" AND NOT "Let It Be"'),
    ("Things to do in York. Skip the Minster, been twice.", '"Things to do in York" AND NOT "Minster"'),
    # a phrase with "about / during / at" after repeated links is shared
    ("letters from Mum or from Dad during the war", '"letters" AND ("Mum" OR "Dad") AND "the war"'),
    ("pay by card or by cash at the tip", '"pay" AND ("card" OR "cash") AND "the tip"'),
    # a verdict or the writer's own circumstance after an excluded item
    ("masking fluid - any brand except Pebeo, it ruined my brushes", '"masking fluid" AND NOT "Pebeo"'),
    ("kayaking safety leaflets but not for sea kayaks, we paddle on estuaries",
     '"kayaking safety" AND NOT "sea kayaks"'),
    ("Coral bleaching recovery without the Great Barrier Reef (too many already)",
     '"Coral bleaching recovery" AND NOT "the Great Barrier Reef"'),
    # "an either way offence"; "not drinking games" (a thing, not a state: "smart meter not sending readings")
    ("the difference between a summary only offence and an either way offence",
     '"summary only offence" AND "either way offence"'),
    ("party games 8+ players adults not drinking games", '"party games 8+ players adults" AND NOT "drinking games"'),
    ("smart meter not sending readings", '"smart meter not sending readings"'),
    # "how early do the gates open", a question whose content is in the sentence before it
    ("How early do the gates open on Derby Day?", '"the gates open on Derby Day"'),
])
def test_rules86_status_titles_advice_and_reasons(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-87: "(avoid X)"; a reason in brackets ("(too pricey)"); "if at all possible"
    ("brass handles cleaned (avoid lacquer)", '"brass handles cleaned" AND NOT "lacquer"'),
    ("flight sim for practice on PC, skip RealFlight (too pricey)", '"flight sim for practice on PC" AND NOT "RealFlight"'),
    ("dental options, I'd rather avoid extraction if at all possible", '"dental options" AND NOT "extraction"'),
    # asks: "what's the consensus on X", "What has the Ombudsman said about X", "I'd rather skip X"
    ("what's the consensus on fast radio burst origins – magnetars or neutron star mergers?",
     '"fast radio burst origins" AND ("magnetars" OR "neutron star mergers")'),
    ("What has the Ombudsman said about landlords recording tenants' vulnerabilities?",
     '"landlords recording tenants\' vulnerabilities"'),
    ("Sgr A images, I'd rather skip the M87 papers", '"Sgr A images" AND NOT "the M87 papers"'),
    # a state after "not" stays one term
    ("dishwasher not draining", '"dishwasher not draining"'),
])
def test_rules87_asides_and_asks(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text", ["the", "it", "what", "what is it", "of the and", "they", "how", "the ", "who"])
def test_a_request_of_function_words_alone_names_nothing_to_search_for(text):
    node, err = try_translate_rules(text)
    assert node is None and err.startswith("nothing to search for")


def test_a_document_long_text_is_refused_rather_than_cut_at_its_connectives():
    # an argument with footnotes, as query-by-document corpora have them: cut at every "and" it gave terms such as
    # "1" and "pp.1-22"; over 100 words the rules refuse (an error row, so --fallback-text searches the whole text)
    sentence = ("Africa and Asia had similar numbers of conflicts (1) and the state keeps law and order, "
                "as Smith notes in Vol. 20, No. 1, pp.1-22 and ")
    text = (sentence * 6).strip()
    assert len(text.split()) > 100
    node, error = try_translate_rules(text)
    assert node is None and "reads as a document, not a request" in error
    # the same length as one term of prose (no connective) is still read, and quoted terms are the writer's own
    plain = " ".join(["long argument about regional conflicts"] * 25)
    assert canonical(translate_rules(plain)) == f'"{plain}"'
    quoted = '"regional conflicts" AND "state monopoly on force" ' + " ".join(["context"] * 101)
    assert try_translate_rules(quoted)[0] is not None
    # a no-opening document is not read as one long exclusion either
    node, error = try_translate_rules("No mechanism to prevent crises exists " + " ".join(["within states"] * 60))
    assert node is None and "reads as a document" in error


@pytest.mark.parametrize("embedded, direct", [
    # rules-99: an embedded yes/no question reads as its direct form, for the forms the asks read
    ("Could you tell me whether you accept dog beds or crates as donations?",
     "Do you accept dog beds or crates as donations?"),
    ("I would like to know if there is a vacancy for veterinary nurse in Cork or Limerick.",
     "Is there a vacancy for veterinary nurse in Cork or Limerick?"),
    ("could you tell me whether I need a visa for Turkey", "do I need a visa for Turkey"),
    ("can you check if you've got a Kemper or a Quad Cortex in the Manchester store",
     "have you got a Kemper or a Quad Cortex in the Manchester store"),
    ("Hi, just wondering if I can park my camper van in the street for 48 hours?",
     "Hi, can I park my camper van in the street for 48 hours?"),
])
def test_rules99_embedded_question_reads_as_direct(embedded, direct):
    assert canonical(translate_rules(embedded)) == canonical(translate_rules(direct))


@pytest.mark.parametrize("text, expr", [
    # any other embedded clause is left as written: no word the writer did not type enters a term
    ("I'd like to know whether caffeine affects tendon healing.", '"whether caffeine affects tendon healing"'),
    # "any <category> except X" excludes X without searching for the category
    ("Effect of remote work on productivity, any discipline except economics",
     '("Effect of remote work on productivity" AND NOT "economics")'),
    ("Interpreting for a tribunal, any language except Urdu and Punjabi",
     '("Interpreting for a tribunal" AND NOT "Urdu" AND NOT "Punjabi")'),
    # "e.g." marks examples with no comma before it, and after a comma inside a question
    ("Can I store vehicles, e.g. a caravan or a jet ski?", '("store vehicles" AND ("caravan" OR "jet ski"))'),
    ("mealybug treatment that's safe for miniatures e.g. Pleurothallis or Lepanthes",
     '("mealybug treatment that\'s safe for miniatures" AND ("Pleurothallis" OR "Lepanthes"))'),
    # what a service or a forum's members make or do is asked for; "do you take" keeps its question
    ("do you make dog-friendly birthday cakes", '"dog-friendly birthday cakes"'),
    ("do you take omeprazole before food", '"do you take omeprazole before food"'),
    # a shared noun after names may end in a time when a link comes first
    ("Muslim or Jewish burial within 24 hours", '(("Muslim" OR "Jewish") AND "burial within 24 hours")'),
])
def test_rules99(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, topic, ask", [
    # an ask that names nothing of its own ("Do you have anything in stock?", "let us know what you have in stock",
    # "What is it called?") leaves the topic to the sentences before it
    ("I'm after Zeppelin flight covers from the 1933 Chicago flight, no reproductions. Do you have anything in stock "
     "at the moment?", "Zeppelin flight covers", "stock"),
    ("We need a test piece for the fourth section, preferably by Philip Sparke or Peter Graham. Could you let us know "
     "what you have in stock?", "Philip Sparke", "let us know what"),
    ("My tutor mentioned a case about a snail in a bottle of ginger beer. What is it called?",
     "snail in a bottle of ginger beer", "it called"),
])
def test_rules99_empty_ask_leaves_the_topic_to_the_sentences_before(text, topic, ask):
    terms = re.findall(r'"((?:[^"\\]|\\.)*)"', canonical(translate_rules(text)))
    assert any(topic in t for t in terms) and not any(ask in t for t in terms)


@pytest.mark.parametrize("text, expr", [
    # rules-100, from an outside review of rules-99 (398 requests aimed at its changes): a turned question is kept
    # only where the asks take the words the turn added; otherwise the clause stays as written
    ("I wonder if you need a passport to fly to Ireland from the UK",
     '"I wonder if you need a passport to fly to Ireland from the UK"'),
    ("Could you tell me whether there were any floods in Tewkesbury in 2007?",
     '"tell me whether there were any floods in Tewkesbury in 2007"'),
    ("would you be able to tell me whether you repair Dyson V11 batteries", '"Dyson V11 batteries"'),
    ("Just checking if you have gluten free pizza bases", '"gluten free pizza bases"'),
    ("Could you tell me whether you can fit a tow bar to a Tesla Model Y?", '"fit a tow bar to a Tesla Model Y"'),
    # a pair of names stays two things in a comparison, for peoples and faiths, after a place's preposition
    ("compare Nikon and Canon mirrorless cameras", '("Nikon" AND "Canon mirrorless cameras")'),
    ("Hindu and Sikh wedding traditions", '("Hindu" AND "Sikh wedding traditions")'),
    ("Tesco and Sainsbury price comparison", '("Tesco" AND "Sainsbury price comparison")'),
    ("cheap flights to Paris and Rome next month", '("cheap flights to Paris" AND "Rome next month")'),
    ("Lennon and McCartney songwriting credits", '"Lennon and McCartney songwriting credits"'),
    ("Accident and Illness plan vs Accident Only", '("Accident and Illness plan" AND "Accident Only")'),
    # "any <category> except X": the preposition before it goes too; the category stays the topic at the front
    ("wine from any region except Bordeaux", '("wine" AND NOT "Bordeaux")'),
    ("any city except London for a hen do", '("city" AND NOT "London for a hen do")'),
    ("any country except China, manufacturing jobs", '(NOT "China" AND "manufacturing jobs")'),
    ("Is any company except Apple making foldable phones?", '("company" AND NOT "Apple making foldable phones")'),
    # "e.g." adds no word to a term; an example of a circumstance stays in its sentence
    ("Writers e.g. Orwell used pseudonyms", '("Writers" AND "Orwell used pseudonyms")'),
    ("Can students apply for hardship funds, e.g. for rent arrears?",
     '"students apply for hardship funds, e.g. for rent arrears"'),
    # the writer's own practice keeps its verb
    ("do you grow your own vegetables", '"do you grow your own vegetables"'),
    ("Does anyone make it to the Thursday parkrun?", '"Does anyone make it to the Thursday parkrun"'),
])
def test_rules100_review_of_rules99(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-101: a pair of names joined by "and" before "or" and another name is one alternative; a title's own
    # link stays in it; a shared tail may end in a time after other prepositions
    ("Snakes and Ladders or Ludo in a travel version", '(("Snakes and Ladders" OR "Ludo") AND "travel version")'),
    ("Frog and Toad or The Wind in the Willows", '("Frog and Toad" OR "The Wind in the Willows")'),
    ("Pfizer or Moderna booster after 6 months", '(("Pfizer" OR "Moderna") AND "booster after 6 months")'),
    ("Irish or Scottish passport renewal within 10 days",
     '(("Irish" OR "Scottish") AND "passport renewal within 10 days")'),
])
def test_rules101(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-102: lone nouns before "or" share the last alternative's words after its first, where it has three
    # words or more; not plural nouns before a singular word, an adjective, "either", an article, two words
    ("egg or embryo freezing costs", '(("egg" OR "embryo") AND "freezing costs")'),
    ("cholera or typhoid vaccination schedules for travellers",
     '(("cholera" OR "typhoid") AND "vaccination schedules for travellers")'),
    ("statins or beta blockers after heart attack", '(("statins" OR "beta blockers") AND "heart attack")'),
    ("narcolepsy or idiopathic hypersomnia treatment", '("narcolepsy" OR "idiopathic hypersomnia treatment")'),
    ("either tofu or tempeh recipes without soy sauce", '(("tofu" OR "tempeh recipes") AND NOT "soy sauce")'),
    ("a kettle or a toaster oven bundle", '("kettle" OR "toaster oven bundle")'),
    ("milk or peanut butter", '("milk" OR "peanut butter")'),
    ("stroke or heart attack warning signs", '("stroke" OR "heart attack warning signs")'),
    ("pasta or sweet potato fries calories", '("pasta" OR "sweet potato fries calories")'),
    # a yes/no question about a named thing: the thing and what is asked of it
    ("Does the Leeds studio have wheelchair access to the kiln room?",
     '("Leeds studio" AND "wheelchair access to the kiln room")'),
    ("Is the concessionary pass valid on the tram or the Metro?", '("concessionary pass" AND ("tram" OR "Metro"))'),
    ("Is the Boss Katana 100 MkII in the Black Friday sale?", '("Boss Katana 100 MkII" AND "Black Friday sale")'),
    ("Was the Odeon on the High Street called the Regal or the Gaumont?",
     '("Odeon on the High Street" AND ("Regal" OR "Gaumont"))'),
    ("Has the Blue Carbon special issue deadline been extended?", '"Blue Carbon special issue deadline"'),
    ("Is a carbon tax or cap and trade more efficient?", '(("carbon tax" OR "cap and trade") AND "efficient")'),
    ("Is the Covid booster safe during pregnancy?", '("Covid booster" AND "pregnancy")'),
    # ... but a predicate asked alone is the topic too, and a clause that goes on stays whole
    ("Was the moon landing faked?", '"the moon landing faked"'),
    ("Is the 20mph limit in Wales being scrapped?", '"the 20mph limit in Wales being scrapped"'),
    ("Do the clocks go back this weekend?", '"the clocks go back this weekend"'),
    # ... but a state the writers keep with the thing, the service asked, an exclusion, stay as they were
    ("Is the Jetboil Flash compatible with MSR IsoPro fuel?", '"the Jetboil Flash compatible with MSR IsoPro fuel"'),
    ("Does the archive have notes on faint galaxies near Polaris?", '"faint galaxies near Polaris"'),
    ("Does the gym have a sauna but not a pool?", '("sauna" AND NOT "pool")'),
    # two compared topics, the second ending in the first's last word: words after it are their common ground
    ("silicon anode vs graphite anode cycle life", '("silicon anode" AND "graphite anode" AND "cycle life")'),
    ("Schools class vs King Arthur class boiler pressures",
     '("Schools class" AND "King Arthur class" AND "boiler pressures")'),
    ("merino wool vs polyester base layer odour", '("merino wool" AND "polyester base layer odour")'),
    ("hot tea vs tea bags", '("hot tea" AND "tea bags")'),
    ("Behr Marquee vs Benjamin Moore Regal Select", '("Behr Marquee" AND "Benjamin Moore Regal Select")'),
    # "do you run / host / organise X" asks for X
    ("Do you run pottery workshops for kids?", '"pottery workshops for kids"'),
    ("do u guys fix cracked phone screens", '"cracked phone screens"'),
    ("do you run faster after caffeine", '"do you run faster after caffeine"'),
])
def test_rules102(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-103, from an outside review of rules-102: a question's subject before a date after "on"; a question of
    # whether a thing still goes ahead names the thing; the service asked is no subject; compared topics that open
    # with the same word have the same shape; a verb that is the topic keeps "do you"; common two-word nouns
    ("Is the Reel Rock 19 screening on 8 November?", '("Reel Rock 19 screening" AND "8 November")'),
    ("Is the Rose and Crown pub redevelopment still going ahead?", '"Rose and Crown pub redevelopment"'),
    ("Is the Tube running during the strike?", '("Tube" AND "strike")'),
    ("Does the gym have a sauna and steam room?", '("sauna" AND "steam room")'),
    ("Puya raimondii vs Puya berteroana germination rates",
     '("Puya raimondii" AND "Puya berteroana" AND "germination rates")'),
    ("do you run the dishwasher every night", '"do you run the dishwasher every night"'),
    ("rabbit or guinea pig cage cleaning", '("rabbit" OR "guinea pig cage cleaning")'),
    ("cash or credit card cashback offers", '("cash" OR "credit card cashback offers")'),
])
def test_rules103_review_of_rules102(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-104, from a second review: a gerund, a number word or a word each alternative takes after it keeps the
    # last alternative whole; more common two-word nouns; "the" opens no shape of its own; names after a keyword
    # string share it
    ("passport or driving licence renewal fees", '("passport" OR "driving licence renewal fees")'),
    ("meat or dairy free diet plans", '("meat" OR "dairy free diet plans")'),
    ("car or fire engine toys", '("car" OR "fire engine toys")'),
    ("the Beatles vs the Rolling Stones album sales", '("the Beatles" AND "the Rolling Stones album sales")'),
    ("equal pay claims Birmingham City Council or Glasgow City Council",
     '("equal pay claims" AND ("Birmingham City Council" OR "Glasgow City Council"))'),
    ("ice shelf calving Thwaites Glacier or Pine Island Glacier",
     '("ice shelf calving" AND ("Thwaites Glacier" OR "Pine Island Glacier"))'),
    ("autumn or spring planting for garlic", '(("autumn" OR "spring") AND "planting for garlic")'),
])
def test_rules104_second_review(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-105: two days, months or seasons around "or" in a keyword string are the alternatives, the words before
    # and after them facets of their own; a sentence's capitalised first word before "the" is no title-cased run
    ("adult beginner ballet tuesday or thursday evening",
     '("adult beginner ballet" AND ("tuesday" OR "thursday") AND "evening")'),
    ("powerboat lvl 2 on sat or sun?? poole", '("powerboat lvl 2" AND ("sat" OR "sun") AND "poole")'),
    ("Grandstand tickets for the Saturday or Sunday of the May meeting",
     '("Grandstand tickets" AND ("Saturday" OR "Sunday") AND "May meeting")'),
    ("plants that flower in late autumn or winter", '("plants" AND ("late autumn" OR "winter"))'),   # (as before)
    ("you may or may not get a refund", '"you may or may not get a refund"'),
    ("Photos from the Rose and Crown pub fire", '"the Rose and Crown pub fire"'),
])
def test_rules105_times_and_names(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-106: "avoiding" straight after a topic excludes; not after a link, an adverb or advice
    ("Bristol to Exeter route avoiding the A38", '("Bristol to Exeter route" AND NOT "the A38")'),
    ("circular walks from Montgomery avoiding road walking", '("circular walks from Montgomery" AND NOT "road walking")'),
    ("strategies for avoiding burnout", '"strategies for avoiding burnout"'),
    ("patrols actively avoiding wanted men", '"patrols actively avoiding wanted men"'),
])
def test_rules106_avoiding(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-107: a maker's two model codes around "or" share the maker and the words after them
    ("BSA A10 or A7 gearbox mainshaft", '("BSA" AND ("A10" OR "A7") AND "gearbox mainshaft")'),
    ("Leica M6 or M4-P in chrome", '("Leica" AND ("M6" OR "M4-P") AND "chrome")'),
    ("ASME B31.3 or B31.1 piping stress", '(("ASME B31.3" OR "B31.1") AND "piping stress")'),   # (no code's shape)
])
def test_rules107_model_codes(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-108: typographic single quotes around a whole term go as straight ones do; one whose partner is inside
    # the term stays
    ("\u201csmart phones\u201d but not \u2018apple\u2019", '("smart phones" AND NOT "apple")'),
    ("\u2018smart phones\u2019 but not apple", '("smart phones" AND NOT "apple")'),
    ("smart phones but not 'apple'", '("smart phones" AND NOT "apple")'),
    ("\u2018OK\u2019 etymology", '"\u2018OK\u2019 etymology"'),
    ("etymology of \u2018OK\u2019", '"etymology of \u2018OK\u2019"'),
    # names split off after a link lose their quotes too, straight or typographic
    ("films by 'Kubrick' or 'Lynch'", '("films" AND ("Kubrick" OR "Lynch"))'),
    ("films by \u2018Kubrick\u2019 or \u2018Lynch\u2019", '("films" AND ("Kubrick" OR "Lynch"))'),
    ("songs like 'Don't Stop Me Now'", '"songs like \'Don\'t Stop Me Now\'"'),
])
def test_rules108_typographic_single_quotes(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-109: an exclusion ends at its sentence's end (the next sentence, a question after the request or its
    # context, is not excluded: under the NOT it would exclude what it names, the wanted topic too)
    ("Hello, I search recordings of tango orchestras from Buenos Aires, not the european tango ones. Is possible?",
     '("recordings of tango orchestras from Buenos Aires" AND NOT "the european tango ones")'),
    ("I'm looking for work on the Cathars that doesn't rely on inquisition records. Is there such a thing?",
     '("the Cathars" AND NOT "inquisition records")'),
    ("I want studies on homework and academic achievement in primary schools, but not those about university "
     "students or online tutoring platforms. Some commentators insist that homework in primary school is useless.",
     '("homework and academic achievement in primary schools" AND NOT "university students or online tutoring '
     'platforms")'),
    # a lower-case abbreviation before a name is no sentence's end
    ("papers on taxes but not approx. Boston area stuff", '("taxes" AND NOT "approx. Boston area")'),
    # a wanted term over a sentence's end keeps its words; a quoted exclusion is the writer's own
    ('films by Kubrick but not "Barry Lyndon. The Shining"', '("films by Kubrick" AND NOT "Barry Lyndon. The Shining")'),
    # lines stay sentences or a list's items
    ("apples\npears\nplums", '("apples" AND "pears" AND "plums")'),
    ("coffee\nbut not tea", '("coffee" AND NOT "tea")'),
    # a '"' right after a number is an inch mark, not a quote: read as the bare number is
    ('5" floppy disks or 3.5" disks', '("5 floppy disks" OR "3.5 disks")'),
    ('monitors of 27" or more', '"monitors of 27 or more"'),
    ('"Windows 10" laptops but not "Windows 11"', '("Windows 10 laptops" AND NOT "Windows 11")'),
])
def test_rules109_sentence_ends_and_inch_marks(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-110: "though not", "although not", "however not" exclude every item of the list after them, as
    # "but not" does (NOT bound the first item only: prostate cancer rose instead of falling)
    ("diet and cancer, though not breast cancer or prostate cancer",
     '("diet" AND "cancer" AND NOT "breast cancer" AND NOT "prostate cancer")'),
    ("fruit although not apples or pears", '("fruit" AND NOT "apples" AND NOT "pears")'),
    ("fruit, however not apples or pears", '("fruit" AND NOT "apples" AND NOT "pears")'),
    ("fruit though not apples, pears or plums", '("fruit" AND NOT "apples" AND NOT "pears" AND NOT "plums")'),
    ("fruit but also not apples or pears", '("fruit" AND NOT "apples" AND NOT "pears")'),
    # a numbered or lettered list: a negated item stays an exclusion (it was ORed in: OR NOT rewards everything else)
    ("1. soy 2. tofu 3. not tempeh", '(("soy" OR "tofu") AND NOT "tempeh")'),
    ("1) soy 2) tofu 3) no tempeh", '(("soy" OR "tofu") AND NOT "tempeh")'),
    ("(1) soy (2) tofu (3) not tempeh", '(("soy" OR "tofu") AND NOT "tempeh")'),
    ("a) soy b) tofu c) not tempeh", '(("soy" OR "tofu") AND NOT "tempeh")'),
    ("a) wheat b) corn", '("wheat" OR "corn")'),
    ("Looking for any of these: 1) soy milk 2) oat milk 3) not almond milk",
     '(("soy milk" OR "oat milk") AND NOT "almond milk")'),
    # "Skip X." after a request or a question excludes X ("Skip hire." is a builder's skip); "leave X out"
    ("Any news on copper? Skip Chile.", '("copper" AND NOT "Chile")'),
    ("News on copper. Skip Chile.", '("copper" AND NOT "Chile")'),
    ("I'm looking for work on avian influenza H5N1 in wild birds. Skip the poultry papers.",
     '("avian influenza H5N1 in wild birds" AND NOT "poultry papers")'),
    ("copper, but leave Chile out", '("copper" AND NOT "Chile")'),
    ("copper prices; leave Chile and Peru out please", '("copper prices" AND NOT "Chile" AND NOT "Peru")'),
    # "Zinc too.": one more topic after a request; a pronoun adds none
    ("Copper news? Zinc too.", '("Copper news" AND "Zinc")'),
    ("Looking for tin prices. Nickel too.", '("tin prices" AND "Nickel")'),
])
def test_rules110_concessive_exclusions_numbered_negations_and_short_sentences(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text", ["Is it expensive? Me too.", "copper, leave it out",
                                  "Need a quote for waste removal. Skip hire."])
def test_rules110_leaves_pronouns_and_nouns_alone(text):
    node, err = try_translate_rules(text)
    assert err is not None or "NOT" not in canonical(node)


@pytest.mark.parametrize("text, expr", [
    # rules-111: after an exclusion's item, a comma and a preposition open a facet of what is wanted, not another
    # excluded item; its empty link goes
    ("hotels near Heathrow, except Premier Inn, with free parking",
     '("hotels near Heathrow" AND NOT "Premier Inn" AND "free parking")'),
    ("beach holidays excluding Spain, in October", '("beach holidays" AND NOT "Spain" AND "October")'),
    ("laptops without touchscreens, under 1000 pounds",
     '("laptops" AND NOT "touchscreens" AND "under 1000 pounds")'),
    ("fruit except apples, pears, plums", '("fruit" AND NOT "apples" AND NOT "pears" AND NOT "plums")'),
    # "VS Code" is an editor, not a comparison
    ("git integration in VS Code or IntelliJ", '("git integration" AND ("VS Code" OR "IntelliJ"))'),
    ("vim vs emacs", '("vim" AND "emacs")'),
    # "free of" / "free from" exclude (not a price or a right)
    ("shampoo free of sulfates and parabens", '("shampoo" AND NOT "sulfates" AND NOT "parabens")'),
    ("toothpaste free of fluoride", '("toothpaste" AND NOT "fluoride")'),
    ("courses free of charge", '"courses free of charge"'),
    ("workplaces free from discrimination", '"workplaces free from discrimination"'),
    # first-person exclusions after a comma; a need that is an act is not one
    ("cheap car insurance, I don't need breakdown cover", '("cheap car insurance" AND NOT "breakdown cover")'),
    ("running shoes for marathon, I'm not after trail shoes", '("running shoes for marathon" AND NOT "trail shoes")'),
    ("holiday cottages in Cornwall, we have no interest in caravans",
     '("holiday cottages in Cornwall" AND NOT "caravans")'),
    ("pizza dough recipes but I can't eat gluten", '("pizza dough recipes" AND NOT "gluten")'),
    ("cheap flights, I don't need to fly direct", '"cheap flights, I don\'t need to fly direct"'),
    # conditions that exclude
    ("Thai green curry paste, as long as there's no shrimp paste", '("Thai green curry paste" AND NOT "shrimp paste")'),
    ("holiday parks in Devon, only if there are no hot tubs", '("holiday parks in Devon" AND NOT "hot tubs")'),
    # a problem's state is what the request is about, not an exclusion
    ("parcel not arrived after 2 weeks", '"parcel not arrived after 2 weeks"'),
    ("gradle build not finding dependencies", '"gradle build not finding dependencies"'),
    ("printer not recognising cartridges", '"printer not recognising cartridges"'),
])
def test_rules111_facets_after_exclusions_names_and_first_person_exclusions(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # rules-112: a short requirement sentence after a request ("Must be X.", "Has to be X.", "Must have X.") is a
    # facet of it, and an exclusion sentence after it still joins the request
    ("Used car. Must be automatic. No diesels please.", '("Used car" AND "automatic" AND NOT "diesels")'),
    ("Holiday cottage in Wales. Has to be dog friendly.", '("Holiday cottage in Wales" AND "dog friendly")'),
    ("Hotels in Rome? Must have parking.", '("Hotels in Rome" AND "parking")'),
    ("Need a plumber in Croydon. Must be Gas Safe registered. Not British Gas.",
     '("plumber in Croydon" AND "Gas Safe registered" AND NOT "British Gas")'),
    ("It must be true.", '"It must be true"'),
])
def test_rules112_requirement_sentences(text, expr):
    assert canonical(translate_rules(text)) == canonical(parse(expr))


@pytest.mark.parametrize("text, expr", [
    # what rules-110 to -112 must not read (a code review's false positives): titles in a numbered list, a
    # citation's lettered subsection, sentences that are remarks, a price after "free of", a lower-case comparison
    # with code, an adjective after "not", a question about a condition
    ("1) No Country for Old Men 2) Fargo", '("No Country for Old Men" OR "Fargo")'),
    ("Looking for a React developer in Leeds. Drop me a line.", None),
    ("How do I bake sourdough? Skip ahead to the recipe.", None),
    ("Used car under 5000. Should be fine.", None),
    ("Hotels in Paris. Has to be today.", None),
    ("Parcel tracking. Must have arrived yesterday.", None),
    ("Hotels in Paris. Love you too.", None),
    ("legal advice free of any cost", None),
    ("museums in London free of entry charges", None),
    ("design review vs code review", '("design review" AND "code review")'),
    ("basic research not applied research", '("basic research" AND NOT "applied research")'),
    ("what happens to my warranty provided there is no receipt", None),
])
def test_rules112_leaves_what_only_looks_like_the_new_patterns(text, expr):
    node, err = try_translate_rules(text)
    if expr is not None:
        assert err is None and canonical(node) == canonical(parse(expr))
    else:   # no exclusion and no requirement read into it
        assert err is not None or "NOT" not in canonical(node)
        if err is None and "Should be" not in text and "Has to be" not in text and "Must have" not in text:
            return
        assert err is not None or not any(w in canonical(node) for w in ('"fine"', '"today"', '"arrived yesterday"'))


def test_rules112_a_citations_lettered_subsections_are_no_list():
    node = translate_rules("Section 3(a) and (b) of the Housing Act")
    assert "Section 3(a)" in canonical(node)
