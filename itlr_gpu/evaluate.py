"""Retrieval evaluation with ir_measures (no hand-written metrics).

Qrels are read from BEIR ``.tsv`` files (header ``query-id corpus-id score``),
TREC qrels (``qid 0 docid rel``, whitespace-separated; the format is detected
from the first non-blank line) or a ``.csv`` / ``.csv.gz`` with a header naming
the query, document and grade columns (BEIR's names, or ``query_id``, ``doc_id``,
``relevance`` as ir_measures and pandas users write them).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import ir_measures
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InputError, warn_caller
from .io import run_number_column
from .validate import plain_float, plain_int, read_delimited_rows, text_lines

__all__ = ["read_qrels", "evaluate", "parse_measures", "shallow_measures", "looks_like_qrels"]

PathLike = str | os.PathLike

BEIR_HEADER = ["query-id", "corpus-id", "score"]
# A CSV's header names for the three columns (compared lowercased, "-" read as "_").
CSV_COLUMNS = {"query": ("query_id", "qid", "query"),
               "doc": ("corpus_id", "doc_id", "docid", "document_id", "did", "docno"),
               "grade": ("score", "relevance", "rel", "grade", "label", "judgement", "judgment")}
QRELS_FILES = "a BEIR .tsv, TREC qrels, .csv or .arrow / .parquet qrels file"


INT32_MAX = 2**31 - 1  # trec_eval (pytrec_eval) stores grades and cutoffs as C ints


def _int(value: str, where: str) -> int:
    try:
        grade = plain_int(value)
    except ValueError as e:
        try:   # "1.0": a grade column written by a float-typed table (pandas after a merge with NaN)
            number = plain_float(value)
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number.is_integer()):
            raise InputError(f"relevance {value!r} is not an integer", where, "an integer relevance grade") from e
        grade = int(number)
    if not -INT32_MAX <= grade <= INT32_MAX:
        raise InputError(f"relevance {value!r} is out of range", where,
                         f"an integer relevance grade between {-INT32_MAX} and {INT32_MAX}")
    return grade


def looks_like_qrels(path: PathLike) -> str | None:
    """"beir" or "trec" where a text file opens as qrels do (a BEIR header, or ``qid 0 docid rel``), else None:
    the check that tells a user who swapped RESULTS and QRELS so."""
    p = Path(path)
    if not p.is_file() or p.name.lower().endswith((".arrow", ".parquet", ".jsonl", ".jsonl.gz")):
        return None
    try:
        fmt, seen, grade_at = None, 0, 2
        for _, line in text_lines(p, "text"):
            if not line.strip():
                continue
            if fmt is None:
                fmt = _qrels_format(line)
                names = _named_header(line)
                if names and "rank" in names:   # a result's column, whatever the other names (BEIR's included)
                    return None
                if fmt != "beir" and names:
                    # named columns whose grade column says so ("relevance", not a result's "score")
                    grades = [i for i, n in enumerate(names) if n in CSV_COLUMNS["grade"] and n != "score"]
                    if len(grades) != 1:
                        return None
                    fmt, grade_at = "beir", grades[0]
                    continue
                if fmt != "beir":
                    return "trec" if fmt == "trec" and line.split()[1] == "0" else None
                continue
            # a BEIR header (its grade the third column, as read_qrels reads it) over scores that are not grades
            # (0.354...) heads a result file, not qrels
            fields = line.split("\t") if "\t" in line else line.split()
            score = fields[grade_at].strip() if grade_at < len(fields) else ""
            if not re.fullmatch(r"[+-]?\d+", score):
                return None
            seen += 1
            if seen >= 100:
                break
        return "beir" if fmt == "beir" else None
    except InputError:   # not text
        return None


def _qrels_format(first_line: str) -> str | None:
    """"beir" for a BEIR header (tabs, as BEIR writes it, or spaces; more columns after the three, as in a
    spreadsheet's export, are ignored), "trec" for four fields, else None."""
    words = first_line.split()
    if [w.lower() for w in words[:3]] == BEIR_HEADER:
        return "beir"
    return "trec" if len(words) == 4 else None


def read_qrels(path: PathLike) -> list[ir_measures.Qrel]:
    """Read BEIR (tsv with header), TREC (``qid iter docid rel``) or CSV (header row) qrels; errors name
    ``file:line``."""
    p = Path(path)
    if p.is_dir():
        raise InputError("is a folder", str(p), f"{QRELS_FILES} (in a BEIR folder: qrels/test.tsv)")
    if not p.is_file():
        from .io import not_a_file

        not_a_file(p, "qrels file", QRELS_FILES)
    with open(p, "rb") as f:
        magic = f.read(6)
    if magic.startswith((b"ARROW1", b"PAR1")):
        judged = _table_qrels(p)
    else:
        judged = _csv_qrels(p) if p.name.lower().endswith((".csv", ".csv.gz")) else _text_qrels(p)
    qrels: list[ir_measures.Qrel] = []
    seen: dict[tuple[str, str], tuple[int, int]] = {}
    for lineno, qrel in judged:
        where = f"{p}:{lineno}"
        if not qrel.query_id or not qrel.doc_id:
            raise InputError("empty query or document id", where, "non-empty ids")
        first = seen.setdefault((qrel.query_id, qrel.doc_id), (lineno, qrel.relevance))
        if first[1] != qrel.relevance:
            raise InputError(f"document {qrel.doc_id!r} of query {qrel.query_id!r} is judged {first[1]} on line "
                             f"{first[0]} and {qrel.relevance} here", where, "one judgement per query and document")
        qrels.append(qrel)
    if not qrels:
        raise InputError("qrels file has no judgements", str(p), "at least one judgement line")
    return qrels


def _text_qrels(p: Path) -> Iterable[tuple[int, ir_measures.Qrel]]:
    """``(line, qrel)`` of a BEIR .tsv or TREC qrels file, the format told by its first non-blank line."""
    fmt: str | None = None
    width = 3   # a BEIR file's columns (its header's)
    named: dict[str, int] = {}   # a tab-separated header of other names: the column of each role
    for lineno, line in text_lines(p, "a BEIR .tsv or TREC qrels file"):
        where = f"{p}:{lineno}"
        if not line.strip():
            continue
        if fmt is None:
            fmt = _qrels_format(line)
            names = _named_header(line)
            if "rank" in names:
                raise InputError("a results table (its header has a rank column), not qrels", where,
                                 "qrels: itlr eval takes RESULTS first, then QRELS")
            if names and fmt != "beir":   # "query_id<TAB>doc_id<TAB>relevance" (pandas, sep="\t")
                named = _header_columns(line.split("\t"), where)
                fmt = "named"
            if fmt in ("beir", "named"):
                width = len(line.split("\t") if "\t" in line else line.split())
                continue
            if fmt is None:
                raise InputError(f"cannot detect qrels format from {line!r}", where,
                                 "a BEIR header 'query-id<TAB>corpus-id<TAB>score', a tab-separated header naming "
                                 "the query, document and grade columns, or TREC 'qid 0 docid rel'"
                                 " (or a .csv file with a header row)")
        if fmt == "named":
            fields = line.split("\t")
            if len(fields) != width:
                raise InputError(f"{len(fields)} tab-separated fields, header has {width}", where,
                                 "one value per header column")
            grade = fields[named["grade"]].strip()
            if re.fullmatch(r"[+-]?\d*\.\d*[1-9]\d*(?:[eE][+-]?\d+)?", grade):   # 0.8731: a score, not a grade
                raise InputError(f"relevance {grade!r} is not an integer", where,
                                 "an integer relevance grade (a results file? itlr eval takes RESULTS first, then QRELS)")
            yield lineno, ir_measures.Qrel(fields[named["query"]].strip(), fields[named["doc"]].strip(),
                                           _int(grade, where))
            continue
        if fmt == "beir":
            fields = line.split("\t") if "\t" in line else line.split()
            if len(fields) != width:
                raise InputError(f"{len(fields)} fields", where, "query-id, corpus-id, score separated by tabs" +
                                 (f" (and the header's {width - 3} more)" if width > 3 else ""))
            qid, did, rel = (x.strip() for x in fields[:3])
            yield lineno, ir_measures.Qrel(qid, did, _int(rel, where))
        else:
            fields = line.split()
            if len(fields) != 4:
                raise InputError(f"{len(fields)} fields", where, "4 whitespace-separated fields: qid 0 docid rel")
            qid, it, did, rel = fields
            yield lineno, ir_measures.Qrel(qid, did, _int(rel, where), it)


def _csv_qrels(p: Path) -> Iterable[tuple[int, ir_measures.Qrel]]:
    """``(line, qrel)`` of a CSV whose header names the query, document and grade columns (other columns,
    such as pandas' index, are ignored)."""
    rows = read_delimited_rows(p, csv_quoting=True)
    if not rows:
        raise InputError("qrels file is empty", str(p), "a header row and at least one judgement")
    header_line, header = rows[0]
    pos = _header_columns(header, f"{p}:{header_line}")
    for lineno, row in rows[1:]:
        where = f"{p}:{lineno}"
        if len(row) != len(header):
            raise InputError(f"{len(row)} comma-separated fields, header has {len(header)}", where,
                             "one value per header column")
        yield lineno, ir_measures.Qrel(row[pos["query"]].strip(), row[pos["doc"]].strip(),
                                       _int(row[pos["grade"]].strip(), where))


def _table_qrels(p: Path) -> Iterable[tuple[int, ir_measures.Qrel]]:
    """``(row + 1, qrel)`` of an Arrow or Parquet table with a query, a document and a grade column (named as a
    CSV header names them: BEIR's query-id, corpus-id, score exported as a table).  A results table (a rank
    column, or fractional scores) or a query file (text or expr, no grade) given as qrels is said to be one."""
    from .io import read_table

    table = read_table(p)
    names = _header_names(table.column_names)
    swapped = "itlr eval takes RESULTS first, then QRELS"
    if "rank" in names:
        raise InputError(f"a results table (it has a rank column), not qrels ({swapped})", str(p), QRELS_FILES)
    if not any(n in CSV_COLUMNS["grade"] for n in names) and any(n in ("text", "expr") for n in names):
        raise InputError("a query file (a text or expr column, no grade), not qrels", str(p), QRELS_FILES)
    pos = _header_columns(table.column_names, str(p))
    grade = table.column(pos["grade"]).combine_chunks()
    if pa.types.is_floating(grade.type) or pa.types.is_decimal(grade.type):
        floats = pc.cast(grade, pa.float64())
        whole = pc.equal(floats, pc.floor(floats))
        if not pc.all(whole).as_py():
            row = pc.index(whole, False).as_py()
            raise InputError(f"grade {floats[row].as_py()!r} at row {row} is not a whole number (a results table's "
                             f"scores? {swapped})", f"{p} column {table.column_names[pos['grade']]!r}",
                             "integer relevance grades")
        grade = floats
    elif not pa.types.is_integer(grade.type):
        raise InputError(f"grade column has type {grade.type}", f"{p} column {table.column_names[pos['grade']]!r}",
                         "integer relevance grades")
    if grade.null_count:
        raise InputError(f"null grade at row {pc.index(pc.is_null(grade), True).as_py()}", str(p), "a grade per row")
    ids = []
    for role in ("query", "doc"):
        col = table.column(pos[role]).combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type) or pa.types.is_integer(col.type)):
            raise InputError(f"{role} id column has type {col.type}", f"{p} column {table.column_names[pos[role]]!r}",
                             "string or integer ids")
        ids.append(col.cast(pa.string()).to_pylist())
    for row, (qid, did, rel) in enumerate(zip(*ids, grade.to_pylist())):
        where = f"{p} row {row}"
        yield row + 1, ir_measures.Qrel((qid or "").strip(), (did or "").strip(), _int(str(rel), where))


