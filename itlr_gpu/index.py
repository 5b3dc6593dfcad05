"""The document store: L2-normalised embeddings, their doc ids and a manifest.

On disk an index is a folder holding ``embeddings.npy`` (memory-mappable),
``doc_ids.arrow`` (Arrow IPC file, one ``doc_id`` column) and ``manifest.json``
(format, model, shape, dtype and a SHA-256 of the matrix bytes).
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .encoders import (BACKEND_PRECISIONS, PRECISIONS, Encoder, check_settings, declared_dim, default_encoder,
                       encoder_array, l2_normalize)
from .errors import IndexIntegrityError, InputError, warn_caller
from .io import (ODD_ID_CHARS, ODD_ID_EXPECTED, check_ids, document_texts, normalize_corpus, read_corpus,
                 read_table, warn_normalisation_twins)
from .output import TEMP_TAG, OutputError, atomic_dir, check_output_folder, is_temp_name
from .validate import (is_textual, load_npy, open_maybe_gzip, read_arrow_file, read_json_file, reading,
                       strings_to_arrow, value_list)

__all__ = ["Index", "FORMAT", "FORMAT_VERSION"]

PathLike = str | os.PathLike

FORMAT = "itlr-index"
FORMAT_VERSION = 1
EMBEDDINGS_FILE = "embeddings.npy"
IDS_FILE = "doc_ids.arrow"
MANIFEST_FILE = "manifest.json"
DTYPES = ("float16", "float32")
BLOCK_BYTES = 64 << 20  # checksum / normalisation work in blocks this big, never on a full copy
_CHECKSUM_RE = re.compile(r"sha256:[0-9a-f]{64}")


def _dtype(dtype: Any) -> np.dtype:
    if dtype is None:   # (numpy reads None as float64)
        raise InputError("dtype is None", "dtype", " or ".join(DTYPES))
    try:
        dt = np.dtype(dtype)
    except TypeError as e:
        raise InputError(f"unknown dtype {dtype!r}", "dtype", " or ".join(DTYPES)) from e
    if dt.name not in DTYPES:
        raise InputError(f"unsupported dtype {dt.name}", "dtype", " or ".join(DTYPES))
    return dt.newbyteorder("<")


def _block_rows(x: np.ndarray) -> int:
    return max(1, BLOCK_BYTES // max(1, x.shape[1] * x.dtype.itemsize))


def _checksum(x: np.ndarray) -> str:
    """SHA-256 of the C-order matrix bytes, hashed block by block (no second copy)."""
    h = hashlib.sha256()
    step = _block_rows(x)
    for start in range(0, x.shape[0], step):
        h.update(memoryview(np.ascontiguousarray(x[start : start + step])).cast("B"))
    return "sha256:" + h.hexdigest()


def _mapped_checksum(matrix: np.memmap, path: Path) -> str:
    """:func:`_checksum` of a memory-mapped C-order matrix, from the file with plain reads (:func:`file_sha256`):
    hashing through the map would make every page of it resident in the process (RSS the size of the matrix,
    whatever --memory-cap says)."""
    if not matrix.flags.c_contiguous:
        return _checksum(matrix)
    return file_sha256(path, matrix.offset, matrix.nbytes)


def _normalized_copy(x: Any, dtype: np.dtype, where: str) -> np.ndarray:
    """Validate ``x`` and return its rows L2-normalised (computed in float32) as ``dtype``."""
    if isinstance(x, pa.Tensor):
        x = x.to_numpy()
    if isinstance(x, np.ma.MaskedArray) and np.ma.getmaskarray(x).any():
        raise InputError("embeddings are a masked array with masked values", where,
                         "every value present (fill them: x.filled(...), or drop those rows)")
    if isinstance(x, np.ndarray) and x.dtype.kind in "mM":   # (numpy counts a timedelta as an integer)
        raise InputError(f"embeddings have dtype {x.dtype}", where, "numbers (a float or integer matrix)")
    if type(x).__module__.split(".")[0] == "torch" and hasattr(x, "layout"):
        if getattr(x, "is_meta", False):
            raise InputError("embeddings are a tensor on the meta device (shapes, no values)", where,
                             "a tensor with values (on the CPU or a GPU)")
        if str(x.layout) != "torch.strided":   # sparse: read densely, as a matrix of its values
            x = x.to_dense()
    if not hasattr(x, "shape"):
        try:
            x = np.asarray(x)
        except ValueError as e:   # ragged rows
            raise InputError(f"embeddings are not a matrix ({e})", where, "rows of one length") from None
    if len(x.shape) != 2:
        raise InputError(f"embeddings have shape {tuple(x.shape)}", where, "a 2-D (documents, dim) matrix")
    n, d = x.shape
    if n == 0 or d == 0:
        raise InputError(f"embeddings have shape {tuple(x.shape)}", where, "at least one row and one column")
    out = np.empty((n, d), dtype=dtype)
    step = _block_rows(out)
    for start in range(0, n, step):
        out[start : start + step] = l2_normalize(_host_block(x[start : start + step]), where, row_offset=start)
    return out


def _host_block(block: Any) -> np.ndarray:
    """A block of rows as a numpy array; a torch tensor on any device and of any float dtype (bfloat16, which
    numpy lacks, included) is widened to float32 on the CPU first."""
    if type(block).__module__.split(".")[0] == "torch" and hasattr(block, "detach"):
        block = block.detach()
        if block.is_floating_point() and block.element_size() < 4:
            block = block.float()
        return block.cpu().numpy()
    return np.asarray(block)


def _ids_array(doc_ids: Any, where: str) -> pa.Array:
    if isinstance(doc_ids, pa.ChunkedArray):
        doc_ids = doc_ids.combine_chunks()
    if isinstance(doc_ids, pa.Array) and pa.types.is_dictionary(doc_ids.type):
        doc_ids = doc_ids.dictionary_decode()   # a pandas "category" column
    if not isinstance(doc_ids, pa.Array):
        if isinstance(doc_ids, str):
            raise InputError("doc_ids is a single string", where, "a sequence of ids")
        values = value_list(doc_ids, "doc_ids", "a sequence of ids, one per row", where)   # a set: refused
        try:
            doc_ids = pa.array(values)
        except OverflowError:   # Python integers beyond 64 bits: an id of any size is its decimal text
            doc_ids = strings_to_arrow([str(v) if isinstance(v, int) and not isinstance(v, bool) else v
                                        for v in values], where, "doc id")
        except UnicodeEncodeError:
            doc_ids = strings_to_arrow(values, where, "doc id")   # names the row of the lone surrogate
        except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
            raise InputError(f"doc ids are not all strings ({e})", where, "a sequence of string ids") from e
    if not pa.types.is_string(doc_ids.type):
        if not (is_textual(doc_ids.type) or pa.types.is_integer(doc_ids.type) or pa.types.is_null(doc_ids.type)):
            raise InputError(f"doc ids have type {doc_ids.type}", where, "strings")
        doc_ids = pc.cast(doc_ids, pa.string())
    check_ids(doc_ids, where, "doc_id")
    return doc_ids


def _fsync(path: Path) -> None:
    with open(path, "rb") as f:
        os.fsync(f.fileno())


def embedding_record(encoder: Any, *, settings: bool = True) -> tuple[str | None, dict | None]:
    """What an index records of the encoder that embeds its documents: the model's name and the encoder's
    settings (model, max length, backend, precision, weights), each None where the encoder has none;
    ``settings=False`` leaves the settings unresolved (None)."""
    name = getattr(encoder, "name", None)
    recorded = getattr(encoder, "settings", None) if settings else None
    return (name if isinstance(name, str) else None, dict(recorded) if isinstance(recorded, dict) else None)


class Index:
    """L2-normalised document embeddings with their ids.

    Build with :meth:`from_arrays`, :meth:`build` or :meth:`from_embedding_files`;
    persist with :meth:`save` / :meth:`load`.  ``embeddings`` may be a read-only
    ``np.memmap`` after ``load(mmap=True)``.
    """

    def __init__(self, embeddings: np.ndarray, doc_ids: pa.Array, manifest: dict[str, Any],
                 path: Path | None = None):
        self.embeddings = embeddings
        self.doc_ids = doc_ids
        self.manifest = manifest
        self.path = path  # the folder it was loaded from / saved to, for error messages
        # {file: file_stamp} of the matrix files as they were when opened and checksummed (load): a job checks
        # them before it writes (scale.shards.check_unchanged), since a memory map reads what the file holds now
        self.opened_files: dict[str, tuple[int, int, int]] = {}

    # ------------------------------------------------------------------ basics

    @property
    def dim(self) -> int:
        return int(self.embeddings.shape[1])

    @property
    def dtype(self) -> np.dtype:
        return self.embeddings.dtype

    def __len__(self) -> int:
        return int(self.embeddings.shape[0])

    def __repr__(self) -> str:
        return f"Index({len(self)} docs, dim={self.dim}, dtype={self.dtype.name}, model={self.manifest.get('model')!r})"

    def doc_id_at(self, rows: int | Iterable[int] | np.ndarray) -> list[str]:
        """Doc ids of the given row numbers (an int gives a one-element list)."""
        expected = "a row number or a sequence of them (integers)"
        if isinstance(rows, (bool, np.bool_, str, bytes, float, np.floating)):   # (1.7 is no row: not truncated)
            raise InputError(f"rows is {type(rows).__name__} {rows!r:.40}", "rows", expected)
        if isinstance(rows, (int, np.integer)):
            rows = [int(rows)]
        try:
            values = np.asarray(list(rows) if not isinstance(rows, np.ndarray) else rows)
        except TypeError:   # not iterable
            raise InputError(f"rows is {type(rows).__name__}", "rows", expected) from None
        if values.ndim != 1 or values.dtype == bool or (values.size and not (
                np.issubdtype(values.dtype, np.integer) or values.dtype == object
                and all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in values))):
            raise InputError(f"rows hold {values.dtype} values of shape {values.shape}", "rows", expected)
        if values.dtype == object:   # Python integers (beyond 64 bits too): compared before any cast overflows
            outside = [int(v) for v in values if not 0 <= int(v) < len(self)]
        else:
            outside = values[(values < 0) | (values >= len(self))].tolist()
        if outside:
            raise InputError(f"row {outside[0]} is outside the index", "rows", f"row numbers in 0..{len(self) - 1}")
        return self.doc_ids.take(pa.array(values.astype(np.int64))).to_pylist()

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_arrays(cls, embeddings: Any, doc_ids: Sequence[str] | pa.Array | pa.ChunkedArray, *,
                    dtype: str = "float16", model: str | None = None) -> Index:
        """Validate, L2-normalise (in float32) and cast ``embeddings`` to ``dtype``."""
        return cls._from_arrays(embeddings, doc_ids, dtype=dtype, model=model,
                                emb_where="embeddings", ids_where="doc_ids")

    @classmethod
    def _from_arrays(cls, embeddings: Any, doc_ids: Any, *, dtype: str, model: str | None,
                     emb_where: str, ids_where: str) -> Index:
        dt = _dtype(dtype)
        ids = _ids_array(doc_ids, ids_where)
        # the shape first: a 1-D vector is not "384 rows"
        if hasattr(embeddings, "shape") and len(embeddings.shape) != 2:
            raise InputError(f"embeddings have shape {tuple(embeddings.shape)}", emb_where,
                             "a 2-D (documents, dim) matrix")
        if hasattr(embeddings, "shape") and embeddings.shape[0] != len(ids):
            raise InputError(f"{len(ids)} doc ids for {embeddings.shape[0]} embedding rows",
                             f"{ids_where} / {emb_where}", "one id per row")
        matrix = _normalized_copy(embeddings, dt, emb_where)
        if matrix.shape[0] != len(ids):
            raise InputError(f"{len(ids)} doc ids for {matrix.shape[0]} embedding rows",
                             f"{ids_where} / {emb_where}", "one id per row")
        return cls(matrix, ids, cls._manifest(matrix, model))

    @staticmethod
    def _manifest(matrix: np.ndarray, model: str | None) -> dict[str, Any]:
        if model is not None and not isinstance(model, str):   # what load() would refuse, refused before save()
            raise InputError(f"model is {type(model).__name__} {model!r:.40}", "model",
                             "the model's name (a string) or None")
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "model": model,
            "dim": int(matrix.shape[1]),
            "dtype": matrix.dtype.name,
            "count": int(matrix.shape[0]),
            "normalization": "l2",
            "checksum": None,  # filled in by save()
            "created": None,
        }

    @classmethod
    def build(cls, corpus: PathLike | pa.Table, encoder: Encoder | None = None, *,
              dtype: str = "float16", batch_size: int = 256, keep_empty: bool = False,
              not_in: Index | None = None, progress: bool = True) -> Index:
        """Encode a corpus (a path :func:`read_corpus` accepts, or a table) into an index.

        Documents without text (empty title and text) are left out with a warning: the vector of an empty
        string is close to every short term, so such documents would top OR queries.  ``keep_empty=True``
        embeds each as an empty string (their ids kept in the index).  ``not_in``: an index the new documents
        are for (:meth:`append`); an id already in it is refused before anything is encoded.  ``progress``: a
        progress bar on standard error once encoding takes over 2 s (False: none)."""
        from tqdm.auto import tqdm

        dt = _dtype(dtype)
        if type(corpus).__module__.split(".")[0] == "pandas" and hasattr(corpus, "columns"):
            corpus = pa.Table.from_pandas(corpus, preserve_index=False)   # a DataFrame: its columns, no index
        if isinstance(corpus, pa.Table):
            table, where = normalize_corpus(corpus, "corpus table"), "corpus table"
        elif isinstance(corpus, (str, os.PathLike)):
            table, where = read_corpus(corpus), str(corpus)
        else:
            raise InputError(f"corpus is a {type(corpus).__name__}", "Index.build",
                             "a path to a corpus file, a pyarrow.Table or a pandas DataFrame "
                             "(columns doc_id / _id, text, optional title)")
        if encoder is None:
            encoder = default_encoder()
        if not isinstance(encoder, Encoder):
            raise InputError(f"{type(encoder).__name__} has no encode() method", "encoder", "an Encoder")
        if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
            raise InputError(f"batch_size {batch_size!r}", "Index.build", "a positive integer")
        batch_size = int(batch_size)
        model = embedding_record(encoder, settings=False)[0]
        texts = document_texts(table)
        n = len(texts)
        blank = [i for i, t in enumerate(texts) if not _has_text(t)]
        if blank:
            first = table.column("doc_id")[blank[0]].as_py()
            what = f"{len(blank):,} of {n:,} documents of {where} have no text (empty title and text; first: {first!r})"
            if len(blank) == n and not keep_empty:
                raise InputError(f"no document has text ({n:,} with empty title and text)", where,
                                 "documents with a title or a text (--keep-empty indexes them anyway)")
            if keep_empty:
                warn_caller(f"{what}: each is embedded as an empty string")
            else:
                warn_caller(f"{what}: left out of the index (--keep-empty, keep_empty=True in Python, embeds "
                            "each as an empty string)")
                keep = np.ones(n, dtype=bool)
                keep[blank] = False
                table = table.filter(pa.array(keep))
                texts = [t for t, k in zip(texts, keep) if k]
                n = len(texts)
        if not_in is not None:
            not_in.check_new_ids(table.column("doc_id"))
        scant = [i for i, t in enumerate(texts) if _letters(t) < _MIN_LETTERS and _has_text(t)]
        if scant:   # kept (they are documents), but worth a word: they behave like the empty ones above
            first = table.column("doc_id")[scant[0]].as_py()
            warn_caller(f"{len(scant):,} of {n:,} documents of {where} hold almost no text (fewer than "
                        f"{_MIN_LETTERS} letters or digits, e.g. one character or only emoji; first: {first!r}): "
                        "their vectors lie close to many short terms, so they may rank high on OR and NOT "
                        "queries")
        out: np.ndarray | None = None
        emb_where = f"embeddings of {where} (encoder {model or type(encoder).__name__})"
        # Longest texts first, over the whole corpus: each call's texts are of similar length, so the encoder's
        # batches pad little (sorting within a call only left SciFact at 85 docs/s against 100 for one sorted
        # call), and a batch too long for memory fails at the start.  Rows go back to corpus order.
        order = np.argsort([-len(t) for t in texts], kind="stable")
        # shown once encoding has run 2 s (a few hundred documents can take minutes on a small CPU), not for less
        with tqdm(total=n, unit="doc", desc="encoding", delay=2.0, disable=n <= 1 or not progress) as bar:
            for start in range(0, n, batch_size):
                rows = order[start : start + batch_size]
                batch = [texts[i] for i in rows]
                vecs = encoder_array(encoder.encode(batch), f"a ({len(batch)}, dim) array")
                if vecs.ndim != 2 or vecs.shape[0] != len(batch) or (out is not None and vecs.shape[1] != out.shape[1]):
                    expected = f"({len(batch)}, {out.shape[1] if out is not None else 'dim'})"
                    raise InputError(f"encoder returned shape {vecs.shape} for {len(batch)} texts", emb_where, expected)
                if out is None:
                    declared = declared_dim(encoder)
                    if declared is not None and declared != vecs.shape[1]:
                        raise InputError(f"encoder declares dim {declared} but returned {vecs.shape[1]} columns",
                                         emb_where, "vectors of the declared dimension")
                    out = np.empty((n, vecs.shape[1]), dtype=dt)
                out[rows] = l2_normalize(vecs, emb_where, rows=rows)
                bar.update(len(batch))
        assert out is not None  # normalize_corpus guarantees a non-empty corpus
        manifest = cls._manifest(out, model)
        settings = embedding_record(encoder)[1]
        if settings is not None:   # how documents were embedded: queries must be embedded the same way
            _check_settings(settings)
            manifest["encoder"] = settings
        return cls(out, table.column("doc_id").combine_chunks(), manifest)

    @classmethod
    def from_embedding_files(cls, embeddings_path: PathLike, ids_path: PathLike | None = None, *,
                             dtype: str = "float16") -> Index:
        """Import precomputed embeddings.

        Either a ``.npy`` matrix plus ``ids_path`` (a text file with one id per
        line, or an Arrow/Parquet file with a ``doc_id``/``_id`` column or a single
        column), or a Parquet/Arrow table with a list column (``embedding``, or the
        only list column) and ids in its ``doc_id``/``_id`` column or in ``ids_path``.
        """
        ep = Path(embeddings_path)
        if not ep.is_file():
            raise InputError("embeddings file not found", str(ep), "an existing .npy, .parquet or .arrow file")
        suffix = ep.suffix.lower()
        if suffix == ".npy":
            if ids_path is None:
                raise InputError("a .npy matrix needs an ids file", str(ep),
                                 "--ids (ids_path in the API): a text file, .arrow or .parquet")
            matrix = load_npy(ep, mmap=True, expected="a file written by numpy.save")
            ids, ids_where = _read_id_file(Path(ids_path)), str(ids_path)
        elif suffix in (".parquet", ".arrow"):
            table = read_table(ep)
            matrix = _list_column_matrix(table, str(ep))
            if ids_path is not None:
                own = [c for c in ("doc_id", "_id") if c in table.column_names]
                if own:   # two id sources that may disagree: every result would be mislabelled
                    raise InputError(f"{ep.name} has its own '{own[0]}' column and an ids file was given too "
                                     f"({ids_path})", str(ep), "one source of ids: leave out --ids (ids_path), or "
                                     "a table without a doc_id / _id column")
                ids, ids_where = _read_id_file(Path(ids_path)), str(ids_path)
            else:
                col = _id_column(table, str(ep), allow_single=False)
                ids, ids_where = table.column(col), f"{ep} column '{col}'"
        else:
            raise InputError(f"unknown embeddings file type '{ep.suffix}'", str(ep), "one of .npy, .parquet, .arrow")
        return cls._from_arrays(matrix, ids, dtype=dtype, model=None, emb_where=str(ep), ids_where=ids_where)

    def check_embedded_alike(self, model: str | None, encoder: dict | None, *, planned: bool = False) -> None:
        """Refuse documents embedded (``planned``: about to be embedded) with another model or other encoder
        settings than this index's: checked before any document is encoded where the settings are known."""
        where = str(self.path) if self.path else "index"
        verb = "would be" if planned else "were"
        mine_enc = self.manifest.get("encoder")
        # as a query encoder is matched: the settings both records hold (an index from before the model digest was
        # recorded is checked on the rest), and the model's name only where the digests do not say the same files
        # (a moved or copied model folder)
        same_files = bool(mine_enc and encoder and mine_enc.get("weights") is not None
                          and mine_enc.get("weights") == encoder.get("weights"))
        if not same_files and self.manifest.get("model") != model:
            raise InputError(f"the new documents {verb} embedded with model {model!r}, the index with "
                             f"{self.manifest.get('model')!r}", where,
                             "documents embedded as the index's were (the same model and encoder settings)")
        if bool(mine_enc) != bool(encoder):
            raise InputError(f"the new documents {verb} embedded with encoder {encoder!r}, the index with "
                             f"{mine_enc!r}", where, "documents embedded as the index's were (the same model and "
                             "encoder settings)")
        if mine_enc and encoder:
            diff = [f"{k} {encoder[k]!r} (new) vs {mine_enc[k]!r} (index)" for k in sorted(set(mine_enc) & set(encoder))
                    if encoder[k] != mine_enc[k] and not (k == "model" and same_files)]
            if diff:
                raise InputError(f"the new documents {verb} embedded otherwise than the index's: " + "; ".join(diff),
                                 where, "documents embedded as the index's were (the same model and encoder "
                                        "settings)")

    def append(self, other: Index) -> Index:
        """A new in-memory index: this one's documents, then ``other``'s (cast to this dtype).

        Both must be embedded alike: the same dimension, model and recorded encoder settings (build ``other``
        with ``Index.build(corpus, encoder)`` where ``encoder`` embeds as this index's documents were, e.g.
        ``encoders.encoder_for(index.manifest["encoder"])``); a doc id in both is refused.  The result keeps
        this index's manifest (model, encoder settings, model path), so queries are still checked against it."""
        for name, ix in (("to", self), ("", other)):   # a ShardedIndex is appended to through its single file
            if type(ix) is not Index:
                raise InputError(f"can only append{' ' + name if name else ''} a single-file Index, got "
                                 f"{type(ix).__name__}", "append", "an Index (Index.build / Index.from_arrays / "
                                 "Index.load)")
        where = str(self.path) if self.path else "index"
        if other.dim != self.dim:
            raise InputError(f"documents of dimension {other.dim} appended to an index of dimension {self.dim}",
                             where, "vectors of the index's dimension")
        self.check_embedded_alike(other.manifest.get("model"), other.manifest.get("encoder"))
        self.check_new_ids(other.doc_ids)
        matrix = np.concatenate([np.asarray(self.embeddings), np.asarray(other.embeddings, dtype=self.dtype)])
        ids = pa.concat_arrays([self.doc_ids, other.doc_ids.cast(self.doc_ids.type)])
        warn_normalisation_twins(ids, where, "doc_id")   # the new ids beside the old ones
        manifest = dict(self.manifest, count=int(matrix.shape[0]), checksum=None, created=None)
        manifest.pop("ids_checksum", None)
        return Index(matrix, ids, manifest)

    # ------------------------------------------------------------------ checks

    def check_new_ids(self, ids: pa.Array | pa.ChunkedArray) -> None:
        """Refuse doc ids that are already in this index (what :meth:`append` would be given)."""
        mine = set(self.doc_ids.to_pylist())
        repeated = [d for d in ids.to_pylist() if str(d) in mine]
        if repeated:
            raise InputError(f"doc_id {str(repeated[0])!r} is already in the index ({len(repeated):,} of the new ids "
                             "are)", str(self.path) if self.path else "index",
                             "new doc ids only (to replace a document, build the index again)")

    def check_encoder(self, encoder: Encoder) -> None:
        """Refuse an encoder whose settings (model, max length, backend, precision; when the index
        records them) or ``dim`` differ from the index's.  An encoder whose options were left unset
        adopts the index's recorded settings (see ``SentenceTransformerEncoder.match_settings``)."""
        check_settings(encoder, self.manifest.get("encoder"), str(self.path) if self.path else "index")
        dim = declared_dim(encoder)
        if dim is not None and dim != self.dim:
            name = getattr(encoder, "name", None) or type(encoder).__name__
            model = self.manifest.get("model")
            made = f"built with model {model!r}" if model else "imported embeddings; no model recorded"
            raise InputError(
                f"encoder '{name}' produces {int(dim)}-dimensional vectors but the index has dimension {self.dim} "
                f"({made})",
                str(self.path) if self.path else "index",
                "the encoder the index was built with",
            )

    # ------------------------------------------------------------------ persistence

    def save(self, directory: PathLike) -> Path:
        """Write the index folder atomically (temporary sibling folder, then rename).

        An existing folder is replaced only when it holds an itlr index and nothing
        else (its ``embeddings.npy``, ``doc_ids.arrow``, ``manifest.json``); a folder
        holding any other file, dotfiles included, is refused and left untouched.
        """
        if isinstance(directory, bytes):
            directory = os.fsdecode(directory)
        if not isinstance(directory, (str, os.PathLike)):
            raise InputError(f"index folder is a {type(directory).__name__}", "directory", "a folder path")
        target = check_output_folder(directory)
        replace = check_replaceable(target, INDEX_FILES)
        with atomic_dir(target, replace=replace) as tmp:
            manifest = dict(self.manifest, model=self.manifest.get("model"), dim=self.dim,
                            dtype=self.dtype.name, count=len(self), checksum=_checksum(self.embeddings),
                            created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                            format=FORMAT, format_version=FORMAT_VERSION, normalization="l2")
            with open(tmp / EMBEDDINGS_FILE, "wb") as f:
                np.save(f, self.embeddings, allow_pickle=False)
                f.flush()
                os.fsync(f.fileno())
            manifest["ids_checksum"] = write_doc_ids(self.doc_ids, tmp / IDS_FILE)
            with open(tmp / MANIFEST_FILE, "w", encoding="utf-8") as f:
                json.dump(manifest, f, indent=2)
                f.write("\n")
                f.flush()
                os.fsync(f.fileno())
        self.manifest, self.path = manifest, target
        return target

    @classmethod
    def load(cls, directory: PathLike, *, verify: bool = True, mmap: bool = True) -> Index:
        """Open an index folder; ``verify`` checks the matrix checksum, ``mmap`` maps it read-only."""
        d = index_folder(directory, "itlr index (Index.save)")
        manifest = _read_manifest(d)
        for name in (EMBEDDINGS_FILE, IDS_FILE):
            if not (d / name).is_file():
                raise IndexIntegrityError(f"{name} is missing", str(d),
                                          "embeddings.npy, doc_ids.arrow and manifest.json")
        ep = d / EMBEDDINGS_FILE
        opened = file_stamp(os.stat(ep))
        try:
            matrix = load_npy(ep, mmap=mmap, expected="a .npy file written by itlr index (Index.save)")
        except InputError as e:
            raise IndexIntegrityError(e.what, e.where, e.expected) from e
        shape = (manifest["count"], manifest["dim"])
        if matrix.shape != shape or matrix.dtype != np.dtype(manifest["dtype"]).newbyteorder("<"):
            raise IndexIntegrityError(
                f"matrix is {matrix.dtype.str} {matrix.shape} but the manifest says {manifest['dtype']} {shape}",
                str(ep), "the shape and dtype recorded in manifest.json",
            )
        ids = read_doc_ids(d, manifest["count"], manifest.get("ids_checksum"))
        if verify:
            actual = _mapped_checksum(matrix, ep) if isinstance(matrix, np.memmap) else _checksum(matrix)
            if actual != manifest["checksum"]:
                raise IndexIntegrityError(
                    f"checksum mismatch: manifest has {manifest['checksum']}, file has {actual}",
                    str(ep), "the matrix written by itlr index (Index.save; the file is corrupt or was modified)",
                )
        if file_stamp(os.stat(ep)) != opened:
            raise IndexIntegrityError("the file changed while the index was being opened", str(ep),
                                      "an index left alone while it is read")
        index = cls(matrix, ids, manifest, d.absolute())
        index.opened_files = {os.path.abspath(ep): opened}
        return index


