"""Shipped TOML read through a JSON copy: the copy answers only for the very file it was
made from; an edited, damaged or missing copy falls back to parsing, and a one-shot
process that has the copy never imports tomllib."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from echo_core import manifest_cache
from echo_core.manifest_cache import cached_toml

OLD = 1_600_000_000 * 10**9
REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    monkeypatch.delenv("ECHO_PLUGIN_CACHE", raising=False)
    return home


def _toml(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    os.utime(path, ns=(OLD, OLD))
    return path


def _copy(home: Path) -> Path:
    return home / "echo-memory" / "m.json"


def test_the_copy_answers_for_an_unchanged_file(tmp_path: Path, cache_home: Path) -> None:
    src = _toml(tmp_path / "m.toml", 'a = 1\n[k.x]\nfolder = "f"\n')
    assert cached_toml(str(src), "m.json") == {"a": 1, "k": {"x": {"folder": "f"}}}
    kept = json.loads(_copy(cache_home).read_text("utf-8"))
    kept["data"]["a"] = 99  # proves the next answer is the copy's
    _copy(cache_home).write_text(json.dumps(kept), "utf-8")
    assert cached_toml(str(src), "m.json")["a"] == 99


def test_an_edited_file_is_parsed_again_and_the_copy_replaced(tmp_path: Path,
                                                                cache_home: Path) -> None:
    src = _toml(tmp_path / "m.toml", "a = 1\n")
    cached_toml(str(src), "m.json")
    src.write_text("a = 2\n", "utf-8")  # same size, new mtime
    os.utime(src, ns=(OLD + 10**9, OLD + 10**9))
    assert cached_toml(str(src), "m.json") == {"a": 2}
    assert json.loads(_copy(cache_home).read_text("utf-8"))["data"] == {"a": 2}


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"stamp": 3}', b"[]",
                                    b'{"stamp": null, "data": 1}'])
def test_a_damaged_copy_falls_back_to_parsing(tmp_path: Path, cache_home: Path,
                                              damage: bytes) -> None:
    src = _toml(tmp_path / "m.toml", "a = 1\n")
    _copy(cache_home).parent.mkdir(parents=True)
    _copy(cache_home).write_bytes(damage)
    assert cached_toml(str(src), "m.json") == {"a": 1}
    assert json.loads(_copy(cache_home).read_text("utf-8"))["data"] == {"a": 1}


def test_a_file_modified_just_now_gets_no_copy(tmp_path: Path, cache_home: Path) -> None:
    src = tmp_path / "m.toml"
    src.write_text("a = 1\n", "utf-8")  # mtime: now (racy)
    assert cached_toml(str(src), "m.json") == {"a": 1}
    assert not _copy(cache_home).exists()


def test_off_switch_and_unwritable_folder_still_answer(tmp_path: Path, cache_home: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    src = _toml(tmp_path / "m.toml", "a = 1\n")
    monkeypatch.setenv("ECHO_PLUGIN_CACHE", "off")
    assert cached_toml(str(src), "m.json") == {"a": 1}
    assert not _copy(cache_home).exists()
    monkeypatch.delenv("ECHO_PLUGIN_CACHE")
    cache_home.write_text("a file where the folder should be", "utf-8")
    assert cached_toml(str(src), "m.json") == {"a": 1}


def test_dates_have_no_json_form_so_such_a_file_is_always_parsed(tmp_path: Path,
                                                                  cache_home: Path) -> None:
    src = _toml(tmp_path / "m.toml", "d = 2026-03-01\n")
    assert cached_toml(str(src), "m.json") == tomllib.loads("d = 2026-03-01\n")
    assert not _copy(cache_home).exists()


def test_the_routing_manifest_through_the_copy_equals_the_toml(tmp_path: Path) -> None:
    """In fresh processes: the first parses and writes the copy; the second loads the
    manifest from it without importing tomllib, and both equal the TOML parsed here."""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    env.pop("ECHO_PLUGIN_CACHE", None)
    probe = ("import sys, json, attrs; from echo_core.routing import load_manifest; "
             "m = load_manifest(); print(json.dumps([attrs.asdict(m, recurse=True), "
             "'tomllib' in sys.modules]))")
    shipped = REPO / "echo_core" / "data" / "routing.toml"
    expected = tomllib.loads(shipped.read_text("utf-8"))
    runs = [json.loads(subprocess.run([sys.executable, "-c", probe], env=env, cwd=REPO,
                                      capture_output=True, text=True, check=True).stdout)
            for _ in range(2)]
    first, second = runs
    assert first[0] == second[0]
    assert set(first[0]["kinds"]) == set(expected["kinds"])
    assert first[0]["area_domains"] == expected["area_domains"]
    # a checkout made under 2 s ago has no copy yet, so tomllib is still imported then
    assert second[1] is manifest_cache._racy(shipped.stat().st_mtime_ns)
