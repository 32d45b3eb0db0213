"""The habitat's record, measured (issue 18's throughput acceptance):

    python bench/perf_habitat.py [--writers 16] [--seconds 20] [--batch 1] [--workers 1]
                                 [--client-processes 2] [--route plain|mcp] [--hook-runs 40]
                                 [--records 1000000] [--queries 60] [--only a|b|c]
                                 [--keep DIR] [--out FILE]

(a) **Acknowledged records/s through the server**: ``echo-memory serve`` (HTTP on
127.0.0.1 with a bearer token) and ``--writers`` concurrent writers (asyncio tasks over
``--client-processes`` processes, one keep-alive connection and one session each, the
light client of ``bench/http_load.py``), each call carrying ``--batch`` records, through
each ``--route`` in turn on the same server: ``plain`` POSTs the tool's arguments to
``/call/echo_habitat_record``, ``mcp`` POSTs a JSON-RPC ``tools/call`` to ``/mcp``. A
record counts once the server has answered its call: it is then fsync-ed in its day
file (group commit). After the run every id either route acknowledged is looked up in
the day files: lost and doubled ids are reported (both must be 0). The goal is checked
on the faster route.

(b) **What the hook recorder adds to an event**: the recorder run as the built plugin's
hooks run it (a cold ``python -S -E hook_record_run.py <Event>`` per event), median and
p90 wall time of ``--hook-runs`` runs per event over a realistic session's payloads
(prompts, Bash / Read / Edit calls, a tool output holding an API key), next to a bare
``python -S -E -c pass``. The compiled-pattern and config copies are warmed first (one
run), as they are after a session's first event.

(c) **ask_habitat on a big loom**: ``--records`` synthetic records (8 agents, 2,000
sessions, 30 days, a Zipfian vocabulary, tool results) written to day files, the index
built (its time reported), then ``ask_habitat`` (the operation, in process, index
warm) for ``--queries`` queries of 1-3 words (median, p95).

Goals (issue 18): (a) >= 2,000 records/s, (b) <= 20 ms, (c) <= 50 ms median.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.http_load import Load, run_load
from bench.serve_kit import start_serve

TOKEN = "bench-token-" + "1" * 20
TODAY = "2026-03-01"
CLI = [sys.executable, "-c", "from plugins.cli_start import run; run()"]
ROUTES = {"plain": "POST /call/echo_habitat_record (plain JSON)",
          "mcp": "POST /mcp tools/call echo_habitat_record (MCP)"}
GOALS = {"records_per_s": (2000.0, ">="), "hook_ms": (20.0, "<="), "ask_ms": (50.0, "<=")}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "perf-habitat", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def bench_env(work: Path, **extra: str) -> dict[str, str]:
    """An isolated environment under ``work`` (no ECHO_* of the caller)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update({"HOME": str(work / "home"), "ECHO_CONFIG": str(work / "none.toml"),
                "XDG_CACHE_HOME": str(work / "cache"), "ECHO_WATCH": "off",
                "ECHO_SERVE_SWEEP_MINUTES": "0", "ECHO_PLUGIN_DISTS": "echo-memory"})
    env.update(extra)
    return env


def make_vault(work: Path) -> tuple[Path, Path]:
    """An initialised vault and its state base under ``work``."""
    from echo_core.context import create_context
    from echo_core.ops.init import init_vault

    vault, state = work / "vault", work / "state"
    vault.mkdir(parents=True, exist_ok=True)
    init_vault(create_context(vault=str(vault), state_dir=str(state), env=bench_env(work)))
    return vault, state


def start_server(work: Path, vault: Path, state: Path, workers: int = 1,
                 **extra: str) -> tuple[subprocess.Popen[bytes], str]:
    """``echo-memory serve`` on a free port; returns once /health answers."""
    return start_serve(CLI, ROOT, work, vault, state, bench_env(work, ECHO_MCP_TOKEN=TOKEN, **extra),
                       workers=workers, timeout=120.0)


# --- (a) records through the server ---------------------------------------------------


