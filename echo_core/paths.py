"""Vault-relative path validation, shared by every backend and operation.

A vault path is a relative POSIX string (``projects/active/echo.md``) of UTF-8 text. One
rule, for reads as for writes, on every backend, refuses what would make a path name
another file on some platform, or no text at all: absolute paths (``/x``, a Windows
drive ``C:``, ``C:/x``, ``C:\\x``), ``..`` segments, a backslash (a separator on
Windows) and a ``:`` in any component (``x:y.md`` is a drive there, ``a/b:c.md`` a stream
of ``a/b``), NUL bytes and text that is not UTF-8 (a name made in another encoding)
are rejected with exit 2 and a message naming the offending path (empty and ``.``
segments are dropped), as are paths no file system can hold (a segment over 255 bytes, more than ``MAX_SEGMENTS``
segments, over ``MAX_PATH_BYTES`` bytes in all). A file a person named so by hand is
still listed (``Storage.list``) but never read, recalled or copied: ``refused_paths``
picks such paths out of a listing for the readers that skip them. Other odd names (a
trailing space, a line break) are read; which names a note verb may *write* is the
stricter rule of ``echo_core.write_scope``.

This runs on every read, so it stays cheap: the length checks only run for paths longer
than ``_SHORT`` characters, which cannot break any limit, and the UTF-8 check only for
paths that are not ASCII.
"""

from __future__ import annotations

from collections.abc import Iterable

from echo_core.errors import EchoError, usage_error

#: File systems hold at most 255 bytes per name.
MAX_SEGMENT_BYTES = 255
#: Folders nest at most this deep (segments, the file name included).
MAX_SEGMENTS = 32
#: A whole vault path, in UTF-8 bytes (the vault's own folder comes on top).
MAX_PATH_BYTES = 1024
#: A path of at most this many characters is within every limit above (4 bytes a
#: character at most, one segment per two characters).
_SHORT = 63


def normalize_path(path: str, *, allow_root: bool = False) -> str:
    """Return ``path`` as a clean vault-relative POSIX path or raise ``EchoError`` (2).

    ``allow_root`` accepts ``""`` / ``"."`` (meaning the vault root, for listings).
    """
    if not isinstance(path, str):
        raise usage_error(f"path must be a string, got {type(path).__name__}")
    if "\x00" in path:
        raise usage_error(f"path {path!r} contains a NUL byte; use a plain vault-relative path")
    if is_absolute(path):
        raise usage_error(
            f"path {path!r} is absolute; give a path relative to the vault root"
        )
    if "\\" in path:
        raise usage_error(f"path {path!r} contains a backslash, a folder separator on "
                          "Windows and in no vault name; use '/' between folders, and "
                          "rename a file named with '\\'")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise usage_error(
            f"path {path!r} leaves the vault ('..' is not allowed); give a path inside it"
        )
    if ":" in path:
        raise usage_error(
            f"path {path!r} contains ':', a character not allowed in names on Windows; "
            "rename it without ':'"
        )
    if not path.isascii() and not is_utf8(path):
        raise usage_error(f"path {shown_path(path)} is not valid UTF-8 text (a name made "
                          "in another encoding?); rename it as UTF-8")
    if len(path) > _SHORT:
        _check_lengths(path, parts)
    clean = "/".join(parts)
    if not clean and not allow_root:
        raise usage_error("path is empty; give a vault-relative path such as 'inbox/x.md'")
    return clean


def is_absolute(path: str) -> bool:
    """Whether ``path`` is rooted (``/x``) or starts with a Windows drive (``_is_drive``)."""
    return path.startswith("/") or _is_drive(path)


def _is_drive(path: str) -> bool:
    """Whether ``path`` starts with a Windows drive: an ASCII letter and ``:``, alone or
    followed by a separator (``C:``, ``C:/x``, ``C:\\x``)."""
    return (len(path) > 1 and path[1] == ":" and path[0].isascii() and path[0].isalpha()
            and path[2:3] in ("", "/", "\\"))


def _check_lengths(path: str, parts: list[str]) -> None:
    shown = f"{path[:60]!r}..."
    if len(parts) > MAX_SEGMENTS:
        raise usage_error(f"path {shown} nests {len(parts)} levels deep; keep vault paths "
                          f"within {MAX_SEGMENTS} levels")
    total = len(path.encode("utf-8"))  # UTF-8 already checked
    if total > MAX_PATH_BYTES:
        raise usage_error(f"path {shown} is {total} bytes long; keep vault paths within "
                          f"{MAX_PATH_BYTES} bytes (UTF-8)")
    for part in parts:
        size = len(part.encode("utf-8")) if len(part) > _SHORT else 0
        if size > MAX_SEGMENT_BYTES:
            raise usage_error(f"name {part[:40]!r}... in path {shown} is {size} bytes; "
                              f"file systems hold at most {MAX_SEGMENT_BYTES} bytes a name")


def is_utf8(text: str) -> bool:
    """Whether ``text`` can be written as UTF-8 (no lone surrogate: how a file name in
    another encoding, or a JSON ``\\ud800`` escape, arrives)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_path(path: str) -> str:
    """``path`` quoted for a message, a byte of a name not in UTF-8 shown as ``\\xNN``
    (``caf\\xe9.md``), any other lone surrogate as ``\\udNNN``."""
    try:
        text = path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return ascii(path)
    return f"'{text}'"


def refused_paths(paths: Iterable[str]) -> list[str]:
    """The paths of a backend's listing (relative, no ``..``), in order, that
    ``normalize_path`` refuses: names made by hand with ``:`` or ``\\``, not in UTF-8,
    or too long or deep. Cheap when there are none: one pass over the joined text, then
    only the length of each path (a look at each path when the text is not ASCII)."""
    listed = paths if isinstance(paths, (list, tuple)) else list(paths)
    joined = "\n".join(listed)
    if ":" not in joined and "\\" not in joined and joined.isascii():  # bytes = characters
        return [p for p in listed if len(p) > _SHORT and (
            len(p) > MAX_SEGMENT_BYTES or p.count("/") >= MAX_SEGMENTS) and not is_listed_path(p)]
    return [p for p in listed if not is_listed_path(p)]


def is_listed_path(path: str) -> bool:
    """Whether ``normalize_path`` accepts ``path``, a path as a listing gives it (relative,
    no ``..``): the common case without calling it (no ``:`` or ``\\``, UTF-8, at most
    ``MAX_SEGMENT_BYTES`` bytes and ``MAX_SEGMENTS`` segments: within every limit)."""
    if ":" in path or "\\" in path:
        return False
    if path.isascii():
        size = len(path)
    elif is_utf8(path):
        size = len(path.encode("utf-8"))
    else:
        return False
    if size <= MAX_SEGMENT_BYTES and (size <= _SHORT or path.count("/") < MAX_SEGMENTS):
        return True
    try:
        normalize_path(path)
    except EchoError:
        return False
    return True
