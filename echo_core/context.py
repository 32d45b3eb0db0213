"""``EchoContext``: what every operation receives — config, plugins, vault, clock, state.

Built once per process (per CLI call, per server); everything heavy is resolved lazily so
``--help`` and quick verbs stay fast. That goes for imports too: the module behind each
part (entities, the entity name cache, the note history, the ranker upkeep, the routing
manifest and its TOML, own writes, the vault) is imported by the property that builds the
part, so a hook or verb pays only for the parts it uses (issue 15: ~30 ms of module
imports otherwise, on every hook call).
"""

from __future__ import annotations

import datetime as _dt
import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from echo_core import clock
from echo_core.config import Config, resolve_config, state_dir_for
from echo_core.errors import EchoError, ExitCode

if TYPE_CHECKING:  # each imported where it is first needed (see the module docstring)
    import logging

    from echo_core.entities import EntityStore
    from echo_core.entity_cache import EntityNames
    from echo_core.history import NoteHistory
    from echo_core.models import Note
    from echo_core.ops.note_views import NoteViews
    from echo_core.own_writes import OwnWrites
    from echo_core.plugins import PluginHost
    from echo_core.protocols import Queue, Ranker, Storage, Tokenizer
    from echo_core.ranker_upkeep import RankerUpkeep
    from echo_core.routing import RoutingManifest
    from echo_core.vault import Vault


def _log() -> logging.Logger:
    """The ``echo_memory`` logger (``logging`` is imported when something is logged)."""
    import logging

    return logging.getLogger("echo_memory")


