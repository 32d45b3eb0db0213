"""Vault-relative path validation, shared by every backend and operation.

A vault path is a relative POSIX string (``projects/active/echo.md``). Absolute paths,
``..`` segments, backslashes, NUL bytes and empty segments are rejected with exit 2 and a
message naming the offending path.
"""

from __future__ import annotations

from echo_core.errors import usage_error


def normalize_path(path: str, *, allow_root: bool = False) -> str:
    """Return ``path`` as a clean vault-relative POSIX path or raise ``EchoError`` (2).

    ``allow_root`` accepts ``""`` / ``"."`` (meaning the vault root, for listings).
    """
    if not isinstance(path, str):
        raise usage_error(f"path must be a string, got {type(path).__name__}")
    if "\x00" in path:
        raise usage_error(f"path {path!r} contains a NUL byte; use a plain vault-relative path")
    if "\\" in path:
        raise usage_error(f"path {path!r} contains a backslash; use '/' separators")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise usage_error(
            f"path {path!r} is absolute; give a path relative to the vault root"
        )
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise usage_error(
            f"path {path!r} leaves the vault ('..' is not allowed); give a path inside it"
        )
    clean = "/".join(parts)
    if not clean and not allow_root:
        raise usage_error("path is empty; give a vault-relative path such as 'inbox/x.md'")
    return clean
