"""``--base VERSION``: a write made from a note as the caller read it is refused when the
note has changed since (``evolve --base``, ``restore --base``).

``VERSION`` is the note's version as ``get --json`` (``version``) and ``history --json``
(``current_version``) name it (``notes_io.note_version``: 12 hex digits), or any prefix
of at least 4 hex digits of the text's whole SHA-256 (the ``sha`` of ``history --json``:
the surfaces enforce the length).
"""

from __future__ import annotations

from echo_core.errors import EchoError, ExitCode


def base_is_stale(text: str | None, base: str | None) -> bool:
    """Whether ``base`` is given and the note now (``text``; None: there is no note) is
    another version. Pure."""
    from echo_core import digests

    if base is None:
        return False
    return text is None or not digests.sha256(text.encode("utf-8")).hexdigest().startswith(
        base.strip().lower())


def changed_since(path: str, text: str | None, base: str) -> str:
    """The words saying that the note at ``path`` (now ``text``; None: gone) is no longer
    version ``base``."""
    from echo_core.ops.notes_io import note_version

    if text is None:
        return (f"{path} changed since version {base.strip()} was read (there is no note "
                "there now): it was deleted or moved")
    return (f"{path} changed since version {base.strip()} was read (it is "
            f"{note_version(text)} now): a capture or an edit landed")


def require_base(path: str, text: str | None, base: str | None, next_step: str) -> None:
    """Raise ``EchoError`` (exit 1) when ``base`` is given and the note at ``path`` (now
    ``text``; None: no note) is another version; the message says nothing was written,
    then ``next_step`` (what the caller does now). No side effects."""
    if base is not None and base_is_stale(text, base):
        raise EchoError(f"{changed_since(path, text, base)}; nothing was written. {next_step}",
                        ExitCode.FAILURE)
