"""The hook recorder (``plugins/habitat/hook_record*.py``), run as the built plugin runs
it (``python -S -E hook_record_run.py EVENT``): every event of a session becomes its
record with its parent; it is fail-safe (exit 0, nothing on stdout, errors logged); it
finds the state dir exactly as echo-memory does; it imports only the standard library;
its redaction, JSON and clock are the core's."""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from echo_core import clock, redaction
from echo_core.context import create_context
from plugins.habitat import hook_record, hook_record_paths, hook_record_redact
from plugins.habitat.hook_record_json import dumps, loads
from plugins.habitat.hook_record_sre import PatternCache
from plugins.habitat.loom import Loom
from plugins.habitat.record import Record
from tests.capture_kit import VaultBox
from tests.habitat_record_kit import (
    RECORDER,
    box_at,
    hook_env,
    loom_json,
    loom_of,
    payload,
    raw_lines,
    run_recorder,
)
from tests.secret_kit import LOOKALIKES, SECRETS


@pytest.fixture
def box(tmp_path: Path) -> VaultBox:
    return box_at(tmp_path / "box")


def _records(box: VaultBox) -> list[dict[str, Any]]:
    return loom_json(loom_of(box.ctx()))


def _run(event: str, box: VaultBox, **fields: Any) -> subprocess.CompletedProcess[bytes]:
    proc = run_recorder(event, payload(fields.pop("session", "sess-1"), **fields),
                        hook_env(box))
    assert proc.returncode == 0 and proc.stdout == b"", proc.stderr
    return proc


# --- what each event records ----------------------------------------------------------


def test_a_session_is_recorded_event_by_event_with_its_parents(box: VaultBox) -> None:
    _run("SessionStart", box, source="startup", model="m")
    _run("UserPromptSubmit", box, prompt="fix the deploy script")
    _run("PreToolUse", box, tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="tu1")
    _run("PostToolUse", box, tool_name="Bash", tool_input={"command": "ls"}, tool_use_id="tu1",
         tool_response={"stdout": "deploy.sh", "stderr": "", "interrupted": False})
    _run("PreToolUse", box, tool_name="Bash", tool_input={"command": "./deploy.sh"},
         tool_use_id="tu2")
    _run("PostToolUseFailure", box, tool_name="Bash", tool_input={"command": "./deploy.sh"},
         tool_use_id="tu2", error="exit 1: permission denied")
    _run("Stop", box, stop_hook_active=False, last_assistant_message="The script needs +x.")
    _run("SessionEnd", box, reason="prompt_input_exit")
    records = _records(box)
    kinds = [(r["kind"], r["text"]) for r in records]
    assert kinds == [
        ("session", "start startup"), ("prompt", "fix the deploy script"),
        ("tool", 'Bash {"command":"ls"}'), ("tool", 'Bash {"command":"./deploy.sh"}'),
        ("reply", "The script needs +x."), ("session", "end prompt_input_exit")]
    root, prompt, ok, failed, reply, end = records
    assert root["parent_id"] is None
    assert prompt["parent_id"] == root["id"] == end["parent_id"]
    assert ok["parent_id"] == failed["parent_id"] == reply["parent_id"] == prompt["id"]
    assert (ok["is_error"], failed["is_error"]) == (False, True)
    assert json.loads(ok["result"])["stdout"] == "deploy.sh"
    assert failed["result"] == "exit 1: permission denied"
    assert isinstance(ok["duration_ms"], int) and ok["duration_ms"] >= 0
    assert {r["agent_id"] for r in records} == {"claude-code"}
    assert {r["session_id"] for r in records} == {"sess-1"}
    hook_dir = box.state / "vaults"
    assert not list(hook_dir.glob("*/habitat/hook/pending/*")), "marks are removed"
    assert not list(hook_dir.glob("*/habitat/hook/sessions/*")), "an ended session is forgotten"


def test_the_recorders_limits_are_the_records() -> None:
    from plugins.habitat import record

    assert (hook_record.MAX_TEXT, hook_record.MAX_NAME) == (record.MAX_TEXT, record.MAX_NAME)


