"""storage_fs: the embedded default backend, a vault kept in a local folder.

Registers the ``file`` storage scheme. The vault URL may be a plain path (``~/vault``,
``./vault``), ``file:///abs/path`` or the storage identity form ``file:/abs/path``.
Options: ``stale_after`` (seconds after which an abandoned vault lock is broken).

Imported at CLI start-up, so ``FolderStorage`` is imported only when a vault is opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from echo_core import Register, hookimpl, usage_error

if TYPE_CHECKING:
    from echo_core import StorageFactory
    from plugins.storage_fs.folder_storage import FolderStorage

SCHEME = "file"


def folder_path_from_url(url: str) -> str:
    """The local folder named by a ``file`` vault URL or plain path (exit 2 if invalid)."""
    text = url.strip()
    if not text:
        raise usage_error("vault URL is empty; give a folder path or file:///abs/path")
    if not text.lower().startswith("file:"):
        return text
    from urllib.parse import unquote, urlsplit  # ~2 ms: only for a file: URL

    if text[5:7] != "//":
        return unquote(text[5:]) or "/"  # identity form: file:/abs/path
    parts = urlsplit(text)
    if parts.netloc not in ("", "localhost"):
        raise usage_error(
            f"vault URL {url!r} names host {parts.netloc!r}; use file:///abs/path "
            "(three slashes) or a plain folder path"
        )
    if not parts.path:
        raise usage_error(f"vault URL {url!r} has no path; use file:///abs/path")
    return unquote(parts.path)


def open_folder_storage(url: str, options: Mapping[str, Any]) -> FolderStorage:
    """``StorageFactory`` for the ``file`` scheme: a ``FolderStorage`` on the URL's folder."""
    from plugins.storage_fs.folder_storage import FolderStorage

    stale_after = options.get("stale_after", 600.0)
    try:
        stale_after = float(stale_after)
    except (TypeError, ValueError):
        raise usage_error(
            f"storage option stale_after={stale_after!r} is not a number of seconds; "
            "fix it in the config file"
        ) from None
    return FolderStorage(folder_path_from_url(url), stale_after=stale_after)


@hookimpl
def register_storage(register: Register[StorageFactory]) -> None:
    """Register the ``file`` scheme (a local folder vault)."""
    register(SCHEME, open_folder_storage)
