"""``StorageBase``: write a storage backend as a few primitives, inherit the rest.

In the manner of fsspec's ``AbstractFileSystem``: a subclass implements the primitives

* ``identity`` (set in ``__init__``): the vault's stable identity, e.g. ``"file:/abs"``;
* ``read(path)`` -> exact text; ``EchoError`` 44 when no *file* is there (a folder
  counts as absent);
* ``write(path, text)``: atomic create-or-replace, parents created;
* ``delete(path)``: 44 when absent;
* ``list(prefix="")``: sorted paths of the files under the folder ``prefix``, recursive,
  names starting with ``.`` skipped, ``[]`` for a missing folder;
* ``stat(path)`` -> ``FileStat``; 44 when no file is there (a folder counts as absent);
* ``lock(timeout)``: the cross-process vault lock, re-entrant within a thread (75 on
  timeout);

each validating its path with ``echo_core.paths.normalize_path`` (exit 2 naming it) and
raising ``BackendUnavailable`` when the backend cannot be reached. It inherits
``read_many``, ``exists``, ``append_line``, ``ping`` and ``create`` built on them, and
overrides any of those it can do faster (one round trip for many reads, a native
append). Every method is the one ``echo_core.protocols.Storage`` documents, and a
subclass passes ``echo_core.testing.StorageContract`` once its primitives do.
"""

from __future__ import annotations

import abc
import functools
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

from echo_core.errors import EchoError, ExitCode, usage_error
from echo_core.models import FileStat
from echo_core.paths import normalize_path

#: The path ``ping`` stats: any answer, found or not, shows the backend is reachable.
PING_PATH = ".echo-memory-ping"


def fork_safe_reads(storage: object) -> bool:
    """Whether a forked child may read through ``storage`` (``StorageBase.fork_safe_reads``;
    False for a storage that does not say)."""
    return getattr(storage, "fork_safe_reads", False) is True


def single_line(rel: str, line: str) -> str:
    """``line`` without its line ending; exit 2 when it holds several lines."""
    stripped = line.rstrip("\r\n")
    if "\n" in stripped or "\r" in stripped:
        raise usage_error(f"append_line to {rel!r} got several lines; append them one at a time")
    return stripped


def line_ending(text: str) -> str:
    """The line ending ``text`` uses (that of its first line): ``"\\r\\n"`` or ``"\\n"``."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def with_line(current: str, line: str) -> str | None:
    """``current`` with ``line`` appended as its last line, in its line ending (a missing
    final newline added first); None when an identical line is already there."""
    if line in [existing.rstrip("\r") for existing in current.split("\n")]:
        return None
    eol = line_ending(current)
    if current and not current.endswith("\n"):
        current += eol
    return current + line + eol


def none_if_absent(read: Callable[[], str]) -> str | None:
    """``read()``, or None when it raises ``EchoError`` 44 (any other error propagates)."""
    try:
        return read()
    except EchoError as exc:
        if exc.code != ExitCode.NOT_FOUND:
            raise
        return None


_APPEND_LOCKS: dict[tuple[str, str], threading.Lock] = {}
_APPEND_LOCKS_GUARD = threading.Lock()


def _append_lock(identity: str, rel: str) -> threading.Lock:
    with _APPEND_LOCKS_GUARD:
        return _APPEND_LOCKS.setdefault((identity, rel), threading.Lock())


class StorageBase(abc.ABC):
    """A ``Storage`` from six primitives (module docstring) plus derived methods."""

    #: Stable identity of the vault; keys the per-machine state dir. Set it in ``__init__``.
    identity: str
    #: True when a forked child may read through this storage (``read``, ``read_many``,
    #: ``list``): it holds no connection or open handle that a child would share with its
    #: parent. Whole-vault work then reads part of the vault on another core
    #: (``echo_core.forked_work``). A backend over a network connection leaves it False.
    fork_safe_reads: bool = False

    # --- primitives -------------------------------------------------------------------

    @abc.abstractmethod
    def read(self, path: str) -> str:
        """Exact text of the file (UTF-8, line endings untouched); 44 when absent."""

    @abc.abstractmethod
    def write(self, path: str, text: str) -> None:
        """Atomically create or replace the file (readers see old or new, never torn)."""

    @abc.abstractmethod
    def delete(self, path: str) -> None:
        """Remove the file (44 when absent)."""

    @abc.abstractmethod
    def list(self, prefix: str = "") -> list[str]:
        """Sorted paths of all files under the folder ``prefix`` (recursive; hidden
        entries skipped; ``[]`` when the folder is missing)."""

    @abc.abstractmethod
    def stat(self, path: str) -> FileStat:
        """Size in bytes and modification time of the file (44 when absent or a folder)."""

    @abc.abstractmethod
    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        """The cross-process vault lock, re-entrant within one thread (75 on timeout)."""

    # --- derived ----------------------------------------------------------------------

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Texts keyed by the given paths (a missing file -> ``None``), one ``read``
        each. Every path is validated (exit 2) before anything is read."""
        for given in paths:
            normalize_path(given)
        return {given: none_if_absent(functools.partial(self.read, given)) for given in paths}

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a file (a folder is not a file): ``stat`` finds it."""
        try:
            self.stat(path)
        except EchoError as exc:
            if exc.code != ExitCode.NOT_FOUND:
                raise
            return False
        return True

    def append_line(self, path: str, line: str) -> bool:
        """Append ``line`` unless an identical line is present; True when appended.

        ``read`` then ``write`` of the whole file: the file is created when missing, a
        last line without a newline gets one first, the file's line ending is kept.
        Serialised per file within the process; hold ``lock()`` to serialise across
        processes."""
        rel = normalize_path(path)
        stripped = single_line(rel, line)
        with _append_lock(self.identity, rel):
            current = none_if_absent(functools.partial(self.read, rel)) or ""
            updated = with_line(current, stripped)
            if updated is None:
                return False
            self.write(rel, updated)
            return True

    def ping(self) -> None:
        """Return when the backend answers a ``stat`` (found or not); whatever the
        primitive raises otherwise (``BackendUnavailable``) propagates."""
        self.exists(PING_PATH)

    def create(self) -> None:
        """Nothing to create by default (a container that always exists): ``ping``.
        A backend whose container can be made (a folder) overrides this."""
        self.ping()
