"""Structured logs: text by default, JSON (kube-scheduler's ``--logging-format=json`` shape) on request."""

from __future__ import annotations

import json
import logging


class JSONFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": record.created,
            "v": 0 if record.levelno >= logging.INFO else 4,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        if record.levelno >= logging.ERROR:
            entry["level"] = record.levelname.lower()
        if record.exc_info:
            entry["err"] = self.formatException(record.exc_info)
        return json.dumps(entry)
