"""The import rule of DESIGN §1: the core imports no plugin; no plugin imports another."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _plugin_names() -> list[str]:
    return sorted(p.name for p in (REPO / "plugins").iterdir() if (p / "__init__.py").exists())


def test_core_imports_no_plugin() -> None:
    offenders = [
        f"{path.relative_to(REPO)} imports {mod}"
        for path in (REPO / "echo_core").rglob("*.py")
        for mod in _imported_modules(path)
        if mod == "plugins" or mod.startswith("plugins.")
    ]
    assert offenders == []


def test_no_plugin_imports_another_plugin() -> None:
    offenders = []
    for name in _plugin_names():
        for path in (REPO / "plugins" / name).rglob("*.py"):
            for mod in _imported_modules(path):
                parts = mod.split(".")
                if parts[0] == "plugins" and len(parts) > 1 and parts[1] != name:
                    offenders.append(f"{path.relative_to(REPO)} imports {mod}")
    assert offenders == []


def test_plugins_is_a_namespace_package() -> None:
    assert not (REPO / "plugins" / "__init__.py").exists()


def test_every_plugin_folder_is_an_entry_point() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text("utf-8"))
    entry_points = project["project"]["entry-points"]["echo_memory"]
    assert {name: f"plugins.{name}" for name in _plugin_names()} == entry_points


def test_no_source_file_over_500_lines() -> None:
    long_files = [
        f"{path.relative_to(REPO)}: {n}"
        for folder in ("echo_core", "plugins", "bench")
        for path in (REPO / folder).rglob("*.py")
        if (n := len(path.read_text("utf-8").splitlines())) > 500
    ]
    assert long_files == []
