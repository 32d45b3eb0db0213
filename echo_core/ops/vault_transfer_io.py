"""The two ends of ``export`` / ``import``: a plain folder, and the vault's storage.

A folder is walked as a folder vault lists itself (``folder_files``): regular files
only, with their sizes and times; hidden names (``.obsidian/``, ``.git/``, a draft
``.x.md``) left out and named in ``hidden`` (a hidden folder once, not its files;
echo-memory's own lock and temp files not at all); symbolic links skipped (and
reported: a link's target is not the vault's to copy), and so are files and folders
whose names are not valid UTF-8 (reported with the bad bytes as ``\\xNN``: a vault path
is text). A note (``.md``) is read up to ``NOTE_CAP`` bytes and one past: a larger one
is skipped. A file is written to a folder atomically (an owner-tagged temp file beside
it, given the file's time, then a rename). ``folder_links`` finds a folder vault's
links, which ``export`` skips and lists as ``import`` does.

A storage is read and written in bulk where it can: ``read_many_bytes`` /
``write_many`` (the PostgreSQL backend: a query or a transaction per thousand files),
else ``read_bytes`` / ``write_bytes`` per file, else its text: a file that is not UTF-8
then goes straight into a folder vault's folder, and is reported as not copied for any
other text-only backend. These optional methods are duck-typed here; the
``Storage`` protocol does not change. A write that fails (a full disk) raises: a
transfer stops on it rather than skip the file; only the files the rules leave out
(a link, a name the storage refuses, bytes a text-only backend cannot hold) are skipped.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from echo_core.errors import EchoError, ExitCode, UnavailableError, usage_error
from echo_core.paths import normalize_path
from echo_core.protocols import NOT_WRITABLE_ERRNOS, BackendUnavailable, Storage
from echo_core.tempfiles import temp_name
from echo_core.text_source import MAX_SOURCE_BYTES
from echo_core.write_scope import text_problem

#: Files read or written per batch (and per progress report).
CHUNK = 500
#: Threads reading a storage that has no bulk read (a remote one answers in parallel).
_READERS = 8
#: The most bytes one note may hold to be imported (every text source's cap:
#: ``text_source.MAX_SOURCE_BYTES``, what a note may hold through the CLI).
NOTE_CAP = MAX_SOURCE_BYTES


@attrs.frozen
class TransferSkip:
    """A file left out of the transfer, and why."""

    path: str
    reason: str


@attrs.frozen
class SourceFile:
    """One file to copy: its vault path, size in bytes and modification time (ns; 0
    when unknown)."""

    path: str
    size: int
    mtime_ns: int = 0


def is_note(path: str) -> bool:
    """Whether ``path`` is a note (``.md``), which the size cap and the indexes concern."""
    return path.endswith(".md")


def write_failure(path: str, exc: OSError) -> EchoError:
    """The error a failed write of ``path`` stops a transfer with: 69 when the target
    refuses writes (full, read-only, permission), else 1."""
    message = f"{path} cannot be written ({exc.strerror or exc})"
    if exc.errno in NOT_WRITABLE_ERRNOS:
        return UnavailableError(message)
    return EchoError(message, ExitCode.FAILURE)


@runtime_checkable
class ManyBytesReadable(Protocol):
    """A storage reading many files' bytes at once (missing -> None)."""

    def read_many_bytes(self, paths: Sequence[str]) -> dict[str, bytes | None]: ...


@runtime_checkable
class BytesReadable(Protocol):
    """A storage reading one file's bytes as stored."""

    def read_bytes(self, path: str) -> bytes: ...


@runtime_checkable
class ManyWritable(Protocol):
    """A storage writing many files (text or bytes) in one go."""

    def write_many(self, files: Mapping[str, str | bytes]) -> None: ...


@runtime_checkable
class BytesWritable(Protocol):
    """A storage writing one file's bytes as given."""

    def write_bytes(self, path: str, data: bytes) -> None: ...


# --- the vault's storage ------------------------------------------------------------------


def _one_reader(storage: Storage) -> Callable[[str], bytes]:
    if isinstance(storage, BytesReadable):
        return storage.read_bytes
    return lambda path: storage.read(path).encode("utf-8")


