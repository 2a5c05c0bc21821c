"""Issue 13, kube-scheduler's common flags against the real API server: ``--master`` replaces the
kubeconfig's server and keeps its CA and client certificate (clientcmd.BuildConfigFromFlags), so
``kubesched run --master=<url> --kubeconfig=<kubeconfig naming a wrong server>`` schedules; the rest
of a kubeadm command line (``--feature-gates``, ``--profiling=false``) is accepted on the way."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from test_kube_support import (
    Api,
    SubprocessScheduler,
    api,
    eventually,
    free_port,
    kubeconfig,
    ns,
    scheduler_config,
    subprocesses,
    unique,
)

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "kubeconfig", "ns"]  # fixtures


def test_master_overrides_the_kubeconfigs_server(
    api: Api, ns: str, kubeconfig: Path, control_plane: ControlPlane, tmp_path: Path
) -> None:
    doc = yaml.safe_load(kubeconfig.read_text())
    wrong = f"https://127.0.0.1:{free_port()}"  # nothing listens there
    for cluster in doc["clusters"]:
        cluster["cluster"]["server"] = wrong
    wrong_kubeconfig = tmp_path / "wrong-server.kubeconfig"
    wrong_kubeconfig.write_text(yaml.safe_dump(doc))

    sched = unique("sched")
    api.node("n-a", cpu="2")
    s = SubprocessScheduler(
        scheduler_config(sched), wrong_kubeconfig, tmp_path,
        f"--master={control_plane.url}",
        "--feature-gates=SchedulerAsyncPreemption=false",
        "--profiling=false",
    )
    with subprocesses(s):
        api.pod(ns, "p", scheduler=sched)
        eventually(lambda: api.node_of(ns, "p"), f"pod bound through --master (log:\n{s.log()[-3000:]})")
    assert api.node_of(ns, "p") == "n-a"
    log = s.log()
    assert control_plane.url in log and wrong not in log
    assert "Feature gates without effect in kubesched" in log and "SchedulerAsyncPreemption=false" in log
