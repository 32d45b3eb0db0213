"""Shared pieces of the fault-injection benches (``crash_flush.py``, ``crash_capture_cli.py``).

- ``subjects`` / ``marker`` / ``body_for``: the titles captured and the unique marker word
  each capture's body carries (``crash_audit`` counts markers on disk).
- ``Sandbox``: one folder vault + state dir + home under a root, with an isolated
  environment (no user config, time pinned) and the CLI command line to drive it.
- ``Child``: one CLI process in its own session (process group), so a SIGKILL reaches it
  and anything it started, and nothing else; ``children()`` kills what is left on exit;
  ``run_killing`` starts commands together and kills some at set instants.
- ``parse_config`` / ``run_in_folder`` / ``print_*``: the command line of a bench.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from echo_core.context import EchoContext, create_context
from echo_core.ops.init import init_vault

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from plugins.cli_start import run; run()"]
TODAY = "2026-03-01"
NOW = "2026-03-01T09:30:00"

_WORDS = """
    Acorn Bluebell Clover Dahlia Elmwood Fernbrake Gorse Heather Iris Jonquil Kelp Laurel
    Maple Nettle Oakmoss Poppy Quince Rowan Sorrel Teasel Umbra Violet Wisteria Xylem Yew
    Zelkova Aster Bracken Cedar Daisy Elder Foxglove Ginkgo Hazel Ivy Jacaranda Knotweed
    Lupin Mimosa Nigella Oleander Peony Quillwort Rosemary Sage Tansy Ulex Verbena Woad
    Yucca Zinnia Alder Bramble Cinder Dune Ermine Furze Gentian Hyssop Indigo
