"""Parameters of an operation: one attrs class, each field declared with ``param(...)``.

The field's type annotation gives the kind (``str``, ``int``, ``float``, ``bool``, a
``Literal``, ``tuple[X, ...]``, a nested attrs class, ``Any`` for any JSON value, each
optionally ``| None``); ``param`` gives the help, the default, the bounds and the
surface overrides. Every surface (CLI, MCP, a third party's transport) reads the same
declaration through ``fields_of``::

    @attrs.frozen
    class RecallParams:
        query: str = param(help="What to look for.", min_length=1, max_length=2000,
                           cli=CliParam(positional=True, variadic=True))
        limit: int = param(8, help="Most primary hits.", ge=1, le=50,
                           mcp=McpParam(le=20))   # models get a tighter cap, visibly

A surface override (``CliParam`` / ``McpParam``) may tighten a bound, change the default,
or (``None`` instead of the override) leave the parameter out of that surface.
"""

from __future__ import annotations

import enum
import functools
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

METADATA_KEY = "echo_param"
_UNSET: Any = attrs.NOTHING


class _Inherit(enum.Enum):
    """A surface override's "same as declared" marker."""

    DEFAULT = "inherit"


INHERIT = _Inherit.DEFAULT


class Kind(enum.StrEnum):
    """What a parameter holds, as every surface sees it."""

    STR = "str"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    LIST = "list"
    OBJECT = "object"
    JSON = "json"


@attrs.frozen
class Bounds:
    """Ranges: ``ge``/``le`` for numbers, ``min_length``/``max_length`` for text (characters)
    and lists (items). ``None`` means unbounded."""

    ge: float | None = None
    le: float | None = None
    min_length: int | None = None
    max_length: int | None = None

    def tightened(self, override: Bounds) -> Bounds:
        """These bounds with every bound ``override`` sets replacing this one."""
        return Bounds(self.ge if override.ge is None else override.ge,
                      self.le if override.le is None else override.le,
                      self.min_length if override.min_length is None else override.min_length,
                      self.max_length if override.max_length is None else override.max_length)


@attrs.frozen
class CliParam:
    """How a parameter appears on the command line (defaults: ``--field-name``).

    ``positional``: an argument, not an option (``variadic``: takes the rest of the words,
    joined by spaces). ``flag``: the option name (``"--no-linked"``); ``negate``: a flag
    that sets the boolean to False. ``short``: ``"-n"``. ``split_commas``: a list option
    that also accepts ``a,b``. ``from_prepare``: not an option; ``CliSurface.prepare`` gives it
(from a file) and these bounds apply. ``help``/``bounds``/``default``: this surface's
override."""

    positional: bool = False
    variadic: bool = False
    flag: str | None = None
    short: str | None = None
    negate: bool = False
    metavar: str | None = None
    split_commas: bool = False
    from_prepare: bool = False
    help: str = ""
    bounds: Bounds = Bounds()
    default: Any = INHERIT


@attrs.frozen
class McpParam:
    """How a parameter appears in an MCP tool's input schema: ``bounds`` and ``default``
    override the declaration's for models (e.g. a tighter ``le``)."""

    bounds: Bounds = Bounds()
    default: Any = INHERIT


@attrs.frozen
class ParamSpec:
    """The declaration ``param()`` stores in the field's metadata. ``help`` may be a
    function returning the text, for help computed from data (the kinds of the routing
    manifest) only when a surface shows it."""

    help: str | Callable[[], str]
    bounds: Bounds = Bounds()
    choices: tuple[str, ...] | Callable[[], Sequence[str]] | None = None
    cli: CliParam | None = CliParam()
    mcp: McpParam | None = McpParam()
    items: type | None = None

    @property
    def help_text(self) -> str:
        """The help, computed once when given as a function."""
        return _computed_help(self.help) if callable(self.help) else self.help

    def choice_list(self) -> tuple[str, ...]:
        """The allowed values (computed once when given as a callable)."""
        if self.choices is None:
            return ()
        if callable(self.choices):
            return _computed_choices(self.choices)
        return tuple(self.choices)


@functools.cache
def _computed_help(source: Callable[[], str]) -> str:
    return source()


@functools.cache
def _computed_choices(source: Callable[[], Sequence[str]]) -> tuple[str, ...]:
    return tuple(source())


