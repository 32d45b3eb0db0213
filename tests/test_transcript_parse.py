"""The defensive transcript reader: what it keeps, what it skips, what never crashes."""

from __future__ import annotations

import json
import random
from pathlib import Path

from echo_core.ops.transcript_mining import mine_file, mine_transcript
from echo_core.ops.transcript_parse import (
    MAX_LINE_BYTES,
    ParseTally,
    ToolResult,
    ToolUse,
    parse_lines,
    read_transcript_lines,
)

DATA = Path(__file__).parent / "data" / "transcripts"


def _line(kind: str, content: object, **extra: object) -> str:
    return json.dumps({"type": kind, "uuid": f"{kind}-1", "sessionId": "s1", "cwd": "/w",
                       "message": {"role": kind, "content": content}, **extra})


def test_user_string_content_is_one_text_turn() -> None:
    (turn,) = parse_lines([_line("user", "Use uv")])
    assert (turn.role, turn.texts, turn.session, turn.ref, turn.cwd) == (
        "user", ("Use uv",), "s1", "user-1", "/w")


def test_user_blocks_give_texts_and_tool_results_with_is_error() -> None:
    (turn,) = parse_lines([_line("user", [
        {"type": "text", "text": "see"},
        {"type": "tool_result", "tool_use_id": "t1", "is_error": True,
         "content": [{"type": "text", "text": "boom"}, {"type": "image"}]},
        {"type": "tool_result", "tool_use_id": "t2", "content": "fine"},
        {"type": "image", "source": {}}])])
    assert turn.texts == ("see",)
    assert turn.tool_results == (ToolResult("t1", True, "boom"), ToolResult("t2", False, "fine"))


