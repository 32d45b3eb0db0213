"""The ``tiny`` ranker: passes ``RankerContract``, works in a fresh process with no
reindex, and finds notes captured after it was installed (issue 12, item 8)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from echo_ranker_tiny import TinyRanker

import echo_core
from echo_core.testing import RankerContract

DIST = "echo-ranker-tiny"
ECHO_MEMORY = shutil.which("echo-memory", path=str(Path(sys.executable).parent)) or "echo-memory"
NOTE = "---\ntype: concept\nstatus: active\nupdated: 2026-02-01\n---\n# Zephyr\n\n{body}\n"


class WordTokenizer:
    """Lowercased words: what the contract's plain words need."""

    def tokenize(self, text: str) -> list[str]:
        return text.lower().split()


class TestTinyRanker(RankerContract):
    @pytest.fixture
    def ranker(self, tmp_path: Path) -> TinyRanker:
        return TinyRanker(WordTokenizer(), str(tmp_path))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A vault, state dir and config (``recall = "tiny"``) in ``tmp_path``."""
    config = tmp_path / "config.toml"
    config.write_text('recall = "tiny"\n')
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
    env.update(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "home/.config"),
               XDG_STATE_HOME=str(tmp_path / "home/.local/state"), ECHO_CONFIG=str(config),
               ECHO_VAULT=str(tmp_path / "vault"), ECHO_STATE_DIR=str(tmp_path / "state"),
               ECHO_TODAY="2026-03-01", ECHO_STRICT_PLUGINS="1")
    if "ECHO_PLUGIN_DISTS" in os.environ:  # a hermetic harness: let this dist load too
        env["ECHO_PLUGIN_DISTS"] = ",".join(filter(None, [os.environ["ECHO_PLUGIN_DISTS"], DIST]))
    return env


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``echo-memory ARGS`` in a fresh process; fails the test on a non-zero exit."""
    proc = subprocess.run([ECHO_MEMORY, *args], env=env, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, f"echo-memory {' '.join(args)}: {proc.stderr}{proc.stdout}"
    return proc


def recalled(env: dict[str, str], query: str) -> list[str]:
    """Primary hit paths of ``echo-memory recall QUERY`` in a fresh process."""
    return [hit["path"] for hit in json.loads(cli(env, "recall", query, "--json").stdout)["primary"]]


def assert_tiny_ranked(tmp_path: Path) -> None:
    assert not list((tmp_path / "state").rglob("bm25")), "the built-in ranker was used"


def test_the_plugin_is_loaded_and_registers_tiny(env: dict[str, str]) -> None:
    listing = cli(env, "plugins").stdout
    assert "ranker_tiny" in listing and "register_rankers" in listing, listing


def test_a_fresh_process_finds_an_existing_note_without_reindex(
    env: dict[str, str], tmp_path: Path,
) -> None:
    cli(env, "init")
    note = tmp_path / "vault" / "resources" / "concepts" / "zephyr.md"
    note.write_text(NOTE.format(body="A zephyr is a gentle westerly wind."))  # no echo-memory
    assert recalled(env, "zephyr wind") == ["resources/concepts/zephyr.md"]
    assert_tiny_ranked(tmp_path)


def test_a_note_captured_in_one_process_is_found_in_the_next(
    env: dict[str, str], tmp_path: Path,
) -> None:
    cli(env, "init")
    cli(env, "capture", "Quokka Survey", "--kind", "project", "--body", "Counting quokkas.")
    assert recalled(env, "quokka survey")[0] == "projects/active/quokka-survey.md"
    assert_tiny_ranked(tmp_path)


def test_capture_then_recall_in_one_context_finds_the_note_once(
    env: dict[str, str], tmp_path: Path,
) -> None:
    ctx = echo_core.create_context(env=env)
    assert ctx.config.recall == "tiny"
    echo_core.init_vault(ctx)

    def capture(title: str, body: str) -> None:
        request = echo_core.CaptureRequest(title=title, kind="project", body=body)
        assert echo_core.capture(ctx, request).ok

    def found(query: str) -> list[str]:
        return [h.path for h in echo_core.recall(ctx, query, include_linked=False).data.primary]

    capture("Quokka Survey", "Counting quokkas.")  # before the first search of the process
    assert found("quokka").count("projects/active/quokka-survey.md") == 1
    capture("Wombat Census", "Counting wombats.")  # after it: the core keeps tiny current
    assert found("wombat")[0] == "projects/active/wombat-census.md"
    assert isinstance(ctx.ranker, TinyRanker)
    assert_tiny_ranked(tmp_path)


def test_a_long_running_process_sees_a_note_another_process_captured(
    env: dict[str, str], tmp_path: Path,
) -> None:
    server = echo_core.create_context(env=env)  # e.g. the MCP server, already searching
    echo_core.init_vault(server)
    assert echo_core.recall(server, "platypus").data.primary == ()
    cli(env, "capture", "Platypus Study", "--kind", "project", "--body", "Platypus notes.")
    hits = echo_core.recall(server, "platypus", include_linked=False).data.primary
    assert hits and hits[0].path == "projects/active/platypus-study.md"
    assert_tiny_ranked(tmp_path)
