"""A source checkout that is not pip-installed (what the GPU check runs from) finds ``itlr_gpu.kernels`` in the
repository's top-level kernels/ folder, even when another copy of itlr_gpu is installed elsewhere."""

from __future__ import annotations

import importlib.machinery
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_itlr_gpu_finds_its_kernels_in_a_source_checkout(tmp_path):
    ignore = shutil.ignore_patterns("__pycache__", "kernels")   # no itlr_gpu/kernels link or copy
    shutil.copytree(ROOT / "itlr_gpu", tmp_path / "itlr_gpu", ignore=ignore, symlinks=True)
    shutil.copytree(ROOT / "kernels", tmp_path / "kernels", ignore=shutil.ignore_patterns("__pycache__"))
    assert not (tmp_path / "itlr_gpu" / "kernels").exists()
    code = ("import importlib.util, itlr_gpu.kernels as k; "
            "print(k.__file__); print(importlib.util.find_spec('itlr_gpu.kernels.fused_logical_topk').origin)")
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    init, module = proc.stdout.split()
    assert Path(init) == tmp_path / "kernels" / "__init__.py"
    assert Path(module) == tmp_path / "kernels" / "fused_logical_topk.py"


def test_the_top_level_name_kernels_goes_to_an_installed_package_of_that_name(tmp_path):
    """Hugging Face's PyPI package "kernels" (transformers imports it when installed) is not shadowed by the
    checkout's kernels/ folder for a process started in the repository root; without one, the folder answers."""
    other = tmp_path / "site" / "kernels"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("CUDAProperties = 'the installed package'\n")
    code = "import kernels; print(kernels.__file__)"
    for extra in (str(tmp_path / "site"), ""):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), extra) if p))
        proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr[-3000:]
        found = Path(proc.stdout.strip())
        if extra:
            assert found == other / "__init__.py"
        else:   # this environment's own "kernels" distribution if it has one (transformers >= 5.25 pulls it in)
            installed = importlib.machinery.PathFinder.find_spec(
                "kernels", [p for p in sys.path if Path(p or os.curdir).resolve() != ROOT])
            assert found == (Path(installed.origin) if installed else ROOT / "kernels" / "__init__.py")


def test_pyproject_lists_every_package_of_the_source_tree():
    """setuptools installs only the packages pyproject.toml names: a subpackage left out of the list works in the
    editable install the tests use and is missing from a wheel (``pip install .``)."""
    import tomllib

    conf = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(conf["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "itlr_gpu").rglob("__init__.py")
             if "__pycache__" not in p.parts}
    found.add("itlr_gpu.kernels")   # kernels/ at the top level, mapped by package-dir
    assert (ROOT / "kernels" / "__init__.py").is_file()
    assert found - listed == set(), f"packages missing from pyproject.toml: {sorted(found - listed)}"
    assert listed - found == set(), f"pyproject.toml lists packages that do not exist: {sorted(listed - found)}"
