"""One rule for ``:`` and ``\\`` (and names not UTF-8) in vault paths: refused in every
path component, on reads as on writes (``normalize_path``; a note verb names the write
rule of SPEC §1.4 for a ``:`` wherever it is), with one message each; a
file so named by hand is listed (``ls``), never read, recalled or copied, and every
reader (get, recall's freshness check, export, backup) says so instead of one reader
taking it and another refusing it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.vault_changes import tracked
from echo_core.paths import normalize_path
from tests.cli_inproc import vault_runner

COLON = "not allowed in names on Windows"
#: Hand-made names no vault path can be, each with a word of the reason readers give.
HAND_MADE = {"resources/concepts/a:b.md": "':'", "x:note.md": "':'",
             "resources/concepts/back\\slash.md": "backslash"}


@pytest.mark.parametrize("path", ["resources/a:b.md", "x:note.md", "a/b:c/d.md",
                                  "projects/note:.md"])
def test_a_colon_in_any_component_is_refused_as_a_windows_name(path: str) -> None:
    with pytest.raises(EchoError) as info:
        normalize_path(path)
    assert info.value.code == ExitCode.USAGE
    assert COLON in info.value.message and "absolute" not in info.value.message


@pytest.mark.parametrize("path", ["caf\udce9.md", "resources/caf\udce9.md", "\ud800.md"])
def test_a_short_path_not_utf8_is_refused_like_a_long_one(path: str) -> None:
    with pytest.raises(EchoError) as info:
        normalize_path(path)
    assert info.value.code == ExitCode.USAGE and "not valid UTF-8" in info.value.message


def test_refused_paths_picks_the_listed_names_normalize_path_refuses() -> None:
    from echo_core.paths import refused_paths  # new with the rule

    listed = ["a.md", "resources/a:b.md", "b\\c.md", "caf\udce9.md", "é.md",
              "/".join(["d"] * 40) + ".md", "ok/" + "n" * 100 + ".md"]
    assert refused_paths(listed) == ["resources/a:b.md", "b\\c.md", "caf\udce9.md",
                                     "/".join(["d"] * 40) + ".md"]
    assert refused_paths(["a.md", "é/b.md"]) == []
    deep, long_name = "/".join(["d"] * 33) + ".md", "a/" + "n" * 256 + ".md"
    assert refused_paths(["ok/" + "n" * 100 + ".md", deep, long_name, "b.md"]) == [
        deep, long_name]  # ASCII only: the lengths alone are looked at
    assert refused_paths(["/".join(["d"] * 31) + ".md"]) == []


@pytest.mark.parametrize("path", [*HAND_MADE, "resources/caf\udce9.md"])
def test_the_change_engine_does_not_track_a_path_no_read_takes(path: str) -> None:
    assert not tracked(path)


@pytest.fixture
def cli(isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    run = vault_runner(tmp_path, capsys, monkeypatch)
    assert run("recall", "anything").code == 0  # the baseline is recorded
    for rel in HAND_MADE:
        (run.vault / rel).write_text(f"# odd\n\ntokodd {rel}\n", "utf-8")
    return run


def test_put_refuses_a_colon_with_one_message_wherever_it_is(cli) -> None:  # type: ignore[no-untyped-def]
    for path in ("x:note.md", "resources/concepts/a:b.md"):
        done = cli("put", path, "-")
        assert done.code == 2, done.err
        assert "contains ':'" in done.err and "SPEC §1.4" in done.err, (path, done.err)


def test_every_reader_agrees_on_hand_made_colon_and_backslash_names(cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    listed = cli("ls", "--json").out
    for rel, why in HAND_MADE.items():
        assert json.dumps(rel)[1:-1] in listed
        got = cli("get", rel)
        assert got.code == 2 and why in got.err, (rel, got.err)
    recall = cli("recall", "tokodd", "--json")
    assert recall.code == 0 and json.loads(recall.out)["primary"] == []
    assert "could not check" not in recall.err
    exported = cli("export", "--to", str(tmp_path / "out"), "--json")
    skipped = {s["path"] for s in json.loads(exported.out)["skipped"]}
    assert skipped == set(HAND_MADE), exported.out
