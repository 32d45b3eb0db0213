"""SessionStart answers before the full freshness pass, which runs after the answer
(issue 15; ``echo_core.ops.freshness``, ``echo_core.ops.session_pass``): what is in the
indexes when the answer is out, once the pass has ended, with two session starts at
once, and after a pass killed midway."""

from __future__ import annotations

import fcntl
import io
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from echo_core.corpus import corpus_paths
from echo_core.entities import JOURNAL_PATH
from echo_core.ops.fast_sweep import fast_sweep
from echo_core.ops.freshness import SESSION_SYNC_LIMIT
from echo_core.ops.recall import recall
from echo_core.ops.session_pass import DONE_FILE, LOCK_FILE, run_owed_pass
from echo_core.ops.vault_changes import manifest_of
from plugins.hooks_claude.after_answer import finish
from plugins.hooks_claude.runner import answer_hook
from tests.capture_kit import VaultBox
from tests.conftest import REPO
from tests.hook_kit import context_of, hook_env, run_hook

START = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"}
BRIEF = "echo-memory brief"


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


def _hand_written(box: VaultBox, count: int, folder: str = "resources/concepts",
                  start: int = 0) -> list[str]:
    paths = []
    for n in range(start, start + count):
        rel = f"{folder}/hand-{n:04d}.md"
        (box.vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / rel).write_text(f"# Hand {n}\n\nwritten by a person, topic{n}\n", "utf-8")
        paths.append(rel)
    return paths


def _edit_in_place(box: VaultBox, rel: str, word: str) -> None:
    """Append ``word`` to the note without changing its folder's mtime (only a stat of
    the note itself shows the change)."""
    note = box.vault / rel
    folder_ns = note.parent.stat().st_mtime_ns
    with note.open("a", encoding="utf-8") as handle:
        handle.write(f"\n{word}\n")
    os.utime(note.parent, ns=(folder_ns, folder_ns))


def _found(box: VaultBox, word: str) -> list[str]:
    """The recall index's hits for ``word`` (no freshness check: the index as it is)."""
    return [hit.path for hit in recall(box.ctx(), word, limit=50).data.primary]


def _entity_paths(box: VaultBox) -> list[str]:
    return [e.path for e in box.ctx().entities.load().entities.values()]


def _start(box: VaultBox, **env: str) -> tuple[str | None, list[Any]]:
    """The SessionStart hook in process: its answer, and the work it left for after."""
    stdin = io.BytesIO(json.dumps(START).encode("utf-8"))
    return answer_hook("SessionStart", lambda: box.ctx(**env), stdin, {})


def _state_dir(box: VaultBox) -> Path:
    return Path(box.ctx().state_dir)


