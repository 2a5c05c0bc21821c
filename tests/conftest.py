"""Suite-wide rules: in CI a skipped test is a failure unless its reason is on the allow list.

Control-plane tests fail (not skip) in CI by themselves; this catches every other silent skip.
"""

from __future__ import annotations

import os

import pytest

#: Skip reasons that are acceptable even in CI (substring match).
ALLOWED_SKIP_REASONS: tuple[str, ...] = ()

_bad_skips: list[str] = []


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
