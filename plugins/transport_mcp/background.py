"""``BackgroundThread``: one named daemon thread with a stop event, for the server's
upkeep (the vault watcher, the job scheduler)."""

from __future__ import annotations

import abc
import threading


class BackgroundThread(abc.ABC):
    """Runs ``run()`` (a subclass's) in a daemon thread named ``thread_name``; ``run``
    returns once ``stopping`` is set. ``stop()`` sets it and waits for the thread."""

    thread_name = "echo-background"

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @abc.abstractmethod
    def run(self) -> None:
        """The thread's work (each subclass's own); return when ``stopping`` is set."""

    def start(self) -> None:
        """Start the thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name=self.thread_name,
                                            daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Set ``stopping`` and wait up to ``timeout`` seconds for the thread to end."""
        self.stopping.set()
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def alive(self) -> bool:
        """True while the thread runs."""
        return self._thread is not None and self._thread.is_alive()
