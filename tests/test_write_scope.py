"""The write scope of note verbs (SPEC §1.4): put, append and fm (CLI) and
``echo_append_note`` (MCP) write only ``.md`` notes outside dot-folders and the agent's
internal files, with names valid on every platform; a refusal is exit 2 naming the rule
and writes nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from echo_core.errors import EchoError
from echo_core.write_scope import MAX_NOTE_NAME_BYTES, require_note_path
from tests.cli_inproc import CliRun, run_main
from tests.mcp_kit import call, make_server, seeded_box, with_client

#: Files a note verb must never write, with what they hold on the day they are attacked.
FORBIDDEN = {
    ".git/config": "[core]\n\tbare = false\n",
    ".obsidian/app.json": '{"legacyEditor": false}\n',
    "_agent/.lock": None,  # absent: an append would create it and block writes for 600 s
    "_agent/index/entities.json": None,  # written by init
    "notes/todo.txt": "buy milk\n",
}
RULE = "write scope"


def _snapshot(vault: Path) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for rel in FORBIDDEN:
        target = vault / rel
        out[rel] = hashlib.sha256(target.read_bytes()).hexdigest() if target.exists() else None
    return out


def _plant(vault: Path) -> None:
    for rel, text in FORBIDDEN.items():
        if text is not None:
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_text(text, "utf-8")


@pytest.fixture
def cli_vault(isolated_env: dict[str, str], vault_dir: Path, capsys: pytest.CaptureFixture[str],
              monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ECHO_VAULT", str(vault_dir))
    assert run_main(["init"], capsys, monkeypatch).code == 0
    _plant(vault_dir)
    return vault_dir


def _cli_write(verb: str, path: str, capsys: pytest.CaptureFixture[str],
               monkeypatch: pytest.MonkeyPatch) -> CliRun:
    if verb == "put":
        return run_main(["put", path, "-"], capsys, monkeypatch, stdin=b"fsmonitor = evil\n")
    if verb == "append":
        return run_main(["append", path, "fsmonitor = evil"], capsys, monkeypatch)
    return run_main(["fm", path, "fsmonitor", '"evil"'], capsys, monkeypatch)


@pytest.mark.parametrize("verb", ["put", "append", "fm"])
def test_cli_note_verbs_refuse_files_outside_the_write_scope(
        cli_vault: Path, verb: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = _snapshot(cli_vault)
    for path in FORBIDDEN:
        done = _cli_write(verb, path, capsys, monkeypatch)
        assert done.code == 2, (verb, path, done)
        assert RULE in done.err and "SPEC §1.4" in done.err and path in done.err, done.err
        assert "Traceback" not in done.err
    assert _snapshot(cli_vault) == before
    assert not (cli_vault / "_agent/.lock").exists()


def test_cli_json_refusal_is_a_usage_error(cli_vault: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    done = run_main(["append", ".git/config", "x", "--json"], capsys, monkeypatch)
    assert done.code == 2 and '"code": "usage"' in done.out and RULE in done.out


def test_cli_note_verbs_still_write_notes(cli_vault: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for verb in ("put", "append", "fm"):
        for path in ("notes/ok.md", "_agent/sessions/s.md", "ресурсы/заметка.md"):
            done = _cli_write(verb, path, capsys, monkeypatch)
            assert done.code == 0, (verb, path, done)
            assert (cli_vault / path).is_file()


def test_mcp_append_note_refuses_files_outside_the_write_scope(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    _plant(box.vault)
    before = _snapshot(box.vault)
    server = make_server(box)

    async def body(client: Client) -> list[tuple[bool, dict[str, Any], str]]:
        return [await call(client, "echo_append_note", path=p, line="fsmonitor = evil")
                for p in FORBIDDEN]

    try:
        results = with_client(server, body)
    finally:
        server.runner.close()
    for path, (err, data, text) in zip(FORBIDDEN, results):
        assert err and data["error"]["code"] == "usage", (path, data)
        assert RULE in data["error"]["message"] and path in data["error"]["message"]
    assert _snapshot(box.vault) == before


@pytest.mark.parametrize("path", [
    ".trash/old.md", "notes/.hidden.md", "_Agent/Index/x.md", "_AGENT/ECHO-VAULT.md",
    "notes/a:b.md", "notes/a*b.md", "notes/a?b.md", 'notes/a"b.md', "notes/a<b.md",
    "notes/a>b.md", "notes/a|b.md", "notes/a\nb.md", "notes/a\rb.md", "notes/a\x1bb.md",
    "notes/a\x85b.md", "notes/a\u202eb.md", "notes /a.md", "notes./a.md", "notes/a.md.",
    "notes/a\udcffb.md", "notes/x.MD", "notes/con.md", "nul/x.md", "notes/COM1.draft.md",
])
def test_write_scope_refuses_bad_names(path: str) -> None:
    with pytest.raises(EchoError) as caught:
        require_note_path(path)
    assert caught.value.code_name == "usage" and "SPEC §1.4" in caught.value.message


@pytest.mark.parametrize("path", [
    "inbox/captures/inbox.md", "_agent/sessions/2026-03-01-0930-x.md",
    "resources/people/ada-lovelace.md", "東京/会議.md", "notes/naïve café.md",
    "notes/v1.2 release.md", "./notes//x.md", "notes/con-note.md", "notes/console.md",
])
def test_write_scope_accepts_notes(path: str) -> None:
    assert require_note_path(path) == path.replace("./", "").replace("//", "/")


def test_note_name_leaves_room_for_the_temp_file() -> None:
    ok = "notes/" + "é" * (MAX_NOTE_NAME_BYTES // 2 - 2) + ".md"
    assert require_note_path(ok) == ok
    with pytest.raises(EchoError) as caught:
        require_note_path("notes/" + "é" * (MAX_NOTE_NAME_BYTES // 2) + ".md")
    assert caught.value.code_name == "usage" and "bytes" in caught.value.message



def test_link_refuses_the_marker_and_dot_folders(cli_vault: Path, capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (cli_vault / ".obsidian/plugin.md").write_text("# settings\n", "utf-8")
    assert run_main(["put", "notes/a.md", "-"], capsys, monkeypatch, stdin=b"# A\n").code == 0
    watched = [cli_vault / "_agent/echo-vault.md", cli_vault / ".obsidian/plugin.md",
               cli_vault / "notes/a.md"]
    before = [p.read_bytes() for p in watched]
    for target in ("_agent/echo-vault.md", ".obsidian/plugin.md"):
        done = run_main(["link", "notes/a.md", target], capsys, monkeypatch)
        assert done.code == 2 and RULE in done.err, done
    assert [p.read_bytes() for p in watched] == before


def test_mcp_link_refuses_the_marker(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    marker = box.vault / "_agent/echo-vault.md"
    before = marker.read_bytes()
    server = make_server(box)

    async def body(client: Client) -> tuple[bool, dict[str, Any], str]:
        return await call(client, "echo_link", a="ada-lovelace", b="_agent/echo-vault.md")

    try:
        err, data, _ = with_client(server, body)
    finally:
        server.runner.close()
    assert err and data["error"]["code"] == "usage" and RULE in data["error"]["message"]
    assert marker.read_bytes() == before
