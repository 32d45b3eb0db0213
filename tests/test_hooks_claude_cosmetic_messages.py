"""Messages of ``echo-memory hook`` that must say the truth: a budget share shown as set
(0.05 s, not rounded to 0.1 s), and a help that says which exits are not 0 (a command
line without EVENT is a usage error, as for any command; any EVENT exits 0)."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest

from tests.capture_kit import VaultBox
from tests.hook_kit import ECHO_BIN, FALLBACK_CLI, hook_box, hook_env, hook_project  # noqa: F401


@pytest.mark.parametrize(("seconds", "text"), [
    (0.05, "0.05s"), (8.0, "8s"), (2.4000000000000004, "2.4s"), (0.125, "0.125s"), (12.8, "12.8s"),
])
def test_seconds_are_shown_as_set(seconds: float, text: str) -> None:
    from plugins.hooks_claude.budget import seconds_text

    assert seconds_text(seconds) == text


def test_a_budget_share_names_its_margin_without_rounding() -> None:
    from plugins.hooks_claude.budget import budget_share
    from plugins.hooks_claude.events import HookTimeout
    from plugins.hooks_claude.runner import time_budget

    with time_budget(0.3, 30.0), pytest.raises(HookTimeout) as stopped, \
            budget_share(0.05, "reflection"):
        while True:  # until the share's alarm ends the block
            time.sleep(0.01)
    assert str(stopped.value) == "reflection stopped 0.05s before the hook's budget"


def test_the_hook_budget_is_named_as_set() -> None:
    from plugins.hooks_claude.events import HookTimeout
    from plugins.hooks_claude.runner import time_budget

    with pytest.raises(HookTimeout, match=r"its 0\.05s budget"), time_budget(0.05, 30.0):
        while True:
            time.sleep(0.01)


def _cli(*args: str, box: VaultBox, cwd: Path) -> tuple[int, str, str]:
    command = [ECHO_BIN] if ECHO_BIN else FALLBACK_CLI
    proc = subprocess.run([*command, *args], input=b"", capture_output=True, check=False,
                          env=hook_env(box), cwd=cwd, timeout=60)
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_hook_without_an_event_is_a_usage_error_as_its_help_says(box: VaultBox,
                                                                 project: Path) -> None:
    code, out, err = _cli("hook", box=box, cwd=project)
    assert (code, out) == (2, "")
    assert "EVENT" in err


def test_hook_help_says_which_exits_are_not_0(box: VaultBox, project: Path) -> None:
    code, out, _ = _cli("hook", "--help", box=box, cwd=project)
    assert code == 0
    flat = " ".join(out.split())
    assert "Always exits 0" not in flat
    assert "Exits 0 for any EVENT" in flat and "without EVENT" in flat
    assert "exit 2 like any command" in flat and "|| true" in flat
