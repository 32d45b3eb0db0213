"""Fuzz every public parse and edit function of frontmatter.py and notes.py (issue 11).

    python bench/fuzz_parsers.py --n 1000000 --seed 1 --jobs 2

Input ``i`` of seed ``s`` is drawn from ``random.Random(f"{s}:{i}")`` (bench/parser_inputs.py),
so a failure is replayed alone with ``--seed s --start i --n 1``, and a long run can be
split into ranges (``--start``) that together cover the same inputs. Prints calls per function,
every exception type seen, the slowest call of each function, and the first failures;
exits 1 on any undocumented exception (anything but ``EchoError`` from an editor), any
property failure, or any call slower than 1 s.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import functools
import json
import multiprocessing
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import parser_inputs as gen
from bench.parser_inputs import Chooser
from echo_core import frontmatter as fm
from echo_core import notes
from echo_core.errors import EchoError
from echo_core.frontmatter_fast import fast_load
from echo_core.yaml_bounded import load_block, size_refusal

SLOW_SECONDS = 1.0
#: Functions documented as never raising: any exception from them is a failure.
NEVER_RAISE = {"parse_frontmatter", "split_frontmatter", "parse_note", "line_ending",
               "headings", "wikilinks", "truncate", "load_block"}
_HEADING_LIKE = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")
_LINE_RE = re.compile(r"[^\n]*\n|[^\n]+\Z")


@attrs.define
class Tally:
    """What a run saw: calls and exceptions per function, slowest calls, failures."""

    calls: collections.Counter[str] = attrs.Factory(collections.Counter)
    raised: collections.Counter[str] = attrs.Factory(collections.Counter)
    slowest: dict[str, float] = attrs.Factory(dict)
    failures: list[str] = attrs.Factory(list)
    failure_count: int = 0
    inputs: int = 0
    where: str = ""

    def fail(self, message: str) -> None:
        self.failure_count += 1
        if len(self.failures) < 20:
            self.failures.append(f"{self.where}: {message}"[:600])

    def merge(self, other: Tally) -> None:
        self.calls.update(other.calls)
        self.raised.update(other.raised)
        for name, seconds in other.slowest.items():
            self.slowest[name] = max(seconds, self.slowest.get(name, 0.0))
        self.failures += other.failures[: max(0, 20 - len(self.failures))]
        self.failure_count += other.failure_count
        self.inputs += other.inputs


_FAILED = object()
#: Property checks re-read the same texts; the function under test is always called afresh.
_parsed = functools.lru_cache(maxsize=64)(fm.parse_frontmatter)


def call(tally: Tally, name: str, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)``, counted and timed; an exception is tallied and gives ``_FAILED``."""
    tally.calls[name] += 1
    started = time.perf_counter()
    try:
        return fn(*args)
    except EchoError as exc:
        tally.raised[f"{name}: EchoError({exc.code.name})"] += 1
        if name in NEVER_RAISE:
            tally.fail(f"{name} raised {exc!r}")
        return _FAILED
    except Exception as exc:  # noqa: BLE001 - the point is to see every kind
        tally.raised[f"{name}: {type(exc).__name__}"] += 1
        tally.fail(f"{name}({', '.join(_short(a) for a in args)}) raised {_short(exc)}")
        return _FAILED
    finally:
        seconds = time.perf_counter() - started
        tally.slowest[name] = max(seconds, tally.slowest.get(name, 0.0))
        if seconds > SLOW_SECONDS:
            tally.fail(f"{name} took {seconds:.2f}s")


def _short(value: Any) -> str:
    """A short repr that cannot fail (an int too long to print has no repr)."""
    try:
        return repr(value)[:80]
    except ValueError:
        return f"<{type(value).__name__} too long to print>"


