"""A vault URL naming a schema PostgreSQL reserves (``information_schema``, ``pg_*``), or
giving ``schema=`` twice, is a usage error (exit 2) when the URL is read: no vault is made
where ``pg_dump`` would not see it, and no schema is picked silently."""

from __future__ import annotations

import pytest

from echo_core.errors import EchoError, ExitCode
from plugins.storage_postgres.pg_url import check_schema, parse_vault_url
from tests.conftest import run_cli

# port 1: nothing listens there, so a URL that got past parsing would fail with 69, not 2
BASE = "postgresql://ada:s3cretpw@127.0.0.1:1/mem?connect_timeout=1"


@pytest.mark.parametrize("name", ["information_schema", "pg_vault", "pg_catalog", "pg_"])
def test_reserved_schema_names_are_usage_errors_naming_the_rule(name: str) -> None:
    with pytest.raises(EchoError) as info:
        parse_vault_url(f"{BASE}&schema={name}")
    assert info.value.code == ExitCode.USAGE
    assert "reserved by PostgreSQL" in info.value.message and "pg_" in info.value.message
    with pytest.raises(EchoError):
        parse_vault_url("postgresql://h/db", {"schema": name})


def test_names_merely_holding_pg_or_information_are_accepted() -> None:
    for name in ("my_pg_vault", "information", "pgvault", "echo_memory"):
        assert check_schema(name) == name


def test_a_repeated_schema_option_is_a_usage_error_naming_both() -> None:
    with pytest.raises(EchoError) as info:
        parse_vault_url(f"{BASE}&schema=ok1&schema=ok2")
    assert info.value.code == ExitCode.USAGE
    assert "'ok1'" in info.value.message and "'ok2'" in info.value.message
    assert "give the schema once" in info.value.message
    assert "s3cretpw" not in info.value.message


@pytest.mark.parametrize(("query", "needle"), [
    ("schema=information_schema", "reserved by PostgreSQL"),
    ("schema=pg_vault", "reserved by PostgreSQL"),
    ("schema=ok1&schema=ok2", "give the schema once"),
])
def test_init_refuses_such_urls_with_exit_2_before_connecting(
        isolated_env: dict[str, str], query: str, needle: str) -> None:
    out = run_cli(["init", "--vault", f"{BASE}&{query}"], env=isolated_env)
    assert out.returncode == 2, out.stderr
    assert needle in out.stderr
