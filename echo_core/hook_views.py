"""The narrow, typed views hooks receive instead of the whole ``EchoContext``.

Each is a ``Protocol`` the context satisfies structurally, listing only what that kind of
hook may rely on; a plugin typed against it keeps working whatever else the context
grows. ``GateContext`` (``echo_core.gating``) and ``BuildContext`` (``echo_core.ops.build``)
are the views of the gate and build-target hooks; ``CliState`` is what a raw CLI command
finds in click's context object.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # annotations only: this module is on every start-up's path
    from pathlib import Path

    from echo_core.config import Config
    from echo_core.context import EchoContext
    from echo_core.entity_cache import EntityNames
    from echo_core.plugins import PluginHost
    from echo_core.protocols import Tokenizer
    from echo_core.vault import Vault


class EventContext(Protocol):
    """What an event listener (``on_*``) sees: settings, time, the state dir and the vault
    (read it; a listener must not write notes)."""

    @property
    def config(self) -> Config: ...

    @property
    def env(self) -> Mapping[str, str]: ...

    @property
    def state_dir(self) -> Path: ...

    @property
    def vault(self) -> Vault: ...

    def today(self) -> _dt.date: ...

    def now(self) -> _dt.datetime: ...


class ExpandContext(Protocol):
    """What a query expander sees: entity name lookups and the active tokenizer."""

    @property
    def entity_names(self) -> EntityNames: ...

    @property
    def tokenizer(self) -> Tokenizer: ...


class CliState(Protocol):
    """What a raw CLI command (``register_commands``) finds in ``click``'s context
    object: the plugin host, the ``--vault`` / ``--state-dir`` / ``--json`` flags (the
    CLI adds them to every command) and the invocation's ``EchoContext``, built on first
    use (``context()`` may raise ``EchoError``, e.g. for a broken config)::

        state: CliState = click.get_current_context().obj
    """

    host: PluginHost
    vault: str | None
    state_dir: str | None
    as_json: bool

    def context(self) -> EchoContext: ...
