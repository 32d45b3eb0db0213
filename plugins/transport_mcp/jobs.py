"""Scheduled jobs of a long-running ``serve``: named work run on an interval, each run
logged, each failure isolated.

``JobScheduler`` runs its ``Job``\\ s one after another in one daemon thread: a job is due
``first_after`` seconds after ``start()`` (default: its interval), then every ``every``
seconds after its previous run ended. Every run logs two lines on ``echo_memory.mcp``:
``job=<name> started`` and ``job=<name> ok ms=<n>: <outcome>`` (the job's one-line
return) or ``job=<name> failed ms=<n>: <Type>: <message>`` (with the traceback unless it
is an ``EchoError``, whose message says what to do). A job that raises is logged
and scheduled again as usual: it never stops the other jobs, the scheduler or the
server. ``run_due(now)`` runs what is due at ``now`` (a ``clock()`` reading) without the
thread, for tests; ``stop()`` ends the thread (a running job finishes first).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence

import attrs

from echo_core import EchoError
from plugins.transport_mcp.background import BackgroundThread

log = logging.getLogger("echo_memory.mcp")


@attrs.frozen
class Job:
    """``run()`` every ``every`` seconds (first ``first_after`` seconds after start; None:
    after ``every``). ``run`` returns a one-line outcome for the log."""

    name: str
    every: float
    run: Callable[[], str]
    first_after: float | None = None


@attrs.define
class JobRecord:
    """What happened to one job: runs, failures, the last outcome."""

    runs: int = 0
    failures: int = 0
    last: str = ""


class JobScheduler(BackgroundThread):
    """Runs ``jobs`` on their intervals (see module docstring)."""

    thread_name = "echo-serve-jobs"

    def __init__(self, jobs: Sequence[Job], *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__()
        self.jobs = tuple(jobs)
        self.records = {job.name: JobRecord() for job in self.jobs}
        self._clock = clock
        self._due: dict[str, float] = {}
        self.schedule_from(clock())

    def schedule_from(self, start: float) -> None:
        """Set every job's first run relative to ``start``."""
        self._due = {job.name: start + (job.every if job.first_after is None
                                        else job.first_after) for job in self.jobs}

    def start(self) -> None:
        """Start the scheduler thread (once; no thread when there is no job). ``stop()``
        ends it after the running job (if any)."""
        if self.jobs and not self.alive:
            self.schedule_from(self._clock())
            super().start()

    def next_due(self) -> float | None:
        """The clock reading when the next job is due (None: no job)."""
        return min(self._due.values(), default=None)

    def run_due(self, now: float) -> list[str]:
        """Run every job due at ``now`` (in declaration order); the names run."""
        ran: list[str] = []
        for job in self.jobs:
            if self.stopping.is_set():
                break
            if self._due[job.name] <= now:
                self.run_job(job)
                self._due[job.name] = self._clock() + job.every
                ran.append(job.name)
        return ran

    def run_job(self, job: Job) -> bool:
        """Run ``job`` once now, logged; True when it succeeded. Never raises."""
        record = self.records[job.name]
        record.runs += 1
        log.info("job=%s started", job.name)
        started = time.perf_counter()
        try:
            outcome = job.run()
        except Exception as exc:  # one job never stops the others
            record.failures += 1
            record.last = f"{type(exc).__name__}: {exc}"
            log.warning("job=%s failed ms=%.0f: %s", job.name, _ms(started), record.last,
                        exc_info=None if isinstance(exc, EchoError) else exc)
            return False
        record.last = outcome
        log.info("job=%s ok ms=%.0f: %s", job.name, _ms(started), outcome)
        return True

    def run(self) -> None:
        """The scheduler thread: sleep until the next job is due, run what is due."""
        while not self.stopping.is_set():
            due = self.next_due()
            if due is None:
                return
            if self.stopping.wait(max(0.0, due - self._clock())):
                return
            self.run_due(self._clock())


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
