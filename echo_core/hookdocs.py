"""Render ``docs/hooks.md`` from ``echo_core.hookspecs`` (the docs cannot drift: a test
compares the file with this output). Run ``python -m echo_core.hookdocs > docs/hooks.md``."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from echo_core import hookspecs

KIND_TITLES = {
    "register": "Registration hooks (called once at start-up)",
    "on": "Event hooks (every implementation is called; results ignored)",
    "policy": "Policy hooks (firstresult: the first non-None answer wins)",
}


def hookspec_functions() -> dict[str, Callable[..., Any]]:
    """Every hookspec in declaration order, name -> function."""
    marker = f"{hookspecs.PROJECT}_spec"
    return {
        name: obj
        for name, obj in vars(hookspecs).items()
        if callable(obj) and hasattr(obj, marker)
    }


def hook_kind(name: str) -> str:
    """``register`` | ``on`` | ``policy``, from the hook's name."""
    if name.startswith("register_"):
        return "register"
    if name.startswith("on_"):
        return "on"
    return "policy"


def hook_signature(func: Callable[..., Any]) -> str:
    """``name(arg, ...)`` as plugins implement it."""
    params = ", ".join(inspect.signature(func).parameters)
    return f"{func.__name__}({params})"


def render_hooks_markdown() -> str:
    """The whole ``docs/hooks.md``."""
    specs = hookspec_functions()
    lines = [
        "# Hooks",
        "",
        "Generated from `echo_core/hookspecs.py` by `python -m echo_core.hookdocs`;",
        "a test fails when this file and the hookspecs differ. Implement a hook with",
        "`from echo_core import hookimpl` and list your module under the `echo_memory`",
        "entry-point group. Each hook's contract suite lives in `echo_core.testing`.",
        "",
    ]
    for kind, title in KIND_TITLES.items():
        lines += [f"## {title}", ""]
        for name, func in specs.items():
            if hook_kind(name) != kind:
                continue
            doc = inspect.cleandoc(func.__doc__ or "").strip()
            lines += [f"### `{hook_signature(func)}`", "", doc, ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render_hooks_markdown(), end="")
