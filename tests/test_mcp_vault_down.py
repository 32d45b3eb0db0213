"""The vault unreachable while the server runs: reads say "proceed without memory",
writes that cannot be queued say "nothing was written", queued writes are data."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from echo_core.hookspecs import hookimpl
from plugins.transport_mcp.health import health_report
from plugins.transport_mcp.server import EchoMcpServer
from tests.capture_kit import VaultBox
from tests.mcp_kit import ADA, box_env, call, make_server, seeded_box, with_client


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return seeded_box(tmp_path)


class FlakyStorage:
    """Wraps the folder storage; raises ``BackendUnavailable`` while ``down`` is set."""

    down = False

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.identity = inner.identity

    def __getattr__(self, name: str) -> Any:
        from echo_core.protocols import BackendUnavailable

        attr = getattr(self._inner, name)
        if callable(attr) and FlakyStorage.down:
            def failing(*args: Any, **kwargs: Any) -> Any:
                raise BackendUnavailable("connection refused (test)")
            return failing
        return attr


class FlakyPlugin:
    @hookimpl
    def register_storage(self, register: Any) -> None:
        from plugins.storage_fs.folder_storage import FolderStorage

        register("flaky", lambda url, options: FlakyStorage(FolderStorage(url.split("://", 1)[1])))


def flaky_server(box: VaultBox, **env: str) -> EchoMcpServer:
    return make_server(box, env=box_env(box, **env), extra=[("flaky", FlakyPlugin())],
                       vault=f"flaky://{box.vault}")


@pytest.fixture
def flaky(box: VaultBox) -> Iterator[EchoMcpServer]:
    built = flaky_server(box)
    FlakyStorage.down = True
    yield built
    FlakyStorage.down = False
    built.runner.close()


@pytest.fixture
def flaky_no_outbox(box: VaultBox) -> Iterator[EchoMcpServer]:
    built = flaky_server(box, ECHO_DISABLE_PLUGINS="queue_outbox")
    FlakyStorage.down = True
    yield built
    FlakyStorage.down = False
    built.runner.close()


@pytest.mark.parametrize("tool,arguments", [
    ("echo_recall", {"query": "engine"}), ("echo_get_note", {"path": ADA}),
    ("echo_load", {}), ("echo_resolve", {"mention": "ada"}),
])
def test_vault_down_on_a_read_says_proceed_without_memory(
        flaky: EchoMcpServer, tool: str, arguments: dict[str, Any]) -> None:
    err, data, text = with_client(flaky, lambda c: call(c, tool, **arguments))
    assert err and data["error"]["code"] == "unavailable"
    assert "proceed without memory" in text


@pytest.mark.parametrize("tool,arguments", [
    ("echo_capture", {"title": "Grace Hopper", "kind": "person"}),
    ("echo_append_note", {"path": ADA, "line": "x"}), ("echo_set_scope", {"scope": "s"}),
    ("echo_link", {"a": ADA, "b": "analytical-engine"}),
])
def test_vault_down_on_a_write_without_an_outbox_says_nothing_was_written(
        flaky_no_outbox: EchoMcpServer, box: VaultBox, tool: str,
        arguments: dict[str, Any]) -> None:
    before = box.tree_digest()
    err, data, text = with_client(flaky_no_outbox, lambda c: call(c, tool, **arguments))
    assert err and data["error"]["code"] == "unavailable"
    assert "nothing was written" in text
    assert box.tree_digest() == before


def test_vault_down_on_a_queueable_write_is_queued_as_data(flaky: EchoMcpServer,
                                                          box: VaultBox) -> None:
    assert "queue_outbox" in flaky.runner.context().host.plugin_names()
    before = box.tree_digest()
    err, data, _ = with_client(flaky, lambda c: call(c, "echo_capture", title="Grace Hopper",
                                                     kind="person"))
    assert not err and data["ok"] is True and data["action"] == "queued"
    assert box.tree_digest() == before
    report = health_report(flaky.runner.context())
    assert report["vault_reachable"] is False and report["outbox_depth"] == 1


def test_health_report_says_the_vault_is_unreachable(flaky_no_outbox: EchoMcpServer) -> None:
    report = health_report(flaky_no_outbox.runner.context())
    assert report == {**report, "ok": False, "vault_reachable": False, "outbox_depth": None}
