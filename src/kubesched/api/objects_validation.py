"""Every problem in a Pod or a Node that the scheduler or an in-tree plugin would trip over.

``validate_pod(pod)`` and ``validate_node(node)`` return one ``"<field path>: <message>"`` string
per problem, empty when the object is usable. They check what the scheduler and the in-tree
plugins parse — resources (containers, init containers and sidecars, overhead, pod-level
resources), ports, tolerations, taints, node and pod (anti-)affinity, topology spread, scheduling
gates, node selector, priority, labels — so a pod or node they accept parses without an
exception anywhere, and one they refuse is set aside alone (the pod stays pending, the node is
never a candidate) instead of failing every cycle it takes part in.

Wording follows the API server where it defines a check (pkg/apis/core/validation/validation.go,
apimachinery's ``field.Error`` and ``resource.ParseQuantity``): ``Invalid value: "-1": must be
greater than or equal to 0``, ``Required value``, ``Unsupported value: ... supported values:``,
and its field paths (``spec.containers[0].resources.requests[cpu]`` for a pod's resource lists,
``status.allocatable.cpu`` for a node's). A field of the wrong JSON type, which the API server
refuses while decoding, reads ``must be an integer, got "x"``. One deliberate addition: a
quantity the API server keeps but the scheduler cannot count in int64 (``1e400`` cpu) is refused
with ``must be less than or equal to 9223372036854775807m``.

Syntax the scheduler is indifferent to (label key grammar, duplicate taints or constraints, a
pod without containers, an empty taint effect) is left to the API server: refusing it here would
only set aside objects that schedule fine. The checks are shape-first: deeper parsers (label
selectors, node selectors, requests) only run on parts whose shape is right, and their own
``InvalidObjectError`` is reported like the rest.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kubesched.api.errors import InvalidObjectError, field_invalid, field_not_supported, field_required
from kubesched.api.labels import selector_from_label_selector
from kubesched.api.nodeaffinity import NodeSelector, PreferredSchedulingTerms
from kubesched.api.quantity import QuantityError, nano_value
from kubesched.api.resources import CPU, compute_pod_resources, is_extended_resource_name

__all__ = ["validate_node", "validate_pod", "validate_volume_source"]

_INT64_MAX = (1 << 63) - 1
_INT32_MIN, _INT32_MAX = -(1 << 31), (1 << 31) - 1
_NANO = 10**9
# helper.IsIntegerResourceName's standard names (the rest are extended resources).
_INTEGER_RESOURCES = frozenset({
    "pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
    "persistentvolumeclaims", "services.nodeports", "services.loadbalancers",
})
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TOLERATION_OPERATORS = ("Equal", "Exists", "Gt", "Lt")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_POLICIES = ("Honor", "Ignore")
_PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"
_MAX_SHOWN = 64


def _shown(value: Any) -> str:
    """A bad value as the message shows it: JSON for scalars (cut short), the type for the rest."""
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, str) and len(value) > _MAX_SHOWN:
        return json.dumps(value[:_MAX_SHOWN] + "...")
    if isinstance(value, float | int | str | bool) or value is None:
        try:
            return json.dumps(value)
        except ValueError:  # nan / inf
            return str(value)
    return type(value).__name__


class _Checker:
    """Collects problems; each helper returns the value when its type is right, else None."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.problems.append(f"{path}: {message}")

    def error(self, err: InvalidObjectError) -> None:
        for e in err.errors:
            self.problems.append(str(e))

    def _typed(self, value: Any, path: str, ok: bool, what: str) -> bool:
        if not ok:
            self.add(path, f"must be {what}, got {_shown(value)}")
        return ok

    def mapping(self, value: Any, path: str) -> Mapping[str, Any] | None:
        """An optional object: None (absent) reads as empty."""
        if value is None:
            return {}
        return value if self._typed(value, path, isinstance(value, Mapping), "an object") else None

    def items(self, value: Any, path: str) -> Sequence[Any] | None:
        """An optional list: None reads as empty."""
        if value is None:
            return ()
        return value if self._typed(value, path, isinstance(value, list | tuple), "a list") else None

    def string(self, value: Any, path: str, *, required: bool = False) -> str | None:
        if value is None:
            if required:
                self.error(field_required(path, ""))
                return None
            return ""
        return value if self._typed(value, path, isinstance(value, str), "a string") else None

    def integer(self, value: Any, path: str, lo: int = _INT32_MIN, hi: int = _INT32_MAX) -> int | None:
        """An int32 (every integer the scheduler reads is one) within [lo, hi] of the type."""
        ok = isinstance(value, int) and not isinstance(value, bool)
        if not self._typed(value, path, ok, "an integer"):
            return None
        if not _INT32_MIN <= value <= _INT32_MAX:
            self.error(field_invalid(path, value, "must be a 32-bit integer"))
            return None
        return int(value)

    def boolean(self, value: Any, path: str) -> None:
        if value is not None:
            self._typed(value, path, isinstance(value, bool), "a boolean")

    def one_of(self, value: Any, path: str, supported: Sequence[str], *, required: bool = False) -> None:
        s = self.string(value, path, required=required)
        if s and s not in supported:
            self.error(field_not_supported(path, s, supported))

    def string_map(self, value: Any, path: str) -> Mapping[str, str] | None:
        m = self.mapping(value, path)
        if m is None:
            return None
        ok = True
        for k, v in m.items():
            if not isinstance(v, str):
                self.add(f"{path}[{k}]", f"must be a string, got {_shown(v)}")
                ok = False
        return m if ok else None

    def string_list(self, value: Any, path: str) -> None:
        lst = self.items(value, path)
        for i, v in enumerate(lst or ()):
            self.string(v, f"{path}[{i}]")

    def quantity(self, name: str, value: Any, path: str) -> None:
        """One resource quantity: parses, ValidateResourceQuantityValue, and fits the scheduler's int64."""
        if value is None:
            return  # JSON null decodes to a zero Quantity (Quantity.UnmarshalJSON)
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            self.add(path, f"must be a quantity (a string or a number), got {_shown(value)}")
            return
        text = value.strip() if isinstance(value, str) else value
        try:
            nanos = nano_value(text)
        except QuantityError as exc:
            self.add(path, str(exc).split(": ", 1)[0])  # the path names the field; drop the echo
            return
        shown = value if isinstance(value, str) else str(value)
        if nanos < 0:
            self.error(field_invalid(path, shown, "must be greater than or equal to 0"))
            return
        integer = name in _INTEGER_RESOURCES or is_extended_resource_name(name)
        if integer and nanos % _NANO:
            self.error(field_invalid(path, shown, "must be an integer"))
        unit, suffix = (10**6, "m") if name == CPU else (_NANO, "")
        if -(-nanos // unit) > _INT64_MAX:
            self.error(field_invalid(path, shown, f"must be less than or equal to {_INT64_MAX}{suffix}"))

    def resource_list(self, value: Any, path: str, *, key_form: bool) -> None:
        m = self.mapping(value, path)
        for name, q in (m or {}).items():
            self.quantity(str(name), q, f"{path}[{name}]" if key_form else f"{path}.{name}")

    def run(self, parse: Callable[[], object]) -> None:
        """A deeper parser, run once the shape is right; its field errors are reported."""
        try:
            parse()
        except InvalidObjectError as err:
            self.error(err)
        except Exception as exc:  # a shape the checks above missed: still one pod's problem, not a crash
            self.problems.append(f"{type(exc).__name__}: {exc}")


# --- pods ---------------------------------------------------------------------------------


def _container(c: _Checker, value: Any, path: str, *, init: bool) -> None:
    ctr = c.mapping(value, path)
    if ctr is None:
        return
    c.string(ctr.get("name"), f"{path}.name")
    if init:
        c.one_of(ctr.get("restartPolicy"), f"{path}.restartPolicy", ("Always",))
    res = c.mapping(ctr.get("resources"), f"{path}.resources")
    if res is not None:
        c.resource_list(res.get("requests"), f"{path}.resources.requests", key_form=True)
        c.resource_list(res.get("limits"), f"{path}.resources.limits", key_form=True)
    for i, port in enumerate(c.items(ctr.get("ports"), f"{path}.ports") or ()):
        p = f"{path}.ports[{i}]"
        pm = c.mapping(port, p)
        if pm is None:
            continue
        cp = c.integer(pm.get("containerPort"), f"{p}.containerPort") if "containerPort" in pm else None
        if cp is not None and not 1 <= cp <= 65535:
            c.error(field_invalid(f"{p}.containerPort", cp, _PORT_RANGE_MSG))
        if pm.get("hostPort") is not None:
            hp = c.integer(pm.get("hostPort"), f"{p}.hostPort")
            if hp is not None and hp != 0 and not 1 <= hp <= 65535:
                c.error(field_invalid(f"{p}.hostPort", hp, _PORT_RANGE_MSG))
        c.one_of(pm.get("protocol"), f"{p}.protocol", _PROTOCOLS)
        c.string(pm.get("hostIP"), f"{p}.hostIP")


def _tolerations(c: _Checker, value: Any, path: str) -> None:
    for i, tol in enumerate(c.items(value, path) or ()):
        p = f"{path}[{i}]"
        t = c.mapping(tol, p)
        if t is None:
            continue
        c.string(t.get("key"), f"{p}.key")
        c.one_of(t.get("operator"), f"{p}.operator", _TOLERATION_OPERATORS)
        c.string(t.get("value"), f"{p}.value")
        c.one_of(t.get("effect"), f"{p}.effect", _TAINT_EFFECTS)
        if t.get("tolerationSeconds") is not None:
            ok = isinstance(t["tolerationSeconds"], int) and not isinstance(t["tolerationSeconds"], bool)
            c._typed(t["tolerationSeconds"], f"{p}.tolerationSeconds", ok, "an integer")


def _label_selector(c: _Checker, value: Any, path: str) -> None:
    if value is None:
        return
    if c.mapping(value, path) is not None:
        c.run(lambda: selector_from_label_selector(value, path))


def _pod_affinity_term(c: _Checker, value: Any, path: str) -> None:
    term = c.mapping(value, path)
    if term is None:
        return
    _label_selector(c, term.get("labelSelector"), f"{path}.labelSelector")
    _label_selector(c, term.get("namespaceSelector"), f"{path}.namespaceSelector")
    c.string_list(term.get("namespaces"), f"{path}.namespaces")
    c.string_list(term.get("matchLabelKeys"), f"{path}.matchLabelKeys")
    c.string_list(term.get("mismatchLabelKeys"), f"{path}.mismatchLabelKeys")
    key = c.string(term.get("topologyKey"), f"{path}.topologyKey")
    if key == "":
        c.error(field_required(f"{path}.topologyKey", "can not be empty"))


def _weight(c: _Checker, value: Any, path: str) -> None:
    w = c.integer(value, path)
    if w is not None and not 1 <= w <= 100:
        c.error(field_invalid(path, w, "must be in the range 1-100"))


def _affinity(c: _Checker, value: Any, path: str) -> None:
    aff = c.mapping(value, path)
    if aff is None:
        return
    na = c.mapping(aff.get("nodeAffinity"), f"{path}.nodeAffinity")
    if na:
        rp = f"{path}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
        required = na.get("requiredDuringSchedulingIgnoredDuringExecution")
        if required is not None and c.mapping(required, rp) is not None:
            terms = c.items(required.get("nodeSelectorTerms"), f"{rp}.nodeSelectorTerms")
            if terms is not None and all(c.mapping(t, f"{rp}.nodeSelectorTerms[{i}]") is not None
                                         for i, t in enumerate(terms)):
                c.run(lambda: NodeSelector(required, rp))
        pp = f"{path}.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution"
        preferred = c.items(na.get("preferredDuringSchedulingIgnoredDuringExecution"), pp)
        shaped = preferred is not None
        for i, term in enumerate(preferred or ()):
            t = c.mapping(term, f"{pp}[{i}]")
            if t is None:
                shaped = False
                continue
            _weight(c, t.get("weight"), f"{pp}[{i}].weight")
            shaped = c.mapping(t.get("preference"), f"{pp}[{i}].preference") is not None and shaped
        if shaped and preferred:
            c.run(lambda: PreferredSchedulingTerms(list(preferred), pp))
    for kind in ("podAffinity", "podAntiAffinity"):
        kp = f"{path}.{kind}"
        pa = c.mapping(aff.get(kind), kp)
        if not pa:
            continue
        rp = f"{kp}.requiredDuringSchedulingIgnoredDuringExecution"
        for i, term in enumerate(c.items(pa.get("requiredDuringSchedulingIgnoredDuringExecution"), rp) or ()):
            _pod_affinity_term(c, term, f"{rp}[{i}]")
        pp = f"{kp}.preferredDuringSchedulingIgnoredDuringExecution"
        for i, wt in enumerate(c.items(pa.get("preferredDuringSchedulingIgnoredDuringExecution"), pp) or ()):
            w = c.mapping(wt, f"{pp}[{i}]")
            if w is None:
                continue
            _weight(c, w.get("weight"), f"{pp}[{i}].weight")
            if w.get("podAffinityTerm") is None:
                c.error(field_required(f"{pp}[{i}].podAffinityTerm", ""))
            else:
                _pod_affinity_term(c, w.get("podAffinityTerm"), f"{pp}[{i}].podAffinityTerm")


def _topology_spread(c: _Checker, value: Any, path: str) -> None:
    for i, con in enumerate(c.items(value, path) or ()):
        p = f"{path}[{i}]"
        tsc = c.mapping(con, p)
        if tsc is None:
            continue
        skew = c.integer(tsc.get("maxSkew"), f"{p}.maxSkew")
        if skew is not None and skew <= 0:
            c.error(field_invalid(f"{p}.maxSkew", skew, "must be greater than zero"))
        key = c.string(tsc.get("topologyKey"), f"{p}.topologyKey")
        if key == "":
            c.error(field_required(f"{p}.topologyKey", "can not be empty"))
        when = tsc.get("whenUnsatisfiable")
        c.one_of(when, f"{p}.whenUnsatisfiable", _WHEN_UNSATISFIABLE, required=True)
        if tsc.get("minDomains") is not None:
            md = c.integer(tsc.get("minDomains"), f"{p}.minDomains")
            if md is not None and md <= 0:
                c.error(field_invalid(f"{p}.minDomains", md, "must be greater than zero"))
            elif md is not None and when != "DoNotSchedule":
                c.error(field_invalid(
                    f"{p}.minDomains", md,
                    f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"))
        c.one_of(tsc.get("nodeAffinityPolicy"), f"{p}.nodeAffinityPolicy", _POLICIES)
        c.one_of(tsc.get("nodeTaintsPolicy"), f"{p}.nodeTaintsPolicy", _POLICIES)
        c.string_list(tsc.get("matchLabelKeys"), f"{p}.matchLabelKeys")
        _label_selector(c, tsc.get("labelSelector"), f"{p}.labelSelector")


def _source_strings(c: _Checker, source: Mapping[str, Any], path: str, keys: tuple[str, ...]) -> None:
    for key in keys:
        c.string(source.get(key), f"{path}.{key}")


def validate_volume_source(c: _Checker, volume: Mapping[str, Any], path: str) -> None:
    """The inline and persistent sources the volume plugins compare or count (shared with pods' volumes)."""
    gce = c.mapping(volume.get("gcePersistentDisk"), f"{path}.gcePersistentDisk")
    if gce:
        _source_strings(c, gce, f"{path}.gcePersistentDisk", ("pdName", "fsType"))
        c.boolean(gce.get("readOnly"), f"{path}.gcePersistentDisk.readOnly")
    aws = c.mapping(volume.get("awsElasticBlockStore"), f"{path}.awsElasticBlockStore")
    if aws:
        _source_strings(c, aws, f"{path}.awsElasticBlockStore", ("volumeID", "fsType"))
    iscsi = c.mapping(volume.get("iscsi"), f"{path}.iscsi")
    if iscsi:
        _source_strings(c, iscsi, f"{path}.iscsi", ("iqn", "targetPortal"))
        c.boolean(iscsi.get("readOnly"), f"{path}.iscsi.readOnly")
    rbd = c.mapping(volume.get("rbd"), f"{path}.rbd")
    if rbd:
        c.string_list(rbd.get("monitors"), f"{path}.rbd.monitors")
        _source_strings(c, rbd, f"{path}.rbd", ("pool", "image"))
        c.boolean(rbd.get("readOnly"), f"{path}.rbd.readOnly")
    csi = c.mapping(volume.get("csi"), f"{path}.csi")
    if csi:
        _source_strings(c, csi, f"{path}.csi", ("driver", "volumeHandle"))


def _volumes(c: _Checker, value: Any, path: str) -> None:
    """The pod's volumes: a name and the sources the volume plugins read."""
    for i, vol in enumerate(c.items(value, path) or ()):
        p = f"{path}[{i}]"
        v = c.mapping(vol, p)
        if v is None:
            continue
        c.string(v.get("name"), f"{p}.name")
        pvc = c.mapping(v.get("persistentVolumeClaim"), f"{p}.persistentVolumeClaim")
        if pvc:
            c.string(pvc.get("claimName"), f"{p}.persistentVolumeClaim.claimName")
            c.boolean(pvc.get("readOnly"), f"{p}.persistentVolumeClaim.readOnly")
        c.mapping(v.get("ephemeral"), f"{p}.ephemeral")
        validate_volume_source(c, v, p)


def _metadata(c: _Checker, obj: Mapping[str, Any], *, namespaced: bool) -> None:
    meta = c.mapping(obj.get("metadata"), "metadata")
    if meta is None:
        return
    name = c.string(meta.get("name"), "metadata.name")
    if name == "" and not namespaced:  # a node is known by its name; a pod by namespace/name/uid
        c.error(field_required("metadata.name", "name or generateName is required"))
    if namespaced:
        c.string(meta.get("namespace"), "metadata.namespace")
    c.string(meta.get("uid"), "metadata.uid")
    c.string_map(meta.get("labels"), "metadata.labels")
    c.string_map(meta.get("annotations"), "metadata.annotations")


def validate_pod(pod: Any, *, spec_key: str | None = None) -> list[str]:
    """``"<field path>: <message>"`` for every problem the scheduler would meet in ``pod``.

    The metadata is checked every time; what the spec and status have (everything else) is
    remembered by the text of the two (:func:`_spec_key`, or ``spec_key`` when the caller has it:
    ``PodInfo.spec_key``): pods of a workload share a few shapes, and checking one took about
    30 µs of a 400 µs scheduling cycle."""
    c = _Checker()
    if not isinstance(pod, Mapping):
        return [f"pod: must be an object, got {_shown(pod)}"]
    _metadata(c, pod, namespaced=True)
    key = spec_key if spec_key is not None else _spec_key(pod)
    if key is None:
        c.problems += _pod_spec_problems(pod)
        return c.problems
    found = _by_spec.get(key)
    if found is None:
        if len(_by_spec) >= _BY_SPEC_MAX:
            _by_spec.clear()
        found = _by_spec[key] = tuple(_pod_spec_problems(pod))
    c.problems += found
    return c.problems


#: The spec and status problems of the shapes seen last, by :func:`_spec_key`.
_by_spec: dict[str, tuple[str, ...]] = {}
_BY_SPEC_MAX = 4096


def _spec_key(pod: Mapping[str, Any]) -> str | None:
    """``repr`` of the spec and status (None unless both are plain dicts or absent, the JSON
    shapes). Equal keys mean equal inputs, as for the requests' cache (api/resources.py
    ``_inputs_key``): repr tells ``"1"`` from ``1`` and a list from a tuple, and nests exactly."""
    spec, status = pod.get("spec"), pod.get("status")
    if not (type(spec) is dict or spec is None) or not (type(status) is dict or status is None):
        return None
    return repr((spec, status))


def _pod_spec_problems(pod: Mapping[str, Any]) -> list[str]:
    """The problems :func:`validate_pod` finds outside the metadata: they read ``spec`` and
    ``status`` only."""
    c = _Checker()
    spec = c.mapping(pod.get("spec"), "spec")
    if spec is None:
        return c.problems
    before = len(c.problems)
    # No container at all is left to the API server: the scheduler reads such a pod fine (and
    # upstream's scheduler tests are full of them).
    for i, ctr in enumerate(c.items(spec.get("containers"), "spec.containers") or ()):
        _container(c, ctr, f"spec.containers[{i}]", init=False)
    for i, ctr in enumerate(c.items(spec.get("initContainers"), "spec.initContainers") or ()):
        _container(c, ctr, f"spec.initContainers[{i}]", init=True)
    c.resource_list(spec.get("overhead"), "spec.overhead", key_form=True)
    res = c.mapping(spec.get("resources"), "spec.resources")
    if res is not None:
        c.resource_list(res.get("requests"), "spec.resources.requests", key_form=True)
        c.resource_list(res.get("limits"), "spec.resources.limits", key_form=True)
    status = c.mapping(pod.get("status"), "status")
    if status is not None:
        for key in ("containerStatuses", "initContainerStatuses"):
            for i, cs in enumerate(c.items(status.get(key), f"status.{key}") or ()):
                csm = c.mapping(cs, f"status.{key}[{i}]")
                if csm is None:
                    continue
                c.resource_list(csm.get("allocatedResources"), f"status.{key}[{i}].allocatedResources",
                                key_form=True)
                cres = c.mapping(csm.get("resources"), f"status.{key}[{i}].resources")
                if cres is not None:
                    c.resource_list(cres.get("requests"), f"status.{key}[{i}].resources.requests", key_form=True)
        c.items(status.get("conditions"), "status.conditions")
        c.string(status.get("nominatedNodeName"), "status.nominatedNodeName")
    if len(c.problems) == before:
        # Shapes and quantities are right: the requests parse; check the pod's total still counts.
        c.run(lambda: _check_totals(c, pod))
    _tolerations(c, spec.get("tolerations"), "spec.tolerations")
    _affinity(c, spec.get("affinity"), "spec.affinity")
    _topology_spread(c, spec.get("topologySpreadConstraints"), "spec.topologySpreadConstraints")
    _volumes(c, spec.get("volumes"), "spec.volumes")
    for i, gate in enumerate(c.items(spec.get("schedulingGates"), "spec.schedulingGates") or ()):
        g = c.mapping(gate, f"spec.schedulingGates[{i}]")
        if g is not None:
            c.string(g.get("name"), f"spec.schedulingGates[{i}].name")
    c.string_map(spec.get("nodeSelector"), "spec.nodeSelector")
    if spec.get("priority") is not None:
        c.integer(spec.get("priority"), "spec.priority")
    c.one_of(spec.get("preemptionPolicy"), "spec.preemptionPolicy", ("Never", "PreemptLowerPriority"))
    c.string(spec.get("nodeName"), "spec.nodeName")
    c.string(spec.get("schedulerName"), "spec.schedulerName")
    return c.problems


def _check_totals(c: _Checker, pod: Mapping[str, Any]) -> None:
    """The pod's effective requests (sums of containers, sidecars and overhead) fit int64."""
    req = compute_pod_resources(pod).requests
    totals = {"cpu": req.milli_cpu, "memory": req.memory, "ephemeral-storage": req.ephemeral_storage,
              **req.scalar_resources}
    for name, value in totals.items():
        if value > _INT64_MAX:
            suffix = "m" if name == CPU else ""
            c.add(f"spec.containers[*].resources.requests[{name}]",
                  f"the pod's total request must be less than or equal to {_INT64_MAX}{suffix}")


# --- nodes --------------------------------------------------------------------------------


def validate_node(node: Any) -> list[str]:
    """``"<field path>: <message>"`` for every problem the scheduler would meet in ``node``."""
    c = _Checker()
    if not isinstance(node, Mapping):
        return [f"node: must be an object, got {_shown(node)}"]
    _metadata(c, node, namespaced=False)
    spec = c.mapping(node.get("spec"), "spec")
    if spec is not None:
        c.boolean(spec.get("unschedulable"), "spec.unschedulable")
        for i, taint in enumerate(c.items(spec.get("taints"), "spec.taints") or ()):
            p = f"spec.taints[{i}]"
            t = c.mapping(taint, p)
            if t is None:
                continue
            c.string(t.get("key"), f"{p}.key")
            c.string(t.get("value"), f"{p}.value")
            c.one_of(t.get("effect"), f"{p}.effect", _TAINT_EFFECTS)
    status = c.mapping(node.get("status"), "status")
    if status is not None:
        c.resource_list(status.get("capacity"), "status.capacity", key_form=False)
        c.resource_list(status.get("allocatable"), "status.allocatable", key_form=False)
        for i, image in enumerate(c.items(status.get("images"), "status.images") or ()):
            im = c.mapping(image, f"status.images[{i}]")
            if im is None:
                continue
            c.string_list(im.get("names"), f"status.images[{i}].names")
            size = im.get("sizeBytes")
            if size is not None:
                ok = isinstance(size, int) and not isinstance(size, bool)
                c._typed(size, f"status.images[{i}].sizeBytes", ok, "an integer")
    return c.problems
