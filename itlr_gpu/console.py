"""The ``itlr`` console script.

Ctrl-C while Python is still loading the engine's libraries ends the process at once with one line: nothing has
been written yet, and a KeyboardInterrupt raised inside torch's C++ import code cannot unwind (the process aborts
with a C++ message, or Python prints a traceback).  :func:`itlr_gpu.cli.main` switches back to the usual
KeyboardInterrupt, which its writers clean up after, before the command's own work starts, but for the imports of
C extensions that work makes before it writes anything (:func:`quitting_at_once`).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator


_RUNNING = False   # this process is the console script (set by main)


def quit_at_once(signum, frame) -> None:
    os.write(2, b"itlr: interrupted\n")
    os._exit(130)


@contextlib.contextmanager
def quitting_at_once() -> Iterator[None]:
    """Ctrl-C quits at once inside the block, as during start-up, in the console script's main thread: for the
    imports of C extensions that the command's work makes (onnx, onnxruntime, sentence-transformers' tokenizers),
    where a KeyboardInterrupt raised inside aborts the process ("terminate called after throwing an instance of
    'nanobind::python_error'").  Nothing is written before those imports; elsewhere (the Python API, a thread,
    a parent that ignores Ctrl-C) the block changes nothing."""
    if not _RUNNING or threading.current_thread() is not threading.main_thread() \
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        yield
        return
    signal.signal(signal.SIGINT, quit_at_once)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> None:
    global _RUNNING
    _RUNNING = True
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:   # not when the parent ignores Ctrl-C
        signal.signal(signal.SIGINT, quit_at_once)
    from .cli import main as run

    code = run()
    if signal.getsignal(signal.SIGINT) in (signal.default_int_handler, quit_at_once):
        # the work is done and its outputs written: a Ctrl-C now would only turn the exit into a traceback or a
        # death by signal, so it is ignored while the process winds down
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    # End without the interpreter's teardown: with torch loaded, a process that read Parquet shortly before its end
    # could abort in the C++ libraries' exit-time destructors ("terminate called without an active exception",
    # exit 134 for exit 1; 5 of 30 runs of a rerank refusing a damaged result folder on a busy 2-core machine, and
    # once in a full test run after a collection alone).  The results are written and closed by now; Python's exit
    # functions still run (a Ray session's shutdown, temporary folders), and the standard streams are flushed.
    gc.collect()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):   # a closed pipe or stream: nothing more can be said there
            pass
    os._exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":   # ``python -m itlr_gpu.console``
    main()
