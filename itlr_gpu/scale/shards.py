"""Shards: row ranges of the document matrix, scored one at a time and merged exactly.

Out-of-core search
------------------
:func:`search_out_of_core` never holds more than two shards of the matrix in
memory: a loader thread reads shard *i+1* from the file (``pread`` straight into
a reusable buffer, so the page cache, not the process, holds the file) while
shard *i* is scored.  On a CUDA device the buffers are pinned and the
host-to-device copy runs on a second CUDA stream, so disk reads, transfers and
compute overlap.  Per-shard top-k (with rows offset to global row numbers) are
folded together by :func:`merge_topk`, which applies the engine's tie rule
(score descending, then row ascending), so the result is the in-memory run's
up to float32 rounding of the dot products (a shard's blocking rounds them as it
falls; near-ties may swap, every other position holds the same document).

Sharded index files
-------------------
:func:`save_sharded` writes an index folder whose matrix is split into
``embeddings-00000.npy``, ``embeddings-00001.npy``, ... with each shard's row
range and SHA-256 in ``manifest.json`` (format ``itlr-sharded-index``).
:func:`load_index` opens either layout; a missing or corrupt shard raises one
:class:`~itlr_gpu.errors.IndexIntegrityError` line naming the shard.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

import numpy as np
import torch

from ..compiler import PUSH, Program
from ..errors import IndexIntegrityError, InputError
from ..index import (IDS_FILE, INDEX_FILES, MANIFEST_FILE, Index, _checksum, check_encoder_record, check_replaceable,
                     file_stamp, index_folder, read_doc_ids, read_json_manifest, write_doc_ids)
from ..output import atomic_dir, check_output_folder
from ..validate import NPY_ERRORS, read_json_file
from ..ops import Ops

__all__ = [
    "SHARDED_FORMAT", "plan_shards", "merge_topk", "slice_program", "parse_bytes", "shard_rows_for_cap",
    "ShardedMatrix", "ShardedIndex", "save_sharded", "load_index", "index_checksum", "search_out_of_core",
    "check_unchanged",
    "RowSource",
]

SHARDED_FORMAT = "itlr-sharded-index"
SHARDED_FORMAT_VERSION = 1
SHARD_FILE = "embeddings-{:05d}.npy"
DEFAULT_SHARD_BYTES = 256 << 20       # per shard buffer when neither shard_rows nor memory_cap is given
DEFAULT_CHUNK_BUDGET = 256 << 20       # the reference scorer's default working set
_CHECKSUM_RE = re.compile(r"sha256:[0-9a-f]{64}")

# --------------------------------------------------------------------------- planning and merging


def plan_shards(n_rows: int, shard_rows: int, start: int = 0) -> list[tuple[int, int]]:
    """Row ranges ``[(lo, hi), ...]`` covering ``start .. start + n_rows`` in pieces of ``shard_rows``."""
    if not isinstance(shard_rows, (int, np.integer)) or isinstance(shard_rows, bool) or shard_rows < 1:
        raise InputError(f"shard_rows={shard_rows!r}", "shard_rows", "a positive integer")
    if n_rows < 0:
        raise InputError(f"n_rows={n_rows!r}", "plan_shards", "a non-negative row count")
    return [(start + lo, start + min(n_rows, lo + int(shard_rows))) for lo in range(0, n_rows, int(shard_rows))]


def merge_topk(parts: Iterable[tuple[np.ndarray, np.ndarray]], k: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Merge per-shard top-k ``(scores (Q, k_i), rows (Q, k_i))`` into the global top-k.

    ``rows`` must already be global row numbers (shard offset added); the parts
    may have different widths (a shard smaller than k).  The result is sorted by
    score descending, then row ascending -- the single-process tie rule -- and
    has width ``min(k, sum k_i)`` (all of them when ``k`` is None).  Exact: a
    document in the global top-k is in its shard's top-k, because the shard's
    top-k is taken with the same total order.
    """
    parts = [(np.asarray(s, dtype=np.float32), np.asarray(r, dtype=np.int64)) for s, r in parts]
    if not parts:
        raise InputError("no parts to merge", "merge_topk", "at least one (scores, rows) pair")
    q = parts[0][0].shape[0]
    for s, r in parts:
        if s.ndim != 2 or s.shape != r.shape or s.shape[0] != q:
            raise InputError(f"part of shape {s.shape} / {r.shape}", "merge_topk", f"({q}, k_i) scores and rows")
    scores = np.concatenate([s for s, _ in parts], axis=1)
    rows = np.concatenate([r for _, r in parts], axis=1)
    m = scores.shape[1]
    k_eff = m if k is None else min(int(k), m)
    if m == 0 or q == 0:
        return scores[:, :k_eff], rows[:, :k_eff]
    # lexsort: the last key is the primary one -> (query, -score, row).
    # -0.0 == 0.0 compares equal, so signed zeros tie like in torch.sort.
    qidx = np.repeat(np.arange(q, dtype=np.int64), m)
    order = np.lexsort((rows.ravel(), -scores.ravel(), qidx)).reshape(q, m)[:, :k_eff]
    return scores.ravel()[order], rows.ravel()[order]


