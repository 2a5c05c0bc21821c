"""Choose a GPU scoring policy by name: ``make_policy`` and ``POLICY_NAMES``.

Kept apart from :mod:`.policies` because FGDPlus (:mod:`.fgdplus`) and FGDOnline (:mod:`.fgdonline`)
subclass that module's FGD: a factory that builds them sits above, so nothing imports in a circle.
"""

from __future__ import annotations

from kubesched.gorand import GoRand

from .fgdonline import FgdOnline
from .fgdplus import FgdPlus
from .frag import TypicalPods
from .policies import BestFit, DotProd, Fgd, GpuClustering, GpuPacking, Policy, RandomPolicy

__all__ = ["POLICY_NAMES", "make_policy"]

POLICY_NAMES: tuple[str, ...] = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", "FGDPlus",
                                  "FGDOnline")


def make_policy(
    name: str, *, typical: TypicalPods | None = None, rng: GoRand | None = None, coverage: int = 95
) -> Policy:
    """The policy called ``name`` (case-insensitive). FGD and FGDPlus need ``typical``, Random ``rng``;
    FGDOnline is never handed ``typical`` (it learns the mix) and keeps ``coverage`` % of the pods seen."""
    key = name.lower()
    if key == "fgdonline":
        return FgdOnline(coverage)
    if key == "random":
        if rng is None:
            raise ValueError("the Random policy needs a random stream")
        return RandomPolicy(rng)
    if key in ("fgd", "fgdplus"):
        if typical is None:
            raise ValueError(f"the {name} policy needs the typical pods of the workload")
        return FgdPlus(typical) if key == "fgdplus" else Fgd(typical)
    simple: dict[str, type[Policy]] = {
        "dotprod": DotProd, "gpuclustering": GpuClustering, "gpupacking": GpuPacking, "bestfit": BestFit,
    }
    if key not in simple:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(POLICY_NAMES)}")
    return simple[key]()
