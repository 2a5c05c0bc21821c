"""Choose a GPU scoring policy by name: ``make_policy`` and ``POLICY_NAMES``.

Kept apart from :mod:`.policies` because FGDPlus (:mod:`.fgdplus`), FGDOnline (:mod:`.fgdonline`) and
RatioDelta (:mod:`.ratiodelta`) subclass that module's FGD: a factory that builds them sits above, so
nothing imports in a circle.
"""

from __future__ import annotations

from kubesched.gorand import GoRand

from .fgdonline import FgdOnline
from .fgdplus import FgdPlus
from .frag import TypicalPods
from .policies import BestFit, DotProd, Fgd, GpuClustering, GpuPacking, Policy, RandomPolicy
from .ratiodelta import RatioDelta

__all__ = ["ONLINE_POLICIES", "POLICY_NAMES", "make_policy"]

POLICY_NAMES: tuple[str, ...] = ("Random", "DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD", "FGDPlus",
                                  "FGDOnline", "RatioDelta")
"""Every policy name :func:`make_policy` knows, in the order reports list them."""

ONLINE_POLICIES: tuple[str, ...] = ("FGDOnline", "RatioDelta")
"""The policies that learn the workload mix from the pods they see: never handed typical pods."""


def make_policy(
    name: str, *, typical: TypicalPods | None = None, rng: GoRand | None = None, coverage: int = 95
) -> Policy:
    """The policy called ``name`` (case-insensitive). FGD and FGDPlus need ``typical``, Random ``rng``;
    FGDOnline and RatioDelta are never handed ``typical`` (they learn the mix) and keep ``coverage`` % of
    the pods seen."""
    key = name.lower()
    if key == "fgdonline":
        return FgdOnline(coverage)
    if key == "ratiodelta":
        return RatioDelta(coverage)
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