def read_vault(storage: Storage, paths: Sequence[str],
               skipped: list[TransferSkip]) -> dict[str, bytes]:
    """The bytes of ``paths`` in the vault; a file that vanished or cannot be read is
    appended to ``skipped``. ``BackendUnavailable`` propagates."""
    if isinstance(storage, ManyBytesReadable):
        got = storage.read_many_bytes(paths)
        found = {p: data for p, data in got.items() if data is not None}
        skipped.extend(TransferSkip(p, "deleted while the transfer ran")
                       for p, data in got.items() if data is None)
        return found
    read = _one_reader(storage)

    def one(path: str) -> bytes | TransferSkip:
        try:
            return read(path)
        except BackendUnavailable:
            raise
        except EchoError as exc:
            gone = exc.code == ExitCode.NOT_FOUND
            return TransferSkip(path, "deleted while the transfer ran" if gone else exc.message)

    with ThreadPoolExecutor(max_workers=_READERS) as pool:
        results = list(pool.map(one, paths))
    found = {}
    for path, result in zip(paths, results, strict=True):
        if isinstance(result, TransferSkip):
            skipped.append(result)
        else:
            found[path] = result
    return found


def write_vault(storage: Storage, files: Mapping[str, bytes], skipped: list[TransferSkip],
                landed: list[str] | None = None,
                after: Callable[[str], None] | None = None) -> list[str]:
    """Write ``files`` into the vault; returns the paths written, each also appended to
    ``landed`` as it lands (so a caller knows them when a later one fails) and passed to
    ``after`` (one file at a time where the storage writes them so; a bulk write's all
    at once after it). A storage that takes only text gets each UTF-8 file as text; any
    other file, and one the storage refuses (a path through a symlink it will not write
    through), is appended to ``skipped``. A failed write raises (``BackendUnavailable``,
    or ``write_failure``)."""
    written: list[str] = [] if landed is None else landed
    start = len(written)
    if not files:
        return []
    if isinstance(storage, ManyWritable):
        storage.write_many(dict(files))
        written.extend(files)
        if after is not None:
            for path in files:
                after(path)
        return written[start:]
    for path, data in files.items():
        if isinstance(storage, BytesWritable):
            storage.write_bytes(path, data)
        else:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                if not _write_attachment(storage, path, data, skipped):
                    continue
            else:
                try:
                    storage.write(path, text)
                except BackendUnavailable:
                    raise
                except OSError as exc:
                    raise write_failure(path, exc) from exc
                except EchoError as refused:  # a path the storage will not write (a link)
                    skipped.append(TransferSkip(path, refused.message))
                    continue
        written.append(path)
        if after is not None:
            after(path)
    return written[start:]


def _write_attachment(storage: Storage, path: str, data: bytes,
                      skipped: list[TransferSkip]) -> bool:
    """Write a file that is not text into a folder vault's folder itself (its storage
    writes text only); any other text-only backend cannot hold it: ``skipped``. A path
    that reaches through a symlink (a linked folder or file in the vault) is ``skipped``
    too: the storage's own writes refuse links leading outside the vault or to files no
    note write may change, and this write bypasses the storage. A failed write raises
    ``write_failure``."""
    folder = vault_folder(storage)
    if folder is None:
        skipped.append(TransferSkip(path, "not UTF-8 text, and this vault's backend "
                                          "stores text only; copy it by hand"))
        return False
    linked = _linked_part(folder, path)
    if linked is not None:
        skipped.append(TransferSkip(path, f"{linked} in the vault is a symlink (to "
                                          f"{os.path.realpath(folder / linked)}); not "
                                          "written through it"))
        return False
    try:
        write_file(folder, path, data)
    except OSError as exc:
        raise write_failure(path, exc) from exc
    return True


def _linked_part(folder: Path, path: str) -> str | None:
    """The first part of ``path`` (a vault path: ``a``, ``a/b``, ...) that is a symlink
    in ``folder``, None when none is (parts past a missing one cannot be links)."""
    parts = path.split("/")
    for n in range(1, len(parts) + 1):
        part = "/".join(parts[:n])
        try:
            if (folder / part).is_symlink():
                return part
        except OSError:
            return part
        if not (folder / part).exists():
            return None
    return None


def _has_undecodable(name: str) -> bool:
    """Whether ``name`` (from ``os.walk``) held bytes that are not UTF-8 (surrogates)."""
    return text_problem(name) is not None


# --- a plain folder -----------------------------------------------------------------------


_NOT_UTF8 = "name is not valid UTF-8 (shown with \\x escapes); rename it to UTF-8 to copy it"


def _shown(rel: str) -> str:
    """``rel`` as text that can be printed: undecodable bytes as ``\\xNN``."""
    return os.fsencode(rel).decode("utf-8", "backslashreplace")


def _own_hidden(rel_base: str, name: str) -> bool:
    """Whether the hidden entry ``name`` in ``rel_base`` is echo-memory's own working file
    (the vault's lock, its temp folder, an import's record under ``_agent/``; a temp file
    of an atomic write anywhere), which the hidden list does not name."""
    return rel_base == "_agent" or name.endswith(".tmp")


