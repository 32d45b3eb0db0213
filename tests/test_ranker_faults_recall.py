"""Recall with a ranker plugin that fails or answers out of shape, and doctor with the
configured ranker uninstalled (echo_core/ranker_faults.py, ops/recall.py, ops/doctor.py).

A ranker's search that raised, or returned something that is not a list, used to crash
recall with a traceback; a path leaving the vault made recall exit 2 blaming the user;
duplicate paths, negative and NaN scores were shown (NaN made the JSON invalid). Now a
failure is an error naming the ranker, its plugin and what to do, and the answer keeps
the documented shape: unique clean paths, finite scores > 0, highest first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from echo_core import EchoError, RankerFallbackWarning, invoke, ranker_faults
from echo_core import ranker_choice as choice
from echo_core.context import EchoContext
from echo_core.ops.doctor import run_doctor
from echo_core.ops.recall import recall
from tests.test_ranker_faults_write import FaultyPlugin, make_ctx

TOPICS = ("kiwi orchards", "kiwi kiwi harvest", "kiwi kiwi kiwi sorting",
          "kiwi kiwi kiwi kiwi export", "kiwi kiwi kiwi kiwi kiwi prices")


@pytest.fixture(autouse=True)
def fresh_warnings() -> Iterator[None]:
    choice._warned.clear()
    ranker_faults._warned.clear()
    yield
    choice._warned.clear()
    ranker_faults._warned.clear()


def _vault(tmp_path: Path, mode: str) -> tuple[EchoContext, list[str]]:
    plugin = FaultyPlugin()
    ctx = make_ctx(tmp_path, plugin)
    paths = []
    for i, body in enumerate(TOPICS):
        path = f"resources/notes/k{i}.md"
        ctx.vault.write_note(path, f"---\ntype: concept\nstatus: active\nupdated: "
                                   f"2026-02-01\n---\n# K{i}\n\n{body}\n")
        paths.append(path)
    plugin.mode = mode
    return ctx, paths


@pytest.mark.parametrize(("mode", "problem"), [
    ("raise", "RuntimeError: ranker exploded"),
    ("garbage", "it returned str, not a list of (path, score) pairs"),
])
def test_a_failing_search_is_an_error_naming_the_ranker_and_its_plugin(
        tmp_path: Path, mode: str, problem: str) -> None:
    ctx, _ = _vault(tmp_path, mode)
    with pytest.raises(EchoError) as raised:
        recall(ctx, "kiwi")
    message = raised.value.message
    assert raised.value.code == 78
    assert "ranker 'faulty' (plugin 'faulty_ranker', tests.test_ranker_faults_write)" in message
    assert problem in message
    assert f'set recall = "bm25" in {tmp_path / "config.toml"}' in message
    assert "ECHO_DISABLE_PLUGINS=faulty_ranker" in message


def test_a_hit_outside_the_vault_is_left_out_with_a_warning_naming_the_ranker(
        tmp_path: Path) -> None:
    ctx, paths = _vault(tmp_path, "escape")
    found = invoke(ctx, "recall", {"query": "kiwi", "include_linked": False})
    assert found.ok and [h.path for h in found.data.primary] == paths[::-1]
    (warning,) = found.warnings
    assert "ranker 'faulty'" in warning and "'../../etc/passwd'" in warning
    assert "1 path outside the vault" in warning


def test_the_answer_keeps_the_documented_shape_whatever_the_ranker_returns(
        tmp_path: Path) -> None:
    ctx, paths = _vault(tmp_path, "mixed")
    found = recall(ctx, "kiwi", include_linked=False)
    # the ranker ranks k4 (most kiwis) first; of its answer, NaN, -1, 0 and inf scores, a
    # path outside the vault and a malformed item are left out, k2 given twice keeps its
    # best score, and the rest come highest first
    assert [(h.path, h.score) for h in found.data.primary] == [(paths[2], 5.0),
                                                               (paths[1], 1.0)]
    json.dumps(found.to_dict(), allow_nan=False)  # was '"score": NaN', not JSON
    (warning,) = found.warnings
    assert "ranker 'faulty'" in warning and "score not a finite number > 0" in warning
    assert "path given twice" in warning and "not a (path, score) pair" in warning


def test_doctor_warns_when_the_configured_ranker_is_not_installed(tmp_path: Path) -> None:
    with pytest.warns(RankerFallbackWarning, match="'tester-tfidf' cannot run here"):
        ctx = make_ctx(tmp_path, FaultyPlugin(), recall_name="tester-tfidf")  # init writes
    result = run_doctor(ctx)
    (check,) = [c for c in result.data.checks if c.name == "ranker"]
    assert check.status == "warn" and result.ok
    assert "recall = 'tester-tfidf'" in check.detail and "uses 'bm25'" in check.detail
    assert 'recall = "bm25"' in check.fix and str(tmp_path / "config.toml") in check.fix
    assert "ranker" in result.message
    assert not [c for c in run_doctor(make_ctx(tmp_path, FaultyPlugin())).data.checks
                if c.name == "ranker"]
