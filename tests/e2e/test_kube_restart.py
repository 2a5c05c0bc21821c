"""kube-apiserver restarted under a running kubesched (``ControlPlane.restart_apiserver``).

Every watch and connection is cut; kubesched must reconnect (with backoff), resume or re-list
(410 Gone after the restart's fresh watch cache), retry failed bindings, and still bind every
pod exactly once without over-committing a node: no pod ever seen on two nodes, at most one
``Scheduled`` event per pod, and the requests on each node within its allocatable CPU.
"""

from __future__ import annotations

import threading
from pathlib import Path

import httpx
import pytest
from test_kube_support import (
    Api,
    PodWatch,
    api,
    eventually,
    in_process,
    kubeconfig,
    ns,
    scheduler_config,
    unique,
)

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kubeconfig", "ns"]  # fixtures


def _create_retrying(api: Api, ns: str, sched: str, name: str) -> None:
    """Create a pod, retrying while the API server is down."""

    def attempt() -> bool:
        try:
            resp = api.c.post(
                f"/api/v1/namespaces/{ns}/pods",
                json={
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {"name": name},
                    "spec": {
                        "schedulerName": sched,
                        "terminationGracePeriodSeconds": 0,
                        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "200m"}}}],
                    },
                },
            )
        except httpx.HTTPError:
            return False
        return resp.status_code in (201, 409)

    eventually(attempt, f"pod {name} created", timeout=120, interval=0.5)


def test_every_pod_bound_exactly_once_across_an_apiserver_restart(
    control_plane: ControlPlane, api: Api, ns: str, kubeconfig: Path
) -> None:
    sched = unique("sched")
    for n in ("n-1", "n-2"):
        api.node(n, cpu="4")
    names = [f"p-{i:02d}" for i in range(30)]
    with PodWatch(control_plane, ns) as watch, in_process(scheduler_config(sched), kubeconfig) as ks:
        for n in names[:10]:
            _create_retrying(api, ns, sched, n)
        eventually(lambda: all(api.node_of(ns, n) for n in names[:10]), "the first pods bound")
        pods_informer = ks.app.cluster.informers["Pod"]
        watches_before = pods_informer.watches

        # Restart while more pods arrive (some bindings are in flight when the server goes).
        creator = threading.Thread(target=lambda: [_create_retrying(api, ns, sched, n) for n in names[10:]])
        creator.start()
        control_plane.restart_apiserver()
        creator.join(180)
        assert not creator.is_alive()

        def all_bound() -> bool:
            try:
                return all(api.node_of(ns, n) for n in names)
            except httpx.HTTPError:
                return False

        eventually(all_bound, "every pod bound after the restart", timeout=120)
        # The informers are live again: a node added now is used.
        api.node("n-3", cpu="1", labels={"example.com/after": "restart"})
        api.pod(ns, "late", scheduler=sched, cpu="200m", extra_spec={"nodeSelector": {"example.com/after": "restart"}})
        eventually(lambda: api.node_of(ns, "late") == "n-3", "a pod bound to a node added after the restart")

        assert pods_informer.watches > watches_before
        everything = [*names, "late"]
        watch.wait_seen(everything, timeout=60)
        assert all(len(watch.nodes.get(n, ())) == 1 for n in everything), watch.nodes
        scheduled = [e["regarding"]["name"] for e in api.events(ns, reason="Scheduled")]
        assert all(scheduled.count(n) <= 1 for n in everything), scheduled
        used: dict[str, int] = {}
        for pod in api.pods(ns):
            used[pod["spec"]["nodeName"]] = used.get(pod["spec"]["nodeName"], 0) + 200
        assert used["n-1"] <= 4000 and used["n-2"] <= 4000 and used["n-3"] <= 1000, used
        assert ks.app.cluster.bindings <= len(everything)
