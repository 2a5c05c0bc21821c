"""Parsed views of pods and nodes, and the small value types of the framework.

Objects stay the API server's JSON (dicts). ``PodInfo`` and ``NodeInfo`` parse what the hot path
needs once and cache it, as upstream's ``pkg/scheduler/framework/types.go`` does, so no plugin
re-parses quantities, selectors or tolerations per node.
"""

from __future__ import annotations

import copy
import itertools
import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Self, TypeAlias, TypeVar, overload

from kubesched.api.errors import InvalidObjectError
from kubesched.api.nodeaffinity import RequiredNodeAffinity
from kubesched.api.objects_validation import validate_node, validate_pod
from kubesched.api.resources import Resource, compute_pod_resources

from .status import Status

Obj = dict[str, Any]
#: A JSON value as the API server sends it, for code typed without ``Any`` (every plugin): read-only
#: containers, so any decoded object fits without a copy or a cast; narrow with ``isinstance``
#: (``type(x) is dict`` first on hot paths) before reading deeper.
JSONValue: TypeAlias = "bool | int | float | str | Sequence[JSONValue] | Mapping[str, JSONValue] | None"
#: A JSON object (an API object, or a part of one) as :data:`JSONValue` types it.
JSONObj: TypeAlias = "Mapping[str, JSONValue]"
log = logging.getLogger("kubesched.scheduler")
#: Invalid objects are reported on their own logger, so a front end that has already reported
#: them with their file and line (kubesched simulate) can leave these lines out.
invalid_log = logging.getLogger("kubesched.invalid")


def meta(obj: JSONObj) -> Mapping[str, Any]:
    m = obj.get("metadata")
    # ``type(...) is dict`` first: API objects are plain dicts, and the ABC check is slow.
    return m if type(m) is dict or isinstance(m, Mapping) else {}


def spec(obj: JSONObj) -> Mapping[str, Any]:
    s = obj.get("spec")
    return s if type(s) is dict or isinstance(s, Mapping) else {}


def pod_key(pod: JSONObj) -> str:
    m = meta(pod)
    return f"{m.get('namespace') or 'default'}/{m.get('name', '')}"


def pod_uid(pod: JSONObj) -> str:
    m = meta(pod)
    return str(m.get("uid") or pod_key(pod))


_T = TypeVar("_T")


class spec_parse(cached_property[_T]):
    """A ``cached_property`` of what :class:`PodInfo` parses from the spec and status alone: a pod
    that shares a template (:meth:`PodInfo.share_spec_parses`) takes the template's value, parsed
    once for every pod of that spec."""

    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None) -> Self: ...

    @overload
    def __get__(self, instance: object, owner: type[Any] | None = None) -> _T: ...

    def __get__(self, instance: object, owner: type[Any] | None = None) -> Self | _T:
        if instance is None:
            return self
        template = instance.__dict__.get("_template")
        if template is not None:
            name = str(self.attrname)
            value: _T = getattr(template, name)
            instance.__dict__[name] = value
            return value
        return super().__get__(instance, owner)


#: Pods by :attr:`PodInfo.spec_key`: the template of every later pod with that spec and status.
_templates: dict[str, PodInfo] = {}
_TEMPLATES_MAX = 1024