def _header_names(header: list[str]) -> list[str]:
    return [c.strip().lstrip("\ufeff").lower().replace("-", "_") for c in header]


_ROLE_NAMES = {n for names in CSV_COLUMNS.values() for n in names}


def _named_header(line: str) -> list[str]:
    """The column names of a tab-separated first line that names two of the query, document and grade columns at
    least (a header: a TREC line of four fields holds ids and numbers, not these names), else []."""
    names = _header_names(line.split("\t")) if "\t" in line else []
    return names if sum(n in _ROLE_NAMES for n in names) >= 2 else []


def _header_columns(header: list[str], where: str) -> dict[str, int]:
    """The column of the query, the document and the grade in a header row (names of CSV_COLUMNS, compared
    lowercased, "-" read as "_"); an InputError naming a role that is missing or named twice."""
    names = _header_names(header)
    pos: dict[str, int] = {}
    for role, accepted in CSV_COLUMNS.items():
        found = [i for i, n in enumerate(names) if n in accepted]
        if len(found) != 1:
            raise InputError(f"header {header} has {'no' if not found else 'more than one'} {role} column", where,
                             "one query column (query-id or query_id), one document column (corpus-id or doc_id) "
                             "and one grade column (score or relevance)")
        pos[role] = found[0]
    return pos


