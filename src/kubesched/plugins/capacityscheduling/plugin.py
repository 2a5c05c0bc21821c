"""CapacityScheduling: elastic quotas per namespace (scheduler-plugins
``pkg/capacityscheduling/capacity_scheduling.go``, KEP 9).

* PreFilter rejects a pod whose namespace would exceed its ElasticQuota's max, or whose admission
  would borrow (take the namespace over its min) while the sum of every quota's used would exceed
  the sum of their mins: borrowing only takes guarantees nobody is using. Messages are upstream's.
* PostFilter preempts (preemption.py): a namespace within its min reclaims from borrowers.
* Reserve/Unreserve count the pod at once; usage is otherwise reconciled from the snapshot
  (usage.py), which also releases deleted pods. ``status.used`` of each quota is written through
  the handle's client whenever its namespace's usage changes.
* An invalid ElasticQuota (a bad quantity, min above max) is an object error: pods of its
  namespace fail with it (an Error, retried with backoff) and a Warning event names it; the
  quota counts for nothing else. Only the first quota of a namespace (by name) is used.
"""

from __future__ import annotations

import copy
import logging
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from kubesched.api.resources import Resource
from kubesched.config.errors import FieldError
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ActionType, ClusterEvent, ClusterEventWithHint, EventResource, QueueingHint
from kubesched.framework.interfaces import (
    ClusterClient,
    EnqueueExtensions,
    Handle,
    PostFilterPlugin,
    PreFilterExtensions,
    PreFilterPlugin,
    ReservePlugin,
)
from kubesched.framework.preemption import Evaluator
from kubesched.framework.status import Code, Status
from kubesched.framework.types import JSONObj, JSONValue, NodeInfo, PodInfo, PostFilterResult, PreFilterResult
from kubesched.plugins import names
from kubesched.plugins.jsonview import get_obj

from .elasticquota import (
    API_VERSION,
    KIND,
    ElasticQuotaInfo,
    ElasticQuotaInfos,
    InvalidElasticQuotaError,
    parse_elastic_quota,
    pod_request,
    quota_key,
    used_resource_list,
)
from .preemption import Preemptor
from .state import (
    BORROWING_PODS,
    ELASTIC_QUOTA_SNAPSHOT_KEY,
    OVER_MAX,
    OVER_MIN_SUM,
    PRE_FILTER_STATE_KEY,
    ElasticQuotaSnapshotState,
    MinSumCheck,
    PreFilterState,
    quota_violation,
    read_snapshot_state,
)
from .usage import Usage

log = logging.getLogger("kubesched.plugins.capacityscheduling")

#: Reason of the Warning event recorded on an ElasticQuota the plugin cannot honour.
REASON_INVALID = "InvalidElasticQuota"

#: Any change to an ElasticQuota (the queue's label for custom resources is their kind).
ELASTIC_QUOTA_EVENT = ClusterEvent(EventResource.CUSTOM, ActionType.ALL, KIND)


@dataclass
class CapacitySchedulingArgs:
    """``pluginConfig`` args of CapacityScheduling (scheduler-plugins has none)."""

    #: ``BorrowingPods``: the sum-of-min test applies to pods that would take their namespace over
    #: its min. ``AllPods``: to every pod of a namespace with a quota, as scheduler-plugins does.
    min_sum_check: MinSumCheck = BORROWING_PODS

    def validate(self) -> list[FieldError]:
        return []  # the Literal is checked by decoding


@dataclass
class _Quotas:
    """The cluster's ElasticQuotas as of one list: valid ones and errors, by namespace."""

    valid: dict[str, tuple[ElasticQuotaInfo, JSONObj, list[str]]] = field(default_factory=dict)
    invalid: dict[str, InvalidElasticQuotaError] = field(default_factory=dict)
    #: Namespaces whose quota is new or changed since the previous list.
    fresh: set[str] = field(default_factory=set)


