"""The rules' repair of LLM forms that the request's own words refute (itlr_gpu.translate.repair)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from itlr_gpu.errors import InputError
from itlr_gpu.query import canonical, parse
from itlr_gpu.translate import translate
from itlr_gpu.translate.cache import TranslationCache
from itlr_gpu.translate.llm import VllmTranslator
from itlr_gpu.translate.repair import (KEEPS_LITTLE, LONG_REQUEST, ONLY_CONNECTIVES, SELF_NEGATED, defects,
                                      has_negation_cue, repair)
from itlr_gpu.translate.rules import try_translate_rules

from strategies import asts

PAIRS = [json.loads(line) for line in
         (Path(__file__).parent / "data" / "translation_pairs.jsonl").read_text(encoding="utf-8").splitlines()]


def rules_reading(text: str):
    """The rules' form when repair() would use it as the reference (translated, no defect of its own)."""
    ast, err = try_translate_rules(text)
    return ast if err is None and ast is not None and not defects(text, ast) else None


def test_no_gold_form_has_a_defect():
    """The checks never refute a right answer: every labelled form (dev and test) passes them, those that
    compare with the rules' reading included."""
    flagged = [(p["id"], defects(p["text"], p["expr"], reference=rules_reading(p["text"]))) for p in PAIRS]
    assert [x for x in flagged if x[1]] == []
    assert sum(rules_reading(p["text"]) is not None for p in PAIRS) > len(PAIRS) // 2   # the comparison ran


@pytest.mark.parametrize("text,llm,want,kind", [
    ("either dark matter or dark energy", '("dark matter" OR "dark energy") AND NOT "dark matter"',
     '("dark matter" OR "dark energy")', "no negation cue"),
    ("web frameworks other than React", '"web frameworks other than React"',
     '("web frameworks" AND NOT "React")', "exclusion cue"),
    ("breakfast ideas except oatmeal", 'NOT "breakfast ideas except oatmeal"',
     '("breakfast ideas" AND NOT "oatmeal")', "exclusion cue"),
    ("both bees and pesticides", '("bees" OR "pesticides") AND "both"', '("bees" AND "pesticides")', "connective"),
    # against the rules' reading
    ("olive oil but neither butter nor margarine", 'NOT "butter" AND NOT "margarine"',
     '"olive oil" AND NOT "butter" AND NOT "margarine"', "drops the request's term"),
    ("Regular exercise lowers the risk of dementia but not insomnia",
     '"Regular exercise" AND "the risk of dementia" AND NOT "insomnia"',
     '"Regular exercise lowers the risk of dementia" AND NOT "insomnia"', "cuts the phrase"),
    ("tidal power, geothermal plants or biofuels", '"tidal power" AND "geothermal plants" AND "biofuels"',
     '"tidal power" OR "geothermal plants" OR "biofuels"', '"or" has no OR'),
    ("urban beekeeping, excluding honey yields and hive design", '"urban beekeeping" AND "honey yields" AND '
     '"hive design"', '"urban beekeeping" AND NOT "honey yields" AND NOT "hive design"', "exclusion has no NOT"),
    ("Cold exposure increases BAT recruitment but neither tea nor coffee",
     '"Cold exposure increases BAT recruitment" AND "tea" AND "coffee"',
     '"Cold exposure increases BAT recruitment" AND NOT "tea" AND NOT "coffee"', "exclusion has no NOT"),
    ("Other than statins, what lowers LDL cholesterol?", '"statins" AND NOT "LDL cholesterol"',
     '"what lowers LDL cholesterol" AND NOT "statins"', "negates the request's wanted term"),
    ("cats but not dogs", 'NOT "cats" AND NOT "dogs"', '"cats" AND NOT "dogs"', "negates the request's wanted term"),
    ("vitamin D benefits but not bone health", 'NOT ("vitamin D benefits" OR "bone health")',
     '"vitamin D benefits" AND NOT "bone health"', "negates the request's wanted term"),
    ("kelp farming for biofuel or animal feed", '"kelp farming for biofuel" OR "animal feed"',
     '"kelp farming" AND ("biofuel" OR "animal feed")', "phrase shared by alternatives"),
    ("tremor or stiffness in early Parkinson's patients", '"tremor" OR "stiffness in early Parkinson\'s patients"',
     '("tremor" OR "stiffness") AND "early Parkinson\'s patients"', "phrase shared by alternatives"),
    # a search engine's minus signs read as wanted terms (r10)
    ("robot lawn mower -Husqvarna -Worx", '"robot lawn mower" AND "Husqvarna" AND "Worx"',
     '"robot lawn mower" AND NOT "Husqvarna" AND NOT "Worx"', "exclusion has no NOT"),
])
def test_each_defect_is_found_and_repaired_by_the_rules(text, llm, want, kind):
    found = defects(text, llm, reference=rules_reading(text))
    assert any(kind in d for d in found), found
    fixed, why = repair(text, llm)
    assert why == found and canonical(parse(fixed)) == canonical(parse(want))


