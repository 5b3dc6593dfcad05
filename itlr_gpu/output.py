"""The one way itlr writes files and folders.

Contract, for every command:

* **Atomic.**  Data goes to a temporary sibling (same folder, so the final
  ``rename`` is atomic) and is renamed over the target only when complete; on
  any failure, ``KeyboardInterrupt`` and ``SIGTERM``/``SIGHUP`` included, the
  temporary is removed and the target is untouched.
* **Recognisable temporaries.**  Their names are ``.<final name>.itlr-tmp-<pid>-<token>``:
  hidden (dataset readers skip names starting with ``.``), and they say which
  process made them.  Before writing into a folder, :func:`remove_stale_temps`
  removes the temporaries there that a killed itlr process (``kill -9``, power
  loss) left behind: names of this pattern, owned by this user, whose process is
  gone.  Nothing else is ever removed, so a user's own ``.notes.tmp`` stays.
* **Permissions follow the umask** (0666 / 0777 minus the umask) like ``open`` and
  ``mkdir``; a file replacing an existing one keeps the old file's mode.
* **Checked first.**  :func:`check_output_file` / :func:`check_output_folder`
  refuse a bad ``-o`` (a folder where a file is expected, an ancestor that is a
  file or a dangling link, a folder that is not writable) and
  :func:`check_not_input` an output that would overwrite an input, *before* any
  work is done, with one :class:`OutputError` line; nothing is created by the
  check.  Missing parent folders are allowed: they are created when the output
  is written (like ``mkdir -p``), never earlier.

Symbolic links are followed: ``-o link.arrow`` writes the file the link names,
and the link stays (a dangling one too: its target is written, its missing parent
folders created, as for any other path).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import signal
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from .errors import InputError

__all__ = ["OutputError", "Terminated", "check_output_file", "check_output_folder", "check_not_input", "atomic_file",
           "JOB_FILE", "LOCK_FILE", "folder_lock", "check_not_in_result_folder",
           "atomic_dir",
           "remove_stale_temps", "is_temp_name", "handle_signals", "temp_name", "umask", "mkdtemp_shared"]

PathLike = str | os.PathLike

TEMP_TAG = ".itlr-tmp-"
_TEMP_RE = re.compile(r"^\..+\.itlr-tmp-(?P<pid>[0-9]+)-[0-9a-f]+$")
_live: set[Path] = set()  # this process' temporaries, removed if a signal ends it


class OutputError(InputError):
    """An output path that cannot be written (what, where, what was expected)."""


class Terminated(BaseException):
    """Raised in the main thread by SIGTERM/SIGHUP under :func:`handle_signals`, so that cleanup runs."""

    def __init__(self, signum: int):
        self.signum = signum
        super().__init__(f"terminated by {signal.Signals(signum).name}")


# --------------------------------------------------------------------------- names, permissions, stale temps


def temp_name(final_name: str) -> str:
    """A hidden, recognisable temporary name for ``final_name`` in the same folder."""
    return f".{final_name}{TEMP_TAG}{os.getpid()}-{secrets.token_hex(4)}"


def is_temp_name(name: str) -> bool:
    """True for names :func:`temp_name` makes."""
    return _TEMP_RE.match(name) is not None


def umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def mkdtemp_shared(dir: PathLike, final_name: str) -> Path:
    """A temporary folder in ``dir`` for what is renamed to ``final_name`` in a cache: a :func:`temp_name`,
    so that one left by a killed process goes with the next sweep (:func:`remove_stale_temps`, run here
    first); its mode is 0777 minus the umask, not mkdtemp's 0700, which would survive the rename and keep a
    shared cache from the others who use it."""
    remove_stale_temps(dir)
    while True:
        tmp = Path(dir) / temp_name(final_name)
        try:
            os.mkdir(tmp, 0o700)
            break
        except FileExistsError:
            continue
    os.chmod(tmp, 0o777 & ~umask())
    return tmp


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, another user's
    return True


def remove_stale_temps(folder: PathLike) -> list[Path]:
    """Remove the temporaries of dead itlr processes in ``folder`` (files or folders); returns what went.

    Stale means: a :func:`temp_name` name, owned by this user, whose process no
    longer runs (or whose pid was reused by a process started after the file was
    last written).  Errors are ignored: this is housekeeping.
    """
    removed: list[Path] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _TEMP_RE.match(entry.name)
        if m is None:
            continue
        try:
            st = entry.stat(follow_symlinks=False)
            if st.st_uid != os.getuid():
                continue
            pid = int(m.group("pid"))
            if _pid_alive(pid) and not _started_after(pid, st.st_mtime):
                continue
            path = Path(entry.path)
            if path in _live:
                continue
            old = entry.name.find(".old" + TEMP_TAG)
            if old > 0 and not (Path(folder) / entry.name[1:old]).exists():
                continue  # an index moved aside whose replacement never arrived: the only copy, keep it
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(path)
            else:
                path.unlink()
            removed.append(path)
        except (OSError, ValueError):
            continue
    return removed


def _started_after(pid: int, mtime: float) -> bool:
    """True when process ``pid`` started after ``mtime`` (so it did not write that file): a reused pid."""
    if pid == os.getpid():
        return False
    try:
        started = os.stat(f"/proc/{pid}").st_mtime
    except OSError:
        return False
    return started > mtime + 1.0


# --------------------------------------------------------------------------- checks before any work


def _resolve(path: PathLike) -> Path:
    """The absolute path with symbolic links followed (a dangling link names its target)."""
    return Path(os.path.realpath(os.fspath(path)))


def _check_parent(target: Path, shown: str) -> None:
    """The nearest existing ancestor of ``target`` must be a folder we may create entries in."""
    parent = target.parent
    while not parent.exists():
        if parent.is_symlink():
            raise OutputError(f"parent {parent} is a dangling symbolic link", shown, "an existing or creatable folder")
        parent = parent.parent
    if not parent.is_dir():
        raise OutputError(f"parent {parent} is not a folder", shown, "a path inside a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise OutputError(f"folder {parent} is not writable", shown, "a path in a writable folder")
    # access() says yes to root everywhere, and knows nothing of file systems that take no new files (/proc,
    # /sys): create and remove a probe, the way the output will be made (a file beside it, or a folder on the
    # way to it)
    probe = parent / temp_name("probe")
    try:
        try:
            if parent == target.parent:
                os.close(os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            else:
                os.mkdir(probe)
        except OSError as e:
            raise OutputError(f"cannot create entries in {parent} ({e.strerror or e})", shown,
                              "a path in a writable folder") from None
    finally:   # also on Ctrl-C; a probe left by a kill -9 goes with the next stale-temporaries sweep
        with contextlib.suppress(OSError):
            os.rmdir(probe) if probe.is_dir() else os.unlink(probe)


JOB_FILE = "_itlr_job.json"
"""The job file of a result folder (``itlr search -o FOLDER``), which marks the folder as one dataset."""
LOCK_FILE = "_itlr_job.lock"
"""Held (``flock``) by the job writing a result folder; dataset readers skip names starting with '_'."""


@contextlib.contextmanager
def folder_lock(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s :data:`LOCK_FILE` for the block, or refuse at once when another process holds it (two
    jobs into one result folder would each think the folder theirs, and write parts of different jobs side by
    side).  The lock goes with the process (a kill -9 leaves a stale file, which the next job simply locks)."""
    try:
        import fcntl
    except ImportError:   # no flock here (Windows): nothing to hold
        yield
        return
    path = folder / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666 & ~umask())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            os.close(fd)
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise InputError("another itlr job is writing this result folder now", str(folder),
                             "one job per output folder (wait for it to end, or use another folder)") from None
        try:   # the file we locked is still the folder's (not one a finishing job just removed)
            if os.path.samestat(os.fstat(fd), os.stat(path)):
                break
        except FileNotFoundError:
            pass
        os.close(fd)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)   # while still held: a job waiting on the old file retries on a new one
        os.close(fd)