def test_every_line_is_what_record_to_line_writes(box: VaultBox) -> None:
    _run("UserPromptSubmit", box, prompt="unicode \u00e9\u4e2d and \"quotes\" and \ud800")
    _run("PostToolUse", box, tool_name="Read", tool_input={"file_path": "/x"},
         tool_response="y" * 20_000)
    for line in raw_lines(loom_of(box.ctx())):
        assert Record.from_json(json.loads(line)).to_line() == line
    assert _records(box)[-1]["truncated"] is True


def test_the_agent_comes_from_echo_agent_id(box: VaultBox) -> None:
    env = hook_env(box, ECHO_AGENT_ID="reviewer-bot")
    assert run_recorder("UserPromptSubmit", payload("s", prompt="hi"), env).returncode == 0
    assert {r["agent_id"] for r in _records(box)} == {"reviewer-bot"}


def test_a_session_first_seen_mid_way_gets_its_root_then(box: VaultBox) -> None:
    _run("PostToolUse", box, tool_name="Edit", tool_input={}, tool_response="ok")
    root, tool = _records(box)
    assert (root["kind"], root["text"]) == ("session", "start seen")
    assert tool["parent_id"] == root["id"]


def test_parallel_tool_calls_of_a_session_first_seen_mid_way_share_one_root(
        box: VaultBox) -> None:
    """Parallel tool calls in a session the recorder first meets mid-way (the plugin
    installed mid-session) made several "start seen" roots; the session's lock keeps one."""
    from concurrent.futures import ThreadPoolExecutor

    def one(n: int) -> int:
        return run_recorder("PostToolUse", payload("par-1", tool_name="Bash",
                                                   tool_input={"command": f"echo {n}"},
                                                   tool_use_id=f"p{n}"),
                            hook_env(box)).returncode

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert set(pool.map(one, range(12))) == {0}
    records = [r for r in _records(box) if r["session_id"] == "par-1"]
    roots = [r for r in records if r["kind"] == "session"]
    assert [r["text"] for r in roots] == ["start seen"]
    tools = [r for r in records if r["kind"] == "tool"]
    assert len(tools) == 12 and {t["parent_id"] for t in tools} == {roots[0]["id"]}


def test_a_resumed_session_chains_its_session_records(box: VaultBox) -> None:
    _run("SessionStart", box, source="startup")
    _run("SessionStart", box, source="compact")
    first, second = _records(box)
    assert second["parent_id"] == first["id"] and second["text"] == "start compact"


def test_two_sessions_keep_their_own_parents(box: VaultBox) -> None:
    _run("UserPromptSubmit", box, session="a", prompt="one")
    _run("UserPromptSubmit", box, session="b", prompt="two")
    _run("Stop", box, session="a", last_assistant_message="for a")
    by_text = {r["text"]: r for r in _records(box)}
    assert by_text["for a"]["parent_id"] == by_text["one"]["id"]


def test_the_time_is_pinned_as_echo_core_pins_it(box: VaultBox) -> None:
    for pin in ({"ECHO_NOW": "2026-03-01T09:30:00"}, {"ECHO_NOW": "14:05", "ECHO_TODAY":
                "2026-02-03"}, {"ECHO_NOW": "0715", "ECHO_TODAY": "2026-02-04"},
                {"ECHO_TODAY": "2026-02-05"}):
        stamp, _ = hook_record._clock(pin)(0)
        assert _dt.datetime.fromisoformat(stamp) == clock.now(pin), pin


def test_records_of_one_event_sort_by_id_in_their_order(box: VaultBox) -> None:
    _run("Stop", box, last_assistant_message="first event of the session")
    ids = [r["id"] for r in _records(box)]
    assert ids == sorted(ids) and len(ids) == 2


# --- fail-safe --------------------------------------------------------------------------


@pytest.mark.parametrize("stdin", [b"not json", b"[1, 2]", b"\xff\xfe", b'{"session_id": '])
def test_a_bad_event_exits_0_quietly_and_is_logged(box: VaultBox, stdin: bytes) -> None:
    proc = run_recorder("PostToolUse", stdin, hook_env(box))
    assert proc.returncode == 0 and proc.stdout == b""
    assert _records(box) == []
    logs = list(box.state.glob("vaults/*/habitat/hook-errors.log"))
    assert logs and "PostToolUse" in logs[0].read_text()


def test_an_unknown_event_records_nothing(box: VaultBox) -> None:
    proc = run_recorder("Notification", payload("s", message="x"), hook_env(box))
    assert proc.returncode == 0 and proc.stdout == b"" and _records(box) == []


