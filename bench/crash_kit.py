"""Shared pieces of the fault-injection benches (``crash_flush.py``, ``crash_capture_cli.py``).

- ``Sandbox``: one folder vault + state dir + home under a root, with an isolated
  environment (no user config, time pinned) and the CLI command line to drive it.
- ``Child``: one CLI process in its own session (process group), so a SIGKILL reaches it
  and anything it started, and nothing else; ``children()`` kills what is left on exit.
- ``audit``: what is on disk afterwards — torn notes, how often each unique body marker
  landed, titles with more than one entity note, index/notes mismatches, temp files and
  held locks left behind, records still pending in the outbox.

Bodies carry a unique *marker* word (``marker(tag, n)``); ``audit`` counts markers across
every ``.md`` file of the vault, so "landed once / doubled / missing" needs no knowledge of
where a capture should have gone.
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
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TypeVar

import attrs

from echo_core.context import EchoContext, create_context
from echo_core.entities import EntityStore
from echo_core.frontmatter import parse_frontmatter
from echo_core.ops.init import init_vault
from echo_core.routing import load_manifest
from plugins.queue_outbox.outbox import OutboxQueue

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-c", "from plugins.transport_cli.app import main; main()"]
TODAY = "2026-03-01"
NOW = "2026-03-01T09:30:00"

#: Notes ``init`` writes into kind folders that are not captured entities.
INIT_NOTES = frozenset({"_agent/memory/semantic/operator-preferences.md"})

_WORDS = [
    "Nimbus", "Harbor", "Quartz", "Falcon", "Juniper", "Cobalt", "Meridian", "Tundra",
    "Saffron", "Beacon", "Granite", "Willow", "Orchid", "Lantern", "Zephyr", "Ember",
    "Cascade", "Thimble", "Marble", "Pioneer", "Sierra", "Velvet", "Copper", "Aurora",
    "Glacier", "Mosaic", "Crimson", "Walnut", "Horizon", "Prairie", "Summit", "Indigo",
    "Basalt", "Canyon", "Delta", "Fjord", "Galaxy", "Hollow", "Ivory", "Jasper", "Kestrel",
    "Lagoon", "Magnet", "Nectar", "Obsidian", "Pepper", "Quiver", "Raven", "Sable", "Tangerine",
    "Umber", "Vortex", "Wren", "Yarrow", "Zinnia", "Alder", "Bramble", "Cinder", "Dune", "Ermine",
]
_KINDS = ("concept", "company", "person", "reference")
_MARKER = re.compile(r"\bzq-[a-z0-9]+-\d{5}-qz\b")


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


# --- the audit ----------------------------------------------------------------------------


@attrs.frozen
class VaultAudit:
    """What a vault and its state dir hold after a fault-injection run."""

    markers: Counter[str]  # marker -> copies found across every .md of the vault
    torn: tuple[str, ...]  # notes whose frontmatter does not parse or that lack a title
    notes_by_title: dict[str, tuple[str, ...]]  # entity notes per "# Title"
    index_problems: tuple[str, ...]
    leftovers: tuple[str, ...]  # temp files and held locks (vault and state dir)
    hidden_files: tuple[str, ...]  # every dot-file there, leftover or by design
    pending: tuple[str, ...]  # outbox records not done: "id state detail"

    def copies(self, marks: Iterable[str]) -> Counter[int]:
        """How many of ``marks`` landed 0, 1, 2, ... times."""
        return Counter(self.markers.get(m, 0) for m in marks)

    def missing(self, marks: Iterable[str]) -> list[str]:
        return [m for m in marks if self.markers.get(m, 0) == 0]

    def doubled(self) -> list[str]:
        """Every marker (queued, acknowledged or not) found more than once."""
        return sorted(m for m, n in self.markers.items() if n > 1)

    def duplicate_notes(self) -> dict[str, tuple[str, ...]]:
        """Titles with more than one entity note."""
        return {t: p for t, p in self.notes_by_title.items() if len(p) > 1}

    def extra_notes(self) -> int:
        return sum(len(p) - 1 for p in self.duplicate_notes().values())


def entity_note_paths(vault: Path) -> list[str]:
    """Vault paths of every note in a kind folder, except READMEs and ``init``'s own."""
    found = []
    for folder in load_manifest().kind_folders():
        for path in sorted((vault / folder).glob("*.md")):
            rel = path.relative_to(vault).as_posix()
            if path.name != "README.md" and rel not in INIT_NOTES:
                found.append(rel)
    return found


def _title_of(body: str) -> str | None:
    match = re.search(r"^# (.+?)\s*$", body, re.MULTILINE)
    return match.group(1) if match else None


