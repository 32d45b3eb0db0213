"""Vaults for the lint tests: a clean one (init + captures + links) and one with one
planted violation of each check. Not a test module (no ``test_`` prefix).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from echo_core.frontmatter import set_frontmatter_key
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.index_sync import sync_paths
from echo_core.ops.lint.model import LintResult
from echo_core.ops.lint.run import lint
from echo_core.ops.resolve import link
from tests.capture_kit import VaultBox

ADA = "resources/people/ada-lovelace.md"
ENGINE = "resources/concepts/analytical-engine.md"
GRACE = "resources/people/grace-hopper.md"
GRACE_B = "resources/people/grace-b-hopper.md"
HABITS = "_agent/memory/semantic/test-runner-habits.md"
PREFERENCES = "_agent/memory/semantic/operator-preferences.md"
SCRATCH = "_agent/memory/working/deploy-scratch.md"
CONTEXT = "_agent/context/current-context.md"

#: check name -> the path its one planted violation is reported on.
PLANTED = {
    "retired-path": "notes/old-idea.md",
    "outside-route": "random/thing.md",
    "unsafe-name": "journal/daily/what?.md",
    "broken-wikilink": ADA,
    "orphan-note": "resources/concepts/lonely-idea.md",
    "dangling-superseded-by": ENGINE,
    "incomplete-frontmatter": "resources/people/charles-babbage.md",
    "expired-working-note": SCRATCH,
    "index-drift": ENGINE,
    "stale-scope": CONTEXT,
    "observations-overflow": HABITS,
    "duplicate-entities": GRACE_B,
    "contradiction": PREFERENCES,
}
MECHANICAL = {"incomplete-frontmatter", "expired-working-note", "index-drift"}


def clean_box(box: VaultBox) -> VaultBox:
    """init + captures of several kinds + links: a vault lint finds nothing in."""
    box.init()
    ctx = box.ctx()
    for title, kind, body in (
            ("Ada Lovelace", "person", "Wrote the first program for the engine."),
            ("Analytical Engine", "concept", "Babbage's general-purpose machine."),
            ("Grace Hopper", "person", "Wrote the first compiler."),
            ("Test Runner Habits", "semantic", "How tests are run here."),
            ("Deploy Scratch", "working", "Scratch notes for the deploy.")):
        env = capture(ctx, CaptureRequest(title=title, kind=kind, body=body))
        assert env.ok, env
    for a, b in ((ADA, ENGINE), (GRACE, ADA)):
        assert link(ctx, a, b).ok
    return box


def write(box: VaultBox, path: str, text: str) -> None:
    """Write a file by hand (as a person in Obsidian would)."""
    target = box.vault / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")


def edit(box: VaultBox, path: str, old: str, new: str) -> None:
    """Replace ``old`` (which must be there) by ``new`` in the note at ``path``."""
    text = box.read(path)
    assert old in text, (path, old)
    write(box, path, text.replace(old, new, 1))


def set_key(box: VaultBox, path: str, key: str, value: object) -> None:
    write(box, path, set_frontmatter_key(box.read(path), key, value))


FULL_FM = ("---\ntype: {kind}\nstatus: active\ncreated: 2026-02-01\nupdated: 2026-02-01\n"
           "tags: [{kind}]\n---\n")


def plant_mechanical(box: VaultBox) -> None:
    """The violations ``lint --fix`` repairs: frontmatter, expired working note, drift."""
    path = PLANTED["incomplete-frontmatter"]
    write(box, path, "# Charles Babbage\n\nDesigned the [[analytical-engine]].\n")
    assert sync_paths(box.ctx(), [path]).entities_put  # an entity, as a sweep makes it
    set_key(box, SCRATCH, "expires", "2026-02-01")
    edit(box, ENGINE, "# Analytical Engine", "# The Analytical Engine")


def plant_judgement(box: VaultBox) -> None:
    """The violations a person must decide on, one of each check."""
    write(box, "notes/old-idea.md", "# Old idea\n\nFrom the old layout.\n")
    write(box, "random/thing.md", "---\ntype: concept\n---\n# A thing\n\nSomewhere odd.\n")
    write(box, "journal/daily/what?.md", "# What?\n")
    write(box, "resources/people/chart.png", "not really a png\n")
    edit(box, ADA, "Wrote the first program", "See [[Nobody Here]] and `[[Not A Link]]` "
         "and ![[chart.png]] and [[analytical-engine|the engine]] and "
         "[[Analytical Engine#History]].\n\n```\n[[Inside Code]]\n```\n\nWrote the first program")
    lonely = PLANTED["orphan-note"]
    write(box, lonely, FULL_FM.format(kind="concept") + "# Lonely Idea\n\nNo links.\n")
    assert sync_paths(box.ctx(), [lonely]).entities_put
    set_key(box, ENGINE, "superseded_by", "[[engine-mark-two]]")
    for n in range(3):
        write(box, f"_agent/sessions/2026-03-01-10{n}0-work-{n}.md", f"# Work {n}\n")
    observations = "\n".join(f"- 2026-02-{day:02d}: ran the suite {day} times"
                             for day in range(1, 29)) + "\n- a\n- b\n- c\n"
    edit(box, HABITS, "## Observations\n", f"## Observations\n{observations}")
    edit(box, HABITS, "# Test Runner Habits\n", "# Test Runner Habits\n\n## Fact / Pattern\n\n"
         "- Never use pytest for the quick checks\n\n")
    edit(box, PREFERENCES, "## Fact / Pattern\n", "## Fact / Pattern\n\n- Always use pytest\n")
    env = box.capture("Grace B. Hopper", kind="person", body="Rear admiral.", force=True)
    assert env.ok and env.data.path == GRACE_B, env
    assert link(box.ctx(), GRACE_B, GRACE).ok


def run(box: VaultBox, **kwargs: object) -> LintResult:
    result: LintResult = lint(box.ctx(), **kwargs).data  # type: ignore[arg-type]
    return result


def found(result: LintResult) -> set[tuple[str, str]]:
    return {(f.check, f.path) for f in result.findings}


_TEMPLATES: dict[str, Path] = {}


def _template(name: str, factory: pytest.TempPathFactory) -> Path:
    """The ``name`` vault, built once per process: "clean" by captures, the others as
    a copy of it with violations planted."""
    template = _TEMPLATES.get(name)
    if template is None:
        template = factory.mktemp(f"lint-{name}")
        if name == "clean":
            clean_box(VaultBox(template))
        else:
            shutil.rmtree(template)
            shutil.copytree(_template("clean", factory), template, symlinks=True)
            box = VaultBox(template)
            plant_mechanical(box)
            if name == "planted":
                plant_judgement(box)
        _TEMPLATES[name] = template
    return template


def box_like(name: str, tmp_path: Path, factory: pytest.TempPathFactory) -> VaultBox:
    """A copy, in ``tmp_path``, of the ``name`` vault: "clean" (init + captures +
    links), "planted" (one violation of every check) or "mechanical" (only those
    ``--fix`` repairs). Copies keep mtimes."""
    root = tmp_path / name
    shutil.copytree(_template(name, factory), root, symlinks=True)
    return VaultBox(root)
