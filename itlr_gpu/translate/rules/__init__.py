"""Rule-based natural-language -> logical-query translator (no model, deterministic).

The translator reads common English logical phrasing and builds an AST of the
query language (:mod:`itlr_gpu.query`):

* exclusion clauses -- ``but not``, ``excluding``, ``except (for)``, ``without``,
  ``other than``, ``rather than``, ``apart from``, ``instead of``, ``as opposed to``,
  ``not including``, ``that do not mention``, ``, not`` ... -- scope over everything
  before them back to the last *strong* separator, and each item of the list after
  them is negated on its own (a redundant ``not`` on an item is dropped):
  ``a or b but not c or d`` -> ``(("a" OR "b") AND NOT "c" AND NOT "d")``;
* strong separators join whole clauses and end an exclusion's list: ``; or``,
  ``or else``, ``or alternatively``, ``; alternatively,``, and a comma-conjunction
  (``, or`` / ``, and``) that does not close a comma list:
  ``a but not b, or c`` -> ``(("a" AND NOT "b") OR "c")``, while
  ``a but not b, c, or d`` still excludes b, c and d.  ``either a but not b, or c``
  reads its alternatives as such clauses;
* ``and``, ``as well as``, ``along with``, ``together with``, ``in addition to``,
  ``plus`` are AND; ``or``, ``and/or`` are OR; a bare ``but`` joins two clauses by AND;
  ``a and b together`` / ``combined`` is ``a AND b``;
* ``either a or b``, ``any of a, b or c``, ``both a and b`` and ``all of a, b and c``
  are bracketed groups; ``neither a nor b`` is ``(NOT "a" AND NOT "b")`` (an ``and``
  between ``neither`` and ``nor`` stays inside the term); parentheses are kept;
* exclusion-only groups negate each listed item: ``anything except a or b``,
  ``everything but a``, ``nothing about a``, ``none of a, b or c``, and a generic
  subject before an exclusion (``anything not about a``, ``documents that do not
  mention a``) -> ``(NOT "a" AND NOT "b")`` / ``NOT "a"``;
* ``not x`` after an operator (or at the start) negates one operand, with the
  grammar's precedence NOT > AND > OR: ``a and not b or c`` ->
  ``(("a" AND NOT "b") OR "c")``; in ``a, not b, and c`` only b is negated;
* comma lists take the conjunction that closes them (``a, b and c``; Oxford commas
  too), while a comma-conjunction after a list of another kind joins at a lower
  level: ``a or b, and c`` -> ``(("a" OR "b") AND "c")``;
* filler is stripped: requests (``find``, ``show me``, ``I want``, ``I'm looking
  for``, ``could you``...) at the start, generic document words with their
  relation (``documents about``, ``papers on``, ``articles discussing``, ``studies
  of``, ``news about``, ``ones about``...) at the start of any term, a bare
  ``about`` after a connective (``texts about a or about b``), and ``please`` /
  ``thanks``;

Long and single-term texts:

* double-quoted spans (``"..."``, also curly ``“...”`` and ``«...»``) are
  never split: ``"law and economics" or finance`` has two terms;
* a small list of fixed binomials (``research and development``, ``rock and roll``,
  ``iron and steel``, ``pros and cons``...) stays one term;
* a text that holds a sentence -- an auxiliary or modal verb (``is``, ``are``,
  ``should``, ``does not``...) is left after the filler -- keeps plain lower-case
  ``and`` / ``or`` / ``not`` / ``but`` and commas as words of that sentence
  (``The death penalty is not a deterrent and should be abolished`` is one term),
  except at a visible boundary between two sentences or titles (a lower-case word,
  the connective, a capitalised word; a capitalised ``The`` / ``How`` / ``Is``...
  after it; a title-case run followed by a lower-case word) and except the ``or`` /
  ``and`` an ``either`` / ``both`` waits for.  Upper-case ``AND`` / ``OR`` / ``NOT``
  and the other markers (``but not``, ``excluding``...) keep their meaning.  ``not``
  right after an auxiliary (``is not``) is always part of the text;
* brackets right after a word around words only (``protein (RP) expression``) are
  part of the term; a spaced aside in brackets at the end of a clause that opens with an
  exclusion or "or" is one (``board games (nothing with small pieces)``, ``Node.js (or
  Deno)``), and one about the writer or a preference is dropped (``(asking for my dad)``,
  ``(recent work preferred)``);
* how-to questions are their task (``How do I fix X?``, ``how to X``), and a relation asked
  about names its two topics (``What links A and B?``, ``How do A and B influence each
  other?``);
* a request after a short preamble (``Some argue that X. Find research on Y but not Z``:
  at most three sentences of context, then a sentence that asks for documents, at most
  two long) is translated without the preamble;
* paragraphs of prose (two or more sentences, none of them a request) are one term
  when they hold no connective and are refused otherwise: in query-by-document text
  ("<argument> or <argument>") where one argument ends is a matter of meaning, not of
  wording, so such text falls back to the whole-text embedding (quoted terms, or an
  LLM translator, say where the terms are).  Initials and abbreviations (``J. Smith``,
  ``Dr.``, ``U.S.``) end no sentence.

Terms are the remaining contiguous spans of the text, case and inner punctuation
kept.  :func:`translate_rules` never raises on a ``str``: text it cannot translate
(empty, only filler, too long, nested too deeply) gives a :class:`RuleError`
message instead, returned by :func:`try_translate_rules`.
"""

from .lexicon import RuleError
from .pipeline import MAX_RULE_TERMS, translate_rules, try_translate_rules

__all__ = ["RuleError", "translate_rules", "try_translate_rules", "RULES_VERSION", "MAX_RULE_TERMS"]

RULES_VERSION = "rules-112"
"""Changes whenever the rules change (recorded with every LLM form the rules repair)."""
