"""Helpers for tests of work run in a forked child (``echo_core.forked_work``).

Not a test module; imported by the tests that check a forked path gives the same answer.
"""

from __future__ import annotations

from types import ModuleType

import pytest

from echo_core import forked_work


def force_forking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let ``start_forked`` fork here: two cores, ``ECHO_FORK`` unset, and no other thread
    counted (a test before may have left one in the worker; the child only computes, so
    no lock another thread holds matters to it)."""
    monkeypatch.setattr(forked_work.threading, "active_count", lambda: 1)
    monkeypatch.setattr(forked_work.os, "cpu_count", lambda: 2)
    monkeypatch.delenv("ECHO_FORK", raising=False)


def spy_forks(monkeypatch: pytest.MonkeyPatch, module: ModuleType) -> list[int | None]:
    """The pid of each child ``module.start_forked`` starts from now on (None: it ran the
    task here instead), appended as they start."""
    children: list[int | None] = []
    real = module.start_forked

    def spying(task, env=None):  # type: ignore[no-untyped-def]
        work = real(task, env)
        children.append(work.pid)
        return work

    monkeypatch.setattr(module, "start_forked", spying)
    return children
