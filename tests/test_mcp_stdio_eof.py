"""``serve --stdio`` when the client closes stdin early: every request it sent is still
answered on stdout (once), a capture sent that way lands exactly once, a request running
when stdin closes finishes and is answered, a malformed line does not swallow the answers
after it, and the process exits 0 soon after the last answer; and, in process, how long
the end of stdin is held back (plugins/transport_mcp/stdio_drain.py)."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from pathlib import Path
from typing import IO, Any

import anyio
import pytest
from mcp.shared.message import SessionMessage
from mcp.types import jsonrpc_message_adapter

from plugins.transport_mcp.stdio_drain import AnsweringWriter, AnswerLedger, DrainingReader
from tests.capture_kit import VaultBox
from tests.conftest import CLI, REPO
from tests.hook_kit import plant_held_lock
from tests.mcp_kit import ENGINE, seeded_box, subprocess_env

GRACE = "resources/people/grace-hopper.md"
#: How long the process may take to exit once its last answer is out (start-up excluded).
PROMPT_EXIT = 5.0
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "raw", "version": "0"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def tool_call(request_id: int, name: str, **arguments: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}


CAPTURE = tool_call(2, "echo_capture", title="Grace Hopper", kind="person",
                    body="Wrote the first compiler.")
RECALL = tool_call(3, "echo_recall", query="analytical engine punched cards")


class RawStdio:
    """A ``serve --stdio`` process fed raw lines; its stdout lines collected by a thread,
    each with the moment it arrived."""

    def __init__(self, box: VaultBox, log: IO[bytes]) -> None:
        self.proc = subprocess.Popen(
            [*CLI, "serve", "--stdio", "--vault", str(box.vault), "--state-dir",
             str(box.state)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
            env=subprocess_env(box), cwd=str(REPO))
        self.lines: queue.Queue[tuple[float, bytes] | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put((time.monotonic(), line))
        self.lines.put(None)

    def send(self, *messages: dict[str, Any] | str, close: bool = False) -> None:
        """Write each message as one line (a ``str`` as is); then close stdin if asked."""
        assert self.proc.stdin is not None
        for message in messages:
            line = message if isinstance(message, str) else json.dumps(message)
            self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()
        if close:
            self.proc.stdin.close()

    def answer(self) -> dict[str, Any]:
        """The next line on stdout (waits up to 60 s)."""
        item = self.lines.get(timeout=60)
        assert item is not None, "stdout closed"
        answer: dict[str, Any] = json.loads(item[1])
        return answer

    def finish(self) -> tuple[list[dict[str, Any]], float]:
        """Every remaining stdout line, and the seconds from the last one to the exit."""
        answers: list[dict[str, Any]] = []
        last = time.monotonic()
        while (item := self.lines.get(timeout=60)) is not None:
            last = item[0]
            answers.append(json.loads(item[1]))
        self.proc.wait(timeout=60)
        return answers, time.monotonic() - last

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def by_id(answers: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    ids = [answer.get("id") for answer in answers]
    assert len(ids) == len(set(ids)), f"an id answered twice: {ids}"
    return {answer.get("id"): answer for answer in answers}


def structured(answer: dict[str, Any]) -> dict[str, Any]:
    assert "result" in answer, f"not a result: {answer}"
    assert answer["result"]["isError"] is False, answer
    data: dict[str, Any] = answer["result"]["structuredContent"]
    return data


def grace_notes(box: VaultBox) -> list[str]:
    return sorted(p.relative_to(box.vault).as_posix() for p in box.vault.rglob("grace*.md"))


def test_requests_piped_before_stdin_closes_are_all_answered_and_capture_lands_once(
        tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    with (tmp_path / "stdio.log").open("wb") as log:
        server = RawStdio(box, log)
        try:
            server.send(INITIALIZE, INITIALIZED, CAPTURE, RECALL, close=True)
            answers, exit_took = server.finish()
        finally:
            server.kill()
    got = by_id(answers)
    assert sorted(got) == [1, 2, 3], answers
    assert structured(got[2])["action"] == "created" and structured(got[2])["path"] == GRACE
    assert ENGINE in {hit["path"] for hit in structured(got[3])["primary"]}
    assert grace_notes(box) == [GRACE]
    assert box.read(GRACE).count("Wrote the first compiler.") == 1
    assert server.proc.returncode == 0
    assert exit_took < PROMPT_EXIT, f"exited {exit_took:.1f} s after the last answer"


def test_a_request_running_when_stdin_closes_finishes_and_is_answered(
        tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    with (tmp_path / "stdio.log").open("wb") as log:
        server = RawStdio(box, log)
        try:
            server.send(INITIALIZE)
            assert server.answer()["id"] == 1
            lock = plant_held_lock(box.vault)  # the capture waits for it (up to 10 s)
            server.send(INITIALIZED, CAPTURE, RECALL, close=True)
            assert server.answer()["id"] == 3  # the recall overtakes the waiting capture
            time.sleep(0.5)  # the server has read EOF by now; the capture still waits
            lock.unlink()
            answers, exit_took = server.finish()
        finally:
            server.kill()
    assert [answer.get("id") for answer in answers] == [2], answers
    assert structured(answers[0])["action"] == "created"
    assert grace_notes(box) == [GRACE]
    assert server.proc.returncode == 0
    assert exit_took < PROMPT_EXIT, f"exited {exit_took:.1f} s after the last answer"


def test_a_malformed_line_does_not_swallow_the_answers_after_it(tmp_path: Path) -> None:
    box = seeded_box(tmp_path)
    with (tmp_path / "stdio.log").open("wb") as log:
        server = RawStdio(box, log)
        try:
            server.send(INITIALIZE, INITIALIZED, "{not json", '{"jsonrpc": "2.0", "id": 9}',
                        RECALL, CAPTURE, close=True)
            answers, exit_took = server.finish()
        finally:
            server.kill()
    got = by_id([answer for answer in answers if answer.get("id") is not None])
    assert {1, 2, 3, 9} <= set(got), answers
    assert got[9]["error"]["code"] == -32600  # the line with an id and no method is told
    assert [a["error"]["code"] for a in answers if a.get("id") is None] == [-32700]
    assert structured(got[2])["action"] == "created" and grace_notes(box) == [GRACE]
    assert structured(got[3])["primary"]
    assert server.proc.returncode == 0
    assert exit_took < PROMPT_EXIT, f"exited {exit_took:.1f} s after the last answer"



# --- the ledger in process (plugins/transport_mcp/stdio_drain.py) -----------------------


def _wire(raw: dict[str, Any]) -> SessionMessage:
    return SessionMessage(jsonrpc_message_adapter.validate_python(raw))


def held_back(lines: list[dict[str, Any]], answers: list[int], *,
              drain_timeout: float = 30.0) -> float:
    """Read ``lines`` and then the end of stdin through a ``DrainingReader``; 0.2 s after
    the reader reached the end, send an answer to each id of ``answers`` through an
    ``AnsweringWriter``. The seconds the end was held back."""

    async def main() -> float:
        ledger = AnswerLedger()
        stdin, inner = anyio.create_memory_object_stream[SessionMessage | Exception](10)
        outer, stdout = anyio.create_memory_object_stream[SessionMessage](10)
        reader = DrainingReader(inner, ledger, drain_timeout=drain_timeout)
        writer = AnsweringWriter(outer, ledger)
        for raw in lines:
            await stdin.send(_wire(raw))
        stdin.close()
        for _ in lines:
            await reader.receive()

        async def answer_later() -> None:
            await anyio.sleep(0.2)
            for request_id in answers:
                await writer.send(_wire({"jsonrpc": "2.0", "id": request_id, "result": {}}))

        started = anyio.current_time()
        async with anyio.create_task_group() as tg:
            tg.start_soon(answer_later)
            with pytest.raises(anyio.EndOfStream):
                await reader.receive()
            took = anyio.current_time() - started
        stdout.close()
        return took

    return anyio.run(main)


def test_the_end_of_stdin_waits_for_every_answer_then_goes_through() -> None:
    assert 0.2 <= held_back([CAPTURE, RECALL], answers=[3, 2]) < 5
    assert held_back([CAPTURE, RECALL], answers=[3], drain_timeout=1.0) >= 1.0


def test_a_request_the_client_cancelled_does_not_hold_the_end_back() -> None:
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled",
              "params": {"requestId": "2"}}  # "2" and 2 are one id, as for the SDK
    assert held_back([CAPTURE, cancel], answers=[]) < 0.2


def test_an_unanswered_request_holds_the_end_back_only_until_the_drain_timeout() -> None:
    assert 0.5 <= held_back([CAPTURE], answers=[], drain_timeout=0.5) < 5