def test_assistant_blocks_give_texts_and_tool_uses_and_skip_thinking() -> None:
    (turn,) = parse_lines([_line("assistant", [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "text", "text": "Running it"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_use", "id": "t2", "name": "Edit", "input": "not a dict"}])])
    assert turn.texts == ("Running it",)
    assert turn.tool_uses == (ToolUse("t1", "Bash", {"command": "ls"}), ToolUse("t2", "Edit", {}))


def test_assistant_string_content_and_user_tool_use_are_not_understood() -> None:
    lines = [_line("assistant", "plain"),
             _line("user", [{"type": "tool_use", "id": "t", "name": "Bash", "input": {}}])]
    tally = ParseTally()
    assert list(parse_lines(lines, tally=tally)) == []
    assert (tally.lines, tally.turns, tally.skipped, tally.bad) == (2, 0, 2, 0)


def test_other_line_types_and_meta_lines_are_skipped() -> None:
    lines = [json.dumps({"type": kind, "message": {"role": "user", "content": "Always x"}})
             for kind in ("system", "attachment", "progress", "summary",
                          "file-history-snapshot", "queue-operation", "brand-new-type")]
    lines.append(_line("user", "Always x", isMeta=True))
    tally = ParseTally()
    assert list(parse_lines(lines, tally=tally)) == []
    assert tally.skipped == len(lines) and tally.bad == 0


def test_sidechain_lines_are_kept_and_flagged() -> None:
    (turn,) = parse_lines([_line("user", "Always x", isSidechain=True)])
    assert turn.sidechain is True
    (turn,) = parse_lines([_line("user", "Always x", isSidechain="yes")])
    assert turn.sidechain is False  # only a real true flags it


def test_a_line_without_uuid_is_named_by_its_line_number() -> None:
    line = json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}})
    turns = list(parse_lines(["", "junk", line], session="fallback"))
    assert [(t.ref, t.session) for t in turns] == [("line 3", "fallback")]


def test_broken_lines_are_counted_bad_and_never_raise() -> None:
    lines: list[str | bytes] = [
        "not json", "[1, 2]", "{", '{"type": "user"', "null", '"string"',
        '{"type": "user", "message": 5}', '{"type": "user", "message": {"content": null}}',
        '{"a": ' * 5000 + "1" + "}" * 5000,                      # deep nesting
        b'{"type": "user", "message": {"content": "caf\xe9 \xff"}}',  # bad UTF-8
        b"\xff\xfe\x00\x00", "\x00" * 100,
        '{"type": "user", "sessionId": 7, "uuid": ["x"], "message": {"content": "hi"}}',
    ]
    tally = ParseTally()
    turns = list(parse_lines(lines, tally=tally))
    assert tally.lines == len(lines)
    assert [t.texts for t in turns] == [("caf\ufffd \ufffd",), ("hi",)]
    assert turns[1].session == "" and turns[1].ref == f"line {len(lines)}"  # wrong types dropped


def test_read_lines_keeps_a_truncated_last_line_and_mining_skips_it(tmp_path: Path) -> None:
    path = tmp_path / "live.jsonl"
    whole = _line("user", "Never use tabs.")
    path.write_text(whole + "\n" + whole[:-20], encoding="utf-8")
    assert [len(x) for x in read_transcript_lines(path)] == [len(whole) + 1, len(whole) - 20]
    assert [m.title for m in mine_file(path)] == ["Never use tabs"]


def test_an_over_long_line_is_dropped_without_holding_it_and_later_lines_survive(
        tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    big = _line("user", "Always " + "x" * (MAX_LINE_BYTES + 1024))
    path.write_text(big + "\n" + _line("user", "Never use tabs.") + "\n", encoding="utf-8")
    assert next(iter(read_transcript_lines(path))) == b""
    assert [m.title for m in mine_file(path)] == ["Never use tabs"]


def test_a_50_mb_line_never_crashes(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as handle:
        handle.write(b'{"type": "user", "message": {"content": "')
        chunk = b"a" * (1024 * 1024)
        handle.writelines(chunk for _ in range(50))
        handle.write(b'"}}')  # no newline: a huge truncated last line
    assert mine_file(path) == []


def test_a_missing_file_raises_os_error(tmp_path: Path) -> None:
    try:
        mine_file(tmp_path / "absent.jsonl")
    except OSError:
        return
    raise AssertionError("expected OSError")


# -- fuzz: mutated fixture lines and random JSON never crash ---------------------------


def _mutations(rng: random.Random, line: bytes) -> bytes:
    choice = rng.randrange(6)
    if choice == 0 and line:  # truncate
        return line[:rng.randrange(len(line))]
    if choice == 1 and line:  # flip bytes
        data = bytearray(line)
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        return bytes(data)
    if choice == 2:  # splice two halves
        cut = rng.randrange(len(line) + 1)
        return line[:cut] + line[rng.randrange(len(line) + 1):]
    if choice == 3:  # change a value's type
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            return line
        return json.dumps(_retype(rng, record)).encode()
    if choice == 4:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(200)))
    return line


_VALUES: list[object] = [None, 0, -1, 1.5, True, "", "x", [], {}, [None], {"type": None},
                         [{"type": "text"}], [{"type": "tool_result", "tool_use_id": 5}]]


def _retype(rng: random.Random, value: object, depth: int = 0) -> object:
    if isinstance(value, dict):
        return {k: (rng.choice(_VALUES) if rng.random() < 0.15 else _retype(rng, v, depth + 1))
                for k, v in value.items()}
    if isinstance(value, list):
        return [rng.choice(_VALUES) if rng.random() < 0.15 else _retype(rng, v, depth + 1)
                for v in value]
    return value


def test_fuzzed_fixture_lines_never_crash_parse_or_mining() -> None:
    rng = random.Random(17)
    source = [line for path in sorted(DATA.glob("*.jsonl"))
              for line in path.read_bytes().splitlines()]
    lines = [_mutations(rng, rng.choice(source)) for _ in range(3000)]
    tally = ParseTally()
    turns = list(parse_lines(lines, tally=tally))
    assert tally.lines == 3000 and tally.turns == len(turns) > 0 and tally.bad > 0
    for start in range(0, 3000, 300):
        for item in mine_transcript(lines[start:start + 300]):
            assert item.title.strip() and "\n" not in item.title
