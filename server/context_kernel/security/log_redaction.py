"""Secrets out of what the server logs (stderr, which MCP clients keep in their own log files).

A log message is ours and stays as written; what it quotes — its `%` arguments (an error's text, a
URL, a command) and the traceback of an exception — is redacted before any handler formats it.
Installed on the handlers `serve` sets up (cli/serving.py), so every logger's records pass through it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .redact import redact_text


class RedactingFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, Mapping):
            record.args = {key: _clean(value) for key, value in record.args.items()}
        elif record.args:
            record.args = tuple(_clean(arg) for arg in record.args)
        if record.exc_info and record.exc_info[0] is not None and not record.exc_text:
            # Formatters reuse exc_text when it is set: the redacted traceback is what they print.
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        if record.stack_info:
            record.stack_info = redact_text(record.stack_info)
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Put the filter on every handler of `logger` (the root logger by default)."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())


def _clean(value: Any) -> Any:
    """Strings and exceptions are quoted text; numbers and other values are left to format as they do."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, BaseException):
        return redact_text(str(value))
    return value
