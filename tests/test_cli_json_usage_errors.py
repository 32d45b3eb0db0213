"""Under ``--json`` every usage error is the JSON error object, click's own included.

An agent that calls the CLI with ``--json`` parses stdout; an out-of-range ``--limit``,
an unknown option or a missing argument used to print click's plain usage text on stderr
and nothing on stdout. Without ``--json`` click's usage text stays as it was.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli


@pytest.mark.parametrize(("args", "said", "page"), [
    (["recall", "x", "--limit", "99"], "99 is not in the range", "echo-memory recall --help"),
    (["recall", "x", "--bogus"], "No such option '--bogus'", "echo-memory recall --help"),
    (["capture"], "Missing argument 'TITLE'", "echo-memory capture --help"),
    (["scope", "show", "--bogus"], "No such option", "echo-memory scope show --help"),
    (["nosuchverb"], "No such command 'nosuchverb'", "echo-memory --help"),
])
def test_a_usage_error_click_finds_is_json_on_stdout_under_json(
        isolated_env: dict[str, str], vault_dir: Path, args: list[str], said: str,
        page: str) -> None:
    run_cli(["init", "--vault", str(vault_dir)], env=isolated_env)
    env = {**isolated_env, "ECHO_VAULT": str(vault_dir)}
    out = run_cli([*args, "--json"], env=env)
    assert out.returncode == 2, out.stderr
    error = json.loads(out.stdout)
    assert error["ok"] is False and error["error"]["code"] == "usage"
    assert error["error"]["exit"] == 2
    assert said in error["error"]["message"] and page in error["error"]["message"]
    plain = run_cli(args, env=env)
    assert plain.returncode == 2 and not plain.stdout
    assert said in plain.stderr and "Usage: echo-memory" in plain.stderr
