"""Data layer of the quality benchmark: Reuters-21578 SGML, BEIR folders, embedding cache.

Nothing here is shipped with the package; the benchmark reads the evaluation
data from ``../shared/data`` (or ``--data-dir``).
"""

from __future__ import annotations

import glob
import gzip
import hashlib
import html
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
TOPIC_TERMS_FILE = HERE / "reuters_topics.tsv"
CHECKPOINT_S = 180.0  # seconds between checkpoints of a corpus being embedded
DOC_MAX_TOKENS = 128  # word pieces per document: the length all-MiniLM-L6-v2 was trained with


# --------------------------------------------------------------------------- corpora


@dataclass
class Corpus:
    name: str
    doc_ids: list[str]
    texts: list[str]
    labels: dict[str, frozenset[str]] = field(default_factory=dict)  # Reuters only: doc id -> TOPICS
    queries: dict[str, str] = field(default_factory=dict)  # BEIR test queries: id -> text
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)  # query id -> {doc id: grade}


_REUTERS = re.compile(r"<REUTERS([^>]*)>(.*?)</REUTERS>", re.S)


def _field(tag: str, body: str) -> str | None:
    m = re.search(rf"<{tag}>(.*?)</{tag}>", body, re.S)
    return m.group(1) if m else None


def load_topic_terms(path: Path = TOPIC_TERMS_FILE) -> dict[str, str]:
    """TOPICS code -> natural-language term (the shipped mapping file)."""
    out: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        code, term = line.split("\t")
        out[code.strip()] = term.strip()
    if len(set(out.values())) != len(out):
        raise ValueError(f"{path}: terms must be distinct")
    return out


def load_reuters(root: Path) -> Corpus:
    """Articles with a BODY and at least one TOPICS label (the universe of the set logic).

    Text = TITLE + body, SGML entities decoded; files decoded as latin-1.
    Articles without TOPICS are left out: for them "not about X" cannot be judged.
    """
    files = sorted(glob.glob(str(root / "reut2-*.sgm.gz")))
    if not files:
        raise FileNotFoundError(f"no reut2-*.sgm.gz under {root}")
    ids, texts, labels = [], [], {}
    for f in files:
        with gzip.open(f, "rb") as fh:
            sgml = fh.read().decode("latin-1")
        for attrs, body in _REUTERS.findall(sgml):
            newid = re.search(r'NEWID="(\d+)"', attrs).group(1)
            topics_block = _field("TOPICS", body) or ""
            topics = frozenset(t.strip().lower() for t in re.findall(r"<D>(.*?)</D>", topics_block, re.S))
            text_block = _field("TEXT", body) or ""
            main = _field("BODY", text_block)
            if main is None or not topics:
                continue
            title = _field("TITLE", text_block) or ""
            main = main.replace("\x03", "").replace("Reuter\n", "").strip()
            text = html.unescape((title.strip() + ".\n" + main) if title else main)
            did = f"r{newid}"
            ids.append(did)
            texts.append(" ".join(text.split()))
            labels[did] = topics
    return Corpus("reuters", ids, texts, labels=labels)