@pytest.mark.parametrize("text", [
    "vitamin D benefits but not bone health", "papers that don't mention cats", "coffee, no sugar",
    "anything except jazz", "leaving aside private schools", "films without subtitles", "non-fiction books",
    "rather tea than coffee", "cats instead of dogs", "robot lawn mower -Husqvarna", 'fonts -"Google Fonts"',
])
def test_negation_cues(text):
    assert has_negation_cue(text)


@pytest.mark.parametrize("text", ["either dark matter or dark energy", "film noir and notebooks",
                                  "Roman aqueducts, or alternatively Persian qanats", "Stoicism in addition to Epicureanism",
                                  "e-bikes and x-rays", "winters of -20 degrees"])
def test_no_negation_cue(text):
    assert not has_negation_cue(text)


@pytest.mark.parametrize("text,llm", [
    # a preamble is the LLM's to distil: keeping one piece of a long rules term is not a dropped term
    ("Some say solar subsidies are a waste. Find studies on solar power, excluding rooftop panels",
     '"solar power" AND NOT "rooftop panels"'),
    # a cut at a connective, an article or a negation is a reading, not a defect
    ("studies on wind farms and landscape", '"wind farms" AND "landscape"'),
    ("coffee without sugar", '"coffee" AND NOT "sugar"'),
    # split where the request says "or ... not", with words rephrased around the cut (the rules keep it whole)
    ("startups in Berlin or Paris that are not in fintech",
     '"startups in Berlin" OR ("startups in Paris" AND NOT "fintech")'),
    # a NOT where the request has a word that may negate ("avoid"), though not one of the rules' markers
    ("papers on AI safety or alignment that avoid discussing superintelligence",
     '("AI safety" OR "alignment") AND NOT "superintelligence"'),
    # "or" kept inside a term, the exclusion after "though" read
    ("I need material on river pollution from agriculture or industry, though nothing on plastics",
     '"river pollution from agriculture or industry" AND NOT "plastics"'),
    # "or" inside a negated clause: NOT b AND NOT c says it as well as NOT (b OR c)
    ("cats but not dogs or hamsters", '"cats" AND NOT "dogs" AND NOT "hamsters"'),
    # the negation kept inside a sentence-like term: no NOT needed, none lost
    ("Vitamin D deficiency is not associated with birth weight", '"Vitamin D deficiency is not associated with birth weight"'),
    # "or" kept inside a term
    ("trade-offs between speed or accuracy, but not dyslexia",
     '"trade-offs between speed or accuracy" AND NOT "dyslexia"'),
    # how far a leading "no" reaches is the reader's call: both forms negate the first operand, nothing swapped
    ("no meat or dairy recipes", 'NOT "meat" AND NOT "dairy"'),
    ("no sugar or salt", 'NOT ("sugar" OR "salt")'),
])
def test_readings_the_comparison_leaves_alone(text, llm):
    assert defects(text, llm, reference=rules_reading(text)) == []
    assert repair(text, llm) == (llm, [])