def test_an_unwritable_state_dir_is_logged_on_stderr_not_fatal(tmp_path: Path) -> None:
    box = box_at(tmp_path / "box")
    env = hook_env(box, ECHO_STATE_DIR="/proc/nowhere/state")
    proc = run_recorder("UserPromptSubmit", payload("s", prompt="x"), env)
    assert proc.returncode == 0 and proc.stdout == b""


def test_a_disabled_habitat_records_nothing(box: VaultBox) -> None:
    env = hook_env(box, ECHO_DISABLE_PLUGINS="expand_alias,habitat")
    assert run_recorder("UserPromptSubmit", payload("s", prompt="x"), env).returncode == 0
    assert not list(box.state.glob("vaults/*/habitat/loom/*"))


def test_a_lock_held_forever_cannot_hold_the_hook(box: VaultBox) -> None:
    _run("UserPromptSubmit", box, prompt="first")
    day = next(box.state.glob("vaults/*/habitat/loom/*.jsonl"))
    with open(day, "ab") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        start = time.monotonic()
        proc = run_recorder("Stop", payload("sess-1", last_assistant_message="late"),
                            hook_env(box, ECHO_HABITAT_HOOK_SECONDS="0.5"))
        took = time.monotonic() - start
    assert proc.returncode == 0 and proc.stdout == b"" and took < 10
    assert [r["text"] for r in _records(box)] == ["start seen", "first"]
    _run("Stop", box, last_assistant_message="after")
    assert _records(box)[-1]["text"] == "after"


def test_the_process_imports_only_the_standard_library(box: VaultBox) -> None:
    env = hook_env(box)
    del env["ECHO_NOW"], env["ECHO_TODAY"]  # a pinned clock parses dates (tests only)
    data = json.dumps(payload("s", prompt="plain words, no secret shape")).encode()
    proc = subprocess.run([sys.executable, "-S", "-E", "-X", "importtime", str(RECORDER),
                           "UserPromptSubmit"], input=data, capture_output=True, env=env,
                          timeout=60, check=False)
    assert proc.returncode == 0 and proc.stdout == b""
    imported = {line.split("|")[-1].strip() for line in proc.stderr.decode().splitlines()
                if line.startswith("import time:")}
    assert {"hook_record", "hook_record_paths", "loom_file"} <= imported
    heavy = {"echo_core", "click", "pluggy", "attrs", "json", "re", "typing", "enum",
             "tomllib", "hashlib", "datetime", "signal"}
    assert not heavy & imported, heavy & imported
    assert _records(box)[-1]["text"] == "plain words, no secret shape"


# --- the state dir ----------------------------------------------------------------------


def _agree(env: dict[str, str]) -> str:
    ours = hook_record_paths.state_dir(env)
    theirs = str(create_context(env=env).state_dir)
    assert ours == theirs
    return ours


def test_the_state_dir_is_echo_memorys_for_every_way_to_configure_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OBSIDIAN_API_KEY", "k" * 20)  # the storage reads os.environ
    home = tmp_path / "home"
    vault = tmp_path / "vaults" / "main"
    vault.mkdir(parents=True)
    link = tmp_path / "link"
    link.symlink_to(vault)
    base = {"HOME": str(home), "ECHO_STRICT_PLUGINS": "1",
            "ECHO_PLUGIN_DISTS": os.environ.get("ECHO_PLUGIN_DISTS", "echo-memory")}
    seen = {
        _agree({**base, "ECHO_VAULT": str(vault), "ECHO_STATE_DIR": str(tmp_path / "st")}),
        _agree({**base, "ECHO_VAULT": f"file://{vault}"}),
        _agree({**base, "ECHO_VAULT": f"file:{vault}", "XDG_STATE_HOME": str(tmp_path / "x")}),
        _agree({**base, "ECHO_VAULT": str(link) + "//./"}),
        _agree({**base}),
    }
    monkeypatch.chdir(tmp_path / "vaults")
    seen.add(_agree({**base, "ECHO_VAULT": "main", "ECHO_STATE_DIR": "~/state"}))
    config = tmp_path / "cfg.toml"
    config.write_text(f'vault = "{vault}"\nstate_dir = "~/from-config"\n[backends.obsidian]\n'
                      'key_env = "K"\n', encoding="utf-8")
    seen.add(_agree({**base, "ECHO_CONFIG": str(config)}))
    seen.add(_agree({**base, "ECHO_CONFIG": str(config), "ECHO_STATE_DIR": str(tmp_path)}))
    (home / ".config" / "echo-memory").mkdir(parents=True)
    (home / ".config" / "echo-memory" / "config.toml").write_text(
        'vault = "~/notes"\n', encoding="utf-8")
    (home / "notes").mkdir()
    seen.add(_agree({**base}))
    seen.add(_agree({**base, "ECHO_VAULT": "obsidian+https://Vault.Local",
                     "OBSIDIAN_API_KEY": "k" * 20}))
    seen.add(_agree({**base, "ECHO_VAULT": "obsidian+http://[::1]:9999",
                     "OBSIDIAN_API_KEY": "k" * 20}))
    assert len(seen) >= 8


