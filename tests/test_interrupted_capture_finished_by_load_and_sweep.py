"""A capture killed part-way is finished at the next session start (``load``) and by
``sweep --apply``, not only by the next capture, evolve, ingest or flush: a session began
on a half-made capture (a new note missing from the index, a backlink to it in place)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from echo_core.entities import EntityStore
from echo_core.ops.load import load
from echo_core.ops.sweep.full import full_sweep
from echo_core.ops.write_intent import pending_intents
from tests.capture_kit import VaultBox


def _killed_capture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> VaultBox:
    box = VaultBox(tmp_path).init()
    assert box.capture("Ada Lovelace", kind="person", body="First program.").ok

    def killed(self: EntityStore, *args: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # killed after the notes were written, before the index

    with monkeypatch.context() as patched:
        patched.setattr(EntityStore, "record", killed)
        with pytest.raises(KeyboardInterrupt):
            box.capture("Charles Babbage", kind="person", body="Worked with Ada Lovelace.")
    assert pending_intents(box.ctx()) == 1
    return box


def test_load_finishes_a_capture_killed_part_way(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    box = _killed_capture(tmp_path, monkeypatch)
    assert load(box.ctx(), brief=True).ok
    assert pending_intents(box.ctx()) == 0
    assert box.entity("charles-babbage").path == "resources/people/charles-babbage.md"


def test_sweep_apply_finishes_a_capture_killed_part_way(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    box = _killed_capture(tmp_path, monkeypatch)
    full_sweep(box.ctx(), apply=True)
    assert pending_intents(box.ctx()) == 0
    assert box.entity("charles-babbage").path == "resources/people/charles-babbage.md"
    assert box.read("resources/people/charles-babbage.md").count("Worked with Ada") == 1
