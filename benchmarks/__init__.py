"""Benchmarks of itlr-gpu: one script per question, each printing a table and saving it under ``results/``.

The defaults every script shares live here, so that an environment variable set once applies to all of them:
the shared datasets (``$ITLR_SHARED/data``, else ``../shared/data`` beside the clone) and the cache of models and
embeddings (``$ITLR_CACHE_DIR``, else ``$XDG_CACHE_HOME/itlr-gpu`` or ``~/.cache/itlr-gpu``, as the package uses).
``--out`` names a file stem (``DIR/name`` -> ``DIR/name.md`` + ``DIR/name.json``) in scripts that write one
table, and a folder in those that write several files (quality, quality_seeds, translate, llamacpp_steps).
"""
from __future__ import annotations

import argparse
import os
import tempfile
from collections.abc import Collection
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("ITLR_SHARED", ROOT.parent / "shared")) / "data"
DATA_HELP = "folder of the shared datasets (default: $ITLR_SHARED/data, else ../shared/data)"
CACHE_HELP = "cache of models and embeddings (default: $ITLR_CACHE_DIR, else ~/.cache/itlr-gpu)"
STEM_HELP = "file stem of the table written: STEM.md and STEM.json (default %(default)s)"
FOLDER_HELP = "folder the results are written into (default %(default)s)"


def cache_dir() -> Path:
    """The package's cache folder (``$ITLR_CACHE_DIR`` ...), without importing the package at module load."""
    from itlr_gpu.translate.models import cache_root
    return cache_root()


# Argument checks every script shares: a bad value is argparse's one line ("prog: error: ...", exit 2) before any
# work, not a traceback after it. Counts and shares use the command line's own types.
from itlr_gpu.cli_common import non_negative_float, non_negative_int, positive_int, unit_float  # noqa: E402,F401

def seconds(text: str) -> float:
    """An argparse ``type``: a number of seconds, zero or more (the command line's own check, in seconds' words)."""
    try:
        return non_negative_float(text)
    except argparse.ArgumentTypeError as e:
        raise argparse.ArgumentTypeError(f"expected a number of seconds ({e})") from None


def positive_int_list(text: str) -> list[int]:
    """An argparse ``type``: comma-separated positive integers ("2048,4096")."""
    values = [positive_int(part) for part in text.split(",") if part.strip()]
    if not values:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}")
    return values


def existing_file(text: str) -> Path:
    """An argparse ``type``: a file that exists."""
    path = Path(text)
    if not path.is_file():
        raise argparse.ArgumentTypeError(f"{text}: no such file")
    return path


def check_writable(ap: argparse.ArgumentParser, folder: Path | str, option: str = "--out", shown=None) -> None:
    """Fail with argparse's one line unless ``folder`` is, or could be made, a writable folder.

    Checked at start-up so that a long run does not fail only when it writes its table. Nothing is created here.
    """
    folder = Path(folder)
    shown = folder if shown is None else shown
    probe = folder
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if probe.exists() and not probe.is_dir():
        ap.error(f"{option} {shown}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        ap.error(f"{option} {shown}: {probe} is not writable")


def check_stem(ap: argparse.ArgumentParser, stem: Path | str, option: str = "--out") -> None:
    """As :func:`check_writable`, for a file stem (``DIR/name`` of ``DIR/name.md``)."""
    stem = Path(stem)
    if stem.is_dir():
        ap.error(f"{option} {stem}: is a folder; expected a file stem such as {stem / 'name'}")
    check_writable(ap, stem.parent, option, shown=stem)


TRIAL_HELP = (" (default: benchmarks/results/{name} with the default settings; with others a stem in the system's "
              "temporary folder, so that a trial or a smoke run never replaces the committed table)")


def default_folder(ap: argparse.ArgumentParser, args: argparse.Namespace, name: str,
                   ignore: Collection[str] = ()) -> str:
    """:func:`default_stem` for a script that writes into a folder under a ``--suffix`` name: the results
    folder with its default settings or a ``--suffix`` chosen for the table, else ``itlr-NAME-trial`` in the
    system's temporary folder."""
    if getattr(args, "suffix", None):
        return str(ROOT / "benchmarks" / "results")
    trial = any(value != ap.get_default(key) for key, value in vars(args).items()
                if key not in {"out", "suffix", *ignore})
    return str(Path(tempfile.gettempdir()) / f"itlr-{name}-trial" if trial else ROOT / "benchmarks" / "results")


TRIAL_FOLDER_HELP = ("folder the results are written into (default: benchmarks/results with the default settings or "
                     "a --suffix; with other settings and no --suffix itlr-{name}-trial in the system's temporary "
                     "folder, so that a trial never replaces a committed table)")


def default_stem(ap: argparse.ArgumentParser, args: argparse.Namespace, name: str,
                 ignore: Collection[str] = ()) -> str:
    """Where a script writes when ``--out`` is left out: ``benchmarks/results/NAME`` with its default settings,
    else ``itlr-NAME-trial`` in the system's temporary folder.  ``ignore``: settings that say where data or
    caches are, or how many processes work, not what is measured."""
    trial = any(value != ap.get_default(key) for key, value in vars(args).items() if key not in {"out", *ignore})
    return str(Path(tempfile.gettempdir()) / f"itlr-{name}-trial" if trial else ROOT / "benchmarks" / "results" / name)
