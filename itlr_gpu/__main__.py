"""``python -m itlr_gpu``: the ``itlr`` command, for a checkout without an installed console script."""

from .console import main

main()
