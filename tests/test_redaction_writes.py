"""Redaction on the write paths (SPEC §2.1): capture (CLI, MCP, in process) and the
PreCompact checkpoint put markers on disk, never the secrets of ``tests/secret_kit.py``,
and nothing between ``<private>`` tags; ``--no-redact`` writes as given and is logged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.context import create_context
from echo_core.errors import EchoError
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault
from echo_core.ops.outbox import flush
from echo_core.ops.redaction_overrides import OVERRIDES_FILE
from echo_core.plugins import create_host
from plugins.hooks_claude.checkpoint import write_checkpoint
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.hook_kit import hook_env, payload, run_hook, work_tools, write_transcript
from tests.mcp_kit import call, make_server, with_client
from tests.secret_kit import LOOKALIKES, SECRETS
from tests.test_outbox import SwitchablePlugin, SwitchableStorage

#: Every row but the unterminated key block (it drops the rest of a text: tested alone).
CLOSED = tuple(row for row in SECRETS if not row.text.startswith("truncated:"))
PRIVATE_WORDS = ("my-diary-entry", "salary-figure-77")


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path / "box").init()


def _everything(root: Path) -> str:
    """The text of every file under ``root`` (vault and state: notes, history, indexes,
    logs), undecodable bytes replaced."""
    return "\n".join(p.read_bytes().decode("utf-8", "replace")
                     for p in sorted(root.rglob("*")) if p.is_file())


def _assert_no_secret(root: Path) -> None:
    disk = _everything(root)
    for row in SECRETS:
        assert row.secret not in disk, f"{row.rule} leaked: {row.secret}"
    for word in PRIVATE_WORDS:
        assert word not in disk, f"private text leaked: {word}"


def test_capture_writes_the_markers_never_the_secrets(box: VaultBox) -> None:
    body = "\n".join([*LOOKALIKES, *(row.text for row in CLOSED),
                      f"<private>{PRIVATE_WORDS[0]}\n{PRIVATE_WORDS[1]}</private>"])
    env = box.capture("Deployment credentials", kind="reference", body=body)
    assert env.ok, env
    text = box.read(env.data.path)
    for row in CLOSED:
        assert row.marker in text, row.rule
    for look in LOOKALIKES:
        assert look in text, look
    assert set(env.data.redacted) == {"private", *(row.rule for row in CLOSED)}
    assert any("redacted before writing" in w for w in env.warnings)
    _assert_no_secret(box.root)


def test_an_unterminated_private_key_block_drops_the_rest_of_the_body(box: VaultBox) -> None:
    row = next(row for row in SECRETS if row.text.startswith("truncated:"))
    env = box.capture("Server key", kind="reference", body=row.text)
    assert env.data.redacted == ("pem-private-key",)
    assert "truncated:\n[REDACTED:pem-private-key]" in box.read(env.data.path)
    _assert_no_secret(box.root)


def test_title_aliases_sources_and_tags_are_redacted_too(box: VaultBox) -> None:
    github, url, stripe = SECRETS[5], SECRETS[23], SECRETS[11]
    env = box.capture(f"Bot token {github.secret}", kind="reference",
                      aliases=(f"alias {stripe.secret}",), sources=(url.text.split()[-1],),
                      tags=("ops",))
    assert env.ok, env
    text = box.read(env.data.path)
    assert github.marker in text and url.marker in text and stripe.marker in text
    assert "https://deploy:[REDACTED:url-password]@git.example.org/repo.git" in text
    assert env.data.redacted == ("github-token", "stripe-key", "url-password")
    _assert_no_secret(box.root)


def test_an_inbox_capture_is_redacted(box: VaultBox) -> None:
    env = box.capture(f"rotate {SECRETS[0].secret}", body="<private>salary-figure-77</private>")
    assert env.ok and env.data.redacted == ("private", "openai-key"), env
    assert "rotate [REDACTED:openai-key]" in box.read(env.data.path)
    _assert_no_secret(box.root)


def test_a_title_that_was_only_private_is_refused_and_nothing_is_written(box: VaultBox) -> None:
    before = box.tree_digest()
    with pytest.raises(EchoError) as error:
        box.capture("<private>my-diary-entry</private>", kind="reference", body="x")
    assert error.value.code == 2 and "title" in str(error.value)
    assert box.tree_digest() == before


def test_a_dry_run_reports_the_redaction_and_writes_nothing(box: VaultBox) -> None:
    before = box.tree_digest()
    env = box.capture("Keys", kind="reference", body=SECRETS[0].text, dry_run=True)
    assert env.data.redacted == ("openai-key",) and env.data.changed is False
    assert box.tree_digest() == before
    assert not (box.state / OVERRIDES_FILE).exists()


def test_the_same_secret_captured_again_adds_nothing(box: VaultBox) -> None:
    """The marker is deterministic: the update's dated bullet (the second capture) is
    found again by the third, which writes nothing."""
    box.capture("Keys", kind="reference", body="first")
    first = box.capture("Keys", kind="reference", body=SECRETS[0].text)
    assert first.data.changed is True
    digest = box.tree_digest()
    again = box.capture("Keys", kind="reference", body=SECRETS[0].text)
    assert first.data.path == again.data.path and again.data.changed is False
    assert box.tree_digest() == digest


def _cli(box: VaultBox, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
         *args: str) -> Any:
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    return run_main(["capture", "--vault", str(box.vault), "--state-dir", str(box.state),
                     *args], capsys, monkeypatch)


def _overrides(box: VaultBox) -> list[dict[str, Any]]:
    found = list(box.state.rglob(OVERRIDES_FILE))
    if not found:
        return []
    assert len(found) == 1, found
    return [json.loads(line) for line in found[0].read_text(encoding="utf-8").splitlines()]


def test_the_cli_warns_with_the_rule_names(box: VaultBox, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    done = _cli(box, capsys, monkeypatch, "Keys", "-k", "reference", "-b", SECRETS[0].text)
    assert done.code == 0, done.err
    assert "warning: redacted before writing: openai-key" in done.err
    assert SECRETS[0].secret not in done.out + done.err
    assert _overrides(box) == []


def test_no_redact_writes_as_given_and_logs_the_override_without_the_secret(
        box: VaultBox, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    row = SECRETS[24]  # DB_PASSWORD=...
    done = _cli(box, capsys, monkeypatch, "Db", "-k", "reference", "-b", row.text,
                "--no-redact", "--json")
    assert done.code == 0, done.err
    result = json.loads(done.out)
    assert result["redacted"] == [] and "warning" not in done.err
    assert row.text in box.read(result["path"])
    log = _overrides(box)
    assert log == [{"ts": "2026-03-01T12:00:00", "verb": "capture", "path": result["path"],
                    "action": "created", "rules": ["env-secret"]}]
    state_text = "\n".join(p.read_text("utf-8", "replace") for p in box.state.rglob("*.ndjson"))
    assert row.secret not in state_text
    # a dry run with --no-redact writes nothing, so logs nothing
    done = _cli(box, capsys, monkeypatch, "Db2", "-k", "reference", "-b", row.text,
                "--no-redact", "--dry-run")
    assert done.code == 0 and len(_overrides(box)) == 1


def test_over_mcp_capture_redacts_and_cannot_be_told_not_to(box: VaultBox) -> None:
    server = make_server(box)

    async def body(client: Any) -> None:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert "redact" not in tools["echo_capture"].input_schema["properties"]
        is_error, data, _ = await call(client, "echo_capture", title="Keys", kind="reference",
                                       body=SECRETS[3].text)
        assert not is_error and data["redacted"] == ["aws-access-key-id"]
        is_error, data, text = await call(client, "echo_capture", title="Keys 2",
                                          kind="reference", body=SECRETS[3].text, redact=False)
        assert is_error and "redact" in text

    try:
        with_client(server, body)
    finally:
        server.runner.close()
    _assert_no_secret(box.root)


# --- PreCompact checkpoints ------------------------------------------------------------


def _secret_transcript(tmp_path: Path, project: Path, session: str) -> Path:
    openai = SECRETS[0].secret
    # the key starts 181 characters in: a prompt cut to 200 characters before redaction
    # would keep its first 18 characters, a fragment no rule recognises any more
    long_prompt = "a" * 180 + " " + openai + " and then some more words to make it long"
    prompts = [f"deploy with {SECRETS[5].text} please", long_prompt,
               "notes <private>my-diary-entry</private> end",
               f"connect {SECRETS[22].text}", "<private>salary-figure-77 unclosed"]
    return write_transcript(tmp_path / f"{session}.jsonl", session, project, prompts=prompts,
                            tools=work_tools(project))


def test_a_checkpoint_keeps_no_secret_and_no_fragment_of_one(box: VaultBox,
                                                             tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    transcript = _secret_transcript(tmp_path, project, "c0ffee00-1")
    fields = {"trigger": "manual", "custom_instructions": f"keep {SECRETS[13].text}"}
    path = write_checkpoint(payload("PreCompact", "c0ffee00-1", transcript, project, **fields),
                            box.ctx)
    assert path is not None
    text = box.read(path)
    assert "[REDACTED:github-token]" in text and "[REDACTED:openai-k" in text  # cut…
    assert "[REDACTED:url-password]" in text and "[REDACTED:google-api-key]" in text
    fragment = SECRETS[0].secret[8:16]
    assert fragment not in text
    _assert_no_secret(box.root)


def test_the_pre_compact_hook_process_writes_no_secret(box: VaultBox, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    transcript = _secret_transcript(tmp_path, project, "beef0000-2")
    proc = run_hook("PreCompact", payload("PreCompact", "beef0000-2", transcript, project,
                                          trigger="auto", custom_instructions=""),
                    hook_env(box), project)
    assert proc.returncode == 0 and proc.stdout == "", proc.stderr
    notes = list((box.vault / "_agent/memory/working").glob("*checkpoint-beef0000*"))
    assert len(notes) == 1 and "[REDACTED:github-token]" in notes[0].read_text("utf-8")
    _assert_no_secret(box.root)


# --- the outbox ------------------------------------------------------------------------


def test_a_capture_queued_while_the_vault_is_down_is_queued_redacted(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(tmp_path / "none.toml"),
           "ECHO_TODAY": "2026-03-01"}
    host = create_host(env=env, extra=[("switch_storage", SwitchablePlugin())])
    ctx = create_context(vault=f"switch://{tmp_path / 'vault'}",
                         state_dir=str(tmp_path / "state"), env=env, host=host)
    SwitchableStorage.down = False
    init_vault(ctx)
    row = SECRETS[9]  # slack token
    SwitchableStorage.down = True
    try:
        queued = capture(ctx, CaptureRequest(title="Slack bot", kind="reference", body=row.text))
        assert queued.action == "queued"
        assert row.secret not in _everything(tmp_path / "state")
    finally:
        SwitchableStorage.down = False
    assert flush(ctx).data.synced == 1
    note = (tmp_path / "vault/resources/references/slack-bot.md").read_text("utf-8")
    assert row.marker in note
    assert row.secret not in _everything(tmp_path)
