"""A session-end bundle whose scope ``scope set`` would refuse is refused before any
write: apply wrote the session log, the agent-log line and the reflections, then failed
at the scope step with exit 2 "invalid bundle" (the heading check ran only there). And
``scope set`` refuses a heading made through a lone CR or a setext underline too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.scope import set_scope
from echo_core.ops.session_end import read_bundle, session_end
from tests.capture_kit import VaultBox


@pytest.mark.parametrize("scope", ["ok\n## Oops", "done\r## Fake heading", "line one\n---\nx",
                                   "title\n===", ""])
def test_a_bundle_with_a_scope_scope_set_refuses_writes_nothing(tmp_path: Path,
                                                                 scope: str) -> None:
    box = VaultBox(tmp_path).init()
    before = box.tree_digest()
    raw = json.dumps({"slug": "s", "log_body": "## Goal\nx", "scope": scope,
                      "reflect": [{"title": "Alpha thing", "kind": "concept", "body": "a",
                                   "confidence": 0.9}]})
    with pytest.raises(EchoError) as refused:
        session_end(box.ctx(), read_bundle(raw), apply=True)
    assert refused.value.code == ExitCode.USAGE and "scope" in refused.value.message
    assert box.tree_digest() == before


@pytest.mark.parametrize("scope", ["done\r## Fake heading", "line one\n---\nx", "a\n  ==="])
def test_scope_set_refuses_a_heading_by_cr_or_underline(tmp_path: Path, scope: str) -> None:
    box = VaultBox(tmp_path).init()
    with pytest.raises(EchoError) as refused:
        set_scope(box.ctx(), scope)
    assert refused.value.code == ExitCode.USAGE and "heading" in refused.value.message


def test_a_rule_line_after_a_blank_line_is_not_a_heading(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    assert set_scope(box.ctx(), "first part\n\n---\n\nsecond part").ok
