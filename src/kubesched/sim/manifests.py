"""Reading Kubernetes manifests for the simulator: YAML or JSON files or folders, several documents each.

The simulator plays the API server's part for what it would refuse or set when the objects are
created: a document that does not decode into an object, a duplicate name, a PriorityClass its
validation or the Priority admission plugin refuses, a pod naming a PriorityClass that does not
exist (``pods "web" is forbidden: no PriorityClass with name high was found``, as
plugin/pkg/admission/priority/admission.go answers); and what admission sets (a namespace, a UID,
the priority and preemption policy of the pod's PriorityClass, the default scheduler name), so
manifests written for a real cluster behave the same here.

Every file is read through :mod:`kubesched.api.yamlsafe` (no FIFO or device is opened; size,
nesting and aliases are bounded; duplicate keys are refused), and every problem of every file is
collected before :class:`ManifestError` is raised, one line per problem::

    FILE:LINE: document N[ items[I]][ (Kind [NAMESPACE/]NAME)]: [FIELD.PATH: ]MESSAGE

``N`` counts the file's YAML documents from 1, ``items[I]`` names an item of a ``List``, the kind
and name are shown as far as they are known, and ``LINE`` is the line of the field (or of the
nearest enclosing part of the document that exists). A problem of the file itself (unreadable,
not UTF-8, invalid YAML) reads ``FILE[:LINE]: MESSAGE``.

Errors (exit code 2) are what nothing downstream could set aside on its own: a document that is
not an object; ``apiVersion``, ``kind`` or ``metadata.name`` missing or not strings; ``metadata``,
``spec`` or ``status`` not objects (``null`` reads as absent, as the API server's decoder reads
it); ``items`` not a list; annotations not an object (and, for kinds other than Pod and Node,
labels not a map of strings); the simulator's own annotations unparsable; duplicate objects (same
API group, kind, namespace and name, in one file or across files: ``pods "web" already exists``);
PriorityClass and Priority-admission problems; any field problem of a storage object
(PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver, CSIStorageCapacity,
VolumeAttachment: :mod:`kubesched.api.storage_validation`), which otherwise gets the API server's
defaults (``apply_storage_defaults``). Field problems of a Node or a Pod (quantities, taints,
affinity...: :mod:`kubesched.api.objects_validation`) are *warnings*, in
:attr:`ClusterObjects.warnings` in the same format, because the scheduler sets such a node or pod
aside on its own and the simulation goes on. So is a pod bound (``spec.nodeName``) to a node no
manifest defines: an API server keeps such a pod bound (only PodGC, which the simulator does not
run, would delete it), so it stays bound to that name, counts as bound, and uses no node's
resources.

One liberty with the API server: a pod without a ``priorityClassName`` (and no globalDefault
class) may state its ``spec.priority``, which admission would refuse; tests and small examples
rely on it. With a class, a different integer is refused as upstream refuses it.
"""

from __future__ import annotations

import json
import os
import re
import stat
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kubesched.api.dra.taintrules import DEVICE_TAINT_RULE_API_VERSIONS
from kubesched.api.dra_validation import DRA_KINDS as DRA_VALIDATORS
from kubesched.api.dra_validation import apply_dra_defaults, validate_dra_object
from kubesched.api.objects_validation import validate_node, validate_pod
from kubesched.api.storage_validation import STORAGE_KINDS, validate_storage_object
from kubesched.api.yamlsafe import YAMLInputError, load_yaml_documents, read_text_file
from kubesched.sim.gpu_node_shape import API_VERSION as GPU_NODE_API_VERSION
from kubesched.sim.gpu_node_shape import KIND as GPU_NODE_KIND
from kubesched.sim.gpu_node_shape import expand_gpu_node
from kubesched.sim.timeparse import parse_rfc3339, parse_sim_duration
from kubesched.sim.timeparse import parse_time_or_offset as _parse_time_or_offset

ARRIVAL_ANNOTATION = "sim.kubesched.io/arrival"
#: The resource.k8s.io kinds of Dynamic Resource Allocation the simulator reads.
DRA_API_VERSION = "resource.k8s.io/v1"
DRA_KINDS = ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate")
DURATION_ANNOTATION = "sim.kubesched.io/duration"
YAML_SUFFIXES = (".yaml", ".yml", ".json")

