"""Fixtures for tests that run against a real etcd + kube-apiserver (built by scripts/controlplane.sh).

``control_plane`` is one control plane per test session; without binaries it skips locally and
fails under CI (see ``kubesched.kube.controlplane.controlplane_fixture``).
"""

from __future__ import annotations

import pytest

from kubesched.kube.controlplane import controlplane_fixture

control_plane = pytest.fixture(scope="session", name="control_plane")(controlplane_fixture)
