"""Log lines in Kubernetes' formats (klog text header; component-base JSON with ts, caller,
msg, v and key/values) and klog verbosity: V(n) shows from -v=n."""

from __future__ import annotations

import json
import logging
import re

from kubesched.kube.klog import JSONFormatter, TextFormatter, info_s, level_for, v, verbosity_of


def record(level: int, msg: str, kv: dict[str, object] | None = None) -> logging.LogRecord:
    rec = logging.LogRecord("kubesched.kube", level, "/x/schedule_one.py", 42, msg, (), None)
    if kv is not None:
        rec.kv = kv
    return rec


def test_text_format() -> None:
    line = TextFormatter().format(
        record(v(2), "Successfully bound pod to node", {"pod": "ns/p", "node": "n1", "evaluatedNodes": 3})
    )
    header = r"^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ schedule_one\.py:42\] "
    assert re.match(header + r'"Successfully bound pod to node" pod="ns/p" node="n1" evaluatedNodes=3$', line), line
    plain = TextFormatter().format(record(logging.WARNING, "plain %s"))
    assert re.match(r"^W\d{4} .*schedule_one\.py:42\] plain %s$", plain)


def test_json_format() -> None:
    entry = json.loads(
        JSONFormatter().format(record(v(2), "Unable to schedule pod", {"pod": "ns/p", "err": "0/1 nodes"}))
    )
    assert entry["msg"] == "Unable to schedule pod"
    assert entry["v"] == 2
    assert entry["caller"] == "schedule_one.py:42"
    assert (entry["pod"], entry["err"]) == ("ns/p", "0/1 nodes")
    assert isinstance(entry["ts"], float)
    err = json.loads(JSONFormatter().format(record(logging.ERROR, "boom")))
    assert err["level"] == "error" and err["v"] == 0


def test_verbosity_levels() -> None:
    assert level_for(0) == logging.INFO
    assert level_for(2) == v(2) == logging.INFO - 2
    assert level_for(4) == logging.DEBUG  # the core's debug lines from -v=4
    assert verbosity_of(v(3)) == 3 and verbosity_of(logging.DEBUG) == 4 and verbosity_of(logging.ERROR) == 0
    log = logging.getLogger("kubesched.test.klog")
    log.setLevel(level_for(1))
    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    log.addHandler(handler)
    try:
        info_s(log, v(1), "shown", a=1)
        info_s(log, v(2), "hidden")
    finally:
        log.removeHandler(handler)
    assert [(r.getMessage(), r.kv) for r in seen] == [("shown", {"a": 1})]  # type: ignore[attr-defined]
    assert seen[0].filename == "test_kube_klog.py"  # the caller, not the helper
