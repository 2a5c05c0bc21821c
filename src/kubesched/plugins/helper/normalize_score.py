"""The default NormalizeScore (upstream ``pkg/scheduler/framework/plugins/helper/normalize_score.go``).

Scales raw scores so the highest becomes ``max_priority`` (integer division, as Go does), or the
reverse (``max_priority - scaled``) for plugins whose raw score counts something bad. Shared by
several plugins (TaintToleration, NodeAffinity, WindowTransfer), so it sits in the plugins' helper
package as upstream's does, not inside any one of them.
"""

from __future__ import annotations

from collections.abc import MutableSequence

import numpy as np
import numpy.typing as npt

from kubesched.framework.interfaces import MAX_NODE_SCORE
from kubesched.framework.types import NodeScore

__all__ = ["default_normalize_score", "default_normalize_score_batch"]


def default_normalize_score(
    max_priority: int, reverse: bool, scores: MutableSequence[NodeScore]
) -> None:
    """Upstream ``DefaultNormalizeScore``: rewrites ``scores`` in place. Go's truncating division."""
    max_count = 0
    for s in scores:
        if s.score > max_count:
            max_count = s.score
    if max_count == 0:
        if reverse:
            for s in scores:
                s.score = max_priority
        return
    for s in scores:
        score = _div_trunc(max_priority * s.score, max_count)
        s.score = max_priority - score if reverse else score


def _div_trunc(a: int, b: int) -> int:
    """Go's integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score_batch(
    scores: npt.NDArray[np.int64], reverse: bool, max_priority: int = MAX_NODE_SCORE
) -> npt.NDArray[np.int64]:
    """The same on an int64 array (what the runtime's ``normalize_score_batch`` hook receives)."""
    out = np.asarray(scores, dtype=np.int64)
    # All zero (the usual case of a count of bad things) found by the cheapest numpy call there is.
    max_count = int(out.max()) if np.count_nonzero(out) else 0
    if max_count <= 0:
        return np.full_like(out, max_priority) if reverse else out.copy()
    num = max_priority * out
    scaled: npt.NDArray[np.int64] = np.sign(num) * (np.abs(num) // max_count)
    if reverse:
        scaled = max_priority - scaled
    return scaled
