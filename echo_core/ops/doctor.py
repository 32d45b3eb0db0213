"""``doctor``: readiness checks, each ok / warn / fail with the fix (SPEC §5.3).

Every check runs whatever an earlier one found: a broken config file is one failed check
(the rest then run on the defaults), a vault that cannot be opened or reached is one
failed check naming what to fix (the setting an error names, never ``init`` for a vault
that exists), and the outbox and plugins are reported either way.
"""

from __future__ import annotations

import datetime as _dt
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import attrs

from echo_core.actions import Action
from echo_core.entities import JOURNAL_PATH, SNAPSHOT_PATH
from echo_core.errors import EchoError, ExitCode
from echo_core.models import Envelope
from echo_core.ops.write_intent import pending_intents
from echo_core.plugins import disabled_from_env
from echo_core.protocols import BackendUnavailable, VaultMissing
from echo_core.vault import MARKER_PATH
from echo_core.vault_seen import init_advice, shown_vault, vault_gone_text, was_seen

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.registrations import RegistrationProblem

FAST_SWEEP_DAYS_ENV = "ECHO_FAST_SWEEP_DAYS"
DEFAULT_FAST_SWEEP_DAYS = 7.0
#: What a name taken twice in each registration hook is, and what becomes of it: the
#: registry's operations keep the first; ``collect`` refuses the whole hook, so whatever
#: uses it fails; the CLI makes a command two plugins add refuse to run.
CONFLICT_KINDS: dict[str, tuple[str, str]] = {
    "register_rankers": ("ranker", "recall and reindex fail"),
    "register_tokenizers": ("tokenizer", "recall and reindex fail"),
    "register_expanders": ("expander", "recall fails"),
    "register_storage": ("storage scheme", "every verb that opens a vault fails"),
    "register_queues": ("queue", "writes to an unreachable vault fail instead of queueing"),
    "register_build_targets": ("build target", "`echo-memory build` fails"),
    "register_commands": ("command", "the command refuses to run"),
}


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


def _advice(exc: BaseException) -> tuple[str, str]:
    """``(what is wrong, what to do)`` from an error whose message says both, joined by
    the first "; " (the house style); the fix is generic when it says only what."""
    message = exc.message if isinstance(exc, EchoError) else str(exc)
    what, sep, todo = message.partition("; ")
    return (what, todo) if sep and todo else (message, "")


def _vault_failure(ctx: EchoContext, exc: BaseException) -> Check:
    """The failed ``vault`` check for an error met opening or reaching the vault."""
    where = shown_vault(ctx.config.vault.value)
    what, todo = _advice(exc)
    if isinstance(exc, VaultMissing):
        if was_seen(ctx):
            fix = vault_gone_text(ctx) + " (queued writes wait in the outbox)"
        else:
            fix = ("check the vault path (--vault, ECHO_VAULT or `vault` in the config "
                   f"file), or start a new vault there: {init_advice(ctx.config.vault.value)}")
        return Check("vault", "fail", f"{where}: {exc}", fix)
    if isinstance(exc, BackendUnavailable):
        fix = todo or "check that the vault's server is running and its URL is right"
        return Check("vault", "fail", f"{where}: {what}",
                     f"{fix} (writes queue in the outbox meanwhile)")
    if isinstance(exc, EchoError) and exc.code == ExitCode.NOT_CONFIGURED:
        return Check("vault", "fail", f"{where}: {what}",
                     todo or "fix the vault's settings in the config file")
    return Check("vault", "fail", f"{where}: {what}", todo or "fix the vault setting")


