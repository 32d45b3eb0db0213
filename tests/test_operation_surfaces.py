"""Every surface exposes exactly what each operation declares: the CLI command and the MCP
tool of every registered operation have each declared parameter, with the declared
bounds (or the surface's declared override), and nothing else."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from echo_core.operations import (
    Bounds,
    FieldInfo,
    Kind,
    Operation,
    OperationRegistry,
    fields_of,
)
from echo_core.plugins import create_host
from echo_core.routing import load_manifest
from plugins.transport_cli.app import build_cli
from plugins.transport_cli.derived import LazyOperationCommand, option_name
from tests.mcp_kit import make_server, seeded_box, with_client

HOST = create_host(env={}, strict=True)
REGISTRY = OperationRegistry.from_host(HOST)
CLI_OPS = [op for op in REGISTRY if op.cli is not None]
CLI = build_cli(HOST)


def _cli_command(op: Operation[Any]) -> click.Command:
    """The command the real CLI runs for ``op`` (a lazy one built as when it runs)."""
    command: Any = CLI
    for word in op.command:
        command = command.commands[word]
    command = getattr(command, "default_command", None) or command  # `reflect` and its group
    return command.real() if isinstance(command, LazyOperationCommand) else command
MCP_OPS = REGISTRY.for_mcp()
COMMON = {"as_json"}


def _declared(info: FieldInfo, surface: str) -> Bounds:
    """The bounds the surface must show: the declaration's, tightened only by the
    surface's own declared override."""
    override = info.surface(surface)
    assert override is not None
    return info.spec.bounds.tightened(override.bounds)


@pytest.mark.parametrize("op", CLI_OPS, ids=lambda op: op.name)
def test_cli_command_has_exactly_the_declared_parameters_and_bounds(op: Operation[Any]) -> None:
    command = _cli_command(op)
    params = {p.name: p for p in command.params if p.name not in COMMON}
    params.pop("vault", None)
    params.pop("state_dir", None)
    declared = [f for f in fields_of(op.params)
                if f.spec.cli is not None and not f.spec.cli.from_prepare]
    extras = {a.name for a in op.cli.extra} if op.cli else set()
    assert set(params) == {f.name for f in declared} | extras
    for info in declared:
        param = params[info.name]
        cli = info.spec.cli
        assert cli is not None
        assert isinstance(param, click.Argument) == cli.positional, info.name
        bounds = _declared(info, "cli")
        if info.type.kind is Kind.INT:
            assert isinstance(param.type, click.IntRange), info.name
            assert (param.type.min, param.type.max) == (
                None if bounds.ge is None else int(bounds.ge),
                None if bounds.le is None else int(bounds.le)), info.name
        if isinstance(param, click.Option):
            assert option_name(info) in param.opts
            assert param.is_flag == (info.type.kind is Kind.BOOL), info.name
            assert param.multiple == (info.type.kind is Kind.LIST), info.name


