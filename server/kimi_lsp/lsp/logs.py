"""Logging: stderr always (stdout carries the protocol), and ``window/logMessage`` once a client
is connected. pygls logs every message at INFO; that is turned down."""

from __future__ import annotations

import logging
import sys
import threading
from typing import TYPE_CHECKING

from lsprotocol import types as T

if TYPE_CHECKING:
    from kimi_lsp.lsp.server import KimiLanguageServer

_TYPES = {
    logging.CRITICAL: T.MessageType.Error,
    logging.ERROR: T.MessageType.Error,
    logging.WARNING: T.MessageType.Warning,
    logging.INFO: T.MessageType.Info,
}


def setup(log_level: str) -> None:
    level = getattr(logging, str(log_level).upper(), logging.WARNING)
    root = logging.getLogger()
    if not any(getattr(h, "_kimi_stderr", False) for h in root.handlers):
        h = logging.StreamHandler(sys.stderr)
        h.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        h._kimi_stderr = True  # type: ignore[attr-defined]  # our marker: a second setup() adds no second handler
        root.addHandler(h)
    root.setLevel(logging.WARNING)
    logging.getLogger("kimi_lsp").setLevel(level)
    for name in ("pygls", "pygls.protocol", "pygls.server", "pygls.feature_manager"):
        logging.getLogger(name).setLevel(max(level, logging.WARNING))


class ClientLogHandler(logging.Handler):
    """Forwards kimi_lsp records to the client; safe to call from the lint thread."""

    def __init__(self, server: KimiLanguageServer) -> None:
        super().__init__(logging.INFO)
        self.server = server
        self.setFormatter(logging.Formatter("%(message)s"))
        self._local = threading.local()

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(self._local, "busy", False):
            return
        loop = self.server.loop_ref
        if loop is None or loop.is_closed() or not self.server.connected:
            return
        try:
            self._local.busy = True
            params = T.LogMessageParams(type=_TYPES.get(record.levelno, T.MessageType.Log), message=self.format(record))
            loop.call_soon_threadsafe(self._send, params)
        except Exception:  # never let logging break a handler
            pass
        finally:
            self._local.busy = False

    def _send(self, params: T.LogMessageParams) -> None:
        try:
            self.server.window_log_message(params)
        except Exception:
            pass


def attach(server: KimiLanguageServer) -> ClientLogHandler:
    handler = ClientLogHandler(server)
    logging.getLogger("kimi_lsp").addHandler(handler)
    return handler


def detach(handler: logging.Handler) -> None:
    logging.getLogger("kimi_lsp").removeHandler(handler)