def refuse_standard_output(shown: str, flag: str, expected: str) -> None:
    """``-o -``: no output of this tool streams (a file is written whole and renamed into place), and a folder
    named '-' is not what a user typing it means."""
    if shown == "-":
        raise OutputError("'-' (standard output) is not an output here", flag, expected)


def check_output_file(path: PathLike, extensions: tuple[str, ...] = (".arrow", ".parquet"), flag: str = "-o") -> Path:
    """Validate an output file path before any work; returns it resolved (symbolic links followed).  ``flag``:
    the option that named it, for an empty path."""
    shown = os.fspath(path)
    if not shown:
        raise OutputError("empty output path", flag, "a file path")
    refuse_standard_output(shown, flag, "a file path (" + " or ".join(extensions) + ")")
    if shown.endswith(("/", os.sep)) and shown.rstrip("/" + os.sep).lower().endswith(extensions):
        raise OutputError("a folder path (it ends with a slash)", shown,
                          "a file path (" + " or ".join(extensions) + "), without the trailing slash")
    if not shown.lower().endswith(extensions):
        raise OutputError(f"unknown output type {Path(shown).suffix or '(none)'}", f"{flag} {shown}",
                          " or ".join(extensions))
    target = _resolve(path)
    if target.is_dir():
        raise OutputError("output path is a folder", shown, "a file path (" + " or ".join(extensions) + ")")
    if target.exists() and not target.is_file():
        raise OutputError("output path exists and is not a regular file", shown, "a file path")
    _check_parent(target, shown)
    return target