def record_arguments(session: str, agent: str, batch: int, seq: int) -> dict[str, Any]:
    """The arguments of one ``echo_habitat_record`` call carrying ``batch`` records."""
    if batch == 1:
        return {"session_id": session, "agent_id": agent, "kind": "tool",
                "text": f"Bash {{\"command\": \"make test {seq}\"}}", "result": "ok",
                "duration_ms": seq % 1000}
    return {"session_id": session, "agent_id": agent, "records": [
        {"kind": "tool", "text": f"Bash {{\"command\": \"make test {seq}-{i}\"}}",
         "result": "ok", "duration_ms": i} for i in range(batch)]}


def record_call(n: int, session: str, agent: str, batch: int, seq: int) -> dict[str, Any]:
    """The JSON-RPC body of one ``echo_habitat_record`` call."""
    return {"jsonrpc": "2.0", "id": n, "method": "tools/call",
            "params": {"name": "echo_habitat_record",
                       "arguments": record_arguments(session, agent, batch, seq),
                       "_meta": META}}


def _mcp_ids(status: int, data: Any) -> list[str]:
    result = data["result"]
    if status != 200 or result.get("isError"):
        raise RuntimeError(json.dumps(result)[:200])
    return list(result["structuredContent"]["ids"])


def _plain_ids(status: int, data: Any) -> list[str]:
    if status != 200 or not data.get("ok"):
        raise RuntimeError(json.dumps(data)[:200])
    return list(data["ids"])


def run_writers(base: str, route: str, writers: int, seconds: float, batch: int,
                processes: int) -> Load:
    """``writers`` writers over ``processes`` client processes for ``seconds``, through
    ``/mcp`` (JSON-RPC ``tools/call``) or ``/call/echo_habitat_record`` (plain JSON)."""
    headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}
    if route == "mcp":
        headers.update({"Accept": "application/json, text/event-stream",
                        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                        "Mcp-Name": "echo_habitat_record"})

        def body(i: int, n: int) -> bytes:
            return json.dumps(record_call(n, f"writer-{i}", f"agent-{i % 4}", batch,
                                          n)).encode()

        return run_load(base, "/mcp", headers, body, _mcp_ids, writers=writers,
                        seconds=seconds, processes=processes)

    def plain_body(i: int, n: int) -> bytes:
        return json.dumps(record_arguments(f"writer-{i}", f"agent-{i % 4}", batch, n)).encode()

    return run_load(base, "/call/echo_habitat_record", headers, plain_body, _plain_ids,
                    writers=writers, seconds=seconds, processes=processes)


def loom_ids(state: Path) -> list[str]:
    """Every record id in the day files under ``state`` (each whole line parsed)."""
    ids = []
    for day in sorted(state.glob("vaults/*/habitat/loom/*.jsonl")):
        for line in day.read_bytes().splitlines(keepends=True):
            if line.endswith(b"\n"):
                ids.append(json.loads(line)["id"])
    return ids


def _route_figures(load: Load) -> dict[str, Any]:
    latencies = sorted(load.latencies_ms)
    return {"seconds": round(load.wall_s, 1), "calls": len(latencies),
            "records": len(load.acked),
            "records_per_s": round(len(load.acked) / load.wall_s, 1),
            "calls_per_s": round(len(latencies) / load.wall_s, 1),
            "p50_ms": round(statistics.median(latencies), 2) if latencies else None,
            "p99_ms": round(latencies[int(0.99 * (len(latencies) - 1))], 2)
            if latencies else None,
            "errors": len(load.errors), "error_samples": load.errors[:3]}