def parse_measures(measures: Iterable[str]) -> list[Any]:
    """Parse measure names such as ``nDCG@10``; unknown names raise InputError."""
    if isinstance(measures, str):
        measures = [measures]
    parsed, unknown, refused = [], [], []
    for name in measures:
        try:
            measure = ir_measures.parse_measure(str(name))
        except (NameError, ValueError, SyntaxError, TypeError, AttributeError, KeyError) as e:
            hint = _spelled(str(name))
            why = "the cutoff after @ is a positive integer" if re.search(r"@(?!\d+$)", str(name)) else str(e)
            unknown.append(f"{name!r}" + (f" (did you mean {hint!r}?)" if hint else f" ({why})"))
            continue
        bad = _bad_params(measure, str(name))
        if bad:
            unknown.append(bad)
            continue
        why = _unsupported(measure)
        if why:
            refused.append(f"{name!r} ({why})")
            continue
        parsed.append(measure)
    if unknown:   # every unknown name at once, not one per run
        invalid = any("(its " in u for u in unknown)
        raise InputError(f"unknown {'or invalid ' if invalid else ''}measure{'s' if len(unknown) > 1 else ''} "
                         + ", ".join(unknown), "measures",
                         "ir_measures names such as nDCG@10, R@100, AP, P@5, RR")
    if refused:
        raise InputError(f"measure{'s' if len(refused) > 1 else ''} not computed by the installed evaluation "
                         "providers: " + ", ".join(refused), "measures",
                         "measures and parameters a provider takes, e.g. nDCG@10, R@100, AP, P@5, RR")
    if not parsed:
        raise InputError("no measures given", "measures", "at least one measure such as nDCG@10")
    return parsed