def test_a_right_form_is_kept_and_so_is_one_the_rules_cannot_better():
    assert repair("cats but not dogs", '("cats" AND NOT "dogs")') == ('("cats" AND NOT "dogs")', [])
    # the rules read "life without parole" as one term too: no better form, the LLM's stands
    form = '"life without parole" AND NOT "death penalty"'
    assert repair("life without parole but not the death penalty", form) == (form, [])
    # a cue inside a sentence ("is unrelated to") is the sentence's, not an exclusion: the claim stays one term
    claim = "Vitamin D deficiency is unrelated to birth weight"
    assert defects(f"either cats or {claim}", f'"cats" OR "{claim}"') == []
    # a text the rules cannot translate at all: the LLM's form stands even with a defect
    assert try_translate_rules("   ")[1] is not None
    assert repair("   ", 'NOT "x"') == ('NOT "x"', [])
    assert repair("cats", None) == (None, [])


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(PAIRS), asts(st.sampled_from(["cats", "dogs", "both", "other than tea", "jazz"]), 5))
def test_repair_is_a_fixed_point_without_defects_and_leaves_none(pair, node):
    """Random forms against real requests: a form without defects is never touched; a replaced form is the
    rules' own translation and has no defect itself."""
    form = canonical(node)
    fixed, why = repair(pair["text"], form)
    if not defects(pair["text"], form, reference=rules_reading(pair["text"])):
        assert (fixed, why) == (form, [])
    elif fixed is None:   # connectives alone, or "x" AND NOT "x", where the rules have no reading to take instead
        assert why == [ONLY_CONNECTIVES] or why[0].startswith(SELF_NEGATED)
        rules, err = try_translate_rules(pair["text"])
        assert err is not None or defects(pair["text"], rules)
    elif why:
        rules, err = try_translate_rules(pair["text"])
        assert err is None and fixed == canonical(rules) and defects(pair["text"], fixed) == []
    else:
        assert fixed == form


class MapLLM:
    """A fake vLLM engine answering each request with a fixed form."""

    def __init__(self, answers: dict[str, str]):
        self.answers = answers

    def generate(self, prompts, params, use_tqdm=False):
        outs = []
        for p in prompts:
            request = p.rsplit("Request: ", 1)[1].split("\n")[0]
            outs.append(SimpleNamespace(outputs=[SimpleNamespace(text=self.answers[request], finish_reason="stop")]))
        return outs


ANSWERS = {"web frameworks other than React": '"web frameworks other than React"',
           "cats but not dogs": '"cats" AND NOT "dogs"'}


def test_translate_repairs_rows_names_them_and_caches_the_models_own_form(tmp_path):
    eng = VllmTranslator(llm=MapLLM(ANSWERS), mode="logical")
    rows = translate(list(ANSWERS), translator="vllm", engine=eng, cache_dir=tmp_path)
    fixed, kept = rows
    assert fixed.expr == canonical(parse('"web frameworks" AND NOT "React"'))
    assert fixed.translator.endswith("+rules") and fixed.llm_expr == '"web frameworks other than React"'
    assert fixed.repaired and "exclusion cue" in fixed.repaired[0]
    assert kept.expr == canonical(parse(ANSWERS["cats but not dogs"])) and not kept.repaired and kept.llm_expr is None
    assert not kept.translator.endswith("+rules")
    with TranslationCache.open(tmp_path) as c:   # the model's own output, so --repair none can reuse it
        assert len(c) == 2
    raw = translate(list(ANSWERS), translator="vllm", engine=eng, cache_dir=tmp_path, repair="none")
    assert all(r.cached for r in raw) and raw[0].expr == '"web frameworks other than React"'
    again = translate(list(ANSWERS), translator="vllm", engine=eng, cache_dir=tmp_path)
    assert [r.expr for r in again] == [r.expr for r in rows] and all(r.cached for r in again)


