"""``ObsidianStorage``: a vault served by the Obsidian Local REST API plugin (5.x).

Contract: ``echo_core.protocols.Storage`` (checked by ``StorageContract`` against a fake
server that is itself checked against the API's OpenAPI document). Paths go through
``echo_core.paths.normalize_path`` and are percent-encoded one segment at a time, with
real ``/`` separators, as the API requires. Text is UTF-8 and line endings are never
translated (bodies are bytes on the wire).

How each operation maps to the API:

* ``read`` / ``read_bytes`` / ``exists``: ``GET /vault/{path}`` (``Accept:
  text/markdown``; the API sends any file's content as stored, so an attachment's bytes
  come back unchanged and ``read_bytes`` returns them as they are); a note's (``*.md``)
  answer must be ``text/markdown`` (or ``text/plain``), else ``BackendUnavailable``: a
  proxy's page is never taken as the note; a note's answer over ``NOTE_CAP`` bytes (the
  project's note size limit) is refused unread (attachments have no cap, as in an
  import); the spec has
  no HEAD, so ``exists`` is a GET too. ``read_many`` runs those GETs on a bounded thread
  pool sharing the one pooled client.
* ``write``: ``PUT /vault/{path}`` with the whole text (``text/markdown``). The body
  travels in one request and the server applies it only once it has all of it, so a
  broken connection never leaves a torn note; how Obsidian writes the file to disk is
  Obsidian's business.
* ``append_line``: GET, check for the line, then ``POST /vault/{path}`` (append; it
  creates a missing file) of the line, after a line ending when the file lacks a final
  one (so a CRLF file is handled exactly like the folder backend). Never a whole-file
  PUT: a wrong answer to the GET (a spurious 404) cannot replace the note. Serialised
  per file within the process; hold ``lock()`` to serialise across processes.
* ``delete``: ``DELETE /vault/{path}`` (Obsidian's trash setting applies, so a deleted
  note stays recoverable). ``list``: walks ``GET /vault/`` and ``GET /vault/{dir}/``
  level by level, concurrently, skipping hidden entries. ``stat``: ``GET`` with
  ``Accept: application/vnd.olrapi.note+json`` (``stat.size`` bytes, ``stat.mtime`` ms).
* ``ping`` / ``create``: ``GET /`` (a remote vault always exists; nothing to create).
* ``lock``: an advisory lock note, see ``plugins.storage_obsidian.lock_note``.
* ``patch`` (extra, not in the protocol): one JSON-body PATCH instruction.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from typing import Any, Self
from urllib.parse import quote

from echo_core import (
    BackendUnavailable,
    EchoError,
    ExitCode,
    FileStat,
    StorageBase,
    normalize_path,
    not_found,
    usage_error,
)
from plugins.storage_obsidian.limits import ANSWER_CAP, NOTE_CAP
from plugins.storage_obsidian.lock_note import (
    DEFAULT_SETTLE,
    DEFAULT_STALE_AFTER,
    LOCK_PATH,
    note_lock_for,
)
from plugins.storage_obsidian.transport import (
    NOTE_TYPES,
    UNSET,
    ObsidianHttp,
    api_error,
    patch_instruction,
    require_type,
)

MARKDOWN = "text/markdown; charset=utf-8"
NOTE_JSON = "application/vnd.olrapi.note+json"
_PATH_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def vault_url_path(rel: str, *, folder: bool = False) -> str:
    """``/vault/<segments percent-encoded one by one>`` (``/`` kept as the separator)."""
    encoded = "/".join(quote(part, safe="") for part in rel.split("/") if part)
    if folder:
        return f"/vault/{encoded}/" if encoded else "/vault/"
    return f"/vault/{encoded}"


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _is_note(rel: str) -> bool:
    return rel.lower().endswith(".md")


class ObsidianStorage(StorageBase):
    """A vault behind the Local REST API at ``base_url`` (``https://host:27124``; an
    ``obsidian+`` prefix is accepted). The API key goes in a bearer header only.

    ``verify``: ``True`` (system trust), a CA file path (the plugin's certificate), or a
    ``"sha256:<hex>"`` pin; ``False`` is refused. ``timeout`` bounds every request, all of
    it: connecting, sending and the whole answer (s);
    ``concurrency`` bounds parallel reads and pooled connections; ``stale_after`` and
    ``lock_settle`` tune the lock note; ``key_source`` names where the key was read from
    (a refused key's message says to fix it there). ``identity`` is ``obsidian+<base_url>``.
    ``create`` is inherited (nothing to create: the vault is Obsidian's; it pings).
    """

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        verify: bool | str = True,
        timeout: float = 10.0,
        concurrency: int = 8,
        stale_after: float = DEFAULT_STALE_AFTER,
        lock_settle: float = DEFAULT_SETTLE,
        key_source: str = "",
    ) -> None:
        self.base_url = base_url.removeprefix("obsidian+").rstrip("/")
        self.identity = f"obsidian+{self.base_url}"
        self.concurrency = max(1, int(concurrency))
        self.stale_after = float(stale_after)
        self.lock_settle = float(lock_settle)
        self._http = ObsidianHttp(
            self.base_url, api_key, verify=verify, timeout=timeout,
            max_connections=self.concurrency, key_source=key_source,
        )

    def __repr__(self) -> str:
        return f"ObsidianStorage({self.base_url!r})"

    def close(self) -> None:
        """Close the pooled connections."""
        self._http.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- requests ---------------------------------------------------------------------

    def _where(self, rel: str) -> str:
        return f"{rel!r} in the Obsidian vault at {self.base_url}"

    def _unexpected(self, response: Any, what: str, rel: str) -> EchoError:
        """The error for a status the operation does not expect (400 / 405 / other)."""
        detail = api_error(response)
        if response.status_code == 405:
            return usage_error(f"path {self._where(rel)} is a folder; give a file path")
        if response.status_code == 400:
            return usage_error(
                f"Obsidian refused to {what} {self._where(rel)} ({detail}); choose another path"
            )
        return EchoError(
            f"Obsidian answered {detail} to {what} {self._where(rel)}; check the Local REST "
            "API plugin version (5.x is supported)",
            ExitCode.FAILURE,
        )

    def _get_bytes(self, rel: str) -> bytes | None:
        """The file's bytes as the API sends them, ``None`` when absent. ``GET`` answers
        any file with its content as stored (a note's markdown, an image's bytes); a
        note's answer may hold at most ``NOTE_CAP`` bytes."""
        response = self._http.send(
            "GET", vault_url_path(rel), headers={"Accept": "text/markdown"},
            limit=NOTE_CAP if _is_note(rel) else None,
        )
        if response.status_code in (404, 405):  # absent, or a folder: not a file
            return None
        if response.status_code != 200:
            raise self._unexpected(response, "read", rel)
        if _is_note(rel):  # a note; an attachment comes as its own type
            require_type(response, NOTE_TYPES, f"GET {self._where(rel)}")
        data: bytes = response.content
        return data

    def _get_text(self, rel: str) -> str | None:
        """The file's exact text, ``None`` when absent."""
        data = self._get_bytes(rel)
        return None if data is None else self._decode(rel, data)

    def _decode(self, rel: str, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EchoError(
                f"file {self._where(rel)} is not valid UTF-8 ({exc.reason} at byte "
                f"{exc.start}); re-save it as UTF-8",
                ExitCode.FAILURE,
            ) from None

    def _put(self, rel: str, text: str) -> None:
        response = self._http.send(
            "PUT", vault_url_path(rel), headers={"Content-Type": MARKDOWN},
            content=text.encode("utf-8"),
        )
        if response.status_code not in (200, 204):
            raise self._unexpected(response, "write", rel)

    # --- reads ------------------------------------------------------------------------

    def read(self, path: str) -> str:
        """Exact text of the file (UTF-8, line endings untouched); 44 when absent."""
        rel = normalize_path(path)
        return self._decode(rel, self.read_bytes(rel))

    def read_bytes(self, path: str) -> bytes:
        """The file's bytes exactly as stored (an attachment too); 44 when absent."""
        rel = normalize_path(path)
        data = self._get_bytes(rel)
        if data is None:
            raise not_found(f"no file {self._where(rel)}; check the path")
        return data

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Texts keyed by the given paths (missing -> ``None``), fetched concurrently on at
        most ``concurrency`` connections. Bad paths raise (exit 2) before any request."""
        targets = [(given, normalize_path(given)) for given in paths]
        unique = sorted({rel for _, rel in targets})
        if len(unique) <= 1:
            texts = {rel: self._get_text(rel) for rel in unique}
        else:
            with ThreadPoolExecutor(max_workers=min(self.concurrency, len(unique))) as pool:
                texts = dict(zip(unique, pool.map(self._get_text, unique), strict=True))
        return {given: texts[rel] for given, rel in targets}

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a file (a folder is not a file)."""
        return self._get_text(normalize_path(path)) is not None

    def stat(self, path: str) -> FileStat:
        """Size in bytes and mtime (epoch seconds) from the note's JSON form; 44 when absent."""
        rel = normalize_path(path)
        response = self._http.send(  # the JSON form carries the content: capped for a note
            "GET", vault_url_path(rel), headers={"Accept": NOTE_JSON},
            limit=ANSWER_CAP if _is_note(rel) else None,
        )
        if response.status_code in (404, 405):
            raise not_found(f"no file {self._where(rel)}; check the path")
        if response.status_code != 200:
            raise self._unexpected(response, "stat", rel)
        require_type(response, (NOTE_JSON,), f"GET {self._where(rel)} as {NOTE_JSON}")
        try:
            stat = json.loads(response.content.decode("utf-8"))["stat"]
            size, mtime_ms = int(stat["size"]), float(stat["mtime"])
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise EchoError(
                f"Obsidian sent no usable stat for {self._where(rel)} ({exc!r}); check the "
                "Local REST API plugin version (5.x is supported)",
                ExitCode.FAILURE,
            ) from None
        return FileStat(path=rel, size=size, mtime=mtime_ms / 1000.0)

    def _list_folder(self, rel: str) -> tuple[list[str], list[str]]:
        """``(files, subfolders)`` directly in folder ``rel`` (vault paths, hidden skipped)."""
        response = self._http.send("GET", vault_url_path(rel, folder=True))
        if response.status_code == 404:
            return [], []
        if response.status_code != 200:
            raise self._unexpected(response, "list", rel or "/")
        require_type(response, ("application/json",), f"the listing of {self._where(rel or '/')}")
        try:
            entries = json.loads(response.content.decode("utf-8"))["files"]
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise EchoError(
                f"Obsidian sent an unreadable listing of {self._where(rel or '/')} ({exc!r})",
                ExitCode.FAILURE,
            ) from None
        files: list[str] = []
        folders: list[str] = []
        for entry in entries:
            if not isinstance(entry, str):
                continue
            is_folder = entry.endswith("/")
            name = entry.rstrip("/")
            if not name or "/" in name or name in (".", "..") or _hidden(name):
                continue
            full = f"{rel}/{name}" if rel else name
            (folders if is_folder else files).append(full)
        return files, folders

    def list(self, prefix: str = "") -> list[str]:
        """Sorted vault paths of the files under the folder ``prefix`` (recursive).

        Hidden files and folders (a name starting with ``.``) are skipped. A prefix that
        is not a folder gives ``[]``. Folders of one level are listed concurrently.
        """
        rel = normalize_path(prefix, allow_root=True)
        if any(_hidden(part) for part in rel.split("/") if part):
            return []
        found: list[str] = []
        level = [rel]
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            while level:
                next_level: list[str] = []
                for files, folders in pool.map(self._list_folder, level):
                    found.extend(files)
                    next_level.extend(folders)
                level = next_level
        found.sort()
        return found

    # --- writes -----------------------------------------------------------------------

    def write(self, path: str, text: str) -> None:
        """Create or replace the file with ``text`` in one PUT (parents are created)."""
        self._put(normalize_path(path), text)

    def append_line(self, path: str, line: str) -> bool:
        """Append ``line`` unless an identical line is present; True when appended.

        Missing file: created. Last line without a newline: one is added first. The
        file's line ending (CRLF or LF) is used. See the module docstring for the calls.
        """
        rel = normalize_path(path)
        stripped = line.rstrip("\r\n")
        if "\n" in stripped or "\r" in stripped:
            raise usage_error(
                f"append_line to {rel!r} got several lines; append them one at a time"
            )
        with _path_lock(self.identity, rel):
            current = self._get_text(rel) or ""
            if stripped in [existing.rstrip("\r") for existing in current.split("\n")]:
                return False
            first_eol = current.find("\n")
            eol = "\r\n" if first_eol > 0 and current[first_eol - 1] == "\r" else "\n"
            # always the API's append (POST creates a missing file): a whole-file PUT
            # built from this read would replace the note were the read wrong (a
            # spurious 404 looks like an absent file)
            separator = eol if current and not current.endswith("\n") else ""
            response = self._http.send(
                "POST", vault_url_path(rel), headers={"Content-Type": MARKDOWN},
                content=(separator + stripped + eol).encode("utf-8"),
            )
            if response.status_code not in (200, 204):
                raise self._unexpected(response, "append to", rel)
            return True

    def delete(self, path: str) -> None:
        """Remove the file; 44 when absent (or when ``path`` is a folder)."""
        rel = normalize_path(path)
        response = self._http.send("DELETE", vault_url_path(rel))
        if response.status_code in (404, 405):
            raise not_found(f"no file {self._where(rel)}; nothing to delete")
        if response.status_code not in (200, 204):
            raise self._unexpected(response, "delete", rel)

    def patch(
        self,
        path: str,
        operation: str,
        target_type: str,
        target: str | Sequence[str] | None,
        content: str | None = None,
        *,
        value: Any = UNSET,
        create_target_if_missing: bool = False,
    ) -> str:
        """Apply one PATCH instruction (``operation`` replace/prepend/append/delete to a
        ``heading`` path, ``block`` id or ``frontmatter`` key) and return the new text.

        ``content`` carries markdown (headings, blocks); ``value`` carries JSON
        (frontmatter values). 44 when the file or target is missing; 2 when Obsidian
        rejects the instruction.
        """
        rel = normalize_path(path)
        instruction = patch_instruction(
            operation, target_type, target, content, value, create_target_if_missing
        )
        response = self._http.send(
            "PATCH", vault_url_path(rel), headers={"Content-Type": "application/json"},
            content=json.dumps(instruction).encode("utf-8"),
        )
        if response.status_code == 404:
            raise not_found(
                f"no file or no {target_type} {target!r} in {self._where(rel)} "
                f"({api_error(response)}); check the path and target, or pass "
                "create_target_if_missing=True"
            )
        if response.status_code != 200:
            raise self._unexpected(response, f"{operation} {target_type} {target!r} of", rel)
        patched: str = response.content.decode("utf-8")
        return patched

    # --- the lock note (raw access, used by lock_note) --------------------------------

    def read_lock_note(self) -> str | None:
        """Text of the lock note, ``None`` when absent."""
        return self._get_text(LOCK_PATH)

    def write_lock_note(self, text: str) -> None:
        """Create or replace the lock note."""
        self._put(LOCK_PATH, text)

    def delete_lock_note(self) -> None:
        """Remove the lock note permanently (bypassing the trash); absent is fine."""
        response = self._http.send(
            "DELETE", vault_url_path(LOCK_PATH), params={"permanent": "true"}
        )
        if response.status_code not in (200, 204, 404):
            raise self._unexpected(response, "delete", LOCK_PATH)

    # --- backend ----------------------------------------------------------------------

    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        """The advisory cross-process vault lock (lock note ``_agent/.lock.md``);
        re-entrant within a thread; exit 75 after ``timeout`` s (see ``lock_note``)."""
        return note_lock_for(self.identity).hold(
            self, timeout, self.stale_after, self.lock_settle
        )

    def ping(self) -> None:
        """Return when the server answers ``GET /`` and accepts the key; else
        ``BackendUnavailable`` (unreachable) or ``EchoError`` 78 (key refused)."""
        response = self._http.send("GET", "/")
        try:
            info = json.loads(response.content.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            info = None
        if response.status_code != 200 or not isinstance(info, dict):
            raise BackendUnavailable(
                f"{self.base_url} answered {api_error(response)} to GET /, not the Obsidian "
                "Local REST API; check the vault URL's host and port"
            )
        if info.get("authenticated") is False:
            raise EchoError(
                f"the Obsidian Local REST API at {self.base_url} does not accept the API "
                f"key; check the API key: {self._http.key_hint}",
                ExitCode.NOT_CONFIGURED,
            )


def _path_lock(identity: str, rel: str) -> threading.Lock:
    """The in-process lock serialising read-modify-write of one file of one vault."""
    with _PATH_LOCKS_GUARD:
        return _PATH_LOCKS.setdefault((identity, rel), threading.Lock())