_TREC_EVAL_NAMES = [(re.compile(r"ndcg_cut[._](\d+)", re.I), "nDCG@{}"), (re.compile(r"p[._](\d+)", re.I), "P@{}"),
                    (re.compile(r"recall[._](\d+)", re.I), "R@{}"), (re.compile(r"recip_rank", re.I), "RR"),
                    (re.compile(r"map", re.I), "AP"), (re.compile(r"ndcg", re.I), "nDCG")]


def _spelled(name: str) -> str | None:
    """``name`` as ir_measures spells it: "ndcg@10" -> "nDCG@10" (only the case differs), trec_eval's
    "ndcg_cut_10" -> "nDCG@10", "P_5" -> "P@5"; None when there is no such measure."""
    for pattern, spelled in _TREC_EVAL_NAMES:
        m = pattern.fullmatch(name.strip())
        if m:
            return spelled.format(*m.groups())
    head = re.match(r"[^@(]*", name).group(0)
    names: dict[str, str] = {}
    for m in ir_measures.measures.registry:   # the first spelling of a name registered twice ("nDCG", "NDCG")
        names.setdefault(m.lower(), m)
    spelled = names.get(head.strip().lower())
    if not spelled or spelled == head:
        return None
    try:   # only a suggestion that is itself a measure ("nDCG@x" is not)
        ir_measures.parse_measure(spelled + name[len(head):])
    except Exception:
        return None
    return spelled + name[len(head):]


