"""GPU engine: per-GPU milli accounting, the FGD paper's scoring policies and fragmentation.

Framework-independent building blocks for a GPU-sharing plugin (Filter/Score/Reserve/Unreserve) and
for the standalone trace replay in :mod:`kubesched.sim.gpu_replay`.
"""

from .cluster import ClusterGpuState
from .factory import ONLINE_POLICIES, POLICY_NAMES, make_policy
from .fit import gpu_fit, resources_fit
from .frag import ClusterFragmentation, TypicalPod, TypicalPods
from .policies import (
    BestFit,
    DotProd,
    Fgd,
    GpuClustering,
    GpuPacking,
    Policy,
    RandomPolicy,
    best_fit_gpus,
    exclusive_gpus,
    random_fit_gpus,
)
from .types import MILLI, NodeGpuState, NodeSpec, PodShape, accessible, gpu_class

__all__ = [
    "MILLI",
    "ONLINE_POLICIES",
    "POLICY_NAMES",
    "BestFit",
    "ClusterFragmentation",
    "ClusterGpuState",
    "DotProd",
    "Fgd",
    "GpuClustering",
    "GpuPacking",
    "NodeGpuState",
    "NodeSpec",
    "PodShape",
    "Policy",
    "RandomPolicy",
    "TypicalPod",
    "TypicalPods",
    "accessible",
    "best_fit_gpus",
    "exclusive_gpus",
    "gpu_class",
    "gpu_fit",
    "make_policy",
    "random_fit_gpus",
    "resources_fit",
]