# ---------------------------------------------------------------------- module helpers


def file_stamp(st: os.stat_result) -> tuple[int, int, int]:
    """What tells a file apart from the one opened earlier: a rename over it (inode), a write into it (size,
    modification time)."""
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def index_folder(directory: PathLike, writer: str) -> Path:
    """``directory`` as a Path, refused unless it is a folder (a file is named as such)."""
    if not isinstance(directory, (str, os.PathLike)):
        raise InputError(f"index folder is a {type(directory).__name__}", "directory", "a folder path")
    d = Path(directory)
    if not d.is_dir():
        what = "is a file, not an index folder" if d.exists() else "index folder not found"
        aside = [] if d.exists() else sorted(d.parent.glob(glob.escape(f".{d.name}.old{TEMP_TAG}") + "*"))
        if aside:   # a replace killed between its two renames: the previous index is the only copy
            what += (f"; a replace of it was interrupted and left the previous index at {aside[-1]} (rename it "
                     f"back to {d.name})")
        raise InputError(what, str(d), f"a folder written by {writer}")
    return d


def check_not_in_index(path: str | os.PathLike, flag: str = "-o") -> None:
    """Refuse an output inside an index folder (at any depth): an index holds its own files only, and one foreign
    file there makes it refuse ``--append`` and a rebuild (:func:`check_replaceable`)."""
    target = Path(os.path.realpath(path))
    for folder in target.parents:
        if _is_index_dir(folder):
            raise OutputError(f"inside the index folder {folder}", f"{flag} {os.fspath(path)}",
                              "a path outside it (an index folder holds the index's files only)")


