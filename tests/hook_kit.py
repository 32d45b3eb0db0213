"""Helpers for the Claude Code hook and build tests: a seeded vault, realistic hook
payloads and transcripts, and running the INSTALLED ``echo-memory`` console script in a
fresh process outside the source tree.

Not a test module; imported by ``test_hooks_claude.py`` and ``test_build_claude_code.py``.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.capture_kit import VaultBox

NOW = "2026-03-01T09:30:00"
BIN_DIR = Path(sys.executable).parent
#: The installed console script (None when the tests run outside an installed env).
ECHO_BIN = shutil.which("echo-memory", path=str(BIN_DIR))
FALLBACK_CLI = [sys.executable, "-c", "from plugins.cli_start import run; run()"]
MAX_HOOK_OUTPUT = 10_000

NOTES = (
    ("Deploy checklist", "reference",
     ("Run migrations first, then deploy the web tier, then flush the CDN cache. "
      "Never deploy on Fridays.")),
    ("Vantage Systems", "company",
     "Customer since 2024; renewal due in April. Pricing negotiated at 40k per year."),
    ("Ada Lovelace", "person",
     "Wrote the first program for the analytical engine. Prefers concise status updates."),
    ("Use pytest xdist", "semantic",
     "Run tests with pytest -n 2 to keep the suite under a minute."),
)


def seeded_vault(root: Path) -> VaultBox:
    """An initialised vault under ``root`` with a few notes captured."""
    box = VaultBox(root).init()
    for title, kind, body in NOTES:
        assert box.capture(title, kind=kind, body=body).ok
    return box


def hook_env(box: VaultBox, **extra: str) -> dict[str, str]:
    """A complete, isolated environment for a hook process on ``box``'s vault."""
    env = box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state), ECHO_NOW=NOW)
    env["PATH"] = f"{BIN_DIR}{os.pathsep}{os.environ.get('PATH', '')}"
    for key in ("SYSTEMROOT", "LANG", "LC_ALL"):
        if key in os.environ:
            env.setdefault(key, os.environ[key])
    env.update(extra)
    return env