def check_not_in_result_folder(path: PathLike, flag: str = "-o") -> None:
    """Refuse a user's output file inside a result folder (one with a :data:`JOB_FILE`): every file there but
    those starting with '_' or '.' is read as the folder's results (the job's own parts are written there by
    the job, not through this check)."""
    target = _resolve(path)
    for folder in target.parents:
        if (folder / JOB_FILE).is_file() and not target.relative_to(folder).parts[0].startswith(("_", ".")):
            raise OutputError(f"inside the result folder {folder}, which is read as one dataset",
                              f"{flag} {os.fspath(path)}", "a path outside it (or a name starting with '_')")


def check_output_folder(path: PathLike) -> Path:
    """Validate an output folder path before any work; returns it resolved (symbolic links followed)."""
    shown = os.fspath(path)
    if not shown:
        raise OutputError("empty output path", "-o", "a folder path")
    refuse_standard_output(shown, "-o", "a folder path")
    target = _resolve(path)
    if target.exists() and not target.is_dir():
        raise OutputError("exists and is not a folder", shown, "a new or empty folder")
    if target.is_dir() and not os.access(target, os.W_OK | os.X_OK):
        raise OutputError("folder is not writable", shown, "a writable folder")
    check_not_in_result_folder(path)   # (an index, shards or another job's folder there would be read as results)
    _check_parent(target, shown)
    return target


def check_not_input(path: PathLike, inputs: dict[str, PathLike | None], flag: str = "-o",
                    sealed: tuple[str, ...] = ("index",)) -> None:
    """Refuse an output that would overwrite an input: the same file or folder (links followed), a file that
    exists inside an input folder, anything inside a ``sealed`` input folder (an index folder holds its own
    files only: a foreign one makes it unreplaceable), or for a folder output an input inside it (a replaced
    folder takes its contents along).  ``inputs``: {what: path}."""
    target = _resolve(path)
    for what, given in inputs.items():
        if given is None:
            continue
        source = _resolve(given)
        same = source == target
        if not same and source.exists() and target.exists():
            with contextlib.suppress(OSError):
                same = os.path.samefile(source, target)
        holds = target.is_dir() and target in source.parents
        within = source.is_dir() and source in target.parents and (target.exists() or what in sealed)
        if same or holds or within:
            relation = "is" if same else "holds" if holds else "is inside"
            raise OutputError(f"the output {relation} the {what} {os.fspath(given)}",
                              f"{flag} {os.fspath(path)}", "another path: writing it would destroy the input")


def _os_error(e: OSError, where: Path, doing: str) -> OutputError:
    return OutputError(f"cannot {doing} ({e.strerror or e})", str(where), "a writable place on a working file system")


_FULL = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}


def _raise_as_write_error(e: BaseException, target: Path, doing: str) -> None:
    """The disk filling up inside pyarrow or numpy raises an OSError without a file name ("No space left on
    device", numpy's "576000 requested and 8128 written"): name the output it was writing.  Other errors (a
    read of an input inside the block) keep their own message."""
    if isinstance(e, OSError) and e.filename is None and (
            e.errno in _FULL or (e.errno is None and "requested and" in str(e) and "written" in str(e))):
        raise _os_error(e, target, doing) from e


def _make_parents(folder: Path) -> None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError as e:
        raise OutputError("a parent is not a folder", str(folder), "a path inside a folder") from e
    except OSError as e:
        raise _os_error(e, folder, "create the folder") from e


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# --------------------------------------------------------------------------- atomic writers


