"""recall_bm25 under process death and concurrency: a writer SIGKILLed at random instants
leaves an index that either works or says ``needs_rebuild()`` (and then rebuilds); a
reader keeps answering while another process writes and merges."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from echo_core.protocols import IndexDoc, WeightedTerm
from plugins.recall_bm25.index import Bm25Index
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer

REPO = Path(__file__).resolve().parent.parent
TOK = PorterLiteTokenizer()
WORDS = ["zarak", "molix", "quinul", "teskyt", "vorox", "pilen", "cobalt", "harbor", "tundra"]
PATHS = [f"notes/p{i:02d}.md" for i in range(60)]

#: The writer: upserts (80 %), removes, compactions and full rebuilds, forever, with tiny
#: merge thresholds so that a kill lands in every phase (SQLite commit, segment write,
#: rename, CURRENT switch, delta purge, cleanup).
WRITER = f"""
import random, sys
from echo_core.protocols import IndexDoc
from plugins.recall_bm25.index import Bm25Index
from plugins.stem_porterlite.tokenizer import PorterLiteTokenizer
words, paths = {WORDS!r}, {PATHS!r}
state, seed = sys.argv[1], int(sys.argv[2])
rng = random.Random(seed)
def doc(path):
    text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
    return IndexDoc(path=path, title="", text=text, updated="2026-0%d-15" % rng.randint(1, 9))
index = Bm25Index(PorterLiteTokenizer(), state, merge_min_docs=12, merge_fraction=0.0)
if index.needs_rebuild():
    index.rebuild([doc(p) for p in paths])
print("ready", flush=True)
while True:
    r = rng.random()
    if r < 0.80:
        index.upsert(doc(rng.choice(paths)))
    elif r < 0.95:
        index.remove(rng.choice(paths))
    elif r < 0.985:
        index.compact()
    else:
        index.rebuild([doc(p) for p in paths])
"""


def _start_writer(state: Path, seed: int) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(state), str(seed)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.strip() == "ready", f"writer failed: {line!r} {proc.stderr.read() if proc.stderr else ''}"
    return proc


def _check_usable(state: Path) -> bool:
    """Open the index as a fresh process would; True if usable as is, False if it needed
    (and got) a rebuild. Any exception fails the test."""
    index = Bm25Index(TOK, str(state))
    rebuilt = index.needs_rebuild()
    if rebuilt:
        index.rebuild(IndexDoc(path=p, title="", text=" ".join(WORDS)) for p in PATHS)
        assert not index.needs_rebuild()
    paths = index.paths()
    assert set(paths) <= set(PATHS) and len(paths) == len(set(paths))
    assert index.stats()["n_docs"] == len(paths), "running totals disagree with the docs"
    for word in WORDS[:6]:
        found = index.search([WeightedTerm(word)], 100)
        assert {p for p, _ in found} <= set(paths)
        assert all(score > 0 for _, score in found)
    if paths:
        assert index.search([WeightedTerm(w) for w in WORDS], 100), "indexed docs not found"
    index.close()
    return not rebuilt


def test_a_writer_killed_at_random_instants_leaves_a_usable_or_rebuildable_index(
        tmp_path: Path) -> None:
    rng = random.Random(20260301)
    state = tmp_path / "state"
    outcomes = []
    for kill in range(24):
        proc = _start_writer(state, seed=kill)
        time.sleep(rng.uniform(0.005, 0.25))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL, "the writer died before it was killed"
        outcomes.append(_check_usable(state))
    assert len(outcomes) == 24
    # Only an interrupted first build may leave no index; later kills keep one usable.
    assert all(outcomes[1:]), f"usable after kill: {outcomes}"
    # The debris of killed merges (private folders, pointer temps) goes at the next switch.
    index = Bm25Index(TOK, str(state))
    index.upsert(IndexDoc(path=PATHS[0], title="", text="zarak"))
    assert index.compact()
    leftovers = sorted(p.name for p in (state / "bm25").iterdir()
                       if not p.name.startswith(("base-", "delta.sqlite", "CURRENT")) or
                       p.name.startswith("CURRENT."))
    assert leftovers == []
    assert len(list((state / "bm25").glob("base-*"))) <= 2


def test_a_reader_keeps_answering_while_another_process_writes_and_merges(
        tmp_path: Path) -> None:
    state = tmp_path / "state"
    proc = _start_writer(state, seed=7)
    try:
        index = Bm25Index(TOK, str(state))
        searches = 0
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            assert not index.needs_rebuild()
            found = index.search([WeightedTerm(w) for w in WORDS[:4]], 20)
            assert found and {p for p, _ in found} <= set(PATHS)
            searches += 1
        assert searches > 20
    finally:
        proc.kill()
        proc.communicate(timeout=30)
