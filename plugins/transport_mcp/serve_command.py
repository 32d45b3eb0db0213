"""``echo-memory serve``: the MCP server command. Imports nothing heavy until it runs."""

from __future__ import annotations

import os

import click

from echo_core import CliState, EchoError, ExitCode


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, metavar="ADDRESS",
              help="Address to listen on. Anything but loopback needs ECHO_MCP_TOKEN set.")
@click.option("--port", default=8765, show_default=True, type=click.IntRange(1, 65535),
              help="TCP port for streamable HTTP.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 32),
              help="HTTP server processes sharing the port (one per core serves the most "
                   "calls; a process that dies is restarted).")
@click.option("--stdio", is_flag=True, help="Speak MCP over stdin/stdout instead of HTTP.")
def serve(host: str, port: int, workers: int, stdio: bool) -> None:
    """Serve memory to MCP clients (Claude Code, ...): streamable HTTP on /mcp, or stdio.

    HTTP is stateless with JSON responses (POST only) and needs 'Authorization: Bearer
    <token>': the token is $ECHO_MCP_TOKEN, else the mcp-token file in the state dir
    (created with mode 600 on first run; never printed: the banner names the file, read
    it with `cat`). GET /health needs no token. ECHO_MCP_TOOLS=core serves only load,
    recall, capture, triage_inbox, log_session and health. The start-up banner (stderr;
    one JSON object with --json) says how to register the server with Claude Code. A
    busy port exits 69.

    Reads of a folder vault run on the event loop (ECHO_MCP_READS=threads moves them to
    a pool of ECHO_MCP_READ_WORKERS threads, the default for remote backends); writes run
    in ECHO_MCP_WRITE_WORKERS threads (both default 4).

    A folder vault is watched: a note edited, added or deleted by hand (Obsidian, git,
    an editor) reaches recall and resolve within about a second. ECHO_WATCH=auto
    (default: file system events), poll (check every 0.3 s: network drives, containers
    without inotify) or off. A fast sweep runs at start and every
    ECHO_SERVE_SWEEP_MINUTES (default 60; 0: never), a decay pass (once a plugin adds
    one) every ECHO_SERVE_DECAY_HOURS (default 24); each job run is logged.

    \b
    Examples:
      echo-memory serve                      http://127.0.0.1:8765/mcp
      echo-memory serve --workers 2          two processes: both cores
      echo-memory serve --stdio              one client on stdin/stdout
      claude mcp add echo -- echo-memory serve --stdio
    """
    try:
        from plugins.transport_mcp.serving import serve_http, serve_stdio
    except ModuleNotFoundError as missing:
        raise _without_the_extra(missing) from None

    state: CliState = click.get_current_context().obj
    as_json = state.as_json

    if stdio:
        serve_stdio(state.host, os.environ, vault=state.vault, state_dir=state.state_dir,
                    as_json=as_json)
    else:
        serve_http(state.host, os.environ, host=host, port=port, vault=state.vault,
                   state_dir=state.state_dir, as_json=as_json, workers=workers)


def _without_the_extra(missing: ModuleNotFoundError) -> BaseException:
    """What to raise when importing the server found a module absent: exit 78 naming the
    ``mcp`` extra when the module is a third-party one (the SDK and the server's packages
    are that extra), else the error itself (a module of ours missing is a broken install,
    not a missing extra)."""
    top = (missing.name or "").split(".", 1)[0]
    if not top or top in ("plugins", "echo_core"):
        return missing
    return EchoError(f"the MCP server needs the MCP SDK and its server packages (no module "
                     f"named {top!r}): pip install 'echo-memory[mcp]'", ExitCode.NOT_CONFIGURED)