def _is_index_dir(d: Path) -> bool:
    try:
        m = read_json_file(d / MANIFEST_FILE, "an index manifest")
    except InputError:
        return False
    return m.get("format") in (FORMAT, "itlr-sharded-index")


def check_replaceable(target: Path, owned: Callable[[str], bool]) -> bool:
    """Whether saving an index to ``target`` replaces an existing one (True) or creates it (False).

    Refuses (InputError) a folder holding anything the index does not own: a file
    next to an index, a project folder, dotfiles.  Stale temporaries of itlr are
    not counted (they are removed before writing).
    """
    if not target.exists():
        return False
    if not target.is_dir():
        raise OutputError("exists and is not a folder", str(target), "a new or index folder")
    names = sorted(n for n in os.listdir(target) if not is_temp_name(n))
    if not names:
        return False
    if not _is_index_dir(target):
        shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
        raise OutputError(f"refusing to replace a non-empty folder that is not an itlr index (holds {shown})",
                          str(target), "a new path, an empty folder or an existing index")
    foreign = [n for n in names if not owned(n)]
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise OutputError(f"refusing to replace an index folder that also holds other files ({shown})",
                          str(target), "an index folder holding only the index's files (move the others away)")
    return True


def INDEX_FILES(name: str) -> bool:  # noqa: N802 - a predicate used like a constant set
    """The names a single-file or sharded index owns in its folder."""
    return name in (EMBEDDINGS_FILE, IDS_FILE, MANIFEST_FILE) or re.fullmatch(r"embeddings-[0-9]{5,}\.npy", name) is not None