def load_beir(root: Path, name: str) -> Corpus:
    """A BEIR folder: corpus.jsonl(.gz), queries.jsonl and qrels/test.tsv (graded; grades above 0 count)."""
    corpus_file = next((root / n for n in ("corpus.jsonl.gz", "corpus.jsonl") if (root / n).is_file()), None)
    missing = [n for n, ok in (("corpus.jsonl(.gz)", corpus_file is not None),
                               ("queries.jsonl", (root / "queries.jsonl").is_file()),
                               ("qrels/test.tsv", (root / "qrels" / "test.tsv").is_file())) if not ok]
    if missing:
        raise SystemExit(f"{root}: not a BEIR folder: {', '.join(missing)} missing "
                         "(expected corpus.jsonl or corpus.jsonl.gz, queries.jsonl and qrels/test.tsv)")
    ids, texts = [], []
    opener = gzip.open if corpus_file.suffix == ".gz" else open
    with opener(corpus_file, "rt", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            ids.append(str(d["_id"]))
            title = (d.get("title") or "").strip()
            texts.append((title + ". " if title else "") + (d.get("text") or "").strip())
    queries = {}
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        for line in f:
            if not line.strip():
                continue
            d = json.loads(line)
            queries[str(d["_id"])] = d["text"].strip()
    qrels: dict[str, dict[str, int]] = {}
    with open(root / "qrels" / "test.tsv", encoding="utf-8") as f:
        next(f)
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            if int(score) > 0:
                qrels.setdefault(qid, {})[did] = int(score)
    known = set(ids)
    qrels = {q: {d: g for d, g in rel.items() if d in known} for q, rel in qrels.items() if q in queries}
    qrels = {q: rel for q, rel in qrels.items() if rel}
    queries = {q: queries[q] for q in qrels}
    return Corpus(name, ids, texts, queries=queries, qrels=qrels)


def load_dataset(name: str, data_dir: Path, folder: Path | None = None) -> Corpus:
    """One of the shared datasets by name, or the BEIR ``folder`` of a dataset of the user's own."""
    if folder is not None:
        return load_beir(folder, name)
    if name == "reuters":
        return load_reuters(data_dir / "reuters21578")
    return load_beir(data_dir / name, name)


# --------------------------------------------------------------------------- embeddings


def texts_checksum(ids: list[str], texts: list[str], extra: str = "") -> str:
    h = hashlib.sha256(extra.encode())
    for i, t in zip(ids, texts):
        h.update(i.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
        h.update(t.encode("utf-8", "surrogatepass"))
        h.update(b"\x01")
    return h.hexdigest()


def _memo_keys(z) -> list[str]:
    """The texts of a memo file: UTF-8 blob + offsets, or the older fixed-width string array."""
    if "key_bytes" in z.files:
        blob, off = z["key_bytes"].tobytes(), z["key_offsets"]
        return [blob[off[i]:off[i + 1]].decode("utf-8") for i in range(len(off) - 1)]
    return [str(k) for k in z["keys"]]


class CachedEncoder:
    """The bundled MiniLM with a persistent per-text cache (queries, terms) and a
    corpus-matrix cache keyed by model, max length and corpus checksum."""

    def __init__(self, cache_dir: Path, model: str | None = None):
        from itlr_gpu.encoders import SentenceTransformerEncoder

        # torch fp32: the committed quality results were embedded with sentence-transformers in fp32 (the lengths
        # are set below); the cache is keyed by model, not precision, so the precision is pinned here
        self.inner = SentenceTransformerEncoder(model, batch_size=32, backend="torch", precision="fp32")
        self.name = self.inner.name
        self.cache_dir = Path(cache_dir) / "embeddings" / re.sub(r"[^A-Za-z0-9_.-]", "_", self.name)
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        self._memo: dict[str, np.ndarray] = {}
        self._memo_file = self.cache_dir / "texts.npz"
        self._dirty = False
        if self._memo_file.exists():
            try:
                with np.load(self._memo_file, allow_pickle=False) as z:
                    for k, v in zip(_memo_keys(z), z["vecs"]):
                        self._memo[k] = v
            except Exception:  # a corrupt cache is simply rebuilt
                self._memo = {}

    @property
    def dim(self) -> int:
        return self.inner.dim

    def _set_len(self, n: int) -> None:
        self.inner._load().max_seq_length = n

    def encode(self, texts: list[str]) -> np.ndarray:
        """Short texts (queries, terms), memoised across runs; full model length."""
        texts = list(texts)
        todo = sorted({t for t in texts if t not in self._memo})
        if todo:
            self._set_len(256)
            vecs = self.inner.encode(todo)
            for t, v in zip(todo, vecs):
                self._memo[t] = v.astype(np.float32)
            self._dirty = True
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        return np.stack([self._memo[t] for t in texts])

    def save(self) -> None:
        if not self._dirty:
            return
        # Keys as one UTF-8 blob + offsets: a fixed-width string array pads every key to the longest
        # (ArguAna queries are whole arguments), which made a 1.4 GB file of a few MB of text.
        encoded = [k.encode("utf-8") for k in self._memo]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        vecs = np.stack(list(self._memo.values())).astype(np.float32)
        tmp = self._memo_file.with_suffix(".tmp.npz")
        np.savez(tmp, key_bytes=blob, key_offsets=offsets, vecs=vecs)
        os.replace(tmp, self._memo_file)
        self._dirty = False

    def corpus_path(self, name: str, ids: list[str], texts: list[str]) -> Path:
        key = texts_checksum(ids, texts, f"{self.name}|{DOC_MAX_TOKENS}")[:20]
        return self.cache_dir / f"{name}-{len(ids)}-{key}.npy"

    @staticmethod
    def busy(path: Path) -> bool:
        """Another live process is embedding this corpus (its pid is in ``<path>.lock``)."""
        lock = path.with_suffix(".lock")
        try:
            pid = int(lock.read_text().strip() or 0)
        except (OSError, ValueError):
            return False
        if pid == os.getpid() or pid <= 0:
            return False
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True

    def encode_corpus(self, name: str, ids: list[str], texts: list[str], desc: str | None = None) -> np.ndarray:
        """L2-normalised float32 document matrix, cached by (model, max length, corpus checksum).

        A concurrent run embedding the same corpus (``.lock`` with a live pid) is waited for."""
        import time

        from itlr_gpu.encoders import l2_normalize

        path = self.corpus_path(name, ids, texts)
        while not path.exists() and self.busy(path):
            time.sleep(5)
        if path.exists():
            return np.load(path)
        lock = path.with_suffix(".lock")
        lock.write_text(str(os.getpid()))
        partial = path.with_suffix(".partial.npz")
        try:
            self._set_len(DOC_MAX_TOKENS)
            out = self._embed_resumable(self.inner._load(), texts, partial, desc or f"embed {name}")
            out = l2_normalize(out, f"{name} embeddings")
            tmp = path.with_suffix(".tmp.npy")
            np.save(tmp, out)
            os.replace(tmp, path)
            partial.unlink(missing_ok=True)
        finally:
            lock.unlink(missing_ok=True)
        return out

    def _embed_resumable(self, model, texts: list[str], partial: Path, desc: str) -> np.ndarray:
        """Length-sorted batches (less padding); a long embedding (mpnet on two cores: an hour per corpus)
        is checkpointed into ``partial`` every CHECKPOINT_S seconds and resumed from it by the next run."""
        import time

        from tqdm.auto import tqdm

        order = np.argsort([len(t) for t in texts], kind="stable")
        out = np.empty((len(texts), self.dim), np.float32)
        done = 0
        if partial.exists():
            try:
                with np.load(partial, allow_pickle=False) as z:
                    if z["vecs"].shape == out.shape:
                        done = int(z["done"])
                        out[:] = z["vecs"]
            except (OSError, ValueError, KeyError):  # an unreadable checkpoint: start over
                done = 0
        step = 256
        last_save = time.monotonic()
        with tqdm(total=len(texts), initial=done, unit="doc", desc=desc) as bar:
            for s in range(done, len(texts), step):
                rows = order[s: s + step]
                out[rows] = model.encode([texts[i] for i in rows], batch_size=32, show_progress_bar=False,
                                         convert_to_numpy=True, normalize_embeddings=False)
                bar.update(len(rows))
                if time.monotonic() - last_save >= CHECKPOINT_S and s + step < len(texts):
                    tmp = partial.with_suffix(".tmp.npz")
                    with open(tmp, "wb") as f:
                        np.savez(f, done=s + len(rows), vecs=out)
                    os.replace(tmp, partial)
                    last_save = time.monotonic()
        return out
