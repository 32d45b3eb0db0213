"""Operations: one declaration per verb, every surface derived from it (DESIGN §2).

``Operation`` + a parameter class built with ``param()`` is all a verb needs; register it
with ``register_operations`` and it appears in the CLI, over MCP and (with a
``SkillSpec``) in the built Claude Code plugin. ``parse_params`` is the one validation of
arguments; ``input_schema`` / ``output_schema`` give the JSON Schemas.
"""

from echo_core.operations.declaration import (
    Access,
    CliArg,
    CliSurface,
    McpSurface,
    Operation,
    Profile,
    SkillSpec,
    lazy_type,
)
from echo_core.operations.lazy import OperationRef
from echo_core.operations.params import (
    Bounds,
    CliParam,
    FieldInfo,
    Kind,
    McpParam,
    ParamSpec,
    ParamType,
    fields_of,
    param,
)
from echo_core.operations.preflight import run_operation
from echo_core.operations.registry import OperationRegistry, declaration_problems
from echo_core.operations.validate import ParamsInvalid, parse_params

__all__ = [
    "Access", "Bounds", "CliArg", "CliParam", "CliSurface", "FieldInfo", "Kind", "McpParam",
    "McpSurface", "Operation", "OperationRef", "OperationRegistry", "ParamSpec", "ParamType", "ParamsInvalid",
    "Profile", "SkillSpec", "declaration_problems", "fields_of", "lazy_type", "param", "parse_params",
    "run_operation",
]
