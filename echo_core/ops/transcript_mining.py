"""Transcript mining (SPEC §4.4): Claude Code JSONL -> reflect proposals, no LLM.

``mine_transcript(lines)`` parses defensively (``transcript_parse``: unknown, broken or
truncated lines are skipped, never raised) and applies four deterministic rules:

============  ==========  ==========  ===================================================
category      confidence  kind        from
============  ==========  ==========  ===================================================
preference    HIGH 0.9    semantic    an operator sentence "always X", "never X",
                                      "I prefer X", "prefer X over Y", "use X not Y",
                                      "don't X", "please stop X" (``transcript_rules``)
correction    MEDIUM 0.7  semantic    an operator turn after the agent spoke, opening
                                      with "no, ...", "that's wrong", "actually, ...",
                                      "not X but Y", "you should have ..."
error-fix     MEDIUM 0.7  semantic    a failed tool call then a different successful
                                      call on the same tool and target
                                      (``transcript_rules_tools``)
idea          LOW 0.4     None        "we should later", "TODO", "it would be nice to",
                                      "next time", "idea: ..." (inbox)
============  ==========  ==========  ===================================================

Operator text is a non-sidechain user line's text blocks (never tool results, never a
subagent's conversation, never ``isMeta`` lines); a sentence that is a preference is
not also a correction or an idea. Operator and agent text pass
``echo_core.redaction.redact`` (``<private>`` blocks dropped, secrets replaced by a
marker) before any rule reads them, tool commands and errors before they are
shortened, and every field of a proposal once more on its way out.

Repeats merge by ``MinedProposal.key()`` (the normalised title): within a transcript
and, with ``merge_mined``, across transcripts - occurrences summed, sessions / turns /
excerpts united in first-seen order (excerpts capped at ``MAX_EXCERPTS``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

import attrs

from echo_core.ops.transcript_parse import (
    ParseTally,
    TranscriptTurn,
    parse_lines,
    read_transcript_lines,
)
from echo_core.ops.transcript_rules import RuleHit, correction, idea, preference, sentences
from echo_core.ops.transcript_rules_tools import ErrorFix, ErrorFixTracker
from echo_core.redaction import redact, strip_private

__all__ = ["HIGH", "LOW", "MAX_EXCERPTS", "MEDIUM", "MinedProposal", "merge_mined",
           "mine_file", "mine_transcript"]

HIGH, MEDIUM, LOW = 0.9, 0.7, 0.4
MAX_EXCERPTS = 3
MAX_EXCERPT_CHARS = 240
MAX_SOURCES = 10
#: Titles are one line of at most this many characters (capture takes up to 200).
MAX_TITLE = 180
_KEY_DROP = re.compile(r"[^\w]+")


@attrs.frozen
class MinedProposal:
    """One thing worth remembering, found in one or more transcripts."""

    title: str
    kind: str | None
    body: str
    confidence: float
    category: str   # "preference" | "correction" | "error-fix" | "idea"
    rationale: str
    excerpts: tuple[str, ...]
    sessions: tuple[str, ...]
    turns: tuple[str, ...]
    occurrences: int = 1

    def key(self) -> str:
        """What merges repeats: the title lower-cased, punctuation and spacing dropped."""
        return " ".join(_KEY_DROP.sub(" ", self.title.lower()).split())

    def to_proposal(self) -> dict[str, Any]:
        """The SPEC §4.4 proposal (title, kind, body, confidence, tags, sources).

        The body is ``body`` plus the excerpts as quoted evidence; ``kind`` is left out
        for an inbox idea; ``sources`` names the sessions (``transcript:<id>``).
        """
        evidence = "\n".join(f"> {excerpt}" for excerpt in self.excerpts)
        proposal: dict[str, Any] = {
            "title": self.title,
            "body": f"{self.body}\n\n{evidence}" if evidence else self.body,
            "confidence": self.confidence,
            "tags": ["mined", self.category],
            "sources": [f"transcript:{s}" for s in self.sessions[:MAX_SOURCES]],
        }
        if self.kind is not None:
            proposal["kind"] = self.kind
        return proposal


def mine_transcript(lines: Iterable[str | bytes], *, source: str = "",
                    tally: ParseTally | None = None) -> list[MinedProposal]:
    """The proposals mined from one transcript's ``lines``, repeats merged, in order.

    ``source`` names the session of lines without a ``sessionId``; ``tally``, when
    given, counts the lines read, understood and bad. Never raises on content (bad lines
    are skipped).
    """
    found: list[MinedProposal] = []
    tracker = ErrorFixTracker()
    agent_said: str | None = None  # the agent's last words before an operator turn
    for turn in parse_lines(lines, session=source, tally=tally):
        if turn.role == "assistant":
            tracker.saw_calls(turn)
            if not turn.sidechain and turn.texts:
                agent_said = turn.texts[-1]  # redacted when a correction quotes it
            elif not turn.sidechain and turn.tool_uses and agent_said is None:
                agent_said = f"(called {turn.tool_uses[0].name})"
            continue
        found.extend(_error_fix(fix) for fix in tracker.saw_results(turn))
        if turn.sidechain or not turn.texts:
            continue
        found.extend(_operator_turn(turn, agent_said))
        agent_said = None
    return merge_mined([found])


def mine_file(path: str | os.PathLike[str],
              tally: ParseTally | None = None) -> list[MinedProposal]:
    """``mine_transcript`` over the file at ``path`` (session fallback: its stem).

    Reads line by line (over-long lines dropped, bad UTF-8 replaced, a truncated last
    line skipped); raises ``OSError`` only when the file cannot be opened.
    """
    stem = os.path.splitext(os.path.basename(os.fspath(path)))[0]
    return mine_transcript(read_transcript_lines(path), source=stem, tally=tally)


def merge_mined(groups: Iterable[Iterable[MinedProposal]]) -> list[MinedProposal]:
    """Merge proposals with the same ``key()``, first-seen order kept.

    The first proposal's title, kind, body, category and rationale win; confidence is
    the highest seen; occurrences are summed; sessions, turns and excerpts are united
    (excerpts capped at ``MAX_EXCERPTS``).
    """
    merged: dict[str, MinedProposal] = {}
    for group in groups:
        for item in group:
            key = item.key()
            have = merged.get(key)
            if have is None:
                merged[key] = item
                continue
            merged[key] = attrs.evolve(
                have, confidence=max(have.confidence, item.confidence),
                occurrences=have.occurrences + item.occurrences,
                sessions=_union(have.sessions, item.sessions),
                turns=_union(have.turns, item.turns),
                excerpts=_union(have.excerpts, item.excerpts)[:MAX_EXCERPTS])
    return list(merged.values())


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    seen = set(first)  # a scan of ``first`` per item made a corpus merge quadratic
    return first + tuple(item for item in second if item not in seen)


# -- building proposals ---------------------------------------------------------------


def _excerpt(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= MAX_EXCERPT_CHARS else line[:MAX_EXCERPT_CHARS - 1] + "…"


def _quote(text: str, limit: int = 120) -> str:
    line = _excerpt(text)
    return line if len(line) <= limit else line[:limit - 1] + "…"


def _last_sentence(text: str) -> str:
    """The agent's last sentence, redacted: what an operator's reply corrects, usually."""
    said = sentences(_clean(text))
    return said[-1] if said else _excerpt(_clean(text))


def _may_hit(text: str, agent_spoke: bool) -> bool:
    """Whether any rule matches a sentence of ``text`` (a cheap pass before redaction)."""
    for index, sentence in enumerate(sentences(text)):
        if preference(sentence) or idea(sentence) or (
                index == 0 and agent_spoke and correction(sentence)):
            return True
    return False


def _operator_turn(turn: TranscriptTurn, agent_said: str | None) -> list[MinedProposal]:
    """The proposals of one operator turn; the rules read its redacted text (redaction
    runs only for a turn some rule matches before it: most turns match none)."""
    if not _may_hit(strip_private(turn.text), agent_said is not None):
        return []
    out: list[MinedProposal] = []
    said = sentences(_clean(turn.text))
    for index, sentence in enumerate(said):
        if hit := preference(sentence):
            out.append(_proposal(hit, turn, sentence, "preference", HIGH, "semantic",
                                 body=hit.title, why=f"the operator said {_quote(sentence)!r}"))
        elif index == 0 and agent_said is not None and (hit := correction(sentence)):
            corrected = _quote(_last_sentence(agent_said))
            body = f"{hit.title}\n\nThe operator corrected: {corrected!r}"
            out.append(_proposal(hit, turn, sentence, "correction", MEDIUM, "semantic",
                                 body=body, why=f"the operator answered {corrected!r}"
                                 f" with {_quote(sentence)!r}"))
        elif hit := idea(sentence):
            out.append(_proposal(hit, turn, sentence, "idea", LOW, None, body=hit.title,
                                 why=f"the operator said {_quote(sentence)!r}"))
    return out


def _proposal(hit: RuleHit, turn: TranscriptTurn, sentence: str, category: str,
              confidence: float, kind: str | None, *, body: str, why: str) -> MinedProposal:
    return MinedProposal(
        title=_quote(_clean(hit.title), MAX_TITLE), kind=kind, body=_clean(body),
        confidence=confidence,
        category=category, rationale=_clean(f"{hit.rule}: {why}"),
        excerpts=(_clean(_excerpt(sentence)),), sessions=(turn.session,) if turn.session
        else (), turns=(turn.ref,))


def _error_fix(fix: ErrorFix) -> MinedProposal:
    lines = [f"Failed: {fix.failed} -> {fix.error}"]
    if fix.between:
        lines.append(f"Then: {'; '.join(fix.between)}")
    lines.append(f"Worked: {fix.worked}" + (" (the same call, retried)" if fix.same_call else ""))
    session = fix.fixed_turn.session
    return MinedProposal(
        title=_quote(_clean(f"Error then fix: {fix.tool} {fix.target}"), MAX_TITLE),
        kind="semantic",
        body=_clean("\n".join(lines)), confidence=MEDIUM, category="error-fix",
        rationale=_clean(f"error-fix: {fix.tool} {fix.target} failed ({fix.error}), then "
                         + (f"the same call succeeded after {'; '.join(fix.between)}"
                            if fix.same_call else "a different call on it succeeded")),
        excerpts=(_clean(_excerpt(fix.error)), _clean(_excerpt(fix.worked))),
        sessions=(session,) if session else (),
        turns=(fix.failed_turn.ref, fix.fixed_turn.ref))


def _clean(text: str) -> str:
    """``text`` as it may leave the miner: private blocks dropped, secrets marked."""
    return redact(text).text
