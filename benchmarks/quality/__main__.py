"""``python -m benchmarks.quality``: the same run as ``python benchmarks/quality.py``.

The helpers' package ``benchmarks/quality/`` has the script's name, so ``-m`` finds the package; this hands over.
"""
import runpy
import sys
from pathlib import Path

script = Path(__file__).resolve().parents[1] / "quality.py"
sys.argv[0] = str(script)
runpy.run_path(str(script), run_name="__main__")
