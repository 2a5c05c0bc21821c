"""Structured logs in Kubernetes' shapes, for ``kubesched run``.

* ``-v=N`` verbosity as klog: ``V(n)`` is the logging level ``INFO - n``, so ``log.log(v(2), ...)``
  shows from ``-v=2``. The core's ``log.debug`` lines show from ``-v=4``.
* ``--logging-format=text``: klog's header and a quoted message followed by ``key="value"``
  pairs, ``I0102 15:04:05.000000   12345 scheduler.py:123] "Successfully bound pod to node"
  pod="default/p" node="n1"``. Lines without key/values keep klog's unquoted ``Infof`` form.
* ``--logging-format=json``: one object per line with ``ts`` (epoch seconds), ``caller``, ``msg``,
  ``v`` and the key/values; errors under ``err`` (component-base's JSON format).

Key/values travel in ``extra={"kv": {...}}``; :func:`info_s` builds that call.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

from kubesched.api.text import printable

_SEVERITY = {logging.DEBUG: "I", logging.INFO: "I", logging.WARNING: "W", logging.ERROR: "E", logging.CRITICAL: "F"}


def v(n: int) -> int:
    """The logging level of klog's ``V(n)``."""
    return logging.INFO - max(0, min(n, 9))


def level_for(verbosity: int) -> int:
    """The threshold for ``-v=verbosity``: V(n) records up to n; DEBUG from -v=4."""
    level = logging.INFO - max(0, min(verbosity, 9))
    return min(level, logging.DEBUG) if verbosity >= 4 else level


def verbosity_of(levelno: int) -> int:
    if levelno >= logging.INFO:
        return 0
    if levelno > logging.DEBUG:
        return logging.INFO - levelno
    return 4


def kobj(obj: Mapping[str, Any]) -> str:
    """``klog.KObj``: ``namespace/name`` (or ``name``)."""
    md = obj.get("metadata") or {}
    ns = md.get("namespace")
    return f"{ns}/{md.get('name', '')}" if ns else str(md.get("name", ""))


def info_s(logger: logging.Logger, level: int, msg: str, **kv: Any) -> None:
    """``logger.V(n).InfoS(msg, k, v, ...)``."""
    if logger.isEnabledFor(level):
        logger.log(level, msg, extra={"kv": kv}, stacklevel=2)


def _quote(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, (int, float, bool)) or value is None:
        return json.dumps(value)
    return json.dumps(str(value), ensure_ascii=False)


class TextFormatter(logging.Formatter):
    """klog's text format."""

    def format(self, record: logging.LogRecord) -> str:
        t = time.localtime(record.created)
        micros = int((record.created % 1) * 1_000_000)
        sev = _SEVERITY.get(record.levelno, "I" if record.levelno < logging.WARNING else "W")
        header = (
            f"{sev}{time.strftime('%m%d %H:%M:%S', t)}.{micros:06d} {os.getpid():7d} {record.filename}:{record.lineno}]"
        )
        kv = getattr(record, "kv", None)
        msg = record.getMessage()
        # klog: InfoS quotes the message and appends key="value" pairs; Infof does neither.
        # Infof's unquoted form still escapes control characters: a name holding an escape
        # sequence or a newline must not reach the terminal or forge a log line.
        body = printable(msg) if kv is None else " ".join(
            [_quote(msg), *(f"{k}={_quote(val)}" for k, val in kv.items())])
        if record.exc_info:
            body += "\n" + self.formatException(record.exc_info)
        return f"{header} {body}"


class JSONFormatter(logging.Formatter):
    """component-base's JSON format."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": round(record.created, 6),
            "caller": f"{record.filename}:{record.lineno}",
            "msg": record.getMessage(),
            "v": verbosity_of(record.levelno),
        }
        if record.levelno >= logging.ERROR:
            entry["level"] = "error"
        elif record.levelno >= logging.WARNING:
            entry["level"] = "warning"
        kv = getattr(record, "kv", None)
        if kv:
            for k, val in kv.items():
                entry[k] = val if isinstance(val, (str, int, float, bool, type(None), list, dict)) else str(val)
        if record.exc_info:
            entry["err"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False)


def setup(verbosity: int, fmt: str = "text") -> None:
    """Log to stderr (as every Kubernetes component) at ``-v=verbosity`` in ``fmt``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JSONFormatter() if fmt == "json" else TextFormatter())
    logging.basicConfig(level=level_for(verbosity), handlers=[handler], force=True)
    # httpx logs every request at INFO; that is V(6)-level detail in Kubernetes terms.
    logging.getLogger("httpx").setLevel(logging.DEBUG if verbosity >= 6 else logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)