class PodInfo:
    """A pod plus everything the scheduler parses from it, computed lazily and exactly once.

    ``cache`` is free for plugins to memoise their own parsed data per pod (keyed by plugin name),
    so a parse done at PreFilter for one cycle is reused by later cycles and by other nodes.
    """

    def __init__(self, pod: Obj) -> None:
        self.pod = pod
        m = meta(pod)
        self.name: str = m.get("name", "")
        self.namespace: str = m.get("namespace") or "default"
        self.key = f"{self.namespace}/{self.name}"
        self.uid: str = str(m.get("uid") or self.key)
        self.cache: dict[str, Any] = {}

    def update(self, pod: Obj) -> None:
        """Point this view at a newer copy of the pod, dropping every cached parse.

        ``cached_property`` values live in the instance ``__dict__``: clear it, or a pod whose
        scheduling gates, labels or requests changed would keep its old parse."""
        self.__dict__.clear()
        self.__init__(pod)  # type: ignore[misc]

    def __repr__(self) -> str:
        return f"PodInfo({self.key})"

    @cached_property
    def spec_key(self) -> str | None:
        """The ``repr`` of the spec and status, everything but the metadata (None unless both are
        plain dicts or absent): equal keys mean equal inputs for every :func:`spec_parse`, as for
        the requests' cache (api/resources.py ``_inputs_key``)."""
        spec, status = self.pod.get("spec"), self.pod.get("status")
        if not (type(spec) is dict or spec is None) or not (type(status) is dict or status is None):
            return None
        return repr((spec, status))

    def share_spec_parses(self) -> None:
        """Take the spec's parses (requests, ports, tolerations, affinity...) from the first pod
        seen with the same :attr:`spec_key`, which parses them once for all of them: the replicas
        of a workload each cost one ``repr`` instead (about 10 µs less a new pod). Called for the
        pods entering the scheduling queue."""
        key = self.spec_key
        if key is None:
            return
        template = _templates.get(key)
        if template is None:
            if len(_templates) >= _TEMPLATES_MAX:
                _templates.clear()
            # A copy: the simulator patches a stored pod's status in place, which must not
            # change what the template parses later.
            template = _templates[key] = PodInfo(copy.deepcopy(self.pod))
        self.__dict__["_template"] = template

    def with_node_name(self, node_name: str) -> PodInfo:
        """A copy of the pod assigned to ``node_name`` that keeps every cached parse (assume)."""
        pod = dict(self.pod)
        pod["spec"] = {**self.spec, "nodeName": node_name}
        clone = PodInfo(pod)
        for k, v in self.__dict__.items():
            if k not in _NOT_INHERITED:
                clone.__dict__.setdefault(k, v)
        clone.cache = self.cache
        return clone

    def inherit_parses(self, other: PodInfo, *, spec_only: bool = False) -> None:
        """Take over ``other``'s parses and plugin cache: for a newer copy of the same pod whose
        spec, labels, annotations and container statuses are unchanged (see :func:`same_parse_inputs`),
        such as the informer's echo of our own binding, so it is not parsed again.

        ``spec_only``: only the metadata differs (:func:`same_spec_inputs`, e.g. a binding whose
        PreBind added an annotation): take the parses of the spec and status (requests, affinity,
        tolerations, ports, gates) but not labels, annotations or the plugins' cache, which may
        hold parses of the metadata."""
        skip = _OWN_FIELDS | _META_FIELDS if spec_only else _OWN_FIELDS
        for k, v in other.__dict__.items():
            if k not in skip:
                self.__dict__.setdefault(k, v)
        if not spec_only:
            self.cache = other.cache

    @cached_property
    def problems(self) -> tuple[str, ...]:
        """Every ``"<field path>: <message>"`` the pod has (:func:`~kubesched.api.objects_validation.validate_pod`),
        checked once per pod version. A pod with problems is never run through the plugins: the
        scheduler records it as unschedulable with :attr:`invalid_message`."""
        problems = tuple(validate_pod(self.pod, spec_key=self.spec_key))
        if problems:
            # Once per pod version: each retry of the pod reads the cached answer.
            invalid_log.warning("pod %s is invalid and will not be scheduled: %s", self.key, "; ".join(problems))
        return problems

    @property
    def invalid_message(self) -> str:
        """``pod is invalid: <problem>[; <problem>...]``, or "" for a valid pod."""
        return "pod is invalid: " + "; ".join(self.problems) if self.problems else ""

    # -- metadata -------------------------------------------------------------------------------
    @cached_property
    def labels(self) -> Mapping[str, str]:
        labels = meta(self.pod).get("labels")
        return labels if isinstance(labels, Mapping) else {}

    @cached_property
    def annotations(self) -> Mapping[str, str]:
        ann = meta(self.pod).get("annotations")
        return ann if isinstance(ann, Mapping) else {}

    @property
    def spec(self) -> Mapping[str, Any]:
        return spec(self.pod)

    @spec_parse
    def priority(self) -> int:
        """``spec.priority`` (0 when unset, as upstream ``corev1helpers.PodPriority``)."""
        p = self.spec.get("priority")
        return int(p) if isinstance(p, int) else 0

    @property
    def node_name(self) -> str:
        return str(self.spec.get("nodeName") or "")

    @property
    def scheduler_name(self) -> str:
        return str(self.spec.get("schedulerName") or "default-scheduler")

    @property
    def deletion_timestamp(self) -> str | None:
        ts = meta(self.pod).get("deletionTimestamp")
        return str(ts) if ts else None

    # -- resources ------------------------------------------------------------------------------
    @spec_parse
    def requests(self) -> Resource:
        """Effective requests (containers, init containers and sidecars, overhead)."""
        r = compute_pod_resources(self.pod)
        # One parse gives both: the node accounting (assume) asks for the other one next.
        self.__dict__.setdefault("non_zero_requests", (r.non_zero_milli_cpu, r.non_zero_memory))
        return r.requests

    @spec_parse
    def non_zero_requests(self) -> tuple[int, int]:
        """(milli-CPU, memory) with upstream's defaults for unset requests, for scoring only."""
        r = compute_pod_resources(self.pod)
        self.__dict__.setdefault("requests", r.requests)
        return r.non_zero_milli_cpu, r.non_zero_memory

    # -- placement constraints ------------------------------------------------------------------
    @spec_parse
    def required_node_affinity(self) -> RequiredNodeAffinity:
        return RequiredNodeAffinity(self.pod)

    @spec_parse
    def tolerations(self) -> Sequence[JSONObj]:
        t = self.spec.get("tolerations")
        return t if isinstance(t, list) else []

    @spec_parse
    def affinity(self) -> JSONObj:
        a = self.spec.get("affinity")
        return a if isinstance(a, Mapping) else {}

    @spec_parse
    def has_affinity(self) -> bool:
        """Whether the pod has any pod affinity or anti-affinity (``PodsWithAffinity``)."""
        return bool(self.affinity.get("podAffinity") or self.affinity.get("podAntiAffinity"))

    @spec_parse
    def has_required_anti_affinity(self) -> bool:
        anti = self.affinity.get("podAntiAffinity")
        return bool(isinstance(anti, Mapping) and anti.get("requiredDuringSchedulingIgnoredDuringExecution"))

    @spec_parse
    def host_ports(self) -> list[tuple[str, str, int]]:
        """(hostIP, protocol, hostPort) of every container port with a hostPort (upstream defaults)."""
        out: list[tuple[str, str, int]] = []
        containers = self.spec.get("containers")
        for c in itertools.chain(containers if isinstance(containers, list) else (), _restartable_init(self.spec)):
            ports = c.get("ports") if isinstance(c, Mapping) else None
            for p in ports if isinstance(ports, list) else ():
                hp = p.get("hostPort") if isinstance(p, Mapping) else None
                if not hp or not isinstance(hp, int):
                    continue  # none, or malformed (then listed in ``problems``)
                out.append((str(p.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP), str(p.get("protocol") or "TCP"), hp))
        return out

    @cached_property
    def pvc_keys(self) -> tuple[str, ...]:
        """``namespace/claimName`` of each persistentVolumeClaim volume, one per volume (upstream
        ``PodPVCKeys``; generic ephemeral volumes are not counted): what ``NodeInfo.pvc_ref_counts`` adds up."""
        volumes = self.spec.get("volumes")
        if not volumes or not isinstance(volumes, list):
            return ()
        keys = []
        for v in volumes:
            claim = v.get("persistentVolumeClaim") if isinstance(v, Mapping) else None
            if isinstance(claim, Mapping):
                keys.append(f"{self.namespace}/{claim.get('claimName') or ''}")
        return tuple(keys)

    @spec_parse
    def scheduling_gates(self) -> list[str]:
        gates = self.spec.get("schedulingGates")
        return [str(g.get("name", "")) for g in gates if isinstance(g, Mapping)] if isinstance(gates, list) else []


