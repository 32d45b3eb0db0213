"""Vault-relative path validation, shared by every backend and operation.

A vault path is a relative POSIX string (``projects/active/echo.md``). Absolute paths
(``/x``, a Windows drive ``C:``, ``C:/x``, ``C:\\x``), ``..`` segments, backslashes, NUL
bytes and empty segments are rejected with exit 2 and a message naming the offending
path; so is a ``:`` as the second character of any other path (``a:b.md``: not allowed
in a Windows name, and read there as a drive; a ``:`` further on is left to the stricter
rule of writes), and paths no file system can hold (a segment over 255 bytes, more than
``MAX_SEGMENTS`` segments, over ``MAX_PATH_BYTES`` bytes in all).

This runs on every read, so it stays cheap: the length checks only run for paths longer
than ``_SHORT`` characters, which cannot break any limit. Which names a note verb may
*write* is the stricter rule of ``echo_core.write_scope``.
"""

from __future__ import annotations

from echo_core.errors import usage_error

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
    if path.startswith("/") or _is_drive(path):
        raise usage_error(
            f"path {path!r} is absolute; give a path relative to the vault root"
        )
    if "\\" in path:
        raise usage_error(f"path {path!r} contains a backslash; use '/' separators")
    if path[1:2] == ":":
        raise usage_error(
            f"path {path!r} contains ':', a character not allowed in names on Windows; "
            "rename it without ':'"
        )
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise usage_error(
            f"path {path!r} leaves the vault ('..' is not allowed); give a path inside it"
        )
    if len(path) > _SHORT:
        _check_lengths(path, parts)
    clean = "/".join(parts)
    if not clean and not allow_root:
        raise usage_error("path is empty; give a vault-relative path such as 'inbox/x.md'")
    return clean


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
    try:
        total = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise usage_error(f"path {shown} is not valid UTF-8 text; give the path as "
                          "UTF-8") from None
    if total > MAX_PATH_BYTES:
        raise usage_error(f"path {shown} is {total} bytes long; keep vault paths within "
                          f"{MAX_PATH_BYTES} bytes (UTF-8)")
    for part in parts:
        size = len(part.encode("utf-8")) if len(part) > _SHORT else 0
        if size > MAX_SEGMENT_BYTES:
            raise usage_error(f"name {part[:40]!r}... in path {shown} is {size} bytes; "
                              f"file systems hold at most {MAX_SEGMENT_BYTES} bytes a name")
