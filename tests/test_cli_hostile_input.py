"""The CLI under hostile input: undecodable arguments and stdin, terminal control
characters, impossible names, a queued write and an operating-system error each give a
clean message and a stable exit code, never a traceback."""

from __future__ import annotations

import errno
import json
from pathlib import Path
from typing import Any

import pytest

import plugins.transport_cli.app as cli_app
from echo_core.plugins import create_host
from tests.cli_inproc import CliRun, run_main
from tests.conftest import run_cli
from tests.test_outbox import SwitchablePlugin, SwitchableStorage  # a vault that goes down

BAD = "bad\udcff"  # how argv delivers the byte 0xff (surrogateescape)
#: ESC (a screen clear), BEL, C1 CSI, the bidi override RLO and a lone CR.
CONTROLS = "\x1b[2J\x07\x9b31m\u202eevil\rX"
TITLE_CONTROLS = CONTROLS.replace("\r", "")  # a title is one line
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


@pytest.fixture
def vault(isolated_env: dict[str, str], vault_dir: Path, capsys: pytest.CaptureFixture[str],
          monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ECHO_VAULT", str(vault_dir))
    assert run_main(["init"], capsys, monkeypatch).code == 0
    return vault_dir


Run = Any  # a callable (args, stdin=b"") -> CliRun


@pytest.fixture
def cli(vault: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    def run(args: list[str], stdin: bytes = b"") -> CliRun:
        return run_main(args, capsys, monkeypatch, stdin=stdin)

    return run


def _assert_clean(done: CliRun, code: int, *needles: str) -> None:
    assert done.code == code, done
    assert "Traceback" not in done.err + done.out
    for needle in needles:
        assert needle in done.err + done.out, (needle, done)


UNDECODABLE_ARGUMENTS = [
    (["capture", BAD], "TITLE"),
    (["capture", "x", "--body", BAD], "--body"),
    (["capture", "x", "--kind", "person", "--tags", BAD], "--tags"),
    (["capture", "x", "--kind", "person", "--aliases", BAD], "--aliases"),
    (["capture", "x", "--kind", "person", "--sources", BAD], "--sources"),
    (["capture", "x", "--kind", "person", "--status", BAD], "--status"),
    (["capture", "x", "--kind", BAD], "--kind"),
    (["capture", "x", "--merge-into", BAD], "--merge-into"),
    (["put", f"notes/{BAD}.md", "-"], "PATH"),
    (["append", "notes/x.md", BAD], "LINE"),
    (["append", f"notes/{BAD}.md", "line"], "PATH"),
    (["fm", "notes/x.md", BAD, '"v"'], "KEY"),
    (["fm", "notes/x.md", "k", f'"{BAD}"'], "JSON-VALUE"),
    (["fm", "notes/x.md", "k", '"\\udcff"'], "value"),
    (["recall", "engine", BAD], "QUERY"),
    (["scope", "set", BAD], "TEXT"),
    (["resolve", BAD], "MENTION"),
    (["link", BAD, "notes/x.md"], "A"),
    (["get", f"notes/{BAD}.md"], "PATH"),
]
UNDECODABLE_STDIN = [
    (["capture", "x", "-"], "body (stdin)"),
    (["put", "notes/x.md", "-"], "- | FILE"),
    (["scope", "set", "-"], "TEXT (stdin)"),
    (["session-end", "-"], "BUNDLE.json|-"),
    (["triage", "apply", "-"], "PROPOSALS.json|-"),
]


def test_undecodable_arguments_are_usage_errors_naming_the_argument(cli: Run) -> None:
    for args, label in UNDECODABLE_ARGUMENTS:  # one vault for all: each call writes nothing
        _assert_clean(cli(args), 2, label, "UTF-8")


def test_undecodable_stdin_is_a_usage_error_naming_the_argument(cli: Run) -> None:
    for args, label in UNDECODABLE_STDIN:
        _assert_clean(cli(args, stdin=b"caf\xe9 \xff\xfe"), 2, label, "not UTF-8")


def test_undecodable_bytes_in_a_real_argv(vault: Path, isolated_env: dict[str, str]) -> None:
    done = run_cli(["capture", BAD, "--vault", str(vault)], env=isolated_env)
    assert done.returncode == 2 and "TITLE is not valid UTF-8" in done.stderr, done
    assert "Traceback" not in done.stderr


def _no_raw_controls(text: str) -> None:
    for char in RAW:
        assert char not in text.replace("\r\n", "\n"), (char, text)


def _hand_made(cli: Run, title: str) -> str:
    """A person note titled ``title`` written by hand (capture refuses control characters
    in a title; a person's own note may hold them): its path."""
    path = "resources/people/ada-controls.md"
    text = f"---\ntype: person\nstatus: active\ntags: [person]\n---\n# {title}\n\nx\n"
    assert cli(["put", path, "-"], stdin=text.encode()).code == 0
    return path


def test_control_characters_are_escaped_in_prose_and_errors(cli: Run) -> None:
    title = f"Ada {TITLE_CONTROLS}"
    refused = cli(["capture", title, "--kind", "person"])
    assert refused.code == 2 and "control character" in refused.err
    _no_raw_controls(refused.out + refused.err)
    _hand_made(cli, title)
    found = cli(["resolve", title])
    _assert_clean(found, 0, "\\x1b[2J", "\\u202e")
    _no_raw_controls(found.out)
    missing = cli(["get", f"notes/{CONTROLS}.md"])
    assert missing.code in (2, 44)
    _no_raw_controls(missing.err)
    gated = cli(["capture", f"Ada {TITLE_CONTROLS}!", "--kind", "person", "--body", CONTROLS])
    _no_raw_controls(gated.out + gated.err)


def test_json_output_escapes_controls_and_keeps_the_text(cli: Run) -> None:
    title = f"Ada {TITLE_CONTROLS}"
    done = cli(["capture", title, "--kind", "person", "--json"])
    assert done.code == 2
    _no_raw_controls(done.out)
    path = _hand_made(cli, title)
    read = cli(["get", path, "--json"])
    _no_raw_controls(read.out)
    assert f"# {title}" in json.loads(read.out)["content"]


def test_get_escapes_controls_on_a_terminal_and_is_exact_when_piped(
        cli: Run, vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = f"# Note\r\n\tline {CONTROLS}\r\n"
    assert cli(["put", "notes/n.md", "-"], stdin=text.encode()).code == 0
    piped = cli(["get", "notes/n.md"])
    assert piped.out == text  # exact bytes when piped: no newline added
    monkeypatch.setattr("plugins.transport_cli.emit.stdout_is_terminal", lambda: True)
    shown = cli(["get", "notes/n.md"])
    _no_raw_controls(shown.out)
    assert "# Note\r\n\tline \\x1b[2J\\x07\\x9b31m\\u202eevil\\x0dX\r\n" in shown.out


IMPOSSIBLE_NAMES = {
    "notes/" + "a" * 300 + ".md": "bytes",
    "notes/" + "日" * 90 + ".md": "bytes",  # 270 bytes in 90 characters
    "a/" * 2000 + "x.md": "levels deep",
}


def test_impossible_names_are_usage_errors(cli: Run) -> None:
    for path, needle in IMPOSSIBLE_NAMES.items():
        for args in (["put", path, "-"], ["append", path, "line"], ["get", path]):
            _assert_clean(cli(args, stdin=b"hi\n"), 2, needle)


def test_a_newline_in_a_path_is_refused(cli: Run, vault: Path) -> None:
    _assert_clean(cli(["put", "notes/a\nb.md", "-"], stdin=b"hi\n"), 2, "SPEC §1.4")
    assert not (vault / "notes").exists() or not list((vault / "notes").iterdir())


def test_a_scope_holding_a_heading_is_refused_and_the_context_note_kept(
        cli: Run, vault: Path) -> None:
    """A heading in the scope would end the ## Scope section and forge Scope History."""
    assert cli(["scope", "set", "Ship v2"]).code == 0
    before = (vault / "_agent/context/current-context.md").read_bytes()
    for forged in ("Ship v3\n## Scope History\n- 2020-01-01: fake entry", "# Title", "  ### x"):
        _assert_clean(cli(["scope", "set", forged]), 2, "markdown heading")
    assert (vault / "_agent/context/current-context.md").read_bytes() == before
    assert cli(["scope", "set", "#1 priority: ship\nthen #2"]).code == 0  # no heading


@pytest.fixture
def down_cli(isolated_env: dict[str, str], vault_dir: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> Run:
    SwitchableStorage.down = False
    monkeypatch.setattr(cli_app, "_startup_host",
                        lambda: create_host(extra=[("switch_storage", SwitchablePlugin())]))
    monkeypatch.setenv("ECHO_VAULT", f"switch://{vault_dir}")
    assert run_main(["init"], capsys, monkeypatch).code == 0
    monkeypatch.setattr(SwitchableStorage, "down", True)

    def run(args: list[str], stdin: bytes = b"") -> CliRun:
        return run_main(args, capsys, monkeypatch, stdin=stdin)

    return run


@pytest.mark.parametrize("args", [
    ["capture", "Ada Lovelace", "--kind", "person", "--body", "Wrote the first program."],
    ["capture", "call the bank"],
    ["put", "notes/x.md", "-"],
    ["append", "notes/x.md", "- a line"],
    ["fm", "notes/x.md", "status", '"active"'],
])
def test_a_queued_write_renders_as_prose(down_cli: Run, args: list[str]) -> None:
    done = down_cli(args, stdin=b"# x\n")
    _assert_clean(done, 0, "queued in the outbox", "echo-memory flush")


@pytest.mark.parametrize(("error", "needles"), [
    (OSError(errno.ENOSPC, "No space left on device", "/v/notes/x.md"),
     ("ENOSPC", "No space left on device", "free some disk space")),
    (PermissionError(errno.EACCES, "Permission denied", "/v/notes/x.md"),
     ("EACCES", "permissions")),
    (OSError(errno.EROFS, "Read-only file system"), ("EROFS", "read-only")),
    (UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogates not allowed"),
     ("UnicodeEncodeError", "UTF-8")),
])
def test_an_unhandled_os_error_is_one_clean_line(cli: Run, monkeypatch: pytest.MonkeyPatch,
                                                 error: Exception, needles: tuple[str, ...]) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr("echo_core.ops.notes_io.put_note", broken)
    done = cli(["put", "notes/x.md", "-"], stdin=b"# x\n")
    _assert_clean(done, 1, "error: ", *needles)  # on base: the exception escapes main
    assert len(done.err.strip().splitlines()) == 1, done.err
    monkeypatch.setenv("ECHO_DEBUG", "1")
    debug = cli(["put", "notes/x.md", "-"], stdin=b"# x\n")
    assert debug.code == 1 and "Traceback" in debug.err and needles[0] in debug.err


def test_link_refuses_templates_and_the_inbox_and_writes_nothing(cli: Run, vault: Path) -> None:
    """A link in a template would be copied into every new note of its kind."""
    assert cli(["capture", "Grace Hopper", "--kind", "person", "--body", "x"]).code == 0
    (vault / "templates").mkdir(exist_ok=True)
    (vault / "templates/person.md").write_text("# {{title}}\n")
    assert cli(["capture", "note for the inbox"]).code == 0
    before = {p: p.read_bytes() for p in vault.rglob("*.md")}
    for target in ("templates/person.md", "inbox/captures/inbox.md"):
        _assert_clean(cli(["link", target, "resources/people/grace-hopper.md"]), 2,
                      "not a note of the memory to link")
        _assert_clean(cli(["link", "grace-hopper", target]), 2, "not a note of the memory")
    assert {p: p.read_bytes() for p in vault.rglob("*.md")} == before
