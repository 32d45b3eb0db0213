"""Running the server: ``serve_http`` (streamable HTTP via uvicorn) and ``serve_stdio``.

Both: configure logging on stderr (``echo_memory.mcp`` at INFO: one line per call; the
SDK and uvicorn at WARNING, no access log), build one ``ToolRunner`` whose worker
contexts share the CLI's plugin host, build the server, print the banner on stderr, warm
up (one context, the recall index rebuilt if absent — so parallel first calls do not all
rebuild it), start the upkeep (``upkeep``: the vault watcher and the scheduled jobs, in
this process also when ``--workers`` runs several), then serve until interrupted; the
upkeep's threads are stopped on the way out. Stdout is never written (stdio speaks MCP).

HTTP refuses a non-loopback bind unless ``ECHO_MCP_TOKEN`` is set (``EchoError`` 2): a
generated token file is fine on this machine, an exposed port needs a chosen secret.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import shlex
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from echo_core import (
    BackendUnavailable,
    EchoContext,
    EchoError,
    PluginHost,
    create_context,
    resolve_config,
    usage_error,
)
from plugins.transport_mcp.bearer import TOKEN_ENV, BearerToken, is_loopback, resolve_token
from plugins.transport_mcp.runner import DEFAULT_READ_WORKERS, DEFAULT_WRITE_WORKERS, ToolRunner
from plugins.transport_mcp.server import EchoMcpServer, build_server, profile_from_env
from plugins.transport_mcp.upkeep import (
    check_settings,
    start_upkeep,
    sweep_temp_files,
    sweeps_on_schedule,
)
from plugins.transport_mcp.vault_watch import LiveFlag

log = logging.getLogger("echo_memory.mcp")
READ_WORKERS_ENV = "ECHO_MCP_READ_WORKERS"
WRITE_WORKERS_ENV = "ECHO_MCP_WRITE_WORKERS"
READS_ENV = "ECHO_MCP_READS"
#: uvicorn settings of every HTTP server process: no access log (one line per call is
#: ours), the SDK's lifespan, and no X-Forwarded-* rewriting (nothing proxies to us).
#: ``uvicorn_options()`` adds the protocol.
UVICORN_OPTIONS: dict[str, Any] = {"log_level": "warning", "access_log": False,
                                   "lifespan": "on", "proxy_headers": False}


def uvicorn_options() -> dict[str, Any]:
    """``UVICORN_OPTIONS`` plus ``http``: uvicorn's HTTP protocol with a request-head
    timeout and a limit of open connections (``http_limits.guarded_protocol``: uvicorn
    bounds neither). Imported here, not at the top: stdio never loads uvicorn."""
    from plugins.transport_mcp.http_limits import guarded_protocol

    return {**UVICORN_OPTIONS, "http": guarded_protocol()}


def configure_logging(stream: TextIO | None = None) -> None:
    """Log lines on stderr: ours at INFO, everything else at WARNING."""
    logging.basicConfig(level=logging.WARNING, stream=stream or sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("echo_memory.mcp").setLevel(logging.INFO)


def make_runner(host: PluginHost, env: Mapping[str, str], vault: str | None,
                state_dir: str | None, live: LiveFlag | None = None) -> ToolRunner:
    """A runner whose worker contexts are built like the CLI's (flags > env > config);
    reads inline or in threads per ``reads_inline``. With ``live``, each context's
    ``live_watched`` is that flag (true while this process's vault watcher watches)."""

    def factory() -> EchoContext:
        ctx = create_context(vault=vault, state_dir=state_dir, env=env, host=host)
        if live is not None:
            setattr(ctx, "live_watched", live)  # noqa: B010 - read by getattr in the core
        return ctx

    config = resolve_config(vault=vault, state_dir=state_dir, env=env)
    return ToolRunner(factory, read_workers=_workers(env, READ_WORKERS_ENV, DEFAULT_READ_WORKERS),
                      write_workers=_workers(env, WRITE_WORKERS_ENV, DEFAULT_WRITE_WORKERS),
                      inline_reads=reads_inline(env, config.scheme))


def reads_inline(env: Mapping[str, str], scheme: str) -> bool:
    """``ECHO_MCP_READS``: ``inline`` (reads run on the event loop's thread), ``threads``
    (in the read pool), or unset: inline for a local folder vault (``file``), threads
    for any other backend (its reads wait on the network). Anything else is 2."""
    raw = env.get(READS_ENV, "").strip().lower()
    if not raw:
        return scheme == "file"
    if raw not in ("inline", "threads"):
        raise usage_error(f"{READS_ENV}={raw!r}: use inline or threads")
    return raw == "inline"


def _workers(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not 1 <= int(raw) <= 64:
        raise usage_error(f"{name}={raw!r}: give a whole number of threads from 1 to 64")
    return int(raw)


def warm_up(runner: ToolRunner, *, sweep: bool = False) -> tuple[str, bool]:
    """Open one context, remove the temp files of writers that are gone
    (``upkeep.sweep_temp_files``) and make sure the recall index exists: a one-line report
    (a vault that is down or not initialised is reported, not fatal) and whether it swept.

    With ``sweep`` (the server runs the fast sweep job) the fast sweep runs first: on a
    vault never swept it builds both indexes from one read, which ``ensure_index`` then
    finds ready (not built once here and again by the job's first run)."""
    from echo_core import ensure_index, fast_sweep

    def work(ctx: EchoContext) -> tuple[str, bool]:
        started = time.perf_counter()
        ctx.storage.ping()
        sweep_temp_files(ctx)  # leftovers of a server killed mid-write
        swept = ""
        if sweep:
            try:
                swept = fast_sweep(ctx).message
            except EchoError as exc:  # e.g. the vault lock held: the job tries again
                log.warning("warm-up: fast sweep not run (%s)", exc.message)
        rebuilt = ensure_index(ctx)
        took = time.perf_counter() - started
        ready = f"recall index rebuilt in {took:.1f} s" if rebuilt else "recall index ready"
        return (f"{swept}; {ready}" if swept else ready), bool(swept)

    try:
        return runner.read_sync(work)
    except (EchoError, BackendUnavailable, OSError) as exc:
        detail = exc.message if isinstance(exc, EchoError) else str(exc)
        return f"warm-up skipped: {detail}", False


def freeze_heap() -> None:
    """Collect, then move every object alive now (modules, SDK schemas, the warmed-up
    context) into the collector's permanent generation (``gc.freeze``): a full
    collection then scans only what was allocated since. Without it, each one walked
    the whole start-up heap and paused the server for ~100 ms (the p99 of a load test)."""
    gc.collect()
    gc.freeze()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def read_token_command(token: BearerToken) -> str:
    """The shell words that print the token: ``cat <file>``, or ``$ECHO_MCP_TOKEN``'s
    ``printenv`` (never the secret itself)."""
    if token.path is None:
        return f"printenv {TOKEN_ENV}"
    return f"cat {shlex.quote(str(token.path))}"


def claude_command(url: str, token: BearerToken) -> str:
    """The ``claude mcp add`` line. It never holds the secret (the banner lands in log
    files): the shell fills it in from the token file or ``$ECHO_MCP_TOKEN``."""
    secret = f"${TOKEN_ENV}" if token.path is None else f"$({read_token_command(token)})"
    return f'claude mcp add --transport http echo {url} --header "Authorization: Bearer {secret}"'


def _print(lines: list[str], payload: dict[str, Any], as_json: bool) -> None:
    text = json.dumps(payload, ensure_ascii=False) if as_json else "\n".join(lines)
    print(text, file=sys.stderr, flush=True)


def _server(plugin_host: PluginHost, env: Mapping[str, str], vault: str | None,
            state_dir: str | None, live: LiveFlag | None = None) -> EchoMcpServer:
    runner = make_runner(plugin_host, env, vault, state_dir, live)
    try:
        return build_server(plugin_host, runner, env=env)
    except BaseException:
        runner.close()
        raise


def serve_http(plugin_host: PluginHost, env: Mapping[str, str], *, host: str, port: int,
               vault: str | None = None, state_dir: str | None = None,
               as_json: bool = False, workers: int = 1) -> None:
    """Serve streamable HTTP on ``host:port`` until interrupted (see module docstring).

    ``workers`` > 1 runs that many server processes on the port (``processes``; each
    builds its own server in ``serve_worker``): CPython runs one thread of Python at a
    time, so processes are what use several cores. Writes from different processes
    serialise on the cross-process vault lock. A port already in use is 69."""
    if not is_loopback(host) and not env.get(TOKEN_ENV, "").strip():
        raise usage_error(
            f"refusing to listen on {host}: it is reachable from other machines. Set "
            f"{TOKEN_ENV} to a long random secret (e.g. `openssl rand -hex 32`) and pass it "
            "to clients, or bind to 127.0.0.1")
    profile_from_env(env)  # an unknown profile fails before anything starts
    check_settings(env)  # so do a bad ECHO_WATCH or job interval
    from plugins.transport_mcp.processes import check_port_free

    check_port_free(host, port)  # a busy port fails before the banner, not inside uvicorn
    configure_logging()
    config = resolve_config(vault=vault, state_dir=state_dir, env=env)
    token = resolve_token(env, config.state_base.value)
    live = LiveFlag()
    server = _server(plugin_host, env, vault, state_dir, live)
    base = f"http://{_url_host(host)}:{port}"
    url = f"{base}/mcp"
    command = claude_command(url, token)
    where = {"env": f"from {TOKEN_ENV}", "file": f"in {token.path}",
             "created": f"created now in {token.path} (mode 600)"}[token.origin]
    _print([f"echo-memory MCP server: {url} (health: {base}/health)",
            (f"tools: {len(server.tool_names)} ({profile_from_env(env)} profile); "
             f"{workers} process(es); bearer token {where}"),
            f"print the token with: {read_token_command(token)}",
            "register with Claude Code:", f"  {command}"],
           {"transport": "http", "url": url, "health": f"{base}/health",
            "tools": list(server.tool_names), "workers": workers,
            "token_origin": token.origin,
            "token_file": str(token.path) if token.path else None,
            "read_token": read_token_command(token), "claude_code": command},
           as_json)
    upkeep = None
    try:
        report, swept = warm_up(server.runner, sweep=sweeps_on_schedule(env))
        log.info("warm-up: %s", report)
        freeze_heap()
        upkeep = start_upkeep(plugin_host, env, server.runner.context, live, swept=swept)
        import uvicorn

        if workers == 1:
            from plugins.transport_mcp.http_app import build_http_app

            uvicorn.run(build_http_app(server, token.secret, host=host), host=host, port=port,
                        **uvicorn_options())
        else:
            from plugins.transport_mcp.processes import Supervisor

            spec = {"host": host, "port": port, "vault": vault, "state_dir": state_dir}
            Supervisor(serve_worker, spec, workers).run()
    finally:
        if upkeep is not None:
            upkeep.close()
        server.runner.close()


def serve_worker(spec: dict[str, Any], sock: Any, ready: Callable[[], None]) -> None:
    """One ``--workers`` process (``processes.WorkerTarget``): build the server from
    ``spec`` (host, vault, state_dir) and the inherited environment, warm up, call
    ``ready()``, and serve HTTP on the listening socket ``sock`` until SIGINT/SIGTERM."""
    import uvicorn

    from echo_core import create_host
    from plugins.transport_mcp.http_app import build_http_app

    configure_logging()
    config = resolve_config(vault=spec["vault"], state_dir=spec["state_dir"], env=os.environ)
    plugin_host = create_host(disabled=config.disabled, env=os.environ)
    token = resolve_token(os.environ, config.state_base.value)
    server = _server(plugin_host, os.environ, spec["vault"], spec["state_dir"])
    try:
        warm_up(server.runner)  # a worker: the main process runs the sweeps
        app = build_http_app(server, token.secret, host=spec["host"])
        freeze_heap()
        ready()
        uvicorn.Server(uvicorn.Config(app, **uvicorn_options())).run(sockets=[sock])
    finally:
        server.runner.close()


def serve_stdio(plugin_host: PluginHost, env: Mapping[str, str], *,
                vault: str | None = None, state_dir: str | None = None,
                as_json: bool = False) -> None:
    """Serve MCP over stdin/stdout until the client closes it (see module docstring)."""
    check_settings(env)
    configure_logging()
    live = LiveFlag()
    server = _server(plugin_host, env, vault, state_dir, live)
    flags = "".join(f" --{name} {value}" for name, value in
                    (("vault", vault), ("state-dir", state_dir)) if value)
    command = f"claude mcp add echo -- echo-memory serve --stdio{flags}"
    _print([(f"echo-memory MCP server on stdio: {len(server.tool_names)} tools "
             f"({profile_from_env(env)} profile)"), f"register with Claude Code: {command}"],
           {"transport": "stdio", "tools": list(server.tool_names), "claude_code": command},
           as_json)
    upkeep = None
    try:
        report, swept = warm_up(server.runner, sweep=sweeps_on_schedule(env))
        log.info("warm-up: %s", report)
        freeze_heap()
        upkeep = start_upkeep(plugin_host, env, server.runner.context, live, swept=swept)
        import anyio

        anyio.run(server.run_stdio_async)
    except KeyboardInterrupt:
        pass
    finally:
        if upkeep is not None:
            upkeep.close()
        server.runner.close()
