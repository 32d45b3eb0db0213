"""`echo-memory jsonl` as a client runs it: lines in on stdin, answers out on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ECHO_MEMORY = str(Path(sys.executable).with_name("echo-memory"))
DISTS = "echo-memory,echo-transport-jsonl"


def test_the_real_command_answers_capture_recall_unknown_op_and_bad_args(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"),
               XDG_DATA_HOME=str(home / ".local/share"),
               XDG_STATE_HOME=str(home / ".local/state"), ECHO_TODAY="2026-03-01",
               ECHO_NOW="2026-03-01T09:30:00", ECHO_PLUGIN_DISTS=DISTS)
    (tmp_path / "vault").mkdir()
    requests = [
        {"op": "init", "id": 1},
        {"op": "capture", "id": 2, "args": {"title": "Ada Lovelace", "kind": "person",
                                            "body": "Wrote the first program."}},
        {"op": "recall", "id": 3, "args": {"query": "first program", "limit": 3}},
        {"op": "no-such-op", "id": 4},
        {"op": "recall", "id": 5, "args": {"query": "x", "limit": 999}},
        {"op": "_list", "id": 6},
    ]
    done = subprocess.run(
        [ECHO_MEMORY, "jsonl", "--allow-writes", "--vault", str(tmp_path / "vault"),
         "--state-dir", str(tmp_path / "state")],
        input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True,
        text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["id"] for r in replies] == [1, 2, 3, 4, 5, 6], done.stdout
    init, captured, recalled, unknown, bad, listing = replies
    assert init["ok"] is True and captured["result"]["action"] == "created", replies
    assert [h["path"] for h in recalled["result"]["primary"]] == [
        captured["result"]["path"]], recalled
    assert unknown["error"]["code"] == "not-found" and unknown["error"]["exit"] == 44
    assert bad["error"] == {"code": "usage", "exit": 2, "message": bad["error"]["message"]}
    assert "limit" in bad["error"]["message"] and "999" not in bad["error"]["message"]
    assert "recall" in {op["name"] for op in listing["result"]["operations"]}
