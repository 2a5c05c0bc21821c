"""``DRAGpuScoreArgs``: which devices are GPUs, which requests ask for them, and the GPU policy."""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.config.errors import FieldError, index_path, invalid, required
from kubesched.plugins.gpu import TypicalPods
from kubesched.plugins.gpushare import GpuShareArgs, TypicalPodArgs

__all__ = ["DRAGpuScoreArgs"]


@dataclass
class DRAGpuScoreArgs:
    """``pluginConfig`` args of DRAGpuScore.

    ``drivers``: the DRA drivers whose devices are GPUs (their ResourceSlices' ``spec.driver``).
    ``deviceClassNames``: the DeviceClasses whose requests ask for those GPUs. ``modelAttribute``:
    the device attribute naming the GPU model (qualified ``domain/id``, or an id in the driver's
    domain). ``scoringPolicy``, ``typicalPods``, ``typicalPodsCoverage`` and ``randomSeed`` as
    GpuShare's (FGD needs the workload's pod types).
    """

    drivers: list[str] = field(default_factory=list)
    device_class_names: list[str] = field(default_factory=list)
    model_attribute: str = "productName"
    scoring_policy: str = "FGD"
    typical_pods: list[TypicalPodArgs] = field(default_factory=list)
    typical_pods_coverage: int = 95
    random_seed: int = 0

    def policy_args(self) -> GpuShareArgs:
        return GpuShareArgs(
            scoring_policy=self.scoring_policy,
            typical_pods=self.typical_pods,
            typical_pods_coverage=self.typical_pods_coverage,
            random_seed=self.random_seed,
        )

    def validate(self) -> list[FieldError]:
        errs: list[FieldError] = []
        if not self.drivers:
            errs.append(required("drivers", "the DRA drivers whose devices are GPUs"))
        if not self.device_class_names:
            errs.append(required("deviceClassNames", "the DeviceClasses whose requests ask for GPUs"))
        for path, values in (("drivers", self.drivers), ("deviceClassNames", self.device_class_names)):
            for i, v in enumerate(values):
                if not v:
                    errs.append(invalid(index_path(path, i), v, "must not be empty"))
        if not self.model_attribute:
            errs.append(invalid("modelAttribute", self.model_attribute, "must not be empty"))
        errs.extend(self.policy_args().validate())
        return errs

    def typical(self) -> TypicalPods | None:
        return self.policy_args().typical() if self.typical_pods else None