_MIN_LETTERS = 2


def _letters(text: str) -> int:
    """Letters and digits in ``text``, counted up to _MIN_LETTERS."""
    count = 0
    for ch in text:
        if ch.isalnum():
            count += 1
            if count >= _MIN_LETTERS:
                break
    return count


def _has_text(text: str) -> bool:
    """Whether ``text`` holds a visible character: white space, zero-width and format characters (U+200B,
    U+FEFF, ...) embed like an empty string."""
    return any(not ch.isspace() and unicodedata.category(ch) not in ("Cf", "Cc", "Zs", "Zl", "Zp", "Cs", "Cn")
               for ch in text)


def write_doc_ids(doc_ids: pa.Array, path: Path) -> str:
    """Write ``doc_ids.arrow`` (fsynced) and return the SHA-256 of its bytes (the manifest's ``ids_checksum``)."""
    with pa.OSFile(str(path), "wb") as f:
        ids = pa.table({"doc_id": doc_ids})
        with pa.ipc.new_file(f, ids.schema) as writer:
            writer.write_table(ids)
    _fsync(path)
    return file_sha256(path)


def file_sha256(path: Path, offset: int = 0, size: int | None = None) -> str:
    """SHA-256 of the file's bytes (from ``offset``, ``size`` of them or to the end), read in blocks: the pages go
    through the OS page cache, never into the process (a file cut short hashes what it holds)."""
    h = hashlib.sha256()
    left = size
    with open(path, "rb") as f:
        f.seek(offset)
        while left is None or left > 0:
            block = f.read(8 << 20 if left is None else min(left, 8 << 20))
            if not block:
                break
            h.update(block)
            if left is not None:
                left -= len(block)
    return "sha256:" + h.hexdigest()