def shallow_measures(results: pa.Table, measures: Iterable[str]) -> list[tuple[str, int, int]]:
    """``(measure, cutoff, depth)`` for each measure whose cutoff is deeper than the most results any query
    of ``results`` has (``R@100`` of a top-10 run is recall at 10): worth a warning, not an error."""
    if results.num_rows == 0 or "query_id" not in results.column_names:
        return []
    counts = results.group_by("query_id").aggregate([([], "count_all")]).column("count_all")
    depth = int(pc.max(counts).as_py())
    out = []
    for measure in parse_measures(measures):
        cutoff = measure.params.get("cutoff")
        if isinstance(cutoff, int) and cutoff > depth:
            out.append((str(measure), cutoff, depth))
    return out


def _unsupported(measure: Any) -> str | None:
    """Why no installed evaluation provider computes ``measure`` (an unknown parameter, one a provider refuses, a
    measure whose provider is not installed), found on a one-document run before any file is read; None when
    it is computed."""
    try:
        ir_measures.calc_aggregate([measure], [ir_measures.Qrel("1", "d", 1)], [ir_measures.ScoredDoc("1", "d", 1.0)])
    except Exception as e:   # the providers raise KeyError, ValueError, AssertionError, ... for what they refuse
        # (a required parameter left out shows as ir_measures' placeholder object: "max_rel=<object object at 0x..>")
        text = re.sub(r"<object object at 0x[0-9a-f]+>", "(not given)", " ".join(str(e).split()))[:200]
        return type(e).__name__ + (f": {text}" if text else "")
    return None


def _bad_params(measure: Any, name: str) -> str | None:
    """Parameters the C library would abort on (``P@0``) or overflow with (``nDCG@1e19``), said as one entry of
    the unknown measures' list; None when there are none."""
    for key, value in measure.params.items():
        if key in ("cutoff", "rel"):
            low = 1 if key == "cutoff" else -INT32_MAX
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= INT32_MAX:
                return f"{name!r} (its {key} {value!r}: an integer {key} from {low} to {INT32_MAX}, e.g. nDCG@10)"
        elif isinstance(value, float) and not math.isfinite(value):
            return f"{name!r} (its {key} {value!r}: parameters are finite)"
    return None


TIES = ("rank", "trec_eval")


def _run(results: pa.Table, ties: str = "rank") -> list[ir_measures.ScoredDoc]:
    """The run in the order it is to be judged: by score, ties by the table's ``rank`` when it has one and
    ``ties="rank"`` (the order the engine chose), else as trec_eval breaks them (the library's own rule).  With a
    rank column each document gets its position as the score handed on, so that the library cannot re-break the
    ties."""
    qids = [str(q) for q in results.column("query_id").to_pylist()]
    dids = [str(d) for d in results.column("doc_id").to_pylist()]
    scores = np.asarray(results.column("score").to_numpy(zero_copy_only=False), dtype=np.float64)
    if "rank" not in results.column_names or ties == "trec_eval":
        return [ir_measures.ScoredDoc(q, d, float(s)) for q, d, s in zip(qids, dids, scores)]
    ranks = np.asarray(results.column("rank").to_numpy(zero_copy_only=False), dtype=np.int64)
    order = np.lexsort((ranks, -scores))   # stable over queries: positions count within each query below
    seen: dict[str, int] = {}
    run = []
    for i in order:
        q = qids[i]
        seen[q] = seen.get(q, 0) + 1
        run.append(ir_measures.ScoredDoc(q, dids[i], float(-seen[q])))
    return run


