"""parse_params: a required parameter that a surface leaves out (its ``prepare`` gives
it, e.g. from a file) and that was not given is ``required`` (exit 2), like any missing
parameter - never a TypeError from building the parameter object; and a key ``prepare``
gave that no parameter takes lists the parameters ``prepare`` may give."""

from __future__ import annotations

import attrs
import pytest

from echo_core.errors import ExitCode
from echo_core.operations import CliParam, param
from echo_core.operations.validate import ParamsInvalid, parse_params


@attrs.frozen(kw_only=True)
class FileParams:
    """``text`` and ``title`` come from a file on the command line, not from options."""

    text: str = param(help="The text.", min_length=1, cli=None)
    title: str = param(help="The title.", cli=CliParam(from_prepare=True))
    note: str | None = param(None, help="A note.", cli=None)
    apply: bool = param(False, help="Write.")


def test_a_required_parameter_left_out_of_the_surface_is_reported_required() -> None:
    with pytest.raises(ParamsInvalid) as info:
        parse_params(FileParams, {"apply": True}, surface="cli", operation="demo")
    assert info.value.code == ExitCode.USAGE
    assert info.value.fields == ("text", "title")
    assert info.value.message == "invalid arguments for demo: text: required; title: required"


def test_an_unknown_prepared_key_lists_what_prepare_may_give_not_the_options() -> None:
    with pytest.raises(ParamsInvalid) as info:
        parse_params(FileParams, {"text": "x", "title": "t", "colour": 1}, surface="cli",
                     prepared={"text", "title", "colour"})
    assert info.value.fields == ("colour",)
    assert "colour: unknown parameter (allowed: note, text, title)" in info.value.message
