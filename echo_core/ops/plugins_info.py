"""``plugins``: every plugin the host knows, its version, hooks and status."""

from __future__ import annotations

import attrs

from echo_core.actions import Action
from echo_core.models import Envelope
from echo_core.plugins import PluginHost, PluginRecord


@attrs.frozen
class PluginsResult:
    """All plugin records, working ones first."""

    plugins: tuple[PluginRecord, ...]


def list_plugins(host: PluginHost) -> Envelope[PluginsResult]:
    """Describe every plugin; ``ok`` is False when any plugin failed."""
    records = sorted(host.records.values(), key=lambda r: (r.status != "ok", r.name))
    failed = [r.name for r in records if r.status == "failed"]
    message = f"{len(host.plugin_names())} plugins loaded"
    if failed:
        message += f"; failed: {', '.join(failed)}"
    return Envelope(True, Action.LISTED, message, PluginsResult(tuple(records)))