#: The API server's own PriorityClasses (pkg/apis/scheduling/types.go), present in every cluster.
SYSTEM_PRIORITY_CLASSES = {"system-cluster-critical": 2000000000, "system-node-critical": 2000001000}
#: scheduling.HighestUserDefinablePriority.
HIGHEST_USER_DEFINABLE_PRIORITY = 1000000000
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
#: The API versions the API server serves for the built-in kinds the simulator reads.
_BUILTIN_VERSIONS = {
    "Pod": ("v1",),
    "Node": ("v1",),
    "Namespace": ("v1",),
    "PriorityClass": ("scheduling.k8s.io/v1",),
    "PodDisruptionBudget": ("policy/v1",),
    **{kind: (version,) for kind, (version, _, _) in STORAGE_KINDS.items()},
    **{kind: (DRA_API_VERSION,) for kind in DRA_KINDS},
    "DeviceTaintRule": DEVICE_TAINT_RULE_API_VERSIONS,
    GPU_NODE_KIND: (GPU_NODE_API_VERSION,),
}
#: Kinds without a namespace (every other kind is namespaced, "default" when not given).
_CLUSTER_SCOPED = frozenset({
    "Node", "Namespace", "PriorityClass", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
    "NodeResourceTopology", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition", "RuntimeClass",
    "VolumeAttachment", "DeviceClass", "ResourceSlice", "DeviceTaintRule", GPU_NODE_KIND,
})
#: Resource names for the API server's ``<resource> "<name>" ...`` messages.
_RESOURCES = {
    "Pod": "pods", "Node": "nodes", "Namespace": "namespaces",
    "PriorityClass": "priorityclasses.scheduling.k8s.io",
    "PodDisruptionBudget": "poddisruptionbudgets.policy",
    "PersistentVolume": "persistentvolumes",
    "PersistentVolumeClaim": "persistentvolumeclaims",
    "StorageClass": "storageclasses.storage.k8s.io",
    "CSINode": "csinodes.storage.k8s.io",
    "CSIDriver": "csidrivers.storage.k8s.io",
    "CSIStorageCapacity": "csistoragecapacities.storage.k8s.io",
    "VolumeAttachment": "volumeattachments.storage.k8s.io",
    "DeviceClass": "deviceclasses.resource.k8s.io",
    "ResourceSlice": "resourceslices.resource.k8s.io",
    "ResourceClaim": "resourceclaims.resource.k8s.io",
    "ResourceClaimTemplate": "resourceclaimtemplates.resource.k8s.io",
    "DeviceTaintRule": "devicetaintrules.resource.k8s.io",
}
#: core.PreemptLowerPriority, core.PreemptNever, in ValidatePreemptionPolicy's order.
_PREEMPTION_POLICIES = ("PreemptLowerPriority", "Never")


class ManifestError(ValueError):
    """Manifest problems: ``errors`` holds one line per problem (file, document, field)."""

    def __init__(self, errors: str | list[str]) -> None:
        self.errors = [errors] if isinstance(errors, str) else list(errors)
        super().__init__("\n".join(self.errors))

    def __str__(self) -> str:
        return "\n".join(self.errors)


@dataclass
class ClusterObjects:
    nodes: list[dict[str, Any]] = field(default_factory=list)
    pods: list[dict[str, Any]] = field(default_factory=list)
    #: Every other kind (Namespace, PriorityClass, PDBs, custom resources...) by (apiVersion, kind).
    others: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)
    #: Problems that do not stop a run (a node or pod the scheduler sets aside, a pod bound to an
    #: unknown node, a non-regular file skipped in a folder), one line each in the format of the
    #: module docstring, without a ``warning:`` prefix (the CLI adds it on stderr).
    warnings: list[str] = field(default_factory=list)

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


# -- entry points -------------------------------------------------------------------------------


