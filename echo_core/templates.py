"""Note templates shipped in the package (``data/templates/<name>.md``)."""

from __future__ import annotations

import functools
from importlib import resources

from echo_core.errors import not_found


@functools.cache
def template_text(name: str) -> str:
    """The raw template ``name`` (a kind, ``daily`` or ``session``); code 44 when unknown."""
    ref = resources.files("echo_core").joinpath(f"data/templates/{name}.md")
    if not ref.is_file():
        raise not_found(f"no template named {name!r}")
    return ref.read_text("utf-8")


def template_names() -> list[str]:
    """Names of every shipped template."""
    folder = resources.files("echo_core").joinpath("data/templates")
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md"))


def render_template(name: str, **values: str) -> str:
    """Fill ``{{key}}`` placeholders of template ``name``; unknown placeholders stay."""
    text = template_text(name)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text