#: Not what a copy of the pod inherits: its own identity, and what depends on its own spec text.
_OWN_FIELDS = frozenset({"pod", "cache", "name", "namespace", "key", "uid", "spec_key", "_template"})
_NOT_INHERITED = frozenset({"pod", "cache", "spec_key", "_template"})
#: The cached parses of PodInfo that read the pod's metadata (the others read spec and status only).
_META_FIELDS = frozenset({"labels", "annotations"})


def same_parse_inputs(a: JSONObj, b: JSONObj) -> bool:
    """Whether two versions of a pod agree on everything ``PodInfo`` parses: the spec, labels,
    annotations and the status fields that resource accounting reads."""
    ma, mb = meta(a), meta(b)
    if ma.get("labels") != mb.get("labels") or ma.get("annotations") != mb.get("annotations"):
        return False
    return same_spec_inputs(a, b)


def same_spec_inputs(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two versions of a pod agree on the spec and the status fields that resource
    accounting reads: what every ``PodInfo`` parse but ``labels`` and ``annotations`` depends on."""
    if spec(a) != spec(b):
        return False
    sa, sb = a.get("status") or {}, b.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses"):
        if sa.get(key) != sb.get(key):
            return False
    return bool(_resize_condition(sa) == _resize_condition(sb))


def _resize_condition(status: Mapping[str, Any]) -> Any:
    for cond in status.get("conditions") or ():
        if isinstance(cond, Mapping) and cond.get("type") == "PodResizePending":
            return cond
    return None


def _restartable_init(pod_spec: JSONObj) -> Iterator[Mapping[str, Any]]:
    inits = pod_spec.get("initContainers")
    for c in inits if isinstance(inits, list) else ():
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always":
            yield c


DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


class HostPortInfo:
    """Ports in use on a node: hostIP -> {(protocol, port)} (upstream ``HostPortInfo``)."""

    __slots__ = ("_ports",)

    def __init__(self) -> None:
        self._ports: dict[str, dict[tuple[str, int], int]] = {}

    def add(self, ip: str, protocol: str, port: int) -> None:
        entry = self._ports.setdefault(ip or DEFAULT_BIND_ALL_HOST_IP, {})
        entry[(protocol or "TCP", port)] = entry.get((protocol or "TCP", port), 0) + 1

    def remove(self, ip: str, protocol: str, port: int) -> None:
        ip = ip or DEFAULT_BIND_ALL_HOST_IP
        entry = self._ports.get(ip)
        if not entry:
            return
        key = (protocol or "TCP", port)
        n = entry.get(key, 0) - 1
        if n > 0:
            entry[key] = n
        else:
            entry.pop(key, None)
            if not entry:
                del self._ports[ip]

    def check_conflict(self, ip: str, protocol: str, port: int) -> bool:
        """True when (ip, protocol, port) clashes with a used port; 0.0.0.0 clashes with every IP."""
        if port <= 0:
            return False
        ip = ip or DEFAULT_BIND_ALL_HOST_IP
        key = (protocol or "TCP", port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(key in entry for entry in self._ports.values())
        return any(key in self._ports.get(check_ip, {}) for check_ip in (DEFAULT_BIND_ALL_HOST_IP, ip))

    def __len__(self) -> int:
        return sum(len(e) for e in self._ports.values())

    def __bool__(self) -> bool:
        return bool(self._ports)

    def key(self) -> frozenset[tuple[str, str, int]]:
        """The (ip, protocol, port) triples in use, what conflicts depend on (not how many pods
        hold each): nodes with equal keys answer every conflict check alike."""
        return frozenset((ip, proto, port) for ip, entry in self._ports.items() for proto, port in entry)

    def clone(self) -> HostPortInfo:
        c = HostPortInfo()
        c._ports = {ip: dict(e) for ip, e in self._ports.items()}
        return c


_generation = itertools.count(1)


def next_generation() -> int:
    return next(_generation)


class NodeInfo:
    """A node and the pods on it (bound and assumed), with running sums of their requests."""

    __slots__ = (
        "_labels",
        "_taints",
        "allocatable",
        "generation",
        "image_states",
        "name",
        "node",
        "non_zero_requested",
        "pods",
        "pods_with_affinity",
        "pods_with_required_anti_affinity",
        "problems",
        "pvc_ref_counts",
        "requested",
        "used_ports",
    )

    def __init__(self, node: Obj | None = None, pods: Iterable[PodInfo] = ()) -> None:
        self.node: Obj | None = None
        self.name = ""
        self.pods: list[PodInfo] = []
        self.pods_with_affinity: list[PodInfo] = []
        self.pods_with_required_anti_affinity: list[PodInfo] = []
        self.used_ports = HostPortInfo()
        self.requested = Resource()
        self.non_zero_requested = Resource()
        self.allocatable = Resource()
        self.image_states: dict[str, ImageStateSummary] = {}
        #: How many volumes of this node's pods use each PVC (``namespace/name``; upstream ``PVCRefCounts``).
        self.pvc_ref_counts: dict[str, int] = {}
        self._labels: Mapping[str, str] | None = None
        self._taints: list[JSONObj] | None = None
        #: What :func:`~kubesched.api.objects_validation.validate_node` found in the node; the cache
        #: keeps a node with problems out of every snapshot (never a candidate, see ``Cache.add_node``).
        self.problems: tuple[str, ...] = ()
        self.generation = next_generation()
        if node is not None:
            self.set_node(node)
        for p in pods:
            self.add_pod(p)

    def __repr__(self) -> str:
        return f"NodeInfo({self.name}, pods={len(self.pods)})"

    def set_node(self, node: Obj) -> None:
        """Point at a (newer) node object; never raises: a malformed node gets ``problems`` and
        whatever of its allocatable parses (nothing, when that is what is malformed)."""
        self.node = node
        self.name = str(meta(node).get("name", ""))
        self.problems = tuple(validate_node(node))
        status = node.get("status")
        allocatable = status.get("allocatable") if isinstance(status, Mapping) else None
        try:
            self.allocatable = Resource.from_resource_list(
                allocatable if isinstance(allocatable, Mapping) else None, "status.allocatable"
            )
        except InvalidObjectError:
            self.allocatable = Resource()
        self._labels = None
        self._taints = None
        self.generation = next_generation()

    @property
    def labels(self) -> Mapping[str, str]:
        if self._labels is None:
            labels = meta(self.node or {}).get("labels")
            ok = isinstance(labels, Mapping) and all(isinstance(v, str) for v in labels.values())
            self._labels = labels if ok and isinstance(labels, Mapping) else {}
        return self._labels

    @property
    def taints(self) -> list[JSONObj]:
        if self._taints is None:
            t = spec(self.node or {}).get("taints")
            self._taints = [x for x in t if isinstance(x, Mapping)] if isinstance(t, list) else []
        return self._taints

    @property
    def unschedulable(self) -> bool:
        return bool(spec(self.node or {}).get("unschedulable"))

    def add_pod(self, pi: PodInfo) -> None:
        self.pods.append(pi)
        if pi.has_affinity:
            self.pods_with_affinity.append(pi)
        if pi.has_required_anti_affinity:
            self.pods_with_required_anti_affinity.append(pi)
        self._update(pi, 1)

    def remove_pod(self, pi: PodInfo) -> bool:
        """Remove by UID; False when the pod is not on this node."""
        for i, p in enumerate(self.pods):
            if p.uid == pi.uid:
                del self.pods[i]
                _remove_uid(self.pods_with_affinity, p.uid)
                _remove_uid(self.pods_with_required_anti_affinity, p.uid)
                self._update(p, -1)
                return True
        return False

    def replace_pod(self, old: PodInfo, new: PodInfo) -> bool:
        """:meth:`remove_pod` of ``old`` then :meth:`add_pod` of ``new`` (a newer copy of the same
        pod, e.g. the informer's echo of a binding) without redoing the sums when both count the
        same (``new`` took ``old``'s parses). False, and nothing done, otherwise."""
        try:
            same = (
                new.uid == old.uid
                and new.requests is old.requests
                and new.non_zero_requests == old.non_zero_requests
                and new.host_ports == old.host_ports
                and new.has_affinity == old.has_affinity
                and new.has_required_anti_affinity == old.has_required_anti_affinity
            )
        except ValueError:  # an unparsable pod: the long way, which counts it at zero
            return False
        if not same:
            return False
        for i, p in enumerate(self.pods):
            if p.uid == old.uid:
                del self.pods[i]
                break
        else:
            return False
        self.pods.append(new)
        if new.has_affinity:
            _remove_uid(self.pods_with_affinity, old.uid)
            self.pods_with_affinity.append(new)
        if new.has_required_anti_affinity:
            _remove_uid(self.pods_with_required_anti_affinity, old.uid)
            self.pods_with_required_anti_affinity.append(new)
        self.generation = next_generation()
        return True

    def _update(self, pi: PodInfo, sign: int) -> None:
        try:
            req = pi.requests
            nz_cpu, nz_mem = pi.non_zero_requests
        except ValueError:
            # An invalid pod already bound by someone else: count it, at zero, rather than fail.
            req, nz_cpu, nz_mem = Resource(), 0, 0
        r = self.requested
        r.milli_cpu += sign * req.milli_cpu
        r.memory += sign * req.memory
        r.ephemeral_storage += sign * req.ephemeral_storage
        for name, v in req.scalar_resources.items():
            r.scalar_resources[name] = r.scalar_resources.get(name, 0) + sign * v
        self.non_zero_requested.milli_cpu += sign * nz_cpu
        self.non_zero_requested.memory += sign * nz_mem
        for ip, proto, port in pi.host_ports:
            if sign > 0:
                self.used_ports.add(ip, proto, port)
            else:
                self.used_ports.remove(ip, proto, port)
        pvc_keys = pi.pvc_keys
        if pvc_keys:
            counts = self.pvc_ref_counts
            for key in pvc_keys:
                n = counts.get(key, 0) + sign
                if n > 0:
                    counts[key] = n
                else:
                    counts.pop(key, None)
        self.generation = next_generation()

    def clone(self) -> NodeInfo:
        c = NodeInfo.__new__(NodeInfo)
        c.node = self.node
        c.name = self.name
        c.pods = list(self.pods)
        c.pods_with_affinity = list(self.pods_with_affinity)
        c.pods_with_required_anti_affinity = list(self.pods_with_required_anti_affinity)
        c.used_ports = self.used_ports.clone()
        c.requested = self.requested.clone()
        c.non_zero_requested = self.non_zero_requested.clone()
        c.allocatable = self.allocatable
        c.image_states = self.image_states
        c.pvc_ref_counts = dict(self.pvc_ref_counts) if self.pvc_ref_counts else {}
        c._labels = self._labels
        c._taints = self._taints
        c.problems = self.problems
        c.generation = self.generation
        return c


def _remove_uid(pods: list[PodInfo], uid: str) -> None:
    for i, p in enumerate(pods):
        if p.uid == uid:
            del pods[i]
            return


@dataclass(slots=True)
class ImageStateSummary:
    """Size of an image and how many nodes have it (upstream ``ImageStateSummary``)."""

    size: int
    num_nodes: int


@dataclass(slots=True)
class NodeScore:
    name: str
    score: int


@dataclass(slots=True)
class PreFilterResult:
    """Narrowing of the candidate nodes; ``None`` node_names means all nodes."""

    node_names: set[str] | None = None

    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.all_nodes():
            return PreFilterResult(None if self.node_names is None else set(self.node_names))
        if self.all_nodes():
            return PreFilterResult(set(other.node_names or ()))
        return PreFilterResult(set(self.node_names or ()) & set(other.node_names or ()))


class NominatingMode:
    NO_OVERRIDE = 0
    OVERRIDE = 1


@dataclass(slots=True)
class NominatingInfo:
    nominated_node_name: str = ""
    mode: int = NominatingMode.OVERRIDE


@dataclass(slots=True)
class PostFilterResult:
    nominating_info: NominatingInfo | None = None


@dataclass(slots=True)
class QueuedPodInfo:
    """A pod in the scheduling queue with its queueing bookkeeping (upstream ``QueuedPodInfo``)."""

    pod_info: PodInfo
    #: When the pod was (re)added to the queue: the QueueSort tie-breaker and the backoff base.
    timestamp: float = 0.0
    attempts: int = 0
    unschedulable_count: int = 0
    consecutive_errors: int = 0
    initial_attempt_timestamp: float | None = None
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    gating_plugin: str = ""
    #: Message of the last failure, for reports (``kubesched simulate``).
    last_failure: str = ""
    #: The pod as its current attempt popped it. The queue points ``pod_info`` at newer copies
    #: while the attempt runs; upstream's cycle keeps the popped object, and v1.35's failure
    #: handler reports it (its generation is the condition's observedGeneration).
    attempted_pod: Obj | None = None
    #: Moved out of the unschedulable pods by the 5-minute flush, not by an event, and not
    #: attempted since (upstream ``WasFlushedFromUnschedulable``): a pod bound so points at a
    #: queueing hint that missed its event.
    was_flushed_from_unschedulable: bool = False

    @property
    def pod(self) -> Obj:
        return self.pod_info.pod

    @property
    def gated(self) -> bool:
        return bool(self.gating_plugin)


class Diagnosis:
    """Why a pod did not fit: the status of every node plus the plugins that rejected it."""

    __slots__ = ("_reason_counts", "absent_status", "node_to_status", "post_filter_msg", "pre_filter_msg",
                 "unschedulable_plugins")

    def __init__(self) -> None:
        self.node_to_status: dict[str, Status] = {}
        #: Status of every node not in ``node_to_status`` (upstream's absent-nodes status).
        self.absent_status: Status | None = None
        self.unschedulable_plugins: set[str] = set()
        self.pre_filter_msg = ""
        self.post_filter_msg = ""
        self._reason_counts: tuple[int, dict[str, int]] | None = None

    def set_reason_counts(self, statuses: Iterable[tuple[Status, int]]) -> None:
        """Record that ``node_to_status`` holds exactly these statuses, each on that many nodes (what
        the scheduler wrote in bulk), so the message need not count reasons node by node."""
        counts: dict[str, int] = {}
        nodes = 0
        for status, n in statuses:
            nodes += n
            for r in status.reasons:
                counts[r] = counts.get(r, 0) + n
        self._reason_counts = (nodes, counts)

    def reason_counts(self) -> dict[str, int]:
        """How many nodes of ``node_to_status`` each reason was given for."""
        known = self._reason_counts
        if known is not None and known[0] == len(self.node_to_status):
            return dict(known[1])
        return count_reasons(self.node_to_status.values())


NO_NODE_AVAILABLE_MSG = "0/{} nodes are available"
ERR_NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class FitError(Exception):
    """The pod fits no node; ``str()`` is upstream's FailedScheduling message (``FitError.Error``)."""

    def __init__(self, pod: PodInfo, num_all_nodes: int, diagnosis: Diagnosis) -> None:
        super().__init__()
        self.pod = pod
        self.num_all_nodes = num_all_nodes
        self.diagnosis = diagnosis

    def __str__(self) -> str:
        d = self.diagnosis
        msg = NO_NODE_AVAILABLE_MSG.format(self.num_all_nodes) + ":"
        if d.pre_filter_msg:
            msg += f" {d.pre_filter_msg}."
        else:
            reasons = _histogram(d.reason_counts(), len(d.node_to_status), self.num_all_nodes, d.absent_status)
            if reasons:  # upstream appends the histogram only when it has entries
                msg += " " + ", ".join(reasons) + "."
        if d.post_filter_msg:
            msg += " " + d.post_filter_msg
        return msg


class InvalidPodError(FitError):
    """The pod has :attr:`PodInfo.problems`: it fits no node because it cannot be read.

    A FitError (the pod is unschedulable and waits, quietly: the problems were logged once per pod
    version) with no node statuses and no rejecting plugin, so any event may retry it — among
    them the pod's own update that fixes it. ``str()`` is :attr:`PodInfo.invalid_message`."""

    def __init__(self, pod: PodInfo) -> None:
        super().__init__(pod, 0, Diagnosis())

    def __str__(self) -> str:
        return self.pod.invalid_message


def count_reasons(statuses: Iterable[Status]) -> dict[str, int]:
    """How many of ``statuses`` give each reason."""
    # Nodes rejected for the same reason usually share one Status object (a batch Filter's answer):
    # count the objects first, in C, then their reasons.
    values = list(statuses)
    by_id = dict(zip(map(id, values), values, strict=True))
    counts: dict[str, int] = {}
    for key, n in Counter(map(id, values)).items():
        for r in by_id[key].reasons:
            counts[r] = counts.get(r, 0) + n
    return counts


def histogram(node_to_status: Mapping[str, Status], num_all_nodes: int, absent: Status | None) -> list[str]:
    """``"<count> <reason>"`` for every reason, sorted as strings (upstream ``FitError.Error``)."""
    return _histogram(count_reasons(node_to_status.values()), len(node_to_status), num_all_nodes, absent)


def _histogram(counts: dict[str, int], listed: int, num_all_nodes: int, absent: Status | None) -> list[str]:
    absent_n = num_all_nodes - listed
    if absent is not None and absent_n > 0:
        for r in absent.reasons:
            counts[r] = counts.get(r, 0) + absent_n
    return sorted(f"{n} {r}" for r, n in counts.items())
