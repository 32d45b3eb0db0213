"""echo_core: the small core of echo-memory — models, hookspecs, plugin host, operations.

Public names for plugins: ``hookimpl``, ``EchoError``, ``ExitCode``, the models and the
protocols. ``echo_core`` never imports a plugin.
"""

from echo_core.errors import EchoError, ExitCode
from echo_core.hookspecs import hookimpl

__all__ = ["EchoError", "ExitCode", "hookimpl"]
