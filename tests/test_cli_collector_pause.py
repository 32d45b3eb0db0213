"""A CLI process of its own pauses the cyclic garbage collector while it starts and while
it answers a line without click, and exits that way (no pass over everything the command
allocated just before the exit frees it); it turns it on for a line that goes to click
(``serve`` may run for days); ``main`` called in-process leaves the caller's collector
alone."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

from plugins.transport_cli.app import main
from tests.conftest import REPO
from tests.mcp_kit import box_env, seeded_box

#: Run in a child: a gen-0 threshold of 1 makes the collector run on every allocation it
#: is allowed to, so the passes counted inside a step of ``main`` say whether the collector
#: was paused for it. Reports each step's passes and whether the collector was on, and
#: the passes from the end of the last step to the exit.
CHILD = """
import gc, json, sys
from plugins.transport_cli import app
passes = []
gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(info))
steps = {}
def watched(name, step):
    def run(*args, **kwargs):
        before, on = len(passes), gc.isenabled()
        try:
            return step(*args, **kwargs)
        finally:
            steps[name] = {"passes": len(passes) - before, "on": on}
            ended.append(len(passes))
    return run
ended = []
app._startup_host = watched("start", app._startup_host)
app._run_direct = watched("direct", app._run_direct)
app._run_click = watched("click", app._run_click)
gc.collect()
gc.set_threshold(1)
sys.argv = ["echo-memory", *json.loads(sys.argv[1])]
code = None
try:
    app.main()
except SystemExit as done:
    code = done.code
after = len(passes) - ended[-1]
sys.stderr.write(json.dumps({"code": code, "steps": steps, "after": after,
                             "enabled": gc.isenabled()}) + "\\n")
"""


def _child_report(tmp_path: Path, child: str, args: list[str]) -> dict[str, object]:
    """Run ``child`` on a seeded vault with ``args`` (JSON) and return the JSON object it
    writes last to stderr."""
    box = seeded_box(tmp_path)
    done = subprocess.run([sys.executable, "-c", child, json.dumps(args)],
                          env=box_env(box, ECHO_VAULT=str(box.vault),
                                      ECHO_STATE_DIR=str(box.state)),
                          cwd=REPO, capture_output=True, text=True,
                          check=False, timeout=120)
    found: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return found


def _passes(tmp_path: Path, args: list[str]) -> dict[str, object]:
    return _child_report(tmp_path, CHILD, args)


def test_a_direct_line_runs_and_exits_with_the_collector_paused(tmp_path: Path) -> None:
    found = _passes(tmp_path, ["recall", "analytical engine", "--json"])
    assert found == {"code": 0, "enabled": False, "after": 0, "steps": {
        "start": {"passes": 0, "on": False}, "direct": {"passes": 0, "on": False}}}


def test_a_direct_capture_exits_without_a_collector_pass(tmp_path: Path) -> None:
    found = _passes(tmp_path, ["capture", "Babbage's mill", "--kind", "concept",
                               "--body", "The mill computed."])
    assert found["code"] == 0 and found["after"] == 0 and found["enabled"] is False


def test_a_line_that_goes_to_click_runs_with_the_collector_on(tmp_path: Path) -> None:
    found = _passes(tmp_path, ["plugins", "--json"])
    assert found["code"] == 0 and found["enabled"] is True
    steps = found["steps"]
    assert isinstance(steps, dict)
    assert steps["start"] == {"passes": 0, "on": False}
    assert steps["click"]["on"] is True and steps["click"]["passes"] > 0


def test_main_called_in_process_leaves_the_collector_alone(tmp_path: Path,
                                                          capsys: object) -> None:
    box = seeded_box(tmp_path)
    seen: list[bool] = []

    def watch(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            seen.append(True)

    gc.callbacks.append(watch)
    threshold = gc.get_threshold()
    gc.set_threshold(1)
    try:
        try:
            main(["recall", "analytical engine", "--json", "--vault", str(box.vault),
                  "--state-dir", str(box.state)])
        except SystemExit as done:
            assert done.code == 0
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(watch)
    assert seen and gc.isenabled()


#: Run in a child through the console script's entry (``plugins.cli_start``): counts the
#: collector's passes from the call of ``run`` to the exit (gen-0 threshold 1, as above)
#: and reports whether the collector was on at the exit. ``argv[2]`` == "off": the
#: collector is turned off before ``run``, as a caller may.
SCRIPT_CHILD = """
import atexit, gc, json, sys
from plugins.cli_start import run
passes = []
gc.callbacks.append(lambda phase, info: phase == "start" and passes.append(1))
sys.argv = ["echo-memory", *json.loads(sys.argv[1])]
started = []
atexit.register(lambda: sys.stderr.write(json.dumps(
    {"passes": len(passes) - started[0], "enabled": gc.isenabled()}) + "\\n"))
gc.collect()
if sys.argv.pop() == "off":
    gc.disable()
gc.set_threshold(1)
started.append(len(passes))
run()
"""


def _script_passes(tmp_path: Path, args: list[str], collector: str = "on"
                   ) -> dict[str, object]:
    return _child_report(tmp_path, SCRIPT_CHILD, [*args, collector])


def test_the_console_script_imports_the_cli_with_the_collector_paused(tmp_path: Path) -> None:
    found = _script_passes(tmp_path, ["recall", "analytical engine", "--json"])
    assert found == {"passes": 0, "enabled": False}


def test_the_console_script_runs_a_click_line_with_the_collector_on(tmp_path: Path) -> None:
    found = _script_passes(tmp_path, ["plugins", "--json"])
    assert found["enabled"] is True and isinstance(found["passes"], int)
    assert found["passes"] > 0


def test_the_console_script_leaves_a_collector_it_found_off_off(tmp_path: Path) -> None:
    found = _script_passes(tmp_path, ["plugins", "--json"], collector="off")
    assert found == {"passes": 0, "enabled": False}


def test_the_installed_console_script_is_the_paused_entry() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["echo-memory"] == "plugins.cli_start:run"
