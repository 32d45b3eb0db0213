"""Hostile frontmatter over MCP: `echo_get_note` and `echo_recall` answer within 1 s, the
note stays readable with the refusal named (SPEC §1.3: reading tolerates a malformed
block), and `/health` keeps answering throughout (issue 11, defect 8)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client

from tests.mcp_kit import call, seeded_box
from tests.test_mcp_transports import TOKEN, RunningServer, start_server, with_http
from tests.test_parsers_hostile import BILLION_LAUGHS

BODY = "# {title}\n\nThe analytical engine read {title} from punched cards.\n"
HOSTILE_NOTES = {
    "billion-laughs": (BILLION_LAUGHS, "aliases expand it past"),
    "self-alias": ("a: &a [*a]\nb: &b {c: *b}\n", "alias refers to a node that contains it"),
    "huge-int": ("n: " + "9" * 5000 + "\nh: 0x" + "f" * 5000 + "\n", None),
    "deep-nesting": ("x: " + "[" * 500 + "]" * 500 + "\n", "deep"),
    "deep-block": ("".join(" " * i + f"k{i}:\n" for i in range(60)), "deep"),
}
LIMIT_SECONDS = 1.0


def _path(name: str) -> str:
    return f"resources/concepts/{name}.md"


class HealthProbe:
    """Polls ``/health`` from a thread; records every latency and failure."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.latencies: list[float] = []
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        with httpx2.Client(timeout=5) as http:
            while not self._stop.is_set():
                started = time.perf_counter()
                try:
                    status = http.get(f"{self.base}/health").status_code
                    if status != 200:
                        self.failures.append(f"status {status}")
                except httpx2.TransportError as exc:
                    self.failures.append(repr(exc))
                self.latencies.append(time.perf_counter() - started)
                self._stop.wait(0.02)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)


@pytest.fixture(scope="module")
def hostile_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = tmp_path_factory.mktemp("mcp-hostile")
    box = seeded_box(root)
    for name, (block, _) in HOSTILE_NOTES.items():
        note = Path(box.vault) / _path(name)
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_text(f"---\n{block}---\n" + BODY.format(title=name), "utf-8")
    server = start_server(box, root / "serve.log", ECHO_MCP_TOKEN=TOKEN)
    yield server
    server.stop()


async def _timed(client: Client, tool: str, **arguments: Any) -> tuple[float, bool, dict[str, Any]]:
    started = time.perf_counter()
    err, data, _ = await call(client, tool, **arguments)
    return time.perf_counter() - started, err, data


def test_get_note_with_hostile_frontmatter_answers_fast_and_health_stays_up(
        hostile_server: RunningServer) -> None:
    async def body(client: Client) -> None:
        for name, (_, reason) in HOSTILE_NOTES.items():
            seconds, err, data = await _timed(client, "echo_get_note", path=_path(name))
            assert seconds < LIMIT_SECONDS, f"{name}: echo_get_note took {seconds:.2f}s"
            assert not err, data
            assert f"analytical engine read {name}" in data["content"]
            if reason is None:  # huge ints: kept as text, the rest of the block is read
                assert data["frontmatter"]["n"] == "9" * 5000, data["frontmatter_error"]
                assert data["frontmatter"]["h"].startswith("0xfff")
            else:
                assert data["frontmatter"] == {}
                assert data["frontmatter_error"] and reason in data["frontmatter_error"]
                assert "refused" in data["frontmatter_error"] or "YAML" in data["frontmatter_error"]

    with HealthProbe(hostile_server.base) as probe:
        anyio.run(with_http, f"{hostile_server.base}/mcp", TOKEN, body)
        time.sleep(0.1)
    assert probe.failures == [] and probe.latencies, probe.failures
    assert max(probe.latencies) < LIMIT_SECONDS, max(probe.latencies)
    assert httpx2.get(f"{hostile_server.base}/health", timeout=5).status_code == 200


def test_recall_over_hostile_notes_does_not_hang(hostile_server: RunningServer) -> None:
    async def body(client: Client) -> set[str]:
        found: set[str] = set()
        for name in HOSTILE_NOTES:
            seconds, err, data = await _timed(client, "echo_recall",
                                              query=f"{name} punched cards", limit=20)
            assert seconds < LIMIT_SECONDS * 3, f"echo_recall {name} took {seconds:.2f}s"
            assert not err, data
            found |= {hit["path"] for hit in data["primary"] + data["linked"]}
        return found

    with HealthProbe(hostile_server.base) as probe:
        found = anyio.run(with_http, f"{hostile_server.base}/mcp", TOKEN, body)
    assert {_path(name) for name in HOSTILE_NOTES} & found, found  # recall read them
    assert probe.failures == [] and max(probe.latencies) < LIMIT_SECONDS
