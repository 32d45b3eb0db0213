"""A PostgreSQL vault URL's password is never shown: ``doctor``, ``init`` and the "not an
echo-memory vault" error (with its ``init --vault`` advice) show ``***`` in its place
(``echo_core.vault_seen.shown_vault``), text and JSON alike."""

from __future__ import annotations

import json
from urllib.parse import urlsplit, urlunsplit

import pytest

from echo_core.vault_seen import init_advice, shown_vault
from tests.conftest import run_cli
from tests.postgres_kit import pg_schema_url, postgres_server

__all__ = ["pg_schema_url", "postgres_server"]  # fixtures used by this module

SECRET = "s3cretpw"


def with_password(url: str) -> tuple[str, str]:
    """``url`` holding a password in its userinfo, and that password (the test server
    trusts every local connection, so an invented one is sent and ignored)."""
    parts = urlsplit(url)
    if parts.password:
        return url, parts.password
    host = parts.netloc.rpartition("@")[2]
    netloc = f"{parts.username or 'postgres'}:{SECRET}@{host}"
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), SECRET


@pytest.fixture
def secret_url(pg_schema_url: str) -> tuple[str, str]:
    return with_password(pg_schema_url)


@pytest.mark.parametrize(("given", "shown"), [
    ("postgresql://postgres:s3cretpw@db:5432/mem?schema=a",
     "postgresql://postgres:***@db:5432/mem?schema=a"),
    ("postgres://ada:p%40ss@db/mem", "postgres://ada:***@db/mem"),
    ("postgresql://db/mem?sslmode=require&password=s3cretpw",
     "postgresql://db/mem?sslmode=require&password=***"),
    ("postgresql://ada@db/mem", "postgresql://ada@db/mem"),
    ("/home/ada/vault", "/home/ada/vault"),
    ("/tmp/a:b@c/vault", "/tmp/a:b@c/vault"),
])
def test_a_vault_setting_is_shown_without_its_password(given: str, shown: str) -> None:
    assert shown_vault(given) == shown


def test_init_advice_shows_the_hidden_form_and_asks_for_the_real_password() -> None:
    advice = init_advice("postgresql://ada:s3cretpw@db/mem")
    assert SECRET not in advice and "--vault postgresql://ada:***@db/mem`" in advice
    assert "real password" in advice
    assert init_advice("/home/ada/vault") == "`echo-memory init --vault /home/ada/vault`"


def test_not_a_vault_error_hides_the_password(secret_url: tuple[str, str],
                                             isolated_env: dict[str, str]) -> None:
    url, secret = secret_url
    out = run_cli(["get", "notes/x.md", "--vault", url], env=isolated_env)
    assert out.returncode == 78, out.stderr
    assert "is not an echo-memory vault" in out.stderr
    assert secret not in out.stdout + out.stderr
    assert f"init --vault {shown_vault(url)}` (with the real password" in out.stderr


def test_init_message_hides_the_password(secret_url: tuple[str, str],
                                         isolated_env: dict[str, str]) -> None:
    url, secret = secret_url
    made = run_cli(["init", "--vault", url], env=isolated_env)
    assert made.returncode == 0, made.stderr
    assert f"initialised vault at {shown_vault(url)}" in made.stdout
    again = run_cli(["init", "--vault", url, "--json"], env=isolated_env)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["vault"] == shown_vault(url)
    assert secret not in made.stdout + made.stderr + again.stdout + again.stderr


def test_doctor_shows_the_vault_setting_without_its_password(
        secret_url: tuple[str, str], isolated_env: dict[str, str]) -> None:
    url, secret = secret_url
    assert run_cli(["init", "--vault", url], env=isolated_env).returncode == 0
    text = run_cli(["doctor", "--vault", url], env=isolated_env)
    assert f"vault-setting: {shown_vault(url)} (from flag)" in text.stdout
    as_json = run_cli(["doctor", "--vault", url, "--json"], env=isolated_env)
    checks = {c["name"]: c for c in json.loads(as_json.stdout)["checks"]}
    assert checks["vault-setting"]["detail"] == f"{shown_vault(url)} (from flag)"
    assert secret not in text.stdout + text.stderr + as_json.stdout + as_json.stderr
