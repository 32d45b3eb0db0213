"""What the example promises about itself: at most 80 lines of code, and nothing of
echo-memory imported but the public ``echo_core`` namespace."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import echo_transport_jsonl

SOURCE = Path(echo_transport_jsonl.__file__)
ALLOWED = {"echo_core", "click"} | set(sys.stdlib_module_names)


def code_lines(text: str) -> int:
    """Non-blank lines that are not comments (docstrings count)."""
    return sum(1 for line in text.splitlines()
               if line.strip() and not line.lstrip().startswith("#"))


def test_at_most_80_lines_of_code() -> None:
    assert code_lines(SOURCE.read_text("utf-8")) <= 80


def test_imports_only_echo_core_click_and_the_standard_library() -> None:
    tree = ast.parse(SOURCE.read_text("utf-8"))
    names = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
             for alias in node.names}
    names |= {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert {name.split(".")[0] for name in names} <= ALLOWED, names
    assert not {name for name in names if name.startswith("echo_core.")}, names
