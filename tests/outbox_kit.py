"""What the outbox tests share: a pinned environment and a context on a vault under
``tmp_path``. A test module takes the ``env`` fixture with ``from tests.outbox_kit import
make_ctx, outbox_env``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from echo_core.context import EchoContext, create_context


@pytest.fixture(name="env")
def outbox_env(tmp_path: Path) -> dict[str, str]:
    """Fixture ``env``: home and config under ``tmp_path``, time pinned to 2026-03-01."""
    return {"HOME": str(tmp_path / "home"), "ECHO_CONFIG": str(tmp_path / "none.toml"),
            "ECHO_TODAY": "2026-03-01", "ECHO_NOW": "2026-03-01T10:00:00",
            "PATH": os.environ.get("PATH", "")}


def make_ctx(tmp_path: Path, env: dict[str, str]) -> EchoContext:
    """A context on the vault ``tmp_path/vault`` with its state in ``tmp_path/state``."""
    return create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                          env=env)


def make_obsidian_ctx(tmp_path: Path, env: dict[str, str], base_url: str,
                      key: str) -> EchoContext:
    """A context on the fake Obsidian Local REST API at ``base_url`` (``http://...``) with
    the API key ``key``, short timeouts, and its state in ``tmp_path/state``."""
    config = tmp_path / "obsidian.toml"
    config.write_text(f"[backends.obsidian]\nkey = \"{key}\"\nlock_settle = 0.02\n"
                      "timeout = 2.0\n", encoding="utf-8")
    return create_context(vault=base_url.replace("http://", "obsidian+http://"),
                          state_dir=str(tmp_path / "state"),
                          env={**env, "ECHO_CONFIG": str(config), "OBSIDIAN_API_KEY": key})
