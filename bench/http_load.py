"""A light HTTP load generator for the benches: concurrent writers, each on one
keep-alive HTTP/1.1 connection, POSTing JSON bodies and reading whole answers.

It speaks only what our server answers (``Content-Length`` bodies, no chunking) and
costs ~60-90 us of CPU a call, against ~700 us for an ``httpx`` client: on a 2-core
machine the load generator shares the cores with the server, and a heavy client would
measure the client. Writers are asyncio tasks spread over ``processes`` forked
processes.

``run_load(base, path, headers, body, accept, writers=..., seconds=..., processes=...)``:
``body(writer, n)`` makes the ``n``-th request body of a writer; ``accept(status,
data)`` turns an answer into the ids it acknowledged (raise to count an error). Returns
``Load``: acknowledged ids, error samples, per-call latencies (ms) and the wall time.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from bench.fork_kit import run_parts, shares

__all__ = ["Load", "run_load"]

Body = Callable[[int, int], bytes]
Accept = Callable[[int, Any], list[str]]


class Load(NamedTuple):
    acked: list[str]
    errors: list[str]
    latencies_ms: list[float]
    wall_s: float


async def _writer(host: str, port: int, head: bytes, index: int, body: Body, accept: Accept,
                  stop_at: float, out: tuple[list[str], list[str], list[float]]) -> None:
    acked, errors, latencies = out
    reader, writer = await asyncio.open_connection(host, port)
    try:
        n = 0
        while (now := time.perf_counter()) < stop_at:
            n += 1
            payload = body(index, n)
            writer.write(head + b"Content-Length: %d\r\n\r\n" % len(payload) + payload)
            answer = await reader.readuntil(b"\r\n\r\n")
            status = int(answer.split(b" ", 2)[1])
            length = 0
            for line in answer.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            data = json.loads(await reader.readexactly(length)) if length else None
            try:
                acked.extend(accept(status, data))
            except Exception as exc:  # noqa: BLE001 - counted, reported
                errors.append(f"{status} {exc!r}"[:300])
                continue
            latencies.append((time.perf_counter() - now) * 1000)
    finally:
        writer.close()


def _process(host: str, port: int, head: bytes, first: int, count: int, body: Body,
             accept: Accept, stop_at: float) -> tuple[list[str], list[str], list[float]]:
    out: tuple[list[str], list[str], list[float]] = ([], [], [])

    async def main() -> None:
        await asyncio.gather(*(_writer(host, port, head, i, body, accept, stop_at, out)
                               for i in range(first, first + count)))

    asyncio.run(main())
    return out


def run_load(base: str, path: str, headers: Mapping[str, str], body: Body, accept: Accept, *,
             writers: int = 16, seconds: float = 20.0, processes: int = 2) -> Load:
    """``writers`` writers POSTing to ``base + path`` for ``seconds`` (see the module
    docstring)."""
    host, _, port = base.split("//", 1)[1].rstrip("/").rpartition(":")
    head = (f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\n"
            + "".join(f"{k}: {v}\r\n" for k, v in headers.items())).encode()
    parts_of = shares(writers, max(1, min(processes, writers)))
    started = time.perf_counter()
    stop_at = started + seconds
    parts = run_parts(_process, [(host, int(port), head, sum(parts_of[:i]), share, body,
                                  accept, stop_at) for i, share in enumerate(parts_of)])
    wall = time.perf_counter() - started
    return Load([a for p in parts for a in p[0]], [e for p in parts for e in p[1]],
                [x for p in parts for x in p[2]], wall)
