"""Reading Kubernetes manifests for the simulator: YAML files or folders, several documents each.

The simulator plays the API server's part for what admission would do to a pod (a namespace, a
UID, the priority of its PriorityClass, the default scheduler name), so manifests written for a
real cluster behave the same here.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.sim.timeparse import parse_rfc3339, parse_sim_duration
from kubesched.sim.timeparse import parse_time_or_offset as _parse_time_or_offset

ARRIVAL_ANNOTATION = "sim.kubesched.io/arrival"
DURATION_ANNOTATION = "sim.kubesched.io/duration"
YAML_SUFFIXES = (".yaml", ".yml", ".json")


class ManifestError(ValueError):
    """A manifest problem, naming the file, the document and the field."""


@dataclass
class ClusterObjects:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    #: Every other kind (Namespace, PriorityClass, PDBs, custom resources...) by (apiVersion, kind).
    others: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, obj: dict[str, Any]) -> None:
        kind = obj.get("kind")
        if kind == "Node":
            self.nodes.append(obj)
        elif kind == "Pod":
            self.pods.append(obj)
        else:
            self.others.setdefault((str(obj.get("apiVersion", "")), str(kind)), []).append(obj)

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [o for (_, k), objs in self.others.items() if k == kind for o in objs]


def iter_manifest_files(paths: Iterable[str | Path]) -> list[Path]:
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files.extend(sorted(f for f in p.rglob("*") if f.suffix in YAML_SUFFIXES and f.is_file()))
        elif p.is_file():
            files.append(p)
        else:
            raise ManifestError(f"{p}: no such file or directory")
    return files


def load_manifests(paths: Iterable[str | Path], *, skip: set[Path] | None = None) -> ClusterObjects:
    out = ClusterObjects()
    for f in iter_manifest_files(paths):
        if skip and f.resolve() in skip:
            continue
        for obj in load_file(f):
            out.add(obj)
    for pc_list in [out.of_kind("PriorityClass")]:
        priorities = {pc["metadata"]["name"]: int(pc.get("value", 0)) for pc in pc_list}
        default = next((int(pc.get("value", 0)) for pc in pc_list if pc.get("globalDefault")), 0)
        for pod in out.pods:
            admit_pod(pod, priorities, default)
    return out


def load_file(path: Path) -> list[dict[str, Any]]:
    try:
        text = path.read_text()
    except OSError as err:
        raise ManifestError(f"{path}: {err.strerror}") from None
    try:
        docs = list(yaml.safe_load_all(text))
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise ManifestError(f"{path}{where}: invalid YAML: {problem}") from None
    objs: list[dict[str, Any]] = []
    for i, doc in enumerate(docs):
        if doc is None:
            continue
        where = f"{path} (document {i + 1})"
        if not isinstance(doc, dict):
            raise ManifestError(f"{where}: a manifest must be a mapping, got {type(doc).__name__}")
        if doc.get("kind") == "List" or (doc.get("kind", "").endswith("List") and "items" in doc):
            items = doc.get("items") or []
        else:
            items = [doc]
        for obj in items:
            check_object(obj, where)
            objs.append(obj)
    return objs


def check_object(obj: Any, where: str) -> None:
    if not isinstance(obj, dict):
        raise ManifestError(f"{where}: a manifest must be a mapping")
    for key in ("apiVersion", "kind"):
        if not isinstance(obj.get(key), str) or not obj.get(key):
            raise ManifestError(f"{where}: {key}: required")
    md = obj.get("metadata")
    if not isinstance(md, dict) or not md.get("name"):
        raise ManifestError(f"{where}: {obj['kind']}: metadata.name: required")


def admit_pod(pod: dict[str, Any], priorities: Mapping[str, int], default_priority: int) -> None:
    """What the API server's defaulting and Priority admission would do."""
    md = pod.setdefault("metadata", {})
    md.setdefault("namespace", "default")
    md.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, f"kubesched-sim/{md['namespace']}/{md['name']}")))
    spec = pod.setdefault("spec", {})
    spec.setdefault("schedulerName", "default-scheduler")
    if spec.get("affinity"):
        # kube-apiserver merges matchLabelKeys/mismatchLabelKeys into pod (anti-)affinity selectors
        # when the pod is created; the plugins then read plain selectors, as upstream's do.
        from kubesched.plugins.interpodaffinity.terms import apply_match_label_keys

        spec["affinity"] = apply_match_label_keys(pod)["spec"]["affinity"]
    if "priority" not in spec:
        pc = spec.get("priorityClassName")
        spec["priority"] = priorities.get(pc, 0) if pc else default_priority


def parse_duration(text: str) -> float:
    """A duration (``90s``, ``2h``, ``1h30m``, ``500ms``, or plain seconds); see :mod:`kubesched.sim.timeparse`."""
    return parse_sim_duration(text)


def parse_time(text: str) -> float:
    """An RFC 3339 time in epoch seconds, within the simulator's time range."""
    return parse_rfc3339(text)


def parse_time_or_offset(text: str, start: float) -> float:
    """An RFC 3339 time, or an offset from ``start`` (``90s``, ``2h``)."""
    return _parse_time_or_offset(text, start)
