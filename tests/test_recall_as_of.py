"""``recall --as-of`` (SPEC §3.3): what the vault held on a date."""

from __future__ import annotations

import datetime as _dt
from pathlib import Path

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.evolve import evolve_note
from echo_core.ops.recall_as_of import recall_as_of
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main

OLD = "decisions/2026-01-10-deploy-on-fridays.md"
NEW = "decisions/2026-03-05-no-deploys-on-fridays.md"


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    """A decision taken on 2026-01-10 and reversed on 2026-03-05."""
    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy on Fridays", kind="decision", today="2026-01-10",
                       body="We deploy to production on Fridays.").ok
    assert box.capture("No deploys on Fridays", kind="decision", today="2026-03-05",
                       body="Production deploys stop on Fridays after the outage.",
                       supersedes="2026-01-10-deploy-on-fridays").ok
    return box


def _primary(box: VaultBox, day: str, query: str = "deploy production fridays") -> list:
    env = recall_as_of(box.ctx(ECHO_TODAY="2026-03-20"), query, _dt.date.fromisoformat(day),
                       include_linked=False)
    assert env.ok
    return list(env.data.primary)


def test_before_the_reversal_the_old_decision_is_current(box: VaultBox) -> None:
    hits = _primary(box, "2026-02-01")
    assert [h.path for h in hits] == [OLD]
    assert hits[0].validity == "current" and hits[0].superseded_by is None
    assert hits[0].status == ""  # not shown as superseded: it was not, then


def test_after_the_reversal_the_new_decision_is_current_and_the_old_superseded(
        box: VaultBox) -> None:
    hits = _primary(box, "2026-03-10")
    assert [h.path for h in hits] == [NEW, OLD]
    assert hits[0].validity == "current"
    assert hits[1].validity == "superseded"
    assert hits[1].superseded_by == "2026-03-05-no-deploys-on-fridays"


def test_before_anything_was_written_nothing_is_found(box: VaultBox) -> None:
    assert _primary(box, "2025-12-31") == []


def test_an_evolved_note_answers_with_its_version_of_then(box: VaultBox) -> None:
    assert box.capture("Deploy Process", kind="concept", today="2026-01-02",
                       body="Deploys run from Jenkins.").ok
    note = "resources/concepts/deploy-process.md"
    new = box.read(note).replace("Jenkins", "Argo CD")
    assert evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), note, "moved", new).ok
    then = _primary(box, "2026-02-01", "deploys run")
    assert then[0].path == "_agent/archive/resources/concepts/deploy-process--2026-03-09.md"
    assert "Jenkins" in then[0].excerpt and then[0].validity == "current"
    now = _primary(box, "2026-03-10", "deploys run")
    assert now[0].path == note and "Argo CD" in now[0].excerpt


def test_a_note_evolved_twice_on_one_day_answers_with_the_version_before_both(
        box: VaultBox) -> None:
    assert box.capture("Deploy Process", kind="concept", today="2026-01-02",
                       body="Deploys run from Jenkins.").ok
    note = "resources/concepts/deploy-process.md"
    for old, new in (("Jenkins", "Argo CD"), ("Argo CD", "Flux")):
        text = box.read(note).replace(old, new)
        assert evolve_note(box.ctx(ECHO_TODAY="2026-03-09"), note, "moved", text).ok
    then = _primary(box, "2026-02-01", "deploys run")
    assert then[0].path == "_agent/archive/resources/concepts/deploy-process--2026-03-09.md"
    assert "Jenkins" in then[0].excerpt and then[0].validity == "current"
    now = _primary(box, "2026-03-10", "deploys run")
    assert now[0].path == note and "Flux" in now[0].excerpt


def test_as_of_from_the_cli(box: VaultBox, capsys: pytest.CaptureFixture[str],
                            monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in box.env(ECHO_TODAY="2026-03-20").items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    run = run_main(["recall", *base, "--as-of", "2026-03-10", "--no-linked", "deploy",
                    "fridays"], capsys, monkeypatch)
    assert run.code == 0, run
    assert "(current then)" in run.out
    assert "(superseded by 2026-03-05-no-deploys-on-fridays then)" in run.out
    bad = run_main(["recall", *base, "--as-of", "last week", "deploy"], capsys, monkeypatch)
    assert bad.code == 2 and "as_of" in bad.err


def test_a_bad_date_names_the_field(box: VaultBox) -> None:
    from echo_core.ops.recall_as_of import parse_as_of

    with pytest.raises(EchoError) as err:
        parse_as_of("2026-13-01")
    assert err.value.code == ExitCode.USAGE and err.value.message.startswith("as_of:")


def test_supersedes_and_as_of_over_mcp(tmp_path: Path) -> None:
    from typing import Any

    from tests.mcp_kit import call, make_server, with_client

    box = VaultBox(tmp_path).init()
    assert box.capture("Deploy on Fridays", kind="decision", today="2026-01-10",
                       body="We deploy to production on Fridays.").ok
    server = make_server(box, env=box.env(ECHO_TODAY="2026-03-05",
                                          ECHO_NOW="2026-03-05T10:00:00"))

    async def body(client: Any) -> list[tuple[bool, dict[str, Any], str]]:
        return [await call(client, "echo_capture", title="No deploys on Fridays",
                           kind="decision", body="Production deploys stop on Fridays.",
                           supersedes="2026-01-10-deploy-on-fridays"),
                await call(client, "echo_recall", query="deploy production fridays",
                           as_of="2026-02-01", include_linked=False),
                await call(client, "echo_recall", query="deploy", as_of="someday")]

    try:
        (e1, captured, _), (e2, then, _), (e3, _bad, text) = with_client(server, body)
    finally:
        server.runner.close()
    assert not e1 and captured["superseded"] == OLD
    assert not e2 and [h["path"] for h in then["primary"]] == [OLD]
    assert then["primary"][0]["validity"] == "current"
    assert e3 and "as_of" in text