class CapacityScheduling(EnqueueExtensions, PreFilterPlugin, PreFilterExtensions, PostFilterPlugin, ReservePlugin):
    name = names.CAPACITY_SCHEDULING
    args_type = CapacitySchedulingArgs

    def __init__(self, args: CapacitySchedulingArgs | None, handle: Handle) -> None:
        self.args = args or CapacitySchedulingArgs()
        self.handle = handle
        self.usage = Usage()
        # Reserve/Unreserve may run on the binding cycle's thread against a real cluster.
        self._lock = threading.RLock()
        #: (namespace, name) -> (spec as parsed, the quota or its error).
        self._parsed: dict[tuple[str, str], tuple[JSONValue, ElasticQuotaInfo | InvalidElasticQuotaError]] = {}
        #: (namespace, name) -> the problem last reported on that object (reported once).
        self._reported: dict[tuple[str, str], str] = {}
        #: (namespace, name) -> the status.used we last wrote (or are about to).
        self._written: dict[tuple[str, str], dict[str, str]] = {}
        #: Status writes not done yet: (namespace, name) -> (the object, its new status).
        self._pending: dict[tuple[str, str], tuple[JSONObj, dict[str, JSONValue]]] = {}
        self._writer_busy = False
        self._quotas = _Quotas()

    # -- quotas -----------------------------------------------------------------------------------
    def _client(self) -> ClusterClient:
        return self.handle.client()

    def _sync_quotas(self) -> _Quotas:
        """List the ElasticQuotas; parse only new or changed ones; report problems once."""
        objs = sorted(self._client().list_objects(API_VERSION, KIND), key=quota_key)
        out = _Quotas()
        live: set[tuple[str, str]] = set()
        for obj in objs:
            key = quota_key(obj)
            ns = key[0]
            live.add(key)
            if ns in out.valid or ns in out.invalid:
                first = out.valid[ns][0].name if ns in out.valid else out.invalid[ns].name
                self._report(obj, f"only one {KIND} per namespace is supported; {ns}/{first} is used")
                continue
            spec = obj.get("spec")
            cached = self._parsed.get(key)
            if cached is None or cached[0] != spec:
                try:
                    parsed: ElasticQuotaInfo | InvalidElasticQuotaError = parse_elastic_quota(obj)
                except InvalidElasticQuotaError as err:
                    parsed = err
                self._parsed[key] = (copy.deepcopy(spec), parsed)
                out.fresh.add(ns)
            else:
                parsed = cached[1]
            if isinstance(parsed, InvalidElasticQuotaError):
                out.invalid[ns] = parsed
                self._report(obj, str(parsed))
            else:
                spec_map = spec if isinstance(spec, Mapping) else {}
                named = [str(r) for part in ("min", "max") for r in get_obj(spec_map, part)]
                out.valid[ns] = (parsed, obj, named)
                self._reported.pop(key, None)
        for key in [k for k in self._parsed if k not in live]:
            del self._parsed[key]
            self._written.pop(key, None)
            self._pending.pop(key, None)
        for key in [k for k in self._reported if k not in live]:
            del self._reported[key]
        self._quotas = out
        return out

    def _report(self, obj: JSONObj, problem: str) -> None:
        key = quota_key(obj)
        if self._reported.get(key) == problem:
            return
        self._reported[key] = problem
        log.warning("%s %s/%s: %s", KIND, key[0], key[1], problem)
        try:
            self.handle.event_recorder().eventf(obj, None, "Warning", REASON_INVALID, "Scheduling", problem)
        except Exception:
            log.exception("recording an event on %s %s/%s", KIND, *key)

    def _infos(self, quotas: _Quotas) -> ElasticQuotaInfos:
        """This cycle's quotas: bounds from the objects, used and pods from the usage."""
        infos = ElasticQuotaInfos()
        for ns, (info, _, _) in quotas.valid.items():
            used = self.usage.used.get(ns)
            infos[ns] = ElasticQuotaInfo(
                ns, info.min, info.max, used.clone() if used else Resource(), set(self.usage.pods_of(ns)), info.name
            )
        return infos

    def _flush_status(self, namespaces: Iterable[str]) -> None:
        """Queue a ``status.used`` write for each quota of ``namespaces`` whose usage differs from
        what it holds. Called under the lock; the writes themselves happen off the scheduling
        cycle (the backend's ``submit``: a thread against a real cluster, a zero-delay event in the
        simulator), one at a time, the latest value of each quota winning."""
        for ns in sorted(namespaces):
            entry = self._quotas.valid.get(ns)
            if entry is None:
                continue
            info, obj, named = entry
            key = (ns, info.name)
            want = used_resource_list(self.usage.used.get(ns) or Resource(), named)
            status = obj.get("status")
            status = status if isinstance(status, Mapping) else {}
            if self._written.get(key, status.get("used")) == want:
                continue
            self._written[key] = want
            self._pending[key] = (obj, {**status, "used": want})
        if self._pending and not self._writer_busy:
            self._writer_busy = True
            submit = getattr(self._client(), "submit", None)
            if callable(submit):
                submit(self._write_pending)
            else:
                self._write_pending()

    def _write_pending(self) -> None:
        while True:
            with self._lock:
                if not self._pending:
                    self._writer_busy = False
                    return
                key, (obj, status) = self._pending.popitem()
            try:
                self._client().update_object_status(obj, status)
            except Exception as err:
                log.warning("updating status.used of %s %s/%s: %s", KIND, key[0], key[1], err)
                with self._lock:
                    if self._written.get(key) == status.get("used"):
                        del self._written[key]  # write it again at the next change

    # -- PreFilter --------------------------------------------------------------------------------
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: Sequence[NodeInfo]
    ) -> tuple[PreFilterResult | None, Status | None]:
        with self._lock:
            quotas = self._sync_quotas()
            if quotas.valid or quotas.invalid:
                self.usage.reconcile(self.handle.snapshot_shared_lister())
            self._flush_status(self.usage.take_changed() | quotas.fresh)
            infos = self._infos(quotas)
        err = quotas.invalid.get(pod.namespace)
        if err is not None:
            raise err
        pod_req = pod_request(pod)
        state.write(ELASTIC_QUOTA_SNAPSHOT_KEY, ElasticQuotaSnapshotState(infos))
        eq = infos.get(pod.namespace)
        if eq is None:
            state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_req, pod_req, pod_req))
            return None, None

        # Nominated pods will take their room first: those of the same quota that are at least as
        # important, and (for the sum of mins) those of quotas still within their min.
        in_eq, total = Resource(), Resource()
        # Upstream (scheduler-plugins capacity_scheduling.go PreFilter) asks the nominator about
        # every node; so do we: the handle offers no shortcut (no "are there any" question).
        for ni in nodes:
            for p in self.handle.nominated_pods_for_node(ni.name):
                info = infos.get(p.namespace)
                if p.uid == pod.uid or info is None:
                    continue
                if p.namespace == pod.namespace and p.priority >= pod.priority:
                    in_eq.add(pod_request(p))
                    total.add(pod_request(p))
                elif p.namespace != pod.namespace and not info.used_over_min():
                    total.add(pod_request(p))
        in_eq.add(pod_req)
        total.add(pod_req)
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod_req, in_eq, total))

        violation = quota_violation(infos, eq, in_eq, total, self.args.min_sum_check)
        if violation == OVER_MAX:
            return None, Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because ElasticQuota {eq.namespace} "
                "is more than Max"
            )
        if violation == OVER_MIN_SUM:
            return None, Status.unschedulable(
                f"Pod {pod.namespace}/{pod.name} is rejected in PreFilter because total ElasticQuota used is more "
                "than min"
            )
        return None, None

    def pre_filter_extensions(self) -> CapacityScheduling:
        return self

    def add_pod(self, state: CycleState, pod: PodInfo, pod_to_add: PodInfo, node_info: NodeInfo) -> Status | None:
        """A pod added to a node in a dry run counts against its quota (once)."""
        try:
            infos = read_snapshot_state(state).infos
        except KeyError as err:
            return Status(Code.ERROR, str(err.args[0]))
        info = infos.get(pod_to_add.namespace)
        if info is not None:
            info.add_pod_if_not_present(pod_to_add)
        return None

    def remove_pod(self, state: CycleState, pod: PodInfo, pod_to_remove: PodInfo, node_info: NodeInfo) -> Status | None:
        try:
            infos = read_snapshot_state(state).infos
        except KeyError as err:
            return Status(Code.ERROR, str(err.args[0]))
        info = infos.get(pod_to_remove.namespace)
        if info is not None:
            info.delete_pod_if_present(pod_to_remove)
        return None

    # -- PostFilter -------------------------------------------------------------------------------
    def post_filter(
        self, state: CycleState, pod: PodInfo, filtered_node_status: Mapping[str, Status]
    ) -> tuple[PostFilterResult | None, Status]:
        clock = self.handle.clock
        preemptor = Preemptor(self.handle, state, self.args.min_sum_check, lambda: int(clock.now() * 1_000_000_000))
        try:
            return Evaluator(self.name, self.handle, preemptor).preempt(state, pod, filtered_node_status)
        finally:
            metrics = self.handle.metrics
            if metrics is not None:
                metrics.preemption_attempts.inc()

    # -- Reserve ----------------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status | None:
        with self._lock:
            if self.usage.add(pod, node_name):
                self._flush_status(self.usage.take_changed())
        return None

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        with self._lock:
            if self.usage.remove(pod.uid):
                self._flush_status(self.usage.take_changed())

    # -- EnqueueExtensions ------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """A deleted (or scaled-down) pod frees quota; a changed ElasticQuota moves the bounds."""
        return [
            ClusterEventWithHint(ClusterEvent(EventResource.POD, ActionType.DELETE | ActionType.UPDATE_POD_SCALE_DOWN)),
            ClusterEventWithHint(ELASTIC_QUOTA_EVENT, quota_hint),
        ]


def quota_hint(pod: JSONObj, old: object, new: object) -> QueueingHint:
    """Queue on a quota added, deleted or with a new spec; skip status-only updates (ours)."""
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return QueueingHint.QUEUE
    return QueueingHint.QUEUE if old.get("spec") != new.get("spec") else QueueingHint.QUEUE_SKIP
