"""transport_cli's part of the ``claude-code`` build target: the skills, derived from the
operations.

Every ``SkillSpec`` an operation declares (``Operation.skill``) becomes
``skills/<name>/SKILL.md``: frontmatter ``name``, ``description`` (written for the
model: what and when), ``argument-hint`` where the skill takes arguments,
``allowed-tools`` (``Bash(echo-memory:*)``: only this CLI) and
``disable-model-invocation: true`` for the maintenance skills the user must start; the
body is the declaration's guide followed by the command's usage, generated from its
parameters, so a skill never names an option that does not exist. A third party's
operation with a skill appears in the built plugin like a built-in one. Values are
written as JSON strings, which YAML reads unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

from echo_core import FieldInfo, Kind, Operation, OperationRegistry, SkillSpec, fields_of
from plugins.transport_cli.derived import option_name

ALLOWED_TOOLS = "Bash(echo-memory:*)"


def _positional(info: FieldInfo) -> str:
    cli = info.spec.cli
    assert cli is not None
    name = cli.metavar or info.name.upper()
    name = f"{name}..." if cli.variadic else name
    return name if info.default_for("cli") is attrs.NOTHING else f"[{name}]"


def usage_lines(op: Operation[Any]) -> list[str]:
    """``echo-memory <words> ARGS [options]`` and one line per option, from ``op``."""
    assert op.cli is not None
    fields = [f for f in fields_of(op.params)
              if f.spec.cli is not None and not f.spec.cli.from_prepare]
    args = [_positional(f) for f in fields if f.spec.cli and f.spec.cli.positional]
    args += [a.metavar or a.name.upper() for a in op.cli.extra if not a.flag]
    lines = [f"echo-memory {' '.join((*op.command, *args))} [options]"]
    for info in fields:
        cli = info.spec.cli
        if cli is None or cli.positional:
            continue
        value = "" if info.type.kind is Kind.BOOL else f" {cli.metavar or 'VALUE'}"
        text = cli.help or info.spec.help_text
        lines.append(f"  {option_name(info)}{value}: {text}")
    lines.append("  --json: print the result as JSON")
    return lines


def render_skill(op: Operation[Any], skill: SkillSpec) -> str:
    """The SKILL.md text for ``skill`` of ``op`` (LF, ends with a newline)."""
    fields: list[tuple[str, Any]] = [("name", skill.name), ("description", skill.description)]
    if skill.argument_hint:
        fields.append(("argument-hint", skill.argument_hint))
    fields.append(("allowed-tools", ALLOWED_TOOLS))
    if not skill.model_invocable:
        fields.append(("disable-model-invocation", True))
    head = "\n".join(f"{key}: {json.dumps(value, ensure_ascii=False)}" for key, value in fields)
    body = skill.body.strip()
    if op.cli is not None:
        usage = "\n".join(usage_lines(op))
        body += f"\n\n## Usage of `echo-memory {' '.join(op.command)}`\n\n```text\n{usage}\n```"
    return f"---\n{head}\n---\n\n{body}\n"


class CliSkillsPart:
    """``BuildTarget`` registered as ``claude-code:transport_cli``: writes every skill the
    registered operations declare to ``skills/<name>/SKILL.md`` and returns those
    relative paths. Reads the operations from ``context.host``; deterministic."""

    def contribute(self, out_dir: str, context: Any) -> list[str]:
        registry = OperationRegistry.from_host(context.host)
        written = []
        for op, skill in registry.skills():
            rel = f"skills/{skill.name}/SKILL.md"
            path = Path(out_dir) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(render_skill(op, skill), encoding="utf-8", newline="\n")
            written.append(rel)
        return written
