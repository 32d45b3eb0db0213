"""A seeded generator of Claude Code transcripts (JSONL, the shape of
``reference/claude-code.md``) for the corpus-mode tests and the corpus bench.

Each session is a realistic mix: prompts (some stating a preference that other sessions
restate, some correcting the agent, some forward-looking ideas, most plain requests),
assistant text / thinking / tool_use lines, tool results (some ``is_error`` and then a
successful retry of the same tool on the same target), sidechain lines, meta lines,
summary / file-history-snapshot / unknown line types, a garbage line now and then and
sometimes a truncated last line. The same ``seed`` always gives the same bytes.

Not a test module; imported by ``tests/test_reflect_corpus*.py``, ``tests/test_hooks_reflect.py``
and ``bench/perf_reflect_corpus.py``.
"""

from __future__ import annotations

import datetime as _dt
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

#: Preferences restated across sessions (so the corpus merge has repeats to count).
PREFERENCES = (
    "Always use pytest, not unittest, for new tests.",
    "I prefer small commits with one change each.",
    "Never push directly to main; open a pull request.",
    "Use ruff not flake8 for linting.",
    "Don't add type: ignore comments to silence mypy.",
    "Always run the formatter before committing.",
    "I prefer f-strings over format() calls.",
    "Never log secrets or tokens, even at debug level.",
    "Use pathlib not os.path in new code.",
    "Don't use print for diagnostics; use the logging module.",
    "Always pin dependency versions in the lock file.",
    "I prefer descriptive branch names like fix/login-timeout.",
)

CORRECTIONS = (
    "No, that's wrong: the config lives in pyproject.toml, not setup.cfg.",
    "Actually, the service listens on port 8080, not 8000.",
    "No, the migrations run before the deploy, not after it.",
    "That's not right, the cache key must include the tenant id.",
    "Actually the staging database is read-only for us.",
)

IDEAS = (
    "Idea: we could cache the parsed index between runs later.",
    "Maybe later we should add a --watch flag to the build script.",
    "It would be nice to have a dashboard for the nightly jobs someday.",
    "TODO for later: split the settings module by environment.",
)

REQUESTS = (
    "fix the failing test in tests/test_api.py",
    "run the linter and tell me what breaks",
    "what does parse_header do?",
    "add a retry to the upload client",
    "rename the helper to something clearer",
    "write a docstring for the scheduler",
    "why is the build slow on CI?",
    "update the changelog for the release",
    "refactor the loop in report.py",
    "check the logs for the 500 errors",
)

ASSISTANT_TEXT = (
    "I'll look at the file first.",
    "The test fails because the fixture is missing a field.",
    "Done: the function now retries three times with a backoff.",
    "Here is what I found in the logs.",
    "I updated the module and ran the tests; all pass.",
)

TOOLS = ("Bash", "Read", "Edit", "Grep", "Write")
FILES = ("src/app.py", "src/api/client.py", "tests/test_api.py", "report.py", "setup.cfg",
         "docs/index.md", "scheduler/jobs.py")
ERRORS = ("Exit code 1\nFAILED tests/test_api.py::test_login - AssertionError",
          "Error: file not found", "ModuleNotFoundError: No module named 'yaml'",
          "String to replace not found in file.")


