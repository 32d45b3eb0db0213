"""``plugins``: every plugin the host knows, its version, hooks and status, and every
registration problem (a name taken by two plugins, a malformed registration)."""

from __future__ import annotations

from collections.abc import Mapping

import attrs

from echo_core.actions import Action
from echo_core.models import Envelope
from echo_core.plugins import PluginHost, PluginRecord
from echo_core.registrations import NO_VALIDATORS, RegistrationProblem, RegistrationValidator


@attrs.frozen
class PluginsResult:
    """All plugin records, working ones first, and the registration problems."""

    plugins: tuple[PluginRecord, ...]
    problems: tuple[RegistrationProblem, ...] = ()


def list_plugins(
    host: PluginHost, validators: Mapping[str, RegistrationValidator] = NO_VALIDATORS
) -> Envelope[PluginsResult]:
    """Describe every plugin and check every registration (``host.check_registrations``).

    ``ok`` is False when a registration problem exists (the message names the plugins
    involved); a plugin that failed to load is listed with its error but does not fail.
    """
    from echo_core.operations.registry import registration_problems

    problems = tuple(host.check_registrations(validators) if validators
                     else registration_problems(host))
    records = sorted(host.records.values(), key=lambda r: (r.status != "ok", r.name))
    failed = [r.name for r in records if r.status == "failed"]
    message = f"{len(host.plugin_names())} plugins loaded"
    if failed:
        message += f"; failed: {', '.join(failed)}"
    if problems:
        message += f"; {len(problems)} registration problem(s): " + "; ".join(
            p.message for p in problems)
    return Envelope(not problems, Action.LISTED, message, PluginsResult(tuple(records), problems))
