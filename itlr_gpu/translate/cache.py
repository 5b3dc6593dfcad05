"""Translation cache: re-running a bulk job translates nothing twice.

A small SQLite file (``<cache_dir>/translations.sqlite``, default cache dir
``$ITLR_CACHE_DIR`` or ``~/.cache/itlr-gpu``) maps the key
``(model, prompt_version, mode, text)`` to ``(expr, rewrite, error)``.  ``model``
names the translator and model (``rules:rules-2``, ``vllm:<folder>@<fingerprint>``),
``prompt_version`` changes whenever the prompt, grammar or decoding settings change.
Only successful translations are stored: a failed one (an error row, whatever its cause) is
never cached, so a rerun tries it again.

Writes are batched in one transaction; several processes may share the file
(SQLite locking, WAL journal).  A cache the process cannot write (a read-only folder or file) is
read and not written, with one note; one it cannot create is skipped the same way: an unwritable
cache never stops a translation.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from ..errors import InputError

__all__ = ["CacheKey", "CachedValue", "TranslationCache", "default_cache_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS translations (
    model TEXT NOT NULL,
    prompt_version TEXT NOT NULL,
    mode TEXT NOT NULL,
    text TEXT NOT NULL,
    expr TEXT,
    rewrite TEXT,
    error TEXT,
    PRIMARY KEY (model, prompt_version, mode, text)
)
"""


@dataclass(frozen=True)
class CacheKey:
    model: str
    prompt_version: str
    mode: str
    text: str


@dataclass(frozen=True)
class CachedValue:
    expr: str | None
    rewrite: str | None
    error: str | None


LOCK_TIMEOUT_S = 60.0   # how long a write waits for another process's lock on the cache


def default_cache_path(cache_dir: str | os.PathLike | None = None) -> Path:
    from .models import cache_root

    return cache_root(cache_dir) / "translations.sqlite"


def _cannot_write(e: sqlite3.OperationalError) -> bool:
    text = str(e)
    return ("readonly" in text or "read-only" in text or "unable to open database file" in text
            or "disk I/O error" in text or "database or disk is full" in text)


class TranslationCache:
    """``get_many`` / ``put_many`` over a SQLite file; ``path=":memory:"`` for tests."""

    def __init__(self, path: str | os.PathLike):
        self.path = str(path)
        self.read_only = False
        self._db = None
        self.hits = 0
        self.misses = 0
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            with self._readable(writing=True):
                try:
                    self._db = sqlite3.connect(self.path, timeout=LOCK_TIMEOUT_S)
                    self._db.execute("PRAGMA journal_mode=WAL")
                    self._db.execute(_SCHEMA)
                    self._db.commit()
                except sqlite3.OperationalError as e:
                    if not _cannot_write(e):
                        raise
                    if self._db is not None:
                        self._db.close()
                    raise PermissionError(str(e)) from None
        except OSError as e:
            self._open_read_only(e)

    def _open_read_only(self, why: OSError) -> None:
        """The folder or the file cannot be written: read an existing cache without changing it (immutable:
        its WAL index cannot be made in a read-only folder), or go on with an empty one in memory."""
        reason = why.strerror or str(why)
        if os.path.lexists(self.path) and not Path(self.path).is_file():   # a folder or a dangling link
            raise self._unusable(reason)
        if Path(self.path).is_file():
            # immutable: a read-only folder cannot hold the WAL index; rows another process has not checkpointed
            # yet are not seen (acceptable for a cache: they are translated again)
            with self._readable():
                self._db = sqlite3.connect(f"file:{quote(self.path)}?mode=ro&immutable=1", uri=True)
                self._db.execute("SELECT COUNT(*) FROM translations").fetchone()
            what = "read, and new translations are not stored"
        else:
            self._db = sqlite3.connect(":memory:")
            self._db.execute(_SCHEMA)
            what = "not used"
        self.read_only = True
        print(f"itlr: note: the translation cache {self.path} cannot be written ({reason}): it is {what}; "
              "--cache-dir names a writable folder", file=sys.stderr)

    @contextmanager
    def _readable(self, writing: bool = False):
        """A damaged cache file (not a database, malformed, a folder in its place) is one clear error naming
        the file and the way out, not a traceback from SQLite.  ``writing``: an error that says the file cannot be
        written passes through, for the caller to go on read-only."""
        try:
            yield
        except sqlite3.DatabaseError as e:
            if isinstance(e, sqlite3.OperationalError) and ("locked" in str(e) or writing and _cannot_write(e)):
                raise   # busy, or not writable: the callers decide (read-only use), not "damaged"
            if isinstance(e, sqlite3.OperationalError) and "unable to open" in str(e):
                raise InputError(f"the translation cache cannot be opened ({e})", self.path,
                                 "a cache file this user may read (--cache-dir names another folder), or "
                                 "--no-cache") from None
            raise self._unusable(e) from None

    def _unusable(self, why: object) -> InputError:
        return InputError(f"the translation cache cannot be used ({why})", self.path,
                          "a SQLite file: delete it to start a new cache, or run with --no-cache")

    @classmethod
    def open(cls, cache_dir: str | os.PathLike | None = None) -> "TranslationCache":
        return cls(default_cache_path(cache_dir))

    def get_many(self, keys: Sequence[CacheKey]) -> list[CachedValue | None]:
        with self._readable():
            return self._get_many(keys)

    def _get_many(self, keys: Sequence[CacheKey]) -> list[CachedValue | None]:
        out: list[CachedValue | None] = []
        cur = self._db.cursor()
        for k in keys:
            row = cur.execute(
                "SELECT expr, rewrite, error FROM translations WHERE model=? AND prompt_version=? AND mode=? AND text=?",
                (k.model, k.prompt_version, k.mode, k.text),
            ).fetchone()
            if row is None:
                self.misses += 1
                out.append(None)
            else:
                self.hits += 1
                out.append(CachedValue(*row))
        return out

    def put_many(self, items: Iterable[tuple[CacheKey, CachedValue]]) -> int:
        rows = [
            (k.model, k.prompt_version, k.mode, k.text, v.expr, v.rewrite, v.error) for k, v in items
        ]
        if not rows or self.read_only:
            return 0
        try:
            with self._readable(writing=True), self._db:
                self._db.executemany("INSERT OR REPLACE INTO translations VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        except sqlite3.OperationalError as e:
            # made read-only since it was opened (chmod, a full disk), or held by another process past the
            # timeout: the translations stand, they are just not stored (nor tried again, each try waiting)
            busy = "locked" in str(e) or "busy" in str(e)
            if not (busy or _cannot_write(e)):
                raise
            self.read_only = True
            why = f"another process has held it for over {LOCK_TIMEOUT_S:g} s" if busy else str(e)
            print(f"itlr: note: the translation cache {self.path} cannot be written ({why}): this run's new "
                  "translations are not stored", file=sys.stderr)
            return 0
        return len(rows)

    def __len__(self) -> int:
        return self._db.execute("SELECT COUNT(*) FROM translations").fetchone()[0]

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> "TranslationCache":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
