"""A capture process for ``test_crash_capture.py`` (not a test module): captures forever,
printing (and flushing) one acknowledgement line per capture that returned ok, until it is
killed. ``python -c "from tests.crash_worker import main; main()" SPEC_JSON``."""

from __future__ import annotations

import json
import sys


def main() -> None:
    spec = json.loads(sys.argv[1])
    import echo_core.entities
    from echo_core.context import create_context
    from echo_core.models import CaptureRequest
    from echo_core.ops.capture import capture

    echo_core.entities.COMPACT_AFTER = int(spec["compact_after"])
    ctx = create_context(vault=spec["vault"], state_dir=spec["state_dir"], env=spec["env"])
    run, n = spec["run"], 0
    while True:
        n += 1
        title = f"Topic {(run * 7 + n) % 23}"  # creates early, updates later: both paths
        body = f"run {run} capture {n}\nsecond line {n}\nthird line {n}"
        envelope = capture(ctx, CaptureRequest(title=title, kind="concept", body=body, force=False))
        if envelope.ok:
            print(json.dumps({"path": envelope.data.path, "line": f"run {run} capture {n}"}),
                  flush=True)
