"""A text of several words left unquoted is refused (exit 2, nothing written) with the
command line quoted the way it was meant: ``capture`` for any number of title words,
and every other command through the words click finds left over."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_inproc import vault_runner


@pytest.fixture
def run(isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> Any:
    return vault_runner(tmp_path, capsys, monkeypatch)


def _files(vault: Path) -> dict[str, bytes]:
    return {p.relative_to(vault).as_posix(): p.read_bytes()
            for p in sorted(vault.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("words", [["Ada", "Lovelace"], ["Ada", "King", "Lovelace"],
                                   ["Ada", "King", "of", "Lovelace"]])
def test_capture_names_the_whole_title_quoted(run: Any, words: list[str]) -> None:
    before = _files(run.vault)
    done = run("capture", *words, "-k", "person")
    assert done.code == 2
    assert f'quote a title of several words (capture "{" ".join(words)}")' in done.err, done.err
    assert _files(run.vault) == before


def test_capture_still_reads_the_body_from_stdin(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], run: Any,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.cli_inproc import run_main

    done = run_main(["capture", "--vault", str(run.vault), "--state-dir",
                     str(tmp_path / "state"), "Ada Lovelace", "-", "-k", "person"],
                    capsys, monkeypatch, stdin=b"Wrote a program.\n")
    assert done.code == 0, done.err
    assert "Wrote a program." in (run.vault / "resources/people/ada-lovelace.md").read_text()


@pytest.mark.parametrize("argv,example", [
    (["resolve", "ada", "king", "lovelace"], "resolve 'ada king lovelace'"),
    (["append", "notes/x.md", "hello", "world"], "append notes/x.md 'hello world'"),
])
def test_other_commands_show_the_last_argument_quoted(run: Any, argv: list[str],
                                                     example: str) -> None:
    before = _files(run.vault)
    done = run(*argv)
    assert done.code == 2
    assert "of several words goes in quotes" in done.err and example in done.err, done.err
    as_json = json.loads(run(*argv, "--json").out)
    assert example in as_json["error"]["message"]
    assert _files(run.vault) == before
