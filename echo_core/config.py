"""Configuration: where the vault and the state dir are, and which plugins act.

Resolution order for each setting: flag > environment > config file > default, and the
winning source is recorded so ``doctor`` can say it. The config file is TOML at
``$ECHO_CONFIG`` or ``$XDG_CONFIG_HOME/echo-memory/config.toml`` (default
``~/.config/echo-memory/config.toml``)::

    vault = "~/notes"                 # a folder, file:///..., or obsidian+https://host:27124
    state_dir = "~/.local/state/echo-memory"
    disabled = ["expand_alias"]        # plugins not to load
    recall = "bm25"                    # ranker name
    tokenizer = "porterlite"
    [backends.obsidian]                # options handed to the backend factory
    key_env = "OBSIDIAN_API_KEY"

A relative ``vault`` or ``state_dir`` in the file is taken from the file's own folder
(not the folder a command runs in: hooks run in the user's project). A relative vault
folder given by ``--vault`` or ``ECHO_VAULT`` is taken from the current folder and made
absolute at once, so every message names the folder meant (``Config.vault_relative``
keeps the path as given, for messages that say so). Those keys,
``recall``, ``tokenizer`` and ``backends`` of the wrong TOML type are exit 78 naming the
key, as a bad ``disabled`` is.

``Setting`` and ``Config`` are ``NamedTuple``s, not attrs (house style's exception for the
start-up path, issue 15): every start-up, ``--help`` included, resolves the config (for
the disabled plugins), and importing attrs costs ~10 ms of a ~75 ms ``--help``. Both are
immutable and compared by value, as the attrs classes were.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, NamedTuple

from echo_core.errors import NotConfiguredError

if TYPE_CHECKING:
    from pathlib import Path


class Setting(NamedTuple):
    """A resolved value and where it came from (flag | env | config | default)."""

    value: str
    source: str


#: The default of ``Config.backends`` and ``Config.raw``: shared, so read-only.
_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


class Config(NamedTuple):
    """The resolved configuration of one process."""

    vault: Setting
    state_base: Setting
    config_path: str
    config_exists: bool
    disabled: tuple[str, ...] = ()
    recall: str = "bm25"
    tokenizer: str = "porterlite"
    backends: Mapping[str, Mapping[str, Any]] = _NO_OPTIONS
    raw: Mapping[str, Any] = _NO_OPTIONS
    #: What is wrong with the config file when it was resolved tolerantly ("" when
    #: nothing is); its settings were then left out and defaults apply.
    problem: str = ""
    #: The vault folder as given when it was relative and taken from the current folder
    #: (``vault`` holds it made absolute); "" for any other setting.
    vault_relative: str = ""

    @property
    def scheme(self) -> str:
        """The vault URL's scheme; a bare path is ``file``."""
        return vault_scheme(self.vault.value)

    def backend_options(self, scheme: str) -> Mapping[str, Any]:
        """Options for the backend serving ``scheme`` (``obsidian+https`` -> ``obsidian``)."""
        return self.backends.get(scheme.split("+", 1)[0], {})


def vault_scheme(url: str) -> str:
    """``file`` for a path or ``file://`` URL, else the URL's scheme."""
    head, sep, _ = url.partition("://")
    if sep and head and all(c.isalnum() or c in "+-." for c in head):
        return head.lower()
    return "file"


def state_dir_for(base: str, identity: str) -> Path:
    """The per-vault state dir: ``<base>/vaults/<hash of the vault identity>``."""
    from pathlib import Path  # with urllib.parse and ipaddress: not for --help

    from echo_core import digests  # not for a start-up that never opens a vault

    digest = digests.sha256(identity.encode("utf-8")).hexdigest()[:16]
    return Path(base).expanduser() / "vaults" / digest


def path_string(value: str) -> str:
    """``str(pathlib.Path(value))`` without importing pathlib (start-up resolves the config
    before any command runs): repeated separators and ``.`` parts dropped, no trailing
    separator. Elsewhere than POSIX, pathlib itself."""
    if os.sep != "/" or os.altsep:
        from pathlib import Path

        return str(Path(value))
    lead = "//" if value.startswith("//") and not value.startswith("///") else (
        "/" if value.startswith("/") else "")
    return (lead + "/".join(p for p in value.split("/") if p and p != ".")) or "."


def _xdg(env: Mapping[str, str], var: str, fallback: str) -> str:
    value = env.get(var)
    if value:
        return value
    return os.path.join(env.get("HOME") or os.path.expanduser("~"), fallback)


def config_file_path(env: Mapping[str, str]) -> str:
    """Where the config file is looked for (plain strings and ``os.path`` here: start-up
    resolves the config before any command runs)."""
    explicit = env.get("ECHO_CONFIG")
    if explicit:
        return path_string(os.path.expanduser(explicit))
    return path_string(os.path.join(_xdg(env, "XDG_CONFIG_HOME", ".config"), "echo-memory",
                                    "config.toml"))


