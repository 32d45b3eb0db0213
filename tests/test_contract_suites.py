"""The contract suites are reusable and can fail.

Each suite runs here against a tiny correct implementation (a subclass, as a plugin author
would write it), and against deliberately broken ones whose defects the suite must catch:
the suite's test method is called directly with the broken object and must raise
``AssertionError``.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

import attrs
import click
import pytest

from echo_core.errors import EchoError, ExitCode
from echo_core.hookspecs import Register, hookimpl
from echo_core.models import CaptureRequest, Envelope, GateStop, Note
from echo_core.operations import Operation, param
from echo_core.protocols import IndexDoc, Tokenizer, WeightedTerm
from echo_core.testing import (
    BuildTargetContract,
    CommandsContract,
    EventsContract,
    ExpanderContract,
    GateContract,
    OperationsContract,
    PluginContract,
    QueueContract,
    RankerContract,
    TokenizerContract,
)
from echo_core.testing.tokenizer_contract import PUNCTUATION_ONLY

# --- tokenizer ----------------------------------------------------------------------


class WordTokenizer:
    """Lowercased runs of letters and digits (and a ``TermFinder``)."""

    def tokenize(self, text: str) -> list[str]:
        return re.findall(r"[^\W_]+", text.lower())

    def terms_among(self, text: str, wanted: AbstractSet[str]) -> set[str]:
        return set(wanted) & set(self.tokenize(text))


class FindsTooMuchTokenizer(WordTokenizer):
    def terms_among(self, text: str, wanted: AbstractSet[str]) -> set[str]:
        return set(wanted)


class TestWordTokenizer(TokenizerContract):
    @pytest.fixture
    def tokenizer(self) -> Tokenizer:
        return WordTokenizer()


class KeepsCaseTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return re.findall(r"[^\W_]+", text)


class KeepsPunctuationTokenizer:
    def tokenize(self, text: str) -> list[str]:
        return text.lower().split()


class CountingTokenizer:
    """Different output on every call."""

    def __init__(self) -> None:
        self.calls = itertools.count()

    def tokenize(self, text: str) -> list[str]:
        return [*WordTokenizer().tokenize(text), f"call{next(self.calls)}"]


def test_tokenizer_suite_catches_uppercase_tokens() -> None:
    suite = TokenizerContract()
    with pytest.raises(AssertionError):
        suite.test_output_is_lowercase(KeepsCaseTokenizer())
    with pytest.raises(AssertionError):
        suite.test_is_case_insensitive(KeepsCaseTokenizer())


def test_tokenizer_suite_catches_punctuation_tokens() -> None:
    with pytest.raises(AssertionError):
        TokenizerContract().test_text_without_words_gives_no_tokens(
            KeepsPunctuationTokenizer(), PUNCTUATION_ONLY
        )


def test_tokenizer_suite_catches_terms_among_that_the_tokens_do_not_hold() -> None:
    with pytest.raises(AssertionError):
        TokenizerContract().test_terms_among_are_the_wanted_terms_the_text_holds(
            FindsTooMuchTokenizer())


def test_tokenizer_suite_catches_nondeterminism() -> None:
    with pytest.raises(AssertionError):
        TokenizerContract().test_is_deterministic(CountingTokenizer())


# --- ranker -------------------------------------------------------------------------


class PostingsRanker:
    """TF-IDF over a dict of postings: term -> {path: term frequency}."""

    def __init__(self, tokenizer: Tokenizer) -> None:
        self.tokenizer = tokenizer
        self.postings: dict[str, dict[str, int]] = {}
        self.doc_terms: dict[str, Counter[str]] = {}

    def upsert(self, doc: IndexDoc) -> None:
        self.remove(doc.path)
        counts = Counter(self.tokenizer.tokenize(f"{doc.title}\n{doc.text}"))
        self.doc_terms[doc.path] = counts
        for term, tf in counts.items():
            self.postings.setdefault(term, {})[doc.path] = tf

    def remove(self, path: str) -> None:
        for term in self.doc_terms.pop(path, Counter()):
            self.postings[term].pop(path, None)

    def idf(self, term: str) -> float:
        df = len(self.postings.get(term, {}))
        return math.log(1 + len(self.doc_terms) / df) if df else 0.0

    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        scores: dict[str, float] = {}
        matched: set[str] = set()
        for wt in terms:
            idf = self.idf(wt.term)
            for path, tf in self.postings.get(wt.term, {}).items():
                scores[path] = scores.get(path, 0.0) + wt.weight * tf * idf
                if not wt.boost_only:
                    matched.add(path)
        ranked = [(p, s) for p, s in scores.items() if p in matched]
        return sorted(ranked, key=lambda item: (-item[1], item[0]))[:limit]


class TestPostingsRanker(RankerContract):
    @pytest.fixture
    def ranker(self) -> PostingsRanker:
        return PostingsRanker(WordTokenizer())

    @pytest.fixture
    def ranker_factory(self) -> Callable[[Tokenizer, str], PostingsRanker]:
        return lambda tokenizer, _state_dir: PostingsRanker(tokenizer)


class NoIdfRanker(PostingsRanker):
    def idf(self, term: str) -> float:
        return 1.0


class ForgetfulRemoveRanker(PostingsRanker):
    def remove(self, path: str) -> None:
        pass


class LeakyBoostRanker(PostingsRanker):
    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        plain = [WeightedTerm(t.term, t.weight) for t in terms]
        return super().search(plain, limit)


class NoLimitRanker(PostingsRanker):
    def search(self, terms: Sequence[WeightedTerm], limit: int) -> list[tuple[str, float]]:
        return super().search(terms, 10_000)


def _identity(word: str) -> str:
    return word


@pytest.mark.parametrize(
    ("broken", "test_name", "extra"),
    [
        (NoIdfRanker, "test_document_with_rare_term_ranks_first", {}),
        (ForgetfulRemoveRanker, "test_removed_document_disappears", {}),
        (ForgetfulRemoveRanker, "test_upsert_of_same_path_replaces_the_document", {}),
        (LeakyBoostRanker, "test_boost_only_terms_never_bring_in_documents", {}),
        (NoLimitRanker, "test_limit_is_honoured", {"limit": 3}),
    ],
)
def test_ranker_suite_catches_broken_rankers(
    broken: type[PostingsRanker], test_name: str, extra: dict[str, Any]
) -> None:
    test = getattr(RankerContract(), test_name)
    with pytest.raises(AssertionError):
        test(ranker=broken(WordTokenizer()), to_term=_identity, **extra)


# --- expander -----------------------------------------------------------------------


class AliasExpander:
    """Expands a query word to the aliases listed for it in the context mapping."""

    weight = 0.5

    def expand(self, query: str, context: Any) -> list[WeightedTerm]:
        words = query.lower().split()
        table: Mapping[str, Sequence[str]] = context or {}
        return [
            WeightedTerm(alias, self.weight)
            for word in words
            for alias in table.get(word, ())
            if alias not in words
        ]


class TestAliasExpander(ExpanderContract):
    @pytest.fixture
    def expander(self) -> AliasExpander:
        return AliasExpander()

    @pytest.fixture
    def expansion_context(self) -> dict[str, list[str]]:
        return {"k8s": ["kubernetes", "kube"]}

    @pytest.fixture
    def expanding_query(self) -> str:
        return "k8s rollout"


class HeavyAliasExpander(AliasExpander):
    weight = 2.0


def test_expander_suite_catches_weights_above_one() -> None:
    with pytest.raises(AssertionError):
        ExpanderContract().test_weights_are_in_zero_one(
            HeavyAliasExpander(), {"k8s": ["kubernetes"]}, "k8s"
        )


# --- queue --------------------------------------------------------------------------

STATES = {"done", "needs_attention"}


class MemoryQueue:
    """Records in insertion order; ``idempotency_key`` deduplicates."""

    def __init__(self) -> None:
        self.records: dict[str, dict[str, Any]] = {}
        self.ids = (f"q{n}" for n in itertools.count(1))

    def put(self, record: Mapping[str, Any]) -> str:
        key = record.get("idempotency_key")
        for existing in self.records.values():
            if key is not None and existing.get("idempotency_key") == key:
                return str(existing["id"])
        record_id = next(self.ids)
        self.records[record_id] = {**record, "id": record_id, "state": "pending"}
        return record_id

    def pending(self) -> list[Mapping[str, Any]]:
        return [dict(r) for r in self.records.values()]

    def mark(self, record_id: str, state: str, detail: str = "") -> None:
        if state not in STATES:
            raise EchoError(f"unknown state {state!r}; use one of {sorted(STATES)}", ExitCode.USAGE)
        if state == "done":
            self.records.pop(record_id, None)
        else:
            self.records[record_id].update(state=state, detail=detail)


class TestMemoryQueue(QueueContract):
    @pytest.fixture
    def queue(self) -> MemoryQueue:
        return MemoryQueue()


class NoDedupQueue(MemoryQueue):
    def put(self, record: Mapping[str, Any]) -> str:
        return super().put({k: v for k, v in record.items() if k != "idempotency_key"} | {"k": 1})


class NewestFirstQueue(MemoryQueue):
    def pending(self) -> list[Mapping[str, Any]]:
        return list(reversed(super().pending()))


class LaxStateQueue(MemoryQueue):
    def mark(self, record_id: str, state: str, detail: str = "") -> None:
        if state in STATES:
            super().mark(record_id, state, detail)


class DroppingQueue(MemoryQueue):
    def mark(self, record_id: str, state: str, detail: str = "") -> None:
        super().mark(record_id, "done" if state in STATES else state, detail)


@pytest.mark.parametrize(
    ("broken", "test_name", "extra"),
    [
        (NoDedupQueue, "test_same_idempotency_key_is_queued_once", {}),
        (NewestFirstQueue, "test_pending_is_oldest_first", {}),
        (LaxStateQueue, "test_unknown_state_is_a_usage_error", {"state": "finished"}),
        (DroppingQueue, "test_needs_attention_stays_visible_with_detail", {}),
    ],
)
def test_queue_suite_catches_broken_queues(
    broken: type[MemoryQueue], test_name: str, extra: dict[str, Any]
) -> None:
    test = getattr(QueueContract(), test_name)
    with pytest.raises(AssertionError):
        test(queue=broken(), **extra)


# --- gate ---------------------------------------------------------------------------


class TitleGate:
    """Stops a capture whose title names an existing note; ``ctx`` maps title -> path."""

    @hookimpl
    def gate_capture(self, request: CaptureRequest, ctx: Any) -> GateStop | None:
        existing: Mapping[str, str] = ctx or {}
        path = existing.get(request.title)
        if path is None:
            return None
        slug = request.title.lower().replace(" ", "-")
        return GateStop(
            reason=f"{request.title!r} already exists at {path}; update it or pass force",
            candidates=({"slug": slug, "path": path, "score": 1.0},),
        )


class TestTitleGate(GateContract):
    @pytest.fixture
    def gate_plugin(self) -> TitleGate:
        return TitleGate()

    @pytest.fixture
    def gate_context(self) -> dict[str, str]:
        return {"Kubernetes": "resources/kubernetes.md"}

    @pytest.fixture
    def passing_request(self) -> CaptureRequest:
        return CaptureRequest(title="Something new")

    @pytest.fixture
    def stopping_request(self) -> CaptureRequest:
        return CaptureRequest(title="Kubernetes")


class StopsEverythingGate:
    @hookimpl
    def gate_capture(self, request: CaptureRequest, ctx: Any) -> GateStop | None:
        return GateStop(reason="no", candidates=({"slug": "x", "path": "x.md", "score": 1},))


class SilentStopGate:
    @hookimpl
    def gate_capture(self, request: CaptureRequest, ctx: Any) -> GateStop | None:
        return GateStop(reason="", candidates=({"path": "x.md"},))


class FlakyGate:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def gate_capture(self, request: CaptureRequest, ctx: Any) -> GateStop | None:
        self.calls += 1
        return TitleGate().gate_capture(request, ctx) if self.calls % 2 else None


@pytest.mark.parametrize(
    ("broken", "test_name"),
    [
        (StopsEverythingGate, "test_passing_request_is_let_through"),
        (SilentStopGate, "test_stopping_request_is_stopped_with_candidates"),
        (FlakyGate, "test_answers_are_deterministic"),
    ],
)
def test_gate_suite_catches_broken_gates(broken: type[object], test_name: str) -> None:
    test = getattr(GateContract(), test_name)
    kwargs = {
        "gate_plugin": broken(),
        "gate_context": {"Kubernetes": "resources/kubernetes.md"},
        "passing_request": CaptureRequest(title="Something new"),
        "stopping_request": CaptureRequest(title="Kubernetes"),
    }
    wanted = test.__code__.co_varnames[1 : test.__code__.co_argcount]
    with pytest.raises(AssertionError):
        test(**{name: kwargs[name] for name in wanted})


# --- commands -----------------------------------------------------------------------


@click.command("hello")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def hello_command(as_json: bool) -> None:
    """Say hello (a contract-suite example)."""
    click.echo('{"ok": true}' if as_json else "hello")


@click.command("doctor")
def bare_doctor() -> None:
    click.echo("fine")


class HelloCommands:
    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        cli.add_command(hello_command)


class BareDoctorCommands:
    @hookimpl
    def register_commands(self, cli: click.Group) -> None:
        cli.add_command(bare_doctor)


class TestHelloCommands(CommandsContract):
    @pytest.fixture
    def plugin(self) -> HelloCommands:
        return HelloCommands()

    @pytest.fixture
    def reserved_command_names(self) -> set[str]:
        return {"init", "doctor", "plugins"}


@pytest.mark.parametrize(
    "test_name",
    [
        "test_every_command_has_help_text",
        "test_names_do_not_collide_with_reserved_ones",
    ],
)
def test_commands_suite_catches_bare_commands(test_name: str) -> None:
    suite = CommandsContract()
    with pytest.raises(AssertionError):
        if test_name == "test_names_do_not_collide_with_reserved_ones":
            suite.test_names_do_not_collide_with_reserved_ones(BareDoctorCommands(), {"doctor"})
        else:
            getattr(suite, test_name)(BareDoctorCommands())


# --- operations ---------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class HelloParams:
    name: str = param("world", help="Who to greet.", max_length=50)


def hello(ctx: Any, p: HelloParams) -> Envelope:
    return Envelope(True, "greeted", f"hello {p.name}")


class HelloOperations:
    def __init__(self, name: str = "hello", description: str = "") -> None:
        self.name = name
        self.description = description or (
            "Greets someone by name, e.g. a teammate. Use it to check the server answers. "
            "Returns the greeting."
        )

    @hookimpl
    def register_operations(self, register: Register) -> None:
        register(self.name, Operation(self.name, "Greet someone.", self.description,
                                      HelloParams, hello, profile="core"))


class TestHelloOperations(OperationsContract):
    @pytest.fixture
    def plugin(self) -> HelloOperations:
        return HelloOperations()

    @pytest.fixture
    def examples(self) -> dict[str, dict[str, Any]]:
        return {"hello": {"name": "Ada"}}


def test_operations_suite_catches_bad_names_long_descriptions_and_bad_examples() -> None:
    suite = OperationsContract()
    with pytest.raises(AssertionError, match="kebab-case"):
        suite.test_declarations_are_well_formed(HelloOperations(name="Hello_Op"))
    wordy = HelloOperations(description="One. Two. Three. Four.")
    with pytest.raises(AssertionError):
        suite.test_descriptions_are_short_and_present(wordy)
    with pytest.raises(EchoError, match="name: must have at most 50"):
        suite.test_examples_validate_on_every_surface(HelloOperations(), {"hello": {"name": "x" * 51}})


# --- build targets ------------------------------------------------------------------


class HooksPart:
    """Writes a hooks file and a readme."""

    def contribute(self, out_dir: str, context: Any) -> Iterable[str]:
        root = Path(out_dir)
        (root / "hooks").mkdir(parents=True, exist_ok=True)
        (root / "hooks" / "hooks.json").write_text('{"SessionStart": []}\n', encoding="utf-8")
        (root / "README.md").write_text(f"# {context or 'echo'}\n", encoding="utf-8")
        return ["hooks/hooks.json", "README.md"]


class TestHooksPart(BuildTargetContract):
    @pytest.fixture
    def build_part(self) -> HooksPart:
        return HooksPart()

    @pytest.fixture
    def build_context(self) -> str:
        return "echo-memory"


class StampedPart(HooksPart):
    def __init__(self) -> None:
        self.runs = itertools.count()

    def contribute(self, out_dir: str, context: Any) -> Iterable[str]:
        (Path(out_dir) / "stamp.txt").write_text(f"{next(self.runs)}\n")
        return [*super().contribute(out_dir, context), "stamp.txt"]


class LeakyPart(HooksPart):
    def contribute(self, out_dir: str, context: Any) -> Iterable[str]:
        (Path(out_dir).parent / "sibling" / "leak.txt").write_text("oops\n")
        return super().contribute(out_dir, context)


def test_build_suite_catches_nondeterminism_and_leaks(tmp_path: Path) -> None:
    suite = BuildTargetContract()
    with pytest.raises(AssertionError):
        suite.test_is_deterministic(StampedPart(), None, tmp_path / "a")
    with pytest.raises(AssertionError):
        suite.test_writes_only_inside_out_dir(LeakyPart(), None, tmp_path / "b")


# --- events -------------------------------------------------------------------------


class TitleIndex:
    """Keeps path -> title current by listening to note events."""

    def __init__(self) -> None:
        self.titles: dict[str, str] = {}
        self.sessions = 0

    @hookimpl
    def on_note_written(self, note: Note, ctx: Any) -> None:
        self.titles[note.path] = note.title

    @hookimpl
    def on_note_deleted(self, path: str, ctx: Any) -> None:
        self.titles.pop(path, None)

    @hookimpl
    def on_session_start(self, ctx: Any) -> None:
        self.sessions = 1


class TestTitleIndexEvents(EventsContract):
    @pytest.fixture
    def plugin(self) -> TitleIndex:
        return TitleIndex()

    @pytest.fixture
    def event_observer(self, plugin: TitleIndex) -> Callable[[], Any]:
        return lambda: (dict(plugin.titles), plugin.sessions)


class AppendingLog(TitleIndex):
    def __init__(self) -> None:
        super().__init__()
        self.log: list[str] = []

    @hookimpl
    def on_note_written(self, note: Note, ctx: Any) -> None:
        self.log.append(note.path)


def test_events_suite_catches_non_idempotent_hooks() -> None:
    plugin = AppendingLog()
    with pytest.raises(AssertionError):
        EventsContract().test_note_written_is_safe_and_idempotent(
            plugin, None, lambda: list(plugin.log)
        )


# --- plugins ------------------------------------------------------------------------


class RecallPlugin:
    """Registers a tokenizer and a ranker factory."""

    @hookimpl
    def register_tokenizers(self, register: Register) -> None:
        register("words", WordTokenizer())

    @hookimpl
    def register_rankers(self, register: Register) -> None:
        register("postings", lambda tokenizer, state_dir: PostingsRanker(tokenizer))


class TestRecallPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> RecallPlugin:
        return RecallPlugin()

    @pytest.fixture
    def plugin_name(self) -> str:
        return "recall_words"


class TestEventsOnlyPlugin(PluginContract):
    """A plugin with no registration hook: the conflict test just checks nothing leaks."""

    @pytest.fixture
    def plugin(self) -> TitleIndex:
        return TitleIndex()

    @pytest.fixture
    def plugin_name(self) -> str:
        return "title_index"


class DoubleRegisterPlugin:
    @hookimpl
    def register_tokenizers(self, register: Register) -> None:
        register("words", WordTokenizer())
        register("words", WordTokenizer())


class MisspelledPlugin:
    @hookimpl
    def register_tokenisers(self, register: Register) -> None:
        register("words", WordTokenizer())


def test_plugin_suite_catches_duplicates_and_misspelled_hooks() -> None:
    suite = PluginContract()
    with pytest.raises(AssertionError):
        suite.test_registration_names_are_non_empty_and_unique(DoubleRegisterPlugin(), "dup")
    with pytest.raises(AssertionError):
        suite.test_every_hookimpl_names_a_hookspec(MisspelledPlugin(), "typo")
