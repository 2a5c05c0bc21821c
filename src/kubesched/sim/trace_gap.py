"""``kubesched trace alibaba-gpu --bound``: how much of the gap to the upper bound each policy closes.

At each arrived level k, with B the upper bound (``trace bound``), R the baseline's allocation
(Random unless ``--baseline`` names another policy) and P the policy's, all in %:

- ``gap_to_bound`` = B − P: the points the policy leaves between itself and the bound;
- ``gap_closed`` = 100 · (P − R) / (B − R): the share (%) of the baseline's gap to the bound that
  the policy closes. 0 % is the baseline, 100 % the bound; None where the baseline already reaches the
  bound (nothing to close) or a value is missing.

With several seeds the policy's object uses the means (of the policy, the baseline and the bound),
and each run in ``runs`` its own seed's. The inputs are the rounded numbers the JSON shows, so every
figure can be checked by hand; the results are rounded to 2 decimals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DEFAULT_BASELINE", "gap_closed", "with_gaps"]

DEFAULT_BASELINE = "Random"


def gap_closed(policy: float | None, baseline: float | None, bound: float | None) -> float | None:
    """100 · (policy − baseline) / (bound − baseline), %; None without a gap to close."""
    if policy is None or baseline is None or bound is None or bound - baseline <= 1e-9:
        return None
    return round(100 * (policy - baseline) / (bound - baseline), 2)


def _gaps(obj: Mapping[str, Any], base: Mapping[str, Any], bound: Mapping[str, float | None]) -> dict[str, Any]:
    alloc, base_alloc = obj["allocation"], base["allocation"]
    return {
        "bound": dict(bound),
        "gap_to_bound": {
            k: None if b is None or alloc.get(k) is None else round(b - alloc[k], 2) for k, b in bound.items()
        },
        "gap_closed": {k: gap_closed(alloc.get(k), base_alloc.get(k), b) for k, b in bound.items()},
    }


def with_gaps(found: Sequence[dict[str, Any]], bounds: Mapping[str, Any], baseline: str) -> list[dict[str, Any]]:
    """The policies' ``-o json`` objects with ``gap_baseline``, ``bound``, ``gap_to_bound`` and
    ``gap_closed`` added (also to each run of a several-seed object); ``bounds`` is ``trace bound``'s
    output for the same seeds and tune. The baseline must be one of ``found``."""
    base = next(s for s in found if s["policy"] == baseline)
    per_seed = {r["seed"]: r["bound"] for r in bounds["runs"]}
    base_runs = {r["seed"]: r for r in base.get("runs", [base])}
    out: list[dict[str, Any]] = []
    for s in found:
        obj = {**s, "gap_baseline": baseline, **_gaps(s, base, bounds["bound"])}
        if "runs" in s:
            obj["runs"] = [
                {**r, "gap_baseline": baseline, **_gaps(r, base_runs[r["seed"]], per_seed[r["seed"]])}
                for r in s["runs"]
            ]
        out.append(obj)
    return out
