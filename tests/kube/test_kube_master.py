"""``--master`` (issue 13): the API server's address over whichever config is used, as
clientcmd.BuildConfigFromFlags(master, kubeconfig) with its ConfigOverrides: the server replaced,
CA and credentials kept; with no config at all, the master alone without credentials."""

from __future__ import annotations

import logging
from pathlib import Path

import httpx
import pytest

from kubesched.kube.config import KubeConfigError, TokenFileAuth, connection_config, master_url

KUBECONFIG = """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://wrong.invalid:6443"{ca}}}]
users: [{name: u, user: {token: secret}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
"""


def write(tmp_path: Path, name: str = "kubeconfig", ca: str = "") -> str:
    path = tmp_path / name
    path.write_text(KUBECONFIG.replace("{ca}", ca))
    return str(path)


def test_master_replaces_the_kubeconfigs_server_and_keeps_its_credentials(tmp_path: Path) -> None:
    path = write(tmp_path)
    conn = connection_config(path, environ={}, master="https://10.0.0.1:6443/")
    assert conn.server == "https://10.0.0.1:6443"
    assert conn.headers == {"Authorization": "Bearer secret"}
    assert conn.source == path
    assert connection_config(path, environ={}).server == "https://wrong.invalid:6443"  # no master: unchanged
    assert connection_config(path, environ={}, master="").server == "https://wrong.invalid:6443"


def test_master_applies_to_kubeconfig_env(tmp_path: Path) -> None:
    path = write(tmp_path)
    conn = connection_config(None, environ={"KUBECONFIG": path}, master="http://127.0.0.1:8080")
    assert conn.server == "http://127.0.0.1:8080" and conn.headers == {"Authorization": "Bearer secret"}


def test_an_address_without_scheme_is_https_only_with_tls_settings(tmp_path: Path) -> None:
    plain = write(tmp_path, "plain")
    assert connection_config(plain, environ={}, master="10.0.0.1:6443").server == "http://10.0.0.1:6443"
    # TLS settings in the cluster entry: client-go's DefaultServerURL picks https
    tls = write(tmp_path, "tls", ", insecure-skip-tls-verify: true")
    assert connection_config(tls, environ={}, master="10.0.0.1:6443").server == "https://10.0.0.1:6443"
    assert master_url("[::1]:6443", tls=True) == "https://[::1]:6443"


def test_master_with_the_in_cluster_config_keeps_the_service_account(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("sa-token")
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    conn = connection_config(None, environ=env, sa_dir=tmp_path, master="https://10.0.0.1:6443")
    assert conn.server == "https://10.0.0.1:6443"
    assert isinstance(conn.auth, TokenFileAuth) and conn.auth.token() == "sa-token"


def test_master_alone_has_no_credentials_and_says_so(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kubesched.kube.config"):
        conn = connection_config(None, environ={}, sa_dir=tmp_path, master="http://127.0.0.1:8080")
    assert conn.server == "http://127.0.0.1:8080"
    assert conn.auth is None and conn.headers == {} and conn.source == "--master"
    assert [r.getMessage() for r in caplog.records if "without credentials" in r.getMessage()]
    with pytest.raises(KubeConfigError, match="not running in a cluster"):
        connection_config(None, environ={}, sa_dir=tmp_path)  # neither: as before


def test_master_request_goes_to_the_master(tmp_path: Path) -> None:
    conn = connection_config(write(tmp_path), environ={}, master="http://master.test:8080")
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={})

    with httpx.Client(base_url=conn.server, headers=conn.headers, transport=httpx.MockTransport(handler)) as c:
        c.get("/version")
    assert str(seen[0].url) == "http://master.test:8080/version"
    assert seen[0].headers["Authorization"] == "Bearer secret"


@pytest.mark.parametrize("bad", ["ftp://x", "http://", "http://[::1", "https://h:99999"])
def test_a_bad_master_is_refused(bad: str) -> None:
    with pytest.raises(KubeConfigError, match="--master"):
        master_url(bad, tls=True)
