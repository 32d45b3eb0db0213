"""Stateless server replicas on one PostgreSQL vault (issue 20 acceptance).

    python bench/perf_replicas.py [--url postgresql://...] [--replicas 3] [--clients 16]
                                  [--seconds 60] [--recall-share 0.8] [--titles 24]
                                  [--seed 7] [--keep DIR]

Starts (or, with ``--url``, uses) a PostgreSQL server (``bench/postgres_kit.py``'s
throwaway cluster), makes a vault in a fresh schema, and runs ``--replicas`` ``echo-memory
serve`` processes against it, each on its own port with its own state dir (as separate
machines would be). ``--clients`` keep-alive clients (client i talks to replica i mod N)
call for ``--seconds``: ``--recall-share`` of the calls ``POST /call/echo_recall`` (a
title or a title's word from the pool), the rest ``POST /call/echo_capture`` of kind
``concept`` on a title drawn from a pool of ``--titles`` (so replicas race to create and
update the same entity), each body carrying a unique marker.

Meanwhile a probe measures visibility: every ``PROBE_EVERY`` s it captures a note with a
unique word on one replica (in turn) and, from the acknowledgement on, polls recall of
that word on every other replica every ``POLL_S`` s until it is there.

Afterwards it reads the vault straight from PostgreSQL and checks: 0 errors, every
acknowledged capture's marker in the vault (0 lost), no marker twice (0 doubled), one
note per title (0 duplicate entities), every probe visible on every other replica within
1 s. Prints paste-ready figures; exits 1 on a violation. Every process it started is
stopped; the cluster (not a ``--url`` server) is removed, the schema dropped.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.fork_kit import run_parts, shares
from bench.postgres_kit import (
    LocalCluster,
    drop_schema,
    new_schema_name,
    server_binaries,
    with_schema,
)
from bench.serve_kit import start_serve

TOKEN = "bench-token-" + "7" * 20
CLI = [sys.executable, "-c", "from plugins.cli_start import run; run()"]
WORDS = ("amber", "basalt", "cedar", "delta", "ember", "falcon", "garnet", "harbor",
         "indigo", "juniper", "kestrel", "lagoon", "marble", "nectar", "orchid",
         "pewter", "quartz", "raven", "saffron", "tundra", "umber", "velvet", "willow",
         "yarrow", "zephyr", "bramble", "cobalt", "dune", "fjord", "glacier", "hollow",
         "ivory", "jasper", "kelp", "lichen", "meadow", "nimbus", "onyx", "prairie",
         "quill", "russet", "sierra", "thistle", "upland", "vortex", "wharf", "xenon",
         "yonder", "zinnia", "alder", "birch", "cinder", "drift", "estuary", "fern",
         "grove", "heath", "inlet")
PROBE_EVERY = 1.0
POLL_S = 0.02
VISIBLE_WITHIN_S = 1.0
PROBE_GIVE_UP_S = 10.0


def titles(count: int) -> list[str]:
    """``count`` two-word titles sharing no word (so no duplicate gate stops a create)."""
    if count * 2 > len(WORDS):
        raise SystemExit(f"--titles at most {len(WORDS) // 2}")
    return [f"{WORDS[2 * i].title()} {WORDS[2 * i + 1].title()}" for i in range(count)]


# --- a raw keep-alive HTTP/1.1 client (as bench/http_load.py: cheap on the CPU) ---------

class Conn:
    """One keep-alive connection to a replica."""

    def __init__(self, base: str) -> None:
        host, _, port = base.split("//", 1)[1].rpartition(":")
        self.host, self.port = host, int(port)
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def call(self, tool: str, args: dict[str, Any]) -> tuple[int, Any]:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        assert self.reader is not None
        payload = json.dumps(args).encode()
        self.writer.write(
            (f"POST /call/{tool} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
             f"Authorization: Bearer {TOKEN}\r\nContent-Type: application/json\r\n"
             f"Content-Length: {len(payload)}\r\n\r\n").encode() + payload)
        head = await self.reader.readuntil(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        body = await self.reader.readexactly(length) if length else b""
        return status, json.loads(body) if body else None

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def recall_paths(data: Any) -> list[str]:
    found = data if isinstance(data, dict) else {}
    return [h.get("path", "") for key in ("primary", "linked") for h in found.get(key) or []]


# --- the load ----------------------------------------------------------------------------

async def _client(index: int, bases: list[str], pool: list[str], share: float, seed: int,
                  stop_at: float, out: dict[str, Any]) -> None:
    rng = random.Random(seed * 1000 + index)
    replica = index % len(bases)
    conn = Conn(bases[replica])
    n = 0
    try:
        while time.perf_counter() < stop_at:
            n += 1
            title = rng.choice(pool)
            if rng.random() < share:
                op = "recall"
                query = title if rng.random() < 0.5 else rng.choice(title.split())
                args: dict[str, Any] = {"query": query}
            else:
                op = "capture"
                marker = f"mk{index}x{n}q"
                args = {"title": title, "kind": "concept",
                        "body": f"Fact {marker} about {title} from replica {replica}."}
            started = time.perf_counter()
            try:
                status, data = await conn.call(f"echo_{op}", args)
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                out["errors"].append(f"{op} replica {replica}: {exc!r}"[:300])
                conn.close()
                conn = Conn(bases[replica])
                continue
            took = (time.perf_counter() - started) * 1000
            ok = status == 200 and isinstance(data, dict) and data.get("ok") is True
            if not ok:
                out["errors"].append(f"{op} replica {replica}: {status} "
                                     f"{json.dumps(data)[:240]}")
                continue
            out["lat"][op].append(took)
            if op == "capture":
                out["acked"].append((marker, title, data.get("action")))
    finally:
        conn.close()


def load_part(first: int, count: int, bases: list[str], pool: list[str], share: float,
              seed: int, stop_at: float) -> dict[str, Any]:
    """Clients ``first .. first+count-1`` until ``stop_at`` (one forked process)."""
    out: dict[str, Any] = {"kind": "load", "errors": [], "acked": [],
                           "lat": {"recall": [], "capture": []}}

    async def main() -> None:
        await asyncio.gather(*(_client(i, bases, pool, share, seed, stop_at, out)
                               for i in range(first, first + count)))

    asyncio.run(main())
    return out


async def _probe_once(k: int, bases: list[str], conns: list[Conn], rng: random.Random,
                      out: dict[str, Any]) -> None:
    origin = k % len(bases)
    word = "vis" + "".join(rng.choice(string.ascii_lowercase) for _ in range(10))
    status, data = await conns[origin].call(
        "echo_capture", {"title": word, "kind": "concept",
                         "body": f"Visibility probe {word}q written on replica {origin}."})
    acked = time.perf_counter()
    if status != 200 or not (data or {}).get("ok"):
        out["errors"].append(f"probe capture replica {origin}: {status} {json.dumps(data)[:200]}")
        return
    path = data["path"]
    out["acked"].append((f"{word}q", word, data.get("action")))  # the body's marker

    async def seen_on(other: int) -> None:
        while True:
            status, found = await conns[other].call("echo_recall", {"query": word})
            if status == 200 and path in recall_paths(found):
                out["visible"].append((origin, other, time.perf_counter() - acked))
                return
            if time.perf_counter() - acked > PROBE_GIVE_UP_S:
                out["visible"].append((origin, other, float("inf")))
                return
            await asyncio.sleep(POLL_S)

    await asyncio.gather(*(seen_on(o) for o in range(len(bases)) if o != origin))


def probe_part(bases: list[str], seed: int, stop_at: float) -> dict[str, Any]:
    """The visibility probe until ``stop_at`` (one forked process)."""
    out: dict[str, Any] = {"kind": "probe", "errors": [], "acked": [], "visible": []}
    rng = random.Random(seed)

    async def main() -> None:
        conns = [Conn(b) for b in bases]
        try:
            k = 0
            await asyncio.sleep(PROBE_EVERY / 2)
            while time.perf_counter() < stop_at - PROBE_EVERY:
                started = time.perf_counter()
                await _probe_once(k, bases, conns, rng, out)
                k += 1
                await asyncio.sleep(max(0.0, PROBE_EVERY - (time.perf_counter() - started)))
        finally:
            for conn in conns:
                conn.close()

    asyncio.run(main())
    return out


def part(kind: str, *args: Any) -> dict[str, Any]:
    """``run_parts`` target: a load share or the probe (a crash is reported as an error,
    so the parent never waits for a result that will not come)."""
    try:
        return load_part(*args) if kind == "load" else probe_part(*args)
    except Exception as exc:  # noqa: BLE001 - reported
        return {"kind": kind, "errors": [f"{kind} part crashed: {exc!r}"], "acked": []}


# --- the audit ---------------------------------------------------------------------------

def audit(url: str, schema: str, acked: list[tuple[str, str, str]],
          pool: list[str]) -> dict[str, Any]:
    """Read every note from PostgreSQL and check the acknowledged captures."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(f'SELECT path, data FROM "{schema}".echo_files WHERE '
                            "path LIKE 'resources/concepts/%%' AND path NOT LIKE "
                            "'%%README.md'").fetchall()
        journal = conn.execute(f'SELECT data FROM "{schema}".echo_files WHERE path = '
                               "'_agent/index/entities.journal.ndjson'").fetchone()
    notes = {p: bytes(d).decode("utf-8") for p, d in rows}
    everything = "\n".join(notes.values())
    counts = Counter(re.findall(r"\b(?:mk\d+x\d+q|vis[a-z]{10}q)\b", everything))
    lost = [m for m, _t, _a in acked if counts[m] == 0]
    doubled = [m for m, n in counts.items() if n > 1]
    heading = re.compile(r"^# (.+)$", re.MULTILINE)
    per_title = Counter(m.group(1).strip() for text in notes.values()
                        for m in [heading.search(text)] if m)
    duplicates = {t: n for t, n in per_title.items() if n > 1}
    indexed = len(bytes(journal[0]).decode().splitlines()) if journal else 0
    return {"notes": len(notes), "lost": lost, "doubled": doubled,
            "duplicates": duplicates, "titles_with_notes": sum(1 for t in pool if t in per_title),
            "journal_lines": indexed}


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def bench_env(work: Path) -> dict[str, str]:
    """An isolated environment (no ECHO_* of the caller), the bearer token set."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update({"HOME": str(work / "home"), "ECHO_CONFIG": str(work / "none.toml"),
                "XDG_CACHE_HOME": str(work / "cache"), "ECHO_MCP_TOKEN": TOKEN,
                "ECHO_PLUGIN_DISTS": "echo-memory", "ECHO_SERVE_SWEEP_MINUTES": "0",
                "ECHO_MCP_WRITE_WORKERS": "4"})
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="a PostgreSQL server to use (else a throwaway one)")
    parser.add_argument("--replicas", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--recall-share", type=float, default=0.8)
    parser.add_argument("--titles", type=int, default=24)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="keep the work folder (logs, state dirs)")
    a = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="echo-replicas-")) if a.keep is None else a.keep
    work.mkdir(parents=True, exist_ok=True)
    cluster = None
    procs: list[subprocess.Popen[bytes]] = []
    server = a.url
    schema = new_schema_name()
    try:
        if server is None:
            bindir = server_binaries()
            if bindir is None:
                raise SystemExit("no PostgreSQL server binaries (initdb, pg_ctl); pass --url")
            cluster = LocalCluster(bindir)
            cluster.start()
            server = cluster.url
        vault = with_schema(server, schema)
        env = bench_env(work)
        from echo_core.context import create_context
        from echo_core.ops.init import init_vault

        init_vault(create_context(vault=vault, state_dir=str(work / "state-init"), env=env))
        bases = []
        for i in range(a.replicas):
            (work / f"r{i}").mkdir(exist_ok=True)
            proc, base = start_serve(CLI, ROOT, work / f"r{i}", vault,  # type: ignore[arg-type]
                                     work / f"state-{i}", env)
            procs.append(proc)
            bases.append(base)
        pool = titles(a.titles)
        stop_at = time.perf_counter() + a.seconds
        loads = shares(a.clients, 2)
        calls: list[tuple[Any, ...]] = [
            ("load", sum(loads[:i]), n, bases, pool, a.recall_share, a.seed, stop_at)
            for i, n in enumerate(loads) if n]
        calls.append(("probe", bases, a.seed, stop_at))
        started = time.perf_counter()
        parts = run_parts(part, calls)
        wall = time.perf_counter() - started
        errors = [e for p in parts for e in p["errors"]]
        acked = [x for p in parts for x in p["acked"]]
        lat: dict[str, list[float]] = {"recall": [], "capture": []}
        for p in parts:
            for op, values in p.get("lat", {}).items():
                lat[op].extend(values)
        visible = [v for p in parts for v in p.get("visible", [])]
        found = audit(server, schema, acked, pool)
        report(a, wall, lat, errors, acked, visible, found)
        bad = (errors or found["lost"] or found["doubled"] or found["duplicates"]
               or not visible or max(t for _o, _r, t in visible) > VISIBLE_WITHIN_S)
        return 1 if bad else 0
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if server is not None and (a.keep is None or cluster is not None):
            drop_schema(server, schema)
        elif server is not None:
            print(f"  kept: {work} and the schema {schema} on {server}")
        if cluster is not None:
            cluster.destroy()
        if a.keep is None:
            shutil.rmtree(work, ignore_errors=True)


def report(a: argparse.Namespace, wall: float, lat: dict[str, list[float]],
           errors: list[str], acked: list[tuple[str, str, str]],
           visible: list[tuple[int, int, float]], found: dict[str, Any]) -> None:
    calls = sum(len(v) for v in lat.values())
    print(f"perf_replicas: {a.replicas} serve replicas (own ports and state dirs) on one "
          f"PostgreSQL vault, {a.clients} clients, {wall:.1f} s, "
          f"{a.recall_share:.0%} recall / {1 - a.recall_share:.0%} capture over "
          f"{a.titles} shared titles; plain /call routes; {os.cpu_count()} cores")
    print(f"  calls/s            {calls / wall:8.1f}   ({calls} acknowledged calls)")
    for op in ("recall", "capture"):
        values = lat[op]
        print(f"  {op:<8} p50 / p99   {pct(values, 50):7.1f} / {pct(values, 99):7.1f} ms"
              f"   ({len(values)} calls, max {max(values, default=float('nan')):.1f} ms)")
    actions = Counter(x[2] for x in acked)
    print(f"  captures acked     {len(acked):8d}   ({', '.join(f'{k} {v}' for k, v in sorted(actions.items()))})")
    print(f"  errors             {len(errors):8d}")
    for sample in errors[:5]:
        print(f"    e.g. {sample}")
    print(f"  lost acked writes  {len(found['lost']):8d}")
    print(f"  doubled writes     {len(found['doubled']):8d}")
    print(f"  duplicate entities {len(found['duplicates']):8d}   ({found['notes']} concept "
          f"notes; {found['titles_with_notes']}/{a.titles} pool titles have one)")
    times = [t for _o, _r, t in visible]
    if times:
        print(f"  visibility         {len(times):8d}   probe x other-replica pairs: "
              f"p50 {statistics.median(times) * 1000:.0f} ms, p99 {pct(times, 99) * 1000:.0f} "
              f"ms, max {max(times) * 1000:.0f} ms (limit {VISIBLE_WITHIN_S * 1000:.0f} ms)")
    else:
        print("  visibility         none measured")


if __name__ == "__main__":
    sys.exit(main())