def _read_notes(vault: Path) -> tuple[Counter[str], list[str], dict[str, str | None]]:
    """Marker counts over every note, torn notes, and each entity note's title."""
    entity_paths = set(entity_note_paths(vault))
    markers: Counter[str] = Counter()
    torn: list[str] = []
    titles: dict[str, str | None] = {}
    for path in sorted(vault.rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        markers.update(_MARKER.findall(text))
        _, body, error = parse_frontmatter(text)
        if rel in entity_paths:
            titles[rel] = _title_of(body)
            if titles[rel] is None:
                error = error or "no '# Title' line"
        if error is not None:
            torn.append(f"{rel}: {error}")
    return markers, torn, titles


def _index_problems(sandbox: Sandbox, notes: Iterable[str]) -> list[str]:
    try:
        index = EntityStore(sandbox.ctx().storage).load()
    except Exception as error:  # noqa: BLE001 - a corrupt snapshot is a finding
        return [f"entity index does not load: {type(error).__name__}: {error}"]
    problems = []
    entries: dict[str, list[str]] = defaultdict(list)
    for slug, entity in index.entities.items():
        if entity.path not in INIT_NOTES:
            entries[entity.path].append(slug)
    for path, slugs in sorted(entries.items()):
        if not (sandbox.vault / path).is_file():
            problems.append(f"index entry {slugs[0]} -> {path}: no such note")
        if len(slugs) > 1:
            problems.append(f"{path}: {len(slugs)} index entries ({', '.join(slugs)})")
    problems += [f"{path}: note not in the entity index" for path in notes if path not in entries]
    return problems


def _files(sandbox: Sandbox) -> list[Path]:
    """Every file under the vault and the state dir."""
    tops = [t for t in (sandbox.vault, sandbox.state_base) if t.is_dir()]
    return sorted(p for top in tops for p in top.rglob("*") if p.is_file())


def _leftovers(sandbox: Sandbox, files: Iterable[Path]) -> list[str]:
    """Temp files among ``files``, and a vault lock still held (nobody is running)."""
    found = [p.relative_to(sandbox.root).as_posix() for p in files
             if p.name.endswith(".tmp") or ".tmp." in p.name]
    if (sandbox.vault / "_agent/.lock").exists():
        found.append("vault/_agent/.lock (held by nobody)")
    return found


def _pending(sandbox: Sandbox) -> list[str]:
    return [f"{r['id']} {r['state']} {r['detail']}".strip()
            for r in OutboxQueue(str(sandbox.state_dir())).pending()]


def audit(sandbox: Sandbox) -> VaultAudit:
    """Read what ``sandbox`` holds now (no process may be writing)."""
    markers, torn, titles = _read_notes(sandbox.vault)
    files = _files(sandbox)
    by_title: dict[str, list[str]] = defaultdict(list)
    for path, title in titles.items():
        by_title[title or f"(untitled {path})"].append(path)
    return VaultAudit(
        markers=markers, torn=tuple(torn),
        notes_by_title={t: tuple(p) for t, p in sorted(by_title.items())},
        index_problems=tuple(_index_problems(sandbox, titles)),
        leftovers=tuple(_leftovers(sandbox, files)),
        hidden_files=tuple(p.relative_to(sandbox.root).as_posix() for p in files
                           if p.name.startswith(".")),
        pending=tuple(_pending(sandbox)))


def merge_audits(audits: Mapping[str, VaultAudit]) -> VaultAudit:
    """One audit of several vaults (keyed by name): marker counts summed, every other
    finding prefixed with its vault's name."""
    def each(field: str) -> tuple[str, ...]:
        return tuple(f"{name}: {item}" for name, a in audits.items() for item in getattr(a, field))

    markers: Counter[str] = Counter()
    for found in audits.values():
        markers.update(found.markers)
    return VaultAudit(
        markers=markers, torn=each("torn"),
        notes_by_title={f"{name}: {t}": p for name, a in audits.items()
                        for t, p in a.notes_by_title.items()},
        index_problems=each("index_problems"), leftovers=each("leftovers"),
        hidden_files=each("hidden_files"), pending=each("pending"))


def describe_copies(copies: Counter[int]) -> str:
    """``{0: 2, 1: 90, 2: 8}`` -> ``'90 once, 8 doubled (max 2 copies), 2 missing'``."""
    doubled = sum(n for k, n in copies.items() if k > 1)
    top = max(copies, default=0)
    extra = f" (max {top} copies)" if doubled else ""
    return f"{copies.get(1, 0)} once, {doubled} doubled{extra}, {copies.get(0, 0)} missing"


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
