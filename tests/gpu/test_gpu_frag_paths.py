"""Both forms of ``TypicalPods.fragmentation`` give the same bits (FGD paper §4, fgd-method.md §5).

A score or a GPU choice asks for F of one or two states, where numpy's per-call cost dominates, so
up to ``_SCALAR_MAX_STATES`` states F runs on Python floats; beyond that it is vectorized. Either is
checked against the plain loop of the spec in test_gpu_frag.py for batches of its own size; here
every batch goes through both forms, whatever its size. FGD's candidate scores have the same two
forms (one or two states on Python numbers), checked the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.plugins.gpu import Fgd, PodShape, TypicalPod, TypicalPods
from kubesched.plugins.gpu import frag as frag_module
from kubesched.plugins.gpu import policies as policies_module

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


def _batch(
    raw: list[tuple[int, int, int, tuple[str, ...], float]], states: list[tuple[str, int, list[int]]],
) -> tuple[TypicalPods, npt.NDArray[np.bool_], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The typical pods and the (access, CPU left, GPU milli left) arrays of drawn states."""
    typical = TypicalPods([
        TypicalPod(cpu, milli, count if milli == 1000 else (1 if milli else 0), models, 1, p)
        for cpu, milli, count, models, p in raw
    ])
    width = max(len(g) for _, _, g in states)
    gpu = np.array([g + [0] * (width - len(g)) for _, _, g in states], dtype=np.int64).reshape(len(states), width)
    access = np.stack([typical.access_row(m) for m, _, _ in states])
    cpu = np.array([c for _, c, _ in states], dtype=np.int64)
    return typical, access, cpu, gpu


@settings(max_examples=200, deadline=None)
@given(_typical, st.lists(_state, min_size=1, max_size=10))
def test_scalar_and_vector_forms_agree_bit_for_bit(
    raw: list[tuple[int, int, int, tuple[str, ...], float]],
    states: list[tuple[str, int, list[int]]],
) -> None:
    typical, access, cpu, gpu = _batch(raw, states)
    with _scalar_up_to(0):
        vector = typical.fragmentation(access, cpu, gpu)
    with _scalar_up_to(len(states)):
        scalar = typical.fragmentation(access, cpu, gpu)
    assert vector.dtype == scalar.dtype == np.float64
    assert vector.tobytes() == scalar.tobytes()


@contextmanager
def _small_batch_up_to(n: int) -> Iterator[None]:
    saved = policies_module._SMALL_BATCH
    policies_module._SMALL_BATCH = n
    try:
        yield
    finally:
        policies_module._SMALL_BATCH = saved


_pod = st.one_of(
    st.builds(PodShape, cpu=st.integers(0, 64000)),
    st.builds(PodShape, cpu=st.integers(0, 64000), gpu_milli=st.sampled_from([50, 300, 500, 810]),
              gpu_count=st.just(1)),
    st.builds(PodShape, cpu=st.integers(0, 64000), gpu_milli=st.just(1000), gpu_count=st.integers(1, 4)),
)


@settings(max_examples=300, deadline=None)
@given(_typical, st.lists(_state, min_size=1, max_size=2), _pod, st.booleans())
def test_fgd_candidate_scores_agree_on_python_numbers_and_arrays(
    raw: list[tuple[int, int, int, tuple[str, ...], float]],
    states: list[tuple[str, int, list[int]]],
    pod: PodShape,
    known_before: bool,
) -> None:
    """FGD scores one or two node states on Python numbers, larger batches with arrays: the same
    candidates (state, GPU), scores and F, bit for bit, with F before known or not."""
    typical, access, cpu, gpu = _batch(raw, states)
    fgd = Fgd(typical)
    before = typical.fragmentation(access, cpu, gpu) if known_before else None
    with _small_batch_up_to(0):
        vector = fgd._candidate_scores(access, cpu, gpu, before, pod)
    with _small_batch_up_to(len(states)):
        small = fgd._candidate_scores(access, cpu, gpu, before, pod)
    for v, s in zip(vector, small, strict=True):
        assert v.dtype == s.dtype
        assert v.tobytes() == s.tobytes()
