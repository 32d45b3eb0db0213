"""Note templates shipped in the package (``data/templates/<name>.md``).

They are read beside this module: ``importlib.resources`` (with ``tempfile``, ``shutil``
and the compression modules it imports) costs a one-shot capture ~5 ms, paid on every
capture that writes its day's agent log. Only a package installed as a zip, with no
folder to read, goes through it.
"""

from __future__ import annotations

import functools
import os

from echo_core.errors import not_found

#: The shipped templates' folder; absent when the package is not a folder (a zip).
_FOLDER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "templates")


@functools.cache
def template_text(name: str) -> str:
    """The raw template ``name`` (a kind, ``daily`` or ``session``); code 44 when unknown."""
    if os.path.isdir(_FOLDER):
        if "/" in name or "\\" in name or name.startswith("."):
            raise not_found(f"no template named {name!r}")
        try:
            with open(os.path.join(_FOLDER, f"{name}.md"), encoding="utf-8") as f:
                return f.read()
        except (FileNotFoundError, IsADirectoryError):
            raise not_found(f"no template named {name!r}") from None
    from importlib import resources  # pragma: no cover - installed as a zip

    ref = resources.files("echo_core").joinpath(f"data/templates/{name}.md")
    if not ref.is_file():
        raise not_found(f"no template named {name!r}")
    return ref.read_text("utf-8")


def template_names() -> list[str]:
    """Names of every shipped template."""
    if os.path.isdir(_FOLDER):
        return sorted(n[:-3] for n in os.listdir(_FOLDER) if n.endswith(".md"))
    from importlib import resources  # pragma: no cover - installed as a zip

    folder = resources.files("echo_core").joinpath("data/templates")
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md"))


def render_template(name: str, **values: str) -> str:
    """Fill ``{{key}}`` placeholders of template ``name``; unknown placeholders stay."""
    text = template_text(name)
    for key, value in values.items():
        text = text.replace("{{" + key + "}}", value)
    return text
