"""Starting ``echo-memory serve`` for a bench: a free port on 127.0.0.1, the log in the
work folder, back once ``/health`` answers (and, with workers, once they are all up)."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["free_port", "start_serve"]


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_serve(cli: Sequence[str], cwd: Path, work: Path, vault: Path, state: Path,
                env: Mapping[str, str], *, workers: int = 1, timeout: float = 120.0,
                poll: float = 0.1) -> tuple[subprocess.Popen[bytes], str]:
    """``<cli> serve`` on a free port with ``env``; returns (process, base URL) once it
    answers, or exits the bench with the server's log when it dies or times out."""
    import httpx2

    port = free_port()
    log_path = work / "serve.log"
    log = log_path.open("ab")
    proc = subprocess.Popen([*cli, "serve", "--port", str(port), "--workers", str(workers),
                             "--vault", str(vault), "--state-dir", str(state)], env=dict(env),
                            stdout=log, stderr=subprocess.STDOUT, cwd=cwd)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"serve exited {proc.returncode}: {log_path.read_text()}")
        try:
            ready = workers == 1 or "worker processes ready" in log_path.read_text()
            if ready and httpx2.get(f"{base}/health", timeout=1).status_code == 200:
                return proc, base
        except httpx2.TransportError:
            pass
        time.sleep(poll)
    proc.kill()
    raise SystemExit(f"serve did not come up in {timeout:.0f} s")