def iter_manifest_files(paths: Iterable[str | Path], warnings: list[str] | None = None) -> list[Path]:
    """The files to read: each path given, and the YAML/JSON files under each folder given.

    A path given by name is always returned (reading it refuses a FIFO or a device without opening
    it); in a folder only regular files are taken, anything else is skipped (with a warning)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if not p.is_dir():
            files.append(p)
            continue
        for f in sorted(p.rglob("*")):
            if f.suffix not in YAML_SUFFIXES:
                continue
            try:
                mode = f.stat().st_mode
            except OSError:
                continue  # a dangling symlink
            if stat.S_ISREG(mode):
                files.append(f)
            elif not stat.S_ISDIR(mode) and warnings is not None:
                warnings.append(f"{f}: skipped: not a regular file")
    return files


def load_manifests(paths: Iterable[str | Path], *, skip: set[Path] | None = None) -> ClusterObjects:
    """Every object of ``paths``, admitted as the API server would admit it.

    Raises :class:`ManifestError` listing every error of every file; warnings are returned in
    :attr:`ClusterObjects.warnings`. A file named twice (or also found in a folder) is read once."""
    loader = _Loader()
    seen: set[str] = set()
    for f in iter_manifest_files(paths, loader.file_warnings):
        real = os.path.realpath(f)
        if (skip and Path(real) in skip) or real in seen:
            continue
        seen.add(real)
        loader.read(f)
    return loader.finish()


#: The API group of kube-scheduler's configuration, which a scenario folder may hold.
SCHEDULER_CONFIG_GROUP = "kubescheduler.config.k8s.io/"


def find_scheduler_configs(paths: Iterable[str | Path]) -> list[Path]:
    """The files among ``paths`` whose first object is a KubeSchedulerConfiguration (any version):
    a scenario's configuration, never one of its manifests. A file that cannot be read is left to
    :func:`load_manifests`, which reports it."""
    found: list[Path] = []
    for f in iter_manifest_files(paths):
        try:
            docs = load_yaml_documents(read_text_file(f))
        except (YAMLInputError, OSError):
            continue
        first = next((d for d in docs if d is not None), None)
        if isinstance(first, dict) and str(first.get("apiVersion", "")).startswith(SCHEDULER_CONFIG_GROUP):
            found.append(Path(os.path.realpath(f)))
    return found


def load_file(path: Path) -> list[dict[str, Any]]:
    """The objects of one file, with the checks of :func:`load_manifests` that need no other file."""
    loader = _Loader()
    loader.read(path)
    objs = loader.finish(admit=False)
    return [*objs.nodes, *objs.pods, *(o for items in objs.others.values() for o in items)]


def load_pod_file(path: str | Path, cluster: ClusterObjects) -> dict[str, Any]:
    """The one Pod of ``path`` (``explain --pod``), checked and admitted against ``cluster``'s
    PriorityClasses and nodes as :func:`load_manifests` admits the cluster's own pods; its
    warnings are appended to ``cluster.warnings``."""
    loader = _Loader()
    loader.read(Path(path))
    loader.known_priority_classes = cluster.of_kind("PriorityClass")
    loader.known_nodes = {str(n["metadata"]["name"]) for n in cluster.nodes}
    objs = loader.finish()
    cluster.warnings.extend(objs.warnings)
    others = sum(len(items) for items in objs.others.values()) + len(objs.nodes)
    if len(objs.pods) != 1 or others:
        found = f"{len(objs.pods)} Pod{'' if len(objs.pods) == 1 else 's'}"
        if others:
            found += f" and {others} other object{'' if others == 1 else 's'}"
        raise ManifestError(f"{path}: expected exactly one Pod, found {found}")
    return objs.pods[0]


# -- the loader ---------------------------------------------------------------------------------


@dataclass
class _Source:
    path: Path
    text: str


@dataclass
class _Ref:
    """Where an object came from, and how its problem lines name it."""

    source: int
    doc: int  # 0-based index among the file's YAML documents
    item: int | None  # index in a List's items
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None

    def label(self) -> str:
        item = f" items[{self.item}]" if self.item is not None else ""
        parts = [self.kind] if self.kind else []
        if self.name:
            parts.append(f"{self.namespace}/{self.name}" if self.namespace and self.kind else self.name)
        who = f" ({' '.join(parts)})" if parts else ""
        return f"document {self.doc + 1}{item}{who}"

    def path(self, field_path: str) -> tuple[str, ...]:
        """The field's path from the document's root, as tokens."""
        base = ("items", str(self.item)) if self.item is not None else ()
        return base + _path_tokens(field_path)


@dataclass
class _Problem:
    source: int
    ref: _Ref | None  # None: a problem of the file itself
    path: str
    message: str
    line: int = 0
    warning: bool = False
    #: Another object this problem names (the first of duplicates): "{first}" in the message.
    first: _Ref | None = None


def _shown(value: Any) -> str:
    """A bad value as a problem line shows it (as api.objects_validation shows it)."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return json.dumps(value if len(value) <= 64 else value[:64] + "...")
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class _Loader:
    """Reads files, checks objects, admits pods; every problem is kept until :meth:`finish`."""

    def __init__(self) -> None:
        self.sources: list[_Source] = []
        self.problems: list[_Problem] = []
        self.file_warnings: list[str] = []
        self.objects: list[tuple[_Ref, dict[str, Any]]] = []
        self.names: dict[tuple[str, str, str, str], _Ref] = {}
        #: PriorityClasses refused: a pod naming one is not told that it does not exist.
        self.refused_classes: set[str] = set()
        #: PriorityClasses and node names defined elsewhere (explain's cluster, for its --pod).
        self.known_priority_classes: list[dict[str, Any]] = []
        self.known_nodes: set[str] = set()

    def problem(self, ref: _Ref, path: str, message: str, *, warning: bool = False,
                first: _Ref | None = None) -> None:
        self.problems.append(_Problem(ref.source, ref, path, message, warning=warning, first=first))

    def has_errors(self) -> bool:
        return any(not p.warning for p in self.problems)

    # -- reading --------------------------------------------------------------------------------
    def read(self, path: Path) -> None:
        index = len(self.sources)
        try:
            text = read_text_file(path)
            docs = load_yaml_documents(text)
        except YAMLInputError as err:
            self.sources.append(_Source(path, ""))
            for p in err.problems:
                self.problems.append(_Problem(index, None, "", p.message, p.line))
            return
        self.sources.append(_Source(path, text))
        for d, doc in enumerate(docs):
            if doc is None:
                continue
            ref = _Ref(index, d, None)
            if not isinstance(doc, dict):
                self.problem(ref, "", f"a manifest must be an object, got {_shown(doc)}")
                continue
            kind = doc.get("kind")
            if not (isinstance(kind, str) and (kind == "List" or (kind.endswith("List") and "items" in doc))):
                self.check(ref, doc)
                continue
            items = doc.get("items")
            if items is None:
                continue
            if not isinstance(items, list):
                ref.kind = kind
                self.problem(ref, "items", f"must be a list, got {_shown(items)}")
                continue
            for i, item in enumerate(items):
                self.check(_Ref(index, d, i), item)

    def check(self, ref: _Ref, obj: Any) -> None:
        """The structural checks of one object; a sound one is kept (and named, for duplicates)."""
        if not isinstance(obj, dict):
            self.problem(ref, "", f"a manifest must be an object, got {_shown(obj)}")
            return
        before = len(self.problems)
        kind = obj.get("kind")
        ref.kind = kind if isinstance(kind, str) and kind else None
        md = obj.get("metadata")
        if md is None:
            md = obj["metadata"] = {}
        if isinstance(md, dict):
            name, ns = md.get("name"), md.get("namespace")
            ref.name = name if isinstance(name, str) and name else None
            if ref.kind not in _CLUSTER_SCOPED and (ns is None or isinstance(ns, str)):
                ref.namespace = ns or "default"
        for key in ("apiVersion", "kind"):
            value = obj.get(key)
            if value is None or value == "":
                self.problem(ref, key, "Required value")
            elif not isinstance(value, str):
                self.problem(ref, key, f"must be a string, got {_shown(value)}")
        api_version = obj.get("apiVersion")
        versions = _BUILTIN_VERSIONS.get(ref.kind or "")
        if versions and isinstance(api_version, str) and api_version and api_version not in versions:
            self.problem(ref, "apiVersion", f"no matches for kind {json.dumps(ref.kind)} in version "
                                            f"{json.dumps(api_version)} (served: {', '.join(versions)})")
        if isinstance(md, dict):
            self.check_metadata(ref, md)
        else:
            self.problem(ref, "metadata", f"must be an object, got {_shown(md)}")
        for key in ("spec", "status"):
            if key not in obj:
                continue
            if obj[key] is None:
                obj[key] = {}  # JSON null decodes to the empty struct
            elif not isinstance(obj[key], dict):
                self.problem(ref, key, f"must be an object, got {_shown(obj[key])}")
        if len(self.problems) > before:
            if ref.kind == "PriorityClass" and ref.name:
                self.refused_classes.add(ref.name)
            return
        if ref.kind == "PriorityClass":
            self.check_priority_class(ref, obj)
        elif ref.kind == "Pod":
            self.check_pod(ref, obj)
        elif ref.kind in STORAGE_KINDS:
            self.check_storage(ref, obj)
        elif ref.kind in DRA_VALIDATORS and (
            obj.get("apiVersion") == DRA_API_VERSION or ref.kind == "DeviceTaintRule"
        ):
            dra_problems = validate_dra_object(ref.kind, obj)
            for problem in dra_problems:
                path, message = _split_problem(problem)
                self.problem(ref, path, message)
            if not dra_problems:
                apply_dra_defaults(ref.kind, obj)
        if len(self.problems) == before and ref.kind == GPU_NODE_KIND:
            expanded, problems = expand_gpu_node(obj)
            for path, message in problems:
                self.problem(ref, path, message)
            for part in expanded:
                part_ref = _Ref(ref.source, ref.doc, ref.item)
                part_ref.kind, part_ref.name = part["kind"], part["metadata"]["name"]
                self.check_duplicate(part_ref, part)
                self.objects.append((part_ref, part))
            return
        if len(self.problems) == before:
            self.check_duplicate(ref, obj)
            self.objects.append((ref, obj))
        elif ref.kind == "PriorityClass" and ref.name:
            self.refused_classes.add(ref.name)

    def check_metadata(self, ref: _Ref, md: dict[str, Any]) -> None:
        name = md.get("name")
        if name is None or name == "":
            self.problem(ref, "metadata.name", "Required value: name or generateName is required")
        elif not isinstance(name, str):
            self.problem(ref, "metadata.name", f"must be a string, got {_shown(name)}")
        ns = md.get("namespace")
        if ns is not None and not isinstance(ns, str):
            self.problem(ref, "metadata.namespace", f"must be a string, got {_shown(ns)}")
        # The simulator reads every object's annotations; a Pod's or Node's labels are checked
        # with its other fields (warnings), other kinds' labels are read by plugins (namespace
        # selectors, tenants) with nothing to set a bad object aside.
        keys = ("annotations",) if ref.kind in ("Pod", "Node") else ("labels", "annotations")
        for key in keys:
            value = md.get(key)
            if value is None:
                continue
            if not isinstance(value, dict):
                self.problem(ref, f"metadata.{key}", f"must be an object, got {_shown(value)}")
            elif key == "labels":
                for k, v in value.items():
                    if not isinstance(v, str):
                        self.problem(ref, f"metadata.labels[{k}]", f"must be a string, got {_shown(v)}")

    def check_pod(self, ref: _Ref, pod: dict[str, Any]) -> None:
        spec = pod.get("spec") or {}
        pc = spec.get("priorityClassName")
        if pc is not None and not isinstance(pc, str):
            self.problem(ref, "spec.priorityClassName", f"must be a string, got {_shown(pc)}")
        ann = pod["metadata"].get("annotations") or {}
        checks: tuple[tuple[str, Callable[[str], object]], ...] = (
            (ARRIVAL_ANNOTATION, lambda v: parse_time_or_offset(v, 0.0)),
            (DURATION_ANNOTATION, parse_duration),
        )
        for key, parse in checks:
            if key in ann:
                try:
                    parse(str(ann[key]))
                except ValueError as err:
                    self.problem(ref, f"metadata.annotations[{key}]", str(err))

    def check_storage(self, ref: _Ref, obj: dict[str, Any]) -> None:
        """A storage object's fields (:mod:`kubesched.api.storage_validation`): errors, since nothing
        downstream can set a bad PersistentVolume or StorageClass aside; then the API server's defaults."""
        kind = ref.kind or ""
        problems = validate_storage_object(kind, obj)
        for problem in problems:
            path, message = _split_problem(problem)
            self.problem(ref, path, message)
        if not problems:
            apply_storage_defaults(kind, obj)

    def check_priority_class(self, ref: _Ref, pc: dict[str, Any]) -> None:
        """Decoding and ValidatePriorityClass (pkg/apis/scheduling/validation/validation.go)."""
        value = pc.get("value", 0)
        glob = pc.get("globalDefault")
        int_ok = isinstance(value, int) and not isinstance(value, bool)
        if not int_ok:
            self.problem(ref, "value", f"must be an integer, got {_shown(value)}")
        elif not _INT32_MIN <= value <= _INT32_MAX:
            self.problem(ref, "value", f"Invalid value: {value}: must be a 32-bit integer")
            int_ok = False
        if glob is not None and not isinstance(glob, bool):
            self.problem(ref, "globalDefault", f"must be a boolean, got {_shown(glob)}")
        policy = pc.get("preemptionPolicy")
        if policy is not None and not isinstance(policy, str):
            self.problem(ref, "preemptionPolicy", f"must be a string, got {_shown(policy)}")
        elif policy is not None and policy not in _PREEMPTION_POLICIES:
            supported = ", ".join(json.dumps(p) for p in _PREEMPTION_POLICIES)
            self.problem(ref, "preemptionPolicy", f"Unsupported value: {json.dumps(policy)}: supported values: "
                                                  f"{supported}")
        desc = pc.get("description")
        if desc is not None and not isinstance(desc, str):
            self.problem(ref, "description", f"must be a string, got {_shown(desc)}")
        name = ref.name or ""
        if not int_ok:
            return
        if name.startswith("system-"):
            known = SYSTEM_PRIORITY_CLASSES.get(name)
            why = (f"{name} is not a known system priority class" if known is None
                   else f"value of {name} PriorityClass must be {known}" if value != known
                   else f"globalDefault of {name} PriorityClass must be false" if glob is True else "")
            if why:
                self.problem(ref, "metadata.name", "Forbidden: priority class names with 'system-' prefix are "
                                                   f"reserved for system use only. error: {why}")
        elif value > HIGHEST_USER_DEFINABLE_PRIORITY:
            self.problem(ref, "value", "Forbidden: maximum allowed value of a user defined priority is "
                                       f"{HIGHEST_USER_DEFINABLE_PRIORITY}")

    def check_duplicate(self, ref: _Ref, obj: dict[str, Any]) -> None:
        kind = ref.kind or ""
        if kind == "PriorityClass" and ref.name in SYSTEM_PRIORITY_CLASSES:
            return  # the API server's own class, as it is (checked above): nothing to create
        api_version = str(obj.get("apiVersion"))
        group = api_version.rpartition("/")[0]
        key = (group, kind, ref.namespace or "", ref.name or "")
        first = self.names.setdefault(key, ref)
        if first is not ref:
            resource = _RESOURCES.get(kind) or f"{kind.lower()}s{'.' + group if group else ''}"
            self.problem(ref, "metadata.name", f"{resource} {json.dumps(ref.name)} already exists (first defined "
                                               "at {first})", first=first)

    # -- what the API server does on create -----------------------------------------------------
    def admit(self) -> None:
        classes: dict[str, Mapping[str, Any]] = {}
        default: Mapping[str, Any] | None = None
        for pc in self.known_priority_classes:
            classes[pc["metadata"]["name"]] = pc
            if pc.get("globalDefault") and default is None:
                default = pc
        for ref, obj in self.objects:
            if ref.kind != "PriorityClass" or ref.name in SYSTEM_PRIORITY_CLASSES:
                continue
            if obj.get("globalDefault"):
                if default is not None:
                    self.refused_classes.add(str(ref.name))
                    self.problem(ref, "globalDefault", f"priorityclasses.scheduling.k8s.io {json.dumps(ref.name)} "
                                                       f"is forbidden: PriorityClass {default['metadata']['name']} "
                                                       "is already marked as default. Only one default can exist")
                    continue
                default = obj
            classes[str(ref.name)] = obj
        nodes = self.known_nodes | {str(ref.name) for ref, _ in self.objects if ref.kind == "Node"}
        for ref, pod in self.objects:
            if ref.kind == "Pod":
                self.admit_pod(ref, pod, classes, default, nodes)

    def admit_pod(self, ref: _Ref, pod: dict[str, Any], classes: Mapping[str, Mapping[str, Any]],
                  default: Mapping[str, Any] | None, nodes: set[str]) -> None:
        """The Priority admission plugin's admitPod (plugin/pkg/admission/priority/admission.go),
        then :func:`admit_pod`'s defaults."""
        spec = pod.setdefault("spec", {})
        forbidden = f"pods {json.dumps(ref.name)} is forbidden: "
        name = spec.get("priorityClassName") or ""
        pc: Mapping[str, Any] | None
        if not name:
            pc = default
            if pc is not None:
                spec["priorityClassName"] = pc["metadata"]["name"]
        elif name in SYSTEM_PRIORITY_CLASSES:
            pc = {"value": SYSTEM_PRIORITY_CLASSES[name]}
        else:
            pc = classes.get(name)
            if pc is None and name in self.refused_classes:
                return  # its own problem is reported
            if pc is None:
                self.problem(ref, "spec.priorityClassName", f"{forbidden}no PriorityClass with name {name} was found")
                return
        if pc is not None:
            value = int(pc.get("value", 0))
            given = spec.get("priority")
            if given is not None and given != value:
                self.problem(ref, "spec.priority", f"{forbidden}the integer value of priority ({given}) must not "
                                                   "be provided in pod spec; priority admission controller "
                                                   f"computed {value} from the given PriorityClass name")
                return
            spec["priority"] = value
            policy = pc.get("preemptionPolicy")
            if policy:
                given_policy = spec.get("preemptionPolicy")
                if given_policy is not None and given_policy != policy:
                    self.problem(ref, "spec.preemptionPolicy",
                                 f"{forbidden}the string value of PreemptionPolicy ({given_policy}) must not be "
                                 "provided in pod spec; priority admission controller computed "
                                 f"{policy} from the given PriorityClass name")
                    return
                spec["preemptionPolicy"] = policy
        admit_pod(pod, {}, 0)
        node = spec.get("nodeName")
        if isinstance(node, str) and node and node not in nodes:
            self.problem(ref, "spec.nodeName", f"node {json.dumps(node)} not found: the pod stays bound to it "
                                               "(as on an API server without PodGC) and counts as bound, using no "
                                               "node's resources", warning=True)

    def field_warnings(self) -> None:
        """validate_node / validate_pod problems, as warnings: the scheduler isolates those."""
        checks: dict[str, Callable[[Any], list[str]]] = {"Node": validate_node, "Pod": validate_pod}
        for ref, obj in self.objects:
            check = checks.get(ref.kind or "")
            for problem in check(obj) if check is not None else ():
                path, message = _split_problem(problem)
                self.problem(ref, path, message, warning=True)

    # -- the result -----------------------------------------------------------------------------
    def finish(self, *, admit: bool = True) -> ClusterObjects:
        if admit:
            self.admit()
        if not self.has_errors():
            self.field_warnings()
        lines = self.format()
        errors = [line for p, line in lines if not p.warning]
        if errors:
            raise ManifestError(errors)
        out = ClusterObjects(warnings=[*self.file_warnings, *(line for p, line in lines if p.warning)])
        for _, obj in self.objects:
            out.add(obj)
        return out

    def format(self) -> list[tuple[_Problem, str]]:
        wanted: dict[int, dict[int, set[tuple[str, ...]]]] = {}
        for p in self.problems:
            for ref, path in ((p.ref, p.path), (p.first, "metadata.name")):
                if ref is not None:
                    wanted.setdefault(ref.source, {}).setdefault(ref.doc, set()).add(ref.path(path))
        found = {i: _locate_in_documents(self.sources[i].text, w) for i, w in wanted.items()}

        def where(source: int, line: int) -> str:
            return f"{self.sources[source].path}:{line}" if line else str(self.sources[source].path)

        def line_of(ref: _Ref, path: str) -> int:
            lines = found.get(ref.source, {})
            full = ref.path(path)
            for n in range(len(full), -1, -1):
                line = lines.get((ref.doc, full[:n]))
                if line:
                    return line
            return 0

        def order(p: _Problem) -> tuple[int, int, int]:
            return (p.source, p.ref.doc if p.ref else -1, p.ref.item or 0 if p.ref else -1)

        out: list[tuple[_Problem, str]] = []
        for p in sorted(self.problems, key=order):  # file by file, document by document
            if p.ref is None:
                out.append((p, f"{where(p.source, p.line)}: {p.message}"))
                continue
            message = p.message
            if p.first is not None:
                first = p.first
                message = message.replace("{first}", f"{where(first.source, line_of(first, 'metadata.name'))}, "
                                                     f"{first.label()}")
            path = f"{p.path}: " if p.path else ""
            out.append((p, f"{where(p.source, line_of(p.ref, p.path))}: {p.ref.label()}: {path}{message}"))
        return out