def param(default: Any = _UNSET, *, help: str | Callable[[], str], ge: float | None = None,
          le: float | None = None, min_length: int | None = None,
          max_length: int | None = None,
          choices: tuple[str, ...] | Callable[[], Sequence[str]] | None = None,
          cli: CliParam | None = CliParam(), mcp: McpParam | None = McpParam(),
          items: type | None = None) -> Any:
    """An attrs field declaring one operation parameter (see the module docstring).

    Without ``default`` the parameter is required. ``cli=None`` / ``mcp=None`` leave it
    out of that surface: it takes its default there, or the surface's ``prepare`` gives
    it (the CLI's ``put`` reads ``text`` from a file). ``items``: for a list of objects
    annotated ``tuple[Mapping[str, Any], ...]``, the attrs class each item must match
    (items arrive as dicts holding only the keys given)."""
    spec = ParamSpec(help, Bounds(ge, le, min_length, max_length), choices, cli, mcp, items)
    if isinstance(default, (list, set, dict)):
        raise TypeError("param defaults must be immutable (use a tuple)")
    return attrs.field(default=default, metadata={METADATA_KEY: spec})


@attrs.frozen
class ParamType:
    """A field's annotation reduced to what surfaces need."""

    kind: Kind
    optional: bool = False
    item: ParamType | None = None  # LIST
    model: type | None = None  # OBJECT: a nested attrs class
    literals: tuple[str, ...] = ()  # a Literal[...] of strings


@attrs.frozen
class FieldInfo:
    """One parameter: its name, type, declaration and default (``attrs.NOTHING`` when
    required)."""

    name: str
    type: ParamType
    spec: ParamSpec
    default: Any

    @property
    def required(self) -> bool:
        """True when the caller must give it."""
        return self.default is attrs.NOTHING

    def bounds_for(self, surface: str) -> Bounds:
        """The bounds on ``surface`` (``"cli"``, ``"mcp"``, anything else: the declared)."""
        override = self.surface(surface)
        bounds = self.spec.bounds
        return bounds.tightened(override.bounds) if override is not None else bounds

    def default_for(self, surface: str) -> Any:
        """The default on ``surface`` (its override, else the declared default)."""
        override = self.surface(surface)
        if override is not None and override.default is not INHERIT:
            return override.default
        return self.default

    def surface(self, surface: str) -> CliParam | McpParam | None:
        """This field's override for ``surface`` (None when left out of it)."""
        if surface == "cli":
            return self.spec.cli
        if surface == "mcp":
            return self.spec.mcp
        return McpParam()

    def choices(self) -> tuple[str, ...]:
        """Allowed string values: the declared choices or the ``Literal``'s values."""
        return self.spec.choice_list() or self.type.literals


def _param_type(hint: Any) -> ParamType:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"unsupported union {hint!r}: use X | None")
        return attrs.evolve(_param_type(rest[0]), optional=True)
    if hint is Any:
        return ParamType(Kind.JSON)
    if origin is Literal:
        if not all(isinstance(a, str) for a in args):
            raise TypeError(f"only string Literals are supported, got {hint!r}")
        return ParamType(Kind.STR, literals=tuple(args))
    if origin in (tuple, list, Sequence):
        item = args[0] if args else Any
        return ParamType(Kind.LIST, item=_param_type(item))
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        return ParamType(Kind.JSON)
    simple = {str: Kind.STR, int: Kind.INT, float: Kind.FLOAT, bool: Kind.BOOL}
    if hint in simple:
        return ParamType(simple[hint])
    if isinstance(hint, type) and attrs.has(hint):
        return ParamType(Kind.OBJECT, model=hint)
    raise TypeError(f"unsupported parameter type {hint!r}")


_FIELDS: dict[type, tuple[FieldInfo, ...]] = {}


def fields_of(cls: type) -> tuple[FieldInfo, ...]:
    """The parameters of the attrs class ``cls``, in declaration order.

    Errors: ``TypeError`` when ``cls`` is not an attrs class, a field lacks ``param()``
    or its type is unsupported."""
    cached = _FIELDS.get(cls)
    if cached is not None:
        return cached
    if not attrs.has(cls):
        raise TypeError(f"{cls!r} is not an attrs class")
    hints = typing.get_type_hints(cls)
    out = []
    for field in attrs.fields(cls):
        spec = field.metadata.get(METADATA_KEY)
        if not isinstance(spec, ParamSpec):
            raise TypeError(f"{cls.__name__}.{field.name}: declare it with param(help=...)")
        ptype = _param_type(hints[field.name])
        if spec.items is not None:
            if ptype.kind is not Kind.LIST:
                raise TypeError(f"{cls.__name__}.{field.name}: items= needs a list type")
            ptype = attrs.evolve(ptype, item=ParamType(Kind.OBJECT, model=spec.items))
        out.append(FieldInfo(field.name, ptype, spec, field.default))
    _FIELDS[cls] = found = tuple(out)
    return found
