"""Load one frontmatter block with PyYAML, within fixed bounds (SPEC §1.3).

A block is composed into YAML nodes (libyaml when present), measured, and only then
constructed, so a hostile block is refused before it can cost memory or time (libyaml
also stops at 1,000 levels of nesting while composing):

* more than ``MAX_BLOCK_CHARS`` characters of block text;
* collections nested more than ``MAX_DEPTH`` deep (aliases followed);
* an alias that refers to a node containing it (``a: &a [*a]``);
* more than ``MAX_EXPANDED`` units once aliases are expanded, counting one unit per node
  and one per scalar character (a "billion laughs" block is refused a few levels in).

Aliases themselves are allowed within those bounds (``<<: *defaults`` keeps working);
an alias-free block under ``MAX_BLOCK_CHARS`` never reaches ``MAX_EXPANDED``. Values: dates
and timestamps stay strings, keys are their literal text, and an integer Python will not
print (more than ``MAX_INT_DIGITS`` decimal digits, in any base) is kept as its text. Nothing here raises: every
refusal and every YAML error comes back as a message. PyYAML is imported lazily.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from echo_core.lazy_pattern import LazyPattern

MAX_BLOCK_CHARS = 65_536
MAX_DEPTH = 32
MAX_EXPANDED = 4 * MAX_BLOCK_CHARS
#: Integers with more decimal digits stay text (Python's default int-str limit: longer
#: ints cannot even be printed or sent as JSON, whatever base they were written in).
MAX_INT_DIGITS = 4_300
_INT_BOUND = 10**MAX_INT_DIGITS

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_MERGE_TAG = "tag:yaml.org,2002:merge"
#: A column-0 line that looks like a top-level ``key:`` (not a comment or a ``- item``):
#: group 1 is the key as written, quotes and blanks included. Linear: the unquoted key
#: ends at the line's first ':'.
_KEY_LINE_RE = LazyPattern(
    r"""^("[^"\n]*"[ \t]*|'[^'\n]*'[ \t]*|[^\s#'"\-?:{\[][^:\n]*):(?=[ \t\r]|$)""",
    re.MULTILINE,
)
_FIX = "fix the block between the '---' lines"


def size_refusal(block: str) -> str | None:
    """The message refusing ``block`` for its size, or None when it is small enough."""
    if len(block) <= MAX_BLOCK_CHARS:
        return None
    return (
        f"frontmatter refused: the block has {len(block):,} characters, more than the "
        f"limit of {MAX_BLOCK_CHARS:,}; move long text into the note's body"
    )


@functools.lru_cache(maxsize=1)
def plain_loader() -> Any:
    """A SafeLoader subclass: dates stay strings, keys are their literal text, huge
    integers stay text, ``!!set`` is a list."""
    import yaml

    base: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class PlainLoader(base):  # type: ignore[misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> dict[str, Any]:
            if not isinstance(node, yaml.MappingNode):
                raise yaml.constructor.ConstructorError(
                    None, None, "expected a mapping", node.start_mark
                )
            self.flatten_mapping(node)
            out: dict[str, Any] = {}
            for key_node, value_node in node.value:
                if not isinstance(key_node, yaml.ScalarNode):
                    raise yaml.constructor.ConstructorError(
                        "while reading a mapping",
                        node.start_mark,
                        "found a key that is not a plain value",
                        key_node.start_mark,
                    )
                out[key_node.value] = self.construct_object(value_node, deep=deep)
            return out

    def as_list(loader: Any, node: Any) -> list[Any]:
        return list(loader.construct_mapping(node))

    def int_or_text(loader: Any, node: Any) -> Any:
        try:
            value = yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
        except ValueError:  # a decimal over Python's digit limit, or "!!int word"
            return loader.construct_scalar(node)
        return value if -_INT_BOUND < value < _INT_BOUND else loader.construct_scalar(node)

    PlainLoader.yaml_implicit_resolvers = {
        first: [r for r in resolvers if r[0] != _TIMESTAMP_TAG]
        for first, resolvers in base.yaml_implicit_resolvers.items()
    }
    as_str = yaml.constructor.SafeConstructor.construct_yaml_str
    PlainLoader.add_constructor(_TIMESTAMP_TAG, as_str)
    PlainLoader.add_constructor("tag:yaml.org,2002:binary", as_str)
    PlainLoader.add_constructor("tag:yaml.org,2002:set", as_list)
    PlainLoader.add_constructor("tag:yaml.org,2002:int", int_or_text)
    return PlainLoader


def _line(node: Any) -> str:
    mark = getattr(node, "start_mark", None)
    return f" (line {mark.line + 2})" if mark is not None else ""


def _too_deep(node: Any) -> str:
    return f"frontmatter refused: collections nest more than {MAX_DEPTH} deep{_line(node)}; {_FIX}"


def measure_refusal(root: Any) -> str | None:
    """Why the node graph under ``root`` is refused (cycle, depth, expanded size), or None.

    One iterative pass over the distinct collection nodes; a shared node (an alias) is
    measured once and its expanded size counted at every place it is used.
    """
    units: dict[int, int] = {}
    height: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Any, list[Any] | None]] = [] if root.id == "scalar" else [(root, None)]
    while stack:
        node, kids = stack.pop()
        key = id(node)
        if kids is not None:  # every child measured
            open_nodes.discard(key)
            total, tallest = 1, 0
            for kid in kids:
                if kid.id == "scalar":
                    total += 1 + len(kid.value)
                else:
                    total += units[id(kid)]
                    tallest = max(tallest, height[id(kid)])
            units[key], height[key] = total, tallest + 1
            if tallest + 1 > MAX_DEPTH:
                return _too_deep(node)
            if total > MAX_EXPANDED:
                return (
                    f"frontmatter refused: its aliases expand it past {MAX_EXPANDED:,} "
                    f"units (nodes plus characters){_line(node)}; write the values out"
                )
        elif key not in units:
            if key in open_nodes:
                return (
                    f"frontmatter refused: an alias refers to a node that contains it"
                    f"{_line(node)}; remove the '*' reference"
                )
            if len(open_nodes) >= MAX_DEPTH:
                return _too_deep(node)
            open_nodes.add(key)
            kids = node.value if node.id == "sequence" else [p for pair in node.value for p in pair]
            stack.append((node, kids))
            stack.extend((kid, None) for kid in kids if kid.id != "scalar")
    return None


def _yaml_error(exc: Any) -> str:
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["error"])[0]
    mark = getattr(exc, "problem_mark", None)
    where = f" on line {mark.line + 2}" if mark is not None else ""
    return f"frontmatter is not valid YAML: {problem}{where}; {_FIX}"


def load_block(block: str) -> tuple[dict[str, Any], str | None]:
    """Load ``block`` with the plain loader: ``(mapping, None)`` or ``({}, message)``.

    The message says what was refused and the limit, or what YAML found wrong. An empty
    block is ``({}, None)``; a block that is not a mapping is an error. Never raises.
    """
    refused = size_refusal(block)
    if refused is not None:
        return {}, refused
    import yaml

    loader = plain_loader()(block)
    try:
        try:
            node = loader.get_single_node()
        except RecursionError:  # the pure-Python composer, without libyaml's depth limit
            return {}, _too_deep(None)
        if node is None:
            return {}, None
        refused = measure_refusal(node)
        if refused is not None:
            return {}, refused
        data = loader.construct_document(node)
    except yaml.YAMLError as exc:
        return {}, _yaml_error(exc)
    except (ValueError, KeyError, TypeError) as exc:  # e.g. "!!bool maybe", "!!float x"
        return {}, f"frontmatter has a value its YAML tag cannot hold ({exc!r}); {_FIX}"
    finally:
        loader.dispose()
    if data is None:
        return {}, None
    if not isinstance(data, dict):
        return {}, (
            f"frontmatter is a {type(data).__name__}, not a mapping of keys; "
            "write one 'key: value' per line"
        )
    return data, None


def duplicate_keys(block: str) -> dict[str, tuple[int, ...]]:
    """Top-level keys that ``block`` holds more than once -> the line of each occurrence
    (line 1 being the opening ``---``, as in this module's messages), in block order.

    Readers keep the last value of such a key. Cheap on the common path: a scan of the
    column-0 ``key:`` lines finds no repeat and YAML is never imported; only a block
    where the scan sees one is composed (not constructed) to confirm it. A block that
    is too large or not valid YAML gives ``{}`` (``load_block`` reports it). A repeat
    the scan cannot see (an explicit ``? key`` or an escaped key) is not reported.
    """
    seen: set[str] = set()
    for match in _KEY_LINE_RE.finditer(block):
        key = match.group(1).strip().strip("'\"")
        if key in seen:
            break
        seen.add(key)
    else:
        return {}
    if size_refusal(block) is not None:
        return {}
    import yaml

    loader = plain_loader()(block)
    try:
        node = loader.get_single_node()
    except (yaml.YAMLError, RecursionError):
        return {}
    finally:
        loader.dispose()
    if not isinstance(node, yaml.MappingNode):
        return {}
    lines: dict[str, list[int]] = {}
    for key_node, _ in node.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag != _MERGE_TAG:
            lines.setdefault(key_node.value, []).append(key_node.start_mark.line + 2)
    return {key: tuple(at) for key, at in lines.items() if len(at) > 1}
