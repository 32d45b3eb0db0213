"""The fast sweep and the freshness check under failure: two processes at once, a
process killed at a random instant. Nothing torn, nothing lost, nothing doubled."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

from echo_core.corpus import corpus_paths
from echo_core.entities import JOURNAL_PATH
from echo_core.ops.fast_sweep import fast_sweep
from tests.capture_kit import VaultBox
from tests.conftest import REPO

WORKER = """
import json, sys
sys.path.insert(0, {repo!r})
from echo_core.context import create_context
from echo_core.ops.fast_sweep import fast_sweep
from echo_core.ops.freshness import freshen
spec = json.loads(sys.argv[1])
ctx = create_context(vault=spec["vault"], state_dir=spec["state"], env=spec["env"])
print("go", flush=True)
fast_sweep(ctx) if spec["what"] == "sweep" else freshen(ctx, None)
"""


def _spawn(box: VaultBox, what: str) -> subprocess.Popen[str]:
    spec = json.dumps({"vault": str(box.vault), "state": str(box.state), "env": box.env(),
                       "what": what})
    return subprocess.Popen([sys.executable, "-c", WORKER.format(repo=str(REPO)), spec],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _hand_written(box: VaultBox, count: int, start: int = 0) -> list[str]:
    paths = []
    for n in range(start, start + count):
        rel = f"resources/concepts/hand-{n:04d}.md"
        (box.vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / rel).write_text(f"# Hand {n}\n\nwritten by a person, topic{n}\n", "utf-8")
        paths.append(rel)
    return paths


def _assert_consistent(box: VaultBox) -> None:
    """Every entity note is one entity, the recall index holds exactly the corpus, and a
    further sweep finds nothing to do."""
    ctx = box.ctx()
    entities = list(ctx.entities.load().entities.values())
    paths = [e.path for e in entities]
    assert len(paths) == len(set(paths)), "a note became two entities"
    hand = sorted(p for p in corpus_paths(ctx.vault.storage) if "/hand-" in p)
    assert sorted(p for p in paths if "/hand-" in p) == hand
    ranker = ctx.ranker_upkeep.persistent
    assert ranker is not None
    assert sorted(ranker.paths()) == corpus_paths(ctx.vault.storage)
    again = fast_sweep(box.ctx()).data
    assert (again.new, again.changed, again.gone, again.entities_put) == ((), (), (), ())


def test_two_processes_finding_the_same_new_notes_add_each_entity_once(tmp_path: Path) -> None:
    box = VaultBox(tmp_path).init()
    fast_sweep(box.ctx())
    paths = _hand_written(box, 50)
    workers = [_spawn(box, "fresh") for _ in range(2)]
    for worker in workers:
        _out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err
    journal = (box.vault / JOURNAL_PATH).read_text("utf-8").splitlines()
    puts = [json.loads(line)["e"]["path"] for line in journal if '"op": "put"' in line]
    assert sorted(p for p in puts if "/hand-" in p) == paths  # each once, not twice
    _assert_consistent(box)


def test_a_sweep_killed_at_a_random_instant_leaves_nothing_torn_or_doubled(tmp_path: Path) -> None:
    rng = random.Random(14)
    box = VaultBox(tmp_path).init()
    _hand_written(box, 300)
    for round_ in range(3):
        if round_:
            _hand_written(box, 40, start=300 + 40 * round_)
            for old in sorted((box.vault / "resources/concepts").glob("hand-00[0-9]*.md"))[:5]:
                old.unlink()
        worker = _spawn(box, "sweep")
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "go"
        time.sleep(rng.uniform(0.0, 0.6))
        worker.kill()
        worker.communicate(timeout=30)
        done = fast_sweep(box.ctx())  # the next run finishes the work
        assert done.ok
        _assert_consistent(box)
