"""``ingest`` the way it fails: refused schemes and redirects, HTTP errors, an unreachable
host, content that is not text, nothing to extract, a body over the cap, a damaged PDF;
each a clear error with its exit code and nothing written. Plus redaction before the
write, a kill mid-write, and the CLI and MCP surfaces."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.ops.ingest import ingest
from tests.capture_kit import VaultBox
from tests.cli_inproc import run_main
from tests.ingest_kit import ARTICLE, PDF, Page, Site, closed_port, loopback_site, site_pages
from tests.mcp_kit import call, make_server, with_client

REFS = "resources/references"
GEARS = f"{REFS}/gear-trains-explained.md"
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))


@pytest.fixture()
def box(tmp_path: Path) -> VaultBox:
    return VaultBox(tmp_path).init()


@pytest.fixture()
def site() -> Iterator[Site]:
    pages = site_pages()
    pages.update({
        "/to-js": Page(status=302, location="javascript:alert(1)"),
        "/to-file": Page(status=301, location="file:///etc/passwd"),
        "/to-article": Page(status=302, location="/articles/gear-trains.html"),
        "/gone": Page(b"gone", "text/plain", 410),
        "/forbidden": Page(b"no", "text/plain", 403),
        "/broken": Page(b"oops", "text/plain", 503),
        "/logo.png": Page(PNG, "image/png"),
        "/empty.html": Page(b"<html><body><script>var a = 1;</script></body></html>"),
        "/blank.txt": Page(b"  \n\n \n", "text/plain"),
        "/bad.pdf": Page(b"%PDF-1.4\n" + bytes(range(256)) * 4, "application/pdf"),
        "/slow.html": Page(ARTICLE, delay=2.0),
        "/loop": Page(status=302, location="/loop"),
    })
    with loopback_site(pages) as running:
        yield running


def _fails(box: VaultBox, source: str, code: ExitCode, words: str, **env: str) -> str:
    before = box.tree_digest()
    with pytest.raises(EchoError) as caught:
        ingest(box.ctx(**env), source)
    assert caught.value.code == code, caught.value.message
    assert words in caught.value.message, caught.value.message
    assert box.tree_digest() == before  # nothing written
    return caught.value.message


@pytest.mark.parametrize(("source", "words"), [
    ("file:///etc/passwd", "not an http(s) URL"),
    ("javascript:alert(1)", "not an http(s) URL"),
    ("data:text/html,<p>hi</p>", "not an http(s) URL"),
    ("ftp://127.0.0.1/x.md", "not an http(s) URL"),
    ("http://", "not an http(s) URL"),
    ("   ", "source: empty"),
])
def test_other_schemes_are_refused(box: VaultBox, source: str, words: str) -> None:
    _fails(box, source, ExitCode.USAGE, words)


@pytest.mark.parametrize("path", ["/to-js", "/to-file"])
def test_a_redirect_to_another_scheme_is_refused(box: VaultBox, site: Site, path: str) -> None:
    message = _fails(box, site.url(path), ExitCode.USAGE, "a redirect from")
    assert site.url(path) in message


def test_an_http_redirect_is_followed_and_the_asked_url_recorded(box: VaultBox,
                                                                  site: Site) -> None:
    env = ingest(box.ctx(), site.url("/to-article"))
    assert env.ok and env.data.path == GEARS
    assert box.frontmatter(GEARS)["source_url"] == site.url("/to-article")
    assert site.hits == ["/to-article", "/articles/gear-trains.html"]


def test_a_redirect_loop_stops(box: VaultBox, site: Site) -> None:
    _fails(box, site.url("/loop"), ExitCode.USAGE, "redirects more than 5 times")


@pytest.mark.parametrize(("path", "code", "words"), [
    ("/nowhere.html", ExitCode.NOT_FOUND, "HTTP 404"),
    ("/gone", ExitCode.NOT_FOUND, "HTTP 410"),
    ("/forbidden", ExitCode.USAGE, "HTTP 403"),
    ("/broken", ExitCode.UNAVAILABLE, "HTTP 503"),
    ("/logo.png", ExitCode.USAGE, "image/png content, not text"),
    ("/empty.html", ExitCode.USAGE, "no text found"),
    ("/blank.txt", ExitCode.USAGE, "no text found"),
    ("/bad.pdf", ExitCode.USAGE, "not a readable PDF"),
])
def test_http_failures_and_bad_content(box: VaultBox, site: Site, path: str, code: ExitCode,
                                       words: str) -> None:
    _fails(box, site.url(path), code, words)


def test_an_unreachable_host_is_unavailable(box: VaultBox) -> None:
    _fails(box, f"http://127.0.0.1:{closed_port()}/a.html", ExitCode.UNAVAILABLE,
           "cannot fetch")


def test_a_slow_server_times_out(box: VaultBox, site: Site) -> None:
    _fails(box, site.url("/slow.html"), ExitCode.UNAVAILABLE, "timed out",
           ECHO_INGEST_TIMEOUT="0.3")


def test_a_body_over_the_cap_is_refused(box: VaultBox, site: Site, tmp_path: Path) -> None:
    _fails(box, site.url("/articles/gear-trains.html"), ExitCode.USAGE,
           "larger than 1000 bytes", ECHO_INGEST_MAX_BYTES="1000")
    big = tmp_path / "big.txt"
    big.write_text("word " * 400, encoding="utf-8")
    _fails(box, str(big), ExitCode.USAGE, "larger than 1000 bytes",
           ECHO_INGEST_MAX_BYTES="1000")


@pytest.mark.parametrize(("name", "data", "words"), [
    ("missing.md", None, "no such file"),
    ("photo.jpg", b"\xff\xd8\xff\xe0", "extension '.jpg'"),
    ("fake.pdf", b"just text", "not text (nor a PDF)"),
    ("binary.txt", bytes(range(256)), "is not text"),
])
def test_bad_local_files(box: VaultBox, tmp_path: Path, name: str, data: bytes | None,
                         words: str) -> None:
    if data is not None:
        (tmp_path / name).write_bytes(data)
    _fails(box, str(tmp_path / name), ExitCode.USAGE, words)


def test_a_folder_is_not_a_file(box: VaultBox, tmp_path: Path) -> None:
    _fails(box, str(tmp_path), ExitCode.USAGE, "is not a file")


def test_secrets_and_private_text_never_reach_the_vault(box: VaultBox, tmp_path: Path) -> None:
    key = "sk-ant-api03-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z" * 2
    page = (f"<html><head><title>Deploy notes</title></head><body><article><h1>Deploy "
            f"notes</h1><p>The deploy script reads its key from the vault service, never "
            f"from the repository; during the incident someone pasted {key} into the "
            f"runbook and it had to be rotated the same afternoon.</p><p>Rotate keys every "
            f"quarter. <private>the staging password is hunter2-staging</private> Keep the "
            f"runbook short and current, and review it after every incident.</p>"
            f"</article></body></html>").encode()
    with loopback_site({"/deploy.html": Page(page)}) as site:
        env = ingest(box.ctx(), site.url("/deploy.html"))
    assert env.ok and "private" in env.data.redacted and len(env.data.redacted) >= 2
    stored = "".join(p.read_text(encoding="utf-8") for p in (box.vault / REFS).rglob("*.md"))
    assert "Rotate keys every quarter" in stored and "[REDACTED:" in stored
    assert key not in stored and key[:20] not in stored
    assert "hunter2" not in stored and "staging password" not in stored


class _Killed(BaseException):
    """Stands for a kill: nothing in the write path catches it."""


def test_a_kill_mid_write_leaves_the_document_whole_after_the_next_run(
        box: VaultBox, site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    from echo_core.vault import Vault

    real, real_replace = Vault.write_note, Vault.replace_note
    written: list[str] = []

    def dying(self: Any, path: str, text: str, **kw: Any) -> None:
        if len(written) == 2:
            raise _Killed
        written.append(path)
        real(self, path, text, **kw)

    def dying_replace(self: Any, path: str, text: str, prior: str | None) -> bool:
        if len(written) == 2:
            raise _Killed
        written.append(path)
        return real_replace(self, path, text, prior)

    monkeypatch.setattr(Vault, "write_note", dying)
    monkeypatch.setattr(Vault, "replace_note", dying_replace)
    with pytest.raises(_Killed):
        ingest(box.ctx(), site.url("/articles/gear-trains.html"))
    monkeypatch.setattr(Vault, "write_note", real)
    monkeypatch.setattr(Vault, "replace_note", real_replace)
    assert len(written) == 2  # torn: two of seven files landed
    env = ingest(box.ctx(), site.url("/articles/gear-trains.html"))
    assert env.ok and env.action == "unchanged"  # the interrupted write was finished
    parts = sorted((box.vault / REFS / "gear-trains-explained").glob("*.md"))
    assert len(parts) == box.frontmatter(GEARS)["parts"] == 5
    log = box.read("journal/daily/2026-03-01.md")
    assert log.count("ingested reference [[gear-trains-explained]]") == 1


def test_cli_ingest_dry_run_then_write(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                       monkeypatch: pytest.MonkeyPatch, site: Site) -> None:
    box = VaultBox(tmp_path).init()
    for key, value in box.env().items():
        monkeypatch.setenv(key, value)
    base = ["--vault", str(box.vault), "--state-dir", str(box.state)]
    before = box.tree_digest()
    dry = run_main(["ingest", *base, site.url("/papers/escapements.pdf"), "--dry-run"],
                   capsys, monkeypatch)
    assert dry.code == 0 and "would write 2 note(s)" in dry.out, dry
    assert "clock-escapements-part-01.md" in dry.out and "chars)" in dry.out
    assert box.tree_digest() == before
    done = run_main(["ingest", *base, site.url("/papers/escapements.pdf")], capsys, monkeypatch)
    assert done.code == 0 and "created resources/references/clock-escapements.md" in done.out
    bad = run_main(["ingest", *base, "file:///etc/passwd"], capsys, monkeypatch)
    assert bad.code == 2 and "not an http(s) URL" in bad.err
    missing = run_main(["ingest", *base, site.url("/nope.pdf")], capsys, monkeypatch)
    assert missing.code == 44 and "HTTP 404" in missing.err


def test_mcp_echo_ingest(box: VaultBox, site: Site) -> None:
    # the loopback test site is a private host: allowed here on purpose
    server = make_server(box, env=box.env(ECHO_INGEST_PRIVATE_HOSTS="allow"))

    async def body(client: Any) -> None:
        err, data, _ = await call(client, "echo_ingest", source=site.url("/docs/guide.md"),
                                  dry_run=True)
        assert not err and data["action"] == "dry-run" and not (box.vault / REFS /
                                                               "workshop-safety-guide.md").exists()
        err, data, text = await call(client, "echo_ingest", source=site.url("/docs/guide.md"))
        assert not err and data["action"] == "created"
        assert data["path"] == f"{REFS}/workshop-safety-guide.md" and data["parts"]
        err, data, _ = await call(client, "echo_ingest", source=site.url("/docs/guide.md"))
        assert not err and data["action"] == "unchanged"
        err, data, text = await call(client, "echo_ingest", source="javascript:alert(1)")
        assert err and "not an http(s) URL" in text

    try:
        with_client(server, body)
    finally:
        server.runner.close()
    assert PDF.startswith(b"%PDF-")


def test_over_mcp_only_public_urls_are_ingested(box: VaultBox, site: Site,
                                                tmp_path: Path) -> None:
    local = tmp_path / "notes.md"
    local.write_text("# Private notes\n\nsecret plans\n", "utf-8")
    server = make_server(box)
    before = box.tree_digest()

    async def body(client: Any) -> list[tuple[bool, str]]:
        out = []
        for source in (site.url("/docs/guide.md"), str(local),
                       "http://169.254.169.254/latest/meta-data/", "http://10.0.0.1/x"):
            err, _data, text = await call(client, "echo_ingest", source=source)
            out.append((err, text))
        return out

    try:
        results = with_client(server, body)
    finally:
        server.runner.close()
    assert all(err for err, _ in results), results
    assert "not a public address" in results[0][1]  # the loopback site
    assert "URL only" in results[1][1]
    assert "not a public address" in results[2][1] and "not a public address" in results[3][1]
    assert box.tree_digest() == before


def test_a_redirect_to_a_private_host_is_refused_over_mcp(box: VaultBox) -> None:
    from echo_core.errors import EchoError
    from echo_core.ops.ingest_fetch import require_public_host

    with pytest.raises(EchoError) as err:
        require_public_host("http://localhost:8080/admin")
    assert err.value.code == 2
    require_public_host("http://93.184.215.14/")  # a public address passes