def _split_problem(problem: str) -> tuple[str, str]:
    """``"spec.containers[0].x: message"`` into the path and the message (a ``:`` in brackets is
    part of the path); ``("", problem)`` when it names no field."""
    depth = 0
    for i, ch in enumerate(problem):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == " " and depth == 0:
            break  # a field path has no space outside brackets
        elif ch == ":" and depth == 0 and problem[i + 1 : i + 2] == " ":
            return problem[:i], problem[i + 2 :]
    return "", problem


def _path_tokens(path: str) -> tuple[str, ...]:
    """``spec.containers[0].resources.requests[cpu]`` -> ``("spec", "containers", "0", ..., "cpu")``."""
    tokens: list[str] = []
    cur = ""
    i = 0
    while i < len(path):
        ch = path[i]
        if ch in ".[":
            if cur:
                tokens.append(cur)
            cur = ""
            if ch == "[":
                end = path.find("]", i)
                end = len(path) if end < 0 else end
                tokens.append(path[i + 1 : end])
                i = end
        else:
            cur += ch
        i += 1
    if cur:
        tokens.append(cur)
    return tuple(tokens)


try:
    from yaml._yaml import CParser as _EventParser
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _EventParser  # type: ignore[assignment]



_MARKER = re.compile(r"^(---|\.\.\.)(?=[ \t\r\n]|$)", re.MULTILINE)
_CONTENT = re.compile(r"^[ \t]*[^ \t\r\n#]", re.MULTILINE)


