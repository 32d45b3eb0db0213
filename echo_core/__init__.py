"""echo_core: the small core of echo-memory — models, hookspecs, plugin host, operations.

Public names for plugins: ``hookimpl``, ``EchoError`` and its subclasses (each carrying
its exit code; ``BackendUnavailable`` is an ``UnavailableError``), ``ExitCode``,
``Action``, the models and the protocols. ``echo_core`` never imports a plugin.
"""

from echo_core.actions import Action
from echo_core.errors import (
    DuplicateGateError,
    EchoError,
    ExitCode,
    LockHeldError,
    NotConfiguredError,
    NotFoundError,
    UnavailableError,
    UsageError,
)
from echo_core.hookspecs import hookimpl
from echo_core.protocols import BackendUnavailable, VaultMissing, VaultNotWritable

__all__ = ["Action", "BackendUnavailable", "DuplicateGateError", "EchoError", "ExitCode",
           "LockHeldError", "NotConfiguredError", "NotFoundError", "UnavailableError",
           "UsageError", "VaultMissing", "VaultNotWritable", "hookimpl"]
