"""Log lines never carry raw control characters (issue 11): a pod name holding an escape sequence or
a newline is escaped in klog's text format (unquoted Infof form and quoted InfoS values)."""

from __future__ import annotations

import logging

from kubesched.kube.klog import TextFormatter


def record(msg: str, *args: object, kv: dict[str, object] | None = None) -> logging.LogRecord:
    r = logging.LogRecord("kubesched", logging.INFO, "scheduler.py", 10, msg, args, None)
    if kv is not None:
        r.kv = kv
    return r


def test_infof_form_escapes_control_characters() -> None:
    line = TextFormatter().format(record("unable to schedule pod %s", "ns/p\x1b[2J\nI0101 forged"))
    assert line.endswith('] unable to schedule pod ns/p\\x1b[2J\\nI0101 forged')
    assert "\x1b" not in line and "\n" not in line


def test_infos_form_quotes_and_escapes_values() -> None:
    line = TextFormatter().format(record("Successfully bound pod to node", kv={"pod": "ns/p\x1b[31m"}))
    assert line.endswith('] "Successfully bound pod to node" pod="ns/p\\u001b[31m"')
