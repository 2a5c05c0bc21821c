"""The vectorized forms (ClusterGpuState masks, ``score_batch``) agree with the per-node reference forms
(``resources_fit``/``gpu_fit``, ``score``) on random clusters, for every policy; and the columnar
state agrees with per-node NodeGpuState.allocate bookkeeping."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.gorand import GoRand
from kubesched.plugins.gpu import (
    ClusterGpuState,
    Fgd,
    NodeSpec,
    PodShape,
    RandomPolicy,
    TypicalPods,
    best_fit_gpus,
    gpu_fit,
    make_policy,
    resources_fit,
)

_node = st.builds(
    lambda cpu, mem, gpus, model, max_pods: (cpu, mem, gpus, model if gpus else "", max_pods),
    st.sampled_from([8000, 32000, 64000, 96000, 128000]), st.sampled_from([16, 64, 512]),
    st.sampled_from([0, 1, 2, 4, 8]), st.sampled_from(["A", "B", ""]), st.sampled_from([3, 1001]),
)
_pod = st.builds(
    lambda cpu, mem, kind, milli, k, models: PodShape(
        cpu=cpu, memory=mem << 30,
        gpu_milli=0 if kind == "cpu" else (milli if kind == "share" else 1000),
        gpu_count=0 if kind == "cpu" else (1 if kind == "share" else k),
        models=() if kind == "cpu" else models),
    st.sampled_from([0, 500, 4000, 16000, 60000]), st.sampled_from([0, 1, 8, 100]),
    st.sampled_from(["cpu", "share", "whole"]), st.sampled_from([50, 250, 500, 810, 999]),
    st.sampled_from([1, 2, 4, 8]), st.sampled_from([(), ("A",), ("B", "A")]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_node, min_size=1, max_size=6), st.lists(_pod, max_size=25),
       st.lists(st.integers(0, 1000), min_size=25, max_size=25), st.lists(_pod, min_size=1, max_size=6),
       st.integers(0, 2**31 - 2))
def test_batch_equals_per_node(
    nodes: list[tuple[int, int, int, str, int]], placed: list[PodShape], picks: list[int],
    probes: list[PodShape], seed: int,
) -> None:
    specs = [NodeSpec(f"n{i}", cpu, mem << 30, gpus, model, max_pods)
             for i, (cpu, mem, gpus, model, max_pods) in enumerate(nodes)]
    cluster = ClusterGpuState(specs)
    states = [s.empty_state() for s in specs]
    for pod, pick in zip(placed, picks, strict=False):
        fits = [i for i, s in enumerate(states) if resources_fit(s, pod) is None and gpu_fit(s, pod) is None]
        assert np.flatnonzero(cluster.feasible(pod)).tolist() == fits
        if not fits:
            continue
        i = fits[pick % len(fits)]
        gpus = best_fit_gpus(states[i].gpu_left, pod)
        states[i] = states[i].allocate(pod, gpus)
        cluster.allocate(i, pod, gpus)
        assert cluster.node_state(i) == states[i]

    typical = TypicalPods.from_shapes(placed + probes)
    for pod in probes:
        feasible = np.flatnonzero(cluster.feasible(pod))
        expected = [i for i, s in enumerate(states) if resources_fit(s, pod) is None and gpu_fit(s, pod) is None]
        assert feasible.tolist() == expected
        if len(feasible) == 0:
            continue
        for name in ("DotProd", "GpuClustering", "GpuPacking", "BestFit", "FGD"):
            policy = make_policy(name, typical=typical)
            batch = policy.score_batch(cluster, feasible, pod)
            per_node = [policy.score(states[i], pod) for i in feasible]
            assert batch.tolist() == per_node, name
            assert policy.normalize(batch).tolist() == policy.normalize(np.array(per_node)).tolist()
        batch_random = RandomPolicy(GoRand(seed)).score_batch(cluster, feasible, pod)
        per_node_random = RandomPolicy(GoRand(seed))
        chosen = per_node_random.pre_score([states[i] for i in feasible], pod)
        assert batch_random.tolist() == [per_node_random.score(states[i], pod, chosen) for i in feasible]
        fgd = Fgd(typical)
        best = int(feasible[int(np.argmax(fgd.score_batch(cluster, feasible, pod)))])
        gpus = fgd.select_gpus(states[best], pod)
        assert len(gpus) == (pod.gpu_count if pod.wants_gpu else 0)
        assert all(states[best].gpu_left[j] >= pod.gpu_milli for j in gpus)
