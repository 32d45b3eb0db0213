"""Every hookspec is documented (docs/hooks.md is generated and must match)."""

from __future__ import annotations

import inspect
from pathlib import Path

from echo_core.hookdocs import hook_signature, hookspec_functions, render_hooks_markdown

DOCS = Path(__file__).resolve().parent.parent / "docs" / "hooks.md"


def test_docs_hooks_md_lists_every_hookspec_with_its_signature() -> None:
    text = DOCS.read_text("utf-8")
    missing = [name for name, f in hookspec_functions().items() if f"`{hook_signature(f)}`" not in text]
    assert missing == []


def test_docs_hooks_md_matches_the_hookspecs() -> None:
    assert DOCS.read_text("utf-8") == render_hooks_markdown(), (
        "docs/hooks.md is stale: run `python -m echo_core.hookdocs > docs/hooks.md`"
    )


def test_every_hookspec_has_a_contract_docstring() -> None:
    thin = [n for n, f in hookspec_functions().items() if len(inspect.cleandoc(f.__doc__ or "")) < 60]
    assert thin == []
