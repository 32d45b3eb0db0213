"""How operation names are spelled: kebab-case names and CLI words, ``echo_`` +
snake_case MCP tool names. A module of its own so the registry checks an
``OperationRef`` without importing the declaration classes."""

from __future__ import annotations

import re

#: An operation's name and each of its CLI words.
NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
#: An MCP tool name.
TOOL_NAME = re.compile(r"^echo_[a-z0-9]+(?:_[a-z0-9]+)*$")
