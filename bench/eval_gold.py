"""The gold recall set: a small, realistic vault written through ``capture`` (plus a few
session logs and journal entries) and hand-labelled queries with their relevant notes.

The vault describes a logistics-software team (people, vendors, projects, decisions,
meetings, concepts, runbooks, memories). Notes are written the way people write notes;
queries are phrased the way someone asks later, from memory, so they do not copy the
notes' words: some differ only by inflection (needs the stemmer), some name an entity by
an alias while the relevant notes use its proper name (needs alias expansion).

``run_gold(variants)`` builds the vault once, then ranks every query under each variant
(full, without expansion, without stemming) on its own fresh index.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench.eval_metrics import first_rank, mean_metrics, score_query
from echo_core.hookspecs import hookimpl
from echo_core.models import CaptureRequest
from echo_core.ops.capture import capture
from echo_core.ops.init import init_vault

#: The day the gold vault is read on (freshness is computed against it).
EVAL_TODAY = "2026-03-01"


class Box:
    """A vault folder plus one recall configuration (its own state dir and config file).

    ``sibling(name, ...)`` shares the vault and gets its own state, so variants with other
    tokenizers or plugins never read each other's index.
    """

    def __init__(self, root: Path, vault: Path | None = None, *, name: str = "main",
                 disabled: Sequence[str] = (), tokenizer: str = "porterlite",
                 recall: str = "bm25", extra: Iterable[tuple[str, object]] = ()) -> None:
        self.root = root
        self.vault = vault or root / "vault"
        self.state = root / f"state-{name}"
        self.disabled = tuple(disabled)
        self.extra = tuple(extra)
        self.vault.mkdir(parents=True, exist_ok=True)
        self.state.mkdir(parents=True, exist_ok=True)
        self.config = self.state / "config.toml"
        listed = ", ".join(f'"{d}"' for d in self.disabled)
        self.config.write_text(f'recall = "{recall}"\ntokenizer = "{tokenizer}"\n'
                               f"disabled = [{listed}]\n", encoding="utf-8")

    def env(self, today: str) -> dict[str, str]:
        """An isolated environment: no user config, time pinned to ``today``."""
        home = self.root / "home"
        return {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_STATE_HOME": str(home / ".local/state"),
                "ECHO_CONFIG": str(self.config), "ECHO_TODAY": today}

    def context(self, today: str, config_extra: str = "", vault: str | None = None) -> Any:
        """A fresh ``EchoContext`` on this vault and state, as a new process would build;
        ``config_extra``: TOML lines added to this box's config for this context only
        (e.g. ``key_field_boost = 1``, or ``recall = "hybrid"``, which wins over the
        box's own ``recall``); ``vault``: another vault URL to open instead of the
        folder (a PostgreSQL copy of it, for ``recall = "pgfts"``)."""
        from echo_core.context import create_context
        from echo_core.plugins import create_host

        env = self.env(today)
        if config_extra:
            import hashlib

            digest = hashlib.sha1(config_extra.encode()).hexdigest()[:10]
            variant = self.state / f"config-{digest}.toml"
            base = self.config.read_text(encoding="utf-8")
            if "recall =" in config_extra:
                base = "".join(line for line in base.splitlines(keepends=True)
                               if not line.startswith("recall ="))
            variant.write_text(base + config_extra, encoding="utf-8")
            env["ECHO_CONFIG"] = str(variant)
        host = create_host(disabled=self.disabled, env=env, extra=self.extra)
        return create_context(vault=vault or str(self.vault), state_dir=str(self.state),
                              env=env, host=host)

    def sibling(self, name: str, **kwargs: Any) -> Box:
        """Another configuration on the same vault."""
        return Box(self.root, self.vault, name=name, **kwargs)


@attrs.frozen
class GoldNote:
    """One captured note: written on ``day`` through ``capture``."""

    key: str
    kind: str
    title: str
    body: str
    day: str
    aliases: tuple[str, ...] = ()
    domain: str | None = None


@attrs.frozen
class GoldQuery:
    """A query, what it exercises (plain | stem | alias), and the keys of its relevant notes."""

    qid: str
    kind: str
    query: str
    relevant: tuple[str, ...]


N = GoldNote
NOTES: tuple[GoldNote, ...] = (
    N("maggie", "person", "Margaret Okafor", "Engineering lead for the routing platform. "
      "Chairs the incident reviews and prefers one-year vendor contracts.", "2026-01-05",
      ("Maggie",)),
    N("dana", "person", "Dana Reyes", "Account manager at Vantage Systems. Our contact for "
      "the traffic feed licence, invoices and replacement hardware.", "2026-01-05"),
    N("tomas", "person", "Tomas Lindqvist", "Data engineer. Maintains the Map Tile Pipeline "
      "and the nightly geocoding batch jobs; on call for data issues.", "2026-01-05", ("Tom",)),
    N("priya", "person", "Priya Natarajan", "Product manager for the driver app. Owns the "
      "quarterly roadmap and the Driver App Redesign.", "2026-01-05"),
    N("kenji", "person", "Kenji Watanabe", "Security engineer. Ran the penetration test of "
      "the public API in January.", "2026-01-06"),
    N("lena", "person", "Lena Fischer", "Operations manager at Northwind Logistics; approves "
      "their contract and passes on feedback from the dispatchers.", "2026-01-06"),
    N("vantage", "company", "Vantage Systems", "Vendor of the telematics boxes fitted in "
      "customer vehicles and of the licensed live traffic feed. Pricing is per vehicle per "
      "month; the agreement renews every January.", "2026-01-05", ("VSYS",)),
    N("northwind", "company", "Northwind Logistics", "Our largest customer: 1,400 delivery "
      "vans run the driver app. Main contact: Lena Fischer.", "2026-01-06", ("NWL",)),
    N("brightline", "company", "Brightline Maps", "Former map data supplier. Their licence "
      "fees tripled in 2025.", "2026-01-06"),
    N("navsvc", "project", "Navigation Service", "Turn-by-turn routing API behind the driver "
      "app. Runs on Kubernetes in two regions and calls the geocoder and the live traffic "
      "feed.", "2026-01-07", ("navsvc",)),
    N("telemetry", "project", "Telemetry Ingest", "Receives GPS pings from the Vantage "
      "Systems telematics boxes every 5 seconds; Kafka into ClickHouse. Feeds the arrival "
      "time predictions.", "2026-01-07"),
    N("redesign", "project", "Driver App Redesign", "New onboarding flow, offline maps and "
      "voice guidance for drivers. Led by Priya Natarajan; beta with Northwind Logistics in "
      "March.", "2026-01-07"),
    N("tiles", "project", "Map Tile Pipeline", "Nightly rendering of vector tiles from "
      "OpenStreetMap extracts. Tomas Lindqvist looks after it.", "2026-01-07"),
    N("geofence", "project", "Geofence Alerts", "Alert a dispatcher when a van enters or "
      "leaves a zone the customer drew. Requested by Northwind Logistics.", "2026-01-09"),
    N("osm", "decision", "Move map data to OpenStreetMap", "We stop licensing Brightline Maps "
      "when the current term ends. OpenStreetMap extracts plus our own Map Tile Pipeline "
      "cover every region we serve.", "2026-01-12"),
    N("bluegreen", "decision", "Blue-green rollout for navigational services", "Every "
      "deployment of our navigational services (routing API, geocoder) goes to an idle copy "
      "of the stack; the load balancer switches traffic after health checks pass, and "
      "rollback means switching back.", "2026-01-20"),
    N("ratelimit", "decision", "Per-key rate limits on the public API", "Following the "
      "penetration test, each API key is limited to 100 requests per second. Repeat "
      "offenders face escalating penalties: throttling, then temporary suspension, then "
      "revocation of the key.", "2026-01-28"),
    N("oneyear", "decision", "One-year term for the traffic feed", "We sign the Vantage "
      "Systems traffic feed for one year only and accept the smaller discount, to keep "
      "leverage for the next negotiation.", "2026-02-05"),
    N("renewalcall", "meeting", "Renewal call with Vantage Systems", "Dana Reyes offered a "
      "12% discount on the traffic feed for a three-year commitment. Margaret Okafor asked "
      "for a one-year term instead.", "2026-01-08"),
    N("incident", "meeting", "Incident review: stale routes", "The routing API served stale "
      "routes for 40 minutes after a configuration push. Root cause: the geocoder's "
      "connection pool was saturated, requests timed out and the cache kept serving old "
      "answers. Actions: bounded queues and a circuit breaker.", "2026-01-30"),
    N("roadmap", "meeting", "Quarterly roadmap planning", "Priya Natarajan presented the "
      "driver app roadmap: offline maps first, voice guidance second, onboarding last.",
      "2026-02-10"),
    N("workshop", "meeting", "Northwind dispatcher workshop", "Trained the Northwind "
      "Logistics dispatchers on the fleet dashboard. They asked again for geofence alerts "
      "and for daily mileage exports.", "2026-02-18"),
    N("poolsat", "concept", "Connection Pool Saturation", "When every connection in a pool "
      "is busy, new requests wait in a queue and latency climbs until callers give up. "
      "Remedies: bounded queues, timeouts shorter than the caller's, circuit breakers, a "
      "bigger pool.", "2026-01-31"),
    N("eta", "concept", "Estimated Time of Arrival", "Predicted arrival time for a stop, "
      "computed from the route, live traffic and historical speeds per road segment.",
      "2026-01-10", ("ETA",)),
    N("geocoding", "concept", "Geocoding", "Turning a street address into coordinates. Our "
      "geocoder runs as a service; a nightly batch job re-geocodes every customer address.",
      "2026-01-10"),
    N("breaker", "concept", "Circuit Breaker", "A wrapper that stops calling a failing "
      "dependency after repeated errors and tries again after a cool-down.", "2026-01-31"),
    N("odbl", "reference", "OpenStreetMap Licence Notes", "OpenStreetMap data is under the "
      "ODbL: credit OpenStreetMap contributors on every map view; databases derived from it "
      "must be shared alike.", "2026-01-13"),
    N("hpa", "reference", "Kubernetes Autoscaling Guide", "Horizontal pod autoscaling on CPU "
      "and custom metrics; our routing pods scale on request rate.", "2026-01-14"),
    N("rotate", "skill", "Rotate API Keys", "Issue a new key in the admin console, update the "
      "secret store, restart the consumers, and revoke the old key after 24 hours.",
      "2026-01-29"),
    N("replay", "skill", "Replay Telemetry From Kafka", "Reset the consumer group offset to a "
      "timestamp, run the backfill job, then compare ClickHouse row counts per hour.",
      "2026-02-03"),
    N("stance", "semantic", "Vendor negotiation stance", "Short vendor terms beat bigger "
      "discounts: leverage at the next negotiation matters more than this year's price.",
      "2026-02-05"),
    N("feedout", "episodic", "Traffic feed outage in February", "The live traffic feed from "
      "Vantage Systems stopped for two hours; arrival predictions fell back to historical "
      "speeds and were off by up to 20 minutes.", "2026-02-14"),
    N("draft", "working", "Draft reply to Lena about mileage exports", "Confirm whether the "
      "daily mileage export can ship together with the geofence work.", "2026-02-25"),
    N("oncall", "area", "On-call", "Weekly rotation among four engineers, led by Margaret "
      "Okafor; the pager escalates after 10 minutes; handover every Monday.", "2026-01-05",
      domain="systems"),
)

#: Notes written directly (no capture kind exists for them): key -> (path, text).
SESSION = "---\ntype: session\ncreated: {day}\ntags: [session]\n---\n# Session {title}\n\n{body}\n"
JOURNAL = "---\ntype: daily\ncreated: {day}\ntags: [daily]\n---\n# {day}\n\n## Journal\n\n- {line}\n\n## Agent Log\n"
RAW_NOTES: dict[str, tuple[str, str]] = {
    "s_geocoder": ("_agent/sessions/2026-01-31-1015-geocoder-timeouts.md", SESSION.format(
        day="2026-01-31", title="geocoder timeouts", body=(
            "## Goal\n\nFind why the geocoder timed out during the stale-routes incident.\n\n"
            "## Decisions Made\n\n- Raised the pool size from 20 to 50 connections and set a "
            "2 s client timeout.\n\n## Open Threads\n\n- Load-test the new limits.\n"))),
    "s_offline": ("_agent/sessions/2026-02-12-1600-offline-maps-spike.md", SESSION.format(
        day="2026-02-12", title="offline maps spike", body=(
            "## Goal\n\nEstimate the download size of offline maps for the driver app.\n\n"
            "## Decisions Made\n\n- Vector tiles for one metro area take about 180 MB, so we "
            "ship one pack per region.\n"))),
    "s_mileage": ("_agent/sessions/2026-02-20-0930-mileage-export.md", SESSION.format(
        day="2026-02-20", title="mileage export prototype", body=(
            "## Goal\n\nPrototype the daily mileage export for Northwind Logistics.\n\n"
            "## Decisions Made\n\n- A CSV by email at 06:00 with the distance each van "
            "drove, summed from Telemetry Ingest.\n"))),
    "j_feed": ("journal/daily/2026-02-14.md", JOURNAL.format(day="2026-02-14", line=(
        "Traffic feed down from 09:10 to 11:05; paged Margaret. Drivers complained about "
        "wrong arrival times."))),
    "j_vans": ("journal/daily/2026-02-24.md", JOURNAL.format(day="2026-02-24", line=(
        "Lena Fischer called: Northwind wants to add 300 vans to their fleet in April."))),
}

Q = GoldQuery
QUERIES: tuple[GoldQuery, ...] = (
    Q("p1", "plain", "geofence alerts for Northwind dispatchers", ("geofence", "workshop")),
    Q("p2", "plain", "OpenStreetMap attribution requirements", ("odbl",)),
    Q("p3", "plain", "Kafka consumer offset backfill", ("replay",)),
    Q("p4", "plain", "what pool size did we set for the geocoder", ("s_geocoder",)),
    Q("p5", "plain", "when was the traffic feed down", ("feedout", "j_feed")),
    Q("s1", "stem", "deploying the navigation service", ("bluegreen",)),
    Q("s2", "stem", "penalty for clients who exceed the rate limit", ("ratelimit",)),
    Q("s3", "stem", "who renders the map tiles every night", ("tiles",)),
    Q("s4", "stem", "what happens when a connection pool saturates", ("poolsat",)),
    Q("s5", "stem", "how big are the offline map downloads", ("s_offline",)),
    Q("a1", "alias", "what discount did VSYS offer", ("renewalcall",)),
    Q("a2", "alias", "What does Maggie lead?", ("maggie", "oncall")),
    Q("a3", "alias", "which project ingests data from VSYS boxes", ("telemetry",)),
    Q("a4", "alias", "what did NWL dispatchers ask for", ("workshop", "geofence")),
    Q("a5", "alias", "what is Tom maintaining", ("tomas", "tiles")),
)


# --- the no-stemming tokenizer of the ablation ---------------------------------------------


class PlainWordsTokenizer:
    """porterlite without the stemmer: lowercase words, the same stopwords, length > 1."""

    name = "plainwords"

    def tokenize(self, text: str) -> list[str]:
        import re
        import unicodedata

        from plugins.stem_porterlite.stopwords import STOPWORDS

        if not text.isascii():
            text = unicodedata.normalize("NFKC", text)
        words = re.findall(r"[^\W_]+", text.lower().replace("'", "").replace("\u2019", ""))
        return [w for w in words if len(w) > 1 and w not in STOPWORDS]


class PlainWordsPlugin:
    """Registers ``plainwords`` (config ``tokenizer = "plainwords"`` selects it)."""

    @hookimpl
    def register_tokenizers(self, register: Any) -> None:
        register(PlainWordsTokenizer.name, PlainWordsTokenizer())


@attrs.frozen
class Variant:
    """A recall configuration: plugins disabled, the tokenizer, extra plugins, the
    ranker."""

    name: str
    disabled: tuple[str, ...] = ()
    tokenizer: str = "porterlite"
    extra: tuple[tuple[str, object], ...] = ()
    recall: str = "bm25"


VARIANTS: tuple[Variant, ...] = (
    Variant("full"),
    Variant("no-expansion", disabled=("expand_alias",)),
    Variant("no-stemming", disabled=("stem_porterlite",), tokenizer="plainwords",
            extra=(("bench_plainwords", PlainWordsPlugin()),)),
)


# --- building and scoring -----------------------------------------------------------------


def build_gold_vault(box: Box) -> dict[str, str]:
    """Write the gold vault into ``box``; key -> vault path."""
    paths: dict[str, str] = {}
    ctx = box.context(today=NOTES[0].day)
    init_vault(ctx)
    for key, (path, text) in RAW_NOTES.items():  # journals first: capture appends to them
        (box.vault / path).parent.mkdir(parents=True, exist_ok=True)
        (box.vault / path).write_text(text, encoding="utf-8")
        paths[key] = path
    for note in sorted(NOTES, key=lambda n: n.day):
        ctx = box.context(today=note.day)
        env = capture(ctx, CaptureRequest(title=note.title, kind=note.kind, body=note.body,
                                          aliases=note.aliases, domain=note.domain))
        if env.action != "created":
            raise RuntimeError(f"gold note {note.key!r} was not created: {env.action} "
                               f"{env.message}")
        paths[note.key] = env.data.path
    return paths


def rank_gold(ctx: Any, paths: Mapping[str, str], limit: int = 10) -> list[dict[str, Any]]:
    """Run every gold query on ``ctx``; one row per query with metrics and the ranking."""
    from echo_core.ops.recall import recall

    by_path = {p: k for k, p in paths.items()}
    rows = []
    for q in QUERIES:
        relevant = [paths[k] for k in q.relevant]
        hits = recall(ctx, q.query, limit=limit, include_linked=False).data.primary
        ranked = [h.path for h in hits]
        rows.append({"qid": q.qid, "kind": q.kind, "query": q.query,
                     "relevant": list(q.relevant),
                     "top5": [by_path.get(p, p) for p in ranked[:5]],
                     "first_rank": first_rank(ranked, relevant),
                     **score_query(ranked, relevant, ks=(5,))})
    return rows


def run_gold(root: Path, variants: Sequence[Variant] = VARIANTS,
             extra_plugins: Iterable[tuple[str, object]] = ()) -> dict[str, Any]:
    """Build the vault under ``root``, rank the queries under each variant (each on its
    own freshly rebuilt index); JSON-ready results."""
    from echo_core.ops.recall_index import rebuild_index

    extra_plugins = tuple(extra_plugins)
    box = Box(root, extra=extra_plugins)
    start = time.perf_counter()
    paths = build_gold_vault(box)
    build_s = time.perf_counter() - start
    out: dict[str, Any] = {"notes": len(paths), "queries": len(QUERIES),
                           "build_seconds": round(build_s, 3), "variants": {}}
    for variant in variants:
        vbox = box.sibling(variant.name, disabled=variant.disabled, tokenizer=variant.tokenizer,
                           recall=variant.recall, extra=extra_plugins + variant.extra)
        ctx = vbox.context(today=EVAL_TODAY)
        rebuild_index(ctx)
        rows = rank_gold(ctx, paths)
        summary = mean_metrics({"R@5": r["R@5"], "MRR": r["MRR"]} for r in rows)
        out["variants"][variant.name] = {
            "summary": summary,
            "missed": [r["qid"] for r in rows if r["R@5"] < 1.0],
            "demoted": [r["qid"] for r in rows if r["R@5"] == 1.0 and r["MRR"] < 1.0],
            "queries": rows,
        }
    return out