def test_a_config_is_parsed_once_per_change(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "cfg.toml"
    config.write_text('vault = "/v1"\n', encoding="utf-8")
    old = time.time() - 10
    os.utime(config, (old, old))
    env = {"HOME": str(tmp_path), "ECHO_CONFIG": str(config)}
    assert hook_record_paths.cached_config(str(config), env) == {"vault": "/v1"}
    monkeypatch.setattr(hook_record_paths, "read_config", lambda path: pytest.fail("parsed"))
    assert hook_record_paths.cached_config(str(config), env) == {"vault": "/v1"}
    monkeypatch.undo()
    config.write_text('vault = "/v2-longer"\n', encoding="utf-8")
    os.utime(config, (old + 1, old + 1))
    assert hook_record_paths.cached_config(str(config), env) == {"vault": "/v2-longer"}


def test_a_bad_config_or_another_scheme_is_unresolved(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("vault = [unclosed\n", encoding="utf-8")
    with pytest.raises(hook_record_paths.Unresolved, match="not valid TOML"):
        hook_record_paths.state_dir({"HOME": str(tmp_path), "ECHO_CONFIG": str(config)})
    with pytest.raises(hook_record_paths.Unresolved, match="folder and Obsidian"):
        hook_record_paths.state_dir({"HOME": str(tmp_path), "ECHO_VAULT": "s3://bucket"})
    with pytest.raises(hook_record_paths.Disabled):
        config.write_text('disabled = ["habitat"]\n', encoding="utf-8")
        hook_record_paths.state_dir({"HOME": str(tmp_path), "ECHO_CONFIG": str(config),
                                     "ECHO_PLUGIN_CACHE": "off"})


# --- the core's redaction, JSON and patterns, mirrored ---------------------------------


def test_the_rule_table_is_the_cores_rule_by_rule() -> None:
    mine = [(name, source, hints, folded, accept)
            for name, source, hints, folded, accept in hook_record_redact.RULES]
    core = [(r.name, r.pattern.pattern, r.hints, r.folded,
             r.accept.__name__.lstrip("_") if r.accept else None) for r in redaction.RULES]
    assert mine == core
    assert all(r.pattern._flags == 0 for r in redaction.RULES)
    assert hook_record_redact.PRIVATE_TAG == redaction._PRIVATE_TAG.pattern
    assert hook_record_redact.ENV_NAME == redaction._ENV_NAME.pattern
    assert hook_record_redact.SECRET_NAME_STRONG == redaction._SECRET_NAME_STRONG.pattern
    assert hook_record_redact.NOT_SECRET_VALUES == redaction._NOT_SECRET_VALUES
    assert hook_record_redact.MARKER == redaction.MARKER


def _both_compilers(tmp_path: Path) -> list[PatternCache | None]:
    made = PatternCache(str(tmp_path))
    for source, flags in [(rule[1], 0) for rule in hook_record_redact.RULES] + [
            (hook_record_redact.PRIVATE_TAG, 2), (hook_record_redact.ENV_NAME, 0),
            (hook_record_redact.SECRET_NAME_STRONG, 0)]:
        made.compile(source, flags)
    made.save()
    return [None, PatternCache(str(tmp_path))]  # re.compile, then built from the copies


def test_redaction_is_the_cores_on_the_redaction_table(tmp_path: Path) -> None:
    texts = [row.text for row in SECRETS] + [
        t if isinstance(t, str) else t.text for t in LOOKALIKES]
    texts.append("keep <private>drop AKIA" + "IOSFODNN7EXAMPLE</private> and this")
    for cache in _both_compilers(tmp_path):
        hook_record_redact.use_compiler(cache.compile if cache else None)
        try:
            for text in texts:
                assert hook_record_redact.redact_text(text) == redaction.redact(text).text
        finally:
            hook_record_redact.use_compiler(None)


_PIECES = st.sampled_from([row.secret for row in SECRETS] + [
    "api_key=", "TOKEN: ", "password=hunter2abc", "Bearer ", "https://u:", "@host", "=",
    ":", " ", "\n", "<private>", "</private>", "sk-", "eyJ", "xoxb-", "_KEY=", "'", '"'])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=12)), max_size=12))
