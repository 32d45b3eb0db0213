"""What a write reports about redaction, and the audit log of ``--no-redact`` writes
(SPEC §2.1: secrets never reach the vault unless the operator says so, and then it is on
record).

``<state>/redaction-overrides.ndjson`` gets one JSON line per write made with redaction
off: when (``ts``), which verb, where (the note path, itself redacted), what action, and
which rules WOULD have fired — never the text, so never the secret.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs

from echo_core.redaction import ordered, redact

if TYPE_CHECKING:
    from echo_core.context import EchoContext
    from echo_core.models import CaptureRequest, Envelope
    from echo_core.ops.capture_result import CaptureResult

OVERRIDES_FILE = "redaction-overrides.ndjson"


def redaction_warning(rules: Iterable[str]) -> str:
    """The warning a write shows when redaction changed what it was given."""
    return (f"redacted before writing: {', '.join(rules)} (secrets replaced by "
            "[REDACTED:<rule>], <private> text dropped)")


def rules_in(texts: Iterable[str]) -> tuple[str, ...]:
    """The rules ``redact`` would fire on any of ``texts`` (table order)."""
    fired: set[str] = set()
    for text in texts:
        fired.update(redact(text).found)
    return ordered(fired)


def log_override(ctx: EchoContext, verb: str, path: str | None, action: str,
                 texts: Iterable[str]) -> dict[str, Any]:
    """Append the audit line of a ``verb`` write made with redaction off and return it.
    An unwritable state dir is an error: a write that cannot be logged is not silent."""
    record: dict[str, Any] = {
        "ts": ctx.now().isoformat(timespec="seconds"), "verb": verb,
        "path": redact(path).text if path else None, "action": action,
        "rules": list(rules_in(texts)),
    }
    ctx.state_dir.mkdir(parents=True, exist_ok=True)
    with open(ctx.state_dir / OVERRIDES_FILE, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    return record


def _request_texts(req: CaptureRequest) -> list[str]:
    return [req.title, req.body, req.supersedes or "", *req.tags, *req.aliases, *req.sources]


def report_capture_redaction(ctx: EchoContext, req: CaptureRequest,
                             env: Envelope[CaptureResult]) -> Envelope[CaptureResult]:
    """``env`` with the rules validation applied in ``data.redacted`` and a warning; a
    write made with ``redact=False`` that changed the vault is logged (``log_override``)."""
    data = env.data
    if not req.redact and not req.dry_run and data is not None and data.changed:
        log_override(ctx, "capture", data.path, str(env.action), _request_texts(req))
    if not req.redacted or data is None:
        return env
    return attrs.evolve(env, data=attrs.evolve(data, redacted=req.redacted),
                        warnings=(*env.warnings, redaction_warning(req.redacted)))
