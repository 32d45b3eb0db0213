"""``echo_health`` with ``deep: true`` (the MCP face of ``doctor``) runs lint after the
readiness checks: a ``lint`` check line, the count of every check and each finding; without
``deep`` no lint runs. Lint findings warn, they do not fail readiness."""

from __future__ import annotations

from pathlib import Path

import pytest

from echo_core.ops.lint.registry import CHECK_NAMES
from tests.lint_kit import PLANTED, box_like
from tests.mcp_kit import call, make_server, with_client


def _health(root: Path, tmp_path_factory: pytest.TempPathFactory, name: str,
            **arguments: object) -> tuple[bool, dict[str, object], str]:
    box = box_like(name, root, tmp_path_factory)
    server = make_server(box)
    try:
        result: tuple[bool, dict[str, object], str] = with_client(
            server, lambda c: call(c, "echo_health", **arguments))
        return result
    finally:
        server.runner.close()


def test_deep_health_returns_the_lint_findings(tmp_path: Path,
                                               tmp_path_factory: pytest.TempPathFactory) -> None:
    err, data, text = _health(tmp_path, tmp_path_factory, "planted", deep=True)
    assert not err and data["ok"] is True  # findings warn; readiness passed
    lint = data["lint"]
    assert isinstance(lint, dict)
    assert lint["counts"] == {name: 1 for name in CHECK_NAMES}
    assert {(f["check"], f["path"]) for f in lint["findings"]} == set(PLANTED.items())
    line = [c for c in data["checks"] if c["name"] == "lint"]  # type: ignore[attr-defined]
    assert len(line) == 1 and line[0]["status"] == "warn"
    assert "echo-memory lint --fix --apply" in line[0]["fix"]
    assert "broken-wikilink: resources/people/ada-lovelace.md" in text
    assert "not available yet" not in text


def test_deep_health_on_a_clean_vault_says_ok(tmp_path: Path,
                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    err, data, _ = _health(tmp_path, tmp_path_factory, "clean", deep=True)
    lint = data["lint"]
    assert not err and isinstance(lint, dict) and lint["findings"] == []
    line = [c for c in data["checks"] if c["name"] == "lint"]  # type: ignore[attr-defined]
    assert line[0]["status"] == "ok"


def test_plain_health_runs_no_lint(tmp_path: Path,
                                   tmp_path_factory: pytest.TempPathFactory) -> None:
    err, data, _ = _health(tmp_path, tmp_path_factory, "planted")
    assert not err and "lint" not in data
    assert all(c["name"] != "lint" for c in data["checks"])  # type: ignore[attr-defined]
