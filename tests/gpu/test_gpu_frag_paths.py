"""Both forms of ``TypicalPods.fragmentation`` give the same bits (FGD paper §4, fgd-method.md §5).

A score or a GPU choice asks for F of one or two states, where numpy's per-call cost dominates, so
up to ``_SCALAR_MAX_STATES`` states F runs on Python floats; beyond that it is vectorized. Either is
checked against the plain loop of the spec in test_gpu_frag.py for batches of its own size; here
every batch goes through both forms, whatever its size.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.gpu import TypicalPod, TypicalPods
from kubesched.plugins.gpu import frag as frag_module

_typical = st.lists(
    st.tuples(st.integers(100, 64000), st.sampled_from([0, 50, 300, 500, 810, 1000]), st.integers(1, 4),
              st.sampled_from([(), ("A",), ("A", "B")]), st.floats(0.001, 1.0)),
    min_size=1, max_size=12,
)
_state = st.tuples(st.sampled_from(["", "A", "B"]), st.integers(-1000, 96000),
                   st.lists(st.sampled_from([0, 1, 50, 120, 300, 499, 500, 700, 810, 999, 1000]),
                            min_size=0, max_size=8))


@contextmanager
def _scalar_up_to(n: int) -> Iterator[None]:
    saved = frag_module._SCALAR_MAX_STATES
    frag_module._SCALAR_MAX_STATES = n
    try:
        yield
    finally:
        frag_module._SCALAR_MAX_STATES = saved


@settings(max_examples=200, deadline=None)
@given(_typical, st.lists(_state, min_size=1, max_size=10))
def test_scalar_and_vector_forms_agree_bit_for_bit(
    raw: list[tuple[int, int, int, tuple[str, ...], float]],
    states: list[tuple[str, int, list[int]]],
) -> None:
    typical = TypicalPods([
        TypicalPod(cpu, milli, count if milli == 1000 else (1 if milli else 0), models, 1, p)
        for cpu, milli, count, models, p in raw
    ])
    width = max(len(g) for _, _, g in states)
    gpu = np.array([g + [0] * (width - len(g)) for _, _, g in states], dtype=np.int64).reshape(len(states), width)
    access = np.stack([typical.access_row(m) for m, _, _ in states])
    cpu = np.array([c for _, c, _ in states], dtype=np.int64)
    with _scalar_up_to(0):
        vector = typical.fragmentation(access, cpu, gpu)
    with _scalar_up_to(len(states)):
        scalar = typical.fragmentation(access, cpu, gpu)
    assert vector.dtype == scalar.dtype == np.float64
    assert vector.tobytes() == scalar.tobytes()
