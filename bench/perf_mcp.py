"""MCP server throughput: concurrent clients calling ``echo_recall`` over streamable HTTP.

    python bench/perf_mcp.py [--notes 10000] [--clients 16] [--seconds 30] [--workers N]
                             [--client sdk|raw|both] [--client-processes N]
                             [--keep DIR [--reuse]] [--out FILE]

Generates a recall vault (``bench.synthetic_vault.build_recall_vault``: Zipfian
vocabulary, stopwords, wikilinks; 70% entities, 20% sessions, 10% journal), starts
``echo-memory serve --workers N`` (default: one process per core) on a free loopback
port with a bearer token (its warm-up builds the recall index), then runs ``--clients``
concurrent clients (asyncio tasks, in one process or spread over ``--client-processes``)
for ``--seconds`` (after a 2 s warm-up that is not counted), each calling
``echo_recall`` (default limit 8, linked notes on) with queries drawn from the vault's
vocabulary.

Clients: ``sdk`` = the MCP SDK's ``Client`` over ``streamable_http_client`` (the
2026-07-28 protocol it negotiates); ``raw`` = the same requests as bare JSON-RPC POSTs
with httpx2 (no client-side validation), to separate the server's cost from the SDK
client's; ``raw-legacy`` = bare POSTs on the 2025-06-18 wire (the SDK's stateless
session path, which costs the server more per call). Both share the machine's cores with
the server, so the report gives the server's and the client's CPU seconds.

Reports calls/s, latency p50/p95/p99/max (ms) and errors (``is_error`` results and
exceptions). Goal (issue): >= 500 calls/s, p99 <= 50 ms, 0 errors.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import anyio
import httpx2

from bench.fork_kit import run_parts, shares
from bench.serve_kit import start_serve
from bench.synthetic_vault import build_recall_vault, draw_queries, recall_sampler

TODAY = "2026-03-01"
TOKEN = "bench-token-" + "0" * 20
GOALS = {"calls_per_s": (500.0, ">="), "p99_ms": (50.0, "<="), "errors": (0, "<=")}
WARMUP_S = 2.0
CLI = [sys.executable, "-c", "from plugins.cli_start import run; run()"]


def _stat(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """utime + stime of process ``pid`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                children.setdefault(int(_stat(int(entry.name))[1]), []).append(int(entry.name))
            except (OSError, IndexError):
                continue
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = _stat(current)
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        todo.extend(children.get(current, []))
    return total


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def start_server(vault: Path, state: Path, work: Path,
                 workers: int) -> tuple[subprocess.Popen[bytes], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update({k: v for k, v in os.environ.items() if k.startswith("ECHO_MCP_")})
    env.update({"ECHO_TODAY": TODAY, "HOME": str(work / "home"),
                "ECHO_CONFIG": str(work / "none.toml"), "ECHO_MCP_TOKEN": TOKEN})
    (work / "serve.log").write_bytes(b"")  # this run's log only
    return start_serve(CLI, ROOT, work, vault, state, env, workers=workers, timeout=600.0,
                       poll=0.2)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


ARGS: dict[str, Any] = {}  # extra echo_recall arguments (--no-linked)


async def sdk_worker(url: str, queries: list[str], seed: int, stop_at: float, count_from: float,
                     lat: list[float], errors: list[str]) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    rng = random.Random(seed)
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"}) as http, \
            Client(streamable_http_client(url, http_client=http)) as client:
        while (now := time.perf_counter()) < stop_at:
            try:
                result = await client.call_tool("echo_recall",
                                                {"query": rng.choice(queries), **ARGS})
                failed = bool(result.is_error)
            except Exception as exc:  # noqa: BLE001 - counted, reported
                failed, result = True, exc
            if now >= count_from:
                lat.append((time.perf_counter() - now) * 1000)
                if failed:
                    errors.append(repr(result)[:200])


#: The per-request ``_meta`` of the 2026-07-28 protocol (what the SDK's client sends).
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "perf-mcp", "version": "0"},
               "io.modelcontextprotocol/clientCapabilities": {}}


async def raw_worker(url: str, queries: list[str], seed: int, stop_at: float, count_from: float,
                     lat: list[float], errors: list[str], modern: bool = True) -> None:
    """Bare ``tools/call`` POSTs: the 2026-07-28 wire (self-contained request, ``Mcp-*``
    headers, ``_meta``) when ``modern``, else the 2025-06-18 stateless one."""
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {TOKEN}",
               "Accept": "application/json, text/event-stream"}
    if modern:
        headers.update({"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                        "Mcp-Name": "echo_recall"})
    else:
        headers["MCP-Protocol-Version"] = "2025-06-18"
    async with httpx2.AsyncClient(headers=headers) as http:
        n = 0
        while (now := time.perf_counter()) < stop_at:
            n += 1
            params: dict[str, Any] = {"name": "echo_recall",
                                      "arguments": {"query": rng.choice(queries), **ARGS}}
            if modern:
                params["_meta"] = MODERN_META
            body = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params}
            try:
                reply = await http.post(url, json=body)
                data = reply.json()
                failed = reply.status_code != 200 or "error" in data or data["result"]["isError"]
                detail = reply.text
            except Exception as exc:  # noqa: BLE001 - counted, reported
                failed, detail = True, repr(exc)
            if now >= count_from:
                lat.append((time.perf_counter() - now) * 1000)
                if failed:
                    errors.append(detail[:200])


async def raw_legacy_worker(url: str, queries: list[str], seed: int, stop_at: float,
                            count_from: float, lat: list[float], errors: list[str]) -> None:
    """``raw_worker`` on the 2025-06-18 wire."""
    await raw_worker(url, queries, seed, stop_at, count_from, lat, errors, modern=False)


WORKERS = {"sdk": sdk_worker, "raw": raw_worker, "raw-legacy": raw_legacy_worker}


def _client_process(kind: str, url: str, queries: list[str], first: int, count: int,
                    start_at: float, seconds: float) -> tuple[list[float], list[str], float]:
    """``count`` clients (seeds ``first``..) in this process's own event loop: their
    latencies, errors and this process's CPU seconds."""
    lat: list[float] = []
    errors: list[str] = []
    worker = WORKERS[kind]

    async def main() -> None:
        count_from = start_at + WARMUP_S
        stop_at = count_from + seconds
        async with anyio.create_task_group() as group:
            for i in range(first, first + count):
                group.start_soon(worker, url, queries, i, stop_at, count_from, lat, errors)

    cpu_before = own_cpu()
    anyio.run(main)
    return lat, errors, own_cpu() - cpu_before


def run_load(kind: str, url: str, queries: list[str], clients: int, seconds: float,
             server_pid: int, processes: int = 1) -> dict[str, Any]:
    """``clients`` concurrent clients for ``seconds`` (after the warm-up), spread over
    ``processes`` client processes (forked; 1 = this process)."""
    load_before = round(os.getloadavg()[0], 2)
    cpu_server = cpu_seconds(server_pid)
    started = time.perf_counter()
    cut = shares(clients, processes)
    parts = run_parts(_client_process, [(kind, url, queries, sum(cut[:i]), share, started,
                                         seconds) for i, share in enumerate(cut)])
    wall = time.perf_counter() - started
    lat = [x for part in parts for x in part[0]]
    errors = [e for part in parts for e in part[1]]
    return {"client": kind, "clients": clients, "client_processes": processes,
            "seconds": seconds, "calls": len(lat),
            "calls_per_s": round(len(lat) / seconds, 1),
            "p50_ms": round(percentile(lat, 0.50), 2), "p95_ms": round(percentile(lat, 0.95), 2),
            "p99_ms": round(percentile(lat, 0.99), 2), "max_ms": round(max(lat, default=0), 2),
            "errors": len(errors), "error_samples": errors[:3],
            "server_cpu_s": round(cpu_seconds(server_pid) - cpu_server, 1),
            "client_cpu_s": round(sum(part[2] for part in parts), 1), "wall_s": round(wall, 1),
            "load_before": load_before, "load_after": round(os.getloadavg()[0], 2)}


def report(res: dict[str, Any]) -> None:
    print(f"\n{res['client']} clients x{res['clients']} in {res['client_processes']} "
          f"process(es), {res['seconds']:.0f} s, "
          f"{res['workers']} server process(es), include_linked={res['include_linked']}: "
          f"{res['calls']} calls, {res['calls_per_s']} calls/s")
    print(f"  latency ms: p50 {res['p50_ms']}  p95 {res['p95_ms']}  p99 {res['p99_ms']}  "
          f"max {res['max_ms']};  errors {res['errors']}")
    print(f"  CPU over {res['wall_s']} s wall: server {res['server_cpu_s']} s, "
          f"client {res['client_cpu_s']} s ({os.cpu_count()} cores; load average "
          f"{res['load_before']} before, {res['load_after']} after)")
    for key, (goal, op) in GOALS.items():
        value = res[key]
        met = value >= goal if op == ">=" else value <= goal
        print(f"  goal {key} {op} {goal}: {value} {'MET' if met else 'MISSED'}")
    for sample in res["error_samples"]:
        print(f"  error sample: {sample}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=10000)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--client", choices=(*WORKERS, "both"), default="both",
                        help="both = sdk, then raw")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="`serve --workers` processes (default: one per core)")
    parser.add_argument("--queries", type=int, default=2000,
                        help="distinct queries the clients draw from (default 2000)")
    parser.add_argument("--client-processes", type=int, default=1,
                        help="spread the clients over this many processes (default 1)")
    parser.add_argument("--no-linked", action="store_true", help="include_linked=false")
    parser.add_argument("--keep", type=Path, help="generate (or --reuse) the vault here")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args()
    work = opts.keep or Path(tempfile.mkdtemp(prefix="perf-mcp-"))
    vault, state = work / f"recall-{opts.notes}", work / f"state-{opts.notes}"
    if not (opts.reuse and vault.is_dir()):
        shutil.rmtree(vault, ignore_errors=True)
        shutil.rmtree(state, ignore_errors=True)
        started = time.perf_counter()
        build_recall_vault(vault, state, opts.notes)
        print(f"generated {opts.notes} notes in {time.perf_counter() - started:.1f} s")
    queries = draw_queries(recall_sampler(), opts.queries)
    if opts.no_linked:
        ARGS["include_linked"] = False
    started = time.perf_counter()
    proc, base = start_server(vault, state, work, opts.workers)
    print(f"server up (index warm-up included) in {time.perf_counter() - started:.1f} s: {base}")
    results = []
    try:
        for kind in (("sdk", "raw") if opts.client == "both" else (opts.client,)):
            res = run_load(kind, f"{base}/mcp", queries, opts.clients, opts.seconds, proc.pid,
                           max(1, min(opts.client_processes, opts.clients)))
            res["workers"] = opts.workers
            res["include_linked"] = not opts.no_linked
            report(res)
            results.append(res)
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if opts.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if opts.out:
        opts.out.write_text(json.dumps({"notes": opts.notes, "cores": os.cpu_count(),
                                        "results": results}, indent=2))


if __name__ == "__main__":
    main()