def server_throughput(work: Path, *, writers: int = 16, seconds: float = 20.0, batch: int = 1,
                      workers: int = 1, client_processes: int = 2,
                      routes: tuple[str, ...] = ("plain", "mcp")) -> dict[str, Any]:
    """(a): each route's figures (one after the other, same server) and the durability
    check over every record either acknowledged."""
    vault, state = make_vault(work)
    proc, base = start_server(work, vault, state, workers,
                              ECHO_MCP_WRITE_WORKERS=str(max(4, writers)))
    figures: dict[str, Any] = {}
    acked: list[str] = []
    try:
        for route in routes:
            load = run_writers(base, route, writers, seconds, batch, client_processes)
            figures[route] = _route_figures(load)
            acked.extend(load.acked)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    on_disk = loom_ids(state)
    counts: dict[str, int] = {}
    for rid in on_disk:
        counts[rid] = counts.get(rid, 0) + 1
    lost = [r for r in acked if r not in counts]
    doubled = [r for r, n in counts.items() if n > 1]
    return {"writers": writers, "batch": batch, "server_processes": workers,
            "client_processes": client_processes, "routes": figures,
            "records_per_s": max(f["records_per_s"] for f in figures.values()),
            "lost": len(lost), "doubled": len(doubled), "on_disk": len(on_disk),
            "acknowledged": len(acked)}


# --- (b) the hook recorder ------------------------------------------------------------


def session_events() -> list[tuple[str, dict[str, Any]]]:
    """A realistic session's hook events (payloads as Claude Code sends them)."""
    base = {"session_id": "bench-session", "transcript_path": "/tmp/t.jsonl", "cwd": "/work/app",
            "permission_mode": "default"}
    source = "def handler(event):\n    return {'status': 200}\n" * 40
    events: list[tuple[str, dict[str, Any]]] = [
        ("SessionStart", {"source": "startup", "model": "claude"}),
        ("UserPromptSubmit", {"prompt": "The deploy script fails on staging; find out why "
                                        "and fix it."}),
        ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "./deploy.sh staging"},
                        "tool_use_id": "toolu_1"}),
        ("PostToolUseFailure", {"tool_name": "Bash",
                                "tool_input": {"command": "./deploy.sh staging"},
                                "tool_use_id": "toolu_1", "error": "exit 1: permission denied"}),
        ("PreToolUse", {"tool_name": "Read", "tool_input": {"file_path": "/work/app/deploy.sh"},
                        "tool_use_id": "toolu_2"}),
        ("PostToolUse", {"tool_name": "Read", "tool_input": {"file_path": "/work/app/app.py"},
                         "tool_use_id": "toolu_2",
                         "tool_response": {"type": "text", "file": {"content": source}}}),
        ("PreToolUse", {"tool_name": "Bash", "tool_input": {"command": "cat .env"},
                        "tool_use_id": "toolu_3"}),
        ("PostToolUse", {"tool_name": "Bash", "tool_input": {"command": "cat .env"},
                         "tool_use_id": "toolu_3", "tool_response": {
                             "stdout": "PORT=8080\nAPI_KEY=" + "sk-" + "proj-" + "a1B2" * 10
                             + "\nLOG_LEVEL=debug\n", "stderr": ""}}),
        ("PostToolUse", {"tool_name": "Edit", "tool_input": {
            "file_path": "/work/app/deploy.sh", "old_string": "set -e", "new_string":
            "set -euo pipefail"}, "tool_use_id": "toolu_4", "tool_response": {"ok": True}}),
        ("Stop", {"stop_hook_active": False, "last_assistant_message":
                  "deploy.sh was not executable; I added +x and strict mode."}),
        ("SessionEnd", {"reason": "prompt_input_exit"}),
    ]
    return [(event, {**base, "hook_event_name": event, **fields}) for event, fields in events]


def _timed(command: list[str], data: bytes, env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, input=data, env=env, check=True, capture_output=True)
    return (time.perf_counter() - start) * 1000