def _warn_rank_against_scores(results: pa.Table, where: str, ties: str = "rank") -> None:
    """A warning for a table whose ``rank`` column orders some query's documents against their scores (a run
    re-ranked by hand, or scores of another stage): the documents are judged by score, as trec_eval judges them."""
    codes = np.asarray(pc.dictionary_encode(pc.cast(results.column("query_id"), pa.string()))
                       .combine_chunks().indices, dtype=np.int64)
    scores = np.asarray(results.column("score").to_numpy(zero_copy_only=False), dtype=np.float64)
    ranks = np.asarray(results.column("rank").to_numpy(zero_copy_only=False), dtype=np.float64)
    order = np.lexsort((ranks, -scores, codes))
    same_query = codes[order][1:] == codes[order][:-1]
    against = np.flatnonzero(same_query & (np.diff(ranks[order]) < 0))
    if not len(against):
        return
    n = len(np.unique(codes[order][1:][against]))
    first = order[against[0] + 1]   # a row ranked before one that outscores it
    above = order[against[0]]
    qid = results.column("query_id")[int(first)].as_py()
    warn_caller(f"the rank column of {n:,} quer{'y' if n == 1 else 'ies'} in {where} does not follow the scores "
                f"(the first {str(qid)!r}: rank {ranks[first]:g} scores {scores[first]:g}, below rank "
                f"{ranks[above]:g} at {scores[above]:g}); documents are judged by score, as trec_eval judges "
                "them, " + ("the rank breaking ties only" if ties == "rank" else "ties broken as trec_eval breaks "
                              "them"), UserWarning)


UNANSWERED = ("zero", "skip")


