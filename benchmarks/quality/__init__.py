"""Helpers of ``benchmarks/quality.py`` (the ITLR quality benchmark)."""