def slice_program(program: Program, lo: int, hi: int) -> tuple[Program, np.ndarray]:
    """Queries ``lo:hi`` of ``program`` as a program of their own, and the indices of its terms.

    Only the terms those queries use are kept, so ``term_embeddings[term_index]``
    are the sliced program's term embeddings.
    """
    lo, hi = max(0, int(lo)), min(program.num_queries, int(hi))
    a, b = int(program.offsets[lo]), int(program.offsets[hi])
    opcodes = program.opcodes[a:b].copy()
    operands = program.operands[a:b].copy()
    used = np.unique(operands[opcodes == PUSH]).astype(np.int64)
    remap = np.full(len(program.terms), -1, dtype=np.int32)
    remap[used] = np.arange(len(used), dtype=np.int32)
    operands[opcodes == PUSH] = remap[operands[opcodes == PUSH]]
    sub = Program(
        terms=[program.terms[i] for i in used],
        opcodes=opcodes,
        operands=operands,
        offsets=program.offsets[lo:hi + 1] - a,
        max_depth=program.max_depth,
        query_ids=list(program.query_ids[lo:hi]) if program.query_ids else [],
    )
    return sub, used


_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 1000**2, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1000**3, "gib": 1 << 30, "t": 1 << 40, "tb": 1000**4, "tib": 1 << 40}


MIN_CHUNK_BUDGET = 64 << 10
MIN_MEMORY_CAP = 2 * MIN_CHUNK_BUDGET   # the least a cap can be honoured with: half goes to the chunk working set
MAX_BYTES = 1 << 62                     # beyond any machine; keeps sizes inside int64


def parse_bytes(text: str | int, where: str = "--memory-cap", minimum: int = MIN_MEMORY_CAP) -> int:
    """``"512MiB"``, ``"2G"``, ``"1.5GB"`` or an integer -> bytes: a whole number from ``minimum`` to 2**62."""
    if isinstance(text, (int, np.integer)) and not isinstance(text, bool):
        value = int(text)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*", str(text))
        if not m or m.group(2).lower() not in _UNITS:
            raise InputError(f"cannot read size {text!r}", where, "a size such as 512MiB, 2GiB or 1000000000")
        exact = float(m.group(1)) * _UNITS[m.group(2).lower()]
        if exact != int(exact) and exact < 1 << 40:
            raise InputError(f"size {text!r} is not a whole number of bytes", where, "a size such as 512MiB or 2GiB")
        value = int(exact) if exact < MAX_BYTES * 2 else MAX_BYTES * 2
    if not minimum <= value <= MAX_BYTES:
        raise InputError(f"size {text!r} is {'below the least that can be honoured' if value < minimum else 'too large'}",
                         where, f"a size from {minimum:,} bytes ({minimum >> 10} KiB) to 2**62 bytes")
    return value


