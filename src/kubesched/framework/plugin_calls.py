"""Calling one plugin method safely: what every extension point of the runtime shares.

Upstream's runtime (``pkg/scheduler/framework/runtime/framework.go``) calls a plugin and reads its
``*Status``; a Go plugin cannot raise. Here a plugin may return None for Success, may return
something that is no Status, or may raise: each becomes a Status naming the plugin, so one broken
plugin fails its pod's cycle and never the scheduler. Shared by ``runtime.py`` and
``filtering.py``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kubesched.api.errors import InvalidObjectError

from .interfaces import Plugin
from .status import Code, Status, StatusLike

#: The runtime's logger (``runtime.py`` logs under the same name).
log = logging.getLogger("kubesched.framework")


def quote(name: str) -> str:
    """Go's ``%q`` of a plugin or pod name: upstream's messages quote names with double quotes."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def one_line(err: object) -> str:
    """An exception's text on one line (a log line or a message per problem)."""
    return " ".join(str(err).split()) or type(err).__name__


def debug_traceback(plugin: str, point: str) -> None:
    """The traceback of the exception being handled, at -v 4 (DEBUG) only: a plugin's failure is
    reported once as a status or a warning line, never as a traceback at the default verbosity."""
    log.debug("plugin %s failed at %s", plugin, point, exc_info=True)


def exception_status(plugin: Plugin, point: str, err: Exception) -> Status:
    """A plugin's exception as its Error status. The scheduler logs the status's message once
    (one line, as upstream logs an error status); the traceback only at -v 4 (DEBUG)."""
    if isinstance(err, InvalidObjectError):  # bad input, not a bug: no traceback
        log.warning("plugin %s at %s: invalid object: %s", plugin.name, point, err)
    else:
        debug_traceback(plugin.name, point)
    return Status(Code.ERROR, str(err) or type(err).__name__, error=err, plugin=plugin.name)


def call_plugin(plugin: Plugin, point: str, fn: Callable[..., StatusLike], *args: Any) -> Status:
    """Run one plugin method, ``fn(*args)``: ``None`` -> Success, an exception -> Error naming
    the plugin.

    The Error carries the bare exception text; each extension point wraps it in upstream's
    message for that point (``running PreFilter plugin "X": ...``)."""
    try:
        result = fn(*args)
    except Exception as err:
        return exception_status(plugin, point, err)
    if result is None:
        return Status(Code.SUCCESS)
    if type(result) is not Status and not isinstance(result, Status):
        return Status(Code.ERROR, f"returned {result!r}, not a Status", plugin=plugin.name)
    return result


def call_plugin_pair(
    plugin: Plugin, point: str, fn: Callable[..., tuple[Any, StatusLike]], *args: Any
) -> tuple[Any, Status]:
    """:func:`call_plugin` for methods returning ``(value, status)`` (PreFilter, Permit, PostFilter)."""
    try:
        value, result = fn(*args)
    except Exception as err:
        return None, exception_status(plugin, point, err)
    if result is None:
        return value, Status(Code.SUCCESS)
    if type(result) is not Status and not isinstance(result, Status):
        return value, Status(Code.ERROR, f"returned {result!r}, not a Status", plugin=plugin.name)
    return value, result


__all__ = ["call_plugin", "call_plugin_pair", "debug_traceback", "exception_status", "one_line", "quote"]
