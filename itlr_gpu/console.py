"""The ``itlr`` console script.

Ctrl-C while Python is still loading the engine's libraries ends the process at once with one line: nothing has
been written yet, and a KeyboardInterrupt raised inside torch's C++ import code cannot unwind (the process aborts
with a C++ message, or Python prints a traceback).  :func:`itlr_gpu.cli.main` switches back to the usual
KeyboardInterrupt, which its writers clean up after, before the command's own work starts.
"""

from __future__ import annotations

import gc
import os
import signal
import sys


def quit_at_once(signum, frame) -> None:
    os.write(2, b"itlr: interrupted\n")
    os._exit(130)


def main() -> None:
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:   # not when the parent ignores Ctrl-C
        signal.signal(signal.SIGINT, quit_at_once)
    from .cli import main as run

    code = run()
    # Free what the command left (Arrow tables in a finished frame, an error's traceback) while the allocators are
    # alive: freed at interpreter teardown instead, with torch loaded, Arrow's buffers could abort the process
    # ("terminate called without an active exception", exit 134 for exit 1; seen 5 times in 30 runs of a rerank
    # refusing a damaged result folder on a busy 2-core machine, none in 30 with this collection).
    gc.collect()
    sys.exit(code)


if __name__ == "__main__":   # ``python -m itlr_gpu.console``
    main()
