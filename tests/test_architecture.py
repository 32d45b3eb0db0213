"""The import rules of DESIGN §1: the core imports no plugin; no plugin imports another; a
plugin imports the core only through its public namespaces (``echo_core`` and
``echo_core.testing``); the core carries no transport's types (click, MCP, pydantic)."""

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


PUBLIC_CORE = {"echo_core", "echo_core.testing"}
TRANSPORT_PACKAGES = {"click", "mcp", "pydantic", "uvicorn", "starlette", "httpx", "httpx2"}


def _core_modules_imported(path: Path) -> set[str]:
    """The ``echo_core`` modules ``path`` imports (``from echo_core import x`` counts as
    ``echo_core``, whatever ``x`` is)."""
    tree = ast.parse(path.read_text("utf-8"), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "echo_core")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] == "echo_core":
                found.add(node.module)
    return found


def test_plugins_import_only_the_public_core() -> None:
    offenders = [
        f"{path.relative_to(REPO)} imports {mod}"
        for path in (REPO / "plugins").rglob("*.py")
        for mod in _core_modules_imported(path)
        if mod not in PUBLIC_CORE
    ]
    assert offenders == [], "import these names from echo_core instead:\n" + "\n".join(offenders)


def test_examples_import_only_the_public_core() -> None:
    paths = [p for p in (REPO / "examples").rglob("*.py") if ".venv" not in p.parts]
    offenders = [f"{path.relative_to(REPO)} imports {mod}" for path in paths
                 for mod in _core_modules_imported(path) if mod not in PUBLIC_CORE]
    assert offenders == []


def test_every_public_name_resolves() -> None:
    import echo_core

    for name in echo_core.__all__:
        assert getattr(echo_core, name) is not None, name


def test_the_core_carries_no_transport_types() -> None:
    """click lives in transport_cli, the MCP SDK and pydantic in transport_mcp; only the
    contract suite for ``register_commands`` (it tests click commands) may import click."""
    offenders = [
        f"{path.relative_to(REPO)} imports {mod}"
        for path in (REPO / "echo_core").rglob("*.py")
        if path.name != "commands_contract.py"
        for mod in _imported_modules(path)
        if mod.split(".")[0] in TRANSPORT_PACKAGES
    ]
    assert offenders == []
