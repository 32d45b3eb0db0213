"""echo_core: the small core of echo-memory, and the one namespace plugins import.

Everything a plugin needs is a name of this module: ``hookimpl`` and ``Register``, the
models, the protocols, the context, the errors, the operation declarations and the
helpers the built-in plugins share; the contract suites live in ``echo_core.testing``.
A plugin imports nothing else of the core (an architecture test holds the built-ins to
it). ``echo_core`` never imports a plugin.

Names are loaded on first use (PEP 562), so ``import echo_core`` stays cheap: the CLI's
start-up pays only for what it touches.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from echo_core import attrs_code_cache

attrs_code_cache.install()  # before any attrs class is defined (attrs imports later)

from echo_core.errors import (
    DuplicateGateError,
    EchoError,
    EditedMeanwhile,
    ExitCode,
    LockHeldError,
    NotConfiguredError,
    NotFoundError,
    UnavailableError,
    UsageError,
)
from echo_core.hookspecs import Register, hookimpl

if TYPE_CHECKING:  # ``x as x``: explicit re-exports for type checkers
    from echo_core import pg_identity as pg_identity
    from echo_core import progress as progress
    from echo_core.actions import Action as Action
    from echo_core.bulk_work import collector_paused as collector_paused
    from echo_core.config import resolve_config as resolve_config
    from echo_core.context import EchoContext as EchoContext
    from echo_core.context import create_context as create_context
    from echo_core.corpus import index_doc as index_doc
    from echo_core.digests import blake2b as blake2b
    from echo_core.digests import sha256 as sha256
    from echo_core.edit_retry import EDIT_ATTEMPTS as EDIT_ATTEMPTS
    from echo_core.edit_retry import planned_again_if_edited as planned_again_if_edited
    from echo_core.entities import Match as Match
    from echo_core.entities import entity_names as entity_names
    from echo_core.errors import CODE_NAMES as CODE_NAMES
    from echo_core.errors import not_found as not_found
    from echo_core.errors import usage_error as usage_error
    from echo_core.forked_work import ForkedWork as ForkedWork
    from echo_core.forked_work import start_forked as start_forked
    from echo_core.gating import GateContext as GateContext
    from echo_core.hook_views import CliState as CliState
    from echo_core.hook_views import EventContext as EventContext
    from echo_core.hook_views import ExpandContext as ExpandContext
    from echo_core.lazy_log import lazy_logger as lazy_logger
    from echo_core.lazy_pattern import LazyPattern as LazyPattern
    from echo_core.locking import ProcessRegistry as ProcessRegistry
    from echo_core.locking import ReentrantHold as ReentrantHold
    from echo_core.locking import StaleLockWarning as StaleLockWarning
    from echo_core.locking import pid_alive as pid_alive
    from echo_core.models import CaptureRequest as CaptureRequest
    from echo_core.models import Entity as Entity
    from echo_core.models import Envelope as Envelope
    from echo_core.models import FileStat as FileStat
    from echo_core.models import GateStop as GateStop
    from echo_core.models import Hit as Hit
    from echo_core.models import Note as Note
    from echo_core.models import TreeScan as TreeScan
    from echo_core.models import to_jsonable as to_jsonable
    from echo_core.names import fold_plural as fold_plural
    from echo_core.names import name_key as name_key
    from echo_core.names import name_tokens as name_tokens
    from echo_core.names import slugify as slugify
    from echo_core.names import token_set_similarity as token_set_similarity
    from echo_core.operations import Access as Access
    from echo_core.operations import Bounds as Bounds
    from echo_core.operations import CliArg as CliArg
    from echo_core.operations import CliParam as CliParam
    from echo_core.operations import CliSurface as CliSurface
    from echo_core.operations import FieldInfo as FieldInfo
    from echo_core.operations import Kind as Kind
    from echo_core.operations import McpParam as McpParam
    from echo_core.operations import McpSurface as McpSurface
    from echo_core.operations import Operation as Operation
    from echo_core.operations import OperationRef as OperationRef
    from echo_core.operations import OperationRegistry as OperationRegistry
    from echo_core.operations import ParamsInvalid as ParamsInvalid
    from echo_core.operations import SkillSpec as SkillSpec
    from echo_core.operations import fields_of as fields_of
    from echo_core.operations import lazy_type as lazy_type
    from echo_core.operations import param as param
    from echo_core.operations import parse_params as parse_params
    from echo_core.operations.invoke import invoke as invoke
    from echo_core.operations.preflight import run_operation as run_operation
    from echo_core.operations.schema import input_schema as input_schema
    from echo_core.operations.schema import output_schema as output_schema
    from echo_core.operations.spelling import current_surface as current_surface
    from echo_core.operations.spelling import spell as spell
    from echo_core.operations.spelling import spelled_for as spelled_for
    from echo_core.ops.build import build as build
    from echo_core.ops.capture import capture as capture
    from echo_core.ops.change_feed import catch_up as catch_up
    from echo_core.ops.change_feed import has_change_log as has_change_log
    from echo_core.ops.fast_sweep import fast_sweep as fast_sweep
    from echo_core.ops.index_sync import sync_paths as sync_paths
    from echo_core.ops.init import init_vault as init_vault
    from echo_core.ops.outbox import replay_waiting as replay_waiting
    from echo_core.ops.outbox_queue import queue_capture_for_later as queue_capture_for_later
    from echo_core.ops.plugins_info import list_plugins as list_plugins
    from echo_core.ops.recall import recall as recall
    from echo_core.ops.recall_index import ensure_index as ensure_index
    from echo_core.ops.session_pass import settle_owed_pass as settle_owed_pass
    from echo_core.ops.session_reflection import (
        reflect_session_transcript as reflect_session_transcript,
    )
    from echo_core.ops.vault_changes import sync_changed as sync_changed
    from echo_core.output_cache import cached_output as cached_output
    from echo_core.output_cache import remember_output as remember_output
    from echo_core.paths import normalize_path as normalize_path
    from echo_core.plugins import PluginHost as PluginHost
    from echo_core.plugins import create_host as create_host
    from echo_core.protocols import NOT_WRITABLE_ERRNOS as NOT_WRITABLE_ERRNOS
    from echo_core.protocols import BackendUnavailable as BackendUnavailable
    from echo_core.protocols import BuildTarget as BuildTarget
    from echo_core.protocols import EntityLookup as EntityLookup
    from echo_core.protocols import Expander as Expander
    from echo_core.protocols import IndexDoc as IndexDoc
    from echo_core.protocols import KeyFieldRanker as KeyFieldRanker
    from echo_core.protocols import PersistentRanker as PersistentRanker
    from echo_core.protocols import Queue as Queue
    from echo_core.protocols import QueueFactory as QueueFactory
    from echo_core.protocols import Ranker as Ranker
    from echo_core.protocols import RankerFactory as RankerFactory
    from echo_core.protocols import RankerUnavailable as RankerUnavailable
    from echo_core.protocols import SplittableDocs as SplittableDocs
    from echo_core.protocols import Storage as Storage
    from echo_core.protocols import StorageFactory as StorageFactory
    from echo_core.protocols import TermFinder as TermFinder
    from echo_core.protocols import TextRanker as TextRanker
    from echo_core.protocols import Tokenizer as Tokenizer
    from echo_core.protocols import VaultMissing as VaultMissing
    from echo_core.protocols import VaultNotWritable as VaultNotWritable
    from echo_core.protocols import WeightedTerm as WeightedTerm
    from echo_core.protocols import WordTokenizer as WordTokenizer
    from echo_core.ranker_choice import RankerFallbackWarning as RankerFallbackWarning
    from echo_core.redaction import RedactionResult as RedactionResult
    from echo_core.redaction import redact as redact
    from echo_core.redaction import strip_private as strip_private
    from echo_core.scoring import BM25_B as BM25_B
    from echo_core.scoring import BM25_K1 as BM25_K1
    from echo_core.scoring import FRESHNESS_FLOOR as FRESHNESS_FLOOR
    from echo_core.scoring import FRESHNESS_HALF_LIFE_DAYS as FRESHNESS_HALF_LIFE_DAYS
    from echo_core.sqlite_wal import settle_wal as settle_wal
    from echo_core.storage_base import StorageBase as StorageBase
    from echo_core.storage_base import none_if_absent as none_if_absent
    from echo_core.storage_base import single_line as single_line
    from echo_core.storage_base import with_line as with_line
    from echo_core.tempfiles import fsync_dir as fsync_dir
    from echo_core.tempfiles import sweep_stale as sweep_stale
    from echo_core.tempfiles import temp_name as temp_name
    from echo_core.terminal_text import json_text as json_text
    from echo_core.terminal_text import terminal_safe as terminal_safe
    from echo_core.text_source import read_text_source as read_text_source
    from echo_core.thread_changes import changes_made as changes_made
    from echo_core.user_json import SURROGATE_ESCAPE as SURROGATE_ESCAPE
    from echo_core.user_json import with_valid_text as with_valid_text
    from echo_core.vault import MARKER_PATH as MARKER_PATH
    from echo_core.write_scope import require_note_path as require_note_path


#: public name -> the core module that defines it.
_EXPORTS: dict[str, str] = {
    "Action": "echo_core.actions",
    **dict.fromkeys(("CODE_NAMES", "not_found", "usage_error"), "echo_core.errors"),
    "resolve_config": "echo_core.config",
    **dict.fromkeys(("blake2b", "sha256"), "echo_core.digests"),
    **dict.fromkeys(("EchoContext", "create_context"), "echo_core.context"),
    "index_doc": "echo_core.corpus",
    **dict.fromkeys(("Match", "entity_names"), "echo_core.entities"),
    "GateContext": "echo_core.gating",
    **dict.fromkeys(("CliState", "EventContext", "ExpandContext"), "echo_core.hook_views"),
    **dict.fromkeys(("ProcessRegistry", "ReentrantHold", "StaleLockWarning", "pid_alive"),
                    "echo_core.locking"),
    **dict.fromkeys(("CaptureRequest", "Entity", "Envelope", "FileStat", "GateStop", "Hit",
                     "Note", "TreeScan", "to_jsonable"), "echo_core.models"),
    **dict.fromkeys(("fold_plural", "name_key", "name_tokens", "slugify",
                     "token_set_similarity"),
                    "echo_core.names"),
    **dict.fromkeys(("Access", "Bounds", "CliArg", "CliParam", "CliSurface", "FieldInfo",
                     "Kind", "McpParam", "McpSurface", "Operation", "OperationRef", "OperationRegistry",
                     "ParamsInvalid", "SkillSpec", "fields_of", "lazy_type", "param",
                     "parse_params"), "echo_core.operations"),
    "invoke": "echo_core.operations.invoke",
    "run_operation": "echo_core.operations.preflight",
    **dict.fromkeys(("input_schema", "output_schema"), "echo_core.operations.schema"),
    **dict.fromkeys(("current_surface", "spell", "spelled_for"), "echo_core.operations.spelling"),
    "build": "echo_core.ops.build",
    "capture": "echo_core.ops.capture",
    **dict.fromkeys(("catch_up", "has_change_log"), "echo_core.ops.change_feed"),
    "init_vault": "echo_core.ops.init",
    "replay_waiting": "echo_core.ops.outbox",
    "queue_capture_for_later": "echo_core.ops.outbox_queue",
    "sync_paths": "echo_core.ops.index_sync",
    "sync_changed": "echo_core.ops.vault_changes",
    "fast_sweep": "echo_core.ops.fast_sweep",
    "recall": "echo_core.ops.recall",
    **dict.fromkeys(("StorageBase", "none_if_absent", "single_line", "with_line"),
                    "echo_core.storage_base"),
    "list_plugins": "echo_core.ops.plugins_info",
    "ensure_index": "echo_core.ops.recall_index",
    "normalize_path": "echo_core.paths",
    "require_note_path": "echo_core.write_scope",
    **dict.fromkeys(("PluginHost", "create_host"), "echo_core.plugins"),
    "RankerFallbackWarning": "echo_core.ranker_choice",
    **dict.fromkeys(("NOT_WRITABLE_ERRNOS", "BackendUnavailable", "BuildTarget",
                     "ConditionalWrite", "EntityLookup", "Expander",
                     "IndexDoc", "KeyFieldRanker", "PersistentRanker", "Queue", "Ranker", "RankerFactory",
                     "RankerUnavailable", "Storage", "TextRanker",
                     "StorageFactory", "QueueFactory", "SplittableDocs",
                     "TermFinder", "Tokenizer", "WordTokenizer",
                     "VaultMissing", "VaultNotWritable", "WeightedTerm"), "echo_core.protocols"),
    **dict.fromkeys(("BM25_B", "BM25_K1", "FRESHNESS_FLOOR", "FRESHNESS_HALF_LIFE_DAYS"),
                    "echo_core.scoring"),
    **dict.fromkeys(("fsync_dir", "sweep_stale", "temp_name"), "echo_core.tempfiles"),
    "read_text_source": "echo_core.text_source",
    "settle_wal": "echo_core.sqlite_wal",
    **dict.fromkeys(("RedactionResult", "redact", "strip_private"), "echo_core.redaction"),
    "settle_owed_pass": "echo_core.ops.session_pass",
    "reflect_session_transcript": "echo_core.ops.session_reflection",
    **dict.fromkeys(("ForkedWork", "start_forked"), "echo_core.forked_work"),
    **dict.fromkeys(("json_text", "terminal_safe"), "echo_core.terminal_text"),
    "MARKER_PATH": "echo_core.vault",
    "changes_made": "echo_core.thread_changes",
    **dict.fromkeys(("SURROGATE_ESCAPE", "with_valid_text"), "echo_core.user_json"),
    **dict.fromkeys(("EDIT_ATTEMPTS", "planned_again_if_edited"), "echo_core.edit_retry"),
    **dict.fromkeys(("cached_output", "remember_output"), "echo_core.output_cache"),
    "lazy_logger": "echo_core.lazy_log",
    "LazyPattern": "echo_core.lazy_pattern",
    "collector_paused": "echo_core.bulk_work",
}
_MODULES = {"pg_identity": "echo_core.pg_identity", "progress": "echo_core.progress"}

__all__ = ["DuplicateGateError", "EchoError", "EditedMeanwhile", "ExitCode", "LockHeldError",
           "NotConfiguredError",
           "NotFoundError", "Register", "UnavailableError", "UsageError", "hookimpl",
           *_EXPORTS, *_MODULES]


def __getattr__(name: str) -> Any:
    """Load a public name from its module on first use."""
    if name in _MODULES:
        return importlib.import_module(_MODULES[name])
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'echo_core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
