"""What plugins registered through the ``register_*`` hooks, and what is wrong with it.

The plugin host gathers each registration hook once (``gather_registrations``); both
``PluginHost.collect`` (which refuses a duplicate when the hook is used) and
``PluginHost.check_registrations`` (which reports every problem, for ``plugins`` and
``doctor``) read the same gathered result.

Not attrs (house style's exception for the start-up path, issue 15): every start-up,
``--help`` included, gathers registrations, and importing attrs costs ~10 ms of a ~75 ms
``--help``. ``RegistrationProblem`` is a ``NamedTuple`` (immutable, compared and hashed
by value, one JSON object by field through ``to_jsonable``); ``GatheredRegistrations`` a
plain ``__slots__`` class.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

#: ``validator(name, obj)`` -> a problem message, or ``None`` when the registration is fine.
RegistrationValidator = Callable[[str, object], str | None]

NO_VALIDATORS: Mapping[str, RegistrationValidator] = MappingProxyType({})


class RegistrationProblem(NamedTuple):
    """One thing wrong with what plugins registered.

    ``kind`` is ``duplicate`` (a name taken twice; ``plugins`` names both owners, the same
    plugin twice when it registered the name twice), ``malformed`` (the name is not a
    non-empty string) or ``invalid`` (a per-kind validator refused the object).
    """

    kind: str
    hook: str
    name: str
    plugins: tuple[str, ...]
    message: str


def duplicate(hook: str, name: str, first: str, second: str) -> RegistrationProblem:
    """The problem of ``name`` registered in ``hook`` by ``first`` and then ``second``."""
    if first == second:
        message = (f"{hook}: plugin {first!r} registered {name!r} twice; fix the plugin or "
                   f"disable it (ECHO_DISABLE_PLUGINS={first} or config 'disabled')")
    else:
        message = (f"{hook}: {name!r} is registered by both plugin {first!r} and plugin "
                   f"{second!r}; disable one of them (ECHO_DISABLE_PLUGINS={second} or "
                   f"config 'disabled')")
    return RegistrationProblem("duplicate", hook, name, (first, second), message)


def _malformed(hook: str, name: object, plugin: str) -> RegistrationProblem:
    message = (f"{hook}: plugin {plugin!r} registered the name {name!r}; names must be "
               f"non-empty strings (the registration is ignored)")
    return RegistrationProblem("malformed", hook, repr(name), (plugin,), message)


class GatheredRegistrations:
    """One registration hook's result: ``found`` name -> object, each name's ``owners``."""

    __slots__ = ("found", "hook", "owners", "problems")

    def __init__(self, hook: str, found: dict[str, Any] | None = None,
                 owners: dict[str, str] | None = None,
                 problems: list[RegistrationProblem] | None = None) -> None:
        self.hook = hook
        self.found: dict[str, Any] = {} if found is None else found
        self.owners: dict[str, str] = {} if owners is None else owners
        self.problems: list[RegistrationProblem] = [] if problems is None else problems

    def _key(self) -> tuple[Any, ...]:
        return (self.hook, self.found, self.owners, self.problems)

    def __eq__(self, other: object) -> bool:
        if type(other) is not GatheredRegistrations:
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable, like the attrs class it was

    def __repr__(self) -> str:
        return (f"GatheredRegistrations(hook={self.hook!r}, found={self.found!r}, "
                f"owners={self.owners!r}, problems={self.problems!r})")

    def add(self, plugin: str, registrations: Iterable[tuple[object, Any]]) -> None:
        """Take one plugin's ``(name, obj)`` calls; the first owner of a name keeps it."""
        for name, obj in registrations:
            if not isinstance(name, str) or not name.strip():
                self.problems.append(_malformed(self.hook, name, plugin))
            elif name in self.owners:
                self.problems.append(duplicate(self.hook, name, self.owners[name], plugin))
            else:
                self.found[name] = obj
                self.owners[name] = plugin

    def duplicates(self) -> list[RegistrationProblem]:
        """The duplicate-name problems (``collect`` refuses the hook when there is one)."""
        return [p for p in self.problems if p.kind == "duplicate"]

    def validate(self, validator: RegistrationValidator) -> list[RegistrationProblem]:
        """Run ``validator`` on every kept registration; a raising validator is a problem."""
        problems: list[RegistrationProblem] = []
        for name, obj in self.found.items():
            try:
                complaint = validator(name, obj)
            except Exception as exc:  # noqa: BLE001 - a validator bug must not hide the others
                complaint = f"the check itself failed: {type(exc).__name__}: {exc}"
            if complaint:
                owner = self.owners[name]
                problems.append(RegistrationProblem(
                    "invalid", self.hook, name, (owner,),
                    f"{self.hook}: {name!r} from plugin {owner!r}: {complaint}",
                ))
        return problems
