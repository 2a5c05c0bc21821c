"""``GpuShareArgs``: the scoring policy, the topology policy and, for FGD, the workload's pod types."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.config.errors import FieldError, index_path, invalid, not_supported, required
from kubesched.plugins.gpu import MILLI, POLICY_NAMES, PodShape, TypicalPods

__all__ = [
    "DEFAULT_SCORING_POLICY",
    "TOPOLOGY_NONE",
    "TOPOLOGY_POLICIES",
    "TOPOLOGY_PREFER_PACKED",
    "TOPOLOGY_REQUIRE_SINGLE_GROUP",
    "GpuShareArgs",
    "TypicalPodArgs",
]

TOPOLOGY_NONE = "none"
TOPOLOGY_PREFER_PACKED = "prefer-packed"
TOPOLOGY_REQUIRE_SINGLE_GROUP = "require-single-group"
TOPOLOGY_POLICIES = (TOPOLOGY_NONE, TOPOLOGY_PREFER_PACKED, TOPOLOGY_REQUIRE_SINGLE_GROUP)
DEFAULT_SCORING_POLICY = "BestFit"


@dataclass
class TypicalPodArgs:
    """One pod type of the workload and how many pods of it there are (FGD's popularity)."""

    milli_cpu: int = field(metadata={"key": "milliCPU"})
    count: int
    gpu_milli: int = 0
    gpu_count: int = 0
    gpu_models: list[str] = field(default_factory=list)

    def shape(self) -> PodShape:
        return PodShape(cpu=self.milli_cpu, gpu_milli=self.gpu_milli, gpu_count=self.gpu_count,
                        models=tuple(self.gpu_models))


@dataclass
class GpuShareArgs:
    """``pluginConfig`` args of GpuShare.

    ``scoringPolicy``: Random, DotProd, GpuClustering, GpuPacking, BestFit (default), FGD, FGDPlus,
    FGDOnline (FGDPlus learning the mix from the pods it sees: ``typicalPods`` are ignored) or
    RatioDelta (FGDOnline minus the CPU/GPU imbalance a GPU pod adds; ``typicalPods`` ignored too).
    ``topologyPolicy``: none, prefer-packed (default) or require-single-group.
    ``typicalPods``: FGD's workload (required for FGD); ``typicalPodsCoverage`` the percentage of
    pods the most popular types must cover (95, as the paper). ``randomSeed`` seeds Random.
    """

    scoring_policy: str = DEFAULT_SCORING_POLICY
    topology_policy: str = TOPOLOGY_PREFER_PACKED
    typical_pods: list[TypicalPodArgs] = field(default_factory=list)
    typical_pods_coverage: int = 95
    random_seed: int = 0

    def validate(self) -> list[FieldError]:
        errs: list[FieldError] = []
        if self.scoring_policy not in POLICY_NAMES:
            errs.append(not_supported("scoringPolicy", self.scoring_policy, POLICY_NAMES))
        if self.topology_policy not in TOPOLOGY_POLICIES:
            errs.append(not_supported("topologyPolicy", self.topology_policy, TOPOLOGY_POLICIES))
        if not 1 <= self.typical_pods_coverage <= 100:
            errs.append(invalid("typicalPodsCoverage", self.typical_pods_coverage, "not in valid range [1, 100]"))
        if self.scoring_policy in ("FGD", "FGDPlus") and not self.typical_pods:
            errs.append(required("typicalPods", f"the {self.scoring_policy} policy needs the workload's pod types"))
        for i, t in enumerate(self.typical_pods):
            path = index_path("typicalPods", i)
            if t.milli_cpu < 0:
                errs.append(invalid(f"{path}.milliCPU", t.milli_cpu, "must not be negative"))
            if t.count < 1:
                errs.append(invalid(f"{path}.count", t.count, "must be at least 1"))
            if not 0 <= t.gpu_milli <= MILLI:
                errs.append(invalid(f"{path}.gpuMilli", t.gpu_milli, f"not in valid range [0, {MILLI}]"))
            if t.gpu_count < 0 or (0 < t.gpu_milli < MILLI and t.gpu_count > 1):
                errs.append(invalid(f"{path}.gpuCount", t.gpu_count, "must be >= 0, and 1 for a share of a GPU"))
            elif (t.gpu_milli == 0) != (t.gpu_count == 0):
                errs.append(invalid(f"{path}.gpuCount", t.gpu_count, "must be 0 exactly when gpuMilli is 0"))
        return errs

    def typical(self) -> TypicalPods:
        """FGD's typical pods from the configured histogram (types repeated are added up)."""
        counts: dict[tuple[int, int, int, tuple[str, ...]], int] = {}
        for t in self.typical_pods:
            key = t.shape().key
            counts[key] = counts.get(key, 0) + t.count
        return TypicalPods.from_counts(counts, self.typical_pods_coverage)
