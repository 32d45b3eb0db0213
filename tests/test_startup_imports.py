"""What a cold start imports (issue 15): modules a command does not need stay out.

Each check runs the CLI in a fresh interpreter (``main`` called in-process there) and
looks at ``sys.modules`` afterwards; ``ECHO_PLUGIN_DISTS`` keeps third-party plugins out.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from echo_core.config import Config, Setting
from echo_core.models import to_jsonable
from echo_core.plugins import PluginRecord
from echo_core.registrations import RegistrationProblem

_PROBE = """
import json, sys
from plugins.transport_cli.app import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(sys.modules)), file=sys.stderr)
"""


def _imported(args: list[str], env: dict[str, str] | None = None) -> set[str]:
    """The modules imported by ``echo-memory <args>`` run in a fresh interpreter."""
    run_env = {**os.environ, "ECHO_PLUGIN_DISTS": "echo-memory", **(env or {})}
    done = subprocess.run([sys.executable, "-c", _PROBE, *args], capture_output=True,
                          text=True, env=run_env, check=False, timeout=120)
    return set(json.loads(done.stderr.strip().splitlines()[-1]))


def _packages(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_help_imports_no_attrs(tmp_path: Path) -> None:
    imported = _imported(["--help"], {"ECHO_CONFIG": str(tmp_path / "none.toml")})
    assert "plugins.transport_cli.app" in imported
    assert not _packages(imported) & {"attr", "attrs", "dataclasses"}
    assert not {"echo_core.models", "echo_core.protocols", "echo_core.context"} & imported


def test_help_asks_no_module_for_the_terminal_width(tmp_path: Path) -> None:
    # click's formatter imports shutil (with zlib, bz2 and lzma) unless it is given the
    # width; pathlib is left out too, but an editable install's finder imports it anyway
    imported = _imported(["--help"], {"ECHO_CONFIG": str(tmp_path / "none.toml")})
    assert not {"shutil", "bz2", "lzma"} & imported


def test_a_lazy_logger_is_the_named_logger_once_used(caplog: pytest.LogCaptureFixture) -> None:
    import logging

    from echo_core import lazy_logger

    log = lazy_logger("echo_memory.lazy-probe")
    with caplog.at_level(logging.INFO, logger="echo_memory.lazy-probe"):
        log.info("hello %s", "there")
    assert caplog.records[-1].getMessage() == "hello there"
    assert caplog.records[-1].name == "echo_memory.lazy-probe"
    assert log.isEnabledFor(logging.CRITICAL)


def test_records_off_the_start_up_path_are_json_objects_by_field() -> None:
    record = PluginRecord("alpha", "1.0", hooks=["register_storage"])
    problem = RegistrationProblem("duplicate", "register_storage", "fs", ("a", "b"), "taken")
    assert to_jsonable([record, problem]) == [
        {"name": "alpha", "version": "1.0", "status": "ok", "error": None,
         "hooks": ["register_storage"], "source": "entry-point"},
        {"kind": "duplicate", "hook": "register_storage", "name": "fs",
         "plugins": ["a", "b"], "message": "taken"},
    ]


def test_config_records_compare_by_value_and_stay_immutable() -> None:
    first = Config(Setting("/v", "flag"), Setting("/s", "default"), "/c.toml", False)
    again = Config(Setting("/v", "flag"), Setting("/s", "default"), "/c.toml", False)
    assert first == again and first.backends == {} and first.raw == {}
    with pytest.raises(AttributeError):
        first.vault.value = "/elsewhere"  # type: ignore[misc]


def _imported_by(code: str) -> set[str]:
    """The modules imported by ``code`` run in a fresh interpreter."""
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=120)
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_a_context_imports_each_part_when_it_is_first_used(tmp_path: Path) -> None:
    parts = {"echo_core.entities", "echo_core.entity_cache", "echo_core.history",
             "echo_core.ranker_upkeep", "echo_core.routing", "echo_core.own_writes",
             "echo_core.vault"}
    env = {"ECHO_VAULT": str(tmp_path / "vault"), "ECHO_STATE_DIR": str(tmp_path / "state"),
           "ECHO_CONFIG": str(tmp_path / "none.toml")}
    made = _imported_by(f"from echo_core.context import create_context\n"
                        f"ctx = create_context(env={env!r})\nctx.today()")
    assert "echo_core.context" in made
    assert not parts & made
    assert "echo_core.routing" in _imported_by(
        f"from echo_core.context import create_context\n"
        f"create_context(env={env!r}).manifest")


def test_the_load_digest_parses_the_inbox_without_importing_capture() -> None:
    imported = _imported_by("import echo_core.ops.digest")
    assert "echo_core.ops.triage" in imported
    assert "echo_core.ops.capture" not in imported


def test_a_cold_recall_loads_no_openssl_shutil_tomllib_or_numpy(tmp_path: Path) -> None:
    """A small query in a fresh process: hashes without OpenSSL (``echo_core.digests``),
    no rebuild's shutil, the routing manifest from its JSON copy, no numpy."""
    from tests.capture_kit import VaultBox

    box = VaultBox(tmp_path / "box").init()
    for title in ("Deploy checklist", "Release train", "Web cluster"):
        assert box.capture(title, kind="concept", body=f"{title}: how we deploy.").ok
    env = {**box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state))}
    old = 1_600_000_000
    for note in box.vault.rglob("*"):  # no note "just modified" (those are always hashed)
        os.utime(note, (old, old))
    for _ in range(2):  # builds the index, writes the copies; then records the old stamps
        _imported(["recall", "--json", "deploy"], env)
    imported = _imported(["recall", "--json", "deploy"], env)
    assert "echo_core.ops.recall" in imported
    assert not {"hashlib", "_hashlib", "shutil", "tomllib", "numpy"} & imported
    # nothing logged: no logging; a small answer: no orjson; no uuid for a token; and the
    # line parsed without click (transport_cli.direct_ops)
    assert not {"logging", "orjson", "uuid", "click"} & imported


