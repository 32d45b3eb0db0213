"""A vault backend that goes away part-way through a multi-step command: the exit-69
message says how many notes had been written before it did, not "nothing was written"
(CLI and MCP); a command that wrote nothing still says nothing was written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from echo_core.hookspecs import hookimpl
from echo_core.protocols import BackendUnavailable
from plugins.storage_fs.folder_storage import FolderStorage
from plugins.transport_mcp.results import unreachable_outcome
from tests.cli_inproc import vault_runner
from tests.mcp_kit import box_env, call, make_server, seeded_box, with_client

BUNDLE = {"slug": "outage", "log_body": "## Goal\nship it",
          "agent_log_line": "- shipped it", "scope": "next: the rest",
          "reflect": [{"title": "Operator prefers pytest", "kind": "semantic",
                       "body": "Use pytest.", "confidence": 0.9}]}


def _down_after(monkeypatch: pytest.MonkeyPatch, writes: int) -> None:
    """FolderStorage takes ``writes`` whole-note writes, then the backend is gone."""
    real_write, real_conditional = FolderStorage.write, FolderStorage.write_unless_changed
    left = [writes]

    def spend() -> None:
        if left[0] <= 0:
            raise BackendUnavailable("503 Service Unavailable (test)")
        left[0] -= 1

    def write(self: FolderStorage, path: str, text: str) -> None:
        spend()
        real_write(self, path, text)

    def conditional(self: FolderStorage, path: str, text: str, expected: str | None) -> bool:
        spend()
        return real_conditional(self, path, text, expected)

    monkeypatch.setattr(FolderStorage, "write", write)
    monkeypatch.setattr(FolderStorage, "write_unless_changed", conditional)


@pytest.fixture
def run(isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("ECHO_NOW", "2026-03-01T09:30:00")
    runner = vault_runner(tmp_path, capsys, monkeypatch)
    (tmp_path / "bundle.json").write_text(json.dumps(BUNDLE), "utf-8")
    runner.bundle = str(tmp_path / "bundle.json")
    return runner


def test_session_end_cut_short_says_how_many_notes_were_written(
        run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _down_after(monkeypatch, 2)
    done = run("session-end", run.bundle, "--apply")
    assert done.code == 69, done.err
    assert "2 notes had been written before that, the rest was not" in done.err, done.err
    assert "nothing was written" not in done.err


def test_a_command_that_wrote_nothing_still_says_so(run: Any,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    _down_after(monkeypatch, 0)
    done = run("session-end", run.bundle, "--apply")
    assert done.code == 69, done.err
    assert "nothing was written" in done.err and "had been written" not in done.err


def test_the_mcp_answer_names_the_notes_written_before_the_outage() -> None:
    cut = unreachable_outcome("503", write=True, changed=3)
    text = json.dumps(cut.result.model_dump(mode="json"))
    assert "had written 3 notes" in text and "nothing was written" not in text
    whole = json.dumps(unreachable_outcome("503", write=True).result.model_dump(mode="json"))
    assert "nothing was written" in whole


class CountdownStorage:
    """The folder storage, gone (``BackendUnavailable`` on every call) once ``left``
    writes have landed."""

    left = 0
    WRITES = frozenset({"write", "write_unless_changed", "append_line", "delete"})

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.identity = inner.identity

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            if CountdownStorage.left <= 0:
                raise BackendUnavailable("connection refused (test)")
            if name in CountdownStorage.WRITES:
                CountdownStorage.left -= 1
            return attr(*args, **kwargs)
        return counted


class CountdownPlugin:
    @hookimpl
    def register_storage(self, register: Any) -> None:
        register("countdown", lambda url, options: CountdownStorage(
            FolderStorage(url.split("://", 1)[1])))


def test_an_mcp_session_end_cut_short_names_the_notes_written(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    server = make_server(box, env=box_env(box, ECHO_DISABLE_PLUGINS="queue_outbox"),
                         extra=[("countdown", CountdownPlugin())],
                         vault=f"countdown://{box.vault}")
    CountdownStorage.left = 2
    try:
        err, data, text = with_client(server, lambda c: call(
            c, "echo_log_session", slug="outage", log_body="## Goal\nship it",
            agent_log_line="- shipped it", scope="next", apply=True))
    finally:
        CountdownStorage.left = 0
        server.runner.close()
    assert err and data["error"]["code"] == "unavailable", text
    assert "had written 2 notes" in text and "nothing was written" not in text, text
