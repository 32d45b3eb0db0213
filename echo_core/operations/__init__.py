"""Operations: one declaration per verb, every surface derived from it (DESIGN §2).

``Operation`` + a parameter class built with ``param()`` is all a verb needs; register it
with ``register_operations`` and it appears in the CLI, over MCP and (with a
``SkillSpec``) in the built Claude Code plugin. ``parse_params`` is the one validation of
arguments; ``input_schema`` / ``output_schema`` give the JSON Schemas.

Names are loaded on first use (PEP 562), like ``echo_core``'s: a start-up imports only the
modules it touches (``--help`` needs no parameter classes nor validation).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # ``x as x``: explicit re-exports for type checkers
    from echo_core.operations.declaration import Access as Access
    from echo_core.operations.declaration import CliArg as CliArg
    from echo_core.operations.declaration import CliSurface as CliSurface
    from echo_core.operations.declaration import McpSurface as McpSurface
    from echo_core.operations.declaration import Operation as Operation
    from echo_core.operations.declaration import Profile as Profile
    from echo_core.operations.declaration import SkillSpec as SkillSpec
    from echo_core.operations.declaration import lazy_type as lazy_type
    from echo_core.operations.lazy import OperationRef as OperationRef
    from echo_core.operations.params import Bounds as Bounds
    from echo_core.operations.params import CliParam as CliParam
    from echo_core.operations.params import FieldInfo as FieldInfo
    from echo_core.operations.params import Kind as Kind
    from echo_core.operations.params import McpParam as McpParam
    from echo_core.operations.params import ParamSpec as ParamSpec
    from echo_core.operations.params import ParamType as ParamType
    from echo_core.operations.params import fields_of as fields_of
    from echo_core.operations.params import param as param
    from echo_core.operations.preflight import run_operation as run_operation
    from echo_core.operations.registry import OperationRegistry as OperationRegistry
    from echo_core.operations.registry import declaration_problems as declaration_problems
    from echo_core.operations.validate import ParamsInvalid as ParamsInvalid
    from echo_core.operations.validate import parse_params as parse_params

#: public name -> the module of this package that defines it.
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(("Access", "CliArg", "CliSurface", "McpSurface", "Operation", "Profile",
                     "SkillSpec", "lazy_type"), "echo_core.operations.declaration"),
    "OperationRef": "echo_core.operations.lazy",
    **dict.fromkeys(("Bounds", "CliParam", "FieldInfo", "Kind", "McpParam", "ParamSpec",
                     "ParamType", "fields_of", "param"), "echo_core.operations.params"),
    "run_operation": "echo_core.operations.preflight",
    **dict.fromkeys(("OperationRegistry", "declaration_problems"),
                    "echo_core.operations.registry"),
    **dict.fromkeys(("ParamsInvalid", "parse_params"), "echo_core.operations.validate"),
}

__all__ = [
    "Access", "Bounds", "CliArg", "CliParam", "CliSurface", "FieldInfo", "Kind", "McpParam",
    "McpSurface", "Operation", "OperationRef", "OperationRegistry", "ParamSpec", "ParamType",
    "ParamsInvalid", "Profile", "SkillSpec", "declaration_problems", "fields_of", "lazy_type",
    "param", "parse_params", "run_operation",
]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'echo_core.operations' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
