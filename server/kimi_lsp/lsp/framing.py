"""JSON-RPC framing over stdio that recovers from a bad frame.

pygls' reader only accepts ``Content-Length`` as a whole header line. One stray byte before a
header, or a length counted in characters instead of bytes, glues the rest of a body to the next
header line; every later header is then missed and the server, still running, never answers
again. This loop finds a ``Content-Length`` header anywhere at the end of a line, so the next
well-formed frame after any damage is read again, and says in the log what it skipped.
"""
from __future__ import annotations

import json
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

from pygls.exceptions import JsonRpcException

log = logging.getLogger("kimi_lsp.lsp")

# a header line, possibly preceded by the remains of a damaged frame
_CONTENT_LENGTH = re.compile(rb"Content-Length:[ \t]*(\d+)[ \t]*\r?\n\Z", re.IGNORECASE)
MAX_BODY = 256 * 1024 * 1024  # a body larger than this is a corrupt header, not a document


async def run_async(
    stop_event: threading.Event,
    reader: Any,
    protocol: Any,
    logger: logging.Logger | None = None,
    error_handler: Callable[[Exception, type[JsonRpcException]], Any] | None = None,
) -> None:
    """``pygls.io_.run_async`` with resynchronisation (same signature, drop-in)."""
    logger = logger or log
    content_length = 0
    while not stop_event.is_set():
        header = await reader.readline()
        if not header:
            break
        m = _CONTENT_LENGTH.search(header)
        if m is not None:
            if m.start() > 0 or content_length:
                logger.warning("kimi-lsp: skipped %d bytes of damaged JSON-RPC framing before a header", m.start())
            n = int(m.group(1))
            if n > MAX_BODY:
                logger.warning("kimi-lsp: ignored a frame claiming %d bytes", n)
                content_length = 0
                continue
            content_length = n
            continue
        if header.strip():
            if not header.lower().startswith(b"content-type:"):
                logger.warning("kimi-lsp: skipped a line that is not a JSON-RPC header (%d bytes)", len(header))
            continue
        if not content_length:
            continue  # an empty line with no length before it: nothing to read
        body = await reader.readexactly(content_length)
        content_length = 0
        if not body:
            break
        try:
            message = json.loads(body, object_hook=protocol.structure_message)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            # a length counted in characters (too short) or a stray byte: the rest of this
            # body is skipped up to the next header by the search above
            logger.warning("kimi-lsp: a JSON-RPC body did not parse (%s); waiting for the next frame", exc)
            continue
        except RecursionError:
            # JSON nested deeper than the interpreter's stack (200,000 `[`): no message can be
            # made of it. A request among them still gets an answer, or its client waits forever.
            logger.warning("kimi-lsp: a JSON-RPC body nested too deeply (%d bytes); ignored", len(body))
            answer_unreadable(protocol, body)
            continue
        except Exception as exc:  # noqa: BLE001 - pygls' own handling, as in its loop
            logger.exception("Unable to handle message")
            if error_handler:
                error_handler(exc, JsonRpcException)
            continue
        try:
            protocol.handle_message(message)
        except Exception as exc:  # noqa: BLE001
            logger.exception("Unable to handle message")
            if error_handler:
                error_handler(exc, JsonRpcException)


# `"id": 7` or `"id": "a-7"` among a request's leading members, as clients write them (jsonrpc, id,
# method, then params): only looked for before the first bracket, so never inside the params
_LEADING_ID = re.compile(rb'\A\s*\{[^{}\[\]]*?"id"\s*:\s*(-?[0-9]{1,18}|"[^"\\]{0,200}")')


def answer_unreadable(protocol: Any, body: bytes) -> None:
    """Answer a request whose body could not be read with InvalidRequest (-32600), when its
    ``id`` can be told from the members before its first nested value; otherwise nothing."""
    m = _LEADING_ID.match(body)
    if m is None or b'"method"' not in body[: m.end() + 4096]:
        return
    from lsprotocol import types as T

    msg_id = json.loads(m.group(1))
    protocol._send_response(msg_id, error=T.ResponseError(code=-32600, message="request nested too deeply to read"))


def install() -> None:
    """Make pygls' stdio and TCP servers use this loop."""
    import pygls.server

    # pygls.server imports run_async from pygls.io_ (not re-exported) and calls it by that name
    pygls.server.run_async = run_async  # type: ignore[attr-defined]
