"""Issue 13, edges of the vault: backups hold attachments byte for byte, init leaves an
existing vault uncluttered, the first recall shows progress, and a missing or mistyped
vault path gets one message and one exit code from every verb."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest

from echo_core.context import create_context
from echo_core.ops.backup import backup_vault
from plugins.transport_cli.app import main
from tests.capture_kit import VaultBox
from tests.capture_kit import isolated_env as env_for
from tests.cli_inproc import CliRun, run_main
from tests.obsidian_fake import FakeObsidian
from tests.obsidian_kit import KEY, obsidian_fake  # noqa: F401 - fixture

#: A real-looking PNG (signature, IHDR, IEND) and a PDF with binary bytes in it.
PNG = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06"
       b"\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x00IEND\xaeB`\x82")
PDF = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n\xff\xfe\x00\x01%%EOF\n"

MARKER = b"---\ntype: marker\nschema_version: 1\ncreated: 2026-03-01\n---\n"


def _restore(zip_path: str, into: Path) -> dict[str, bytes]:
    """Restore from a backup as its docs say (unzip into a folder); the vault's files it
    holds (not the backup's own manifest and note history)."""
    with zipfile.ZipFile(zip_path) as archive:
        archive.extractall(into)
    return {rel: p.read_bytes() for p in into.rglob("*")
            if p.is_file() and not (rel := p.relative_to(into).as_posix()).startswith(
                (".echo-backup-manifest.json", ".echo-history/"))}


def test_backup_restores_images_and_pdfs_byte_identical(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / "attachments").mkdir()
    (box.vault / "attachments/diagram.png").write_bytes(PNG)
    (box.vault / "attachments/paper.pdf").write_bytes(PDF)
    (box.vault / "notes").mkdir()
    (box.vault / "notes/crlf.md").write_bytes(b"# CRLF\r\n![[diagram.png]]\r\n")
    env = backup_vault(box.ctx())
    assert env.ok and env.data.skipped == ()
    restored = _restore(env.data.path, tmp_path / "restored")
    assert restored["attachments/diagram.png"] == PNG
    assert restored["attachments/paper.pdf"] == PDF
    assert restored["notes/crlf.md"] == b"# CRLF\r\n![[diagram.png]]\r\n"
    originals = {p.relative_to(box.vault).as_posix(): p.read_bytes()
                 for p in box.vault.rglob("*") if p.is_file()
                 and not any(part.startswith(".") for part in p.relative_to(box.vault).parts)}
    assert restored == originals


def test_backup_of_an_obsidian_vault_keeps_attachment_bytes(
        tmp_path: Path, obsidian_fake: FakeObsidian,  # noqa: F811 - fixture
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OBSIDIAN_API_KEY", KEY)
    obsidian_fake.vault.put("attachments/diagram.png", PNG)
    obsidian_fake.vault.put("attachments/paper.pdf", PDF)
    obsidian_fake.vault.put("notes/a.md", "# A\n\nné\n".encode())
    obsidian_fake.vault.put("_agent/echo-vault.md", MARKER)
    env_vars = env_for(tmp_path / "home")
    url = obsidian_fake.base_url.replace("http://", "obsidian+http://")
    ctx = create_context(vault=url, state_dir=str(tmp_path / "state"), env=env_vars)
    env = backup_vault(ctx, out=str(tmp_path / "out"))
    assert env.ok and env.data.skipped == ()
    restored = _restore(env.data.path, tmp_path / "restored")
    assert restored == {"attachments/diagram.png": PNG, "attachments/paper.pdf": PDF,
                        "notes/a.md": "# A\n\nné\n".encode(), "_agent/echo-vault.md": MARKER}


def test_cli_backup_of_a_vault_with_an_image_exits_0_and_holds_it(
        tmp_path: Path, isolated_env: dict[str, str]) -> None:
    from tests.conftest import run_cli

    box = VaultBox(tmp_path).init()
    (box.vault / "image.png").write_bytes(PNG)
    done = run_cli(["backup", "--out", str(tmp_path / "out"), "--vault", str(box.vault),
                    "--state-dir", str(box.state)], env=isolated_env)
    assert done.returncode == 0, done.stderr
    assert "skipped" not in done.stdout + done.stderr
    (zip_path,) = (tmp_path / "out").iterdir()
    with zipfile.ZipFile(zip_path) as archive:
        assert archive.read("image.png") == PNG


def test_a_text_only_storage_backs_up_its_text_and_reports_the_backup_incomplete(
        tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    (box.vault / "image.png").write_bytes(PNG)
    ctx = box.ctx()

    class TextOnly:  # a third-party storage without read_bytes
        def __init__(self, inner: object) -> None:
            self._inner = inner

        def __getattr__(self, name: str) -> object:
            if name == "read_bytes":
                raise AttributeError(name)
            return getattr(self._inner, name)

    ctx.vault.storage = TextOnly(ctx.vault.storage)  # type: ignore[assignment]
    env = backup_vault(ctx, out=str(tmp_path / "out"))
    assert not env.ok and [s.path for s in env.data.skipped] == ["image.png"]
    assert "incomplete" in env.message
    with zipfile.ZipFile(io.BytesIO(Path(env.data.path).read_bytes())) as archive:
        assert "_agent/echo-vault.md" in archive.namelist()


# --- init on a vault the person already has (item 12) ---------------------------------

def _tree(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str, stdin: bytes = b"") -> CliRun:
    return run_main([*args, "--vault", str(box.vault), "--state-dir", str(box.state)],
                    capsys, monkeypatch, stdin=stdin)


@pytest.mark.parametrize("own", ["obsidian-settings", "notes"])
def test_init_on_an_existing_vault_adds_only_its_own_files_under_agent(
        tmp_path: Path, own: str, isolated_env: dict[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path)
    if own == "obsidian-settings":
        (box.vault / ".obsidian").mkdir()
        (box.vault / ".obsidian/app.json").write_text("{}", "utf-8")
    else:
        (box.vault / "Ideas").mkdir()
        (box.vault / "Ideas/Garden.md").write_text("# Garden\n", "utf-8")
        (box.vault / "Welcome.md").write_text("Hi\n", "utf-8")
    before = _tree(box.vault)
    done = _cli(box, capsys, monkeypatch, "init")
    assert done.code == 0, done.err
    added = _tree(box.vault) - before
    assert all(p == "_agent" or p.startswith("_agent/") for p in added), sorted(added)
    assert not any(p.endswith("README.md") or p.startswith("_agent/templates") for p in added)
    assert "_agent/echo-vault.md" in added and "--scaffold" in done.out
    again = _cli(box, capsys, monkeypatch, "init")
    assert again.code == 0 and "nothing changed" in again.out and _tree(box.vault) - before == added


def test_init_on_an_empty_folder_writes_the_full_layout_and_scaffold_adds_it_later(
        tmp_path: Path) -> None:
    from echo_core.ops.init import init_vault

    box = VaultBox(tmp_path)
    env = init_vault(box.ctx())
    assert env.data.scaffold and "resources/people/README.md" in env.data.created
    assert (box.vault / "templates").is_dir() and (box.vault / "inbox/captures/inbox.md").is_file()
    other = VaultBox(tmp_path / "other")
    (other.vault / "Welcome.md").write_text("Hi\n", "utf-8")
    assert not init_vault(other.ctx()).data.scaffold
    assert not (other.vault / "templates").exists()
    later = init_vault(other.ctx(), scaffold=True)
    assert later.data.scaffold and (other.vault / "resources/people/README.md").is_file()


def test_every_write_after_an_uncluttered_init_creates_its_folder(
        tmp_path: Path, isolated_env: dict[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path)
    (box.vault / ".obsidian").mkdir()
    (box.vault / ".obsidian/app.json").write_text("{}", "utf-8")
    assert _cli(box, capsys, monkeypatch, "init").code == 0
    writes = [
        ("capture", "Ada Lovelace", "--kind", "person", "--body", "Mathematician."),
        ("capture", "Apollo Launch", "--kind", "project", "--body", "Ship it."),
        ("capture", "Pick a database", "--kind", "decision", "--body", "Postgres."),
        ("capture", "Weekly sync", "--kind", "meeting", "--body", "Notes."),
        ("capture", "Retry budget", "--kind", "working", "--body", "Three tries."),
        ("capture", "Home lab", "--kind", "area", "--domain", "personal", "--body", "Rack."),
        ("capture", "remember to water the plants"),
        ("scope", "set", "shipping apollo"),
    ]
    for args in writes:
        done = _cli(box, capsys, monkeypatch, *args)
        assert done.code == 0, (args, done.out, done.err)
    bundle = b'{"slug": "first-session", "log_body": "## Goal\\nTry it.", "agent_log_line": "tried"}'
    done = _cli(box, capsys, monkeypatch, "session-end", "-", "--apply", stdin=bundle)
    assert done.code == 0, done.err
    line = "- 2026-03-01: remember to water the plants"
    proposals = json.dumps({"proposals": [{"line": line, "title": "Plants", "kind": "concept"}]})
    triage = _cli(box, capsys, monkeypatch, "triage", "apply", "-", "--apply",
                  stdin=proposals.encode())
    assert triage.code == 0, (triage.out, triage.err)
    for folder in ("resources/people", "projects/active", "decisions", "meetings",
                   "_agent/memory/working", "areas/personal", "inbox/captures", "journal/daily",
                   "_agent/sessions", "inbox/processing-log", "resources/concepts"):
        assert any((box.vault / folder).glob("*.md")), (folder, _tree(box.vault))
    recall = _cli(box, capsys, monkeypatch, "recall", "Lovelace")
    assert recall.code == 0 and "ada-lovelace" in recall.out


# --- progress of the first recall's index build (item 13) -----------------------------

def _vault_with_notes(tmp_path: Path, count: int) -> VaultBox:
    box = VaultBox(tmp_path).init()
    folder = box.vault / "resources/concepts"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(count):
        (folder / f"topic-{n}.md").write_text(
            f"---\ntype: concept\n---\n# Topic {n}\n\nQuasar number {n}.\n", "utf-8")
    return box


def test_first_recall_reports_the_index_build_and_a_warm_one_does_not(tmp_path: Path) -> None:
    from echo_core import progress
    from echo_core.ops.recall import recall
    from echo_core.ops.recall_index import corpus_size

    box = _vault_with_notes(tmp_path, 30)
    ctx = box.ctx()
    total = corpus_size(ctx)
    reports: list[tuple[int, int]] = []
    with progress.reporting(lambda done, of: reports.append((done, of))):
        first = recall(ctx, "quasar")
    assert first.ok and first.data.primary
    assert reports[0] == (0, total) and reports[-1] == (total, total) and total >= 30
    assert [d for d, _ in reports] == sorted(d for d, _ in reports)
    assert {of for _, of in reports} == {total}
    reports.clear()
    with progress.reporting(lambda done, of: reports.append((done, of))):
        assert box.ctx() and recall(box.ctx(), "quasar").ok
    assert reports == []


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("terminal", [True, False])
def test_cli_first_recall_draws_a_bar_on_a_terminal_only(
        tmp_path: Path, terminal: bool, isolated_env: dict[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    box = _vault_with_notes(tmp_path, 12)
    err = _Terminal() if terminal else io.StringIO()
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    monkeypatch.setattr(sys, "stderr", err)
    code = 0
    try:
        main(["recall", "quasar", "--vault", str(box.vault), "--state-dir", str(box.state)])
    except SystemExit as done:
        code = int(done.code or 0)
    assert code == 0 and "topic-" in capsys.readouterr().out
    shown = err.getvalue()
    if terminal:
        assert "recall" in shown and re.search(r"\b(\d+)/\1\b", shown), shown
    else:
        assert shown == ""


# --- one message, one exit code for a missing or mistyped vault (item 14) -------------

BUNDLE = b'{"slug": "s", "log_body": "## Goal\\nx"}'
PROPOSALS = b'{"proposals": [{"line": "- 2026-03-01: x", "action": "stay"}]}'
#: Every verb that works on a vault, with arguments that would be valid in a vault.
VAULT_VERBS: list[tuple[tuple[str, ...], bytes]] = [
    (("recall", "engine"), b""), (("capture", "Ada", "--kind", "person"), b""),
    (("capture", "an inbox line"), b""), (("resolve", "ada"), b""), (("link", "a.md", "b.md"), b""),
    (("reindex",), b""), (("scope", "show"), b""), (("scope", "set", "x"), b""), (("load",), b""),
    (("load", "--brief"), b""), (("session-end", "-", "--apply"), BUNDLE), (("get", "a.md"), b""),
    (("put", "a.md", "-"), b"# A\n"), (("append", "a.md", "- line"), b""),
    (("fm", "a.md", "k", "1"), b""), (("ls",), b""), (("history", "a.md"), b""),
    (("restore", "a.md", "abcd"), b""), (("backup",), b""), (("triage", "list"), b""),
    (("triage", "apply", "-", "--apply"), PROPOSALS), (("flush",), b""),
]


def _run(box: VaultBox, vault: str, args: tuple[str, ...], stdin: bytes,
         capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> CliRun:
    return run_main([*args, "--vault", vault, "--state-dir", str(box.state)], capsys,
                    monkeypatch, stdin=stdin)


@pytest.mark.parametrize("where", ["missing-folder", "folder-without-marker"])
def test_every_verb_says_not_a_vault_with_exit_78_for_a_path_never_used(
        tmp_path: Path, where: str, isolated_env: dict[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path)
    vault = box.vault if where == "folder-without-marker" else tmp_path / "typo"
    why = ("the folder does not exist" if where == "missing-folder"
           else "the folder has no marker _agent/echo-vault.md")
    expected = (f"error: {vault} is not an echo-memory vault ({why}); check the vault path "
                "(--vault, ECHO_VAULT or `vault` in the config file) for a typo; to start a "
                f"new vault there: `echo-memory init --vault {vault}`\n")
    differ = {}
    for args, stdin in VAULT_VERBS:
        done = _run(box, str(vault), args, stdin, capsys, monkeypatch)
        if (done.code, done.err, done.out) != (78, expected, ""):
            differ[" ".join(args)] = (done.code, done.out + done.err)
    assert differ == {}
    assert not any(box.vault.iterdir()) and not (tmp_path / "typo").exists()


def test_every_verb_says_mount_or_restore_with_exit_69_for_a_vault_gone_missing(
        tmp_path: Path, isolated_env: dict[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    box = VaultBox(tmp_path).init()
    for text in (b"# A\n", b"# A2\n"):  # a version to restore: restore then needs the vault
        assert _run(box, str(box.vault), ("put", "a.md", "-"), text, capsys,
                    monkeypatch).code == 0
    listed = _run(box, str(box.vault), ("history", "a.md", "--json"), b"", capsys, monkeypatch)
    version = json.loads(listed.out)["versions"][0]["version_id"]
    box.vault.rename(tmp_path / "unmounted")
    gone = (f"vault {box.vault} is missing, and this machine used a vault there: mount the "
            "drive or restore the folder")
    differ = {}
    for args, stdin in VAULT_VERBS:
        if args[0] == "restore":
            args = ("restore", "a.md", version, "--yes")
        done = _run(box, str(box.vault), args, stdin, capsys, monkeypatch)
        said = done.out + done.err
        if args[0] == "load":  # answers from the last-known-good cache, or says so
            ok = done.code == 69 and "vault unreachable; proceed without memory" in said
        elif args[0] == "flush":  # reports the outbox: what it could not replay stays
            ok = done.code == 0 and "synced" in said and "pending" in said
        else:
            ok = done.code == 69 and gone in said
        if not ok or "init --vault" in said or box.vault.exists():
            differ[" ".join(args)] = (done.code, said)
    assert differ == {}


MCP_CALLS: dict[str, dict[str, object]] = {
    "echo_recall": {"query": "engine"}, "echo_get_note": {"path": "a.md"},
    "echo_capture": {"title": "Ada", "kind": "person"}, "echo_get_scope": {},
    "echo_set_scope": {"scope": "x"}, "echo_load": {}, "echo_resolve": {"mention": "ada"},
    "echo_append_note": {"path": "a.md", "line": "- x"}, "echo_link": {"a": "a.md", "b": "b.md"},
}


def test_mcp_tools_say_not_a_vault_like_the_cli(tmp_path: Path) -> None:
    import asyncio

    from echo_core.operations import OperationRegistry, parse_params
    from plugins.transport_mcp.runner import ToolRunner

    box = VaultBox(tmp_path)
    typo = tmp_path / "typo"
    runner = ToolRunner(lambda: create_context(vault=str(typo), state_dir=str(box.state),
                                               env=box.env()), inline_reads=True)
    registry = OperationRegistry.from_host(runner.context().host)
    ops = {op.tool_name: op for op in registry.for_mcp()}
    expected = {"code": "not-configured", "exit": 78,
                "message": f"{typo} is not an echo-memory vault (the folder does not exist); "
                           "check the vault path (--vault, ECHO_VAULT or `vault` in the config "
                           f"file) for a typo; to start a new vault there: `echo-memory init "
                           f"--vault {typo}`"}
    got = {}
    try:
        for tool, arguments in MCP_CALLS.items():
            op = ops[tool]
            params = parse_params(op.params, arguments, surface="mcp", operation=op.name)
            outcome = asyncio.run(runner.call(op, params))
            assert outcome.result.is_error, tool
            got[tool] = (outcome.result.structured_content or {}).get("error")
    finally:
        runner.close()
    assert got == dict.fromkeys(MCP_CALLS, expected)


def test_notes_are_found_again_when_a_vault_gone_missing_is_back(
        tmp_path: Path, isolated_env: dict[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Every verb run while the folder is away (each checks for hand edits first) leaves
    the indexes as they were: seeing every note gone is the vault missing, not the notes
    deleted, so recall and resolve find them as soon as the folder is back."""
    box = VaultBox(tmp_path).init()
    assert _run(box, str(box.vault), ("capture", "Grace Hopper", "--kind", "person", "--body",
                                      "Wrote the first compiler."), b"", capsys,
                monkeypatch).code == 0
    box.vault.rename(tmp_path / "unmounted")
    for args, stdin in VAULT_VERBS:
        _run(box, str(box.vault), args, stdin, capsys, monkeypatch)
    (tmp_path / "unmounted").rename(box.vault)
    found = _run(box, str(box.vault), ("recall", "compiler", "--json"), b"", capsys, monkeypatch)
    assert [h["path"] for h in json.loads(found.out)["primary"]] == [
        "resources/people/grace-hopper.md"]
    named = _run(box, str(box.vault), ("resolve", "grace hopper", "--json"), b"", capsys,
                 monkeypatch)
    assert json.loads(named.out)["slug"] == "grace-hopper"


def test_a_mount_point_left_empty_drops_nothing_from_the_indexes(
        tmp_path: Path, isolated_env: dict[str, str],
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The folder is there but empty (a drive not mounted on its mount point): the check
    for hand edits keeps every note; a note really deleted is still dropped."""
    from echo_core.ops.freshness import freshen
    from echo_core.ops.recall import recall

    box = VaultBox(tmp_path).init()
    for title in ("Grace Hopper", "Ada Lovelace"):
        assert _run(box, str(box.vault), ("capture", title, "--kind", "person", "--body",
                                          "compiler pioneer"), b"", capsys, monkeypatch).code == 0
    box.vault.rename(tmp_path / "drive")
    box.vault.mkdir()
    assert freshen(box.ctx(), budget=None) is None
    box.vault.rmdir()
    (tmp_path / "drive").rename(box.vault)
    ctx = box.ctx()
    assert {h.path for h in recall(ctx, "compiler pioneer").data.primary} == {
        "resources/people/grace-hopper.md", "resources/people/ada-lovelace.md"}
    (box.vault / "resources/people/ada-lovelace.md").unlink()
    changes = freshen(box.ctx(), budget=None)
    assert changes is not None and changes.gone == ("resources/people/ada-lovelace.md",)
