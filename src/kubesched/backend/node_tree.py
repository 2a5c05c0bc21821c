"""Zone-interleaved node order (upstream ``pkg/scheduler/backend/cache/node_tree.go``).

Nodes are grouped by zone and listed round-robin across zones, so that sampling the first nodes
of the list (percentageOfNodesToScore) spreads over zones instead of draining one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
#: Deprecated labels, still honoured when the stable ones are absent (old nodes carry only these).
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"


def zone_key(node: Mapping[str, Any]) -> str:
    """Upstream ``utilnode.GetZoneKey``: "region:\\x00:zone", empty when neither label is set."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    region = labels[REGION_LABEL] if REGION_LABEL in labels else labels.get(BETA_REGION_LABEL, "")
    zone = labels[ZONE_LABEL] if ZONE_LABEL in labels else labels.get(BETA_ZONE_LABEL, "")
    if not region and not zone:
        return ""
    return f"{region}:\x00:{zone}"


class NodeTree:
    def __init__(self) -> None:
        self._zones: list[str] = []
        self._tree: dict[str, list[str]] = {}
        self._zone_of: dict[str, str] = {}

    def add(self, node: Mapping[str, Any]) -> None:
        name = node["metadata"]["name"]
        zone = zone_key(node)
        if name in self._zone_of:
            if self._zone_of[name] == zone:
                return
            self.remove(name)
        if zone not in self._tree:
            self._zones.append(zone)
            self._tree[zone] = []
        self._tree[zone].append(name)
        self._zone_of[name] = zone

    def remove(self, name: str) -> None:
        zone = self._zone_of.pop(name, None)
        if zone is None:
            return
        names = self._tree[zone]
        names.remove(name)
        if not names:
            del self._tree[zone]
            self._zones.remove(zone)

    def update(self, node: Mapping[str, Any]) -> None:
        self.add(node)

    def __len__(self) -> int:
        return len(self._zone_of)

    def list(self) -> list[str]:
        """Round-robin over zones, in the order zones and nodes were added."""
        out: list[str] = []
        idx = 0
        total = len(self._zone_of)
        while len(out) < total:
            for zone in self._zones:
                names = self._tree[zone]
                if idx < len(names):
                    out.append(names[idx])
            idx += 1
        return out