def folder_files(root: Path, skipped: list[TransferSkip],
                 hidden: list[str] | None = None) -> list[SourceFile]:
    """The regular files under ``root`` with their vault paths, sizes and times, sorted
    by path (module docstring for what is left out: hidden entries go to ``hidden``, a
    folder with a trailing ``/``; links, names that are not UTF-8 and names no vault can
    hold go to ``skipped``, each path printable)."""
    found: list[SourceFile] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        rel_base = base.relative_to(root).as_posix()
        kept_dirs = []
        for name in sorted(dirs):
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            if name.startswith("."):
                if hidden is not None and not _own_hidden(rel_base, name):
                    hidden.append(_shown(rel) + "/")
                continue
            if (base / name).is_symlink():
                skipped.append(TransferSkip(_shown(rel),
                                            "a symbolic link to a folder; not followed"))
                continue
            if _has_undecodable(name):
                skipped.append(TransferSkip(_shown(rel), f"a folder whose {_NOT_UTF8}"))
                continue
            kept_dirs.append(name)
        dirs[:] = kept_dirs
        for name in files:
            rel = name if rel_base == "." else f"{rel_base}/{name}"
            if name.startswith("."):
                if hidden is not None and not _own_hidden(rel_base, name):
                    hidden.append(_shown(rel))
                continue
            try:
                info = os.lstat(base / name)
            except OSError as exc:
                skipped.append(TransferSkip(_shown(rel), f"cannot be read ({exc.strerror})"))
                continue
            if not stat.S_ISREG(info.st_mode):
                skipped.append(TransferSkip(_shown(rel),
                                            "a symbolic link or special file; not copied"))
                continue
            if _has_undecodable(name):
                skipped.append(TransferSkip(_shown(rel), f"a file whose {_NOT_UTF8}"))
                continue
            try:
                found.append(SourceFile(normalize_path(rel), info.st_size, info.st_mtime_ns))
            except EchoError as exc:
                skipped.append(TransferSkip(rel, exc.message))
    found.sort(key=lambda f: f.path)
    if hidden is not None:
        hidden.sort()
    return found


def read_folder(root: Path, paths: Sequence[str],
                skipped: list[TransferSkip]) -> dict[str, bytes]:
    """The bytes of ``paths`` under ``root``; unreadable ones, and notes grown past
    ``NOTE_CAP`` since they were listed, go to ``skipped``."""
    found = {}
    for path in paths:
        try:
            with open(root / path, "rb") as handle:
                data = handle.read(NOTE_CAP + 1) if is_note(path) else handle.read()
        except OSError as exc:
            skipped.append(TransferSkip(path, f"cannot be read ({exc.strerror or exc})"))
            continue
        if is_note(path) and len(data) > NOTE_CAP:
            skipped.append(TransferSkip(path, f"a note over the {NOTE_CAP:,}-byte cap for "
                                              "one note (it grew while the import ran); "
                                              "not imported"))
            continue
        found[path] = data
    return found


def write_file(root: Path, path: str, data: bytes, mtime_ns: int = 0) -> None:
    """Write ``data`` to ``root/path`` atomically (parents created), with the
    modification time ``mtime_ns`` when given; ``OSError`` on failure."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(temp_name(target.name))
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
        if mtime_ns > 0:
            os.utime(tmp, ns=(mtime_ns, mtime_ns))
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def folder_links(root: Path) -> dict[str, str]:
    """Every symbolic link under the folder ``root`` (a folder vault's folder; hidden
    folders not walked, links not followed): path -> why it is not copied."""
    found = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        base = Path(folder)
        rel_base = base.relative_to(root).as_posix()
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in [*dirs, *files]:
            full = base / name
            if name.startswith(".") or not full.is_symlink():
                continue
            rel = _shown(name if rel_base == "." else f"{rel_base}/{name}")
            found[rel] = f"a symbolic link in the vault (to {os.path.realpath(full)}); not copied"
    return found


def folder_entries(root: Path) -> int:
    """How many entries (hidden ones too) the folder ``root`` holds; 0 when absent."""
    try:
        with os.scandir(root) as entries:
            return sum(1 for _ in entries)
    except FileNotFoundError:
        return 0


def vault_folder(storage: Storage) -> Path | None:
    """The folder of a folder vault (its identity ``file:<path>``), else None."""
    identity = getattr(storage, "identity", "")
    return Path(identity[5:]) if identity.startswith("file:") else None


def check_apart(folder: Path, storage: Storage, what: str) -> None:
    """Exit 2 when ``folder`` is the vault's own folder, inside it, or holds it."""
    own = vault_folder(storage)
    if own is None:
        return
    if folder == own or own in folder.parents or folder in own.parents:
        raise usage_error(f"{what} {folder} overlaps the vault's own folder {own}; give a "
                          "folder outside the vault")