def hook_overhead(work: Path, runs: int = 40) -> dict[str, Any]:
    """(b): median / p90 ms per event of the cold recorder, and of a bare interpreter."""
    from plugins.habitat.build_part import HabitatHooksPart

    vault, state = make_vault(work)
    plugin = work / "plugin"
    HabitatHooksPart().contribute(str(plugin), None)
    script = plugin / "scripts" / "habitat" / "hook_record_run.py"
    env = bench_env(work, ECHO_VAULT=str(vault), ECHO_STATE_DIR=str(state))
    python = [sys.executable, "-S", "-E"]
    events = session_events()
    for event, body in events:  # warm: the copies a session's first event makes
        _timed([*python, str(script), event], json.dumps(body).encode(), env)
    bare = [_timed([*python, "-c", "pass"], b"", env) for _ in range(runs)]
    per_event: dict[str, list[float]] = {}
    for _ in range(runs):
        for event, body in events:
            per_event.setdefault(event, []).append(
                _timed([*python, str(script), event], json.dumps(body).encode(), env))
    every = [x for xs in per_event.values() for x in xs]
    return {"runs": runs, "bare_python_ms": round(statistics.median(bare), 2),
            "hook_ms": round(statistics.median(every), 2),
            "hook_p90_ms": round(sorted(every)[int(0.9 * (len(every) - 1))], 2),
            "per_event_ms": {k: round(statistics.median(v), 2) for k, v in per_event.items()},
            "added_over_bare_ms": round(statistics.median(every) - statistics.median(bare), 2)}


# --- (c) ask_habitat on a big loom -----------------------------------------------------

_WORDS = [f"w{i}" for i in range(5000)]
_TOPICS = ("deploy", "build", "test", "migration", "cache", "parser", "login", "invoice",
           "search", "upload", "timeout", "schema", "docker", "release", "refactor")


def _text(rng: random.Random) -> str:
    picks = [_WORDS[min(int(rng.paretovariate(1.1)) - 1, len(_WORDS) - 1)] for _ in range(12)]
    return " ".join([rng.choice(_TOPICS), *picks])


def write_loom(loom_root: Path, records: int, seed: int = 18) -> float:
    """``records`` synthetic records in 30 day files; the seconds it took."""
    import datetime as _dt

    import orjson

    rng = random.Random(seed)
    loom_root.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    per_day = records // 30 + 1
    written = 0
    for day in range(30):
        date = _dt.date(2026, 2, 1) + _dt.timedelta(days=day)
        lines = []
        for i in range(min(per_day, records - written)):
            ts = _dt.datetime.combine(date, _dt.time(8)) + _dt.timedelta(milliseconds=i * 50)
            kind = rng.choice(("tool", "tool", "tool", "prompt", "reply", "note"))
            error = kind == "tool" and rng.random() < 0.08
            lines.append(orjson.dumps({
                "id": f"{ts.strftime('%Y%m%dT%H%M%S%f')}-{rng.getrandbits(32):08x}",
                "parent_id": None, "agent_id": f"agent-{rng.randrange(8)}",
                "session_id": f"s{rng.randrange(2000)}", "kind": kind, "text": _text(rng),
                "result": ("exit 1 " if error else "ok ") + _text(rng) if kind == "tool" else "",
                "is_error": error, "duration_ms": rng.randrange(5000) if kind == "tool" else None,
                "ts": ts.isoformat(timespec="microseconds")}) + b"\n")
        (loom_root / f"{date.isoformat()}.jsonl").write_bytes(b"".join(lines))
        written += len(lines)
    return time.perf_counter() - started


def ask_latency(work: Path, records: int = 1_000_000, queries: int = 60) -> dict[str, Any]:
    """(c): index build time, then ask_habitat median / p95 over ``queries`` queries."""
    from echo_core.context import create_context
    from plugins.habitat.loom_ask import ask_habitat
    from plugins.habitat.loom_search import index_for
    from plugins.habitat.paths import loom_dir

    vault, state = make_vault(work)
    ctx = create_context(vault=str(vault), state_dir=str(state),
                         env=bench_env(work, ECHO_TODAY="2026-03-02"))
    generated = write_loom(loom_dir(ctx), records)
    started = time.perf_counter()
    index_for(ctx).catch_up()
    indexed = time.perf_counter() - started
    rng = random.Random(7)
    asked = []
    for _ in range(queries):
        words = [rng.choice(_TOPICS)] + [_WORDS[min(int(rng.paretovariate(1.1)) - 1, 4999)]
                                         for _ in range(rng.randrange(3))]
        filters: dict[str, Any] = rng.choice(({}, {"agent_id": "agent-3"}, {"kind": "tool"},
                                              {"since": "2026-02-20"}))
        start = time.perf_counter()
        env = ask_habitat(ctx, " ".join(words), 10, **filters)
        asked.append((time.perf_counter() - start) * 1000)
        assert env.ok
    return {"records": records, "generate_s": round(generated, 1),
            "index_build_s": round(indexed, 1), "queries": queries,
            "ask_ms": round(statistics.median(asked), 2),
            "ask_p95_ms": round(sorted(asked)[int(0.95 * (len(asked) - 1))], 2),
            "index_mb": round(sum(p.stat().st_size for p in state.rglob("loom_index.sqlite*"))
                              / 1e6, 1)}