def _document_spans(text: str) -> list[tuple[int, int]] | None:
    """The (start, end) character offsets of each YAML document, found from its ``---`` lines
    (a document marker can start a line nowhere inside content, by YAML's c-forbidden rule);
    None where that is not enough to tell (``...`` end markers, directives)."""
    if "\n..." in text or text.startswith("...") or "\n%" in text or text.startswith("%"):
        return None
    starts = [m.start() for m in _MARKER.finditer(text)]
    spans: list[tuple[int, int]] = []
    head_end = starts[0] if starts else len(text)
    if _CONTENT.search(text, 0, head_end):
        spans.append((0, head_end))
    for i, start in enumerate(starts):
        spans.append((start, starts[i + 1] if i + 1 < len(starts) else len(text)))
    return spans


def _locate_in_documents(text: str, wanted: Mapping[int, set[tuple[str, ...]]]
                         ) -> dict[tuple[int, tuple[str, ...]], int]:
    """:func:`_locate`, parsing only the documents that have problems (a file of thousands of
    pods with a few bad ones is not parsed a second time); the whole text when the documents
    cannot be told apart from their markers."""
    spans = _document_spans(text)
    if spans is None or max(wanted, default=-1) >= len(spans):
        return _locate(text, wanted)
    found: dict[tuple[int, tuple[str, ...]], int] = {}
    offset, counted = 0, 0
    for doc, paths in sorted(wanted.items()):
        start, end = spans[doc]
        offset += text.count("\n", counted, start)
        counted = start
        part = _locate(text[start:end], {0: paths})
        found.update(((doc, path), line + offset) for (_, path), line in part.items())
    return found


