"""``find_binaries``: where the tests look for the control planes scripts/controlplane.sh builds.

The directory layout is the build script's: ``$CACHE/<vX.Y.Z>/`` per Kubernetes release (one per
``--k8s-version``), each complete once it holds executable ``etcd`` and ``kube-apiserver``."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesched.kube.controlplane import (
    BIN_ENV,
    CACHE_ENV,
    K8S_MINOR,
    ControlPlane,
    ControlPlaneNotBuiltError,
    find_binaries,
)


def _release_dir(root: Path, name: str, *, complete: bool = True) -> Path:
    directory = root / name
    directory.mkdir(parents=True)
    for binary in ("etcd", "kube-apiserver", "kube-scheduler") if complete else ("etcd",):
        path = directory / binary
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)
    return directory


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "controlplane"
    monkeypatch.setenv(CACHE_ENV, str(root))
    monkeypatch.delenv(BIN_ENV, raising=False)
    _release_dir(root, "v1.35.4")
    _release_dir(root, "v1.35.10")
    _release_dir(root, "v1.37.2")
    _release_dir(root, "v1.37.10")
    _release_dir(root, "v1.37.11", complete=False)  # an interrupted build
    _release_dir(root, "v1.3.0")  # a prefix of v1.37 that is not v1.37
    return root


def test_default_is_the_newest_complete_directory_of_the_pinned_minor(cache: Path) -> None:
    assert K8S_MINOR == "v1.37"  # the default release (config/releases.py)
    found = find_binaries()
    assert found.directory == cache / "v1.37.10"  # 10 > 2: numeric, not lexical; v1.37.11 is incomplete
    assert found.kube_scheduler == cache / "v1.37.10" / "kube-scheduler"


@pytest.mark.parametrize("release", ["v1.37", "1.37", " v1.37 "])
def test_a_minor_finds_its_newest_complete_directory(cache: Path, release: str) -> None:
    assert find_binaries(release).directory == cache / "v1.37.10"


def test_the_explicit_directory_wins_without_a_release_and_its_siblings_serve_other_releases(
    cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ci_root = tmp_path / "ci-cache"
    pinned = _release_dir(ci_root, "v1.35.4")
    sibling = _release_dir(ci_root, "v1.37.12")
    monkeypatch.setenv(BIN_ENV, str(pinned))
    assert find_binaries().directory == pinned
    assert find_binaries("1.35").directory == pinned  # of that minor: used outright
    assert find_binaries("v1.37").directory == sibling  # siblings before the cache root


def test_a_release_not_built_names_the_build_command(cache: Path) -> None:
    with pytest.raises(ControlPlaneNotBuiltError, match=r"scripts/controlplane.sh --k8s-version v1\.36\.<patch>"):
        find_binaries("v1.36")


@pytest.mark.parametrize("release", ["v1.37.2", "1", "latest", ""])
def test_a_release_is_a_minor(cache: Path, release: str) -> None:
    with pytest.raises(ValueError, match="minor version"):
        find_binaries(release)


def test_kube_controller_manager_is_found_only_when_built(cache: Path) -> None:
    """``--with-kcm`` adds kube-controller-manager to a release's directory; without it the
    control plane is still complete and asking for the controller-manager names the flag."""
    assert find_binaries().kube_controller_manager is None
    with pytest.raises(ControlPlaneNotBuiltError, match=r"kube-controller-manager not built in .*--with-kcm"):
        ControlPlane(find_binaries()).start_controller_manager()
    kcm = cache / "v1.37.10" / "kube-controller-manager"
    kcm.write_text("#!/bin/sh\n")
    assert find_binaries().kube_controller_manager is None  # not executable: an interrupted copy
    kcm.chmod(0o755)
    assert find_binaries().kube_controller_manager == kcm
