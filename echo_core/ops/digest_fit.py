"""Fitting the ``load`` digest's sections into a character budget (SPEC §4.1). Pure
functions: no I/O; ``echo_core.ops.digest`` builds the blocks and documents the order.

``fit`` works in four steps, each only while the text is still over the budget:

1. capped fixed texts (the scope, the Fact / Pattern section: ``Block.cap_share``) longer
   than 1/``cap_share`` of the budget are cut to that share, so one huge section cannot
   push every later one out;
2. the trimmable blocks lose items in the given order (``Block.render``);
3. the capped fixed texts are cut further, to what still fits, down to a one-line
   ``(truncated) not shown (N chars; see <path>)``;
4. the last resort: the joined text is cut at the budget and ends with ``(truncated)``.

A cut fixed text keeps whole lines where that keeps most of it (else whole words) and
ends with ``(truncated) the rest not shown (N chars; see <path>)``. The work is linear in
the size of the text.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

TRUNCATED = "(truncated)"


@attrs.frozen
class Section:
    """One digest section: a stable ``name``, its text, and ok|absent|error|truncated."""

    name: str
    text: str
    status: str


@attrs.define
class Block:
    """A section being fitted: fixed text plus items that trimming may drop."""

    name: str
    status: str
    title: Callable[[int], str]
    fixed: str = ""
    items: list[str] = attrs.field(factory=list)
    keep_last: bool = True  # trimming drops the oldest (front) items; else from the end
    noun: str = "items"  # plural; one is said without the final "s"
    closing: str = ""  # a line after the items (a code fence), never trimmed
    hint: str = ""  # where to read what trimming left out
    shown: int = -1  # items shown; -1 = all
    total: int = -1  # items in the source when ``items`` holds only some; -1 = len(items)
    cap_share: int = 0  # over budget, ``fixed`` may be cut to 1/N of it; 0: never cut
    source: str = ""  # where to read ``fixed`` in full once cut
    uncut: str | None = None  # ``fixed`` as it was before the first cut

    def render(self, shown: int | None = None) -> str:
        """The section text with ``shown`` items (default: the current ``shown``).

        When trimming left items out, the last line says how many of the source's items
        are not shown, so shown + not shown = all of them."""
        n = shown if shown is not None else len(self.items) if self.shown < 0 else self.shown
        kept = (self.items[len(self.items) - n:] if self.keep_last else self.items[:n]) if n else []
        lines = [self.title(n)]
        if self.fixed:
            lines.append(self.fixed)
        lines += kept
        if self.closing:
            lines.append(self.closing)
        if n < len(self.items):
            which = "" if not n else " older" if self.keep_last else " more"
            hidden = (self.total if self.total >= 0 else len(self.items)) - n
            hint = f"; read {self.hint}" if self.hint else ""
            noun = self.noun[:-1] if hidden == 1 and self.noun.endswith("s") else self.noun
            lines.append(f"{TRUNCATED} {hidden}{which} {noun} not shown{hint}")
        return "\n".join(lines)

    def cut_fixed(self, max_chars: int) -> None:
        """Cut ``fixed`` to at most ``max_chars`` characters where it can: the kept start,
        then a line saying how many characters are not shown and where to read them; only
        that line when no text fits; a second cut cuts the text as it was before the
        first. Marks the block truncated."""
        if self.uncut is None:
            self.uncut = self.fixed
        whole = self.uncut
        see = f"; see {self.source}" if self.source else ""
        longest = f"\n{TRUNCATED} the rest not shown ({len(whole)} chars{see})"
        kept = whole[: max(0, max_chars - len(longest))]
        if len(kept) < len(whole):
            newline = kept.rfind("\n")
            space = kept.rfind(" ")
            if newline >= len(kept) / 2:
                kept = kept[:newline]
            elif space >= len(kept) / 2:
                kept = kept[:space]
        kept = kept.rstrip()
        hidden = len(whole) - len(kept)
        self.fixed = (f"{kept}\n{TRUNCATED} the rest not shown ({hidden} chars{see})" if kept
                      else f"{TRUNCATED} not shown ({hidden} chars{see})")
        self.status = "truncated"


def join(blocks: list[Block]) -> str:
    """The text of ``blocks`` as they render now (one blank line between them)."""
    return "\n\n".join(block.render() for block in blocks)


def cap_texts(blocks: list[Block], budget: int, total: int, *, to_share: bool) -> int:
    """Cut the capped blocks' fixed texts (in block order) while ``total`` is over
    ``budget``: to 1/``cap_share`` of the budget when ``to_share`` (a text within its
    share is left whole), else no further than it takes to fit; a text the cut would not
    shorten is left whole. Returns the new total."""
    for block in blocks:
        if total <= budget or not block.cap_share or not block.fixed:
            continue
        share = budget // block.cap_share if to_share else 0
        if len(block.fixed) <= share:
            continue
        before = attrs.evolve(block)
        size = len(block.render())
        block.cut_fixed(share or len(before.fixed) - (total - budget))
        if len(block.fixed) >= len(before.fixed):  # too short for the cut's line to help
            block.fixed, block.status, block.uncut = before.fixed, before.status, before.uncut
        total += len(block.render()) - size
    return total


def fit(blocks: list[Block], budget: int, order: tuple[str, ...]) -> list[Section]:
    """The sections of ``blocks`` within ``budget`` (the module docstring's four steps;
    items trimmed in ``order``). Mutates ``blocks``."""
    total = cap_texts(blocks, budget, len(join(blocks)), to_share=True)
    for name in order:
        if total <= budget:
            break
        for block in (b for b in blocks if b.name == name and b.items):
            others = total - len(block.render())
            lo, hi = 0, len(block.items) - 1  # largest n that fits, else 0
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if others + len(block.render(mid)) <= budget:
                    lo = mid
                else:
                    hi = mid - 1
            block.shown, block.status = lo, "truncated"
            total = others + len(block.render())
    total = cap_texts(blocks, budget, total, to_share=False)
    sections = [Section(b.name, b.render(), b.status) for b in blocks]
    if total <= budget:
        return sections
    return hard_cut(sections, budget)


def hard_cut(sections: list[Section], budget: int) -> list[Section]:
    """Cut the joined text so that it plus a final ``(truncated)`` fits ``budget``.

    The marker ends the last section that keeps any text; sections past the cut stay in
    the list with empty text, all marked ``truncated``."""
    marker = "\n" + TRUNCATED
    room = budget - len(marker)
    out: list[Section] = []
    pos = 0
    for i, section in enumerate(sections):
        sep = len("\n\n") if out else 0
        if pos + sep + len(section.text) <= room:
            out.append(section)
            pos += sep + len(section.text)
            continue
        rest = sections[i:]
        cut = section.text[: max(0, room - pos - sep)]
        if (newline := cut.rfind("\n")) >= len(cut) / 2:
            cut = cut[:newline]  # end on a whole line when that keeps most of it
        cut = cut.rstrip()
        if cut:
            out.append(Section(section.name, cut, "truncated"))
            rest = rest[1:]
        if out:
            last = out[-1]
            out[-1] = Section(last.name, last.text + marker, "truncated")
        else:
            out.append(Section(section.name, TRUNCATED, "truncated"))
            rest = rest[1:]
        return out + [Section(s.name, "", "truncated") for s in rest]
    return out


def sections_text(sections: list[Section]) -> str:
    """The digest text of ``sections`` (one blank line between sections)."""
    return "\n\n".join(s.text for s in sections if s.text)
