"""``echo_core``'s public names resolve, and importing it stays cheap (PEP 562 lazy
exports: the context, the operations and the storage base load on first use)."""

from __future__ import annotations

import subprocess
import sys

import echo_core


def test_every_public_name_resolves() -> None:
    for name in echo_core.__all__:
        assert getattr(echo_core, name) is not None, name
    assert set(echo_core.__all__) <= set(dir(echo_core))


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        echo_core.no_such_name  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as exc:
        assert "no_such_name" in str(exc)
    else:
        raise AssertionError("echo_core.no_such_name did not raise AttributeError")


def test_import_echo_core_loads_no_context_operation_or_storage_module() -> None:
    code = ("import sys, echo_core; print(sorted(m for m in sys.modules if m in "
            "{'echo_core.context', 'echo_core.ops.recall', 'echo_core.ops.capture', "
            "'echo_core.storage_base', 'echo_core.protocols'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_no_exported_name_is_also_a_module_of_the_package() -> None:
    """``from echo_core import x`` must give the exported ``x`` whatever was imported
    before: a submodule ``echo_core/x.py``, once imported, becomes the package attribute
    ``x`` and shadows the lazy export (``changes_made`` was briefly both)."""
    from pathlib import Path

    package = Path(echo_core.__file__).parent
    modules = {p.stem for p in package.glob("*.py")} | {
        p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    exported = set(echo_core.__all__) - set(echo_core._MODULES)
    assert exported & modules == set()
