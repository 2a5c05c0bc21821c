"""Suite-wide rules: in CI a skipped test is a failure unless its reason is on the allow list.

Control-plane tests fail (not skip) in CI by themselves; this catches every other silent skip.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator

import pytest

#: Skip reasons that are acceptable even in CI (substring match).
ALLOWED_SKIP_REASONS: tuple[str, ...] = ()

_bad_skips: list[str] = []


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """Undo what a test's CLI run does to logging (``-v``/klog set levels and handlers), so that a
    later test's ``caplog`` sees only what it asked for, whatever the order tests run in."""
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    named = {
        name: lg.level
        for name, lg in logging.Logger.manager.loggerDict.items()
        if isinstance(lg, logging.Logger) and name.startswith(("kubesched", "httpx", "httpcore"))
    }
    yield
    root.setLevel(level)
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    for name, lg in logging.Logger.manager.loggerDict.items():
        if isinstance(lg, logging.Logger) and name.startswith(("kubesched", "httpx", "httpcore")):
            lg.setLevel(named.get(name, logging.NOTSET))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if not os.environ.get("CI") or not report.skipped:
        return
    reason = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if "xfail" in getattr(report, "keywords", {}):
        return
    if not any(a in reason for a in ALLOWED_SKIP_REASONS):
        _bad_skips.append(f"{report.nodeid}: {reason}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _bad_skips:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"CI: {len(_bad_skips)} test(s) skipped without an allowed reason:", red=True)
            for s in _bad_skips:
                tr.write_line(f"  {s}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