def test_a_cold_session_start_loads_no_thread_pool_logging_or_openssl(tmp_path: Path) -> None:
    """A folder vault's brief is read in the hook's own thread; nothing logged, hashed
    with OpenSSL or given a uuid on the way."""
    from tests.capture_kit import VaultBox

    box = VaultBox(tmp_path / "box").init()
    assert box.capture("Deploy checklist", kind="concept", body="How we deploy.").ok
    env = {**os.environ, "ECHO_PLUGIN_DISTS": "echo-memory", "ECHO_SESSION_PASS": "background",
           **box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state))}
    stdin = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart",
                        "source": "startup", "cwd": str(tmp_path)})
    seen: set[str] = set()
    for _ in range(2):  # the first run builds what a first run builds
        done = subprocess.run([sys.executable, "-c", _PROBE, "hook", "SessionStart"],
                              input=stdin, capture_output=True, text=True, env=env,
                              check=False, timeout=120)
        seen = set(json.loads(done.stderr.strip().splitlines()[-1]))
    assert "echo_core.ops.load" in seen
    assert not {"concurrent.futures", "logging", "hashlib", "_hashlib", "uuid", "click"} & seen
    # the hook runner imports traceback (and textwrap, ~1 ms) only to print a failure
    assert not {"traceback", "textwrap"} & seen


def test_a_cold_capture_after_a_hand_edit_loads_no_openssl_logging_uuid_or_resources(
        tmp_path: Path) -> None:
    """A capture in a fresh process, after a person edited a note (the freshness check
    hashes it, without OpenSSL), writing its day's agent log from the shipped template
    (read beside the module, not through ``importlib.resources``), with a fresh operation
    id (no ``uuid``) and nothing logged."""
    from tests.capture_kit import VaultBox

    box = VaultBox(tmp_path / "box").init()
    env = {**box.env(ECHO_VAULT=str(box.vault), ECHO_STATE_DIR=str(box.state),
                     ECHO_TODAY="2026-03-02")}
    _imported(["capture", "Deploy checklist", "--kind", "concept", "--body", "How."], env)
    note = next(box.vault.rglob("deploy-checklist.md"))
    note.write_text(note.read_text(encoding="utf-8") + "\nA line a person added.\n",
                    encoding="utf-8")
    env["ECHO_TODAY"] = "2026-03-03"  # a new day: its daily note comes from the template
    imported = _imported(["capture", "Release train", "--kind", "concept", "--body",
                          "Every second Tuesday."], env)
    assert "echo_core.ops.capture" in imported and "echo_core.ops.freshness" in imported
    daily = box.vault / "journal" / "daily" / "2026-03-03.md"
    assert "[[release-train]]" in daily.read_text(encoding="utf-8")
    assert "A line a person added." in note.read_text(encoding="utf-8")
    assert not {"hashlib", "_hashlib", "logging", "uuid", "importlib.resources",
                "click"} & imported