def _locate(text: str, wanted: Mapping[int, set[tuple[str, ...]]]) -> dict[tuple[int, tuple[str, ...]], int]:
    """The lines (1-based) of the wanted paths, and of each prefix of them that exists, by
    (document, path): one pass over the parser's events, ending once every wanted path is found."""
    prefixes = {d: {full[:n] for full in paths for n in range(len(full) + 1)} for d, paths in wanted.items()}
    missing = sum(len(paths) for paths in wanted.values())
    found: dict[tuple[int, tuple[str, ...]], int] = {}
    doc = -1
    want: set[tuple[str, ...]] = set()
    full: set[tuple[str, ...]] = set()
    # One frame per open collection: [its path (None: nothing wanted inside), is a mapping, a key
    # is next, the path of the value after the current key, the index of the next item].
    stack: list[list[Any]] = []
    parser = _EventParser(text)

    def record(path: tuple[str, ...], event: Any) -> None:
        nonlocal missing
        if (doc, path) not in found:
            mark = event.start_mark
            found[(doc, path)] = mark.line + 1 if mark is not None else 0
            if path in full:
                missing -= 1

    try:
        while missing > 0:
            event: Any = parser.get_event()
            kind = type(event)
            if event is None or kind is yaml.StreamEndEvent:
                break
            if kind is yaml.DocumentStartEvent:
                doc, stack = doc + 1, []
                want, full = prefixes.get(doc, set()), set(wanted.get(doc, ()))
                continue
            if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                stack.pop()
                continue
            is_map = kind is yaml.MappingStartEvent
            opens = is_map or kind is yaml.SequenceStartEvent
            if not opens and kind is not yaml.ScalarEvent and kind is not yaml.AliasEvent:
                continue
            path: tuple[str, ...] | None
            if not stack:
                path = () if want else None
            else:
                top = stack[-1]
                if top[1] and top[2]:  # a mapping key
                    top[2], top[3] = False, None
                    if top[0] is not None and kind is yaml.ScalarEvent:
                        key = (*top[0], str(event.value))
                        if key in want:
                            top[3] = key
                            record(key, event)
                    if opens:  # a complex key: nothing wanted inside
                        stack.append([None, is_map, True, None, 0])
                    continue
                if top[1]:  # a mapping value
                    path, top[2] = top[3], True
                else:  # a sequence item
                    path = (*top[0], str(top[4])) if top[0] is not None else None
                    top[4] += 1
                    if path is not None and path not in want:
                        path = None
            if path is not None:
                record(path, event)
            if opens:
                stack.append([path, is_map, True, None, 0])
    except yaml.YAMLError:  # pragma: no cover - the text was parsed once already
        pass
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    return found


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


