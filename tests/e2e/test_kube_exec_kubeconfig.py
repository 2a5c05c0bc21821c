"""``kubesched run`` against the real kube-apiserver with a managed cluster's kind of kubeconfig:
found through ``$KUBECONFIG`` (no ``--kubeconfig``; a missing file listed first is skipped, as
client-go's tools/clientcmd/loader.go does), whose only credential is an exec plugin
(client-go's plugin/pkg/client/auth/exec/exec.go) printing a ServiceAccount token that the API
server issued through TokenRequest (pkg/registry/core/serviceaccount/storage/token.go).

The second case starts with a token the API server refuses: the 401 makes client-go's round
tripper run the plugin again, and the next requests use the new token.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_kube_support import Api, api, eventually, free_port, ns, scheduler_config, unique

from kubesched.kube.controlplane import ControlPlane

pytestmark = pytest.mark.controlplane
__all__ = ["api", "ns"]  # fixtures

PLUGIN = """\
#!{python}
import json, os, sys
here = os.path.dirname(os.path.abspath(__file__))
runs = os.path.join(here, "runs.jsonl")
with open(runs, "a") as f:
    f.write(json.dumps({{"info": os.environ.get("KUBERNETES_EXEC_INFO"), "argv": sys.argv[1:]}}) + "\\n")
n = sum(1 for _ in open(runs))
token = "not-a-token-the-apiserver-knows" if n == 1 and os.path.exists(os.path.join(here, "bad-first")) else None
token = token or open(os.environ["TOKEN_FILE"]).read().strip()
print(json.dumps({{
    "apiVersion": "client.authentication.k8s.io/v1",
    "kind": "ExecCredential",
    "status": {{"token": token, "expirationTimestamp": open(os.environ["TOKEN_FILE"] + ".exp").read().strip()}},
}}))
"""


def _service_account_token(api: Api, namespace: str) -> tuple[str, str, str]:
    """A ServiceAccount bound to cluster-admin (this test is about authentication, not RBAC:
    test_kube_rbac.py covers the rules); its TokenRequest token and expiry."""
    name = unique("exec-sa")
    api.ok(api.c.post(f"/api/v1/namespaces/{namespace}/serviceaccounts",
                      json={"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}}))
    api.ok(api.c.post("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", json={
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}],
    }))
    issued = api.ok(api.c.post(
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    ))
    return name, issued["status"]["token"], issued["status"]["expirationTimestamp"]


def _exec_kubeconfig(control_plane: ControlPlane, folder: Path, token: str, expires: str) -> Path:
    plugin_dir = folder / "plugin"
    plugin_dir.mkdir(parents=True)
    plugin = plugin_dir / "print-token"
    plugin.write_text(PLUGIN.format(python=sys.executable))
    plugin.chmod(0o755)
    token_file = folder / "sa.token"
    token_file.write_text(token)
    Path(f"{token_file}.exp").write_text(expires)
    kc = folder / "exec.kubeconfig"
    kc.write_text(yaml.safe_dump({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "e2e", "cluster": {"server": control_plane.url,
                                                  "certificate-authority": str(control_plane.ca_path)}}],
        "users": [{"name": "exec-user", "user": {"exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": "./plugin/print-token",  # relative to this kubeconfig's folder
            "args": ["--cluster", "e2e"],
            "env": [{"name": "TOKEN_FILE", "value": str(token_file)}],
            "interactiveMode": "Never",
            "provideClusterInfo": True,
        }}}],
        "contexts": [{"name": "e2e", "context": {"cluster": "e2e", "user": "exec-user"}}],
        "current-context": "e2e",
    }))
    return kc


def _runs(folder: Path) -> list[dict[str, Any]]:
    f = folder / "plugin" / "runs.jsonl"
    return [json.loads(line) for line in f.read_text().splitlines()] if f.exists() else []


@pytest.mark.parametrize("bad_first_token", [False, True], ids=["token", "401-then-token"])
def test_run_binds_a_pod_with_exec_credentials_from_kubeconfig_env(
    control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path, bad_first_token: bool
) -> None:
    sa, token, expires = _service_account_token(api, ns)
    try:
        _run_and_check(control_plane, api, ns, tmp_path, token, expires, bad_first_token)
    finally:
        api.c.delete(f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{sa}")


def _run_and_check(
    control_plane: ControlPlane, api: Api, ns: str, tmp_path: Path, token: str, expires: str, bad_first_token: bool
) -> None:
    kc = _exec_kubeconfig(control_plane, tmp_path, token, expires)
    if bad_first_token:
        (tmp_path / "plugin" / "bad-first").write_text("")
    sched = unique("exec-sched")
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(scheduler_config(sched)))
    log_path = tmp_path / "kubesched.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_SERVICE_")}
    env["KUBECONFIG"] = os.pathsep.join([str(tmp_path / "not-there.kubeconfig"), str(kc)])
    argv = [
        sys.executable, "-c", "import sys; from kubesched.cli import main; main(sys.argv[1:])",
        "run", f"--config={config}", f"--metrics-bind-address=127.0.0.1:{free_port()}", "--secure-port=0", "-v=10",
    ]
    api.node("n-exec", cpu="2")
    with log_path.open("wb") as log:
        proc = subprocess.Popen(argv, env=env, cwd=tmp_path.parent, stdin=subprocess.DEVNULL,
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        api.pod(ns, "hello", scheduler=sched)
        eventually(lambda: api.node_of(ns, "hello") == "n-exec" or proc.poll() is not None, "the pod bound")
        assert proc.poll() is None, log_path.read_text(errors="replace")[-3000:]
        assert api.node_of(ns, "hello") == "n-exec"
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    runs = _runs(tmp_path)
    # One run serves every request until the token expires in an hour; a refused token, one more.
    assert len(runs) == (2 if bad_first_token else 1), runs
    assert runs[0]["argv"] == ["--cluster", "e2e"]
    info = json.loads(runs[0]["info"])
    assert info["apiVersion"] == "client.authentication.k8s.io/v1"
    assert info["spec"]["interactive"] is False
    assert info["spec"]["cluster"]["server"] == control_plane.url
    assert info["spec"]["cluster"]["certificate-authority-data"]  # the CA file, passed as data
    log = log_path.read_text(errors="replace")
    assert "Successfully bound pod to node" in log
    assert token not in log  # not even at -v=10
    assert "not-a-token-the-apiserver-knows" not in log