def read_config_file(path: str) -> dict[str, Any]:
    """Parse the TOML config (``{}`` when absent); bad TOML is exit 78 naming the file."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise NotConfiguredError(f"cannot read config file {path}: {exc}") from exc
    import tomllib  # ~1.5 ms: only when there is a file to parse

    try:
        return tomllib.loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise NotConfiguredError(
            f"config file {path} is not valid TOML ({exc}); fix it, or point ECHO_CONFIG "
            "at another file",
        ) from exc


def _pick(flag: str | None, env_value: str | None, file_value: Any, default: str) -> Setting:
    if flag:
        return Setting(flag, "flag")
    if env_value:
        return Setting(env_value, "env")
    if file_value:
        return Setting(str(file_value), "config")
    return Setting(default, "default")


def _beside(value: Any, config_path: str) -> Any:
    """A relative folder path the config file gives, taken from the file's own folder (a
    hook runs in the user's project, whose folder must not decide which vault it means);
    anything else (absolute, ``~``, a URL, absent) as it is."""
    if (not isinstance(value, str) or not value or value.startswith(("~", "file://"))
            or os.path.isabs(value) or vault_scheme(value) != "file"):
        return value
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(config_path)), value))


def _expand(value: str) -> str:
    if vault_scheme(value) != "file" or value.startswith("file://"):
        return value
    return path_string(os.path.expanduser(value))


def _relative_folder(value: str) -> bool:
    """Whether the vault setting ``value`` (``~`` expanded) is a folder path relative to
    the current folder: not absolute and no ``file:`` URL or other scheme."""
    text = value.strip()
    return (bool(text) and vault_scheme(text) == "file" and not os.path.isabs(text)
            and not text.lower().startswith("file:"))


def _absolute_vault(value: str) -> str | None:
    """The relative folder ``value`` taken from the current folder, or None for any
    other setting (or when the current folder no longer exists: it stays relative)."""
    if not _relative_folder(value):
        return None
    try:
        return path_string(os.path.abspath(value.strip()))
    except OSError:
        return None


def resolve_config(
    *,
    vault: str | None = None,
    state_dir: str | None = None,
    env: Mapping[str, str] | None = None,
    tolerate_problems: bool = False,
) -> Config:
    """Resolve settings as flag > env (``ECHO_VAULT``, ``ECHO_STATE_DIR``) > file > default.

    Errors: 78 for a config file that cannot be read or used, naming it; with
    ``tolerate_problems`` the file's settings are left out instead and ``problem`` says
    what is wrong (doctor reports it and goes on with its other checks)."""
    env = os.environ if env is None else env
    path = config_file_path(env)
    try:
        raw = read_config_file(path)
        _check_file(raw, path)
    except NotConfiguredError as exc:
        if not tolerate_problems:
            raise
        return _resolve(vault, state_dir, env, path, {}, exc.message)
    return _resolve(vault, state_dir, env, path, raw, "")


#: The config file's keys the core reads, and the TOML type each must have.
_TYPED_KEYS: dict[str, tuple[type, str]] = {
    "vault": (str, "a string (a folder path or a vault URL)"),
    "state_dir": (str, "a string (a folder path)"),
    "recall": (str, "a string (a recall plugin's name, e.g. \"bm25\")"),
    "tokenizer": (str, "a string (a tokenizer plugin's name)"),
    "backends": (dict, "a table ([backends.NAME] sections)"),
}


def _check_file(raw: Mapping[str, Any], path: str) -> None:
    for key, (kind, what) in _TYPED_KEYS.items():
        if key in raw and not isinstance(raw[key], kind):
            raise NotConfiguredError(f"config file {path}: '{key}' must be {what}, not "
                                     f"{raw[key]!r}")
    disabled = raw.get("disabled", [])
    if not isinstance(disabled, list) or not all(isinstance(d, str) for d in disabled):
        raise NotConfiguredError(
            f"config file {path}: 'disabled' must be a list of plugin names",
        )


def _resolve(vault: str | None, state_dir: str | None, env: Mapping[str, str], path: str,
             raw: Mapping[str, Any], problem: str) -> Config:
    default_vault = path_string(os.path.join(_xdg(env, "XDG_DATA_HOME", ".local/share"),
                                             "echo-memory", "vault"))
    default_state = path_string(os.path.join(_xdg(env, "XDG_STATE_HOME", ".local/state"),
                                             "echo-memory"))
    vault_setting = _pick(vault, env.get("ECHO_VAULT"), _beside(raw.get("vault"), path),
                          str(default_vault))
    state_setting = _pick(
        state_dir, env.get("ECHO_STATE_DIR"), _beside(raw.get("state_dir"), path),
        str(default_state)
    )
    disabled = raw.get("disabled", [])
    backends = raw.get("backends", {})
    vault_value = _expand(vault_setting.value)
    absolute = _absolute_vault(vault_value)
    vault_relative = "" if absolute is None else vault_setting.value
    return Config(
        vault=Setting(absolute or vault_value, vault_setting.source),
        state_base=Setting(path_string(os.path.expanduser(state_setting.value)),
                           state_setting.source),
        config_path=path,
        config_exists=os.path.exists(path),
        disabled=tuple(disabled),
        recall=str(raw.get("recall", "bm25")),
        tokenizer=str(raw.get("tokenizer", "porterlite")),
        backends=backends if isinstance(backends, dict) else {},
        raw=raw,
        problem=problem,
        vault_relative=vault_relative,
    )
