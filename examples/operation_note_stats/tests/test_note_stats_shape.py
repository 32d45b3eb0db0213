"""The example imports nothing of echo-memory but the public ``echo_core`` namespace."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import echo_note_stats

ALLOWED = {"echo_core", "attrs"} | set(sys.stdlib_module_names)


def test_imports_only_echo_core_attrs_and_the_standard_library() -> None:
    tree = ast.parse(Path(echo_note_stats.__file__).read_text("utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert {name.split(".")[0] for name in names} <= ALLOWED, names
    assert not {name for name in names if name.startswith("echo_core.")}, names