@contextmanager
def _pass_lock_held(box: VaultBox) -> Iterator[None]:
    """Hold the pass lock, as a pass running elsewhere would."""
    state = _state_dir(box)
    state.mkdir(parents=True, exist_ok=True)
    fd = os.open(state / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _wait_for_pass(box: VaultBox, after_ns: int, timeout: float = 60) -> None:
    """Wait until a pass that started after ``after_ns`` has completed, and no pass holds
    the lock any more."""
    done = _state_dir(box) / DONE_FILE
    deadline = time.monotonic() + timeout
    while True:
        try:
            if int(done.read_text("ascii")) >= after_ns:
                break
        except (OSError, ValueError):
            pass
        assert time.monotonic() < deadline, "the session pass did not end in time"
        time.sleep(0.05)
    with _pass_lock_held(box):
        pass


def _assert_consistent(box: VaultBox) -> None:
    """One entity per note, the recall index holds exactly the corpus, and a further fast
    sweep finds nothing to do."""
    ctx = box.ctx()
    paths = _entity_paths(box)
    assert len(paths) == len(set(paths)), "a note became two entities"
    ranker = ctx.ranker_upkeep.persistent
    assert ranker is not None
    assert sorted(ranker.paths()) == corpus_paths(ctx.vault.storage)
    again = fast_sweep(box.ctx()).data
    assert (again.new, again.changed, again.gone, again.entities_put) == ((), (), (), ())


# --- in process: what the answer waits for, and what it leaves for after -------------------


def test_an_in_place_edit_is_indexed_once_the_pass_after_the_answer_ends(box: VaultBox) -> None:
    paths = _hand_written(box, 40)
    fast_sweep(box.ctx())
    _edit_in_place(box, paths[7], "zanzibarish")
    text, later = _start(box)
    assert text is not None and BRIEF in text
    assert _found(box, "zanzibarish") == []  # the answer did not wait for every stat
    assert later, "the session start owes its full pass"
    finish(later, background=False)
    assert _found(box, "zanzibarish") == [paths[7]]
    _assert_consistent(box)


def test_new_and_deleted_notes_are_in_the_indexes_before_the_answer(box: VaultBox) -> None:
    paths = _hand_written(box, 40)
    fast_sweep(box.ctx())
    (box.vault / "resources/concepts/quokka-notes.md").write_text(
        "# Quokka notes\n\nquokkaish things\n", "utf-8")
    (box.vault / paths[3]).unlink()
    text, later = _start(box)
    assert text is not None and BRIEF in text
    assert _found(box, "quokkaish") == ["resources/concepts/quokka-notes.md"]
    entities = _entity_paths(box)
    assert "resources/concepts/quokka-notes.md" in entities and paths[3] not in entities
    finish(later, background=False)
    _assert_consistent(box)


def test_a_large_batch_of_new_notes_is_left_to_the_pass(box: VaultBox) -> None:
    fast_sweep(box.ctx())
    paths = _hand_written(box, SESSION_SYNC_LIMIT + 6, folder="resources/concepts/pulled")
    text, later = _start(box)
    assert text is not None and BRIEF in text
    assert not set(paths) & set(_entity_paths(box))  # the answer did not read them all
    finish(later, background=False)
    assert set(paths) <= set(_entity_paths(box))
    _assert_consistent(box)


def test_a_vault_without_a_baseline_gets_it_from_the_pass_not_before_the_answer(
        box: VaultBox) -> None:
    manifest_of(box.ctx()).path.unlink(missing_ok=True)
    _hand_written(box, 10)
    assert not manifest_of(box.ctx()).has_baseline()
    text, later = _start(box)
    assert text is not None and BRIEF in text
    assert not manifest_of(box.ctx()).has_baseline()
    finish(later, background=False)
    assert manifest_of(box.ctx()).has_baseline()
    _assert_consistent(box)


def test_freshness_off_owes_no_pass(box: VaultBox) -> None:
    paths = _hand_written(box, 5)
    fast_sweep(box.ctx())
    _edit_in_place(box, paths[1], "offwords")
    text, later = _start(box, ECHO_FRESHNESS="off")
    assert text is not None and BRIEF in text
    assert later == []
    assert not (_state_dir(box) / DONE_FILE).exists()


def test_the_cli_load_still_runs_the_full_pass_before_it_answers(box: VaultBox) -> None:
    from echo_core.operations.invoke import invoke

    paths = _hand_written(box, 20)
    fast_sweep(box.ctx())
    _edit_in_place(box, paths[2], "clientwords")
    assert invoke(box.ctx(), "load", {"brief": True}).ok
    assert _found(box, "clientwords") == [paths[2]]


def test_a_pass_is_skipped_when_a_later_one_completed(box: VaultBox) -> None:
    paths = _hand_written(box, 10)
    fast_sweep(box.ctx())
    asked = time.time_ns()
    assert run_owed_pass(box.ctx(), time.time_ns(), wait=5)
    _edit_in_place(box, paths[0], "skippedword")
    assert run_owed_pass(box.ctx(), asked, wait=5)  # covered by the pass that started later
    assert _found(box, "skippedword") == []
    assert run_owed_pass(box.ctx(), time.time_ns(), wait=5)
    assert _found(box, "skippedword") == [paths[0]]


# --- real hook processes ----------------------------------------------------------------


def _payload(tmp_path: Path) -> dict[str, Any]:
    return {**START, "cwd": str(tmp_path), "transcript_path": str(tmp_path / "t.jsonl")}


def test_the_hook_exits_before_its_background_pass_which_then_indexes_the_edit(
        box: VaultBox, tmp_path: Path) -> None:
    paths = _hand_written(box, 30)
    fast_sweep(box.ctx())
    _edit_in_place(box, paths[4], "backgroundish")
    asked = time.time_ns()
    with _pass_lock_held(box):  # the pass cannot run until this is released
        proc = run_hook("SessionStart", _payload(tmp_path), hook_env(box), cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        assert BRIEF in context_of(proc.stdout, "SessionStart")
        assert _found(box, "backgroundish") == []
    _wait_for_pass(box, asked)
    assert _found(box, "backgroundish") == [paths[4]]
    _assert_consistent(box)


def test_inline_mode_finishes_the_pass_before_the_hook_exits(box: VaultBox,
                                                              tmp_path: Path) -> None:
    paths = _hand_written(box, 30)
    fast_sweep(box.ctx())
    _edit_in_place(box, paths[9], "inlineish")
    proc = run_hook("SessionStart", _payload(tmp_path),
                    hook_env(box, ECHO_SESSION_PASS="inline"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert BRIEF in context_of(proc.stdout, "SessionStart")
    assert _found(box, "inlineish") == [paths[9]]


def test_two_session_starts_at_once_index_each_edit_once(box: VaultBox, tmp_path: Path) -> None:
    paths = _hand_written(box, 30)
    fast_sweep(box.ctx())
    _edit_in_place(box, paths[5], "twiceish")
    journal_before = len((box.vault / JOURNAL_PATH).read_text("utf-8").splitlines())
    command = [sys.executable, "-c", "from plugins.cli_start import run; run()",
               "hook", "SessionStart"]
    asked = time.time_ns()
    with _pass_lock_held(box):
        hooks = [subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=hook_env(box), cwd=REPO)
                 for _ in range(2)]
        for hook in hooks:
            out, err = hook.communicate(json.dumps(_payload(tmp_path)).encode(), timeout=60)
            assert hook.returncode == 0, err
            assert BRIEF in context_of(out.decode("utf-8"), "SessionStart")
    _wait_for_pass(box, asked)
    time.sleep(0.5)  # the second pass finds the first covered it
    with _pass_lock_held(box):
        assert _found(box, "twiceish") == [paths[5]]
    journal = (box.vault / JOURNAL_PATH).read_text("utf-8").splitlines()[journal_before:]
    puts = [json.loads(line)["e"]["path"] for line in journal if '"op": "put"' in line]
    assert puts == [paths[5]]  # the edit taken once, not once per session start
    _assert_consistent(box)


# --- a pass killed midway -------------------------------------------------------------------

WORKER = """
import sys, time
sys.path.insert(0, {repo!r})
import json
from echo_core.context import create_context
from echo_core.ops.session_pass import run_owed_pass
spec = json.loads(sys.argv[1])
ctx = create_context(vault=spec["vault"], state_dir=spec["state"], env=spec["env"])
print("go", flush=True)
run_owed_pass(ctx, time.time_ns(), wait=5)
"""


def test_a_pass_killed_midway_leaves_nothing_torn_and_the_next_start_mends_it(
        box: VaultBox) -> None:
    rng = random.Random(15)
    paths = _hand_written(box, 300)
    fast_sweep(box.ctx())
    spec = json.dumps({"vault": str(box.vault), "state": str(box.state), "env": box.env()})
    for round_ in range(3):
        edited = paths[round_ * 40:round_ * 40 + 40]
        for rel in edited:
            _edit_in_place(box, rel, f"killround{round_}")
        worker = subprocess.Popen([sys.executable, "-c", WORKER.format(repo=str(REPO)), spec],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert worker.stdout is not None
        assert worker.stdout.readline().strip() == "go"
        time.sleep(rng.uniform(0.0, 0.5))
        worker.kill()
        worker.communicate(timeout=30)
        text, later = _start(box)  # the next session start
        assert text is not None and BRIEF in text
        finish(later, background=False)
        assert sorted(_found(box, f"killround{round_}")) == sorted(edited)
        _assert_consistent(box)
