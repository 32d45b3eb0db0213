"""A mistyped ``--option`` where a verb's text goes is an unknown option (exit 2, click's
"No such option ... Did you mean ...?"), never text written into the vault: for every
verb whose positional text may start with ``-`` (``literal_args``: capture, append,
patch, scope set, habitat learn). Text that really starts with ``--`` follows a ``--``
separator; a markdown bullet (``- item``) and ``-`` (stdin) stay text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli_inproc import CliRun, vault_runner

NOTE = "resources/concepts/pat-note.md"


@pytest.fixture
def run(isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> Any:
    runner = vault_runner(tmp_path, capsys, monkeypatch)
    assert runner("capture", "Pat Note", "--kind", "concept", "--body", "hello").code == 0
    assert runner("patch", NOTE, "--op", "append", "--heading", "Notes", "x").code == 0
    return runner


def _files(vault: Path) -> dict[str, bytes]:
    return {str(p.relative_to(vault)): p.read_bytes() for p in sorted(vault.rglob("*"))
            if p.is_file()}


def _refused(done: CliRun, option: str, suggestion: str | None) -> None:
    assert done.code == 2, done
    assert f"No such option '{option}'" in done.err, done
    if suggestion is not None:  # the closest option the verb has
        assert f"Did you mean '{suggestion}'?" in done.err, done


MISTYPED_LINES = [
    (["append", "resources/x.md", "--jsn"], "--jsn", "--json"),
    (["scope", "set", "--dryrun"], "--dryrun", None),  # it has no --dry-run
    (["patch", NOTE, "--op", "append", "--heading", "Notes", "--dryrun"], "--dryrun",
     "--dry-run"),
    (["capture", "--dryrun"], "--dryrun", "--dry-run"),
    (["capture", "x", "--knid", "person"], "--knid", "--kind"),
    (["capture", "x", "--knid=person"], "--knid", "--kind"),
    (["habitat", "learn", "--dryrun"], "--dryrun", None),
]


@pytest.mark.parametrize(("args", "option", "suggestion"), MISTYPED_LINES,
                         ids=[" ".join(a[:2]) + " " + o for a, o, _ in MISTYPED_LINES])
def test_a_mistyped_option_in_the_text_place_is_refused_and_nothing_is_written(
        run: Any, args: list[str], option: str, suggestion: str | None) -> None:
    before = _files(run.vault)
    done = run(*args)
    _refused(done, option, suggestion)
    assert _files(run.vault) == before


def test_text_starting_with_two_dashes_is_written_after_the_separator(run: Any) -> None:
    assert run("append", "resources/x.md", "--", "--literal").code == 0
    assert "--literal" in (run.vault / "resources/x.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("text", ["- 2026-03-01: done", "--- a rule", "-- a dash", "--",
                                  "-x"])
def test_text_that_is_no_option_name_stays_text(run: Any, text: str) -> None:
    args = ["append", "resources/y.md", text] if text != "--" else [
        "append", "resources/y.md", "--", "--"]
    assert run(*args).code == 0
    assert text in (run.vault / "resources/y.md").read_text(encoding="utf-8")


def test_an_unquoted_title_of_several_words_is_told_to_quote_it(run: Any) -> None:
    done = run("capture", "Alan", "Kay", "--kind", "person")
    assert done.code == 2, done
    assert "quote" in done.err and '"Alan Kay"' in done.err, done