def read_doc_ids(d: Path, count: int, checksum: str | None = None) -> pa.Array:
    """The folder's doc_ids.arrow, checked: its SHA-256 against ``checksum`` (manifests written since the
    ids were checksummed), full Arrow validation (any version), one string column, ``count`` unique
    non-empty ids."""
    ip = d / IDS_FILE
    if not ip.is_file():
        raise IndexIntegrityError(f"{IDS_FILE} is missing", str(d), "doc_ids.arrow next to manifest.json")
    if checksum is not None:
        try:
            actual = file_sha256(ip)
        except OSError as e:
            raise IndexIntegrityError(f"unreadable doc ids ({e.strerror})", str(ip), "a readable file") from e
        if actual != checksum:
            raise IndexIntegrityError(f"checksum mismatch: manifest has {checksum}, file has {actual}", str(ip),
                                      "the doc ids written by itlr index (Index.save; the file is corrupt or was modified)")
    try:
        table = read_arrow_file(ip, "an Arrow IPC file written by itlr index (Index.save)")
    except InputError as e:
        raise IndexIntegrityError(f"unreadable doc ids: {e.what}", str(ip), e.expected) from e
    if table.column_names != ["doc_id"] or not pa.types.is_string(table.schema.field(0).type):
        raise IndexIntegrityError(f"columns are {table.schema}", str(ip), "one string column 'doc_id'")
    ids = table.column("doc_id").combine_chunks()
    if len(ids) != count:
        raise IndexIntegrityError(f"{len(ids)} doc ids but the manifest says {count} documents", str(ip),
                                  "one id per embedding row")
    try:
        check_ids(ids, str(ip), "doc_id", spelling=False)   # an index saved before the spelling check loads
    except InputError as e:
        raise IndexIntegrityError(e.what, e.where, e.expected) from e
    return ids


