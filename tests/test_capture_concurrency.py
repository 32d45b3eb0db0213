"""Concurrent captures from several OS processes against one vault (SPEC §1.4, §2.1 step 7):
nothing lost, no duplicates, the entity index exact, no temp files or lock left behind."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from echo_core.names import name_tokens
from echo_core.ops.capture import content_hash
from tests.capture_kit import VaultBox, section
from tests.conftest import REPO

WORKERS = 4
SHARED = 25
WORDS = [
    "Nimbus", "Harbor", "Quartz", "Falcon", "Juniper", "Cobalt", "Meridian", "Tundra",
    "Saffron", "Beacon", "Granite", "Willow", "Orchid", "Lantern", "Zephyr", "Ember",
    "Cascade", "Thimble", "Marble", "Pioneer", "Sierra", "Velvet", "Copper", "Aurora",
    "Glacier", "Mosaic", "Crimson", "Walnut", "Horizon", "Prairie", "Summit", "Indigo",
    "Basalt", "Canyon", "Delta", "Fjord", "Galaxy", "Hollow", "Ivory", "Jasper", "Kestrel",
    "Lagoon", "Magnet", "Nectar", "Obsidian", "Pepper", "Quiver", "Raven", "Sable", "Tangerine",
]
TITLES = [f"{WORDS[2 * i]} {WORDS[2 * i + 1]}" for i in range(SHARED)]


def variant(title: str, worker: int) -> str:
    """A near-duplicate name of ``title`` (same name tokens), different per worker."""
    return [f"{title} Inc", f"The {title}", f"{title.lower().replace(' ', '-')} ltd",
            f"{title.upper()} LLC"][worker]


def captures_for(worker: int) -> list[list[str]]:
    """50 captures: each shared title and one variant of it, in a worker-specific order so
    that sometimes a variant races its base name."""
    items: list[list[str]] = []
    order = list(range(SHARED))
    if worker % 2:
        order.reverse()
    for i in order:
        base = [TITLES[i], "company", f"observation w{worker} s{i:02d} base"]
        near = [variant(TITLES[i], worker), "company", f"observation w{worker} s{i:02d} near"]
        items += [near, base] if (i + worker) % 3 == 0 else [base, near]
    return items


def test_four_processes_capturing_overlapping_titles_lose_nothing_and_duplicate_nothing(
    tmp_path: Path,
) -> None:
    box = VaultBox(tmp_path).init()
    ready, go = tmp_path / "ready", tmp_path / "go"
    ready.mkdir()
    procs = []
    for worker in range(WORKERS):
        spec = {"vault": str(box.vault), "state_dir": str(box.state), "env": box.env(),
                "go": str(go), "ready_dir": str(ready), "worker": worker, "compact_after": 37,
                "captures": captures_for(worker)}
        procs.append(subprocess.Popen(
            [sys.executable, "-c", "from tests.concurrency_worker import main; main()",
             json.dumps(spec)],
            cwd=REPO, env=box.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    deadline = time.monotonic() + 20
    while len(list(ready.iterdir())) < WORKERS:
        assert time.monotonic() < deadline, "workers did not start"
        assert all(p.poll() is None for p in procs), [p.communicate() for p in procs]
        time.sleep(0.005)
    started = time.monotonic()
    go.touch()
    records = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 0, stderr
        records += [json.loads(line) for line in stdout.splitlines() if line.strip()]
    elapsed = time.monotonic() - started
    assert len(records) == WORKERS * 2 * SHARED

    # every capture is either in the note it reported, or was reported gated
    actions = Counter(r["action"] for r in records)
    assert set(actions) <= {"created", "updated", "duplicate-gate"}, actions
    for r in records:
        if r["action"] == "duplicate-gate":
            assert r["ok"] is False
        else:
            assert r["ok"] and r["body"] in box.read(r["path"]), r
    assert actions["created"] == SHARED, actions

    # one note per name (title and its variants share name tokens), none lost
    notes = box.entity_notes()
    entities = box.captured()
    by_tokens: dict[frozenset[str], list[str]] = defaultdict(list)
    for entity in entities.values():
        by_tokens[name_tokens(entity.title)].append(entity.path)
    assert {k: v for k, v in by_tokens.items() if len(v) > 1} == {}
    assert set(by_tokens) == {name_tokens(t) for t in TITLES}

    # the index: exactly one entry per note on disk, every entry's path exists, hashes fresh
    paths = [e.path for e in entities.values()]
    assert len(paths) == len(set(paths)) == len(notes) == SHARED
    assert set(paths) == notes
    assert all((box.vault / e.path).is_file() for e in box.index().entities.values())
    for entity in entities.values():
        assert entity.h == content_hash(box.read(entity.path)), entity.slug

    # each note holds exactly the ungated bodies reported for it, each once
    for path in notes:
        text = box.read(path)
        mine = [r["body"] for r in records if r["path"] == path]
        assert all(text.count(body) == 1 for body in mine), path
        assert text.count("observation w") == len(mine), path

    # the agent log: one created line per note, one updated line per update (each a real
    # event, issue 13 item 19), for each note exactly as many as it had updates
    log = section(box.read("journal/daily/2026-03-01.md"), "Agent Log")
    assert log.count(": created company [[") == SHARED
    updates = [r["path"] for r in records if r["action"] == "updated"]
    assert log.count(": updated company [[") == len(updates)
    for path in set(updates):
        line = f": updated company [[{path.rsplit('/', 1)[-1][:-3]}]]"
        assert log.count(line) == updates.count(path), path

    assert box.leftovers() == []
    assert elapsed < 30, f"captures took {elapsed:.1f} s"