def _vault_checks(ctx: EchoContext) -> list[Check]:
    checks: list[Check] = []
    try:
        storage = ctx.storage
        storage.ping()
    except (EchoError, BackendUnavailable, OSError) as exc:
        return [_vault_failure(ctx, exc)]
    checks.append(Check("vault", "ok", f"reachable ({storage.identity})"))
    from echo_core.ops.transfer_progress import doctor_lines  # an import cut short

    checks.extend(Check("import", *line) for line in doctor_lines(ctx.vault.storage))
    try:
        marker = ctx.vault.read_note(MARKER_PATH)
    except BackendUnavailable:
        raise
    except EchoError:
        fix = ("this machine used a vault there: check that the right folder or drive is "
               "there; if it is, `echo-memory sweep --apply` rewrites the marker"
               if was_seen(ctx) else
               f"run {init_advice(ctx.config.vault.value)} if this is the folder meant for "
               "memory; else fix the vault setting")
        checks.append(Check("marker", "fail", f"no {MARKER_PATH}", fix))
        return checks
    schema = marker.frontmatter.get("schema_version")
    expected = ctx.manifest.schema_version
    if str(schema) == str(expected):
        checks.append(Check("schema", "ok", f"schema_version {schema}"))
    else:
        checks.append(Check("schema", "warn", f"schema_version {schema!r}, expected {expected}",
                            f"a newer schema: upgrade echo-memory; an older or missing one: "
                            f"`echo-memory sweep --apply` stamps schema_version {expected} "
                            "(there is no migration: keep a copy first, `echo-memory backup`)"))
    checks.append(_index_check(ctx))
    pending = pending_intents(ctx)
    if pending:
        checks.append(Check("interrupted-writes", "warn",
                            f"{pending} write(s) interrupted part-way (a capture, ingest, "
                            "evolve, restore or resolve: each keeps its intent)",
                            "the next capture or `echo-memory flush` finishes them"))
    set_aside = pending_intents(ctx, (".failed", ".bad"))
    if set_aside:
        checks.append(Check("interrupted-writes", "warn",
                            f"{set_aside} interrupted write(s) could not be finished",
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
                     "run `echo-memory sweep --apply`: it sets the damaged file aside and "
                     "rebuilds the index from the notes")
    return Check("entity-index", "ok", f"{count} entities")


def _plugins_check(ctx: EchoContext, problems: list[RegistrationProblem]) -> Check:
    """Fails on a registration problem (a name two plugins take); warns on failed plugins."""
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


def _ranker_check(ctx: EchoContext) -> Check | None:
    """``ranker``: the ranker config ``recall`` names is not registered (its plugin is
    uninstalled or disabled): a warning naming the fallback every verb uses, or a
    failure when ``bm25`` is missing too. None when it is registered."""
    from echo_core.ranker_choice import FALLBACK_RANKER

    name = ctx.config.recall
    registered = ctx.host.registrations("register_rankers")
    if name in registered:
        return None
    known = ", ".join(sorted(registered)) or "none"
    detail = (f"recall = {name!r} but no installed plugin registers it (installed: {known})")
    fix = (f"install (or enable) the plugin that provides {name!r}, or set recall = "
           f"\"{FALLBACK_RANKER}\" in {ctx.config.config_path}")
    if FALLBACK_RANKER in registered:
        return Check("ranker", "warn", f"{detail}; recall uses {FALLBACK_RANKER!r} instead",
                     fix)
    return Check("ranker", "fail", f"{detail}; recall and reindex fail", fix)


def _conflict_check(problem: RegistrationProblem) -> Check:
    """One ``plugin-conflict`` line: what is taken twice, by which plugins, what is used."""
    first, second = (problem.plugins + ("", ""))[:2]
    fix = (f"disable one (ECHO_DISABLE_PLUGINS={second or first} or config 'disabled'), or "
           "uninstall it; `echo-memory plugins` lists every problem")
    if problem.hook == "register_operations" and problem.name:
        return Check("plugin-conflict", "warn",
                     f"operation {problem.name!r} is registered by plugin {first!r} and plugin "
                     f"{second!r}; in use: {first!r}'s (its hook ran first), {second!r}'s is "
                     "ignored", fix)
    if problem.hook in CONFLICT_KINDS:
        kind, effect = CONFLICT_KINDS[problem.hook]
        return Check("plugin-conflict", "warn",
                     f"{kind} {problem.name!r} is registered by plugin {first!r} and plugin "
                     f"{second!r}; in use: neither ({effect} until one is disabled)", fix)
    return Check("plugin-conflict", "warn", problem.message, fix)




def _disabled_checks(ctx: EchoContext) -> list[Check]:
    """Plugins blocked by name (``ECHO_DISABLE_PLUGINS`` or the config's ``disabled``):
    ok, since someone asked for it, but named, since their verbs and hooks are gone. A
    name that matches no plugin warns (a typo disables nothing), with the closest
    plugin name when one is close."""
    checks: list[Check] = []
    records = ctx.host.records
    disabled = sorted(r.name for r in records.values() if r.status == "disabled")
    from_env = disabled_from_env(ctx.env)
    if disabled:
        sources = [f"{name} (by {'ECHO_DISABLE_PLUGINS' if name in from_env else 'config'})"
                   for name in disabled]
        checks.append(Check("plugins-disabled", "ok",
                            f"{len(disabled)} disabled: " + ", ".join(sources),
                            "their verbs and hooks are off; remove them from "
                            "ECHO_DISABLE_PLUGINS or the config file's `disabled` to turn "
                            "them back on"))
    unknown = sorted(set(ctx.host.disabled) - set(records))
    if unknown:
        import difflib

        names = sorted(records)
        said = []
        for name in unknown:
            close = difflib.get_close_matches(name, names, n=1)
            where = "ECHO_DISABLE_PLUGINS" if name in from_env else "config"
            said.append(f"{name!r} (by {where}" + (f"; did you mean {close[0]}?)" if close
                                                    else ")"))
        checks.append(Check("plugins-disabled-unknown", "warn",
                            f"{len(unknown)} name{'s' if len(unknown) > 1 else ''} to disable "
                            "match no plugin, so nothing was disabled for "
                            f"{'them' if len(unknown) > 1 else 'it'}: " + ", ".join(said),
                            "use a name `echo-memory plugins` lists (" + ", ".join(names)
                            + ") in ECHO_DISABLE_PLUGINS or the config file's `disabled`"))
    return checks


def _outbox_check(ctx: EchoContext) -> Check:
    """Writes waiting in the outbox, and those a replay could not land. The outbox lives
    in the vault's state folder, named after the storage's identity: when no storage
    opens the vault (the vault check says why), it cannot be found and is not checked."""
    try:
        state_dir = ctx.state_dir
    except (EchoError, BackendUnavailable, OSError):
        return Check("outbox", "warn", "not checked: its state folder is named after the "
                     "vault's storage, which did not open",
                     "fix the vault check first; then `echo-memory doctor` again")
    try:
        queue = ctx.queue
        records = [] if queue is None else queue.pending()
    except (EchoError, OSError) as exc:
        return Check("outbox", "fail", f"cannot read the outbox: {exc}",
                     f"check the state folder {state_dir}")
    if queue is None:
        return Check("outbox", "ok", "no outbox plugin: writes to an unreachable vault fail")
    attention = [r for r in records if r.get("state") == "needs_attention"]
    if attention:
        first = attention[0]
        return Check("outbox", "warn",
                     f"{len(records)} waiting, {len(attention)} need attention (first: "
                     f"{first.get('op', '?')} {first.get('id', '')}: {first.get('detail', '')})",
                     "run `echo-memory flush` to see each; re-capture a gated one with "
                     "--merge-into or --force (or decide against it), then `echo-memory "
                     "flush --dismiss ID`")
    if records:
        return Check("outbox", "warn", f"{len(records)} write(s) waiting",
                     "run `echo-memory flush` once the vault is reachable (load also does)")
    return Check("outbox", "ok", "empty")


def age_text(seconds: float) -> str:
    """``seconds`` as people say it: 40 s, 12 min, 5.0 h, 3.0 d."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} d"


def _newest_mtime(folder: Path) -> float | None:
    try:
        return max((p.stat().st_mtime for p in folder.rglob("*") if p.is_file()), default=None)
    except OSError:
        return None


def _entity_index_mtime(ctx: EchoContext) -> float | None:
    found: list[float] = []
    for path in (SNAPSHOT_PATH, JOURNAL_PATH):
        try:
            found.append(ctx.storage.stat(path).mtime)
        except (EchoError, BackendUnavailable, OSError):
            continue
    return max(found, default=None)




def _sweep_days(ctx: EchoContext) -> float:
    try:
        return float(ctx.env.get(FAST_SWEEP_DAYS_ENV, DEFAULT_FAST_SWEEP_DAYS))
    except ValueError:
        return DEFAULT_FAST_SWEEP_DAYS


def _since(ctx: EchoContext, when: _dt.datetime) -> float:
    now = ctx.now()
    if (when.tzinfo is None) != (now.tzinfo is None):
        when = when.replace(tzinfo=now.tzinfo)
    return max(0.0, (now - when).total_seconds())


def _freshness_check(ctx: EchoContext) -> Check | None:
    """``index-freshness``: how old the recall index (its files in the state dir) and the
    entity index are, and when the last fast and full sweeps ran; warns when the last fast
    sweep is older than ``ECHO_FAST_SWEEP_DAYS`` (7). None when the state dir cannot be
    had (the vault check says why)."""
    wall = time.time()
    parts: list[str] = []
    try:
        state_dir = ctx.state_dir
    except (EchoError, BackendUnavailable, OSError):
        return None
    recall = _newest_mtime(state_dir / "recall")
    parts.append("no recall index yet (the first recall builds it)" if recall is None
                 else f"recall index updated {age_text(max(0.0, wall - recall))} ago")
    entities = _entity_index_mtime(ctx)
    if entities is not None:
        parts.append(f"entity index updated {age_text(max(0.0, wall - entities))} ago")
    from echo_core.ops.fast_sweep import last_sweeps

    try:
        sweeps = last_sweeps(ctx)
    except (EchoError, OSError, ValueError) as exc:
        detail = exc.message if isinstance(exc, EchoError) else str(exc)
        parts.append(f"the sweep record cannot be read ({detail})")
        return Check("index-freshness", "warn", "; ".join(parts),
                     "run `echo-memory sweep --fast` (it records a new one)")
    stale = ""
    days = _sweep_days(ctx)
    for kind in ("fast", "full"):
        when = sweeps.get(kind)
        if when is None:
            parts.append(f"no {kind} sweep recorded")
            continue
        age = _since(ctx, when)
        parts.append(f"last {kind} sweep {age_text(age)} ago")
        if kind == "fast" and age > days * 86400:
            stale = f"the last fast sweep is older than {days:g} days ({FAST_SWEEP_DAYS_ENV})"
    if stale:
        return Check("index-freshness", "warn", f"{'; '.join(parts)}: {stale}",
                     "run `echo-memory sweep --fast` (load runs it too; the running server "
                     "does every hour)")
    return Check("index-freshness", "ok", "; ".join(parts))


def _config_check(ctx: EchoContext) -> Check:
    cfg = ctx.config
    if cfg.problem:
        return Check("config", "fail", cfg.problem,
                     "fix the file (or point ECHO_CONFIG at another one); the checks below "
                     "ran on the defaults and flags")
    return Check("config", "ok",
                 f"{cfg.config_path} ({'found' if cfg.config_exists else 'absent; defaults apply'})")


def run_doctor(ctx: EchoContext) -> Envelope[DoctorResult]:
    """Run every check (each whatever the others found). ``ok`` is False when any check
    fails (warnings do not fail)."""
    cfg = ctx.config
    checks = [
        Check("python", "ok" if sys.version_info >= (3, 11) else "fail",
              sys.version.split()[0], "use Python 3.11 or newer"),
        _config_check(ctx),
        Check("vault-setting", "ok", f"{shown_vault(cfg.vault.value)} (from {cfg.vault.source})"),
        Check("state-dir", "ok", f"{cfg.state_base.value} (from {cfg.state_base.source})"),
    ]
    from echo_core.operations.registry import registration_problems

    problems = registration_problems(ctx.host)
    checks.append(_plugins_check(ctx, problems))
    # one line per name two plugins take, saying which is used (the plugins line fails)
    checks.extend(_conflict_check(p) for p in problems if p.kind == "duplicate")
    checks.extend(_disabled_checks(ctx))
    ranker = _ranker_check(ctx)
    if ranker is not None:
        checks.append(ranker)
    checks.extend(_vault_checks(ctx))
    checks.append(_outbox_check(ctx))
    freshness = _freshness_check(ctx)
    if freshness is not None:
        checks.append(freshness)
    ok = all(c.status != "fail" for c in checks)
    bad = [c.name for c in checks if c.status != "ok"]
    message = "all checks passed" if not bad else f"attention: {', '.join(bad)}"
    return Envelope(ok, Action.DOCTOR, message, DoctorResult(tuple(checks)))
