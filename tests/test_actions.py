"""Envelope actions are ``Action`` members (a ``StrEnum``): the core builds envelopes with
members and compares members, never string literals, and the JSON stays plain strings."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import attrs

from echo_core.actions import Action
from echo_core.models import Envelope, to_jsonable

ROOT = Path(__file__).resolve().parent.parent
#: Where envelopes are built and actions compared by the core (and the plugins that
#: only map actions: the MCP results, the outbox queue, the Claude Code hooks).
SCANNED = [*sorted((ROOT / "echo_core").rglob("*.py")),
           ROOT / "plugins/transport_mcp/results.py",
           *sorted((ROOT / "plugins/queue_outbox").rglob("*.py")),
           *sorted((ROOT / "plugins/hooks_claude").rglob("*.py"))]


@attrs.frozen
class Step:
    action: str


def test_to_dict_gives_plain_strings_for_actions() -> None:
    envelope = Envelope(True, Action.DRY_RUN_CREATE, "would create x", {"steps": [Step(Action.SCOPE)]})
    data = envelope.to_dict()
    assert type(data["action"]) is str and data["action"] == "dry-run:create"
    assert type(data["steps"][0]["action"]) is str
    assert json.dumps(data) == json.dumps({"ok": True, "action": "dry-run:create",
                                           "message": "would create x",
                                           "steps": [{"action": "scope"}]})
    assert type(to_jsonable(Action.QUEUED)) is str


def test_a_plain_string_action_still_works() -> None:
    """A third party's operation may report its own action."""
    assert Envelope(True, "summarised").to_dict() == {"ok": True, "action": "summarised",
                                                      "message": ""}
    assert Action.QUEUED == "queued" and f"{Action.QUEUED}" == "queued"


def _literal_lines(source: str) -> list[int]:
    """The line of each string literal used as an envelope's action or compared with an
    ``.action``."""
    tree = ast.parse(source)
    found: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Envelope":
            action = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "action"), None)
            found += [c for c in ast.walk(action) if isinstance(c, ast.Constant)] if action else []
        elif isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(isinstance(s, ast.Attribute) and s.attr == "action" for s in sides):
                found += [c for s in sides for c in ast.walk(s)
                          if isinstance(c, ast.Constant) and isinstance(c.value, str)]
    return sorted(getattr(c, "lineno", 0) for c in found)


def test_the_core_builds_and_compares_actions_with_members_only() -> None:
    literals = [f"{path.relative_to(ROOT)}:{line}" for path in SCANNED
                for line in _literal_lines(path.read_text(encoding="utf-8"))]
    assert not literals, f"string literals as actions (use echo_core.actions.Action): {literals}"


def test_the_scan_sees_literal_actions() -> None:
    probe = ('Envelope(True, "created")\nif env.action == "queued":\n    pass\n'
             'Envelope(True, Action.CREATED)\nif env.action in (Action.QUEUED,):\n    pass\n'
             'Envelope(False, "x" if a else Action.MISS)\n')
    assert _literal_lines(probe) == [1, 2, 7]
