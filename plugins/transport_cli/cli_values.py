"""From parsed command-line values to an operation's parameters (no click here: the
click commands of ``derived`` and the direct path of ``direct_ops`` both use it).

``option_name(info)`` is a parameter's long option; ``cli_arguments(op, values)`` turns
the values a command line gave (words joined, lists split, negated flags, CLI-only
extras handed to ``CliSurface.prepare``) into the mapping ``parse_params`` checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from echo_core import FieldInfo, Operation

__all__ = ["cli_arguments", "option_name"]


def option_name(info: FieldInfo) -> str:
    """The long option of a non-positional parameter (``--budget-chars``)."""
    cli = info.spec.cli
    if cli is not None and cli.flag:
        return cli.flag
    return "--" + info.name.replace("_", "-")


def _convert(info: FieldInfo, value: Any) -> Any:
    """A parsed value as the parameter takes it (joined words, split lists, negated
    flags)."""
    from echo_core import Kind

    cli = info.spec.cli
    assert cli is not None
    kind = info.type.kind
    if cli.variadic:
        return " ".join(value)
    if kind is Kind.BOOL:
        return not value if cli.negate else value
    if kind is Kind.LIST:
        parts = [p.strip() for v in value for p in (v.split(",") if cli.split_commas else [v])]
        return tuple(p for p in parts if p)
    return value


def cli_arguments(op: Operation[Any], values: Mapping[str, Any]) -> dict[str, Any]:
    """The parameter mapping for ``op`` from the parsed ``values`` (flags not given and
    empty lists are left to the declared defaults)."""
    from echo_core import Kind, fields_of

    fields = {f.name: f for f in fields_of(op.params) if f.spec.cli is not None}
    out: dict[str, Any] = {}
    for name, value in values.items():
        info = fields.get(name)
        if info is None:
            out[name] = value  # a CLI-only extra, for prepare()
            continue
        if value is None or (info.type.kind is Kind.LIST and not value):
            continue
        if info.type.kind is Kind.BOOL and not value:
            continue
        out[name] = _convert(info, value)
    if op.cli is not None and op.cli.prepare is not None:
        out = dict(op.cli.prepare(out))
    return out