@contextlib.contextmanager
def atomic_file(path: PathLike, mode: str = "wb", encoding: str | None = None) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path``; on success fsync it and rename it over ``path``.

    On any failure (``KeyboardInterrupt`` and :class:`Terminated` included) the
    temporary file is removed and ``path`` is untouched.
    """
    target = _resolve(path)
    if target.is_dir():
        raise OutputError("output path is a folder", os.fspath(path), "a file path")
    _make_parents(target.parent)
    remove_stale_temps(target.parent)
    tmp = target.parent / temp_name(target.name)
    try:
        old_mode = stat.S_IMODE(os.stat(target).st_mode) if target.is_file() else None
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)  # the umask applies
    except OSError as e:
        raise _os_error(e, target, "create a file here") from e
    _live.add(tmp)
    try:
        if old_mode is not None:
            os.chmod(tmp, old_mode)
        with os.fdopen(fd, mode, encoding=encoding) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        try:
            os.replace(tmp, target)
        except OSError as e:
            raise _os_error(e, target, "rename the finished file into place") from e
        _fsync_dir(target.parent)
    except BaseException as e:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        _raise_as_write_error(e, target, "write the file")
        raise
    finally:
        _live.discard(tmp)


@contextlib.contextmanager
def atomic_dir(path: PathLike, *, replace: bool = False) -> Iterator[Path]:
    """Yield a new temporary folder beside ``path``; on success it becomes ``path``.

    ``replace=False``: ``path`` must not exist or be an empty folder.  ``replace=True``:
    an existing folder is moved aside, the new one renamed in, and the old one
    removed (restored if the rename fails).  The caller decides *whether* an
    existing folder may be replaced; this only does it atomically.  The new
    folder's mode follows the umask, or copies the replaced folder's mode.
    """
    target = _resolve(path)
    if not replace and target.is_dir() and any(target.iterdir()):   # before any work (the swap checks again)
        raise OutputError("folder is not empty", str(target), "a new or empty folder")
    _make_parents(target.parent)
    remove_stale_temps(target.parent)
    tmp = target.parent / temp_name(target.name)
    try:
        os.mkdir(tmp, 0o777)  # the umask applies
        if target.is_dir():
            os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
    except OSError as e:
        raise _os_error(e, target, "create a folder here") from e
    _live.add(tmp)
    try:
        yield tmp
        _swap_in(tmp, target, replace)
        _fsync_dir(target.parent)
    except BaseException as e:
        shutil.rmtree(tmp, ignore_errors=True)
        _raise_as_write_error(e, target, "write the folder")
        raise
    finally:
        _live.discard(tmp)


def _swap_in(tmp: Path, target: Path, replace: bool) -> None:
    try:
        if target.is_dir() and any(target.iterdir()):
            if not replace:   # (checked new or empty before the work began: another job filled it since)
                raise OutputError("folder was filled while this job ran (another job writing the same output?); "
                                  "it is left as that job wrote it", str(target),
                                  "one job per output folder (run again to replace it)")
            aside = target.parent / temp_name(target.name + ".old")
            # an interrupt between the two renames would leave no folder at the path (and one after them the old
            # folder aside): it waits until the swap is done; an index folder is a few files, quickly removed
            with _signals_held():
                os.replace(target, aside)
                try:
                    os.replace(tmp, target)
                except OSError:
                    os.replace(aside, target)
                    raise
                shutil.rmtree(aside, ignore_errors=True)
        else:
            if target.is_dir():
                target.rmdir()
            os.replace(tmp, target)
    except OSError as e:
        raise _os_error(e, target, "rename the finished folder into place") from e


# --------------------------------------------------------------------------- signals


_HELD = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C, SIGTERM and SIGHUP wait until the block is done, then reach the handlers they were meant for (in
    the main thread, where Python runs signal handlers; a signal ignored stays ignored).  For the few system
    calls that must not be split, such as the two renames of a folder's swap."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for sig in _HELD:
        handler = signal.getsignal(sig)
        if handler is not signal.SIG_IGN and handler is not None:
            previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for sig in dict.fromkeys(caught):
            signal.raise_signal(sig)


@contextlib.contextmanager
def handle_signals() -> Iterator[None]:
    """While active (main thread only), SIGTERM and SIGHUP raise :class:`Terminated`, so every
    ``atomic_*`` writer removes its temporary; the previous handlers are restored afterwards."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def raise_terminated(signum, frame):
        raise Terminated(signum)

    previous = {}
    for sig in (signal.SIGTERM, signal.SIGHUP):
        try:
            previous[sig] = signal.signal(sig, raise_terminated)
        except (ValueError, OSError):
            pass
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for leftover in list(_live):  # a temporary whose writer was interrupted outside its own cleanup
            if ".old" + TEMP_TAG in leftover.name:
                continue  # a replaced folder moved aside is the only copy until the swap completes
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    leftover.unlink()
            _live.discard(leftover)
