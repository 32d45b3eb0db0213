"""expand_alias: query expansion with the names of entities the query mentions (SPEC §3.1).

A query that fuzzily names an entity (score >= 0.5, top 2) gains that entity's title and
aliases at weight 0.5, each as one phrase (never as loose words), so "VS Corp pricing"
also finds notes that say "Vantage Systems", and "turbokappa" (an alias of "Kappa
Engine") does not bring in every note that says "engine". Disabling the plugin turns
expansion off and nothing else.
"""

from __future__ import annotations

from typing import Any

from echo_core import hookimpl


@hookimpl
def register_expanders(register: Any) -> None:
    """Register the ``alias`` expander."""
    from plugins.expand_alias.alias_expander import AliasExpander

    register("alias", AliasExpander())
