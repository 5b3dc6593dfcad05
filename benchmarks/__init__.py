"""Benchmarks of itlr-gpu: one script per question, each printing a table and saving it under ``results/``.

The defaults every script shares live here, so that an environment variable set once applies to all of them:
the shared datasets (``$ITLR_SHARED/data``, else ``../shared/data`` beside the clone) and the cache of models and
embeddings (``$ITLR_CACHE_DIR``, else ``$XDG_CACHE_HOME/itlr-gpu`` or ``~/.cache/itlr-gpu``, as the package uses).
``--out`` names a file stem (``DIR/name`` -> ``DIR/name.md`` + ``DIR/name.json``) in scripts that write one
table, and a folder in those that write several files (quality, quality_seeds, translate, llamacpp_steps).
"""
from __future__ import annotations

import os
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
