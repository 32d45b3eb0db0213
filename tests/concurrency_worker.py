"""A capture worker process for ``test_capture_concurrency.py`` (not a test module).

Run as ``python -c "from tests.concurrency_worker import main; main()" SPEC_JSON``. The spec
gives the vault, env, a start-gate file, the journal compaction threshold and the captures
``[[title, kind, body], ...]``. The worker builds ONE context (a long-lived client, so its
cached entity index must notice the other processes' writes), signals readiness by creating
``<ready_dir>/<worker>``, waits for the gate file, captures in order and prints one JSON line
per capture: ``{"title", "body", "action", "ok", "path", "error"}``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main() -> None:
    spec = json.loads(sys.argv[1])
    import echo_core.entities
    from echo_core.context import create_context
    from echo_core.errors import EchoError
    from echo_core.models import CaptureRequest
    from echo_core.ops.capture import capture

    echo_core.entities.COMPACT_AFTER = int(spec["compact_after"])
    ctx = create_context(vault=spec["vault"], state_dir=spec["state_dir"], env=spec["env"])
    ctx.entities.load()
    Path(spec["ready_dir"], str(spec["worker"])).touch()
    gate = Path(spec["go"])
    deadline = time.monotonic() + 30
    while not gate.exists():
        if time.monotonic() > deadline:
            raise SystemExit("start gate never opened")
        time.sleep(0.001)
    out = []
    for title, kind, body in spec["captures"]:
        record = {"title": title, "body": body, "worker": spec["worker"]}
        try:
            env = capture(ctx, CaptureRequest(title=title, kind=kind, body=body))
            record.update(action=env.action, ok=env.ok, path=env.data.path, error=None)
        except EchoError as exc:
            record.update(action="error", ok=False, path=None, error=f"{exc.code}: {exc.message}")
        out.append(json.dumps(record))
    sys.stdout.write("\n".join(out) + "\n")
    sys.stdout.flush()
