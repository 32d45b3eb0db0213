"""``note-stats`` as a declaration: the contract, the counting, and running it in process
through the registry (``echo_core.invoke``) like any surface does."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import echo_note_stats
import pytest
from echo_note_stats import count_words

import echo_core
from echo_core.testing import OperationsContract

NOTE = """---
type: person
tags: [x]
---
# Ada Lovelace

Ada wrote the first program; Ada's notes link [[Charles Babbage]] and
[the engine](resources/concepts/analytical-engine.md). ![a picture](ada.png)
"""


class TestNoteStatsContract(OperationsContract):
    @pytest.fixture
    def plugin(self) -> object:
        return echo_note_stats

    @pytest.fixture
    def examples(self) -> Mapping[str, Mapping[str, Any]]:
        return {"note-stats": {"path": "resources/people/ada.md", "top": 3}}


def test_counts_the_text_a_reader_sees() -> None:
    result = count_words("ada.md", NOTE, top=2)
    assert result.wikilinks == 1 and result.links == 1  # the image is not a link
    assert result.words == 15  # no frontmatter, link targets or image; link texts count
    assert [(w.word, w.count) for w in result.top_words] == [("ada", 2), ("the", 2)]
    assert count_words("ada.md", NOTE, top=0).top_words == ()


def isolated_env(root: Path) -> dict[str, str]:
    home = root / "home"
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"), "ECHO_TODAY": "2026-03-01",
            "ECHO_STRICT_PLUGINS": "1", "ECHO_PLUGIN_DISTS": "echo-memory,echo-note-stats"}


def test_runs_through_the_registry_with_the_declared_bounds(tmp_path: Path) -> None:
    (tmp_path / "vault").mkdir()
    env = isolated_env(tmp_path)
    # The installed entry point (ECHO_PLUGIN_DISTS names this distribution) brings it.
    ctx = echo_core.create_context(vault=str(tmp_path / "vault"),
                                   state_dir=str(tmp_path / "state"), env=env)
    assert echo_core.invoke(ctx, "init", {}).ok  # every verb but init needs a vault
    assert echo_core.invoke(ctx, "put", {"path": "notes/ada.md", "text": NOTE}).ok
    env_ = echo_core.invoke(ctx, "note-stats", {"path": "notes/ada.md", "top": 1})
    assert env_.ok and env_.data.words == 15 and len(env_.data.top_words) == 1
    with pytest.raises(echo_core.ParamsInvalid) as bad:
        echo_core.invoke(ctx, "note-stats", {"path": "notes/ada.md", "top": 51})
    assert bad.value.fields == ("top",) and bad.value.code == 2
    with pytest.raises(echo_core.EchoError) as missing:
        echo_core.invoke(ctx, "note-stats", {"path": "notes/none.md"})
    assert missing.value.code == 44
