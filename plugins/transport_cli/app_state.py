"""``AppState``: the CLI's process-wide state — global flags, the plugin host and a lazily
built ``EchoContext``. It sits in ``click.Context.obj`` and is an ``echo_core.CliState``:
a raw command another plugin adds reads ``click.get_current_context().obj`` through that
protocol, and a command run without click (``run_direct``) is given it directly. This
module imports no click: the direct path must not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from echo_core import EchoContext, Operation, PluginHost

__all__ = ["AppState"]


class AppState:
    """Process-wide CLI state: flags and the plugin host; the context is built on demand."""

    def __init__(self, host: PluginHost, vault: str | None = None, state_dir: str | None = None) -> None:
        self.host = host
        self.vault = vault
        self.state_dir = state_dir
        self.as_json = False
        #: The command words of the operation running ("" before one starts) and
        #: whether that call writes: what an interrupt reports (``interrupt``).
        self.running = ""
        self.writes = False
        self._context: EchoContext | None = None

    def started(self, op: Operation[Any], params: Any) -> None:
        """Record that ``op`` runs now with the checked ``params`` (``running``,
        ``writes``: anything but a ``read`` access for these parameters)."""
        self.running = " ".join(op.command)
        self.writes = op.access_for(params) != "read"

    def context(self, *, tolerant: bool = False) -> EchoContext:
        """The ``EchoContext`` for this invocation (built once). ``tolerant``: a broken
        config file gives a context on defaults that says so (``config.problem``), for a
        verb that reports it (doctor), instead of exit 78."""
        if self._context is None:
            from echo_core import create_context

            self._context = create_context(vault=self.vault, state_dir=self.state_dir,
                                           host=self.host, tolerate_config_problems=tolerant)
        return self._context
