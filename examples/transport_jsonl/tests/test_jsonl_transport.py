"""The JSON-lines transport in process: every registered operation (the core's and a
plugin's it has never heard of), validation by the declaration, access, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import echo_transport_jsonl
import pytest
from echo_transport_jsonl import answer, serve

import echo_core
from echo_core import Envelope, Operation, hookimpl, param
from echo_core.testing import CommandsContract

DISTS = "echo-memory,echo-transport-jsonl"


def isolated_env(root: Path) -> dict[str, str]:
    """No user config, time pinned, only the built-in distribution and this one."""
    home = root / "home"
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "XDG_STATE_HOME": str(home / ".local/state"), "ECHO_TODAY": "2026-03-01",
            "ECHO_NOW": "2026-03-01T09:30:00", "ECHO_STRICT_PLUGINS": "1",
            "ECHO_PLUGIN_DISTS": DISTS}


@attrs.frozen(kw_only=True)
class ShoutParams:
    """What the test plugin's ``shout`` takes."""

    word: str = param(help="A word to shout.", min_length=1, max_length=20)
    times: int = param(1, help="How many times.", ge=1, le=3)


def run_shout(ctx: Any, p: ShoutParams) -> Envelope:
    return Envelope(True, "shouted", " ".join([p.word.upper()] * p.times))


SHOUT = Operation("shout", "Shout WORD.", "Shout a word. Use it in tests. Returns the text.",
                  ShoutParams, run_shout)


def run_boom(ctx: Any, p: ShoutParams) -> Envelope:
    raise RuntimeError("a bug")


BOOM = Operation("boom", "Fail.", "Fail with a bug. Use it in tests. Returns nothing.",
                 ShoutParams, run_boom)


class ShoutPlugin:
    """A third party's operations the transport knows nothing about."""

    @hookimpl
    def register_operations(self, register: Any) -> None:
        register("shout", SHOUT)
        register("boom", BOOM)


def make_ctx(tmp_path: Path, *extra: tuple[str, object]) -> Any:
    env = isolated_env(tmp_path)
    host = echo_core.create_host(env=env, extra=list(extra))
    ctx = echo_core.create_context(vault=str(tmp_path / "vault"),
                                   state_dir=str(tmp_path / "state"), env=env, host=host)
    assert echo_core.invoke(ctx, "init").ok
    return ctx


@pytest.fixture
def ctx(tmp_path: Path) -> Any:
    (tmp_path / "vault").mkdir()
    return make_ctx(tmp_path, ("shout_plugin", ShoutPlugin()))


def ask(ctx: Any, request: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return answer(ctx, json.dumps(request), **kw)


def test_list_shows_every_registered_operation_with_its_input_schema(ctx: Any) -> None:
    reply = ask(ctx, {"op": "_list", "id": 1})
    assert reply["id"] == 1 and reply["ok"] is True
    listed = {op["name"]: op for op in reply["result"]["operations"]}
    registry = echo_core.OperationRegistry.from_host(ctx.host)
    assert set(listed) == {op.name for op in registry} and {"recall", "put", "shout"} <= set(listed)
    assert listed["shout"]["input_schema"]["properties"]["times"]["maximum"] == 3
    assert listed["recall"]["access"] == "read" and listed["put"]["access"] == "write"
    json.dumps(reply)


def test_capture_then_recall(ctx: Any) -> None:
    created = ask(ctx, {"op": "capture", "id": "c", "args": {
        "title": "Ada Lovelace", "kind": "person", "body": "Wrote the first program."}},
        allow_writes=True)
    assert created["ok"] is True and created["result"]["action"] == "created", created
    found = ask(ctx, {"op": "recall", "id": "r", "args": {"query": "first program"}})
    assert found["id"] == "r" and found["ok"] is True
    assert any("ada-lovelace" in hit["path"] for hit in found["result"]["primary"]), found


def test_a_plugins_operation_works_though_the_transport_never_names_it(ctx: Any) -> None:
    reply = ask(ctx, {"op": "shout", "id": 7, "args": {"word": "hi", "times": 2}})
    assert reply == {"id": 7, "ok": True, "result": {
        "ok": True, "action": "shouted", "message": "HI HI"}}


def test_writes_need_allow_writes_and_dry_runs_are_reads(ctx: Any) -> None:
    refused = ask(ctx, {"op": "put", "args": {"path": "notes/x.md", "text": "x\n"}})
    assert refused["error"]["code"] == "usage" and "--allow-writes" in refused["error"]["message"]
    assert ask(ctx, {"op": "get", "args": {"path": "notes/x.md"}})["error"]["exit"] == 44
    preview = ask(ctx, {"op": "capture", "args": {"title": "Grace", "dry_run": True}})
    assert preview["ok"] is True, preview
    written = ask(ctx, {"op": "put", "args": {"path": "notes/x.md", "text": "x\n"}},
                  allow_writes=True)
    assert written["ok"] is True, written
    assert ask(ctx, {"op": "get", "args": {"path": "notes/x.md"}})["result"]["content"] == "x\n"


@pytest.mark.parametrize(("line", "code", "exit_code", "names"), [
    ('{"op": "nope", "id": 3}', "not-found", 44, "_list"),
    ('{"op": "recall", "args": {"query": "x", "limit": 0}}', "usage", 2, "limit"),
    ('{"op": "recall", "args": {"query": "x", "colour": 1}}', "usage", 2, "colour"),
    ('{"op": "recall", "args": {}}', "usage", 2, "query"),
    ('{"op": "recall", "args": [1]}', "usage", 2, "args"),
    ('{"op": "get", "args": {"path": "missing.md"}}', "not-found", 44, "missing.md"),
    ("not json", "usage", 2, "not JSON"),
    ("[1, 2]", "usage", 2, '"op"'),
])
def test_errors_are_answers_with_code_and_exit(ctx: Any, line: str, code: str,
                                               exit_code: int, names: str) -> None:
    reply = answer(ctx, line)
    assert set(reply) == {"id", "error"}, reply
    assert reply["error"]["code"] == code and reply["error"]["exit"] == exit_code, reply
    assert names in reply["error"]["message"], reply


def test_serve_answers_each_nonblank_line_in_order(ctx: Any) -> None:
    lines = ['{"op": "shout", "id": 1, "args": {"word": "a"}}\n', "\n",
             '{"op": "nope", "id": 2}\n', '{"op": "boom", "id": 3, "args": {"word": "b"}}\n',
             '{"op": "shout", "id": 4, "args": {"word": "b"}}\n']
    replies = [json.loads(out) for out in serve(ctx, lines)]
    assert [r["id"] for r in replies] == [1, 2, 3, 4]
    assert [("error" in r) for r in replies] == [False, True, True, False]
    assert replies[2]["error"]["code"] == "failure" and "RuntimeError" in replies[2]["error"][
        "message"] and "a bug" not in replies[2]["error"]["message"]


class TestJsonlCommand(CommandsContract):
    @pytest.fixture
    def plugin(self) -> object:
        return echo_transport_jsonl

    @pytest.fixture
    def reserved_command_names(self) -> set[str]:
        return {"recall", "capture", "serve", "build", "plugins", "get", "put"}
