"""The routing manifest (SPEC §1.2), loaded from the package's ``data/routing.toml``."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import attrs

from echo_core.errors import usage_error

#: The kind whose notes state facts and preferences (SPEC §1.2): captures of it are
#: checked for contradictions, and may supersede a line of the operator preferences.
SEMANTIC = "semantic"


@attrs.frozen
class KindRoute:
    """Where one kind of note lives and how it starts."""

    kind: str
    folder: str
    status: str
    log_heading: str
    dated: bool = False
    expires_days: int | None = None
    #: Other folders notes of this kind live in (a project moved on hold or archived).
    also_in: tuple[str, ...] = ()

    def folder_for(self, domain: str | None = None) -> str:
        """The folder for a new note; ``area`` needs a ``domain`` (exit 2 without one)."""
        if "{domain}" not in self.folder:
            return self.folder
        if not domain:
            raise usage_error(f"kind {self.kind!r} needs --domain (one of the area domains)")
        return self.folder.replace("{domain}", domain)


@attrs.frozen
class RoutingManifest:
    """All kinds, the frontmatter they carry, retired paths and area domains."""

    schema_version: int
    kinds: dict[str, KindRoute]
    required_frontmatter: tuple[str, ...]
    optional_frontmatter: tuple[str, ...]
    retired_paths: tuple[str, ...]
    area_domains: tuple[str, ...]

    def route(self, kind: str) -> KindRoute:
        """The route of ``kind``; an unknown kind is a usage error listing the known ones."""
        try:
            return self.kinds[kind]
        except KeyError:
            known = ", ".join(sorted(self.kinds))
            raise usage_error(f"unknown kind {kind!r}; use one of: {known}") from None

    def kind_folders(self) -> list[str]:
        """Every concrete folder a kind may live in (areas expanded per domain)."""
        out: list[str] = []
        for route in self.kinds.values():
            if "{domain}" in route.folder:
                out.extend(route.folder_for(d) for d in self.area_domains)
            else:
                out.append(route.folder)
        return out


@functools.cache
def load_manifest() -> RoutingManifest:
    """Parse the shipped manifest (cached; it is immutable package data, read beside
    this module: importlib.resources, for a package that is not a folder, costs a
    one-shot process ~3 ms of imports)."""
    shipped = Path(__file__).with_name("data") / "routing.toml"
    if shipped.is_file():
        raw = _parsed_manifest(str(shipped))
    else:  # pragma: no cover - installed as a zip
        import tomllib
        from importlib import resources

        raw = tomllib.loads(
            resources.files("echo_core").joinpath("data/routing.toml").read_text("utf-8"))
    kinds = {
        name: KindRoute(
            kind=name,
            folder=spec["folder"],
            status=spec["status"],
            log_heading=spec["log_heading"],
            dated=bool(spec.get("dated", False)),
            expires_days=spec.get("expires_days"),
            also_in=tuple(spec.get("also_in", ())),
        )
        for name, spec in raw["kinds"].items()
    }
    return RoutingManifest(
        schema_version=int(raw["schema_version"]),
        kinds=kinds,
        required_frontmatter=tuple(raw["required_frontmatter"]),
        optional_frontmatter=tuple(raw["optional_frontmatter"]),
        retired_paths=tuple(raw["retired_paths"]),
        area_domains=tuple(raw["area_domains"]),
    )


def _parsed_manifest(path: str) -> dict[str, Any]:
    """The TOML file at ``path`` as parsed data, through a JSON copy in the cache folder
    (``manifest_cache.cached_toml``): a one-shot process need not import ``tomllib``."""
    from echo_core.manifest_cache import cached_toml

    return cached_toml(path, "routing-manifest.json")
