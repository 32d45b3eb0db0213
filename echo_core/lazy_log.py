"""``lazy_logger(name)``: a module's logger that imports ``logging`` on first use.

``logging`` costs a cold process ~2 ms (with ``traceback``, ``string`` and their
regexes); most runs of a hook or a recall never log anything, yet every module on their
path made its logger at import. The object returned stands for ``logging.getLogger(name)``
and forwards every attribute to it, created on the first access (``log.info(...)``,
``log.isEnabledFor(...)``), so handlers, levels and ``caplog`` see the real logger."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    import logging

__all__ = ["lazy_logger"]


class _LazyLogger:
    __slots__ = ("_logger", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._logger: Any = None

    def __getattr__(self, attr: str) -> Any:
        logger = self._logger
        if logger is None:
            import logging

            logger = self._logger = logging.getLogger(self._name)
        return getattr(logger, attr)

    def __repr__(self) -> str:
        return f"<lazy logger {self._name!r}>"


def lazy_logger(name: str) -> logging.Logger:
    """The logger ``name``, made (and ``logging`` imported) when first used."""
    return cast("logging.Logger", _LazyLogger(name))
