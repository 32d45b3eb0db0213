"""Ctrl-C on any command: one line on stderr ("interrupted", and for a verb that writes,
that it is safe to run again), exit 130, never a traceback; whether the line ran through
click or the direct path, and in a real process sent SIGINT mid-reindex (whose locks and
temporary folders are released on the way, so the next reindex runs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import echo_core
from plugins.transport_cli import direct_ops
from tests.cli_inproc import CliRun, vault_runner
from tests.conftest import REPO

INTERRUPTED = 130


@pytest.fixture
def run(isolated_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> Any:
    runner = vault_runner(tmp_path, capsys, monkeypatch)

    def interrupted(*args: str) -> CliRun:
        def ctrl_c(*_args: Any, **_kwargs: Any) -> Any:
            raise KeyboardInterrupt

        with monkeypatch.context() as patched:
            patched.setattr(echo_core, "run_operation", ctrl_c)
            try:
                return runner(*args)  # type: ignore[no-any-return]
            except KeyboardInterrupt:
                pytest.fail(f"the interrupt of {args} escaped the CLI's entry")

    return interrupted


def _one_line(done: CliRun) -> str:
    assert done.code == INTERRUPTED, done
    assert "Traceback" not in done.err and done.out == "", done
    assert done.err.count("\n") == 1 and done.err.endswith("\n"), done
    return done.err


@pytest.mark.parametrize("through_click", [False, True], ids=["direct", "click"])
def test_an_interrupted_writing_verb_says_it_is_safe_to_run_again(
        run: Any, monkeypatch: pytest.MonkeyPatch, through_click: bool) -> None:
    if through_click:
        monkeypatch.setattr(direct_ops, "run_line", lambda argv, state: None)
    line = _one_line(run("reindex"))
    assert line.startswith("interrupted") and "safe to run it again" in line, line


@pytest.mark.parametrize("through_click", [False, True], ids=["direct", "click"])
def test_an_interrupted_reading_verb_says_interrupted(
        run: Any, monkeypatch: pytest.MonkeyPatch, through_click: bool) -> None:
    if through_click:
        monkeypatch.setattr(direct_ops, "run_line", lambda argv, state: None)
    assert _one_line(run("recall", "anything")) == "interrupted\n"


def test_a_dry_run_is_a_read_when_interrupted(run: Any) -> None:
    assert _one_line(run("capture", "x", "--dry-run")) == "interrupted\n"


#: A real process: reindex stopped inside the BM25 build (the old index live, a new one
#: half made), with "busy" printed once it is there.
_SLOW_REINDEX = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # as a shell's foreground job
from plugins.recall_bm25 import segment_builder
real_add = segment_builder.SegmentBuilder.add
def slow_add(self, doc):
    print("busy", flush=True)
    time.sleep(60)
segment_builder.SegmentBuilder.add = slow_add
from plugins.cli_start import run
run()
"""


def test_sigint_mid_reindex_prints_one_line_and_leaves_the_index_usable(
        run: Any, tmp_path: Path) -> None:
    vault, state = tmp_path / "vault", tmp_path / "state"
    (vault / "resources/concepts/engine.md").write_text("# Engine\n\nanalytical engine\n")
    base = ["reindex", "--vault", str(vault), "--state-dir", str(state)]
    env = {**os.environ, "ECHO_FORK": "0"}
    child = subprocess.Popen([sys.executable, "-c", _SLOW_REINDEX, *base], cwd=REPO, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "busy\n"
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == INTERRUPTED, (out, err)
    assert err == "interrupted: reindex stopped part-way; it is safe to run it again\n", err
    assert _cli([*base, "--json"], env).returncode == 0
    found = _cli(["recall", "analytical", *base[1:], "--json"], env)
    assert '"resources/concepts/engine.md"' in found.stdout, found


def _cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from plugins.cli_start import run; run()",
                           *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=60, check=False)
