"""Shared fixtures for the GPU engine tests: the Alibaba trace and the ``slow`` marker."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kubesched.sim.alibaba import Trace, load_trace

# The trace lives next to the repository (../shared/data); KUBESCHED_ALIBABA_TRACE overrides the folder.
TRACE_DIR = Path(os.environ.get("KUBESCHED_ALIBABA_TRACE")
                 or Path(__file__).resolve().parents[3] / "shared" / "data" / "alibaba-gpu-v2023")
DATA_DIR = Path(__file__).resolve().parent / "data"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: long-running trace replays (deselect with -m 'not slow')")


@pytest.fixture(scope="session")
def default_trace() -> Trace:
    """openb_node_list_gpu_node.csv + openb_pod_list_default.csv, the paper's default workload."""
    pods = TRACE_DIR / "openb_pod_list_default.csv"
    if not pods.is_file():
        pytest.skip(f"Alibaba trace not found in {TRACE_DIR}")
    return load_trace(TRACE_DIR / "openb_node_list_gpu_node.csv", pods)


@pytest.fixture(scope="module")
def small_trace(default_trace: Trace) -> Trace:
    """60 nodes and 400 pods of the default trace (as tests/sim/test_trace_framework.py)."""
    return Trace(nodes=default_trace.nodes[:60], pods=default_trace.pods[:400])