class EchoContext:
    """The environment of one process's operations."""

    def __init__(
        self,
        config: Config,
        host: PluginHost,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.config = config
        self.host = host
        self.env: Mapping[str, str] = os.environ if env is None else env
        #: True once this process knows the state dir records the vault as seen
        #: (``echo_core.vault_seen``).
        self.vault_seen = False

    # -- time ---------------------------------------------------------------------

    def today(self) -> _dt.date:
        """Today's date (``ECHO_TODAY`` / ``ECHO_NOW`` pin it). A replayed write is told its
        own day explicitly (``ops.outbox_queue.Replay``); this never changes."""
        return clock.today(self.env)

    def now(self) -> _dt.datetime:
        """The current time (``ECHO_NOW`` pins it)."""
        return clock.now(self.env)

    # -- vault --------------------------------------------------------------------

    @functools.cached_property
    def manifest(self) -> RoutingManifest:
        """The routing manifest."""
        from echo_core.routing import load_manifest

        return load_manifest()

    @functools.cached_property
    def storage(self) -> Storage:
        """The backend picked by the vault URL's scheme (exit 78 when none serves it)."""
        scheme = self.config.scheme
        factories = self.host.collect("register_storage")
        factory = factories.get(scheme)
        if factory is None:
            known = ", ".join(sorted(factories)) or "none"
            from echo_core.vault_seen import shown_vault

            raise EchoError(
                f"no storage plugin serves vault URL scheme {scheme!r} "
                f"(vault {shown_vault(self.config.vault.value)!r}); installed schemes: {known}. "
                "Install the backend plugin or fix the vault setting.",
                ExitCode.NOT_CONFIGURED,
            )
        storage: Storage = factory(self.config.vault.value, self.config.backend_options(scheme))
        return storage

    @functools.cached_property
    def vault(self) -> Vault:
        """The vault, with note events wired to the plugin hooks and the active ranker, and
        the texts it replaces or deletes kept in ``history``."""
        return self._make_vault(keep_ranker=True)

    def vault_for_rebuild(self) -> Vault:
        """The vault as ``vault`` gives it, except that its writes leave the recall index
        alone: for whole-vault work that rebuilds the index from the texts it writes right
        after writing them (the full sweep). Event hooks and the note history are kept.
        Killed in between, the written notes' new stamps bring them to the next fast sweep."""
        return self._make_vault(keep_ranker=False)

    def _make_vault(self, *, keep_ranker: bool) -> Vault:
        from echo_core.vault import Vault

        if not keep_ranker:
            return Vault(self.storage, self.manifest, on_written=self._announce_written,
                         on_deleted=self._announce_deleted, keep_prior=self.keep_prior_text)
        return Vault(self.storage, self.manifest, on_written=self._note_written,
                     on_deleted=self._note_deleted, keep_prior=self.keep_prior_text,
                     on_writing=self.own_writes.writing)

    @functools.cached_property
    def own_writes(self) -> OwnWrites:
        """The notes this context wrote in the running operation, recorded as seen once
        it succeeds (``echo_core.own_writes``; ``run_operation`` settles them)."""
        from echo_core.own_writes import OwnWrites

        return OwnWrites(self.storage)

    @functools.cached_property
    def history(self) -> NoteHistory:
        """The per-path version rings of this vault's notes (``<state_dir>/history``, or in
        the store itself when the backend shares it: ``echo_core.history_files``)."""
        from echo_core.history import NoteHistory
        from echo_core.history_files import history_files

        return NoteHistory(history_files(self.storage, self.state_dir))

    @functools.cached_property
    def entities(self) -> EntityStore:
        """The vault's entity index store (cached per process, re-read when it changes)."""
        from echo_core.entities import EntityStore

        return EntityStore(self.storage)

    @functools.cached_property
    def entity_names(self) -> EntityNames:
        """Entity lookups (``EntityLookup``: get, exact, named, fuzzy, document
        frequency, ...) from a per-machine SQLite cache in the state dir, synced with the
        entity store on use: a fresh process never builds the full ``EntityIndex``.
        Capture syncs it under the vault lock (``one_snapshot``) and answers from it.
        """
        from echo_core.entity_cache import FILE_NAME, EntityNames

        return EntityNames(self.storage, self.state_dir / FILE_NAME)

    @functools.cached_property
    def note_views(self) -> NoteViews:
        """Parsed views of recalled notes memoised by text (``ops.note_views``)."""
        from echo_core.ops.note_views import NoteViews

        return NoteViews()

    @functools.cached_property
    def tokenizer(self) -> Tokenizer:
        """The tokenizer named by config ``tokenizer`` (exit 78 when not installed)."""
        obj: Tokenizer = self._pick("register_tokenizers", self.config.tokenizer, "tokenizer")
        return obj

    @functools.cached_property
    def ranker_upkeep(self) -> RankerUpkeep:
        """The ranker named by config ``recall`` (``bm25``, warned once, when that one
        cannot run here: ``echo_core.ranker_choice``), opened on this vault's state dir,
        and how the core keeps it current (``echo_core.ranker_upkeep``): a persistent
        ranker is this context's own; a plain one is shared by every context of the
        process. ``ranker_upkeep.name`` is the ranker in use."""
        from echo_core.ranker_choice import build_ranker, chosen_ranker
        from echo_core.ranker_upkeep import open_ranker

        registered = self.host.collect("register_rankers")
        path = self.config.config_path
        name, factory = chosen_ranker(registered, self.config.recall, path)
        folder = self.state_dir / "recall"  # each ranker keeps its own subfolder in it
        folder.mkdir(parents=True, exist_ok=True)
        key = (factory, name, self.config.tokenizer, str(folder))
        built: list[str] = []

        def make() -> Ranker:
            used, ranker = build_ranker(registered, name, factory, self.tokenizer,
                                        str(folder), path, self.storage)
            built.append(used)
            return ranker

        upkeep = open_ranker(key, make, self.storage, folder)
        upkeep.name = built[0] if built else name
        return upkeep

    @property
    def ranker(self) -> Ranker:
        """The active ranker (config ``recall``). Search through ``ops.recall`` or
        ``ranker_upkeep.search``, which build a plain ranker from the corpus first."""
        return self.ranker_upkeep.ranker

    def _pick(self, hook_name: str, name: str, setting: str) -> Any:
        registered = self.host.collect(hook_name)
        if name not in registered:
            known = ", ".join(sorted(registered)) or "none installed"
            raise EchoError(
                f"config {setting} = {name!r} but no plugin registers it (available: {known}); "
                f"install the plugin or set {setting} in {self.config.config_path}",
                ExitCode.NOT_CONFIGURED,
            )
        return registered[name]

    @functools.cached_property
    def queue(self) -> Queue | None:
        """The offline outbox (config ``queue``, default ``outbox``), or None when no
        queue plugin is installed."""
        queues = self.host.collect("register_queues")
        factory = queues.get(str(self.config.raw.get("queue", "outbox")))
        if factory is None:
            return None
        queue: Queue = factory(str(self.state_dir))
        return queue

    @functools.cached_property
    def state_dir(self) -> Path:
        """The per-machine state dir of this vault (created on first use)."""
        path = state_dir_for(self.config.state_base.value, self.storage.identity)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EchoError(
                f"cannot create the state dir {path} ({exc.strerror or exc}); point "
                "ECHO_STATE_DIR (or --state-dir) at a writable folder", ExitCode.NOT_CONFIGURED,
            ) from None
        return path

    # -- events -------------------------------------------------------------------

    def _announce_written(self, note: Note) -> None:
        self._emit("on_note_written", note=note, ctx=self)
        self._track_always_load({note.path: note.text})

    def _announce_deleted(self, path: str) -> None:
        self._emit("on_note_deleted", path=path, ctx=self)
        self._track_always_load({path: None})

    def _track_always_load(self, changes: Mapping[str, str | None]) -> None:
        from echo_core.ops.always_load import track_changes

        track_changes(self.state_dir, changes, self.today())

    def _note_written(self, note: Note) -> None:
        self._keep_ranker_current(lambda upkeep: upkeep.note_written(note))
        self._announce_written(note)  # after the ranker, as the hookspec promises
        self.own_writes.written(note.path, note.text)

    def _note_deleted(self, path: str) -> None:
        self._keep_ranker_current(lambda upkeep: upkeep.note_deleted(path))
        self._announce_deleted(path)
        self.own_writes.written(path, None)

    def _keep_ranker_current(self, change: Callable[[RankerUpkeep], None]) -> None:
        """Apply a note change to the active ranker. A ranker that is not installed is
        skipped (``recall`` reports it); a failing one is logged, never fails the write
        (raised when the host is strict), like an event listener."""
        try:
            upkeep = self.ranker_upkeep
        except EchoError as exc:
            _log().debug("recall index not kept current: %s", exc.message)
            return
        except Exception:  # the note is written: a ranker failing to load never fails it
            if self.host.strict:
                raise
            _log().warning("ranker %r could not be loaded: a note change was not indexed "
                           "(run `echo-memory reindex`)", self.config.recall, exc_info=True)
            return
        try:
            change(upkeep)
        except Exception:
            if self.host.strict:
                raise
            _log().warning("ranker %r: a note change was not indexed (run `echo-memory "
                        "reindex`)", self.config.recall, exc_info=True)

    def keep_prior_text(self, path: str, text: str) -> None:
        """Keep the text a write replaces. A text that cannot be kept aborts the write
        (exit 78): an overwrite without its undo is not made."""
        try:
            self.history.keep(path, text, saved_at=self.now().isoformat(timespec="seconds"))
        except OSError as exc:
            raise EchoError(
                f"cannot keep the current text of {path} in the note history "
                f"({exc.strerror or exc} in {self.state_dir / 'history'}), so it was not "
                "overwritten; make the state dir writable or point ECHO_STATE_DIR at a "
                "writable folder", ExitCode.NOT_CONFIGURED) from None

    def _emit(self, hook_name: str, **kwargs: Any) -> None:
        """Call an event hook; a failing listener is logged, never fails the write."""
        try:
            getattr(self.host.hook, hook_name)(**kwargs)
        except Exception:
            if self.host.strict:
                raise
            _log().warning("event %s: a plugin failed", hook_name, exc_info=True)


def create_context(
    *,
    vault: str | None = None,
    state_dir: str | None = None,
    env: Mapping[str, str] | None = None,
    host: PluginHost | None = None,
    tolerate_config_problems: bool = False,
) -> EchoContext:
    """Resolve config and build (or take) a plugin host honouring config ``disabled``.
    ``tolerate_config_problems``: see ``resolve_config`` (for doctor)."""
    env = os.environ if env is None else env
    config = resolve_config(vault=vault, state_dir=state_dir, env=env,
                            tolerate_problems=tolerate_config_problems)
    if host is None:
        from echo_core.plugins import create_host

        host = create_host(disabled=config.disabled, env=env)
    return EchoContext(config, host, env)
