"""Operation command lines run without click (``plugins/transport_cli/direct_ops.py``)
print, write and exit exactly as the click command does for the same line, and every
line the direct path does not parse exactly goes to click."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from plugins.transport_cli import direct_ops
from plugins.transport_cli.app import main
from tests.capture_kit import VaultBox
from tests.conftest import REPO
from tests.mcp_kit import ADA, box_env, seeded_box

#: Lines the direct path answers (its answer compared with click's below).
DIRECT = [
    ["recall", "analytical engine"],
    ["recall", "analytical engine", "--json"],
    ["--json", "recall", "punched cards"][1:] + ["--json"],
    ["recall", "--limit", "1", "engine"],
    ["recall", "--limit=1", "--no-linked", "engine", "--json"],
    ["recall", "--budget-chars", "600", "engine"],
    ["recall", "punched", "cards", "--json"],  # the query takes every word
    ["recall", "nothing matches this zzzz"],
    ["resolve", "ada"],
    ["resolve", "countess", "--json"],
    ["get", ADA],
    ["get", "resources/people/nobody.md"],
    ["get", "resources/people/nobody.md", "--json"],
    ["ls", "--json"],
    ["load", "--brief"],
    ["triage", "list"],
    ["scope", "show", "--json"],
    ["history", ADA, "--json"],
    ["habitat", "status", "--json"],
    ["habitat", "ask", "engine"],
    ["link", ADA, "resources/concepts/analytical-engine.md", "--json"],
    ["recall", "engine", "--vault", "VAULT", "--json"],
    ["capture", "Grace Hopper", "--kind", "person"],  # optional CLI-only extra absent
    ["capture", "Grace Hopper", "--kind", "person", "--body", "Wrote COBOL.", "--json"],
    ["capture", "Ada Lovelace", "--body", "Translated Menabrea.", "--tags", "history,computing"],
    ["capture", "Grace Hopper", "--dry-run", "--json"],
]
#: Lines only click parses: its messages, help and errors are the answer.
CLICK = [
    ["recall"],
    ["recall", "--help"],
    ["recall", "-h", "x"],
    ["recall", "--limit", "0", "x"],
    ["recall", "--limit", "many", "x"],
    ["recall", "--limit"],
    ["recall", "--no-such-option", "x"],
    ["recall", "x", "--json=yes"],
    ["recall", "--budget-chars", "40", "engine"],  # under its range: click says so
    ["recall", "--", "-x"],
    ["recall", "-5"],
    ["recall", "\udcff"],
    ["recall", "x", "--vault"],
    ["capture", "Grace Hopper", "-"],  # the body from stdin: click's
    ["capture", "Grace Hopper", "more", "words"],  # a stray word: click's usage error
    ["capture", "Grace Hopper", "--body", "- a bullet"],  # a value starting with -
    ["session-end", "bundle.json"],  # a required extra argument: click's
    ["reflect", "--json"],  # a word that is also a group: click's
    ["scope", "--json", "show"],
    ["--json", "recall", "x"],
    ["--version"],
    ["no-such-verb"],
]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("direct-template")
    seeded_box(root)
    return root


#: A write's random operation id (the entity journal's ``op_id``): never the same twice.
_OP_ID = re.compile(rb'"op_id": "[0-9a-f]+"')


def _contents(box: VaultBox) -> dict[str, bytes]:
    return {p.relative_to(box.vault).as_posix(): _OP_ID.sub(b'"op_id": "-"', p.read_bytes())
            for p in sorted(box.vault.rglob("*")) if p.is_file()}


def _box(template: Path, where: Path) -> VaultBox:
    shutil.copytree(template, where)
    return VaultBox(where)


def _run(box: VaultBox, line: list[str], monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str], *, direct: bool) -> tuple[object, str, str, bool]:
    """(exit code, stdout, stderr, whether the direct path answered) of ``line``."""
    env = box_env(box, ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    line = [str(box.vault) if word == "VAULT" else word for word in line]
    answered: list[bool] = []
    real = direct_ops.run_line

    def spy(argv: list[str], state: object) -> int | None:
        if not direct:
            answered.append(False)
            return None
        try:
            answer = real(argv, state)  # type: ignore[arg-type]
        except BaseException:
            answered.append(True)  # it ran the operation, which failed or exited
            raise
        answered.append(answer is not None)
        return answer

    monkeypatch.setattr(direct_ops, "run_line", spy)
    capsys.readouterr()
    try:
        main(line)
        code: object = 0
    except SystemExit as done:
        code = done.code
    out, err = capsys.readouterr()
    monkeypatch.undo()
    return code, out.replace(str(box.root), "ROOT"), err.replace(str(box.root), "ROOT"), any(
        answered)


@pytest.mark.parametrize("line", DIRECT, ids=" ".join)
def test_a_direct_line_answers_exactly_as_click(
        template: Path, tmp_path: Path, line: list[str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    direct_box = _box(template, tmp_path / "direct")
    click_box = _box(template, tmp_path / "click")
    direct = _run(direct_box, line, monkeypatch, capsys, direct=True)
    through_click = _run(click_box, line, monkeypatch, capsys, direct=False)
    assert direct[3] is True, f"the direct path did not answer {line}"
    assert direct[:3] == through_click[:3]
    assert _contents(direct_box) == _contents(click_box)  # the same writes


@pytest.mark.parametrize("line", CLICK, ids=lambda line: " ".join(line) or "-")
def test_lines_it_cannot_parse_exactly_go_to_click(
        template: Path, tmp_path: Path, line: list[str], monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    box = _box(template, tmp_path / "box")
    assert _run(box, line, monkeypatch, capsys, direct=True)[3] is False


def test_a_plugin_from_another_distribution_adding_commands_sends_all_to_click() -> None:
    from echo_core import create_host, hookimpl
    from plugins.transport_cli.app_state import AppState

    class Raw:
        @hookimpl
        def register_commands(self, cli: object) -> None:
            """Adds nothing; it could add ``recall``."""

    host = create_host(env={}, extra=[("raw", Raw())])
    assert direct_ops.run_line(["recall", "x", "--json"], AppState(host)) is None


_PROBE = ("import sys\nfrom plugins.transport_cli.app import main\n"
          "try:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n"
          "    print(done.code, 'click' in sys.modules, file=sys.stderr)\n")


@pytest.mark.parametrize(("line", "action"), [
    (["recall", "analytical engine", "--json"], "recalled"),
    (["capture", "Grace Hopper", "--kind", "person", "--body", "Wrote COBOL.", "--json"],
     "created"),
], ids=["recall", "capture"])
def test_a_cold_recall_or_capture_imports_no_click(tmp_path: Path, line: list[str],
                                                   action: str) -> None:
    box = seeded_box(tmp_path / "box")
    done = subprocess.run([sys.executable, "-c", _PROBE, *line],
                          env={**box_env(box, ECHO_VAULT=str(box.vault),
                                         ECHO_STATE_DIR=str(box.state)),
                               "PYTHONPATH": str(REPO)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.stderr.strip().splitlines()[-1] == "0 False", done.stderr
    assert f'"action": "{action}"' in done.stdout
