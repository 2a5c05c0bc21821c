"""Which kubeconfig is used, and how ``$KUBECONFIG`` files merge.

Ported from client-go's tools/clientcmd/loader.go (v1.35: ``NewDefaultClientConfigLoadingRules``
splits ``$KUBECONFIG`` with ``filepath.SplitList`` and drops duplicates; ``Load`` skips missing
files, lets the first file to set a map key win — a later file's entry of the same name is
discarded whole — takes ``current-context`` from the first file that sets it, and resolves
relative paths against the file that defined the entry) and loader_test.go's merge cases
(``TestConflictingCurrentContext``, ``TestResolveRelativePaths``). The precedence flag >
clientConnection.kubeconfig > $KUBECONFIG > in-cluster is ours (see ``connection_config``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from click.testing import CliRunner

from kubesched.cli import cli
from kubesched.kube.config import KubeConfigError, TokenFileAuth, connection_config


def _write(path: Path, doc: dict[str, Any]) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", **doc}))
    return str(path)


def _cluster(name: str, server: str) -> dict[str, Any]:
    return {"name": name, "cluster": {"server": server}}


def _user(name: str, **user: Any) -> dict[str, Any]:
    return {"name": name, "user": user}


def _ctx(name: str, cluster: str, user: str) -> dict[str, Any]:
    return {"name": name, "context": {"cluster": cluster, "user": user}}


def _bearer(conn: Any) -> str:
    if conn.auth is None:
        return str(conn.headers.get("Authorization", ""))
    return str(next(conn.auth.sync_auth_flow(httpx.Request("GET", "https://x"))).headers["Authorization"])


@pytest.fixture
def two_files(tmp_path: Path) -> tuple[str, str]:
    first = _write(
        tmp_path / "a" / "config",
        {
            "current-context": "alpha",
            "clusters": [_cluster("shared", "https://first.example:6443")],
            "users": [_user("admin", token="first-token")],
            "contexts": [_ctx("alpha", "shared", "admin")],
        },
    )
    second = _write(
        tmp_path / "b" / "config",
        {
            "current-context": "beta",
            "clusters": [_cluster("shared", "https://second.example:6443"), _cluster("own", "https://own.example")],
            # same name as in the first file: discarded whole, even its non-conflicting fields
            "users": [_user("admin", token="second-token", username="x"), _user("ops", tokenFile="ops.token")],
            "contexts": [_ctx("alpha", "own", "ops"), _ctx("beta", "shared", "ops"), _ctx("gamma", "own", "ops")],
        },
    )
    return first, second


def test_first_file_wins_map_keys_and_current_context(two_files: tuple[str, str]) -> None:
    first, second = two_files
    conn = connection_config(None, environ={"KUBECONFIG": os.pathsep.join([first, second])})
    # current-context "alpha" from the first file; its context, cluster and user from the first file too
    assert conn.server == "https://first.example:6443"
    assert _bearer(conn) == "Bearer first-token"
    assert conn.source == os.pathsep.join([first, second])
    # the other order: "beta" from the (now) first file, context beta -> cluster shared of that file
    conn = connection_config(None, environ={"KUBECONFIG": os.pathsep.join([second, first])})
    assert conn.server == "https://second.example:6443"
    assert isinstance(conn.auth, TokenFileAuth)


def test_current_context_from_a_later_file_and_entries_from_the_first(
    tmp_path: Path, two_files: tuple[str, str]
) -> None:
    first, second = two_files
    no_current = _write(tmp_path / "c" / "config", {"clusters": [_cluster("own", "https://third.example")]})
    conn = connection_config(None, environ={"KUBECONFIG": os.pathsep.join([no_current, second])})
    # current-context "beta" comes from the second file; cluster "shared" only exists there
    assert conn.server == "https://second.example:6443"
    conn = connection_config(None, environ={"KUBECONFIG": os.pathsep.join([no_current, second, first])})
    assert conn.server == "https://second.example:6443"


def test_relative_paths_resolve_against_the_defining_file(tmp_path: Path, two_files: tuple[str, str]) -> None:
    first, second = two_files
    (Path(second).parent / "ops.token").write_text("ops-token\n")
    conn = connection_config(None, environ={"KUBECONFIG": os.pathsep.join([second, first])})
    assert isinstance(conn.auth, TokenFileAuth)
    assert conn.auth.path == Path(second).parent / "ops.token"
    assert _bearer(conn) == "Bearer ops-token"


def test_missing_files_in_the_list_are_skipped(tmp_path: Path, two_files: tuple[str, str]) -> None:
    first, _ = two_files
    env = {"KUBECONFIG": os.pathsep.join(["", str(tmp_path / "absent"), first, first])}
    assert connection_config(None, environ=env).server == "https://first.example:6443"


def test_a_broken_file_in_the_list_is_an_error(tmp_path: Path, two_files: tuple[str, str]) -> None:
    first, _ = two_files
    bad = tmp_path / "bad"
    bad.write_text("clusters: [\n")
    with pytest.raises(KubeConfigError, match=f"{bad}:.*cannot read kubeconfig: invalid YAML"):
        connection_config(None, environ={"KUBECONFIG": os.pathsep.join([first, str(bad)])})


def test_a_name_twice_in_one_file_is_an_error(tmp_path: Path) -> None:
    """tools/clientcmd/api/v1/conversion.go: 'duplicate name "..." in list'."""
    kc = _write(tmp_path / "kc", {"users": [_user("u", token="a"), _user("u", token="b")]})
    with pytest.raises(KubeConfigError, match=r'users\[1\]: duplicate name "u" in list'):
        connection_config(kc, environ={})


def _in_cluster(tmp_path: Path) -> tuple[dict[str, str], Path]:
    sa = tmp_path / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token")
    return {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}, sa


def test_precedence_flag_then_kubeconfig_env_then_in_cluster(tmp_path: Path, two_files: tuple[str, str]) -> None:
    first, _ = two_files
    env, sa = _in_cluster(tmp_path)
    explicit = _write(
        tmp_path / "explicit",
        {"current-context": "x", "clusters": [_cluster("c", "https://explicit.example")],
         "contexts": [{"name": "x", "context": {"cluster": "c"}}]},
    )
    env_kc = {**env, "KUBECONFIG": first}
    assert connection_config(explicit, environ=env_kc, sa_dir=sa).server == "https://explicit.example"
    assert connection_config(None, environ=env_kc, sa_dir=sa).server == "https://first.example:6443"
    assert connection_config(None, environ=env, sa_dir=sa).server == "https://10.96.0.1:443"
    # $KUBECONFIG naming only missing files falls back to the in-cluster config, as clientcmd does
    gone = {**env, "KUBECONFIG": str(tmp_path / "gone")}
    assert connection_config(None, environ=gone, sa_dir=sa).source == "in-cluster"


def test_nothing_usable_says_what_was_tried(tmp_path: Path) -> None:
    with pytest.raises(KubeConfigError) as err:
        connection_config(None, environ={"KUBECONFIG": str(tmp_path / "gone")}, sa_dir=tmp_path)
    assert str(tmp_path / "gone") in str(err.value)
    assert "not running in a cluster" in str(err.value)
    with pytest.raises(KubeConfigError, match="cannot read kubeconfig"):
        connection_config(str(tmp_path / "gone"), environ={}, sa_dir=tmp_path)


def test_kubesched_run_reads_kubeconfig_from_the_environment(tmp_path: Path) -> None:
    """``kubesched run`` with no --kubeconfig uses $KUBECONFIG (it used to say it is not in a
    cluster): a plugin that is not installed is reported with its installHint, exit 2."""
    kc = _write(
        tmp_path / "kc",
        {
            "current-context": "eks",
            "clusters": [_cluster("c", "https://eks.example")],
            "users": [_user("u", exec={"apiVersion": "client.authentication.k8s.io/v1beta1",
                                       "command": "no-such-eks-plugin", "installHint": "install the EKS CLI"})],
            "contexts": [_ctx("eks", "c", "u")],
        },
    )
    result = CliRunner().invoke(cli, ["run", "--leader-elect=false"], env={"KUBECONFIG": kc})
    assert result.exit_code == 2
    assert "exec: executable no-such-eks-plugin not found" in result.output
    assert "install the EKS CLI" in result.output
    assert "not running in a cluster" not in result.output
