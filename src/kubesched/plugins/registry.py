"""The in-tree registry: every plugin kubesched ships, by upstream name
(upstream ``pkg/scheduler/framework/plugins/registry.go``)."""

from __future__ import annotations

from kubesched.framework.registry import Registry, load_entry_points


def in_tree_registry() -> Registry:
    from kubesched.plugins import names
    from kubesched.plugins.capacityscheduling import CapacityScheduling
    from kubesched.plugins.coscheduling import Coscheduling
    from kubesched.plugins.defaultbinder import DefaultBinder
    from kubesched.plugins.defaultpreemption import DefaultPreemption
    from kubesched.plugins.dragpuscore import DRAGpuScore
    from kubesched.plugins.dynamicresources import DynamicResources
    from kubesched.plugins.gpushare import GpuShare
    from kubesched.plugins.imagelocality import ImageLocality
    from kubesched.plugins.interpodaffinity import InterPodAffinity
    from kubesched.plugins.nodeaffinity import NodeAffinity
    from kubesched.plugins.nodedeclaredfeatures import NodeDeclaredFeatures
    from kubesched.plugins.nodename import NodeName
    from kubesched.plugins.nodeports import NodePorts
    from kubesched.plugins.noderesources import BalancedAllocation, Fit
    from kubesched.plugins.nodeunschedulable import NodeUnschedulable
    from kubesched.plugins.nodevolumelimits import NodeVolumeLimits
    from kubesched.plugins.podtopologyspread import PodTopologySpread
    from kubesched.plugins.queuesort import PrioritySort
    from kubesched.plugins.schedulinggates import SchedulingGates
    from kubesched.plugins.tainttoleration import TaintToleration
    from kubesched.plugins.tenancy import TenantIsolation
    from kubesched.plugins.tenantfairsort import TenantFairSort
    from kubesched.plugins.volumebinding import VolumeBinding
    from kubesched.plugins.volumerestrictions import VolumeRestrictions
    from kubesched.plugins.volumezone import VolumeZone
    from kubesched.plugins.windowtransfer import WindowTransfer

    r = Registry()
    r.register(names.PRIORITY_SORT, PrioritySort)
    r.register(names.DEFAULT_BINDER, DefaultBinder)
    r.register(names.DEFAULT_PREEMPTION, DefaultPreemption)
    r.register(names.NODE_RESOURCES_FIT, Fit)
    r.register(names.SCHEDULING_GATES, SchedulingGates)
    r.register(names.TAINT_TOLERATION, TaintToleration)
    r.register(names.NODE_AFFINITY, NodeAffinity)
    r.register(names.NODE_NAME, NodeName)
    r.register(names.NODE_PORTS, NodePorts)
    r.register(names.NODE_UNSCHEDULABLE, NodeUnschedulable)
    r.register(names.INTER_POD_AFFINITY, InterPodAffinity)
    r.register(names.POD_TOPOLOGY_SPREAD, PodTopologySpread)
    r.register(names.NODE_RESOURCES_BALANCED_ALLOCATION, BalancedAllocation)
    r.register(names.IMAGE_LOCALITY, ImageLocality)
    r.register(names.VOLUME_BINDING, VolumeBinding)
    r.register(names.VOLUME_RESTRICTIONS, VolumeRestrictions)
    r.register(names.VOLUME_ZONE, VolumeZone)
    r.register(names.NODE_VOLUME_LIMITS, NodeVolumeLimits)
    r.register(names.DYNAMIC_RESOURCES, DynamicResources)
    r.register(names.NODE_DECLARED_FEATURES, NodeDeclaredFeatures)
    r.register(names.WINDOW_TRANSFER, WindowTransfer)
    r.register(names.TENANT_ISOLATION, TenantIsolation)
    r.register(names.CAPACITY_SCHEDULING, CapacityScheduling)
    r.register(names.GPU_SHARE, GpuShare)
    r.register(names.DRA_GPU_SCORE, DRAGpuScore)
    r.register(names.COSCHEDULING, Coscheduling)
    r.register(names.TENANT_FAIR_SORT, TenantFairSort)
    return r


def default_registry(*, entry_points: bool = True) -> Registry:
    """In-tree plugins plus, unless disabled, installed out-of-tree ones (entry-point group
    ``kubesched.plugins``). It lives here, above the framework, so the framework never imports
    the plugins built on it."""
    reg = in_tree_registry()
    if entry_points:
        load_entry_points(reg)
    return reg
