"""Run ``echo-memory`` in this process (``plugins.transport_cli.app.main``), for tests that
make many CLI calls: stdin as bytes, the exit code, and stdout / stderr as text.

Not a test module (no ``test_`` prefix). Use with the ``isolated_env`` fixture, which
points config, data and state into ``tmp_path``.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from plugins.transport_cli.app import main


@attrs.frozen
class CliRun:
    """One finished CLI call."""

    code: int
    out: str
    err: str


def run_main(args: list[str], capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch, stdin: bytes = b"") -> CliRun:
    """Call ``main(args)`` with ``stdin`` and return its exit code and output."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
    capsys.readouterr()
    code: int = 0
    try:
        main(args)
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return CliRun(code, captured.out, captured.err)


def vault_runner(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                 monkeypatch: pytest.MonkeyPatch) -> Any:
    """``run(verb, *args)``: ``echo-memory verb --vault V --state-dir S *args`` in this
    process, on a vault in ``tmp_path`` that is initialised first; ``run.vault`` is its
    folder."""
    vault = tmp_path / "vault"
    base = ["--vault", str(vault), "--state-dir", str(tmp_path / "state")]

    def run(*args: str) -> CliRun:
        return run_main([*args[:1], *base, *args[1:]], capsys, monkeypatch)

    assert run("init").code == 0
    run.vault = vault  # type: ignore[attr-defined]
    return run
