"""``import --from`` a folder holding names no vault path can be: a file or folder whose
name is not UTF-8 is skipped and named (bad bytes as ``\\xNN``) while the rest is
imported; ``a:b.md`` is skipped for its ``:``, not called absolute; real drive paths
(``C:``, ``C:/x``) are still absolute."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.paths import normalize_path
from tests.conftest import run_cli


@pytest.fixture
def odd_source(tmp_path: Path) -> Path:
    """A folder with a plain note, a file and a folder with non-UTF-8 names, and a:b.md."""
    root = tmp_path / "source"
    root.mkdir()
    (root / "ok.md").write_bytes(b"# ok\n")
    base = os.fsencode(root)
    with open(base + b"/bad\xff.md", "wb") as handle:
        handle.write(b"x\n")
    os.mkdir(base + b"/dir\xfe")
    with open(base + b"/dir\xfe/in.md", "wb") as handle:
        handle.write(b"y\n")
    (root / "a:b.md").write_bytes(b"z\n")
    return root


def test_import_skips_and_names_undecodable_and_colon_names_and_imports_the_rest(
        odd_source: Path, tmp_path: Path, isolated_env: dict[str, str]) -> None:
    vault = tmp_path / "vault"
    assert run_cli(["init", "--vault", str(vault)], env=isolated_env).returncode == 0
    out = run_cli(["import", "--from", str(odd_source), "--vault", str(vault), "--json"],
                  env=isolated_env)
    assert "UnicodeEncodeError" not in out.stderr
    done = json.loads(out.stdout)
    assert done["files"] == 1
    assert (vault / "ok.md").read_bytes() == b"# ok\n"
    reasons = {s["path"]: s["reason"] for s in done["skipped"]}
    assert set(reasons) == {"bad\\xff.md", "dir\\xfe", "a:b.md"}
    assert "not valid UTF-8" in reasons["bad\\xff.md"]
    assert "not valid UTF-8" in reasons["dir\\xfe"]
    assert "':'" in reasons["a:b.md"] and "Windows" in reasons["a:b.md"]
    assert "absolute" not in reasons["a:b.md"]
    assert not (vault / "a:b.md").exists()
    assert not any(b"\xff" in name or b"\xfe" in name for name in os.listdir(os.fsencode(vault)))


def test_import_prose_lists_the_skipped_names(odd_source: Path, tmp_path: Path,
                                              isolated_env: dict[str, str]) -> None:
    vault = tmp_path / "vault"
    out = run_cli(["import", "--from", str(odd_source), "--vault", str(vault)],
                  env=isolated_env)
    assert "imported 1 files" in out.stdout, out.stderr
    assert "bad\\xff.md:" in out.stdout and "dir\\xfe:" in out.stdout
    assert "a:b.md: path 'a:b.md' contains ':'" in out.stdout


@pytest.mark.parametrize("path", ["a:b.md", "1:x.md", "é:x.md", "C:foo.md"])
def test_a_colon_as_second_character_is_refused_as_a_windows_name(path: str) -> None:
    with pytest.raises(EchoError) as info:
        normalize_path(path)
    assert info.value.code == ExitCode.USAGE
    assert "not allowed in names on Windows" in info.value.message
    assert "absolute" not in info.value.message


@pytest.mark.parametrize("path", ["C:", "c:/x.md", "Z:\\x.md", "/x.md"])
def test_drive_and_rooted_paths_are_absolute(path: str) -> None:
    with pytest.raises(EchoError) as info:
        normalize_path(path)
    assert info.value.code == ExitCode.USAGE and "is absolute" in info.value.message
