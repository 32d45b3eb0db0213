"""The write scope of note verbs (SPEC §1.4): which vault paths a note verb may write.

Note verbs (put, append, fm, patch, capture and the MCP tools that call them) write only
notes: ``.md`` files outside dot-folders (``.git/``, ``.obsidian/``, ``.trash/``, any
segment starting with ``.``) and outside the agent's internal files (``_agent/.lock``,
``_agent/index/``, the vault marker ``_agent/echo-vault.md``, which only init, sweep and
migrate write), and outside ``_agent/archive/``: the versions ``evolve`` archived are
kept as they were (SPEC §2.6; evolve writes them itself, not through this check). Names
must be valid on every platform Obsidian syncs to: no ``: * ? " < > |``, no control or
bidi-override characters, no segment ending in a space or a dot (Windows drops them, so
two names would meet), no Windows device name (``con``, ``nul``, ``com1``, ... with any
extension), and short enough for the folder backend's temporary file beside the note.

``require_note_path(path)`` is the one check; it returns the clean path or raises
``EchoError`` (exit 2) whose message names the rule (for a ``:`` or a name not UTF-8,
which ``echo_core.paths.normalize_path`` refuses on reads too, in any component: the
same message wherever it is). Reads are not limited here: they keep the cheap checks of
``normalize_path``.
"""

from __future__ import annotations

import re

from echo_core.errors import EchoError, usage_error
from echo_core.names import WINDOWS_DEVICE_NAMES
from echo_core.paths import is_absolute, normalize_path, shown_path

#: The longest note file name in UTF-8 bytes. The folder backend's temp file for it is
#: ``.<name>.<host>-<pid>-<12 hex>.tmp`` (``echo_core.tempfiles``: at most 40 bytes more),
#: and file systems stop at 255.
MAX_NOTE_NAME_BYTES = 200

#: Vault-relative paths the agent keeps for itself (compared case-folded: macOS and
#: Windows vaults do not tell ``_Agent`` from ``_agent``).
INTERNAL_FILES = frozenset({"_agent/echo-vault.md"})
INTERNAL_FOLDERS = ("_agent/index/",)
#: Where ``evolve`` keeps superseded versions, byte for byte (``ops.evolve``).
ARCHIVE_FOLDER = "_agent/archive/"

RULE = ("write scope: note verbs write only .md notes outside dot-folders and the agent's "
        "internal files (SPEC §1.4)")
ARCHIVE_RULE = ("write scope: an archived version is kept as it was; restore it or evolve "
                "the current note (SPEC §1.4, §2.6)")
NAME_RULE = ("note names must be valid on every platform Obsidian syncs to: no "
             ': * ? " < > |, no control characters or line breaks, no name ending in a '
             "space or a dot, no Windows device name such as con or nul (SPEC §1.4)")

# ``: * ? " < > |``, C0 controls (newline included), DEL, C1 controls, and the bidi
# controls that make a name read differently from what it is (U+061C, U+200E/F,
# U+202A-U+202E, U+2066-U+2069).
_BAD_NAME_CHAR = re.compile(
    '[:*?"<>|\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]'
)

#: What ``normalize_path`` refuses in any component that the name rule names too.
_RELABELLED = re.compile("[:\ud800-\udfff]")


def _refuse(path: str, why: str) -> EchoError:
    return usage_error(f"{RULE}: {path!r} {why}")


