"""The config file's ``vault`` and ``state_dir``: a relative path is taken from the file's
own folder, not the folder a command runs in (a hook runs in the user's project); keys of
the wrong TOML type are exit 78 naming the key, not paths named ``42``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echo_core.config import resolve_config
from echo_core.errors import EchoError, ExitCode


def _config(tmp_path: Path, text: str) -> dict[str, str]:
    folder = tmp_path / "conf"
    folder.mkdir(exist_ok=True)
    (folder / "config.toml").write_text(text)
    return {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(folder / "config.toml")}


def test_relative_paths_in_the_file_are_beside_the_file_whatever_the_working_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = _config(tmp_path, 'vault = "relvault"\nstate_dir = "../relstate"\n')
    for cwd in (tmp_path, tmp_path / "conf"):
        monkeypatch.chdir(cwd)
        config = resolve_config(env=env)
        assert config.vault.value == str(tmp_path / "conf" / "relvault")
        assert config.state_base.value == str(tmp_path / "relstate")
        assert config.vault.source == config.state_base.source == "config"


def test_absolute_home_and_url_values_and_other_sources_are_as_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    env = _config(tmp_path, 'vault = "~/notes"\nstate_dir = "/srv/state"\n')
    config = resolve_config(env=env)
    assert config.vault.value == os.path.expanduser("~/notes")
    assert config.state_base.value == "/srv/state"
    url = _config(tmp_path, 'vault = "postgresql://db/echo"\n')
    assert resolve_config(env=url).vault.value == "postgresql://db/echo"
    flagged = resolve_config(env={**env, "ECHO_VAULT": "here"}, vault=None)
    assert flagged.vault.value == str(tmp_path / "here") and flagged.vault.source == "env"


@pytest.mark.parametrize(("line", "key"), [
    ("vault = 42", "vault"), ("state_dir = 5", "state_dir"), ("recall = true", "recall"),
    ("tokenizer = ['a']", "tokenizer"), ('backends = "x"', "backends")])
def test_a_key_of_the_wrong_type_is_exit_78_naming_it(tmp_path: Path, line: str,
                                                      key: str) -> None:
    with pytest.raises(EchoError) as caught:
        resolve_config(env=_config(tmp_path, line + "\n"))
    assert caught.value.code == ExitCode.NOT_CONFIGURED
    assert f"'{key}' must be" in caught.value.message and "config.toml" in caught.value.message
    tolerated = resolve_config(env=_config(tmp_path, line + "\n"), tolerate_problems=True)
    assert f"'{key}' must be" in tolerated.problem