def test_redaction_is_the_cores_on_generated_text(parts: list[str]) -> None:
    text = "".join(parts)
    assert hook_record_redact.redact_text(text) == redaction.redact(text).text


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(_JSON)
def test_the_json_helpers_are_the_json_modules(value: Any) -> None:
    text = dumps(value)
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert loads(text) == json.loads(text) and loads(f" \n{text}\t") == json.loads(text)


def test_the_json_helpers_refuse_what_json_refuses() -> None:
    for bad in ("", "{", '{"a": 1} x', "[1,]", "nul"):
        with pytest.raises(ValueError):
            loads(bad)


def test_a_damaged_pattern_copy_is_compiled_anew(tmp_path: Path) -> None:
    source = hook_record_redact.RULES[0][1]
    cache = PatternCache(str(tmp_path))
    good = cache.compile(source)
    cache.save()
    data = json.loads((tmp_path / "habitat-hook-patterns.json").read_text())
    for entry in data["patterns"].values():
        entry[1] = [999999, 1, 2]  # code the engine refuses
    (tmp_path / "habitat-hook-patterns.json").write_text(json.dumps(data))
    again = PatternCache(str(tmp_path)).compile(source)
    assert again.pattern == good.pattern and again.flags == good.flags
    text = "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"
    assert again.sub("X", text) == good.sub("X", text) == "X"


def test_a_secret_in_a_tool_result_never_reaches_the_loom(box: VaultBox) -> None:
    secret = SECRETS[0]
    for _ in range(2):  # first with re, then from the compiled copies
        _run("PostToolUse", box, tool_name="Bash", tool_input={"command": "env"},
             tool_response={"stdout": secret.text + "\n" + "z" * 9000})
    text = b"".join(raw_lines(Loom(next(box.state.glob("vaults/*/habitat/loom")))))
    assert secret.secret.encode() not in text and secret.marker.encode() in text
    assert list(box.home.glob(".cache/echo-memory/habitat-hook-patterns.json"))


def test_state_of_sessions_that_never_ended_goes_a_week_later(box: VaultBox) -> None:
    _run("UserPromptSubmit", box, session="crashed", prompt="x")
    _run("PreToolUse", box, session="crashed", tool_name="Bash", tool_use_id="never")
    hook = next(box.state.glob("vaults/*/habitat/hook"))
    stale = [*hook.glob("sessions/*"), *hook.glob("pending/*")]
    assert len(stale) == 2
    old = time.time() - hook_record.STALE_SECONDS - 60
    for path in stale:
        os.utime(path, (old, old))
    _run("UserPromptSubmit", box, session="fresh", prompt="y")
    assert all(p.exists() for p in stale)  # only a SessionStart sweeps
    _run("SessionStart", box, session="fresh", source="clear")
    assert not any(p.exists() for p in stale)
    assert [p.name for p in hook.glob("sessions/*")] == ["fresh.json"]


def test_a_pattern_copy_others_may_write_is_never_used(tmp_path: Path) -> None:
    """The copies are regex engine code: written private, and a file group- or
    world-writable is ignored whole (its entries are compiled anew by re)."""
    source = hook_record_redact.RULES[0][1]
    cache = PatternCache(str(tmp_path))
    cache.compile(source)
    cache.save()
    copy = tmp_path / "habitat-hook-patterns.json"
    assert copy.stat().st_mode & 0o777 == 0o600
    os.chmod(copy, 0o666)
    assert PatternCache(str(tmp_path))._entries == {}
    os.chmod(copy, 0o600)
    assert PatternCache(str(tmp_path))._entries != {}