""".split()
_KINDS = ("concept", "company", "person", "reference")


@attrs.frozen
class Subject:
    """One entity the bench captures again and again."""

    title: str
    kind: str


def subjects(count: int) -> list[Subject]:
    """``count`` (<= 30) two-word titles with disjoint name tokens, kinds mixed, so no
    title is a near-duplicate of another (the duplicate gate never fires between them)."""
    if not 1 <= count <= len(_WORDS) // 2:
        raise ValueError(f"titles: between 1 and {len(_WORDS) // 2}")
    return [Subject(f"{_WORDS[2 * i]} {_WORDS[2 * i + 1]}", _KINDS[i % len(_KINDS)])
            for i in range(count)]


MARKER = re.compile(r"\bzq-[a-z0-9]+-\d{5}-qz\b")  # every ``marker(...)``, nothing else


def marker(tag: str, n: int) -> str:
    """The unique word identifying capture ``n`` of stream ``tag`` (lowercase alnum)."""
    return f"zq-{tag}-{n:05d}-qz"


def body_for(mark: str) -> str:
    """A three-line body whose first line (the one an update bullets) carries ``mark``."""
    return f"observation {mark} recorded\nsecond line of the body\nthird line of the body"


class Sandbox:
    """A folder vault, its state dir and a home under ``root`` (created on ``init``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.vault = root / "vault"
        self.state_base = root / "state"
        self.home = root / "home"

    def env(self) -> dict[str, str]:
        """The ECHO_* / XDG environment of every process of this sandbox."""
        return {
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_STATE_HOME": str(self.home / ".local/state"),
            "ECHO_CONFIG": str(self.home / "no-config.toml"),
            "ECHO_TODAY": TODAY,
            "ECHO_NOW": NOW,
        }

    def child_env(self) -> dict[str, str]:
        """``os.environ`` without any ECHO_* of the caller, plus ``env()``."""
        base = {k: v for k, v in os.environ.items() if not k.startswith("ECHO_")}
        return {**base, **self.env(), "PYTHONPATH": str(REPO), "PYTHONWARNINGS": "ignore"}

    def cli(self, *args: str) -> list[str]:
        """The command line of ``echo-memory ARGS`` against this vault and state dir."""
        return [*CLI, *args, "--vault", str(self.vault), "--state-dir", str(self.state_base)]

    def ctx(self) -> EchoContext:
        """A fresh in-process context (as a new process would build it)."""
        return create_context(vault=str(self.vault), state_dir=str(self.state_base),
                              env=self.env())

    def init(self) -> Sandbox:
        """``echo-memory init`` in-process; returns self."""
        self.home.mkdir(parents=True, exist_ok=True)
        envelope = init_vault(self.ctx())
        if not envelope.ok:
            raise RuntimeError(f"init failed: {envelope.message}")
        return self

    def state_dir(self) -> Path:
        """The per-vault state dir (``<state_base>/vaults/<id>``) holding the outbox."""
        return Path(self.ctx().state_dir)


# --- processes ----------------------------------------------------------------------------


@attrs.frozen
class Finished:
    """How one child process ended."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    killed: bool  # the harness's SIGKILL reached it while it was still running
    hung: bool  # it outlived the timeout and was killed for that


class Child:
    """One CLI process, started in its own session so ``kill`` reaches only its group."""

    def __init__(self, cmd: Sequence[str], env: Mapping[str, str]) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            list(cmd), env=dict(env), cwd=REPO, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        self.killed = False

    def kill(self) -> bool:
        """SIGKILL the child's process group unless the child already exited, and reap it
        at once; True when the signal was sent. (An exited but unreaped child keeps its
        group id reserved, and ``poll`` reaps it, so the group killed is always this
        child's. Reaping at once matters: a zombie's pid still looks alive, so a vault
        lock it held would not be broken as stale while it lingers.)"""
        if self.proc.poll() is not None:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        return True

    def finish(self, timeout: float = 60.0) -> Finished:
        """Wait for the child (killing it after ``timeout`` s) and collect its output."""
        hung = False
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            hung = self.kill()
            out, err = self.proc.communicate()
        return Finished(self.proc.returncode, out.decode("utf-8", "replace"),
                        err.decode("utf-8", "replace"), time.monotonic() - self.started,
                        self.killed, hung)


@contextlib.contextmanager
def children() -> Iterator[list[Child]]:
    """A list to put started children in; any still running on exit are killed and reaped."""
    started: list[Child] = []
    try:
        yield started
    finally:
        for child in started:
            child.kill()
            child.proc.communicate()


def run_killing(cmds: Sequence[Sequence[str]], env: Mapping[str, str],
                kills: Mapping[int, float]) -> list[Finished]:
    """Start every command at once; SIGKILL command ``i`` ``kills[i]`` seconds after its
    start; return how each ended (in order)."""
    with children() as started:
        for cmd in cmds:
            started.append(Child(cmd, env))
        for i, delay in sorted(kills.items(), key=lambda kv: kv[1]):
            pause = started[i].started + delay - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            started[i].killed = started[i].kill()
        return [child.finish() for child in started]


def median_seconds(runs: Iterable[Finished]) -> float:
    """The median duration of ``runs`` (all of which must have exited 0)."""
    runs = list(runs)
    failed = [r for r in runs if r.returncode != 0]
    if failed:
        raise RuntimeError(f"calibration run failed (exit {failed[0].returncode}): "
                           f"{failed[0].stderr[-2000:]}")
    return statistics.median(r.seconds for r in runs)


def print_listing(label: str, items: Sequence[str], limit: int = 10) -> None:
    """Print up to ``limit`` of ``items`` under ``label`` (nothing when empty)."""
    if items:
        print(f"  {label} ({len(items)}):")
        for item in items[:limit]:
            print(f"    {item}")
        if len(items) > limit:
            print(f"    ... {len(items) - limit} more")


# --- the command line of a bench ----------------------------------------------------------

T = TypeVar("T")


def parse_config(config_type: type[T], doc: str | None) -> tuple[T, Path | None]:
    """An int option per field of the attrs class ``config_type`` (defaults from it), plus
    ``--keep DIR``; returns the config and the keep folder (None: a temp folder)."""
    parser = argparse.ArgumentParser(description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    defaults = config_type()
    for field in attrs.fields(config_type):  # type: ignore[arg-type]
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=int,
                            default=getattr(defaults, field.name))
    parser.add_argument("--keep", type=Path,
                        help="Run in this new folder and keep it (default: a temp folder).")
    opts = parser.parse_args()
    fields = {f.name: getattr(opts, f.name) for f in attrs.fields(config_type)}  # type: ignore[arg-type]
    return config_type(**fields), opts.keep


def run_in_folder(keep: Path | None, prefix: str, body: Callable[[Path], T]) -> T:
    """``body(root)`` in the new folder ``keep``, or in a temp folder removed afterwards."""
    if keep is not None:
        keep.mkdir(parents=True)
        return body(keep)
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        return body(Path(tmp))


def print_verdict(violations: Mapping[str, int], ok_message: str) -> None:
    """The last line of a bench's output."""
    print("VIOLATIONS: " + "; ".join(f"{k} {v}" for k, v in violations.items())
          if violations else f"OK: {ok_message}")
