"""``doctor``: readiness checks, each ok / warn / fail with the fix (SPEC §5.3)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.errors import EchoError
from echo_core.models import Envelope
from echo_core.ops.write_intent import pending_intents
from echo_core.protocols import BackendUnavailable, VaultMissing
from echo_core.vault import MARKER_PATH
from echo_core.vault_seen import was_seen

if TYPE_CHECKING:
    from echo_core.context import EchoContext


@attrs.frozen
class Check:
    """One readiness line."""

    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""


@attrs.frozen
class DoctorResult:
    """Every check, in order."""

    checks: tuple[Check, ...]


def _vault_checks(ctx: EchoContext) -> list[Check]:
    checks: list[Check] = []
    try:
        storage = ctx.storage
        storage.ping()
    except (EchoError, BackendUnavailable, OSError) as exc:
        fix = "run `echo-memory init` or fix the vault setting"
        if isinstance(exc, VaultMissing) and was_seen(ctx):
            fix = ("this machine used a vault there: mount the drive or restore the folder "
                   "(queued writes wait in the outbox)")
        return [Check("vault", "fail", f"{ctx.config.vault.value}: {exc}", fix)]
    checks.append(Check("vault", "ok", f"reachable ({storage.identity})"))
    try:
        marker = ctx.vault.read_note(MARKER_PATH)
    except BackendUnavailable:
        raise
    except EchoError:
        checks.append(Check("marker", "fail", f"no {MARKER_PATH}",
                            "run `echo-memory init` to create the layout"))
        return checks
    schema = marker.frontmatter.get("schema_version")
    expected = ctx.manifest.schema_version
    if str(schema) == str(expected):
        checks.append(Check("schema", "ok", f"schema_version {schema}"))
    else:
        checks.append(Check("schema", "warn", f"schema_version {schema!r}, expected {expected}",
                            f"this version has no migration for it: keep a copy (`echo-memory backup`) "
                            f"and set schema_version: {expected} in {MARKER_PATH} only if "
                            "the layout matches"))
    checks.append(_index_check(ctx))
    pending = pending_intents(ctx)
    if pending:
        checks.append(Check("interrupted-writes", "warn",
                            f"{pending} capture(s) interrupted part-way",
                            "the next capture or `echo-memory flush` finishes them"))
    set_aside = pending_intents(ctx, (".failed", ".bad"))
    if set_aside:
        checks.append(Check("interrupted-writes", "warn",
                            f"{set_aside} interrupted capture(s) could not be finished",
                            f"look at the files in {ctx.state_dir / 'pending-writes'} (each "
                            "names the notes it meant to write), then delete them"))
    return checks


def _index_check(ctx: EchoContext) -> Check:
    try:
        count = len(ctx.entities.load())
    except BackendUnavailable:
        raise
    except EchoError as exc:
        return Check("entity-index", "fail", exc.message,
                     "restore _agent/index/ from a backup (`echo-memory backup` zips hold it)")
    return Check("entity-index", "ok", f"{count} entities")


def _plugins_check(ctx: EchoContext) -> Check:
    """Fails on a registration problem (a name two plugins take); warns on failed plugins."""
    from echo_core.operations.registry import registration_problems

    problems = registration_problems(ctx.host)
    failed = ctx.host.failed()
    failures = f"{len(failed)} failed: " + ", ".join(f"{r.name}: {r.error}" for r in failed)
    if problems:
        detail = "; ".join(p.message for p in problems) + (f"; {failures}" if failed else "")
        return Check("plugins", "fail", detail,
                     "fix or disable the plugins named (ECHO_DISABLE_PLUGINS=name or config "
                     "'disabled'); `echo-memory plugins` lists every problem")
    if failed:
        return Check("plugins", "warn", failures,
                     "run `echo-memory plugins` for details; fix or disable them")
    return Check("plugins", "ok", f"{len(ctx.host.plugin_names())} loaded")


def run_doctor(ctx: EchoContext) -> Envelope[DoctorResult]:
    """Run every check. ``ok`` is False when any check fails (warnings do not fail)."""
    cfg = ctx.config
    checks = [
        Check("python", "ok" if sys.version_info >= (3, 11) else "fail",
              sys.version.split()[0], "use Python 3.11 or newer"),
        Check("config", "ok",
              f"{cfg.config_path} ({'found' if cfg.config_exists else 'absent; defaults apply'})"),
        Check("vault-setting", "ok", f"{cfg.vault.value} (from {cfg.vault.source})"),
        Check("state-dir", "ok", f"{cfg.state_base.value} (from {cfg.state_base.source})"),
    ]
    checks.append(_plugins_check(ctx))
    checks.extend(_vault_checks(ctx))
    ok = all(c.status != "fail" for c in checks)
    bad = [c.name for c in checks if c.status != "ok"]
    message = "all checks passed" if not bad else f"attention: {', '.join(bad)}"
    return Envelope(ok, Action.DOCTOR, message, DoctorResult(tuple(checks)))
