"""Every built-in plugin runs the contract suite of each hook family it implements."""

from __future__ import annotations

from types import ModuleType

import pytest

import plugins.storage_fs
import plugins.transport_cli
from echo_core.testing import CommandsContract, PluginContract


class TestStorageFsPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.storage_fs

    @pytest.fixture
    def plugin_name(self) -> str:
        return "storage_fs"


class TestTransportCliPlugin(PluginContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.transport_cli

    @pytest.fixture
    def plugin_name(self) -> str:
        return "transport_cli"


class TestTransportCliCommands(CommandsContract):
    @pytest.fixture
    def plugin(self) -> ModuleType:
        return plugins.transport_cli