def shard_rows_for_cap(dim: int, itemsize: int, memory_cap: int, *, num_buffers: int = 2,
                       chunk_budget: int | None = None) -> int:
    """Rows per shard so that ``num_buffers`` shard buffers plus the chunk working set fit ``memory_cap``.

    The chunk working set (the reference scorer's budget) takes half of the cap,
    at most :data:`DEFAULT_CHUNK_BUDGET`; the shard buffers share the rest.
    """
    if chunk_budget is None:
        chunk_budget = chunk_budget_for_cap(memory_cap)
    row_bytes = max(1, dim * itemsize)
    return max(1, (memory_cap - chunk_budget) // (num_buffers * row_bytes))


def chunk_budget_for_cap(memory_cap: int | None) -> int:
    return DEFAULT_CHUNK_BUDGET if memory_cap is None else max(MIN_CHUNK_BUDGET, min(DEFAULT_CHUNK_BUDGET, memory_cap // 2))


# --------------------------------------------------------------------------- reading rows from .npy files


@dataclass(frozen=True)
class NpyLayout:
    path: str
    offset: int          # bytes before the data
    shape: tuple[int, ...]
    dtype: np.dtype
    fortran: bool
    stamp: tuple[int, int, int] = (0, 0, 0)   # (inode, size, mtime_ns) when the header was read


def npy_layout(path: str | os.PathLike, where: str | None = None) -> NpyLayout:
    """Header of a ``.npy`` file (data offset, shape, dtype) without reading the data."""
    p = str(path)
    try:
        with open(p, "rb") as f:
            version = np.lib.format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(f)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(f)
            offset = f.tell()
            st = os.fstat(f.fileno())
            size = st.st_size
    except (OSError, *NPY_ERRORS) as e:
        raise IndexIntegrityError(f"unreadable .npy header ({e})", where or p, "a .npy file written by numpy.save") from e
    need = offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if size < need:
        raise IndexIntegrityError(f"file is truncated ({size} bytes, {need} needed)", where or p,
                                  "the complete .npy file")
    return NpyLayout(p, offset, tuple(int(s) for s in shape), np.dtype(dtype), bool(fortran), file_stamp(st))


def _pread_into(fd: int, buf: np.ndarray, offset: int, where: str) -> None:
    mv = memoryview(buf.reshape(-1).view(np.uint8))
    pos, total = 0, mv.nbytes
    while pos < total:
        got = os.preadv(fd, [mv[pos:]], offset + pos)
        if got <= 0:
            raise IndexIntegrityError(f"file ended after {offset + pos} bytes", where, "the complete .npy file")
        pos += got


def _copy_block(block: Any, out: np.ndarray) -> np.ndarray:
    """``block`` (rows of an in-memory array or a torch tensor) copied into ``out``; returns ``out``."""
    if isinstance(block, torch.Tensor):
        block = block.detach().cpu().numpy()
    np.copyto(out, np.asarray(block), casting="same_kind")
    return out


class RowSource:
    """Copies row ranges of a document matrix into caller-owned buffers.

    File-backed matrices (an ``np.load(mmap_mode='r')`` memmap of a whole file,
    or a :class:`ShardedMatrix`) are read with ``pread``: nothing stays mapped,
    so the process' memory is the buffers, whatever the matrix size.  Anything
    else (an in-memory array, a torch tensor) is copied by slicing.
    """

    def __init__(self, docs: Any, opened: dict[str, tuple[int, int, int]] | None = None):
        """``opened``: the matrix files' stamps when the index was opened (``Index.opened_files``): a file
        changed since is refused at once, not only when it changes again during the reads."""
        self.docs = docs
        self.shape = tuple(int(s) for s in docs.shape)
        self.dtype = _np_dtype(docs)
        self.segments: list[tuple[int, int, NpyLayout, str]] = []  # (row_lo, row_hi, layout, label)
        if isinstance(docs, ShardedMatrix):
            self.segments = [(s.start, s.stop, s.layout, s.label) for s in docs.segments]
        elif isinstance(docs, np.memmap) and getattr(docs, "filename", None) and docs.flags.c_contiguous:
            try:
                layout = npy_layout(docs.filename)
            except IndexIntegrityError:
                layout = None
            if (layout is not None and not layout.fortran and layout.shape == self.shape
                    and layout.dtype == docs.dtype and layout.offset == getattr(docs, "offset", -1)):
                was = (opened or {}).get(os.path.abspath(docs.filename))
                if was is not None and was != layout.stamp:
                    raise _changed_error(str(docs.filename))
                self.segments = [(0, self.shape[0], layout, str(docs.filename))]
        self._fds: dict[str, int] = {}
        self._lock = threading.Lock()

    @property
    def file_backed(self) -> bool:
        return bool(self.segments)

    def _fd(self, path: str, label: str) -> int:
        with self._lock:
            fd = self._fds.get(path)
            if fd is None:
                try:
                    fd = os.open(path, os.O_RDONLY)
                except OSError as e:
                    raise IndexIntegrityError(f"cannot open ({e.strerror})", label, "a readable shard file") from e
                self._fds[path] = fd
            return fd

    def read(self, lo: int, hi: int, out: np.ndarray) -> np.ndarray:
        """Rows ``lo:hi`` into ``out[:hi-lo]`` (C-contiguous, the matrix dtype); returns that view."""
        n = hi - lo
        view = out[:n]
        if not self.segments:
            return _copy_block(self.docs[lo:hi], view)
        row_bytes = self.shape[1] * self.dtype.itemsize
        for s_lo, s_hi, layout, label in self.segments:
            a, b = max(lo, s_lo), min(hi, s_hi)
            if a >= b:
                continue
            fd = self._fd(layout.path, label)
            # a file changed since its checksum was checked (at load) would score garbage without a word: a
            # stat per read (a shard's full hash is the Ray stream's, per task)
            if file_stamp(os.fstat(fd)) != layout.stamp:
                raise _changed_error(label)
            _pread_into(fd, view[a - lo:b - lo], layout.offset + (a - s_lo) * row_bytes, label)
        return view

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The rows at the given indices, in their order (one read each: a sample spread over a file-backed matrix
        maps none of it, where fancy indexing a memmap maps the pages around every row)."""
        out = np.empty((len(rows), self.shape[1]), dtype=self.dtype)
        if not self.segments:
            return _copy_block(self.docs[np.asarray(rows)], out)
        for i, r in enumerate(rows):
            self.read(int(r), int(r) + 1, out[i:i + 1])
        return out

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()

    def __enter__(self) -> "RowSource":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def document_sample_read(docs: Any, options, device) -> torch.Tensor:
    """:func:`~itlr_gpu.scoring.document_sample` of a matrix, its rows read with ``pread`` where the matrix is
    file-backed: the sample's 4,096 rows spread over the whole file, and indexing a memmap with them mapped most
    of a large matrix into the process (a 768 MB matrix under a 16 MiB ``--memory-cap``)."""
    from ..scoring import sample_rows

    with RowSource(docs) as source:
        block = source.take(sample_rows(int(docs.shape[0]), options.sample_size))
    return torch.from_numpy(block.astype(np.float32)).to(device)


def _changed_error(where: str) -> IndexIntegrityError:
    return IndexIntegrityError("the file changed while the index was open (its checksum was checked when it was "
                               "opened)", where, "an index left alone while a job reads it; with the index restored, "
                               "a bulk job's rerun resumes after its last complete part, and a new index needs a new "
                               "output folder")


def opened_files(index: Index) -> dict[str, tuple[int, int, int]]:
    """``{file: stamp}`` of an index's matrix files as they were opened: a sharded index's shard files (stamped
    before their checksums were checked), a single-file index's ``embeddings.npy`` (``Index.load``)."""
    if isinstance(index.embeddings, ShardedMatrix):
        return {os.path.abspath(s.layout.path): s.layout.stamp for s in index.embeddings.segments}
    return dict(getattr(index, "opened_files", {}) or {})


def check_unchanged(index: Index) -> None:
    """Refuse (IndexIntegrityError) an index whose matrix files changed since it was opened: scores computed from a
    memory map, a Ray worker's copy or a streamed read are then of other vectors than the ids and checksum the job
    records.  Jobs call it before they write what they computed."""
    for path, stamp in opened_files(index).items():
        try:
            now = file_stamp(os.stat(path))
        except OSError:
            now = None
        if now != stamp:
            raise _changed_error(path)


def _np_dtype(docs: Any) -> np.dtype:
    if isinstance(docs, torch.Tensor):
        if docs.dtype == torch.float16:
            return np.dtype(np.float16)
        if docs.dtype == torch.float32:
            return np.dtype(np.float32)
        raise InputError(f"tensor dtype {docs.dtype}", "documents", "float16 or float32")
    return np.dtype(docs.dtype)


# --------------------------------------------------------------------------- sharded index files


@dataclass(frozen=True)
class ShardSegment:
    number: int
    start: int
    stop: int
    layout: NpyLayout
    checksum: str

    @property
    def label(self) -> str:
        return f"{self.layout.path} (shard {self.number}, rows {self.start}-{self.stop - 1})"


_VERIFIED: set[tuple[str, str, int]] = set()  # (path, checksum, mtime_ns) hashed OK in this process
_VERIFIED_LOCK = threading.Lock()


class ShardedMatrix:
    """A read-only (N, d) matrix stored as several ``.npy`` shard files.

    Supports ``shape``, ``dtype``, ``len``, row slices ``m[lo:hi]`` and integer
    row arrays ``m[[3, 1, 7]]`` (each returns an ndarray); only the shards that
    are touched are opened (memory-mapped).
    """

    def __init__(self, segments: list[ShardSegment], dim: int, dtype: np.dtype):
        self.segments = segments
        self.starts = np.array([s.start for s in segments] + [segments[-1].stop], dtype=np.int64)
        self.shape = (int(segments[-1].stop), int(dim))
        self.dtype = np.dtype(dtype)
        self.ndim = 2
        self._maps: dict[int, np.ndarray] = {}

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        return f"ShardedMatrix({self.shape}, {self.dtype.name}, {len(self.segments)} shards)"

    def _map(self, i: int) -> np.ndarray:
        m = self._maps.get(i)
        if m is None:
            seg = self.segments[i]
            m = np.memmap(seg.layout.path, dtype=seg.layout.dtype, mode="r", offset=seg.layout.offset,
                          shape=seg.layout.shape)
            self._maps[i] = m
        return m

    def verify(self, lo: int = 0, hi: int | None = None) -> None:
        """Check the SHA-256 of every shard overlapping rows ``lo:hi`` (each file once per process)."""
        hi = self.shape[0] if hi is None else hi
        for seg in self.segments:
            if seg.stop <= lo or seg.start >= hi:
                continue
            verify_segment(seg)

    def __getitem__(self, key):
        if isinstance(key, tuple):
            rows, cols = key[0], key[1:]
            return self[rows][(slice(None),) + cols]
        if isinstance(key, (int, np.integer)):
            return self[np.array([int(key)])][0]
        if isinstance(key, slice):
            lo, hi, step = key.indices(self.shape[0])
            if step != 1:
                return self[np.arange(lo, hi, step)]
            out = np.empty((max(0, hi - lo), self.shape[1]), dtype=self.dtype)
            for i, seg in enumerate(self.segments):
                a, b = max(lo, seg.start), min(hi, seg.stop)
                if a < b:
                    out[a - lo:b - lo] = self._map(i)[a - seg.start:b - seg.start]
            return out
        rows = np.asarray(key, dtype=np.int64).reshape(-1)
        if rows.size and (rows.min() < 0 or rows.max() >= self.shape[0]):
            raise IndexError(f"row out of range 0..{self.shape[0] - 1}")
        out = np.empty((rows.size, self.shape[1]), dtype=self.dtype)
        which = np.searchsorted(self.starts, rows, side="right") - 1
        for i in np.unique(which):
            sel = which == i
            out[sel] = self._map(int(i))[rows[sel] - self.segments[int(i)].start]
        return out

    def __array__(self, dtype=None, copy=None):
        full = self[0:self.shape[0]]
        return full if dtype is None else full.astype(dtype)


def verify_segment(seg: ShardSegment) -> None:
    path = seg.layout.path
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError as e:
        raise IndexIntegrityError(f"shard {seg.number} is missing ({e.strerror})", path,
                                  "the shard file written by itlr shard (save_sharded)") from e
    key = (path, seg.checksum, mtime)
    with _VERIFIED_LOCK:
        if key in _VERIFIED:
            return
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(seg.layout.offset)
        remaining = int(np.prod(seg.layout.shape, dtype=np.int64)) * seg.layout.dtype.itemsize
        while remaining:
            block = f.read(min(remaining, 16 << 20))
            if not block:
                break
            h.update(block)
            remaining -= len(block)
    actual = "sha256:" + h.hexdigest()
    if actual != seg.checksum:
        raise IndexIntegrityError(
            f"shard {seg.number} (rows {seg.start}-{seg.stop - 1}) checksum mismatch: manifest has {seg.checksum}, "
            f"file has {actual}", path, "the shard written by itlr shard (save_sharded; the file is corrupt or was modified)")
    with _VERIFIED_LOCK:
        _VERIFIED.add(key)


class ShardedIndex(Index):
    """An :class:`~itlr_gpu.index.Index` whose ``embeddings`` is a :class:`ShardedMatrix`."""

    embeddings: ShardedMatrix

    @property
    def shards(self) -> list[ShardSegment]:
        return self.embeddings.segments

    def save(self, directory) -> Path:  # type: ignore[override]
        raise InputError("a sharded index is saved with save_sharded()", str(directory),
                         "itlr_gpu.scale.shards.save_sharded(index, folder, shard_rows)")

    @classmethod
    def load(cls, directory, *, verify: bool = True, mmap: bool = True) -> "ShardedIndex":  # type: ignore[override]
        d = index_folder(directory, "itlr shard (save_sharded)")
        manifest = _read_sharded_manifest(d)
        dtype = np.dtype(manifest["dtype"]).newbyteorder("<")
        segments: list[ShardSegment] = []
        for i, entry in enumerate(manifest["shards"]):
            path = d / entry["file"]
            label = f"{path} (shard {i}, rows {entry['start']}-{entry['stop'] - 1})"
            if not path.is_file():
                raise IndexIntegrityError(f"shard {i} (rows {entry['start']}-{entry['stop'] - 1}) is missing",
                                          str(path), f"the {len(manifest['shards'])} shard files listed in manifest.json")
            layout = npy_layout(path, label)
            shape = (entry["stop"] - entry["start"], manifest["dim"])
            if layout.shape != shape or layout.dtype != dtype or layout.fortran:
                raise IndexIntegrityError(
                    f"shard {i} is {layout.dtype.str} {layout.shape} but the manifest says {manifest['dtype']} {shape}",
                    str(path), "the shape and dtype recorded in manifest.json")
            segments.append(ShardSegment(i, entry["start"], entry["stop"], layout, entry["checksum"]))
        ids = read_doc_ids(d, manifest["count"], manifest.get("ids_checksum"))
        matrix = ShardedMatrix(segments, manifest["dim"], dtype)
        if verify:
            matrix.verify()
        return cls(matrix, ids, manifest, d.absolute())


def _read_sharded_manifest(d: Path) -> dict[str, Any]:
    m, where = read_json_manifest(d, SHARDED_FORMAT, SHARDED_FORMAT_VERSION, "itlr shard (save_sharded)")
    for key in ("dim", "count"):
        if not isinstance(m.get(key), int) or isinstance(m.get(key), bool) or m[key] <= 0:
            raise IndexIntegrityError(f"field '{key}' is {m.get(key)!r}", where, "a positive integer")
    if m.get("dtype") not in ("float16", "float32"):
        raise IndexIntegrityError(f"field 'dtype' is {m.get('dtype')!r}", where, "float16 or float32")
    shards = m.get("shards")
    if not isinstance(shards, list) or not shards:
        raise IndexIntegrityError(f"field 'shards' is {shards!r}", where, "a non-empty list of shards")
    expect = 0
    for i, s in enumerate(shards):
        ok = (isinstance(s, dict) and isinstance(s.get("file"), str) and "/" not in s["file"]
              and s.get("start") == expect and isinstance(s.get("stop"), int) and s["stop"] > expect
              and isinstance(s.get("checksum"), str) and _CHECKSUM_RE.fullmatch(s["checksum"]) is not None)
        if not ok:
            raise IndexIntegrityError(f"shard entry {i} is {s!r}", where,
                                      f"{{file, start={expect}, stop>start, checksum='sha256:...'}}")
        expect = s["stop"]
    if expect != m["count"]:
        raise IndexIntegrityError(f"shards cover {expect} rows but count is {m['count']}", where,
                                  "shards covering every row")
    check_encoder_record(m, where)
    return m


def save_sharded(index: Index, directory, shard_rows: int) -> Path:
    """Write ``index`` as a sharded index folder (atomically: temporary folder, then rename), replacing an
    index folder already there as ``Index.save`` does (a folder holding anything else is refused).

    The manifest keeps the whole-matrix ``checksum`` (the same value a single-file
    save records) and one ``{file, start, stop, checksum}`` entry per shard.
    """
    target = check_output_folder(directory)
    replace = check_replaceable(target, INDEX_FILES)
    plan = plan_shards(int(index.embeddings.shape[0]), shard_rows)
    with atomic_dir(target, replace=replace) as tmp:
        docs = index.embeddings
        n, dim = docs.shape
        whole = hashlib.sha256()
        shards = []
        for i, (lo, hi) in enumerate(plan):
            block = np.ascontiguousarray(np.asarray(docs[lo:hi]))
            name = SHARD_FILE.format(i)
            with open(tmp / name, "wb") as f:
                np.save(f, block, allow_pickle=False)
                f.flush()
                os.fsync(f.fileno())
            whole.update(memoryview(block).cast("B"))
            shards.append({"file": name, "start": lo, "stop": hi, "checksum": _checksum(block)})
        recorded = index.manifest.get("checksum")
        if recorded and recorded != "sha256:" + whole.hexdigest():
            # the matrix read is not the one opened and checksummed (a file written over meanwhile): shards of it
            # would pass every later check under a checksum of their own
            raise IndexIntegrityError(f"the vectors read hash to sha256:{whole.hexdigest()[:12]}..., not the "
                                      f"checksum {recorded[:19]}... the index was opened with",
                                      str(getattr(index, "path", None) or "index"),
                                      "an index left alone while it is sharded")
        ids_checksum = write_doc_ids(index.doc_ids, tmp / IDS_FILE)
        manifest = {
            "format": SHARDED_FORMAT, "format_version": SHARDED_FORMAT_VERSION,
            "model": index.manifest.get("model"), "dim": int(dim), "dtype": np.dtype(docs.dtype).name,
            "count": int(n), "normalization": "l2", "checksum": "sha256:" + whole.hexdigest(),
            "ids_checksum": ids_checksum,
            "created": datetime.now(timezone.utc).isoformat(timespec="seconds"), "shard_rows": int(shard_rows),
            "shards": shards,
        }
        for key in ("encoder", "model_path"):   # how queries must be embedded travels with the matrix
            if index.manifest.get(key) is not None:
                manifest[key] = index.manifest[key]
        with open(tmp / MANIFEST_FILE, "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
    return target


def load_index(directory, *, verify: bool = True) -> Index:
    """Open a single-file (``Index.load``) or sharded (``ShardedIndex.load``) index folder, memory-mapped."""
    d = Path(directory)
    try:
        fmt = read_json_file(d / MANIFEST_FILE, "an index manifest").get("format")
    except InputError:
        fmt = None  # Index.load says what is wrong
    if fmt == SHARDED_FORMAT:
        return ShardedIndex.load(d, verify=verify)
    return Index.load(d, verify=verify, mmap=True)


def index_checksum(index: Index) -> str | None:
    """The whole-matrix checksum recorded in the index manifest (same for both layouts)."""
    return index.manifest.get("checksum")


# --------------------------------------------------------------------------- out-of-core search


def search_out_of_core(
    index: Index | Any,
    term_embeddings: np.ndarray,
    program: Program,
    ops: Ops | str | None,
    k: int,
    device: torch.device | str = "cpu",
    shard_rows: int | None = None,
    memory_cap: int | str | None = None,
    *,
    chunk_size: int | None = None,
    rows: tuple[int, int] | None = None,
    backend: str = "torch",
    on_shard: Callable[[int], None] | None = None,
    linear=None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k over ``index`` (or a bare matrix) streamed in shards; equal to the in-memory search.

    ``linear``: scoring options folded by ``itlr_gpu.scoring.linearize_options`` over the *whole*
    index (its statistics sample spans every shard); then ``term_embeddings``, ``program`` and
    ``ops`` are ignored and every shard scores with the same constants.

    ``shard_rows`` rows are read per shard (default: from ``memory_cap``, the
    bytes allowed for the two shard buffers plus the chunk working set, or
    256 MiB buffers).  ``rows=(lo, hi)`` restricts the search to that row range
    (returned rows stay global).  Returns ``(scores float32 (Q, k'), rows int64 (Q, k'))``.
    """
    from ..backends import get_backend
    from ..backends.reference import chunk_for_budget

    docs = index.embeddings if isinstance(index, Index) else index
    n_total, d = int(docs.shape[0]), int(docs.shape[1])
    lo, hi = (0, n_total) if rows is None else (int(rows[0]), int(rows[1]))
    if not 0 <= lo < hi <= n_total:
        raise InputError(f"row range {lo}..{hi}", "rows", f"0 <= lo < hi <= {n_total}")
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k <= 0:
        raise InputError(f"k={k!r}", "k", "a positive integer")
    ops = Ops.parse(ops)
    dev = torch.device(device)
    cap = parse_bytes(memory_cap) if memory_cap is not None else None
    if linear is not None:
        program = linear.program
    if chunk_size is None:
        width = len(program.terms) if linear is None else len(linear.vectors)
        chunk_size = chunk_for_budget(d, width, program.num_queries, program.max_depth + (2 if linear else 0),
                                      chunk_budget_for_cap(cap), cpu=dev.type == "cpu")
    source = RowSource(docs, opened_files(index) if isinstance(index, Index) else None)
    itemsize = source.dtype.itemsize
    if shard_rows is None:
        shard_rows = (shard_rows_for_cap(d, itemsize, cap) if cap is not None
                      else max(1, DEFAULT_SHARD_BYTES // (d * itemsize)))
        if shard_rows >= chunk_size:
            shard_rows -= shard_rows % chunk_size  # chunk boundaries then match the in-memory run
    elif not isinstance(shard_rows, (int, np.integer)) or isinstance(shard_rows, bool) or shard_rows < 1:
        raise InputError(f"shard_rows={shard_rows!r}", "--shard-rows", "a positive integer")
    shards = plan_shards(hi - lo, int(shard_rows), start=lo)
    engine = get_backend(backend, dev)
    terms = np.asarray(term_embeddings, dtype=np.float32)
    k_eff = min(int(k), hi - lo)
    buffer_rows = min(int(shard_rows), hi - lo)

    def score(block, first_row: int) -> tuple[np.ndarray, np.ndarray]:
        if linear is not None:
            s, r = engine.search_linear(block, linear, k_eff, device=dev, chunk_size=chunk_size)
        else:
            s, r = engine.search(block, terms, program, ops, k_eff, device=dev, chunk_size=chunk_size)
        return s, r + first_row

    try:
        if dev.type == "cuda":
            parts = _cuda_pipeline(source, shards, buffer_rows, d, dev, score, on_shard)
        else:
            parts = _host_pipeline(source, shards, buffer_rows, d, score, on_shard)
        running = None
        for part in parts:
            running = part if running is None else merge_topk([running, part], k_eff)
    finally:
        source.close()
    assert running is not None
    return running


def _host_pipeline(source: RowSource, shards, buffer_rows: int, d: int, score, on_shard):
    """CPU: read shard i+1 in a thread while shard i is scored; two reusable buffers."""
    nbuf = 2 if len(shards) > 1 else 1
    buffers = [np.empty((buffer_rows, d), dtype=source.dtype) for _ in range(nbuf)]
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="itlr-shard-reader") as pool:
        future = pool.submit(source.read, *shards[0], buffers[0])
        for i, (s_lo, s_hi) in enumerate(shards):
            block = future.result()
            if i + 1 < len(shards):
                # buffers[(i+1) % 2] last held shard i-1, whose scoring has finished.
                future = pool.submit(source.read, *shards[i + 1], buffers[(i + 1) % nbuf])
            yield score(block, s_lo)
            if on_shard is not None:
                on_shard(s_hi - s_lo)


def _cuda_pipeline(source: RowSource, shards, buffer_rows: int, d: int, dev: torch.device, score, on_shard):
    """GPU: pinned host buffers, H2D copies on a second stream, overlapping the scoring of the previous shard.

    Slot ``s`` (0/1) owns a pinned host buffer and a device buffer.  The loader
    thread, for shard i+1 in slot s: waits until the previous copy out of the
    pinned buffer finished (``copied[s]``), fills it from the file, then on the
    copy stream waits until the compute stream is done with the device buffer
    (``consumed[s]``) and enqueues the asynchronous copy, recording ``copied[s]``.
    The compute stream waits on ``copied[s]`` before scoring the shard.
    """
    tdtype = torch.float16 if source.dtype == np.float16 else torch.float32
    nbuf = 2 if len(shards) > 1 else 1
    with torch.cuda.device(dev):
        host = [torch.empty((buffer_rows, d), dtype=tdtype, pin_memory=True) for _ in range(nbuf)]
        on_dev = [torch.empty((buffer_rows, d), dtype=tdtype, device=dev) for _ in range(nbuf)]
        copy_stream = torch.cuda.Stream(device=dev)
        copied = [torch.cuda.Event() for _ in range(nbuf)]
        consumed = [torch.cuda.Event() for _ in range(nbuf)]
        compute_stream = torch.cuda.current_stream(dev)

    def stage(i: int, slot: int) -> int:
        s_lo, s_hi = shards[i]
        n = s_hi - s_lo
        with torch.cuda.device(dev):
            copied[slot].synchronize()          # the pinned buffer is free again (no-op if never recorded)
            source.read(s_lo, s_hi, host[slot].numpy())
            with torch.cuda.stream(copy_stream):
                copy_stream.wait_event(consumed[slot])  # compute no longer reads the device buffer
                on_dev[slot][:n].copy_(host[slot][:n], non_blocking=True)
                copied[slot].record(copy_stream)
        return n

    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="itlr-shard-h2d") as pool:
            future = pool.submit(stage, 0, 0)
            for i, (s_lo, s_hi) in enumerate(shards):
                slot = i % nbuf
                n = future.result()
                if i + 1 < len(shards):
                    future = pool.submit(stage, i + 1, (i + 1) % nbuf)
                compute_stream.wait_event(copied[slot])
                result = score(on_dev[slot][:n], s_lo)  # returns host arrays: the compute stream is synchronised
                consumed[slot].record(compute_stream)
                yield result
                if on_shard is not None:
                    on_shard(n)
    finally:
        torch.cuda.synchronize(dev)  # no copy may still target the buffers when they are freed


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def split_evenly(n_rows: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous row ranges of (nearly) equal size covering 0..n_rows."""
    parts = max(1, min(int(parts), n_rows))
    bounds = [round(i * n_rows / parts) for i in range(parts + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i] < bounds[i + 1]]
