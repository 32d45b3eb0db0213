"""echo_transport_jsonl: every registered operation over line-delimited JSON.

``echo-memory jsonl`` answers each stdin line ``{"op": NAME, "args": {...}, "id": ANY}``
with one stdout line ``{"id", "ok", "result": Envelope.to_dict()}`` or ``{"id", "error":
{"code", "exit", "message"}}``; ``{"op": "_list"}`` lists the operations and their input
schemas (no operation's name starts with ``_``). Only reads run without ``--allow-writes``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from typing import Any

import click

import echo_core
from echo_core import EchoError, ExitCode, hookimpl

SURFACE = "core"  # the declaration's own bounds; every parameter (no CLI/MCP-only view)


def _error(rid: Any, exc: EchoError) -> dict[str, Any]:
    return {"id": rid, "error": {"code": exc.code_name, "exit": int(exc.code),
                                 "message": exc.message}}


def _listing(registry: Any) -> dict[str, Any]:
    return {"operations": [
        {"name": op.name, "summary": op.summary,
         "access": op.access if isinstance(op.access, str) else "write",  # write: may write
         "input_schema": echo_core.input_schema(op, SURFACE)} for op in registry]}


def answer(ctx: Any, line: str, *, allow_writes: bool = False) -> dict[str, Any]:
    """The answer to one request line (never raises for a bad request or a failed op)."""
    rid = None
    try:
        request = json.loads(line)
        if not isinstance(request, dict) or not isinstance(request.get("op"), str):
            raise echo_core.usage_error('a request is one JSON object per line: '
                                        '{"op": NAME, "args": {...}, "id": ...}')
        rid = request.get("id")
        registry = echo_core.OperationRegistry.from_host(ctx.host)
        if request["op"] == "_list":
            return {"id": rid, "ok": True, "result": _listing(registry)}
        op = registry.get(request["op"])
        if op is None:
            raise echo_core.not_found(f"no operation {request['op']!r}; send "
                                      '{"op": "_list"} to list them')
        args = request.get("args", {})
        if not isinstance(args, dict):
            raise echo_core.usage_error('"args" must be a JSON object of parameters')
        params = echo_core.parse_params(op.params, args, surface=SURFACE, operation=op.name)
        if op.access_for(params) != "read" and not allow_writes:
            raise echo_core.usage_error(f"{op.name} writes to the vault; start "
                                        "`echo-memory jsonl --allow-writes` to allow it")
        envelope = op.run(ctx, params)
    except json.JSONDecodeError as exc:
        return _error(rid, echo_core.usage_error(f"not JSON ({exc.msg}); send one object a line"))
    except EchoError as exc:
        return _error(rid, exc)
    except echo_core.BackendUnavailable as exc:
        return _error(rid, EchoError(f"vault unreachable: {exc}", ExitCode.UNAVAILABLE))
    except Exception as exc:  # noqa: BLE001 - a plugin bug answers its line; serving goes on
        return _error(rid, EchoError(f"internal error ({type(exc).__name__}); report it to "
                                     "the plugin's author (see `echo-memory plugins`)"))
    return {"id": rid, "ok": envelope.ok, "result": envelope.to_dict()}


def serve(ctx: Any, lines: Iterable[str], *, allow_writes: bool = False) -> Iterator[str]:
    """One JSON answer line for each non-blank request line, in order."""
    for line in lines:
        if line.strip():
            yield json.dumps(answer(ctx, line, allow_writes=allow_writes))


@click.command("jsonl")
@click.option("--allow-writes", is_flag=True, help="Run operations that write, too.")
@click.option("--vault", metavar="PATH|URL", help="The vault (default: as for every verb).")
@click.option("--state-dir", metavar="DIR", help="Per-machine state folder.")
@click.option("--json", "as_json", is_flag=True, help="Report start-up errors as JSON.")
def jsonl(allow_writes: bool, vault: str | None, state_dir: str | None, as_json: bool) -> None:
    """Serve every operation as line-delimited JSON on stdin/stdout.

    Send {"op": "_list"} for the operations and their input schemas."""
    host = getattr(click.get_current_context().obj, "host", None)
    ctx = echo_core.create_context(vault=vault, state_dir=state_dir, host=host)
    for out in serve(ctx, sys.stdin, allow_writes=allow_writes):
        click.echo(out)


@hookimpl
def register_commands(cli: Any) -> None:
    """Add ``echo-memory jsonl``."""
    cli.add_command(jsonl)
