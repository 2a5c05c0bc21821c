"""The process_* families client_golang adds and prometheus_client lacks, read as procfs reads them
(prometheus/procfs: limits.go "Max address space", net_dev.go Total over every interface)."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from kubesched.kube.process_metrics import ExtraProcessCollector, register_process_metrics

LIMITS = """Limit                     Soft Limit           Hard Limit           Units
Max open files            1024                 4096                 files
Max address space         8589934592           unlimited            bytes
"""
NET_DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes packets errs drop fifo colls carrier compressed
    lo: 1000 10 0 0 0 0 0 0 1000 10 0 0 0 0 0 0
  eth0: 250000 300 0 0 0 0 0 0 40000 200 0 0 0 0 0 0
"""


def test_extra_families_from_proc(tmp_path: Path) -> None:
    (tmp_path / "net").mkdir()
    (tmp_path / "limits").write_text(LIMITS)
    (tmp_path / "net" / "dev").write_text(NET_DEV)
    reg = CollectorRegistry()
    reg.register(ExtraProcessCollector(tmp_path))
    text = generate_latest(reg).decode()
    assert "process_virtual_memory_max_bytes 8.589934592e+09" in text
    assert "process_network_receive_bytes_total 251000.0" in text
    assert "process_network_transmit_bytes_total 41000.0" in text


def test_unlimited_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "limits").write_text(LIMITS.replace("8589934592  ", "unlimited   "))
    reg = CollectorRegistry()
    reg.register(ExtraProcessCollector(tmp_path))
    text = generate_latest(reg).decode()
    assert "process_virtual_memory_max_bytes -1.0" in text
    assert "process_network" not in text  # no net/dev: nothing rather than a made-up zero


def test_all_nine_families_on_this_machine() -> None:
    reg = CollectorRegistry()
    register_process_metrics(reg)
    names = {line.split()[2] for line in generate_latest(reg).decode().splitlines() if line.startswith("# TYPE")}
    assert names == {
        "process_cpu_seconds_total", "process_max_fds", "process_network_receive_bytes_total",
        "process_network_transmit_bytes_total", "process_open_fds", "process_resident_memory_bytes",
        "process_start_time_seconds", "process_virtual_memory_bytes", "process_virtual_memory_max_bytes",
    }