@pytest.fixture(scope="module")
def listed_tools(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    box = seeded_box(Path(tmp_path_factory.mktemp("surfaces")))
    server = make_server(box)
    try:
        tools = with_client(server, lambda c: c.list_tools()).tools
    finally:
        server.runner.close()
    return {t.name: t for t in tools}


_SCHEMA_KEYS = {"ge": "minimum", "le": "maximum"}


def _schema_bounds(schema: dict[str, Any], kind: Kind) -> Bounds:
    for option in schema.get("anyOf", [schema]):
        if option.get("type") != "null":
            schema = option
    length = "Length" if kind is Kind.STR else "Items"
    return Bounds(schema.get("minimum"), schema.get("maximum"),
                  schema.get(f"min{length}"), schema.get(f"max{length}"))


@pytest.mark.parametrize("op", MCP_OPS, ids=lambda op: op.tool_name)
def test_mcp_tool_has_exactly_the_declared_parameters_and_bounds(
        op: Operation[Any], listed_tools: dict[str, Any]) -> None:
    tool = listed_tools[op.tool_name]
    schema = tool.input_schema
    declared = [f for f in fields_of(op.params) if f.spec.mcp is not None]
    assert set(schema["properties"]) == {f.name for f in declared}
    assert schema["additionalProperties"] is False
    required = {f.name for f in declared if f.required and f.default_for("mcp") is f.default}
    assert set(schema.get("required", [])) == required
    for info in declared:
        shown = _schema_bounds(schema["properties"][info.name], info.type.kind)
        assert shown == _declared(info, "mcp"), info.name
        assert schema["properties"][info.name]["description"] == info.spec.help_text
    assert tool.output_schema and tool.output_schema["type"] == "object"
    assert tool.description == op.tool_description


def test_the_drifted_limits_are_one_declaration_now() -> None:
    recall = REGISTRY.get("recall")
    assert recall is not None
    fields = {f.name: f for f in fields_of(recall.params)}
    # budget_chars: one range everywhere (it was 100.. on the CLI and 500.. over MCP)
    assert fields["budget_chars"].bounds_for("cli") == fields["budget_chars"].bounds_for("mcp")
    # limit: 1..50, with the tighter cap for models declared next to it (SPEC §6.2)
    assert fields["limit"].bounds_for("cli").le == 50
    assert fields["limit"].bounds_for("mcp").le == 20
    capture = REGISTRY.get("capture")
    assert capture is not None
    kind_help = {f.name: f for f in fields_of(capture.params)}["kind"].spec.help_text
    assert all(kind in kind_help for kind in load_manifest().kinds)  # from the manifest


def test_every_registered_operation_is_on_some_surface() -> None:
    for op in REGISTRY:
        assert op.cli is not None or op.mcp is not None, op.name


@pytest.mark.parametrize("op", list(REGISTRY), ids=lambda op: op.name)
def test_every_builtin_operation_declares_its_result(op: Operation[Any]) -> None:
    result = op.result_type()
    assert result is not None and result.__name__.endswith(("Result", "List")), op.name


def test_every_builtin_reference_matches_its_declaration() -> None:
    """The index ``echo_core.verbs.BUILTIN`` (what the CLI lists without importing a verb)
    says exactly what each declaration says."""
    from echo_core.verbs import BUILTIN

    assert [ref.mismatch() for ref in BUILTIN] == [None] * len(BUILTIN)


def test_running_one_verb_imports_only_its_declaration(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    # a cache folder of its own: the page is built by click here, not read back
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    code = ("import sys; from plugins.transport_cli.app import main; sys.argv=['x','--help']\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.startswith('echo_core.verbs.')), "
            "file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env)
    assert done.stderr.strip().splitlines()[-1] == "['echo_core.verbs.groups']"


def test_models_keep_their_caps_and_people_their_room() -> None:
    """The MCP caps of before (paths 500, body 100000, 200 proposals) hold over MCP; the
    CLI keeps what it took before (paths up to the core's 1024 bytes, big bodies)."""
    from echo_core import ParamsInvalid, parse_params
    from echo_core.verbs.capture_verbs import CaptureParams
    from echo_core.verbs.note_verbs import GetParams
    from echo_core.verbs.triage_verbs import TriageParams

    long_path = "notes/" + "a" * 600 + ".md"
    assert parse_params(GetParams, {"path": long_path}, surface="cli").path == long_path
    with pytest.raises(ParamsInvalid, match="path: must have at most 500"):
        parse_params(GetParams, {"path": long_path}, surface="mcp")
    body = "x" * 100_001
    assert parse_params(CaptureParams, {"title": "t", "body": body}, surface="cli").body == body
    with pytest.raises(ParamsInvalid, match="body: must have at most 100000"):
        parse_params(CaptureParams, {"title": "t", "body": body}, surface="mcp")
    many = [{"line": f"- {i}"} for i in range(201)]
    assert len(parse_params(TriageParams, {"proposals": many}, surface="cli",
                            prepared={"proposals"}).proposals or ()) == 201
    with pytest.raises(ParamsInvalid, match="proposals: must have at most 200"):
        parse_params(TriageParams, {"proposals": many}, surface="mcp")
