"""A relative vault path (``--vault relvault``, ``ECHO_VAULT=relvault``) is taken from the
current folder, and every message says where that is: ``init`` names the absolute
folder, and from another folder the not-a-vault error names the absolute path it looked
at, says the given path was relative, and advises an ``init`` with the absolute path."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core import resolve_config
from tests.cli_inproc import run_main


@pytest.fixture
def folders(isolated_env: dict[str, str], tmp_path: Path) -> tuple[Path, Path]:
    first, other = tmp_path / "first", tmp_path / "other"
    first.mkdir()
    other.mkdir()
    return first, other


def test_init_with_a_relative_vault_prints_the_absolute_folder(
        folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = folders
    monkeypatch.chdir(first)
    done = run_main(["init", "--vault", "relvault"], capsys, monkeypatch)
    assert done.code == 0, done
    assert f"initialised vault at {first / 'relvault'}:" in done.out, done


@pytest.mark.parametrize("given_by", ["flag", "env"])
def test_a_relative_vault_from_another_folder_names_the_resolved_path(
        folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch, given_by: str) -> None:
    first, other = folders
    monkeypatch.chdir(first)
    assert run_main(["init", "--vault", "relvault"], capsys, monkeypatch).code == 0
    monkeypatch.chdir(other)
    if given_by == "env":
        monkeypatch.setenv("ECHO_VAULT", "relvault")
        args = ["recall", "anything"]
    else:
        args = ["recall", "anything", "--vault", "relvault"]
    done = run_main(args, capsys, monkeypatch)
    assert done.code == 78, done
    resolved = other / "relvault"
    assert done.err.startswith(f"error: {resolved} is not an echo-memory vault"), done
    assert f"`echo-memory init --vault {resolved}`" in done.err, done
    assert "'relvault' was relative: it was taken from the current folder" in done.err, done
    assert not resolved.exists()


def test_an_absolute_or_url_vault_setting_is_kept_as_given(
        folders: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    first, _ = folders
    monkeypatch.chdir(first)
    for setting in (str(first / "v"), "file:///srv/v", "file:/srv/v",
                    "obsidian+https://127.0.0.1:27124"):
        config = resolve_config(vault=setting)
        assert (config.vault.value, config.vault_relative) == (setting, ""), setting
    tilde = resolve_config(vault="~/notes")
    assert tilde.vault.value == str(Path.home() / "notes") and tilde.vault_relative == ""
    relative = resolve_config(vault="./notes/../v")
    assert (relative.vault.value, relative.vault_relative) == (str(first / "v"), "./notes/../v")