def read_json_manifest(d: Path, fmt: str, version: int, writer: str) -> tuple[dict[str, Any], str]:
    """The folder's manifest.json with its ``format`` and ``format_version`` checked; (manifest, its path)."""
    mp = d / MANIFEST_FILE
    where = str(mp)
    if not mp.is_file():
        raise IndexIntegrityError("manifest.json is missing", str(d), f"a folder written by {writer}")
    try:
        m: Any = read_json_file(mp, f"a JSON manifest written by {writer}")
    except InputError as e:
        raise IndexIntegrityError(f"unreadable manifest: {e.what}", where, e.expected) from e
    if not isinstance(m, dict) or m.get("format") != fmt:
        got = m.get("format") if isinstance(m, dict) else type(m).__name__
        if fmt == FORMAT and got == "itlr-sharded-index":   # a valid index of the other kind: say how to load it
            raise InputError("a sharded index (itlr shard) is not loaded by Index.load", str(d),
                             "itlr_gpu.scale.load_index(folder), which loads both kinds")
        raise IndexIntegrityError(f"format is {got!r}", where, f"format {fmt!r}")
    found = m.get("format_version")
    if isinstance(found, bool) or found != version:
        hint = " (written by a newer itlr-gpu?)" if isinstance(found, int) and found > version else ""
        raise IndexIntegrityError(f"format_version is {found!r}{hint}", where, f"format_version {version}")
    return m, where


