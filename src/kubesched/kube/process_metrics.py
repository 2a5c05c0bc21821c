"""The ``process_*`` families kube-scheduler exposes (client_golang's process collector).

prometheus_client's ``ProcessCollector`` gives six of them under the same names; this adds the
three it lacks, read from ``/proc`` as client_golang does: ``process_virtual_memory_max_bytes``
(the address-space limit, ``-1`` when unlimited), and ``process_network_receive_bytes_total`` /
``process_network_transmit_bytes_total`` (every interface of ``/proc/self/net/dev`` summed, as
procfs's ``NetDev.Total``). Off Linux, the collector yields nothing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from prometheus_client import CollectorRegistry, ProcessCollector
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

PROC = Path("/proc/self")


def _address_space_limit(limits: str) -> float | None:
    for line in limits.splitlines():
        if line.startswith("Max address space"):
            soft = line[len("Max address space"):].split()[0]
            return -1.0 if soft == "unlimited" else float(soft)
    return None


def _net_totals(netdev: str) -> tuple[float, float] | None:
    """Received and transmitted bytes over every interface (``/proc/<pid>/net/dev``)."""
    rx = tx = 0.0
    seen = False
    for line in netdev.splitlines()[2:]:
        _, sep, rest = line.partition(":")
        fields = rest.split()
        if not sep or len(fields) < 9:
            continue
        rx += float(fields[0])
        tx += float(fields[8])
        seen = True
    return (rx, tx) if seen else None


class ExtraProcessCollector(Collector):
    def __init__(self, proc: Path = PROC) -> None:
        self.proc = proc

    def _read(self, name: str) -> str | None:
        try:
            return (self.proc / name).read_text()
        except OSError:
            return None

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        limits = self._read("limits")
        limit = _address_space_limit(limits) if limits is not None else None
        if limit is not None:
            yield GaugeMetricFamily("process_virtual_memory_max_bytes",
                                    "Maximum amount of virtual memory available in bytes.", value=limit)
        netdev = self._read("net/dev")
        totals = _net_totals(netdev) if netdev is not None else None
        if totals is not None:
            yield CounterMetricFamily("process_network_receive_bytes",
                                      "Number of bytes received by the process over the network.", value=totals[0])
            yield CounterMetricFamily("process_network_transmit_bytes",
                                      "Number of bytes sent by the process over the network.", value=totals[1])


def register_process_metrics(registry: CollectorRegistry) -> None:
    ProcessCollector(registry=registry)
    registry.register(ExtraProcessCollector())
