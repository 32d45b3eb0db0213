"""Running a registered operation by name: how a plugin uses another plugin's (or the
core's) verb without importing it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from echo_core.errors import EchoError, ExitCode
from echo_core.models import Envelope
from echo_core.operations.preflight import run_operation
from echo_core.operations.registry import OperationRegistry
from echo_core.operations.validate import parse_params


def invoke(ctx: Any, name: str, arguments: Mapping[str, Any] | None = None) -> Envelope[Any]:
    """Run operation ``name`` of ``ctx.host``'s registry with ``arguments`` (checked by
    ``parse_params`` with the declared bounds and defaults) and return its envelope.

    Runs as every surface does (``preflight.run_operation``: the vault checked first).
    Errors: ``EchoError`` 1 when no operation has that name; ``ParamsInvalid`` (2) for
    bad arguments; whatever the operation raises."""
    op = OperationRegistry.from_host(ctx.host).get(name)
    if op is None:
        raise EchoError(f"no operation {name!r} is registered; is the plugin that adds it "
                        "installed and enabled? (see `echo-memory plugins`)", ExitCode.FAILURE)
    return run_operation(ctx=ctx, op=op,
                         params=parse_params(op.params, arguments or {}, operation=name))
