"""``ToolRunner``: runs tool functions off the event loop, with the right context and lock.

Concurrency contract:

* Operations are synchronous. Writes run in a pool of worker threads (they may wait on
  locks and the disk, which must never stall the event loop). Reads run in their own
  pool, or with ``inline_reads`` on the event loop's thread itself: a read of a local
  vault is short and CPU-bound, and CPython runs one thread of Python at a time, so
  handing it to a thread only adds GIL hand-offs (measured: a recall cost 2.4x the CPU
  with four read threads beside the loop, 1.5x with one). A remote backend's reads wait
  on the network, so they belong in the pool. The pools' threads live as long as the
  runner, so their contexts do too.
* An ``EchoContext`` is not thread-safe: every thread that runs calls (the event loop's
  included) builds its own (lazily, in a ``threading.local``) from ``context_factory``;
  all of them share one ``PluginHost``.
* Reads take no in-process lock and run beside the writes (in parallel with each other
  in the pool; one after another when inline, where several cores come from serving
  with several processes). A write keyed by a note path takes
  that path's lock; other writes (entity-level: capture, link, triage, log_session,
  set_scope) take the one write lock. Waiting longer than ``lock_timeout`` is
  ``EchoError`` 75. The cross-process vault lock, taken by the operations themselves,
  still guards the vault and its index against other processes.
* Every call logs one line on ``echo_memory.mcp``: ``tool=<name> ms=<n> outcome=<label>``
  (never arguments, bodies or credentials).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from echo_core import (
    BackendUnavailable,
    EchoContext,
    EchoError,
    ExitCode,
    Operation,
    changes_made,
    run_operation,
    spelled_for,
)
from plugins.transport_mcp.access import AccessPlan, plan_for
from plugins.transport_mcp.results import (
    Outcome,
    echo_error_outcome,
    envelope_outcome,
    internal_outcome,
    sendable_outcome,
    unreachable_outcome,
)

log = logging.getLogger("echo_memory.mcp")
T = TypeVar("T")
DEFAULT_READ_WORKERS = 4  # CPU-bound ops share one GIL: more threads measured slower
DEFAULT_WRITE_WORKERS = 4
DEFAULT_LOCK_TIMEOUT = 60.0


class ToolRunner:
    """Executes tool calls (see module docstring). ``close()`` stops the worker pools."""

    def __init__(self, context_factory: Callable[[], EchoContext], *,
                 read_workers: int = DEFAULT_READ_WORKERS,
                 write_workers: int = DEFAULT_WRITE_WORKERS,
                 lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
                 inline_reads: bool = False) -> None:
        self._factory = context_factory
        self.inline_reads = inline_reads
        self._local = threading.local()
        self._reads = ThreadPoolExecutor(max(1, read_workers), thread_name_prefix="echo-mcp-read")
        self._writes = ThreadPoolExecutor(max(1, write_workers),
                                          thread_name_prefix="echo-mcp-write")
        self._write_lock = threading.Lock()
        self._path_locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()
        self._lock_timeout = lock_timeout
        self.contexts_built = 0

    # -- contexts and locks ----------------------------------------------------------

    def context(self) -> EchoContext:
        """This thread's own context (built on first use)."""
        ctx: EchoContext | None = getattr(self._local, "ctx", None)
        if ctx is None:
            ctx = self._factory()
            self._local.ctx = ctx
            with self._guard:
                self.contexts_built += 1
        return ctx

    def _path_lock(self, key: str) -> threading.Lock:
        with self._guard:
            lock = self._path_locks.get(key)
            if lock is None:
                lock = self._path_locks[key] = threading.Lock()
            return lock

    @contextlib.contextmanager
    def _hold(self, plan: AccessPlan) -> Iterator[None]:
        if not plan.is_write:
            yield
            return
        lock = self._write_lock if plan.lock_key is None else self._path_lock(plan.lock_key)
        if not lock.acquire(timeout=self._lock_timeout):
            what = f"note {plan.lock_key}" if plan.lock_key else "the vault"
            raise EchoError(f"another write to {what} has been running for over "
                            f"{self._lock_timeout:.0f} s in this server; retry shortly",
                            ExitCode.LOCK_HELD)
        try:
            yield
        finally:
            lock.release()

    # -- calls -----------------------------------------------------------------------

    async def call(self, op: Operation[Any], params: Any, *, start: float | None = None,
                   readable: bool = True) -> Outcome:
        """Run ``op`` with its validated ``params`` (in a worker thread, or inline for a
        read when ``inline_reads``) and convert its envelope (without the readable text
        when not ``readable``: for a caller that sends only the structured content).

        Never raises for an operation failure: ``EchoError``, ``BackendUnavailable`` and
        crashes become error outcomes (see ``results``), and so does a result that cannot
        be sent as UTF-8 JSON (``sendable_outcome``). Logs one line."""
        start = time.perf_counter() if start is None else start
        name = op.tool_name
        try:
            plan = plan_for(op, params)
        except EchoError as exc:
            outcome = echo_error_outcome(exc)
        else:
            if self.inline_reads and not plan.is_write:
                # Yield once first: requests that arrived earlier and are ready to run get
                # their turn before this one takes the loop (without it a new request could
                # overtake waiting ones, and p99 under load went from 48 to 70 ms).
                await asyncio.sleep(0)
                outcome = self._run(op, params, plan, readable)
            else:
                pool = self._writes if plan.is_write else self._reads
                loop = asyncio.get_running_loop()
                outcome = await loop.run_in_executor(pool, self._run, op, params, plan,
                                                     readable)
        outcome = sendable_outcome(outcome, name)
        self.log_call(name, start, outcome.label)
        return outcome

    def _run(self, op: Operation[Any], params: Any, plan: AccessPlan,
             readable: bool = True) -> Outcome:
        """Lock, call, convert (in a worker thread, conversion included, or inline)."""
        name = op.tool_name
        changes_before = changes_made()
        try:
            with spelled_for("mcp", op):  # messages name its arguments, not CLI flags
                with self._hold(plan):
                    value = run_operation(op, self.context(), params)
                return envelope_outcome(value, op.render, readable=readable)
        except BackendUnavailable as exc:  # before EchoError: it is one
            return unreachable_outcome(str(exc), write=plan.is_write,
                                       changed=changes_made() - changes_before)
        except EchoError as exc:
            return echo_error_outcome(exc)
        except Exception as exc:  # a crash becomes an error result, logged here
            log.error("tool=%s crashed: %s", name, type(exc).__name__, exc_info=exc)
            return internal_outcome(exc)

    async def read(self, function: Callable[[EchoContext], T]) -> T:
        """Run ``function(ctx)`` where reads run (for ``/health``)."""
        if self.inline_reads:
            return function(self.context())
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._reads, lambda: function(self.context()))

    def read_sync(self, function: Callable[[EchoContext], T]) -> T:
        """Blocking ``read`` for callers outside an event loop (start-up warm-up): inline
        reads run in the calling thread — the one that goes on to run the event loop, so
        its context is the one warmed up."""
        if self.inline_reads:
            return function(self.context())
        return self._reads.submit(lambda: function(self.context())).result()

    @staticmethod
    def log_call(name: str, start: float, label: str) -> None:
        """The one log line of a call: tool, milliseconds since ``start``, outcome."""
        log.info("tool=%s ms=%.1f outcome=%s", name, (time.perf_counter() - start) * 1000, label)

    def close(self) -> None:
        """Stop the worker pools (running calls finish; queued ones are dropped)."""
        self._reads.shutdown(wait=False, cancel_futures=True)
        self._writes.shutdown(wait=False, cancel_futures=True)