def test_an_unknown_repair_is_refused(tmp_path):
    with pytest.raises(InputError, match="repair"):
        translate(["cats"], translator="vllm", engine=VllmTranslator(llm=MapLLM({})), repair="always",
                  cache_dir=tmp_path)


def test_the_output_table_keeps_the_llms_own_form_and_the_defects(tmp_path):
    import pyarrow as pa

    from itlr_gpu.translate import translate_table

    eng = VllmTranslator(llm=MapLLM(ANSWERS), mode="logical")
    out = translate_table(pa.table({"query_id": ["a", "b"], "text": list(ANSWERS)}), translator="vllm",
                          engine=eng, cache_dir=tmp_path).to_pylist()
    assert out[0]["llm_expr"] == '"web frameworks other than React"' and "exclusion cue" in out[0]["repaired"]
    assert out[0]["expr"] == canonical(parse('"web frameworks" AND NOT "React"'))
    assert out[1]["llm_expr"] is None and out[1]["repaired"] is None


def test_a_form_of_connectives_alone_is_an_error_row_where_the_rules_find_nothing_either(tmp_path):
    """ "but not" -> NOT "but not" searched for the words "but not"; the rules refuse the request (nothing after
    "but not"), so the row is an error naming why, the model's form kept beside it; a request the rules do read
    is repaired as before."""
    import pyarrow as pa

    from itlr_gpu.translate import translate_table

    answers = {"but not": 'NOT "but not"', "either or": '("either" OR "or")', "cats and": '("cats" AND "and")'}
    assert repair("but not", answers["but not"]) == (None, [ONLY_CONNECTIVES])
    assert repair("neither nor", '"neither nor"') == (None, [ONLY_CONNECTIVES])
    assert repair("cats and", answers["cats and"])[0] == '"cats"'     # the rules read a topic: their form
    eng = VllmTranslator(llm=MapLLM(answers), mode="logical")
    out = translate_table(pa.table({"query_id": list("abc"), "text": list(answers)}), translator="vllm",
                          engine=eng, cache_dir=tmp_path).to_pylist()
    for row in out[:2]:
        assert row["expr"] is None and row["error"] == ONLY_CONNECTIVES and row["llm_expr"] == answers[row["text"]]
    assert out[2]["expr"] == '"cats"' and out[2]["error"] is None


ARG_A = ("Private military companies have a strong incentive to perform well because their future contracts depend "
         "on their record. Most of them recruit former soldiers, train their staff to high standards and equip "
         "them properly. Governments increasingly recognise the quality of such contractors and hire them "
         "for training missions abroad")
ARG_B = ("A standing army of the United Nations could deploy rapidly to contain crises before they become wars. "
         "It would be impartial, free of the suspicion that follows troops from neighbouring states, and "
         "independent of the slow bureaucracy of finding troops, equipment and funding for each mission")


def test_a_long_request_the_form_keeps_little_of_is_used_whole():
    """Kept under half of a long request (the rules refuse it): the request itself becomes the one term."""
    text = f"either {ARG_A}, or {ARG_B}"
    assert try_translate_rules(text)[1] is not None or rules_reading(text) is None
    one_phrase = '"Governments increasingly recognise the quality of such contractors"'
    assert KEEPS_LITTLE in defects(text, one_phrase)
    fixed, why = repair(text, one_phrase)
    assert why == [KEEPS_LITTLE] and parse(fixed) == parse(canonical(parse(f'"{text}"')))
    # the arguments kept, however cut: no defect, the LLM's form stands
    faithful = f'"{ARG_A}" OR "{ARG_B}"'
    assert repair(text, faithful) == (faithful, [])
    sentences = " AND ".join(f'"{s.strip()}"' for s in ARG_A.split(". ")) + f' OR "{ARG_B}"'
    assert repair(text, sentences) == (sentences, [])