def apply_storage_defaults(kind: str, obj: dict[str, Any]) -> None:
    """What the API server's defaulting sets on a storage object it creates (pkg/apis/core/v1/defaults.go
    ``SetDefaults_PersistentVolume``, ``SetDefaults_PersistentVolumeClaim(Spec)``; pkg/apis/storage/v1/
    defaults.go ``SetDefaults_StorageClass``, ``SetDefaults_CSIDriver``). Gated CSIDriver fields
    (seLinuxMount, preventPodSchedulingIfMissing) are left unset: unset and false read the same.
    Every object gets a UID, as on creation (a PV's claimRef names its claim's), derived from its
    kind, namespace and name so that runs repeat."""
    md = obj.setdefault("metadata", {})
    if STORAGE_KINDS[kind][1]:
        md.setdefault("namespace", "default")
    seed = f"kubesched-sim/{kind}/{md.get('namespace', '')}/{md.get('name')}"
    md.setdefault("uid", str(uuid.uuid5(uuid.NAMESPACE_URL, seed)))
    if kind == "StorageClass":
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")
    elif kind == "PersistentVolume":
        spec = obj.setdefault("spec", {})
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        status = obj.setdefault("status", {})
        if not status.get("phase"):
            status["phase"] = "Pending"
    elif kind == "PersistentVolumeClaim":
        obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
        status = obj.setdefault("status", {})
        if not status.get("phase"):
            status["phase"] = "Pending"
    elif kind == "CSIDriver":
        spec = obj.setdefault("spec", {})
        for key, value in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                           ("fsGroupPolicy", "ReadWriteOnceWithFSType"), ("requiresRepublish", False)):
            if spec.get(key) is None:
                spec[key] = value
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]


def parse_duration(text: str) -> float:
    """A duration (``90s``, ``2h``, ``1h30m``, ``500ms``, or plain seconds); see :mod:`kubesched.sim.timeparse`."""
    return parse_sim_duration(text)


def parse_time(text: str) -> float:
    """An RFC 3339 time in epoch seconds, within the simulator's time range."""
    return parse_rfc3339(text)


def parse_time_or_offset(text: str, start: float) -> float:
    """An RFC 3339 time, or an offset from ``start`` (``90s``, ``2h``)."""
    return _parse_time_or_offset(text, start)
