"""What a sentence-transformers model folder's configuration files say about the vectors it computes.

One place reads them, for the two users that must agree: the model digest recorded in an index (an index built with
a default prompt must not match the same weights without it) and the ONNX/OpenVINO encoders, which tokenise the raw
text and return the pooled vector whole, so they refuse a model whose vectors depend on a setting they do not apply.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import InputError
from .validate import json_type

ST_CONFIG = "config_sentence_transformers.json"


def json_config(path: Path) -> dict[str, Any]:
    """A configuration file's object; {} when the file does not exist (the library's defaults apply)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"cannot read the model's {path} ({type(exc).__name__}: {exc})".replace("\n", " "),
                         str(path), "a readable JSON file, as sentence-transformers writes it") from None
    if not isinstance(value, dict):
        raise InputError(f"the model's {path} holds a JSON {json_type(value)}", str(path), "a JSON object")
    return value


def vector_settings(folder: Path) -> dict[str, Any]:
    """The settings of config_sentence_transformers.json that change every vector, where set: the default prompt
    (its name and its text, which every input gets in front) and ``truncate_dim``. Its version stamps do not
    count: a model without such settings has none."""
    config = json_config(folder / ST_CONFIG)
    out = {k: config[k] for k in ("default_prompt_name", "truncate_dim") if config.get(k)}
    if out.get("default_prompt_name"):
        prompts = config.get("prompts")
        if not isinstance(prompts, dict) or out["default_prompt_name"] not in prompts:
            # (sentence-transformers refuses to load such a model too)
            raise InputError(f"default_prompt_name {out['default_prompt_name']!r} names no prompt of 'prompts'",
                             str(folder / ST_CONFIG), "a default_prompt_name that is a key of prompts")
        out["prompt"] = prompts[out["default_prompt_name"]]
    return out


def lowercased_by_library(folder: Path) -> bool:
    """sentence-transformers lower-cases the text before a tokenizer that does not (``do_lower_case`` with a
    cased tokenizer); for an uncased tokenizer the setting adds nothing."""
    return bool(json_config(folder / "sentence_bert_config.json").get("do_lower_case")) \
        and not tokenizer_lowercases(folder)


def tokenizer_lowercases(folder: Path) -> bool:
    """The tokenizer lower-cases by itself (an uncased BERT)."""
    config = json_config(folder / "tokenizer_config.json")
    if "do_lower_case" in config:   # what transformers builds the tokenizer from, over tokenizer.json
        return config["do_lower_case"] is True

    def lowercases(normalizer: object) -> bool:
        if not isinstance(normalizer, dict):
            return False
        if normalizer.get("type") == "Lowercase" or normalizer.get("lowercase") is True:
            return True
        return any(lowercases(n) for n in normalizer.get("normalizers") or ())   # a Sequence
    return lowercases(json_config(folder / "tokenizer.json").get("normalizer"))


def settings_outside_the_transformer(folder: Path) -> list[str]:
    """The model's settings that change its vectors and that a runtime running only its transformer and pooling
    does not apply, named for an error message; [] when there are none."""
    found = ["do_lower_case"] if lowercased_by_library(folder) else []
    settings = vector_settings(folder)
    if "default_prompt_name" in settings:
        found.append(f"default_prompt_name {settings['default_prompt_name']!r}")
    if "truncate_dim" in settings:
        found.append(f"truncate_dim {settings['truncate_dim']}")
    return found