_ENCODER_FIELDS: dict[str, Callable[[Any], bool]] = {
    "max_length": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
    "backend": lambda v: v in BACKEND_PRECISIONS,
    "precision": lambda v: isinstance(v, str),
    "weights": lambda v: isinstance(v, str) and re.fullmatch(r"sha256:[0-9a-f]{16}", v) is not None,
}


def _valid_encoder_record(encoder: Any) -> bool:
    """How documents were embedded: ``model`` always; ``max_length``, ``backend`` and ``precision`` together
    (an encoded corpus; absent for imported embeddings); ``weights`` since the model digest was recorded."""
    if not isinstance(encoder, dict) or not isinstance(encoder.get("model"), (str, type(None))):
        return False
    run = [k for k in ("max_length", "backend", "precision") if k in encoder]
    if run and len(run) != 3:
        return False
    if not all(ok(encoder[k]) for k, ok in _ENCODER_FIELDS.items() if k in encoder):
        return False
    if "weights" not in encoder:   # another encoder's own settings (the API takes any): recorded as it gave them
        return True
    # the project's encoder (it records the model's digest): a model, and a length, precision and backend/precision
    # pair that it writes
    return "model" in encoder and (not run or encoder["max_length"] >= 8 and encoder["precision"] in PRECISIONS
                                   and encoder["precision"] in BACKEND_PRECISIONS[encoder["backend"]])


def _check_settings(settings: dict[str, Any]) -> None:
    """An encoder's own ``settings`` as an index records them: refused here, before anything is written, where
    :meth:`Index.load` would refuse the saved index."""
    try:
        json.dumps(settings, allow_nan=False)
        recordable = _valid_encoder_record(settings)
    except (TypeError, ValueError):
        recordable = False
    if not recordable:
        raise InputError(f"encoder.settings is {settings!r:.120}", "encoder",
                         "a dict of JSON values: model (a string), and max_length (an integer), backend (" +
                         " or ".join(BACKEND_PRECISIONS) + ") and precision (a string) all three or none of them")


def check_encoder_record(manifest: dict[str, Any], where: str) -> None:
    """Refuse a manifest's ``encoder`` field that no encoder writes (an index's or a sharded index's)."""
    encoder = manifest.get("encoder")
    if encoder is not None and not _valid_encoder_record(encoder):
        raise IndexIntegrityError(f"field 'encoder' is {encoder!r}", where,
                                  "{model, max_length (>= 8), backend, precision (a pair: torch fp32/bf16/fp16, "
                                  "onnx fp32/int8, openvino fp32/bf16), weights} (imported embeddings: {model, "
                                  "weights}) or absent")