def evaluate(results: pa.Table, qrels: PathLike | Iterable[ir_measures.Qrel],
             measures: Iterable[str] = ("nDCG@10", "R@100"), per_query: bool = False,
             where: str = "results", unanswered: str = "zero", ties: str = "rank",
             ignore_identical_ids: bool = False) -> dict[str, Any]:
    """Score a results table (``query_id``, ``doc_id``, ``score``) against qrels.

    Returns ``{measure name: mean value}`` plus ``"judged_queries"``: the number of
    result queries that have qrels, ``"unanswered_queries"``: queries in the
    qrels with no results, and ``"judged_results"``: result rows whose document
    the qrels judge (0 when the doc ids do not match the qrels').  Queries in the results with no qrels are simply not
    judged.  ``unanswered="zero"`` (default, the ir_measures convention): an
    unanswered query counts as 0 in the means, so a query whose result set is
    empty is penalised; ``"skip"``: the means are over the judged queries only
    (for results of a subset of the qrels' queries).
    Documents are ranked by ``score``; ties are broken by the ``rank`` column
    when the table has one (itlr's results do: the engine's order) and
    ``ties="rank"`` (default), else as trec_eval breaks them (``ties="trec_eval"``:
    the rank column is ignored, as trec_eval ignores a run's ranks).  ``where`` names the results in error messages (the
    file).  With ``per_query=True`` the dict also
    holds ``"per_query"``: ``{query_id: {measure name: value}}``.
    ``"identical_ids"`` counts the queries whose results hold a document with the query's own id (queries drawn
    from the corpus, as ArguAna's are: each finds itself first); ``ignore_identical_ids=True`` leaves those results
    out before judging, as BEIR's evaluation does by default.
    Raises InputError when no result query has qrels (mismatched ids).
    """
    measures = [measures] if isinstance(measures, str) else list(measures)
    parsed = parse_measures(measures)
    # each value under the name asked for (ir_measures writes an alias its own way: NumRelRet as NumRet(rel=1))
    named = {m: str(asked) for asked, m in zip(measures, parsed)}
    if not isinstance(results, pa.Table):
        raise InputError(f"results is a {type(results).__name__}", where, "a pyarrow.Table")
    missing = [c for c in ("query_id", "doc_id", "score") if c not in results.column_names]
    if missing:
        raise InputError(f"results table lacks column(s) {missing}; found {results.column_names}", where,
                         "columns query_id, doc_id, score")
    if results.num_rows == 0:
        raise InputError("the results hold no rows", where, "at least one (query_id, doc_id, score) row")
    for name in ("query_id", "doc_id", "score"):
        col = results.column(name)
        if col.null_count:
            row = next(i for i, v in enumerate(col.to_pylist()) if v is None)
            raise InputError(f"null {name} at row {row}", f"{where} column '{name}'", "no nulls")
    for name in ("query_id", "doc_id"):
        if not (pa.types.is_string(results.column(name).type) or pa.types.is_large_string(results.column(name).type)
                or pa.types.is_integer(results.column(name).type)):
            raise InputError(f"column has type {results.column(name).type}", f"{where} column '{name}'",
                             "strings or integers")
    run_number_column(results, "score", where)   # numbers, finite (the reader of itlr eval and rerank checks alike)
    rank = run_number_column(results, "rank", where)
    if rank is not None:
        if rank.null_count:
            row = next(i for i, v in enumerate(rank.to_pylist()) if v is None)
            raise InputError(f"null rank at row {row}", f"{where} column 'rank'", "no nulls")
    pairs = pa.table({"q": pc.cast(results.column("query_id"), pa.string()),
                      "d": pc.cast(results.column("doc_id"), pa.string())})
    counts = pairs.group_by(["q", "d"]).aggregate([([], "count_all")])
    repeated = counts.filter(pc.greater(counts.column("count_all"), 1))
    if repeated.num_rows:
        q, d = repeated.column("q")[0].as_py(), repeated.column("d")[0].as_py()
        raise InputError(f"document {d!r} appears {repeated.column('count_all')[0].as_py()} times for query {q!r}"
                         f" ({repeated.num_rows} such pair(s))", where, "each document at most once per query")
    qrels_where = str(qrels) if isinstance(qrels, (str, os.PathLike)) else "qrels"
    qrel_list = read_qrels(qrels) if isinstance(qrels, (str, os.PathLike)) else list(qrels)
    if not qrel_list:
        raise InputError("no qrels", qrels_where, "at least one judgement")
    if unanswered not in UNANSWERED:
        raise InputError(f"unanswered={unanswered!r}", "unanswered", " or ".join(UNANSWERED))
    if ties not in TIES:
        raise InputError(f"ties={ties!r}", "ties", " or ".join(TIES))
    qrel_qids = {q.query_id for q in qrel_list}
    if rank is not None:
        _warn_rank_against_scores(results, where, ties)
    run = _run(results, ties)
    identical = {d.query_id for d in run if d.query_id == d.doc_id}
    if ignore_identical_ids:   # (positions were counted first: the scores handed on keep their order)
        run = [d for d in run if d.query_id != d.doc_id]
    run_qids = {d.query_id for d in run}
    judged = run_qids & qrel_qids
    missing = qrel_qids - run_qids
    if unanswered == "skip":
        qrel_list = [q for q in qrel_list if q.query_id in run_qids]
    if run and not judged:
        sample = ", ".join(sorted(run_qids)[:3])
        raise InputError(f"none of the {len(run_qids)} result queries (e.g. {sample}) of {where} has qrels",
                         qrels_where,
                         "qrels for the query ids in the results")
    # The providers see numbered ids: gdeval (ERR, NDCG of TREC Web) reads whitespace-separated files and takes only
    # numeric query ids.  Doc ids keep their order (zero-padded numbers in sorted order), so that ties broken by doc
    # id (trec_eval's rule) fall as they would on the ids themselves.
    qnum = {q: str(i) for i, q in enumerate(sorted(qrel_qids | run_qids), 1)}
    docs = sorted({q.doc_id for q in qrel_list} | {d.doc_id for d in run})
    dnum = {d: f"d{i:0{len(str(len(docs)))}d}" for i, d in enumerate(docs, 1)}
    qrel_num = [ir_measures.Qrel(qnum[q.query_id], dnum[q.doc_id], q.relevance) for q in qrel_list]
    run_num = [ir_measures.ScoredDoc(qnum[d.query_id], dnum[d.doc_id], d.score) for d in run]
    means = ir_measures.calc_aggregate(parsed, qrel_num, run_num)
    out: dict[str, Any] = {named[m]: float(means[m]) for m in parsed}   # in the order asked for
    out["judged_queries"] = len(judged)
    out["identical_ids"] = len(identical)
    out["unanswered_queries"] = len(missing)
    # result rows whose document the qrels judge (any grade): none at all means the doc ids do not match
    judged_pairs = {(q.query_id, q.doc_id) for q in qrel_list}
    out["judged_results"] = sum(1 for d in run if (d.query_id, d.doc_id) in judged_pairs)
    if per_query:
        table: dict[str, dict[str, float]] = {}
        qid = {n: q for q, n in qnum.items()}
        for metric in ir_measures.iter_calc(parsed, qrel_num, run_num):
            table.setdefault(qid[metric.query_id], {})[named[metric.measure]] = float(metric.value)
        out["per_query"] = table
    return out