def require_note_path(path: str) -> str:
    """The clean vault path of the note ``path`` names, or ``EchoError`` (2) naming the rule.

    Checks, in order: the rules of ``normalize_path`` (``..``, absolute, NUL, ``\\``,
    ``:`` and text not UTF-8 in any component, lengths: a ``:`` or a byte not UTF-8 is
    refused with ``NAME_RULE``, wherever it is); a name valid on every platform; no
    dot-folder or dot-file; the ``.md`` suffix; not one of the agent's internal files; not
    an archived version under ``_agent/archive/`` (``ARCHIVE_RULE``). Side effects: none.
    """
    clean = _normalized(path)
    bad = _BAD_NAME_CHAR.search(clean)
    if bad is not None:
        raise usage_error(f"path {clean!r} contains {bad.group()!r}; {NAME_RULE}")
    segments = clean.split("/")
    if any(s.endswith((" ", ".")) for s in segments):
        raise usage_error(f"path {clean!r} has a name ending in a space or a dot; {NAME_RULE}")
    device = next((s for s in segments if s.split(".", 1)[0].casefold() in WINDOWS_DEVICE_NAMES),
                  None)
    if device is not None:
        raise usage_error(f"path {clean!r}: {device!r} is a Windows device name; {NAME_RULE}")
    if any(s.startswith(".") for s in segments):
        raise _refuse(clean, "is in a dot-folder or is a hidden file (.git, .obsidian, ...); "
                      "write notes in the vault's own folders")
    if not clean.endswith(".md"):
        raise _refuse(clean, "is not a markdown note; give a path ending in .md")
    folded = clean.casefold()
    if folded in INTERNAL_FILES or folded.startswith(INTERNAL_FOLDERS):
        raise _refuse(clean, "is one of the agent's internal files; `echo-memory doctor` "
                      "checks them and `echo-memory init` repairs the layout")
    if folded.startswith(ARCHIVE_FOLDER):
        raise usage_error(f"{ARCHIVE_RULE}: {clean!r} is under {ARCHIVE_FOLDER} (its "
                          "superseded_by names the current note)")
    name_bytes = len(segments[-1].encode("utf-8"))
    if name_bytes > MAX_NOTE_NAME_BYTES:
        raise usage_error(f"note name {segments[-1][:40]!r}... is {name_bytes} bytes; keep a "
                          f"note's file name within {MAX_NOTE_NAME_BYTES} bytes (UTF-8)")
    return clean


def _normalized(path: str) -> str:
    """``normalize_path(path)``; when what it refused is a character of the name rule
    (``:``, a byte not UTF-8: the path passes once they are replaced), the refusal names
    ``NAME_RULE``, the same for every component (``x:note.md`` as ``notes/a:b.md``)."""
    try:
        return normalize_path(path)
    except EchoError:
        bad = _RELABELLED.search(path) if isinstance(path, str) else None
        if bad is None or is_absolute(path) or _refused(_RELABELLED.sub("_", path)):
            raise
    raise usage_error(f"path {shown_path(path)} contains {bad.group()!r}; {NAME_RULE}")


def _refused(path: str) -> bool:
    try:
        normalize_path(path)
    except EchoError:
        return True
    return False


def text_problem(value: str) -> str | None:
    """What is wrong with ``value`` when it cannot be written as UTF-8 (a lone surrogate,
    which is how undecodable bytes (argv) or a JSON ``\\ud800`` escape arrive), else None."""
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return (f"not valid UTF-8 text (an undecodable character at position {exc.start}); "
                "give UTF-8 text")
    return None


#: A control character a one-line text may not hold: C0 (but the tab) and DEL. Line
#: breaks are refused before this, with their own message.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def require_plain_line(value: str, field: str) -> None:
    """``EchoError`` (2) naming ``field`` when the one-line text ``value`` (a title, an
    alias, a tag, an appended line) holds a control character other than a tab: a NUL,
    or an escape sequence that a terminal showing the note would run (``\x1b[2J``)."""
    found = _CONTROL.search(value)
    if found is not None:
        raise usage_error(f"{field}: {value[:60]!r} holds the control character "
                          f"{found.group()!r}; give plain text")


def require_text(value: object, field: str) -> None:
    """``EchoError`` (2) naming ``field`` when a string in ``value`` (a str, or lists and
    mappings of them, e.g. a frontmatter value) cannot be written as UTF-8
    (``text_problem``)."""
    if isinstance(value, str):
        if (problem := text_problem(value)) is not None:
            raise usage_error(f"{field}: {problem}")
    elif isinstance(value, (list, tuple)):
        for item in value:
            require_text(item, field)
    elif isinstance(value, dict):
        for key, item in value.items():
            require_text(key, field)
            require_text(item, field)