def run_hook(event: str, stdin: Mapping[str, Any] | bytes | str, env: Mapping[str, str],
             cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``echo-memory hook <event>`` with ``stdin`` (an object is sent as JSON), run from
    ``cwd`` (never the source tree) with exactly ``env``."""
    if isinstance(stdin, Mapping):
        data = json.dumps(stdin).encode("utf-8")
    else:
        data = stdin.encode("utf-8") if isinstance(stdin, str) else stdin
    command = [ECHO_BIN] if ECHO_BIN else FALLBACK_CLI
    proc = subprocess.run([*command, "hook", event], input=data, capture_output=True, check=False,
                          env=dict(env), cwd=cwd, timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode,
                                       proc.stdout.decode("utf-8"), proc.stderr.decode("utf-8"))


def payload(event: str, session_id: str, transcript: Path | None, cwd: Path,
            **fields: Any) -> dict[str, Any]:
    """A hook stdin object with the fields every event carries, plus ``fields``."""
    base: dict[str, Any] = {
        "session_id": session_id,
        "transcript_path": str(transcript) if transcript else str(cwd / "missing.jsonl"),
        "cwd": str(cwd),
        "hook_event_name": event,
        "permission_mode": "default",
    }
    base.update(fields)
    return base


def _stamp(start: _dt.datetime, n: int) -> str:
    return (start + _dt.timedelta(seconds=10 * n)).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def write_transcript(path: Path, session_id: str, cwd: Path, *, prompts: Sequence[str],
                     tools: Sequence[tuple[str, dict[str, Any]]],
                     start: _dt.datetime | None = None) -> Path:
    """A Claude Code-like JSONL transcript: a summary line, a meta line, the prompts, then
    one assistant tool_use line (and its tool_result) per entry of ``tools``, a garbage
    line, and a file-history-snapshot line. Timestamps start at ``start`` (UTC)."""
    start = start or _dt.datetime(2026, 3, 1, 9, 0, 0)
    common = {"isSidechain": False, "userType": "external", "cwd": str(cwd),
              "sessionId": session_id, "version": "2.1.0", "gitBranch": "main"}
    lines: list[Any] = [{"type": "summary", "summary": "Earlier work", "leafUuid": "x0"}]
    n = 0

    def add(kind: str, message: dict[str, Any], **more: Any) -> None:
        nonlocal n
        n += 1
        lines.append({**common, "type": kind, "uuid": f"u{n}", "parentUuid": f"u{n - 1}",
                      "timestamp": _stamp(start, n), "message": message, **more})

    add("user", {"role": "user", "content": "Caveat: local commands below."}, isMeta=True)
    for prompt in prompts:
        add("user", {"role": "user", "content": prompt})
    add("user", {"role": "user", "content": "<command-name>/model</command-name>"})
    for i, (name, tool_input) in enumerate(tools):
        block = {"type": "tool_use", "id": f"toolu_{i:03d}", "name": name, "input": tool_input}
        add("assistant", {"id": f"msg_{i}", "type": "message", "role": "assistant",
                          "model": "claude-sonnet-4-5", "content": [block]})
        add("user", {"role": "user", "content": [{"type": "tool_result",
                                                  "tool_use_id": f"toolu_{i:03d}",
                                                  "content": "ok", "is_error": False}]})
    text = "\n".join(json.dumps(line) for line in lines)
    text += "\nnot json at all {\n" + json.dumps({"type": "file-history-snapshot",
                                                   "messageId": "m", "snapshot": {}}) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def work_tools(cwd: Path, *, edits: int = 2, reads: int = 4) -> list[tuple[str, dict[str, Any]]]:
    """Tool uses of a session that read and edited files under ``cwd``."""
    tools: list[tuple[str, dict[str, Any]]] = [
        ("Read", {"file_path": str(cwd / f"src/mod{i}.py")}) for i in range(reads)]
    tools += [("Edit", {"file_path": str(cwd / f"src/mod{i}.py"), "old_string": "a",
                        "new_string": "b"}) for i in range(edits)]
    return tools


def context_of(stdout: str, event: str) -> str:
    """The additionalContext of a SessionStart / UserPromptSubmit reply, shape-checked."""
    assert len(stdout) <= MAX_HOOK_OUTPUT, len(stdout)
    data = json.loads(stdout)
    assert set(data) == {"hookSpecificOutput"}, data
    specific = data["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}, specific
    assert specific["hookEventName"] == event
    assert isinstance(specific["additionalContext"], str) and specific["additionalContext"]
    return str(specific["additionalContext"])


def plant_held_lock(vault: Path) -> Path:
    """A vault lock held by a live process on this host (the test's own): its path."""
    import socket
    import time

    path = vault / "_agent" / ".lock"
    record = {"pid": os.getpid(), "host": socket.gethostname(), "created": time.time(),
              "token": "planted"}
    path.write_text(json.dumps(record), encoding="utf-8")
    return path


def compact(box: VaultBox, project: Path, transcripts: Path, session: str, trigger: str) -> float:
    """Run PreCompact for ``session`` (a transcript of one prompt and some edits, written
    under ``transcripts``), checking it exits 0 quietly; the seconds it took."""
    import time

    transcript = write_transcript(transcripts / f"{session}.jsonl", session, project,
                                  prompts=["fix the deploy script"], tools=work_tools(project))
    started = time.monotonic()
    proc = run_hook("PreCompact", payload("PreCompact", session, transcript, project,
                                          trigger=trigger, custom_instructions=""),
                    hook_env(box), project)
    assert (proc.returncode, proc.stdout) == (0, ""), proc.stderr
    return time.monotonic() - started


def flush_cli(box: VaultBox, project: Path) -> str:
    """``echo-memory flush`` on ``box``'s vault (exit 0 checked): its output."""
    proc = subprocess.run([*([ECHO_BIN] if ECHO_BIN else FALLBACK_CLI), "flush"],
                          env=hook_env(box), cwd=project, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def checkpoint_names(box: VaultBox) -> list[str]:
    """The file names of the checkpoint notes in ``box``'s working memory, sorted."""
    return sorted(p.name for p in (box.vault / "_agent/memory/working").glob("*checkpoint*"))


@pytest.fixture(name="box")
def hook_box(tmp_path: Path) -> VaultBox:
    """Fixture ``box``: a seeded vault (``seeded_vault``) under ``tmp_path/box``. A test
    module takes it with ``from tests.hook_kit import hook_box, hook_project``."""
    return seeded_vault(tmp_path / "box")


@pytest.fixture(name="project")
def hook_project(tmp_path: Path) -> Path:
    """Fixture ``project``: the agent's working folder (the hook's cwd), made empty."""
    path = tmp_path / "project"
    path.mkdir()
    return path
