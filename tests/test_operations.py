"""The operation registry: one declaration checked once (parse_params), its schemas, and
the problems a registration can have (each naming the plugins involved)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import attrs
import jsonschema
import pytest

from echo_core import (
    CliParam,
    CliSurface,
    EchoError,
    Envelope,
    McpParam,
    McpSurface,
    Operation,
    OperationRegistry,
    ParamsInvalid,
    SkillSpec,
    create_context,
    hookimpl,
    input_schema,
    invoke,
    output_schema,
    param,
    parse_params,
)
from echo_core.operations import Bounds
from echo_core.operations.registry import registration_problems
from echo_core.plugins import create_host
from plugins.transport_cli.app import build_cli


@attrs.frozen(kw_only=True)
class Item:
    line: str = param(help="The line.")
    tags: tuple[str, ...] = param((), help="Tags.")
    kind: str | None = param(None, help="Kind; null = none.")


@attrs.frozen(kw_only=True)
class Sample:
    text: str = param(help="Some text.", min_length=1, max_length=10,
                      cli=CliParam(positional=True))
    count: int = param(3, help="How many.", ge=1, le=50, mcp=McpParam(bounds=Bounds(le=20)))
    ratio: float = param(0.5, help="A share.", ge=0, le=1)
    loud: bool = param(False, help="Shout.")
    names: tuple[str, ...] = param((), help="Names.", max_length=2)
    items: tuple[Mapping[str, Any], ...] | None = param(None, help="Items.", items=Item,
                                                        cli=None)
    hidden: str = param("x", help="Only over MCP.", cli=None)


def test_a_valid_call_gets_the_declared_defaults() -> None:
    got = parse_params(Sample, {"text": "hi"})
    assert got == Sample(text="hi") and got.count == 3 and got.names == ()


def test_every_problem_is_named_without_its_value() -> None:
    with pytest.raises(ParamsInvalid) as caught:
        parse_params(Sample, {"text": "a-secret-too-long", "count": 0, "ratio": "half",
                              "loud": 1, "names": ["a", "b", "c"], "colour": "red"},
                     operation="sample")
    error = caught.value
    assert error.code == 2
    assert error.fields == ("colour", "text", "count", "ratio", "loud", "names")
    assert "colour: unknown parameter" in error.message and "a-secret" not in error.message
    assert "count: must be at least 1" in error.message and "invalid arguments for sample" in error.message


def test_a_missing_required_parameter_is_named() -> None:
    with pytest.raises(ParamsInvalid, match="text: required"):
        parse_params(Sample, {})


def test_nested_items_are_checked_and_come_back_as_given_dicts() -> None:
    got = parse_params(Sample, {"text": "t", "items": [{"line": "a", "tags": ["x"]},
                                                       {"line": "b", "kind": None}]})
    assert got.items == ({"line": "a", "tags": ["x"]}, {"line": "b", "kind": None})
    with pytest.raises(ParamsInvalid) as caught:
        parse_params(Sample, {"text": "t", "items": [{"line": "a"}, {"titel": "typo"}]})
    assert caught.value.fields == ("items[1].titel", "items[1].line")


def test_each_surface_takes_its_own_bounds_and_parameters() -> None:
    assert parse_params(Sample, {"text": "t", "count": 50}, surface="cli").count == 50
    with pytest.raises(ParamsInvalid, match="count: must be at most 20"):
        parse_params(Sample, {"text": "t", "count": 50}, surface="mcp")
    with pytest.raises(ParamsInvalid, match="hidden: unknown parameter"):
        parse_params(Sample, {"text": "t", "hidden": "y"}, surface="cli")
    assert parse_params(Sample, {"text": "t", "hidden": "y"}, surface="cli",
                        prepared={"hidden"}).hidden == "y"


def test_the_input_schema_is_closed_and_shows_the_surface_bounds() -> None:
    op = Operation("sample", "A sample.", "A sample. Returns nothing.", Sample, _echo)
    schema = input_schema(op, "mcp")
    assert schema["additionalProperties"] is False and schema["required"] == ["text"]
    assert schema["properties"]["count"] == {"type": "integer", "minimum": 1, "maximum": 20,
                                             "description": "How many.", "default": 3}
    item = schema["properties"]["items"]["anyOf"][0]["items"]
    assert item["additionalProperties"] is False and set(item["properties"]) == {
        "line", "tags", "kind"}
    assert "hidden" not in input_schema(op, "cli")["properties"]
    jsonschema.Draft202012Validator.check_schema(schema)


def _echo(ctx: Any, p: Sample) -> Envelope[Any]:
    return Envelope(True, "echoed", p.text)


def test_a_real_result_matches_its_output_schema(tmp_path: Path) -> None:
    env = {"ECHO_TODAY": "2026-03-01", "HOME": str(tmp_path)}
    ctx = create_context(vault=str(tmp_path / "vault"), state_dir=str(tmp_path / "state"),
                         env=env)
    invoke(ctx, "init")
    invoke(ctx, "capture", {"title": "Ada Lovelace", "kind": "person", "body": "engine"})
    recalled = invoke(ctx, "recall", {"query": "engine"})
    op = OperationRegistry.from_host(ctx.host).get("recall")
    assert op is not None and recalled.data.primary
    jsonschema.validate(recalled.to_dict(), output_schema(op))
    with pytest.raises(EchoError, match="no operation 'nope'"):
        invoke(ctx, "nope")


class _Ops:
    def __init__(self, *ops: Operation[Any]) -> None:
        self.ops = ops

    @hookimpl
    def register_operations(self, register: Any) -> None:
        for op in self.ops:
            register(op.name, op)


def _op(name: str, **kw: Any) -> Operation[Any]:
    return Operation(name, "Do it.", "Do it. Returns it.", Sample, _echo, **kw)


def _problems(*plugins: tuple[str, object]) -> list[str]:
    host = create_host(env={}, strict=False, extra=plugins)
    return [p.message for p in registration_problems(host)]


def test_two_operations_claiming_one_cli_command_are_reported_naming_both_plugins() -> None:
    found = _problems(("one", _Ops(_op("alpha", cli=CliSurface(command=("recall",))))))
    assert any("CLI command 'recall'" in m and "'echo_core'" in m and "'one'" in m
               for m in found), found


def test_two_operations_claiming_one_tool_or_skill_are_reported() -> None:
    skill = SkillSpec("recall", "Recall.", "# Recall")
    found = _problems(("one", _Ops(_op("alpha", mcp=McpSurface(tool="echo_recall"))),),
                      ("two", _Ops(_op("beta", skill=skill))))
    assert any("MCP tool 'echo_recall'" in m and "'one'" in m for m in found), found
    assert any("skill 'recall'" in m and "'two'" in m for m in found), found


def test_a_malformed_declaration_is_reported_naming_its_plugin() -> None:
    found = _problems(("bad", _Ops(_op("Not_Kebab"))))
    assert any("kebab-case" in m and "'bad'" in m for m in found), found


def test_an_operation_name_two_plugins_register_is_reported_naming_both() -> None:
    found = _problems(("one", _Ops(_op("zeta"))), ("two", _Ops(_op("zeta"))))
    assert any("'zeta'" in m and "'one'" in m and "'two'" in m for m in found), found


def test_a_plugin_operation_becomes_a_cli_command_with_its_bounds() -> None:
    host = create_host(env={}, strict=True, extra=[("one", _Ops(_op("zeta")))])
    command = build_cli(host).commands["zeta"]
    count = next(p for p in command.params if p.name == "count")
    assert (count.type.min, count.type.max) == (1, 50)  # type: ignore[attr-defined]


def test_a_clash_leaves_the_later_operation_out_and_the_rest_working() -> None:
    host = create_host(env={}, strict=False, extra=[
        ("one", _Ops(_op("alpha", cli=CliSurface(command=("get",))), _op("beta"),
                     _op("Bad_Name")))])
    registry = OperationRegistry.from_host(host)
    assert registry.get("alpha") is None and registry.get("Bad_Name") is None
    assert registry.get("beta") is not None and registry.get("get") is not None
    cli = build_cli(host)
    assert {"get", "beta", "recall"} <= set(cli.commands)


def test_a_strict_host_refuses_a_clash() -> None:
    host = create_host(env={}, strict=True,
                       extra=[("one", _Ops(_op("alpha", cli=CliSurface(command=("get",)))))])
    with pytest.raises(EchoError, match="CLI command 'get'.*plugin 'one'"):
        OperationRegistry.from_host(host)


def test_access_rules_see_the_parameters() -> None:
    op = _op("alpha", access=lambda p: "write" if p.loud else "read")
    assert op.access_for(Sample(text="t")) == "read"
    assert op.access_for(Sample(text="t", loud=True)) == "write"
    assert SimpleNamespace(x=op.may_write).x is True


class _OpsThenBrokenCommands(_Ops):
    @hookimpl
    def register_commands(self, cli: Any) -> None:
        raise RuntimeError("broken commands")


def test_a_plugin_failing_while_the_cli_is_built_loses_its_operations_too() -> None:
    """Blocked means blocked: a plugin whose register_commands raises has no command and
    no MCP tool left from its operations, wherever the failure happens."""
    host = create_host(env={}, strict=False,
                       extra=[("half", _OpsThenBrokenCommands(_op("omega")))])
    cli = build_cli(host)
    assert "omega" not in cli.commands and "recall" in cli.commands
    assert OperationRegistry.from_host(host).get("omega") is None
    assert [r.name for r in host.failed()] == ["half"]