def test_short_requests_may_be_distilled():
    """Below LONG_REQUEST content words a preamble's distillation is right, not a defect."""
    text = ("Some argue that a four-day working week raises productivity. Find research on the four-day week "
            "and productivity")
    assert KEEPS_LITTLE not in defects(text, '"four-day working week" AND "productivity"')
    # the floor is well above every labelled request (they may all be distilled), function words included
    assert max(len(p["text"].split()) for p in PAIRS) * 3 // 2 < LONG_REQUEST


WORDS = ["coral", "reef", "restoration", "tourism", "policy", "funding", "climate", "ocean", "fishing", "science",
         "community", "research", "monitoring", "species", "bleaching", "temperature", "nutrient", "sediment"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.sampled_from(WORDS), min_size=4, max_size=12), min_size=2, max_size=14),
       st.data())
def test_keeps_little_counts_the_kept_share_of_a_long_request(sentences, data):
    """Against a direct count: the defect fires exactly when the request has >= LONG_REQUEST content words and
    the form's terms hold under half of them (words counted with repeats)."""
    texts = [" ".join(s) for s in sentences]
    request = ". ".join(texts)
    kept = data.draw(st.lists(st.sampled_from(texts), min_size=1, max_size=len(texts), unique=True))
    form = " OR ".join(f'"{t}"' for t in kept)
    words = request.replace(".", " ").split()
    have = {w for t in kept for w in t.split()}
    want = len(words) >= LONG_REQUEST and 2 * sum(w in have for w in words) < len(words)
    assert (KEEPS_LITTLE in defects(request, form)) == want


def test_a_short_request_after_a_long_preamble_keeps_its_distilled_form():
    """A letter or an argued request: the rules read the request after the preamble, so keeping little of the
    text is the right reading for both forms; r7 replaced both with the whole text (a user probe)."""
    preamble = ("Our team has been arguing about this for weeks and nobody can settle it, because every article we "
                "read seems to contradict the last one, and the newspapers report each new study as if it overturned "
                "everything before it, while the experts quoted disagree about methods, samples, funding, confounders "
                "and whether the effects are large enough to matter for ordinary people at all. Our manager "
                "wants a short summary before the quarterly planning meeting, the union wants evidence about shift "
                "patterns, and the occupational health nurse keeps sending links to blog posts of uneven quality. ")
    text = preamble + "Find research on sleep deprivation and memory, excluding studies on rats."
    rules_form = canonical(try_translate_rules(text)[0])
    assert KEEPS_LITTLE in defects(text, rules_form)   # the rules' own form keeps little: that is the point
    llm = '("sleep deprivation" AND "memory" AND NOT "studies on rats")'
    assert repair(text, llm) == (llm, [])
    assert repair(text, '"memory"')[0] == rules_form   # a real defect (a dropped term) still takes the rules'


def test_a_term_repeated_in_one_chain_is_a_defect():
    text = "Cataract and trachoma are the primary cause of blindness in Southern Sudan."
    llm = '"cause of blindness in Southern Sudan" AND "cause of blindness in Southern Sudan"'
    assert "repeats the term 'cause of blindness in Southern Sudan' in one AND / OR" in defects(text, llm)
    fixed, found = repair(text, llm)
    assert fixed == canonical(try_translate_rules(text)[0]) and found
    assert not any("repeats" in d for d in defects("cats or dogs", '"cats" OR ("cats" AND "dogs")'))


def test_a_request_in_another_language_is_left_to_the_model():
    """The checks' cues are English: on "mais pas" or "y" they could only misread a right form (a user probe)."""
    for text, llm in [("maladies cardiaques mais pas l'hypertension", '"maladies cardiaques" AND NOT "l\'hypertension"'),
                      ("la dieta mediterránea y enfermedades cardiovasculares",
                       '"la dieta mediterránea" AND "enfermedades cardiovasculares"'),
                      # German with one listed word ("nicht") was read as English (an outside review)
                      ("Wirkung von Koffein auf den Schlaf, aber nicht bei Kindern",
                       '"Wirkung von Koffein auf den Schlaf" AND NOT "bei Kindern"'),
                      ("effecten van cafeïne op slaap, maar niet bij kinderen",
                       '"effecten van cafeïne op slaap" AND NOT "bij kinderen"')]:
        assert repair(text, llm) == (llm, [])
    # English with a foreign name keeps its checks: a NOT with no negation cue is still replaced
    assert repair("Tour de France doping scandals and the media", '"Tour de France" AND NOT "the media"')[1]


