"""session-end on the command line: a bundle missing a required key, or holding one a
bundle may not, is exit 2 naming the key (a JSON error with --json), never a traceback,
and nothing is written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.capture_kit import VaultBox
from tests.conftest import run_cli

BUNDLE_KEYS = "agent_log_line, log_body, reflect, scope, slug"


def _session_end(box: VaultBox, env: dict[str, str], bundle: object,
                 *flags: str) -> tuple[int, str, str]:
    out = run_cli(["session-end", "-", "--apply", *flags, "--vault", str(box.vault)],
                  env=env, stdin=json.dumps(bundle).encode())
    return out.returncode, out.stdout, out.stderr


@pytest.mark.parametrize("bundle,missing", [
    ({"slug": "recall-index"}, "log_body: required"),
    ({"log_body": "## Goal\nShip it"}, "slug: required"),
    ({}, "slug: required; log_body: required"),
])
def test_a_bundle_missing_a_required_key_is_exit_2_naming_it(
        isolated_env: dict[str, str], tmp_path: Path, bundle: object, missing: str) -> None:
    box = VaultBox(tmp_path / "b").init()
    before = box.tree_digest()
    code, out, err = _session_end(box, isolated_env, bundle)
    assert code == 2, err
    assert missing in err and "Traceback" not in err
    code, out, err = _session_end(box, isolated_env, bundle, "--json")
    assert code == 2 and "Traceback" not in err
    error = json.loads(out)
    assert error["ok"] is False and error["error"]["exit"] == 2
    assert missing in error["error"]["message"]
    assert box.tree_digest() == before


def test_an_unknown_bundle_key_lists_the_keys_a_bundle_may_hold(
        isolated_env: dict[str, str], tmp_path: Path) -> None:
    box = VaultBox(tmp_path / "b").init()
    before = box.tree_digest()
    bundle = {"slug": "recall-index", "log_body": "x", "colour": 1}
    code, out, err = _session_end(box, isolated_env, bundle, "--json")
    assert code == 2, err
    message = json.loads(out)["error"]["message"]
    assert f"colour: unknown parameter (allowed: {BUNDLE_KEYS})" in message
    assert "apply" not in message
    assert box.tree_digest() == before