class SessionWriter:
    """Builds the lines of one session (``lines``), linked by uuid / parentUuid."""

    def __init__(self, rng: random.Random, session_id: str, cwd: str,
                 start: _dt.datetime) -> None:
        self.rng = rng
        self.session_id = session_id
        self.cwd = cwd
        self.clock = start
        self.lines: list[str] = []
        self.n = 0
        self.tool_n = 0
        self.parent: str | None = None

    def _common(self, kind: str, **more: Any) -> dict[str, Any]:
        self.n += 1
        self.clock += _dt.timedelta(seconds=self.rng.randint(1, 40))
        uuid = f"{self.session_id[:8]}-{self.n:05d}"
        line = {"parentUuid": self.parent, "isSidechain": False, "userType": "external",
                "cwd": self.cwd, "sessionId": self.session_id, "version": "2.1.3",
                "gitBranch": "main", "type": kind, "uuid": uuid,
                "timestamp": self.clock.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"}
        line.update(more)
        self.parent = uuid
        return line

    def emit(self, obj: Any) -> None:
        self.lines.append(json.dumps(obj, ensure_ascii=False))

    def prompt(self, text: str, **more: Any) -> None:
        self.emit(self._common("user", message={"role": "user", "content": text}, **more))

    def say(self, text: str) -> None:
        content: list[dict[str, Any]] = []
        if self.rng.random() < 0.3:
            content.append({"type": "thinking", "thinking": "Let me think about " + text,
                            "signature": "sig" + str(self.n)})
        content.append({"type": "text", "text": text})
        self.emit(self._common("assistant", message={
            "id": f"msg_{self.n}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5", "content": content,
            "usage": {"input_tokens": self.rng.randint(10, 9000), "output_tokens": 40}}))

    def tool(self, name: str, target: str, *, error: bool, output: str = "",
             retry: bool = False) -> None:
        """A tool_use and its tool_result; ``retry`` changes the input (the fix)."""
        self.tool_n += 1
        tool_id = f"toolu_{self.session_id[:6]}{self.tool_n:04d}"
        tool_input: dict[str, Any] = ({"command": f"pytest {target}" + (" -p no:cacheprovider"
                                                                         if retry else "")}
                                      if name == "Bash" else {"file_path": f"{self.cwd}/{target}"})
        if name == "Edit":
            tool_input.update(old_string="x  = 1" if retry else "x = 1", new_string="x = 2")
        elif name in ("Read", "Grep", "Write") and retry:
            tool_input["offset" if name == "Read" else "pattern"] = 10 if name == "Read" else "x"
        self.emit(self._common("assistant", message={
            "id": f"msg_{self.n}", "type": "message", "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [{"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}]}))
        result = self.rng.choice(ERRORS) if error else (output or "ok")
        self.emit(self._common("user", message={"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": tool_id, "content": result,
             "is_error": error}]}, toolUseResult={"stdout": result[:80], "stderr": ""}))

    def noise(self) -> None:
        """A line that is not conversation: a type we know to skip, or one we do not."""
        pick = self.rng.randrange(5)
        if pick == 0:
            self.emit({"type": "file-history-snapshot", "messageId": f"m{self.n}",
                       "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False})
        elif pick == 1:
            self.emit(self._common("system", content="Conversation compacted",
                                   subtype="compact_boundary", level="info"))
        elif pick == 2:
            self.emit(self._common("progress", data={"type": "hook_progress"}))
        elif pick == 3:
            self.emit({"type": "some-future-type", "payload": [1, 2, {"x": None}]})
        else:
            self.emit(self._common("attachment", attachment={"type": "file", "path": "a.txt"}))

    def sidechain(self, text: str) -> None:
        line = self._common("user", message={"role": "user", "content": text})
        line["isSidechain"] = True
        self.emit(line)


def session_lines(rng: random.Random, session_id: str, cwd: str, *, turns: int,
                  start: _dt.datetime) -> list[str]:
    """The JSONL lines (without newlines) of one generated session of ``turns`` turns."""
    w = SessionWriter(rng, session_id, cwd, start)
    w.emit({"type": "summary", "summary": "Earlier work on the project",
            "leafUuid": f"{session_id[:8]}-leaf"})
    w.prompt("<command-name>/clear</command-name>", isMeta=True)
    for _ in range(turns):
        roll = rng.random()
        if roll < 0.12:
            w.prompt(rng.choice(PREFERENCES))
        elif roll < 0.18:
            w.prompt(rng.choice(CORRECTIONS))
        elif roll < 0.22:
            w.prompt(rng.choice(IDEAS))
        else:
            w.prompt(rng.choice(REQUESTS))
        w.say(rng.choice(ASSISTANT_TEXT))
        for _ in range(rng.randint(0, 3)):
            name, target = rng.choice(TOOLS), rng.choice(FILES)
            if rng.random() < 0.15:  # an error, then the fix on the same tool and target
                w.tool(name, target, error=True)
                w.say("That failed; retrying with the fix.")
                w.tool(name, target, error=False, retry=True)
            else:
                w.tool(name, target, error=False, output="x" * rng.randint(20, 2000))
        if rng.random() < 0.2:
            w.noise()
        if rng.random() < 0.05:
            w.sidechain(rng.choice(PREFERENCES))
        if rng.random() < 0.02:
            w.lines.append("not json {")
    return w.lines


def transcript_bytes(rng: random.Random, session_id: str, cwd: str, *, target_bytes: int,
                     start: _dt.datetime) -> bytes:
    """One session of about ``target_bytes`` (at least one turn); sometimes its last line
    is cut short (a session still being written)."""
    turns = max(1, target_bytes // 4000)  # a turn is ~4 KB of JSON on average
    text = "\n".join(session_lines(rng, session_id, cwd, turns=turns, start=start)) + "\n"
    data = text.encode("utf-8")
    if rng.random() < 0.05:
        data = data[: len(data) - rng.randint(5, 60)]
    return data


def session_id_for(rng: random.Random) -> str:
    """A UUID-shaped session id from ``rng``."""
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def corpus_files(seed: int, count: int, *, min_bytes: int = 2_000,
                 max_bytes: int = 20_000) -> Iterator[tuple[str, bytes]]:
    """``count`` (relative path, content) pairs, spread over a few project folders named
    the way Claude Code names them (``-home-ada-src-<project>``). Sizes are log-uniform
    between ``min_bytes`` and ``max_bytes``."""
    rng = random.Random(seed)
    projects = [f"-home-ada-src-project{i}" for i in range(max(1, min(8, count // 20)))]
    start = _dt.datetime(2026, 1, 1, 9, 0, 0)
    for i in range(count):
        project = projects[i % len(projects)]
        session = session_id_for(rng)
        size = int(min_bytes * (max_bytes / min_bytes) ** rng.random())
        cwd = "/home/ada/src/" + project.rsplit("-", 1)[-1]
        when = start + _dt.timedelta(hours=3 * i)
        yield f"{project}/{session}.jsonl", transcript_bytes(rng, session, cwd,
                                                             target_bytes=size, start=when)


def write_corpus(root: Path, seed: int, count: int, **sizes: int) -> list[Path]:
    """Write ``corpus_files(seed, count, **sizes)`` under ``root``; their paths."""
    paths = []
    for rel, data in corpus_files(seed, count, **sizes):
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        paths.append(path)
    return paths


def prompt_session(session_id: str, prompts: list[str], *, cwd: str = "/home/ada/src/app",
                   seed: int = 0) -> bytes:
    """A small session: each prompt answered by one assistant line (no tools)."""
    w = SessionWriter(random.Random(seed), session_id, cwd, _dt.datetime(2026, 2, 1, 9, 0))
    for text in prompts:
        w.prompt(text)
        w.say("Understood.")
    return ("\n".join(w.lines) + "\n").encode("utf-8")