def canon(value: Any) -> str:
    def plain(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        return v.isoformat() if isinstance(v, (dt.date, dt.datetime)) else v

    return json.dumps(plain(value), sort_keys=True, default=repr)


def _lines(text: str) -> list[str]:
    return _LINE_RE.findall(text)


def _changed_lines(before: str, after: str) -> tuple[list[str], list[str]]:
    """Lines of ``before`` replaced and lines of ``after`` added (one contiguous change)."""
    old, new = _lines(before), _lines(after)
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    q = 0
    while q < min(len(old), len(new)) - p and old[-1 - q] == new[-1 - q]:
        q += 1
    return old[p : len(old) - q], new[p : len(new) - q]


def _dropped_runs(old: list[str], new: list[str]) -> list[list[str]] | None:
    """The runs of ``old`` left out of ``new``, or None if ``new`` is not a subsequence."""
    runs: list[list[str]] = []
    j, dropping = 0, False
    for line in old:
        if j < len(new) and new[j] == line:
            j, dropping = j + 1, False
        elif dropping:
            runs[-1].append(line)
        else:
            runs.append([line])
            dropping = True
    return runs if j == len(new) else None


def _reversed_runs(runs: list[list[str]] | None) -> list[list[str]] | None:
    """``_dropped_runs`` of two reversed lists, put back in order."""
    return None if runs is None else [run[::-1] for run in runs[::-1]]


def _inserted(base: str, result: str) -> str | None:
    """What ``result`` adds to ``base`` if it is ``base`` with one contiguous insertion."""
    extra = len(result) - len(base)
    if extra < 0:
        return None
    p = _common_prefix(base, result)
    return result[p : p + extra] if result[p + extra :] == base[p:] else None


def _common_prefix(a: str, b: str) -> int:
    """Length of the common prefix of ``a`` and ``b`` (binary search on slices)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _breaks_are(inserted: str, eol: str, before: str) -> bool:
    """Whether every line break ``inserted`` writes is ``eol`` (a first ``\n`` may complete
    a lone ``\r`` that ended the text before it)."""
    if before.endswith("\r") and inserted.startswith("\n"):
        inserted = inserted[1:]
    crlf = inserted.count("\r\n")
    return crlf == (inserted.count("\n") if eol == "\r\n" else 0)


def _in_key_span(old: list[str], removed: list[str], head: re.Pattern[str]) -> bool:
    """Whether the ``removed`` run of ``old`` lies in one key's lines: its head line, or the
    indented / ``- item`` / blank / comment lines that follow it."""
    if not removed:
        return True
    for at in range(len(old) - len(removed) + 1):
        if old[at : at + len(removed)] != removed:
            continue
        i = at
        while i >= 0 and not head.match(old[i]) and (
                old[i][:1] in (" ", "\t", "#", "-", "\r", "\n")):
            i -= 1
        if i >= 0 and head.match(old[i]):
            return True
    return False


def _key_head(key: str) -> re.Pattern[str]:
    k = re.escape(key)
    return re.compile(rf"(?:{k}|\"{k}\"|'{k}')[ \t]*:")


def check_parse(tally: Tally, text: str) -> None:
    got = call(tally, "parse_frontmatter", fm.parse_frontmatter, text)
    split = call(tally, "split_frontmatter", fm.split_frontmatter, text)
    call(tally, "parse_note", notes.parse_note, "x.md", text)
    call(tally, "line_ending", fm.line_ending, text)
    if got is _FAILED or split is _FAILED:
        return
    data, body, error = got
    block = split[0]
    if body != split[1] or (block is None and error != split[2]):
        tally.fail("parse_frontmatter and split_frontmatter disagree")
    try:
        json.dumps(data)
    except (ValueError, TypeError, RecursionError) as exc:
        tally.fail(f"parsed frontmatter is not JSON-ready: {exc!r}")
    if block is not None:
        fast = fast_load(block) if size_refusal(block) is None else None
        loaded = call(tally, "load_block", load_block, block) if fast is not None else _FAILED
        if fast is not None and loaded is not _FAILED and (
                loaded[1] is not None or canon(loaded[0]) != canon(fast)):
            tally.fail("fast path accepted a block the bounded loader reads otherwise")


def check_set(tally: Tally, draw: Chooser, text: str) -> None:
    key, value = gen.key(draw), gen.value(draw)
    result = call(tally, "set_frontmatter_key", fm.set_frontmatter_key, text, key, value)
    if result is _FAILED:
        return
    again = call(tally, "set_frontmatter_key", fm.set_frontmatter_key, result, key, value)
    if again is not _FAILED and again != result:
        tally.fail("set_frontmatter_key twice differs from once")
    before_data, before_body, before_error = _parsed(text)
    after_data, after_body, after_error = _parsed(result)
    block = fm.split_frontmatter(text)[0]
    if block is None:
        rest = text.removeprefix(fm.BOM)
        if not result.endswith(rest) or after_body != rest:
            tally.fail("set_frontmatter_key on a note without a block changed its body")
    elif after_body != before_body:
        tally.fail("set_frontmatter_key changed the body")
    if before_error is None and result != text:
        if after_error is not None or canon(after_data.get(key)) != canon(value):
            tally.fail(f"set_frontmatter_key({key!r}) does not read back: {after_error}")
        others = ({k: v for k, v in before_data.items() if k != key},
                  {k: v for k, v in after_data.items() if k != key})
        if canon(others[0]) != canon(others[1]):
            tally.fail("set_frontmatter_key changed another key's value")
    if block is not None and result != text:
        removed, added = _changed_lines(text, result)
        head = _key_head(key)
        if len(added) > 1 or not all(head.match(line) and line.endswith("\n") for line in added) \
                or not _in_key_span(_lines(text), removed, head):
            tally.fail(f"set_frontmatter_key({key!r}) touched other lines: {removed!r} -> {added!r}")


def check_remove(tally: Tally, draw: Chooser, text: str) -> None:
    key = gen.key(draw)
    result = call(tally, "remove_frontmatter_key", fm.remove_frontmatter_key, text, key)
    if result is _FAILED or result == text:
        return
    if call(tally, "remove_frontmatter_key", fm.remove_frontmatter_key, result, key) != result:
        tally.fail("remove_frontmatter_key twice differs from once")
    old, new = _lines(text), _lines(result)
    head = _key_head(key)
    # the same result can drop a blank line of one span or of the next: the lines it kept
    # are matched from the start and from the end, and either way may show the spans
    alignments = (_dropped_runs(old, new),
                  _reversed_runs(_dropped_runs(old[::-1], new[::-1])))
    if not any(runs and all(head.match(run[0]) for run in runs) for runs in alignments):
        tally.fail(f"remove_frontmatter_key({key!r}) touched other lines: "
                   f"{alignments[0]!r:.200}")
    if _parsed(result)[1] != _parsed(text)[1]:
        tally.fail("remove_frontmatter_key changed the body")


def check_render(tally: Tally, draw: Chooser) -> None:
    value = gen.value(draw)
    rendered = call(tally, "render_value", fm.render_value, value)
    if rendered is not _FAILED:
        data, _, error = _parsed(f"---\nv: {rendered}\n---\n")
        if error is not None or canon(data.get("v")) != canon(value) or "\n" in rendered:
            tally.fail(f"render_value({_short(value)}) does not read back: {rendered!r:.80}")
    mapping = {gen.key(draw): gen.value(draw) for _ in range(draw.randint(0, 3))}
    block = call(tally, "render_frontmatter", fm.render_frontmatter, mapping)
    if block is not _FAILED:
        data, body, error = _parsed(block + "body\n")
        if error is not None or canon(data) != canon(mapping) or body != "body\n":
            tally.fail(f"render_frontmatter does not read back: {block!r:.120}")


def _section_lines(text: str, heading: str) -> list[str]:
    section = notes.get_section(text, heading) or ""
    return [line.rstrip("\r").rstrip() for line in section.split("\n")]


def _structural(lines: list[str]) -> bool:
    """Whether appended lines could restructure the note (a heading, a closer line)."""
    return any(_HEADING_LIKE.match(line) or line.rstrip(" \t\r") in ("---", "...")
               for line in "\n".join(lines).split("\n"))


def check_sections(tally: Tally, draw: Chooser, text: str) -> None:
    heading = gen.heading_arg(draw, text)
    call(tally, "headings", notes.headings, text)
    call(tally, "wikilinks", notes.wikilinks, text)
    span = call(tally, "find_section", notes.find_section, text, heading)
    section = call(tally, "get_section", notes.get_section, text, heading)
    call(tally, "section_body", notes.section_body, text, heading)
    if span not in (_FAILED, None) and section != text[span[0] : span[1]]:
        tally.fail("get_section disagrees with find_section")
    limit = draw.randint(0, len(text) + 2)
    cut = call(tally, "truncate", notes.truncate, text, limit)
    if cut is not _FAILED and (len(cut[0]) > limit or not text.startswith(cut[0])
                               or cut[1] != (len(text) > limit)):
        tally.fail("truncate broke its contract")
    base = call(tally, "ensure_heading", notes.ensure_heading, text, heading)
    if base is _FAILED:
        return
    if not base.startswith(text) or notes.find_section(base, heading) is None:
        tally.fail(f"ensure_heading({heading!r}) did not add a findable heading at the end")
    if notes.ensure_heading(base, heading) != base:
        tally.fail("ensure_heading twice differs from once")
    if _parsed(base)[0::2] != _parsed(text)[0::2]:
        tally.fail("ensure_heading changed the frontmatter")
    check_append(tally, draw, text, heading, base)
    check_replace(tally, draw, text, heading, base)


def check_append(tally: Tally, draw: Chooser, text: str, heading: str, base: str) -> None:
    lines = gen.append_lines(draw)
    got = call(tally, "append_under_heading", notes.append_under_heading, text, heading, lines)
    if got is _FAILED:
        return
    result, changed = got
    again = call(tally, "append_under_heading", notes.append_under_heading, result, heading, lines)
    if again is not _FAILED and (again[1] or again[0] != result):
        tally.fail(f"append_under_heading twice differs from once: {lines!r}")
    if not changed:
        if result != text:
            tally.fail("append_under_heading changed the text but said unchanged")
        return
    inserted = _inserted(base, result)
    if inserted is None:
        tally.fail(f"append_under_heading changed bytes outside its insertion: {lines!r}")
    if _parsed(result)[0::2] != _parsed(text)[0::2]:
        tally.fail("append_under_heading changed the frontmatter")
    before = result[: _common_prefix(base, result)]
    if inserted is not None and not _breaks_are(inserted, fm.line_ending(text), before):
        tally.fail(f"append_under_heading wrote a line ending not the note's: {inserted!r:.120}")
    if not _structural(lines):
        found = _section_lines(result, heading)
        missing = [p.rstrip("\r").rstrip() for line in lines for p in line.split("\n")
                   if p.rstrip("\r").rstrip() not in found]
        if missing:
            tally.fail(f"appended lines not under {heading!r}: {missing!r}")


def check_replace(tally: Tally, draw: Chooser, text: str, heading: str, base: str) -> None:
    body = "\n".join(gen.append_lines(draw))
    result = call(tally, "replace_section_body", notes.replace_section_body, text, heading, body)
    if result is _FAILED:
        return
    if _parsed(result)[0::2] != _parsed(text)[0::2]:
        tally.fail("replace_section_body changed the frontmatter")
    span = notes.find_section(base, heading)
    if span is not None and not (result.startswith(base[: span[0]])
                                 and result.endswith(base[span[1] :])):
        tally.fail("replace_section_body changed bytes outside the section")
    if _structural([body]):
        return
    again = notes.replace_section_body(result, heading, body)
    if again != result:
        tally.fail(f"replace_section_body twice differs from once: {body!r:.120}")
    found = _section_lines(result, heading)
    missing = [p.rstrip("\r").rstrip() for p in body.split("\n")
               if p.rstrip("\r").rstrip() not in found]
    if missing:
        tally.fail(f"replaced body lines not under {heading!r}: {missing!r}")


def exercise(tally: Tally, draw: Chooser) -> None:
    """One generated note through every public parse and edit function."""
    text = gen.note_text(draw)
    check_parse(tally, text)
    check_set(tally, draw, text)
    check_remove(tally, draw, text)
    check_render(tally, draw)
    check_sections(tally, draw, text)
    tally.inputs += 1


def run(seed: int, start: int, n: int, progress: int = 0) -> Tally:
    """Inputs ``start .. start+n-1`` of ``seed``; every ``progress`` inputs (0: never) a
    line on stdout says how far this range got, so a stopped run still shows its count."""
    tally = Tally()
    for i in range(start, start + n):
        tally.where = f"seed {seed} input {i}"
        exercise(tally, random.Random(f"{seed}:{i}"))
        if progress and (i + 1 - start) % progress == 0:
            print(f"progress: seed {seed} inputs {start}..{i} done, {tally.failure_count} "
                  f"failures, {sum(tally.raised.values())} EchoErrors", flush=True)
    return tally


def _run_part(args: tuple[int, int, int, int]) -> Tally:
    return run(*args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000, help="inputs to generate")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start", type=int, default=0, help="index of the first input")
    parser.add_argument("--jobs", type=int, default=1, help="processes (inputs split evenly)")
    parser.add_argument("--progress", type=int, default=0, help="report every N inputs")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    jobs = max(1, args.jobs)
    step = -(-args.n // jobs)
    parts = [(args.seed, args.start + k * step, min(step, args.n - k * step), args.progress)
             for k in range(jobs) if args.n - k * step > 0]
    with multiprocessing.Pool(len(parts)) as pool:
        tallies = pool.map(_run_part, parts) if len(parts) > 1 else [run(*parts[0])]
    total = Tally()
    for part in tallies:
        total.merge(part)
    seconds = time.perf_counter() - started
    print(f"inputs: {total.inputs:,} (seed {args.seed}, from {args.start}, {jobs} jobs) "
          f"in {seconds:.1f}s")
    print("calls per function (slowest call):")
    for name, count in sorted(total.calls.items()):
        print(f"  {name:24} {count:>10,}  {total.slowest[name] * 1000:8.1f} ms")
    print("exceptions seen:" if total.raised else "exceptions seen: none")
    for name, count in sorted(total.raised.items()):
        print(f"  {name:48} {count:>10,}")
    print(f"failures: {total.failure_count}")
    for line in total.failures:
        print("  " + line)
    return 1 if total.failure_count else 0


if __name__ == "__main__":
    sys.exit(main())