@pytest.mark.parametrize("text, llm", [
    ("太阳能 但不是 核能", '"太阳能" AND NOT "核能"'),          # its cue, 但不是, is not in the rules' lexicon
    ("солнечная энергия, но не атомная", '"солнечная энергия" AND NOT "атомная"'),
])
def test_a_request_in_another_script_keeps_the_models_form(text, llm):
    assert repair(text, llm) == (llm, [])


@pytest.mark.parametrize("word", ["not", "NOT", "Not", "or", "and"])
def test_a_quoted_connective_is_refused_in_any_case_and_the_rules_reading_replaces_it(tmp_path, word):
    # "Should I get a flu jab or not?" -> ("a flu jab" OR "not") searched for the word "not": the rules read the
    # question's claim, which replaces it; where the rules read nothing the row is an error, never a success
    text = "Should I get a flu jab or not?"
    eng = VllmTranslator(llm=MapLLM({text: f'("a flu jab" OR "{word}")', "zzq or not": f'("zzq" OR "{word}")'}),
                         mode="logical")
    rows = translate([text, "zzq or not"], translator="vllm", engine=eng, cache_dir=tmp_path)
    assert rows[0].expr == '"get a flu jab"' and rows[0].repaired and rows[0].llm_expr is not None
    assert rows[1].expr is None and "names nothing" in rows[1].error
    assert rows[0].llm_expr == canonical(parse(f'("a flu jab" OR "{word}")'))
    assert rows[1].llm_expr is None and not rows[1].repaired       # nothing repaired: no model form beside it
    raw = translate([text], translator="vllm", engine=eng, cache_dir=tmp_path, repair="none")[0]
    assert raw.expr is None and "names nothing" in raw.error and raw.llm_expr is None


def test_a_form_that_negates_its_own_term_is_an_error_row_where_the_rules_cannot_read_the_request(tmp_path):
    """ "🍕 but not 🍍" -> "🍕" AND NOT "🍕" (the model could not tell the two apart): x(1 - x) is no request's
    meaning.  Where the rules read the request their form replaces it; where they cannot, the row is an error."""
    import pyarrow as pa

    from itlr_gpu.translate import translate_table

    bad = '("🍕" AND NOT "🍕")'
    why = f"{SELF_NEGATED} '🍕' and its negation in one AND"
    assert why in defects("🍕 but not 🍍", bad)
    assert repair("🍕 but not 🍍", bad) == (None, [why])
    fixed, found = repair("pizza but not pineapple", '"pizza" AND NOT "pizza"')
    assert fixed == '("pizza" AND NOT "pineapple")' and any(d.startswith(SELF_NEGATED) for d in found)
    assert not any(d.startswith(SELF_NEGATED) for d in defects("pizza or not pizza", '"pizza" OR NOT "pizza"'))
    assert not any(d.startswith(SELF_NEGATED) for d in defects("a and not b", '("a" AND NOT ("a" AND "b"))'))
    answers = {"🍕 but not 🍍": bad, "🍕 or 🍍": '("🍕" OR "🍍")'}
    eng = VllmTranslator(llm=MapLLM(answers), mode="logical")
    out = translate_table(pa.table({"query_id": ["a", "b"], "text": list(answers)}), translator="vllm",
                          engine=eng, cache_dir=tmp_path).to_pylist()
    assert out[0]["expr"] is None and out[0]["error"] == why and out[0]["llm_expr"] == bad
    assert out[1]["expr"] == answers["🍕 or 🍍"] and out[1]["error"] is None
