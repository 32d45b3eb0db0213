"""What ``export`` and ``import`` report (``TransferResult``) and how they say it, and the
error a transfer that stops part-way raises (``stopped``)."""

from __future__ import annotations

from pathlib import Path

import attrs

from echo_core.errors import EchoError, UnavailableError, usage_error
from echo_core.ops.vault_transfer_io import TransferSkip


@attrs.frozen
class TransferResult:
    """What a transfer did: ``source`` and ``target`` (a folder, or the vault's
    identity), ``files`` written and their ``bytes``, ``unchanged`` (already there with
    the same bytes), ``replaced`` (already there with other bytes; only with force),
    ``skipped`` (not copied, and why) and, for an import, the notes ``indexed`` and
    ``kept_own``: the vault's own files (its marker, ``_agent/index/``) that differed in
    the folder and were kept as the vault has them, and ``set_aside``: the folder the old
    bytes of replaced files that are not text went to (no note history holds them);
    ``hidden``: the hidden entries of the folder left out (a hidden folder once, with a
    trailing ``/``), which are not vault files and do not make the result fail;
    ``history_versions``: the note-history versions of the folder's ``.echo-history/``
    added to the vault's history, ``history_already`` those it had, and
    ``history_skipped`` the history entries left out (and why: they do not make the
    result fail either)."""

    source: str
    target: str
    files: int
    bytes: int
    unchanged: int
    replaced: tuple[str, ...]
    skipped: tuple[TransferSkip, ...]
    indexed: int = 0
    kept_own: tuple[str, ...] = ()
    set_aside: str = ""
    #: an import left the vault without its marker (a plain folder into a new vault)
    not_a_vault: bool = False
    hidden: tuple[str, ...] = ()
    history_versions: int = 0
    history_already: int = 0
    history_skipped: tuple[TransferSkip, ...] = ()


def folder_arg(raw: str, what: str) -> Path:
    """The folder an option names, absolute; exit 2 when it is empty."""
    if not raw.strip():
        raise usage_error(f"{what} is empty; give a folder path")
    return Path(raw).expanduser().resolve()


def transfer_message(verb: str, result: TransferResult) -> str:
    """The one-line summary of ``result`` (``verb``: "exported" or "imported")."""
    head = (f"{verb} {result.files} files ({result.bytes} bytes) from {result.source} "
            f"to {result.target}")
    parts = [head]
    if result.unchanged:
        parts.append(f"{result.unchanged} already there unchanged")
    if result.replaced:
        parts.append(f"replaced {len(result.replaced)} that differed")
    if result.skipped:
        parts.append(f"skipped {len(result.skipped)} (see the list)")
    if result.hidden:
        many = "entries" if len(result.hidden) > 1 else "entry"
        parts.append(f"left out {len(result.hidden)} hidden {many} (listed; hidden files "
                     "are not vault files)")
    if result.history_versions or result.history_already or result.history_skipped:
        parts.append(f"note history: imported {result.history_versions} version(s), "
                     f"{result.history_already} already there, skipped "
                     f"{len(result.history_skipped)} entr"
                     f"{'y' if len(result.history_skipped) == 1 else 'ies'}"
                     f"{' (see the list)' if result.history_skipped else ''}")
    if result.indexed:
        parts.append(f"{result.indexed} notes indexed")
    if result.kept_own:
        parts.append(f"kept the vault's own {', '.join(result.kept_own)} (only init and "
                     "sweep write those)")
    if result.set_aside:
        parts.append(f"the replaced files that are not text were copied to {result.set_aside}")
    if result.not_a_vault:
        parts.append("the vault has no marker yet (the folder was not an echo-memory vault): "
                     "run `echo-memory init` on it to use it (init keeps every file)")
    return "; ".join(parts)


def stopped(exc: BaseException, done: int, total: int, verb: str, again: str) -> EchoError:
    """The error a transfer (``verb``: "import", "export") raises when ``exc`` stopped it
    after ``done`` of ``total`` files: it says how far it got and that running it again
    (``again``: how, in words) finishes it. The exit code is ``exc``'s (1 for an ``OSError``); a vault that
    went away is an ``UnavailableError`` (69) but never a ``BackendUnavailable``, whose
    report would say nothing was written."""
    cause = exc.message if isinstance(exc, EchoError) else f"{exc}"
    message = (f"the {verb} stopped after writing {done} of {total} files: "
               f"{cause}. The files written are whole and kept; fix that, then run "
               f"{again} to finish it (files already there with the same bytes are "
               "left alone)")
    if isinstance(exc, UnavailableError):
        return UnavailableError(message)
    if isinstance(exc, EchoError):
        return EchoError(message, exc.code)
    return EchoError(message)