def _read_manifest(d: Path) -> dict[str, Any]:
    m, where = read_json_manifest(d, FORMAT, FORMAT_VERSION, "itlr index (Index.save)")
    checks = {
        "model": lambda v: v is None or isinstance(v, str),
        "dim": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
        "count": lambda v: isinstance(v, int) and not isinstance(v, bool) and v > 0,
        "dtype": lambda v: v in DTYPES,
        "normalization": lambda v: v == "l2",
        "checksum": lambda v: isinstance(v, str) and _CHECKSUM_RE.fullmatch(v) is not None,
        "created": lambda v: isinstance(v, str),
        "ids_checksum": lambda v: v is None or (isinstance(v, str) and _CHECKSUM_RE.fullmatch(v) is not None),
    }
    check_encoder_record(m, where)
    expected = {"model": "a string or null", "dim": "a positive integer", "count": "a positive integer",
                "dtype": " or ".join(DTYPES), "normalization": "'l2'", "checksum": "'sha256:<64 hex digits>'",
                "created": "an ISO timestamp", "ids_checksum": "'sha256:<64 hex digits>' (or absent: older indexes)"}
    for key, ok in checks.items():
        if key not in m and key == "ids_checksum":
            continue  # indexes saved before doc_ids.arrow was checksummed; fully validated on load instead
        if key not in m:
            raise IndexIntegrityError(f"field '{key}' is missing", where, expected[key])
        if not ok(m[key]):
            raise IndexIntegrityError(f"field '{key}' is {m[key]!r}", where, expected[key])
    return m


def _id_column(table: pa.Table, where: str, *, allow_single: bool) -> str:
    for name in ("doc_id", "_id"):
        if name in table.column_names:
            return name
    if allow_single and table.num_columns == 1:
        return table.column_names[0]
    raise InputError(f"no id column; found {table.column_names}", where,
                     "a 'doc_id' or '_id' column" + (" or a single column" if allow_single else " or an ids file"))


def _read_id_file(path: Path) -> pa.Array | list[str]:
    """Ids from an Arrow/Parquet/JSONL table, or from a text file with one id per line."""
    if not path.is_file():
        raise InputError("ids file not found", str(path), "an existing text, .arrow or .parquet file")
    name = path.name.lower()
    if name.endswith((".arrow", ".parquet", ".jsonl", ".jsonl.gz")):
        table = read_table(path)
        return table.column(_id_column(table, str(path), allow_single=True))
    with reading(path, "a UTF-8 text file, one id per line"), open_maybe_gzip(path) as f:   # (.gz as elsewhere)
        data = f.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"invalid UTF-8 ({e.reason})", f"{path}:{line}", "a UTF-8 text file, one id per line") from e
    lines = text.split("\n")
    while lines and not lines[-1].strip():
        lines.pop()  # the final newline, and blank lines after the last id (an editor's or a script's "\n\n")
    ids = [line[:-1] if line.endswith("\r") else line for line in lines]
    if ids and ids[0].strip().lower() in ("doc_id", "_id", "id", "docid", "doc-id", "ids", "document_id"):
        raise InputError(f"the first line {ids[0].strip()!r} looks like a column header", f"{path}:1",
                         "one id per line and no header, or a .arrow / .parquet / .jsonl table with a doc_id column")
    first: dict[str, int] = {}
    for lineno, doc_id in enumerate(ids, start=1):   # a text file's places are lines (counted from 1)
        if not doc_id.strip():
            raise InputError("blank line", f"{path}:{lineno}", "one non-empty id per line")
        if doc_id != doc_id.strip() or re.search(ODD_ID_CHARS, doc_id):   # (check_ids' rule, named by its line)
            raise InputError(f"doc_id {doc_id!r} has white space at an end or a control character", f"{path}:{lineno}",
                             f"ids {ODD_ID_EXPECTED}")
        if doc_id in first:
            raise InputError(f"duplicate doc_id {doc_id!r} (first on line {first[doc_id]})", f"{path}:{lineno}",
                             "unique ids")
        first[doc_id] = lineno
    if not ids:
        raise InputError("ids file is empty", str(path), "one id per line")
    return ids


def _list_column_matrix(table: pa.Table, where: str) -> np.ndarray:
    """A float32 matrix from a list / fixed_size_list column, refusing ragged or null rows."""
    def is_list(t: pa.DataType) -> bool:
        return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)

    if "embedding" in table.column_names:
        name = "embedding"
        if not is_list(table.schema.field(name).type):
            raise InputError(f"column 'embedding' has type {table.schema.field(name).type}", where,
                             "a list<float> column")
    else:
        lists = [f.name for f in table.schema if is_list(f.type)]
        if len(lists) != 1:
            raise InputError(f"{len(lists)} list columns ({lists}) and no 'embedding' column", where,
                             "an 'embedding' column or exactly one list<float> column")
        name = lists[0]
    col = table.column(name).combine_chunks()
    cw = f"{where} column '{name}'"
    if len(col) == 0:
        raise InputError("no rows", cw, "at least one embedding")
    if col.null_count:
        row = pc.index(pc.is_null(col), True).as_py()
        raise InputError(f"null embedding at row {row}", cw, "a vector on every row")
    lengths = pc.list_value_length(col).to_numpy(zero_copy_only=False)
    ragged = lengths != lengths[0]
    if ragged.any():
        row = int(np.argmax(ragged))
        raise InputError(f"row {row} has {lengths[row]} values but row 0 has {lengths[0]}", cw,
                         "the same number of values on every row")
    values = col.flatten()
    if not (pa.types.is_floating(values.type) or pa.types.is_integer(values.type)):
        raise InputError(f"values have type {values.type}", cw, "numbers")
    if values.null_count:
        pos = pc.index(pc.is_null(values), True).as_py()
        raise InputError(f"null value in row {pos // int(lengths[0])}", cw, "numbers only")
    return values.to_numpy(zero_copy_only=False).reshape(len(col), int(lengths[0]))
