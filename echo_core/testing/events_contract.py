"""``EventsContract``: how a plugin's event hooks (``on_*``) must behave.

A mix-in suite (not collected on its own). Subclass it in a ``Test*`` class and override
the fixtures::

    from echo_core.testing import EventsContract

    class TestBm25Events(EventsContract):
        @pytest.fixture
        def plugin(self):
            return plugins.recall_bm25

        @pytest.fixture
        def event_context(self, tmp_path):
            return make_context(tmp_path)

        @pytest.fixture
        def event_observer(self, event_context):
            return lambda: sorted(os.listdir(event_context.state_dir))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from echo_core.models import Note
from echo_core.plugins import PluginHost
from echo_core.testing.plugin_contract import CONTRACT_PLUGIN_NAME, hooks_of, strict_host

EVENT_HOOKS = ("on_note_written", "on_note_deleted", "on_session_start", "on_session_end")


def sample_note() -> Note:
    """The note handed to ``on_note_written``."""
    return Note(path="x/a.md", text="# A\n", body="# A\n")


class EventsContract:
    """Contract tests for the event hooks ``on_note_written``, ``on_note_deleted``,
    ``on_session_start`` and ``on_session_end``.

    Fixtures to override:

    * ``plugin`` -> the plugin object (module) implementing one or more ``on_*`` hooks.
      Required.
    * ``event_context`` -> the ``ctx`` passed to every event. Optional; ``None``.
    * ``session_bundle`` -> the ``bundle`` for ``on_session_end``. Optional; ``None``.
    * ``event_observer`` -> a zero-argument callable returning a comparable snapshot of
      the state your hooks change (index files, ...). Optional; by default observes
      nothing, so idempotency is checked only as "a second call does not raise".

    Each hook the plugin implements is called through a strict host, twice; neither call
    may raise and the observed state after the second equals that after the first.
    Hooks the plugin does not implement are passed over.
    """

    @pytest.fixture
    def plugin(self) -> object:
        raise NotImplementedError("override the `plugin` fixture to return your plugin")

    @pytest.fixture
    def event_context(self) -> Any:
        return None

    @pytest.fixture
    def session_bundle(self) -> Any:
        return None

    @pytest.fixture
    def event_observer(self) -> Callable[[], Any]:
        return lambda: None

    @staticmethod
    def host_for(plugin: object) -> tuple[PluginHost, set[str]]:
        """A strict host holding ``plugin`` and the set of event hooks it implements."""
        host = strict_host((CONTRACT_PLUGIN_NAME, plugin))
        return host, hooks_of(host, CONTRACT_PLUGIN_NAME) & set(EVENT_HOOKS)

    @staticmethod
    def call_twice(call: Callable[[], object], observe: Callable[[], Any], what: str) -> None:
        """Call ``call`` twice; the observed state must not change on the second call."""
        call()
        once = observe()
        call()
        assert observe() == once, f"{what} is not idempotent: a second call changed state"

    def test_implements_an_event_hook(self, plugin: object) -> None:
        _, events = self.host_for(plugin)
        assert events, f"the plugin implements none of {EVENT_HOOKS}"

    def test_note_written_is_safe_and_idempotent(
        self, plugin: object, event_context: Any, event_observer: Callable[[], Any]
    ) -> None:
        host, events = self.host_for(plugin)
        if "on_note_written" not in events:
            return
        note = sample_note()
        self.call_twice(
            lambda: host.hook.on_note_written(note=note, ctx=event_context),
            event_observer,
            "on_note_written",
        )

    def test_note_deleted_is_safe_and_idempotent(
        self, plugin: object, event_context: Any, event_observer: Callable[[], Any]
    ) -> None:
        host, events = self.host_for(plugin)
        if "on_note_deleted" not in events:
            return
        if "on_note_written" in events:
            host.hook.on_note_written(note=sample_note(), ctx=event_context)
        self.call_twice(
            lambda: host.hook.on_note_deleted(path="x/a.md", ctx=event_context),
            event_observer,
            "on_note_deleted",
        )

    def test_deleting_an_unknown_note_does_not_raise(
        self, plugin: object, event_context: Any
    ) -> None:
        host, events = self.host_for(plugin)
        if "on_note_deleted" in events:
            host.hook.on_note_deleted(path="never/written.md", ctx=event_context)

    def test_session_start_is_safe_and_idempotent(
        self, plugin: object, event_context: Any, event_observer: Callable[[], Any]
    ) -> None:
        host, events = self.host_for(plugin)
        if "on_session_start" not in events:
            return
        self.call_twice(
            lambda: host.hook.on_session_start(ctx=event_context),
            event_observer,
            "on_session_start",
        )

    def test_session_end_is_safe_and_idempotent(
        self,
        plugin: object,
        event_context: Any,
        session_bundle: Any,
        event_observer: Callable[[], Any],
    ) -> None:
        host, events = self.host_for(plugin)
        if "on_session_end" not in events:
            return
        self.call_twice(
            lambda: host.hook.on_session_end(bundle=session_bundle, ctx=event_context),
            event_observer,
            "on_session_end",
        )