def _goal(name: str, value: float) -> str:
    goal, op = GOALS[name]
    met = value >= goal if op == ">=" else value <= goal
    return f"goal {name} {op} {goal}: {value} {'MET' if met else 'MISSED'}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--writers", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--batch", type=int, default=1, help="records per call (a)")
    parser.add_argument("--workers", type=int, default=1, help="`serve --workers` (a)")
    parser.add_argument("--client-processes", type=int, default=2)
    parser.add_argument("--route", choices=tuple(ROUTES), action="append",
                        help="(a) through which route; repeat for several (default: both)")
    parser.add_argument("--hook-runs", type=int, default=40)
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--only", choices=("a", "b", "c"))
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--out", type=Path)
    opts = parser.parse_args()
    opts.route = opts.route or list(ROUTES)
    work = opts.keep or Path(tempfile.mkdtemp(prefix="perf-habitat-"))
    results: dict[str, Any] = {"cores": os.cpu_count(),
                               "load_before": round(os.getloadavg()[0], 2)}
    try:
        if opts.only in (None, "a"):
            a = server_throughput(work / "a", writers=opts.writers, seconds=opts.seconds,
                                  batch=opts.batch, workers=opts.workers,
                                  client_processes=opts.client_processes,
                                  routes=tuple(opts.route))
            results["a"] = a
            for route, f in a["routes"].items():
                print(f"(a) {ROUTES[route]}: {a['writers']} writers x {a['batch']} "
                      f"record(s)/call, {a['server_processes']} server process(es): "
                      f"{f['records']} records acknowledged in {f['seconds']} s = "
                      f"{f['records_per_s']} records/s ({f['calls_per_s']} calls/s, p50 "
                      f"{f['p50_ms']} ms, p99 {f['p99_ms']} ms); errors {f['errors']}")
            print(f"    every acknowledged record on disk once: {a['acknowledged']} "
                  f"acknowledged, lost {a['lost']}, doubled {a['doubled']}")
            print("    " + _goal("records_per_s", a["records_per_s"]))
        if opts.only in (None, "b"):
            b = hook_overhead(work / "b", opts.hook_runs)
            results["b"] = b
            print(f"(b) hook recorder, cold process, median of {b['runs']} x "
                  f"{len(b['per_event_ms'])} events: {b['hook_ms']} ms (p90 {b['hook_p90_ms']}"
                  f" ms; bare python -S {b['bare_python_ms']} ms, so "
                  f"{b['added_over_bare_ms']} ms of its own); per event {b['per_event_ms']}")
            print("    " + _goal("hook_ms", b["hook_ms"]))
        if opts.only in (None, "c"):
            c = ask_latency(work / "c", opts.records, opts.queries)
            results["c"] = c
            print(f"(c) ask_habitat on {c['records']} records (index built in "
                  f"{c['index_build_s']} s, {c['index_mb']} MB): median {c['ask_ms']} ms, "
                  f"p95 {c['ask_p95_ms']} ms over {c['queries']} queries")
            print("    " + _goal("ask_ms", c["ask_ms"]))
    finally:
        if opts.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    results["load_after"] = round(os.getloadavg()[0], 2)
    if opts.out:
        opts.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
