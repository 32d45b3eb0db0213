"""``FolderStorage``: the embedded default backend, a vault kept in a local folder.

Contract: ``echo_core.protocols.Storage`` (checked by ``StorageContract``). Every path goes
through ``echo_core.paths.normalize_path``; a path that resolves outside the root through
a symlink is refused (exit 2). Text is UTF-8 and line endings are never translated.
Writes are atomic (temp file in the same folder, fsync, rename, fsync of the folder).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat as _stat
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from echo_core import (
    NOT_WRITABLE_ERRNOS,
    EchoError,
    EditedMeanwhile,
    ExitCode,
    FileStat,
    StorageBase,
    VaultMissing,
    VaultNotWritable,
    fsync_dir,
    none_if_absent,
    normalize_path,
    not_found,
    single_line,
    sweep_stale,
    temp_name,
    usage_error,
    with_line,
)
from plugins.storage_fs import batch_read
from plugins.storage_fs.change_probe import ChangeProbe
from plugins.storage_fs.link_scope import require_writable_through
from plugins.storage_fs.save_in_progress import Signature, settled, signature
from plugins.storage_fs.tree_scan import list_tree
from plugins.storage_fs.vault_lock import DEFAULT_STALE_AFTER, vault_lock_for

#: Where atomic writes stage their temp files (one small folder to sweep, not every one).
TEMP_DIR = "_agent/.tmp"
#: Seconds between sweeps of stale temp files by one storage (the first write sweeps).
SWEEP_EVERY = 60.0

_PATH_LOCKS: dict[str, threading.Lock] = {}
_PATH_LOCKS_GUARD = threading.Lock()


def _path_lock(target: Path) -> threading.Lock:
    """The in-process lock serialising read-modify-write of one file."""
    with _PATH_LOCKS_GUARD:
        lock = _PATH_LOCKS.get(str(target))
        if lock is None:
            lock = _PATH_LOCKS[str(target)] = threading.Lock()
        return lock


#: Where the kernel names each open file of this process (Linux); "" where absent.
_FD_LINKS = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else ""


def _escape_error(path: str, real: str) -> EchoError:
    return usage_error(f"path {path!r} resolves outside the vault through a symlink (to "
                       f"{real}); move the file into the vault or remove the link")


def _is_hidden(name: str) -> bool:
    return name.startswith(".")


class FolderStorage(ChangeProbe, StorageBase):
    """A vault in the folder ``root`` (see module docstring for the guarantees).

    Implements every ``StorageBase`` method itself (faster, symlink-aware versions).

    ``identity`` is ``"file:" + <resolved absolute root>``. ``stale_after`` is the age in
    seconds after which a vault lock is considered abandoned and broken with a warning.
    The root itself is never created by the storage: a missing root makes ``ping``,
    ``write``, ``lock`` and every read that finds nothing raise ``VaultMissing`` (a
    ``BackendUnavailable``): an absent folder is unreachable, not empty.
    """

    #: Each read opens its files anew (no shared handle): a forked child may read too.
    fork_safe_reads = True

    def __init__(
        self, root: str | os.PathLike[str], *, stale_after: float = DEFAULT_STALE_AFTER
    ) -> None:
        self.root = Path(root).expanduser().resolve()
        self._prefix = str(self.root).rstrip("/\\")  # joined with "/" + relative path
        self.identity = f"file:{self.root}"
        self.stale_after = float(stale_after)
        self._temp_ok: bool | None = None  # _agent/.tmp usable (None: not checked yet)
        self._swept_at = 0.0
        #: file -> its signature right after this object's last write of it: still so,
        #: no save by anyone else is in progress (``save_in_progress.settled``)
        self._ours: dict[Path, Signature | None] = {}

    def __repr__(self) -> str:
        return f"FolderStorage({str(self.root)!r})"

    # --- paths ------------------------------------------------------------------------

    def _target(self, path: str) -> tuple[str, Path]:
        """``(clean vault path, real filesystem path)``; refuses escapes (exit 2)."""
        rel, real = self._real(path)
        return rel, Path(real)

    def _write_target(self, path: str) -> tuple[str, Path]:
        """``_target`` for a write or delete, refusing a link to a file no note write may
        change (``link_scope.require_writable_through``)."""
        rel, real = self._target(path)
        require_writable_through(self.root, self._prefix, rel, real)
        return rel, real

    def _real(self, path: str, dirs: dict[str, bool] | None = None) -> tuple[str, str]:
        """``_target`` with the filesystem path as a string (reads skip building a Path).

        The clean path has no ``..`` and the root is resolved, so the joined path can only
        leave the root through a symlink: each existing component below the root is
        ``lstat``-ed, and only when one is a link is the path resolved (``realpath``) and
        checked. ``dirs`` (one batch's memo of folder -> is a link) spares re-checking the
        folders shared by the paths of one ``read_many``; nothing is cached across calls.
        """
        rel = normalize_path(path)
        full = f"{self._prefix}/{rel}"
        if not self._through_link(rel, dirs):
            return rel, full
        real = Path(os.path.realpath(full))
        if real != self.root and self.root not in real.parents:
            raise _escape_error(path, str(real))
        return rel, str(real)

    def _through_link(self, rel: str, dirs: dict[str, bool] | None) -> bool:
        """Whether an existing component of ``rel`` (below the root) is a symlink, or
        could not be checked; components past a missing one cannot be links."""
        parts = rel.split("/")
        current = self._prefix
        last = len(parts) - 1
        for i, part in enumerate(parts):
            current = f"{current}/{part}"
            if dirs is not None and i < last:
                known = dirs.get(current)
                if known is not None:
                    if known:
                        return True
                    continue
            try:
                is_link = _stat.S_ISLNK(os.lstat(current).st_mode)
            except (FileNotFoundError, NotADirectoryError):
                return False
            except OSError:
                return True  # unreadable: let realpath decide
            if dirs is not None and i < last:
                dirs[current] = is_link
            if is_link:
                return True
        return False

    def _require_root(self) -> None:
        if not os.path.isdir(self._prefix):
            raise VaultMissing(
                f"vault folder {self.root} does not exist or is not a folder (a drive "
                "not mounted, or a wrong vault path?)"
            )

    def _write_error(self, rel: str, exc: OSError) -> Exception:
        """The error a failed write of ``rel`` raises: ``VaultNotWritable`` when the vault
        refuses writes (full, read-only, permission), exit 2 for a name the filesystem
        cannot hold, else the ``OSError`` itself."""
        reason = exc.strerror or str(exc)
        if exc.errno in NOT_WRITABLE_ERRNOS:
            return VaultNotWritable(f"vault folder {self.root} cannot be written ({reason} "
                                    f"writing {rel!r}); free space or fix its permissions")
        if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP):
            return usage_error(f"path {rel!r} cannot be stored here ({reason}); use a "
                               "shorter name or fewer nested folders")
        return exc

    # --- reads ------------------------------------------------------------------------

    def read(self, path: str) -> str:
        """Exact text of the file (UTF-8, line endings untouched); 44 when absent."""
        return self._reader(path, None)()

    def _reader(self, given: str, dirs: dict[str, bool] | None) -> Callable[[], str]:
        """A call reading ``given`` (bad paths raise now, before anything is read).

        Where the kernel names open files (``/proc/self/fd``) the file is opened first
        and the opened file's real path checked: no window between check and use, no
        ``lstat`` per path component. Elsewhere the path is checked first (``_real``)."""
        if _FD_LINKS:
            rel = normalize_path(given)
            return functools.partial(self._read_file, given, rel, f"{self._prefix}/{rel}",
                                     verify=True)
        rel, real = self._real(given, dirs)
        return functools.partial(self._read_file, given, rel, real, verify=False)

    def _missing(self, rel: str) -> EchoError:
        return not_found(f"no file {rel!r} in the vault {self.root}; check the path "
                         "(`echo-memory ls` or `echo-memory recall` can find it)")

    def _read_file(self, given: str, rel: str, full: str, *, verify: bool) -> str:
        """The text of the regular file ``full`` (see ``_read_file_bytes``)."""
        return self._decode(rel, self._read_file_bytes(given, rel, full, verify=verify))

    def _read_file_bytes(self, given: str, rel: str, full: str, *, verify: bool) -> bytes:
        """The bytes of the regular file ``full`` (a folder, FIFO or device is 44, and
        opening never waits on one); ``verify``: check what was opened is inside the root."""
        try:
            fd = os.open(full, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
        except (FileNotFoundError, NotADirectoryError):
            if verify:
                self._real(given)  # missing behind a link leading outside: refused, not 44
            self._require_root()
            raise self._missing(rel) from None
        try:
            if verify:
                real = os.readlink(f"{_FD_LINKS}/{fd}")
                if real != self._prefix and not real.startswith(f"{self._prefix}/"):
                    raise _escape_error(given, real)
            st = os.fstat(fd)
            if not _stat.S_ISREG(st.st_mode):
                raise self._missing(rel)
            return batch_read.read_whole(fd, st.st_size)
        finally:
            os.close(fd)

    def read_bytes(self, path: str) -> bytes:
        """The file's bytes exactly as stored, whatever they hold (an image, a PDF); 44
        when absent, 2 for a bad path or one leading outside the root through a link."""
        if _FD_LINKS:
            rel = normalize_path(path)
            return self._read_file_bytes(path, rel, f"{self._prefix}/{rel}", verify=True)
        rel, real = self._real(path)
        return self._read_file_bytes(path, rel, real, verify=False)

    @staticmethod
    def _decode(rel: str, data: bytes) -> str:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise EchoError(
                f"file {rel!r} is not valid UTF-8 ({exc.reason} at byte {exc.start}); "
                "re-save it as UTF-8",
                ExitCode.FAILURE,
            ) from None

    def read_many(self, paths: Sequence[str]) -> dict[str, str | None]:
        """Texts keyed by the given paths; a missing file maps to ``None``.

        Bad paths raise (exit 2) before anything is read; so does a file reached through
        a symlink leading outside the root (no text is returned).
        """
        if batch_read.AVAILABLE and len(paths) > 1:
            rels = [normalize_path(given) for given in paths]
            texts = batch_read.read_by_folder(self._prefix, list(dict.fromkeys(rels)),
                                              self._read_or_none, self._decode)
            return {given: texts[rel] for given, rel in zip(paths, rels)}
        dirs: dict[str, bool] = {}
        readers = [(given, self._reader(given, dirs)) for given in paths]
        return {given: none_if_absent(read) for given, read in readers}

    def _read_or_none(self, rel: str) -> str | None:
        """``read(rel)``, None for a file that is not there."""
        return none_if_absent(self._reader(rel, None))

    def exists(self, path: str) -> bool:
        """Whether ``path`` names a file (a folder is not a file)."""
        _, real = self._real(path)
        if os.path.isfile(real):
            return True
        self._require_root()
        return False

    def stat(self, path: str) -> FileStat:
        """Size in bytes and mtime (epoch seconds) of the file; 44 when absent."""
        rel, real = self._real(path)
        try:
            st = os.stat(real)
        except (FileNotFoundError, NotADirectoryError):
            st = None
        if st is None or not _stat.S_ISREG(st.st_mode):
            self._require_root()
            raise not_found(f"no file {rel!r} in the vault {self.root}; check the path")
        return FileStat(path=rel, size=st.st_size, mtime=st.st_mtime)

    def list(self, prefix: str = "") -> list[str]:
        """Sorted vault paths of the files under the folder ``prefix`` (recursive).

        Hidden files and folders (a name starting with ``.``: ``.obsidian``, ``.git``,
        temp and lock files) are skipped, as are symlinks resolving outside the vault.
        A prefix that is not a folder gives ``[]``.
        """
        rel = normalize_path(prefix, allow_root=True)
        if any(_is_hidden(part) for part in rel.split("/") if part):
            return []
        self._require_root()
        # one walker for this and the change probe's listing (``tree_scan.list_tree``):
        # os.scandir on strings, hidden entries pruned, linked folders not descended,
        # linked files kept when they resolve to a file inside the vault
        return list_tree(self._prefix, rel)[0]

    # --- writes -----------------------------------------------------------------------

    def write(self, path: str, text: str) -> None:
        """Atomically create or replace the file with ``text`` (UTF-8, no newline
        translation); parent folders are created. Readers see old or new, never torn.
        A vault that takes no writes (full, read-only) raises ``VaultNotWritable``."""
        rel, real = self._write_target(path)
        self._prepare_parent(rel, real)
        self._write_atomic(rel, real, text.encode("utf-8"))

    def write_unless_changed(self, path: str, text: str, expected: str | None) -> bool:
        """``write`` while the file still holds exactly ``expected`` (None: absent),
        checked after the new text is on disk, just before the rename: a person's edit
        saved while the caller worked is never overwritten (``ConditionalWrite``). False,
        nothing written, when it changed (or is a folder, ``expected`` being text)."""
        rel, real = self._write_target(path)
        if expected is not None and real.is_dir():
            return False
        self._prepare_parent(rel, real)
        with _path_lock(real):
            return self._write_atomic(rel, real, text.encode("utf-8"),
                                      _holds(real, expected, self._ours.get(real)))

    def _prepare_parent(self, rel: str, real: Path) -> None:
        """Check the root and the target, and create the target's parent folders."""
        self._require_root()
        if real.is_dir():
            raise usage_error(f"path {rel!r} is a folder in the vault; give a file path")
        try:
            os.makedirs(real.parent, exist_ok=True)
        except (FileExistsError, NotADirectoryError):
            raise usage_error(
                f"cannot create {rel!r}: a parent of it is a file, not a folder; "
                "choose another path"
            ) from None
        except RecursionError:
            raise usage_error(f"path {rel!r} is nested too deeply; use fewer folders") from None
        except OSError as exc:
            raise self._write_error(rel, exc) from None

    def _temp_dir(self, target_folder: Path) -> Path:
        """The folder for the temp file of a write into ``target_folder``: the vault's
        ``_agent/.tmp`` (swept of dead writers' leftovers on the first write and then every
        ``SWEEP_EVERY`` s), or the target folder itself when that is not usable."""
        tmp_dir = f"{self._prefix}/{TEMP_DIR}"
        now = time.monotonic()
        if self._temp_ok is None or now - self._swept_at > SWEEP_EVERY:
            try:
                os.makedirs(tmp_dir, exist_ok=True)
                self._temp_ok = _stat.S_ISDIR(os.lstat(tmp_dir).st_mode)
            except OSError:
                self._temp_ok = False
            if self._temp_ok:
                sweep_stale(tmp_dir)
            self._swept_at = now
        return Path(tmp_dir) if self._temp_ok else target_folder

    def _write_atomic(self, rel: str, real: Path, data: bytes,
                      still: Callable[[], bool] | None = None) -> bool:
        """Replace ``real`` with ``data`` (see ``_stage_and_rename``); False when
        ``still()`` said no just before the rename (nothing written)."""
        folder = real.parent
        try:
            mode: int | None = real.stat().st_mode & 0o7777
        except OSError:
            mode = None
        staging = self._temp_dir(folder)
        try:
            done = self._stage_and_rename(staging, real, data, mode, still)
        except OSError as exc:
            if exc.errno == errno.EXDEV and staging != folder:  # another filesystem
                done = self._stage_and_rename(folder, real, data, mode, still)
            else:
                raise self._write_error(rel, exc) from None
        if done:
            fsync_dir(folder)
            if len(self._ours) >= _OURS_MAX:
                self._ours.clear()
            self._ours[real] = signature(real)
        return done

    @staticmethod
    def _stage_and_rename(staging: Path, real: Path, data: bytes, mode: int | None,
                          still: Callable[[], bool] | None = None) -> bool:
        """Write ``data`` to a new owner-tagged temp file in ``staging``, fsync it and
        rename it over ``real`` unless ``still()`` (asked just before the rename) says
        no: then False; the temp file is removed on any failure and on a no."""
        while True:
            tmp = staging / temp_name(real.name)
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
                break
            except FileExistsError:
                continue
        try:
            try:
                if mode is not None:
                    os.fchmod(fd, mode)
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            finally:
                os.close(fd)
            if still is not None and not still():
                os.unlink(tmp)
                return False
            os.replace(tmp, real)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return True

    def append_line(self, path: str, line: str) -> bool:
        """Append ``line`` as a line of the file unless an identical line is present.

        Returns True when appended, False when the line was already there (no write).
        The file is created when missing; an existing last line without a newline gets
        one first; the file's line ending (CRLF or LF) is used. Atomic, and serialised
        per file within the process; hold ``lock()`` to serialise across processes.
        """
        rel, real = self._write_target(path)
        stripped = single_line(rel, line)
        self._prepare_parent(rel, real)
        with _path_lock(real):
            read = functools.partial(self._read_file, path, rel, str(real), verify=False)
            for _ in range(APPEND_ATTEMPTS):  # a person saving the file meanwhile: again
                current = none_if_absent(read)
                updated = with_line(current or "", stripped)
                if updated is None:
                    return False
                if self._write_atomic(rel, real, updated.encode("utf-8"),
                                      _holds(real, current, self._ours.get(real))):
                    return True
            raise EditedMeanwhile(rel)

    def delete(self, path: str) -> None:
        """Remove the file; 44 when absent (or when ``path`` is a folder)."""
        rel, real = self._write_target(path)
        if not real.is_file():
            raise not_found(f"no file {rel!r} in the vault {self.root}; nothing to delete")
        try:
            os.unlink(real)
        except FileNotFoundError:
            raise not_found(
                f"no file {rel!r} in the vault {self.root}; nothing to delete"
            ) from None
        fsync_dir(real.parent)

    # --- backend ----------------------------------------------------------------------

    def lock(self, timeout: float = 10.0) -> AbstractContextManager[None]:
        """The cross-process vault lock (``<root>/_agent/.lock``); re-entrant within a
        thread, exclusive between threads and processes; exit 75 after ``timeout`` s."""
        return vault_lock_for(self.root).hold(timeout, self.stale_after)

    def create(self) -> None:
        """Create the root folder (and parents) if absent; existing files are untouched."""
        if self.root.exists() and not self.root.is_dir():
            raise VaultMissing(f"vault path {self.root} exists but is not a folder")
        self.root.mkdir(parents=True, exist_ok=True)

    def ping(self) -> None:
        """Return when the root folder exists, else raise ``BackendUnavailable``."""
        self._require_root()


#: Times ``append_line`` reads and writes again when the file changed between its read
#: and its rename (a person saving it: their text is kept, the line added to it).
APPEND_ATTEMPTS = 3


_OURS_MAX = 4096


def _holds(real: Path, expected: str | None, ours: Signature | None) -> Callable[[], bool]:
    """Whether ``real`` holds exactly ``expected`` now (None: it is absent) and no save
    of it is in progress (``save_in_progress.settled``), asked just before a rename so a
    person's save is never replaced, nor a note rebuilt from part of one."""
    wanted = None if expected is None else expected.encode("utf-8")

    def check() -> bool:
        try:
            return settled(real, ours=ours) and real.read_bytes() == wanted
        except FileNotFoundError:
            return wanted is None

    return check
