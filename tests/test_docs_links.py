"""Every relative link in the repository's Markdown (README, docs/, benchmark results) names a file that exists,
and every ``#anchor`` names a heading of its target (GitHub's slugs: lower case, punctuation dropped, spaces as
hyphens).  Docs move between files; a link that silently lands nowhere is a defect a reader finds first."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
_FENCE_RE = re.compile(r"```.*?```", re.S)


def _slug(heading: str) -> str:
    text = heading.strip().lstrip("#").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE_RE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(line) for line in text.splitlines() if line.startswith("#")}


def _markdown_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "*.md"], cwd=ROOT,
                             capture_output=True, text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [ROOT / f for f in out if (ROOT / f).is_file()]


def test_slug_matches_githubs_rules():
    assert _slug('### Rules-5: question openings, names with "&" (no model change)') == \
        "rules-5-question-openings-names-with--no-model-change"
    assert _slug("## Errors and hostile input") == "errors-and-hostile-input"


def test_every_relative_link_and_anchor_resolves():
    files = _markdown_files()
    assert any(f.name == "README.md" for f in files)
    anchors: dict[Path, set[str]] = {}
    bad = []
    for md in files:
        text = _FENCE_RE.sub("", md.read_text(encoding="utf-8"))
        for m in _LINK_RE.finditer(text):
            target = m.group(1)
            if re.match(r"[a-z]+:", target):   # http:, https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            where = f"{md.relative_to(ROOT)}: ({target})"
            if not dest.exists():
                bad.append(f"{where}: no such file")
            elif anchor and dest.suffix == ".md":
                if dest not in anchors:
                    anchors[dest] = _anchors(dest)
                if anchor not in anchors[dest]:
                    bad.append(f"{where}: no heading with that anchor")
    assert not bad, "\n".join(bad)
