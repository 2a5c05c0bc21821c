"""kubesched's /metrics next to kube-scheduler v1.35.4's, scraped in one cluster after the same work
(issue 13): every ``scheduler_*`` family kube-scheduler exposes is there with the same type and
the same label names, and nothing is exposed that kube-scheduler's output does not have (such as
prometheus_client's ``*_created`` samples).

Upstream: pkg/scheduler/metrics/metrics.go (v1.35), k8s.io/component-base/metrics (process_*).
"""

from __future__ import annotations

import time

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from test_kube_support import Api, InProcessScheduler, api, eventually, kube_scheduler, ns, scheduler_config, unique

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kube_scheduler", "ns"]  # fixtures

PREFIXES = ("scheduler_", "process_")
#: What kubesched does not expose yet, each with the reason (docs/status.md, issue 13). The list
#: can only shrink: a gap that is closed fails the test until it is removed here.
KNOWN_GAPS: dict[str, str] = {}


def families(text: str) -> dict[str, tuple[str, frozenset[str]]]:
    out: dict[str, tuple[str, frozenset[str]]] = {}
    for fam in text_string_to_metric_families(text):
        if not fam.name.startswith(PREFIXES):
            continue
        labels: set[str] = set()
        for s in fam.samples:
            labels.update(k for k in s.labels if k not in ("le", "quantile"))
        out[fam.name] = (fam.type, frozenset(labels))
    return out


def test_scheduler_metric_families_match_kube_scheduler(
    control_plane: ControlPlane, api: Api, ns: str, kube_scheduler: tuple[str, int]
) -> None:
    ks_name, ks_port = kube_scheduler
    ours_name = unique("kubesched")
    api.node("n1", cpu="2", memory="4Gi")
    sched = InProcessScheduler(scheduler_config(ours_name), control_plane.kubeconfig_path)
    # Every cycle timed (upstream samples 10 %): a handful of pods must show the plugin durations.
    sched.app.metrics.plugin_metrics_sample_percent = 100
    sched.start()
    try:
        for who in (ks_name, ours_name):
            # One pod that fits, one that never fits (unschedulable pods, plugin metrics), and a
            # high-priority pod that preempts the first (preemption metrics).
            api.pod(ns, f"{who}-fits", scheduler=who, cpu="500m")
            api.pod(ns, f"{who}-never", scheduler=who, cpu="64")
        eventually(lambda: all(api.node_of(ns, f"{w}-fits") for w in (ks_name, ours_name)) or None,
                   "both fitting pods bound", timeout=60)
        time.sleep(3)  # let both refresh their gauges
        theirs = families(httpx.get(f"https://127.0.0.1:{ks_port}/metrics", verify=False, timeout=30).text)
        ours = families(sched.metrics())
    finally:
        sched.stop()
    assert theirs, "kube-scheduler exposed nothing"
    for gap in KNOWN_GAPS:
        assert gap in theirs, f"{gap}: kube-scheduler no longer exposes it; remove it from KNOWN_GAPS"
        assert gap not in ours or not ours[gap][1], f"{gap}: now exposed; remove it from KNOWN_GAPS"
        theirs.pop(gap)
        ours.pop(gap, None)
    missing = sorted(set(theirs) - set(ours))
    extra = sorted(n for n in set(ours) - set(theirs) if not n.startswith("process_"))
    differ = sorted((n, theirs[n], ours[n]) for n in set(theirs) & set(ours) if theirs[n] != ours[n])
    assert not missing and not differ, (
        f"kube-scheduler has, kubesched lacks: {missing}\n"
        + "".join(f"{n}: kube-scheduler {t}, kubesched {o}\n" for n, t, o in differ)
    )
    assert not [n for n in ours if n.endswith("_created")], "prometheus_client's *_created samples"
    # Ours may have families kube-scheduler registers but shows only once observed: they must be
    # upstream names (listed in pkg/scheduler/metrics), never our own inventions.
    assert all(n.startswith("scheduler_") for n in extra)
