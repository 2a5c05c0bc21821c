"""Which kube-scheduler release kubesched behaves as, and what each release changed.

kubesched follows one kube-scheduler release at a time, chosen as kube-scheduler chooses an older
release's behaviour: ``--emulated-version`` (the compatibility-version flag of the control-plane
components, KEP-4330). :data:`CHANGES` is the one table of every behaviour difference between the
supported releases; code that differs asks ``release.has(CHANGE)``, and the tests pin both sides
of every entry.

One deviation, on purpose: upstream's ``--emulated-version`` changes only feature-gate defaults
(component-base's versioned gate specs); a v1.37.2 binary emulating 1.35 keeps v1.37's code paths
(BalancedAllocation's new score, its plugin order, its messages). Users who select 1.35 want the
decisions of the kube-scheduler v1.35 their cluster runs, so kubesched's release selects that
release's code paths as well as its gate defaults (docs/releases.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "CHANGES",
    "DEFAULT_RELEASE",
    "RELEASES",
    "Change",
    "Release",
    "ReleaseError",
    "parse_emulated_version",
    "unported",
]


@dataclass(frozen=True, order=True)
class Release:
    """A kube-scheduler minor release; ``binary`` is the patch release kubesched is checked
    against (the one scripts/controlplane.sh builds)."""

    major: int
    minor: int
    binary: str = ""

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def has(self, change: Change) -> bool:
        """Whether this release behaves as ``change`` describes."""
        return (self.major, self.minor) >= (change.since.major, change.since.minor)


V1_35 = Release(1, 35, "v1.35.4")
V1_36 = Release(1, 36, "v1.36.3")
V1_37 = Release(1, 37, "v1.37.2")
#: Oldest first. Upstream supports the three newest minor releases.
RELEASES: tuple[Release, ...] = (V1_35, V1_36, V1_37)
#: What kubesched does without ``--emulated-version``: the release whose changes are all ported
#: (docs/status.md, issue 19, says which of :data:`CHANGES` are still to do).
DEFAULT_RELEASE = V1_37


@dataclass(frozen=True)
class Change:
    """One behaviour difference: what ``since`` and later releases do that the one before did not."""

    name: str
    since: Release
    #: The upstream files that define it, and the pull request where known.
    upstream: str
    what: str
    #: Where kubesched implements it (module paths under src/kubesched), or why nothing has to
    #: change ("n/a: ..."); empty while it is not ported. A release whose changes are not all
    #: ported cannot be the default (tests/config/test_releases.py).
    where: str = ""

    @property
    def ported(self) -> bool:
        return bool(self.where)


# -- v1.36 ------------------------------------------------------------------------------------
BALANCED_ALLOCATION_WITH_AND_WITHOUT_POD = Change(
    "BalancedAllocationWithAndWithoutPod",
    V1_36,
    "pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go (kubernetes#135573)",
    "the score is 50 + (50 + score with the pod - score without it) / 2: a node is scored by how much "
    "the pod improves its balance, not by the balance it ends with",
    where="plugins/noderesources/balanced_allocation.py (score, score_batch), "
    "plugins/noderesources/resource_allocation.py (node_allocatable_request, dense_node_columns)",
)
IMAGE_LOCALITY_IMAGE_VOLUMES = Change(
    "ImageLocalityImageVolumes",
    V1_36,
    "pkg/scheduler/framework/plugins/imagelocality/image_locality.go (kubernetes#130231)",
    "images of image volumes count towards the score, as the containers' images do",
    where="plugins/imagelocality/image_locality.py (pod_images, ImageLocality)",
)
NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE = Change(
    "NodeDeclaredFeaturesInDefaultProfile",
    V1_36,
    "pkg/scheduler/apis/config/v1/default_plugins.go, framework/plugins/nodedeclaredfeatures "
    "(gate NodeDeclaredFeatures on from 1.36)",
    "the default profile ends with NodeDeclaredFeatures: a node must declare the features the pod "
    "needs ('node(s) didn't match Pod's required features'); pods needing none skip it",
    where="config/defaults.py (default_plugins), plugins/nodedeclaredfeatures/ (PreFilter, Filter, the "
    "release's feature registry), scheduler/eventhandlers.py (UpdateNodeDeclaredFeature)",
)
PREEMPTED_WAITING_PODS_BACK_OFF = Change(
    "PreemptedWaitingPodsBackOff",
    V1_36,
    "pkg/scheduler/framework/preemption/executor.go, framework/runtime/waiting_pods_map.go (kubernetes#135719)",
    "a victim waiting at Permit is preempted in memory with an Error, so it goes to backoffQ, not to "
    "the unschedulable pods; its event ends with ' (in kube-scheduler memory).'",
    where="framework/waiting_pods.py (WaitingPod.preempt), framework/preemption.py (_preempt_pod)",
)
PREEMPTED_PRE_BIND_PODS_BACK_OFF = Change(
    "PreemptedPreBindPodsBackOff",
    V1_36,
    "pkg/scheduler/framework/runtime/pods_in_prebind_map.go, schedule_one.go bindingCycle (kubernetes#135502)",
    "a victim still in PreBind has its binding cycle cancelled and goes to backoffQ instead of being "
    "deleted",
    where="framework/pods_in_pre_bind.py, scheduler/binding_cycle.py, framework/preemption.py (_preempt_pod)",
)
FIT_ARGS_SCORING_STRATEGY_CHECKS = Change(
    "FitArgsScoringStrategyChecks",
    V1_36,
    "pkg/scheduler/apis/config/validation/validation_pluginargs.go validateFitArgs (kubernetes#132120)",
    "NodeResourcesFitArgs: requestedToCapacityRatio is required with type RequestedToCapacityRatio "
    "and forbidden with the other types; shape errors are reported under it",
    where="config/plugin_args.py (NodeResourcesFitArgs.validate)",
)
HINTS_COUNT_NOMINATED_PODS = Change(
    "HintsCountNominatedPods",
    V1_36,
    "framework/plugins/podtopologyspread/plugin.go, interpodaffinity/plugin.go (kubernetes#135392)",
    "PodTopologySpread's and InterPodAffinity's queueing hints count a pod with a nominated node like "
    "an assigned one",
    where="plugins/podtopologyspread/plugin.py (_involved), plugins/interpodaffinity/plugin.py (_placed)",
)
INTER_POD_AFFINITY_HINT_TARGET_AND_REVERSE = Change(
    "InterPodAffinityHintTargetAndReverse",
    V1_36,
    "framework/plugins/interpodaffinity/plugin.go isSchedulableAfterPodChange (kubernetes#135325, #135394)",
    "InterPodAffinity requeues a pod when its own labels change, and when a deleted pod's required "
    "anti-affinity matched it",
    where="plugins/interpodaffinity/plugin.py (is_schedulable_after_pod_change, "
    "is_schedulable_after_assigned_pod_change)",
)
FAILURE_HANDLER_RECREATED_POD = Change(
    "FailureHandlerRecreatedPod",
    V1_36,
    "pkg/scheduler/schedule_one.go handleSchedulingFailure",
    "a pod recreated under the same name while it was scheduled (another UID) is neither requeued "
    "nor given an event or a condition",
    where="scheduler/failure.py",
)
FAILURE_HANDLER_REPORTS_CACHED_POD = Change(
    "FailureHandlerReportsCachedPod",
    V1_36,
    "pkg/scheduler/schedule_one.go handleSchedulingFailure (pod = podInfo.Pod after the refresh)",
    "the FailedScheduling event and the PodScheduled condition are about the informer's newest copy "
    "of the pod (its generation is the condition's observedGeneration), not the copy the cycle "
    "scheduled",
    where="scheduler/failure.py",
)
POD_SCHEDULED_AFTER_FLUSH_METRIC = Change(
    "PodScheduledAfterFlushMetric",
    V1_36,
    "pkg/scheduler/metrics/metrics.go, schedule_one.go bindingCycle (kubernetes#135126)",
    "scheduler_pod_scheduled_after_flush_total counts pods bound after the 5-minute flush of the "
    "unschedulable pods",
    where="metrics.py, backend/queue.py (was_flushed_from_unschedulable), scheduler/binding_cycle.py",
)
DRA_FILTER_TIMEOUT_IS_ERROR = Change(
    "DRAFilterTimeoutIsError",
    V1_36,
    "framework/plugins/dynamicresources/dynamicresources.go Filter (kubernetes#137607)",
    "a DynamicResources Filter timeout is an Error of the cycle, not an Unschedulable node",
    where="plugins/dynamicresources/plugin.py (DynamicResources.filter)",
)
DRA_POD_IS_NOT_OWNER_CAPITALISED = Change(
    "DRAPodIsNotOwnerCapitalised",
    V1_36,
    "staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go IsForPod",
    "a generated ResourceClaim owned by another pod reads '... was not created for Pod ns/name (Pod is "
    "not owner)' (v1.35: 'pod', lower case)",
    where="plugins/dynamicresources/claims.py (_not_owner)",
)
PORTWORX_MIGRATION_WITHOUT_ANNOTATION = Change(
    "PortworxMigrationWithoutAnnotation",
    V1_36,
    "framework/plugins/nodevolumelimits/utils.go isCSIMigrationOn (gate CSIMigrationPortworx removed)",
    "NodeVolumeLimits counts Portworx volumes as migrated to CSI on every node with a CSINode, not only "
    "on nodes whose storage.alpha.kubernetes.io/migrated-plugins annotation names the plugin",
    where="plugins/nodevolumelimits/csi.py (_csi_migration_on)",
)
QUEUE_SIGNS_PODS = Change(
    "QueueSignsPods",
    V1_36,
    "pkg/scheduler/backend/queue/scheduling_queue.go (signPod in newQueuedPodInfo and Update), "
    "pkg/scheduler/framework/runtime/framework.go (SignPod)",
    "OpportunisticBatching signs a pod when it enters the scheduling queue and when a queued pod is "
    "updated, not in every scheduling cycle (v1.35 signs in GetNodeHint, each attempt); SignPod "
    "observes scheduler_framework_extension_point_duration_seconds{extension_point=\"Sign\"} each "
    "time (v1.35: in sampled cycles only)",
    where="backend/queue.py (add, update: QueueProfile.sign_queued_pod), framework/runtime.py "
    "(sign_queued_pod, cycle_signature)",
)

# -- v1.37 ------------------------------------------------------------------------------------
NODE_NAME_BEFORE_NODE_UNSCHEDULABLE = Change(
    "NodeNameBeforeNodeUnschedulable",
    V1_37,
    "pkg/scheduler/apis/config/v1/default_plugins.go (getDefaultPlugins)",
    "the default profile runs NodeName before NodeUnschedulable",
    where="config/defaults.py (default_plugins)",
)
NODE_NAME_PRE_FILTER = Change(
    "NodeNamePreFilter",
    V1_37,
    "pkg/scheduler/framework/plugins/nodename/node_name.go (PreFilter)",
    "NodeName's PreFilter narrows a pod with spec.nodeName to that node; the others read "
    "'node(s) didn't satisfy plugin(s) [NodeName]'",
    where="plugins/nodename/node_name.py (NodeNameWithPreFilter, built by NodeName from 1.37)",
)
IMAGE_LOCALITY_IMAGE_VOLUME_THRESHOLD = Change(
    "ImageLocalityImageVolumeThreshold",
    V1_37,
    "pkg/scheduler/framework/plugins/imagelocality/image_locality.go (kubernetes#138951)",
    "each image volume raises the score's threshold as a container does, so image volumes cannot "
    "outscore the same images used by containers",
    where="plugins/imagelocality/image_locality.py (pod_images: volumes_in_count)",
)
NO_DRA_DEALLOCATE_REASON = Change(
    "NoDRADeallocateReason",
    V1_37,
    "pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go (PostFilter)",
    "DynamicResources' PostFilter rejects without a reason: FailedScheduling no longer reads "
    "'no new claims to deallocate, '",
    where="plugins/dynamicresources/plugin.py (DynamicResources.post_filter)",
)
SPLIT_POD_EVENTS = Change(
    "SplitPodEvents",
    V1_37,
    "staging/src/k8s.io/kube-scheduler/framework/types.go, pkg/scheduler/framework/events.go (kubernetes#135905)",
    "pod events are AssignedPod, UnscheduledPod (was UnschedulablePod) and TargetPod (the pod's own "
    "updates); the event labels of the metrics change with them",
    where="framework/events.py (pod_scheduling_properties_change, event_label), scheduler/eventhandlers.py, "
    "backend/queue.py, plugins/interpodaffinity/plugin.py, plugins/podtopologyspread/plugin.py, "
    "plugins/volumerestrictions/volume_restrictions.py, plugins/nodevolumelimits/csi.py (events_to_register)",
)
NODE_DECLARED_FEATURE_VOLUME_BIND_MOUNT_OPTIONS = Change(
    "NodeDeclaredFeatureVolumeBindMountOptions",
    V1_37,
    "k8s.io/component-helpers nodedeclaredfeatures/features/registry.go, features/volumebindmountoptions (v0.37)",
    "a pod whose volume mounts set bindMountOptions needs a node declaring VolumeBindMountOptions",
    where="plugins/nodedeclaredfeatures/features.py (the 1.37 registry)",
)
QUEUED_ENTITIES_METRICS = Change(
    "QueuedEntitiesMetrics",
    V1_37,
    "pkg/scheduler/metrics/metrics.go (QueuedEntities, SchedulerQueueIncomingEntities)",
    "scheduler_queued_entities{queue,type} and scheduler_queue_incoming_entities_total{queue,event,type} "
    "count queued pods and pod groups next to scheduler_pending_pods and scheduler_queue_incoming_pods_total",
    where="metrics.py (queued_entities, queue_incoming_entities: type 'pod')",
)
POD_SCALE_UP_EVENT = Change(
    "PodScaleUpEvent",
    V1_37,
    "pkg/scheduler/framework/events.go (extractPodScaleUp), noderesources/fit.go",
    "a pod update that raises a request is also an UpdatePodScaleUp event",
    where="n/a: only NodeResourcesFit registers it, under the alpha InPlacePodVerticalScalingSchedulerPreemption "
    "gate (off), so no default queueing decision or metric sees it",
)
INTER_POD_AFFINITY_HINT_ANY_TERM = Change(
    "InterPodAffinityHintAnyTerm",
    V1_37,
    "framework/plugins/interpodaffinity/plugin.go (kubernetes#139161)",
    "InterPodAffinity's hint requeues when a changed or deleted pod matches any of the terms, not all",
    where="plugins/interpodaffinity/plugin.py (_matches_terms)",
)
BIND_RETRIES = Change(
    "BindRetries",
    V1_37,
    "pkg/scheduler/util/utils.go BindPod, framework/plugins/defaultbinder (kubernetes#138855)",
    "the Binding request is retried (4 tries, 10 ms x5 backoff) on internal, unavailable and "
    "connection-refused errors",
    where="plugins/defaultbinder/default_binder.py, kube/cluster.py (retriable)",
)
NOMINATOR_EMPTY_OVERRIDE_CLEARS = Change(
    "NominatorEmptyOverrideClears",
    V1_37,
    "pkg/scheduler/backend/queue/nominator.go",
    "an override with an empty node name clears the pod's nomination instead of nominating it to ''",
    where="n/a: v1.35.4 files an empty override under node '' but nothing asks the nominator about node ''; "
    "kubesched's add_nominated_pod clears it (tests/backend/test_nominator_empty_override.py)",
)
VOLUME_LIMIT_SCALING = Change(
    "VolumeLimitScaling",
    V1_37,
    "framework/plugins/nodevolumelimits/csi.go checkCSIDriverOnNode (gate VolumeLimitScaling beta, on from 1.37)",
    "NodeVolumeLimits rejects a node without the pod's CSI driver when its CSIDriver sets "
    "preventPodSchedulingIfMissing: '<driver> CSI driver is not installed on the node'",
    where="plugins/nodevolumelimits/csi.py (filter, _driver_installed)",
)
NOMINATE_GATED_PODS_ON_ADD = Change(
    "NominateGatedPodsOnAdd",
    V1_37,
    "pkg/scheduler/backend/queue/scheduling_queue.go (addPod)",
    "a new pod's status.nominatedNodeName is recorded in the nominator even when PreEnqueue gates it "
    "(before: only when the pod enters activeQ)",
    where="backend/queue.py (SchedulingQueue.add)",
)
STORAGE_CAPACITY_SCORING = Change(
    "StorageCapacityScoring",
    V1_37,
    "framework/plugins/volumebinding/volume_binding.go New, apis/config/v1/defaults.go "
    "SetDefaults_VolumeBindingArgs (gate StorageCapacityScoring beta, on from 1.37)",
    "VolumeBinding scores nodes by the free capacity of dynamically provisioned volumes; its args default "
    "shape to [{0, 10}, {100, 0}] and accept shape (refused before)",
    where="plugins/volumebinding/volume_binding.py (pre_score, score), config/plugin_args.py VolumeBindingArgs",
)
BATCH_RESCORES_HINTED_NODE = Change(
    "BatchRescoresHintedNode",
    V1_37,
    "pkg/scheduler/framework/runtime/batch.go (rescoreHintedNode)",
    "OpportunisticBatching re-scores the previous pod's node when it still fits instead of flushing "
    "(node_not_full); a pod with a nominated node flushes the batch (pod_nominated); "
    "scheduler_batch_rescore_attempts_total and scheduler_batch_rescore_duration_seconds",
    where="framework/batch.py (OpportunisticBatch._refresh, _rescore_node), framework/runtime.py "
    "(run_raw_score_plugins, normalize_scores), metrics.py",
)

#: Every behaviour difference between the supported releases, oldest first.
CHANGES: tuple[Change, ...] = (
    BALANCED_ALLOCATION_WITH_AND_WITHOUT_POD,
    IMAGE_LOCALITY_IMAGE_VOLUMES,
    NODE_DECLARED_FEATURES_IN_DEFAULT_PROFILE,
    PREEMPTED_WAITING_PODS_BACK_OFF,
    PREEMPTED_PRE_BIND_PODS_BACK_OFF,
    FIT_ARGS_SCORING_STRATEGY_CHECKS,
    HINTS_COUNT_NOMINATED_PODS,
    INTER_POD_AFFINITY_HINT_TARGET_AND_REVERSE,
    FAILURE_HANDLER_RECREATED_POD,
    FAILURE_HANDLER_REPORTS_CACHED_POD,
    POD_SCHEDULED_AFTER_FLUSH_METRIC,
    DRA_FILTER_TIMEOUT_IS_ERROR,
    DRA_POD_IS_NOT_OWNER_CAPITALISED,
    PORTWORX_MIGRATION_WITHOUT_ANNOTATION,
    QUEUE_SIGNS_PODS,
    NODE_NAME_BEFORE_NODE_UNSCHEDULABLE,
    NODE_NAME_PRE_FILTER,
    IMAGE_LOCALITY_IMAGE_VOLUME_THRESHOLD,
    NO_DRA_DEALLOCATE_REASON,
    NODE_DECLARED_FEATURE_VOLUME_BIND_MOUNT_OPTIONS,
    SPLIT_POD_EVENTS,
    QUEUED_ENTITIES_METRICS,
    POD_SCALE_UP_EVENT,
    INTER_POD_AFFINITY_HINT_ANY_TERM,
    BIND_RETRIES,
    NOMINATOR_EMPTY_OVERRIDE_CLEARS,
    VOLUME_LIMIT_SCALING,
    NOMINATE_GATED_PODS_ON_ADD,
    STORAGE_CAPACITY_SCORING,
    BATCH_RESCORES_HINTED_NODE,
)


def unported(release: Release) -> list[Change]:
    """The changes up to ``release`` that kubesched does not implement yet."""
    return [c for c in CHANGES if release.has(c) and not c.ported]


class ReleaseError(ValueError):
    """An ``--emulated-version`` kubesched cannot behave as."""


_VERSION = re.compile(r"(?:kube=)?v?(\d+)\.(\d+)")


def parse_emulated_version(value: str) -> Release:
    """``--emulated-version``'s value: ``1.35``, ``kube=1.35`` (component-base's form) or
    ``v1.35``. Upstream allows major.minor only; kubesched behaves as the releases of
    :data:`RELEASES`, and refuses the others naming them."""
    text = value.strip()
    m = _VERSION.fullmatch(text)
    if m is None:
        raise ReleaseError(
            f"--emulated-version: invalid value {value!r}: the version format is major.minor, for example "
            f"'--emulated-version=kube={RELEASES[-1]}'"
        )
    wanted = (int(m.group(1)), int(m.group(2)))
    for release in RELEASES:
        if (release.major, release.minor) == wanted:
            return release
    supported = f"{RELEASES[0]}..{RELEASES[-1]}"
    raise ReleaseError(
        f"--emulated-version: kubesched behaves as kube-scheduler {supported} (emulation version "
        f"{wanted[0]}.{wanted[1]} is not between [{RELEASES[0]}, {RELEASES[-1]}])"
    )
