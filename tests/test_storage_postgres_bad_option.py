"""A connection option libpq refuses in a PostgreSQL vault URL (``?sslmode=bogus``, an
unknown option, a bad value of a numeric option) is a setup error (exit 78), like a wrong
database or user name: no retry can help, so a capture is not queued "for when the
server is back" and doctor does not say to check that the server is running."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from echo_core.context import create_context
from echo_core.errors import EchoError, ExitCode
from echo_core.ops.init import init_vault
from echo_core.ops.outbox import flush
from plugins.storage_postgres import open_postgres_storage
from tests.conftest import CLI
from tests.postgres_kit import close_storages, pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module


@pytest.mark.parametrize("option", ["sslmode=bogus", "no_such_option=1", "keepalives=x",
                                    "target_session_attrs=nope", "gssencmode=maybe"])
def test_an_option_libpq_refuses_is_not_configured(pg_schema_url: str, option: str) -> None:
    storage = open_postgres_storage(f"{pg_schema_url}&{option}", {"connect_timeout": 2})
    try:
        with pytest.raises(EchoError) as caught:
            storage.ping()
    finally:
        storage.close()
    assert caught.value.code == ExitCode.NOT_CONFIGURED, caught.value
    assert option.split("=")[0] in str(caught.value)
    assert "vault URL" in str(caught.value)


def test_a_capture_with_a_bad_option_exits_78_and_queues_nothing(
    pg_schema_url: str, tmp_path: Path,
) -> None:
    home, state = tmp_path / "home", tmp_path / "state"
    ctx = create_context(vault=pg_schema_url, state_dir=str(state),
                         env={"HOME": str(home), "ECHO_TODAY": "2026-03-01"})
    init_vault(ctx)  # this machine has seen the vault: an outage would queue
    env = dict(os.environ, HOME=str(home), ECHO_STATE_DIR=str(state), ECHO_TODAY="2026-03-01",
               ECHO_VAULT=f"{pg_schema_url}&sslmode=bogus")
    done = subprocess.run([*CLI, "capture", "Typo Topic", "-k", "concept", "-b", "Body."],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == int(ExitCode.NOT_CONFIGURED), (done.stdout, done.stderr)
    assert "sslmode" in done.stderr and "queued" not in done.stdout + done.stderr
    doctor = subprocess.run([*CLI, "doctor", "--json"], capture_output=True, text=True,
                            env=env, timeout=60, check=False)
    vault = next(c for c in json.loads(doctor.stdout)["checks"] if c["name"] == "vault")
    assert vault["status"] == "fail" and "sslmode" in vault["detail"]
    assert "server is running" not in json.dumps(vault)
    outcome = flush(ctx).data  # the right URL: nothing was queued for it
    assert (outcome.synced, outcome.pending) == (0, 0)
    close_storages([ctx])
