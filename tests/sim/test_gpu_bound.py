"""The GPU allocation upper bounds (``kubesched.sim.gpu_bound``, ``kubesched.sim.gpu_card_bound``,
docs/gpu.md "An upper bound"): on small clusters solved exhaustively here (every subset, every node
and card), each bound is never below the best placement, the card-pattern LP is tight on hand-solved
clusters where the aggregate relaxation is loose, and the curve takes the least of them."""

from __future__ import annotations

import itertools
import math
import random

import pytest

pytest.importorskip("scipy")

from kubesched.plugins.gpu.types import MILLI, NodeSpec, PodShape
from kubesched.sim.gpu_bound import bound_curve, max_packable_gpu_milli, quiet_stdout
from kubesched.sim.gpu_card_bound import card_pattern_bound, maximal_patterns
from kubesched.sim.gpu_forced import forced_pods


def _best(pods: list[PodShape], nodes: list[NodeSpec]) -> int:
    """Exhaustive: the most GPU milli any placement of any subset holds (cards are indivisible
    for whole-GPU pods, shared pods fit a card's free milli; CPU and memory per node)."""
    best = 0

    def place(i: int, cards: list[list[int]], cpu: list[int], mem: list[int], held: int) -> None:
        nonlocal best
        best = max(best, held)
        if i == len(pods):
            return
        p = pods[i]
        place(i + 1, cards, cpu, mem, held)  # skip it
        for n, node in enumerate(nodes):
            if p.cpu > cpu[n] or p.memory > mem[n] or (p.models and node.model not in p.models):
                continue
            if p.gpu_milli == MILLI:
                free = [c for c, left in enumerate(cards[n]) if left == MILLI]
                for chosen in itertools.combinations(free, p.gpu_count):
                    new = [list(c) for c in cards]
                    for c in chosen:
                        new[n][c] = 0
                    place(
                        i + 1,
                        new,
                        [*cpu[:n], cpu[n] - p.cpu, *cpu[n + 1 :]],
                        [*mem[:n], mem[n] - p.memory, *mem[n + 1 :]],
                        held + p.total_gpu_milli,
                    )
            else:
                for c, left in enumerate(cards[n]):
                    if left >= p.gpu_milli:
                        new = [list(cc) for cc in cards]
                        new[n][c] -= p.gpu_milli
                        place(
                            i + 1,
                            new,
                            [*cpu[:n], cpu[n] - p.cpu, *cpu[n + 1 :]],
                            [*mem[:n], mem[n] - p.memory, *mem[n + 1 :]],
                            held + p.total_gpu_milli,
                        )

    place(0, [[MILLI] * n.gpu_count for n in nodes], [n.cpu for n in nodes], [n.memory for n in nodes], 0)
    return best


def _shared(milli: int, cpu: int = 1000) -> PodShape:
    return PodShape(cpu=cpu, memory=1, gpu_milli=milli, gpu_count=1)


def _whole(count: int, cpu: int = 1000) -> PodShape:
    return PodShape(cpu=cpu, memory=1, gpu_milli=MILLI, gpu_count=count)


@pytest.mark.parametrize(
    ("pods", "nodes", "want"),
    [
        # Two pods asking for 60 % of a GPU cannot share the one card: 600, not 1000.
        ([_shared(600), _shared(600)], [NodeSpec("a", 8000, 10, 1, "T4")], 600),
        # A whole GPU and two 600m pods on two cards: the whole pod and one 600m pod.
        ([_whole(1), _shared(600), _shared(600)], [NodeSpec("a", 8000, 10, 2, "T4")], 1600),
        # Four 250m pods fill one card exactly.
        ([_shared(250)] * 4, [NodeSpec("a", 8000, 10, 1, "T4")], 1000),
        # CPU binds: each pod needs 3 of the node's 4 cores, so one pod only.
        ([_shared(500, cpu=3000), _shared(500, cpu=3000)], [NodeSpec("a", 4000, 10, 1, "T4")], 500),
        # A model constraint: the A100 pod cannot use the T4 node.
        ([PodShape(1000, 1, MILLI, 1, ("A100",)), _whole(1)], [NodeSpec("a", 8000, 10, 1, "T4")], 1000),
    ],
)
def test_tight_on_hand_solved_clusters(pods: list[PodShape], nodes: list[NodeSpec], want: int) -> None:
    assert _best(pods, nodes) == want
    assert max_packable_gpu_milli(pods, nodes) == pytest.approx(want)


@pytest.mark.parametrize(
    ("pods", "nodes", "want", "aggregate"),
    [
        # Two nodes of 2 GPUs and 5 cores; three 1-GPU pods of 3 cores: one pod a node (CPU), 2000.
        # The aggregate pools 10 cores and 4 cards: room for all three, 3000.
        ([_whole(1, cpu=3000)] * 3, [NodeSpec(f"n{i}", 5000, 10, 2, "T4") for i in range(2)], 2000, 3000),
        # Two cards; 700m, 700m, 400m, 400m: a 700m pod leaves 300m that no 400m pod fits, so the best is
        # one 700m card and one card of two 400m pods, 1500. The aggregate sums milli: 700+700+400, 1800.
        ([_shared(700), _shared(700), _shared(400), _shared(400)], [NodeSpec("a", 8000, 10, 2, "T4")], 1500, 1800),
        # One card; 810m, 160m, 470m: 810 + 160 = 970 (470 + 470 is not there); the aggregate:
        # 810 + 160 = 970 too, 470 + 160 = 630, so equal here, and the LP agrees.
        ([_shared(810), _shared(160), _shared(470)], [NodeSpec("a", 8000, 10, 1, "T4")], 970, 970),
    ],
)
def test_card_pattern_lp_is_tight_where_the_aggregate_is_loose(
    pods: list[PodShape], nodes: list[NodeSpec], want: int, aggregate: int
) -> None:
    assert _best(pods, nodes) == want
    assert max_packable_gpu_milli(pods, nodes) == pytest.approx(aggregate)
    assert card_pattern_bound(pods, nodes) == pytest.approx(want)
    # The curve takes the least bound, and says which: one level, its last event the whole list. It
    # also knows what every replay must place (two 700m pods, when they come first, so 1400 there).
    total = sum(n.gpu_count for n in nodes) * MILLI
    arrived = sum(p.total_gpu_milli for p in pods)
    level = round(arrived / total * 100)
    (got,) = bound_curve(pods, nodes, [level])
    online = max(h for h, _ in _online_outcomes(pods, nodes))
    assert got.prefix == len(pods)
    assert got.allocation == pytest.approx(online / total * 100, abs=0.01)
    assert got.method == "card-pattern LP"  # the least (on a tie, the first named)


def test_maximal_card_patterns() -> None:
    """Counts per milli value (ascending) of every maximal card filling, worked out by hand."""
    assert set(maximal_patterns((400, 700))) == {(2, 0), (0, 1)}
    assert set(maximal_patterns((300, 500))) == {(0, 2), (1, 1), (3, 0)}
    assert maximal_patterns(()) == ()


def test_many_small_shares_are_coarsened_not_enumerated() -> None:
    """Shares of 1..40 milli have astronomically many card patterns: the LP rounds the shares down to
    a coarser grid (a relaxation) and still bounds. One card: 990m and 1+2+3+4 fill it, 1000."""
    import time

    pods = [_shared(m, cpu=10) for m in range(1, 41)] + [_shared(990, cpu=10)]
    started = time.monotonic()
    got = card_pattern_bound(pods, [NodeSpec("a", 64000, 10, 1, "T4")])
    assert 1000 - 1e-6 <= got <= 1000 + 1e-6
    assert time.monotonic() - started < 30


def test_never_below_the_best_placement_on_random_small_clusters() -> None:
    rng = random.Random(7)
    for _ in range(60):
        nodes = [
            NodeSpec(f"n{i}", rng.choice([4000, 8000]), 16, rng.choice([1, 2, 4]), rng.choice(["T4", "V100"]))
            for i in range(rng.randint(1, 2))
        ]
        pods = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                pods.append(_shared(rng.choice([100, 250, 400, 500, 600, 900]), cpu=rng.choice([500, 2000])))
            else:
                pods.append(
                    PodShape(
                        rng.choice([500, 2000]), 1, MILLI, rng.choice([1, 2]), rng.choice([(), ("T4",), ("V100",)])
                    )
                )
        best = _best(pods, nodes)
        old = max_packable_gpu_milli(pods, nodes)
        assert old >= best - 1e-6, (pods, nodes)
        assert card_pattern_bound(pods, nodes) >= best - 1e-6, (pods, nodes)
        # The curve's bound at the last level: at least every replay's allocation, at most the old bound.
        total = sum(n.gpu_count for n in nodes) * MILLI
        level = round(sum(p.total_gpu_milli for p in pods) / total * 100)
        (got,) = bound_curve(pods, nodes, [level])
        online = max(h for h, _ in _online_outcomes(pods, nodes))
        assert got.allocation is not None
        assert online / total * 100 - 1e-6 <= got.allocation <= math.ceil(old / total * 10000) / 100 + 1e-9


def test_the_curve_takes_each_levels_last_event() -> None:
    """One 1-GPU node: pods of 500m arrive; event i's arrived share is 50·i %. Level 50 ends at the
    first pod (bound 50 %), level 100 at the second (100 %), level 150 has no event."""
    nodes = [NodeSpec("a", 64000, 100, 1, "T4")]
    curve = bound_curve([_shared(500)] * 2, nodes, [50, 100, 150])
    assert [(b.level, b.prefix, b.allocation) for b in curve] == [(50, 1, 50.0), (100, 2, 100.0), (150, 0, None)]


def test_the_command_bounds_every_replay_of_its_seeds(tmp_path: object) -> None:
    """``trace bound`` on the tiny trace of test_trace_framework: at every level, each seed's bound
    is at least what every policy's replay of that seed reaches (they are placements)."""
    import json
    from pathlib import Path

    from click.testing import CliRunner
    from test_trace_framework import write_trace

    from kubesched.cli import cli

    assert isinstance(tmp_path, Path)
    nodes, pods = write_trace(tmp_path)
    res = CliRunner().invoke(
        cli, ["trace", "bound", "--nodes", str(nodes), "--pods", str(pods), "--seeds", "1..3", "-o", "json"]
    )
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["seeds"] == [1, 2, 3] and len(out["runs"]) == 3
    for run in out["runs"]:
        replay = CliRunner().invoke(
            cli,
            [
                "trace",
                "alibaba-gpu",
                "--nodes",
                str(nodes),
                "--pods",
                str(pods),
                "--policy",
                "all",
                "--seed",
                str(run["seed"]),
                "-o",
                "json",
            ],
        )
        assert replay.exit_code == 0, replay.output
        for policy in json.loads(replay.stdout):
            for level, got in policy["allocation"].items():
                if got is not None:
                    assert run["bound"][level] is not None and got <= run["bound"][level] + 1e-9, (
                        policy["policy"],
                        run["seed"],
                        level,
                    )
    bad = CliRunner().invoke(cli, ["trace", "bound", "--nodes", str(nodes), "--pods", str(pods), "--tune", "-1"])
    assert bad.exit_code == 2 and "--tune:" in bad.output


def test_highs_chatter_stays_off_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    """HiGHS's MIP solver writes to descriptor 1 on some inputs (the default trace, seed 44), which
    broke ``trace bound -o json``: nothing written there while it solves reaches stdout."""
    import os
    import sys

    with quiet_stdout():
        os.write(1, b"HighsMipSolverData::transformNewIntegerFeasibleSolution\n")
    print("after")
    sys.stdout.flush()
    assert capfd.readouterr().out == "after\n"


@pytest.mark.slow
def test_the_default_trace_headline_bounds() -> None:
    """docs/gpu.md "An upper bound": seeds 42 and 44 of the default trace through ``trace bound -o
    json`` (seed 44 is one where HiGHS's MIP used to write to stdout and break the JSON)."""
    import json

    from click.testing import CliRunner
    from test_trace_framework import NODES_CSV, PODS_CSV

    from kubesched.cli import cli

    if not PODS_CSV.is_file():
        pytest.skip(f"Alibaba trace not found in {PODS_CSV.parent}")
    res = CliRunner().invoke(
        cli,
        [
            "trace",
            "bound",
            "--nodes",
            str(NODES_CSV),
            "--pods",
            str(PODS_CSV),
            "--seed",
            "42",
            "--seed",
            "44",
            "-o",
            "json",
        ],
    )
    assert res.exit_code == 0, res.output
    runs = {r["seed"]: r for r in json.loads(res.stdout)["runs"]}
    assert {k: runs[42]["bound"][k] for k in ("100", "110", "120", "130")} == {
        "100": 97.0,
        "110": 97.72,
        "120": 97.76,
        "130": 97.81,
    }
    assert {k: runs[44]["bound"][k] for k in ("100", "110", "120", "130")} == {
        "100": 96.96,
        "110": 97.79,
        "120": 97.87,
        "130": 97.9,
    }
    assert runs[42]["method"]["130"] == "card-pattern LP"


def _online_outcomes(pods: list[PodShape], nodes: list[NodeSpec]) -> list[tuple[int, frozenset[int]]]:
    """Every replay any policy can make (exhaustive): each pod, in order, goes to any node and cards
    that fit it, and is refused only when none does. (GPU milli held, pods placed) per outcome."""
    out: list[tuple[int, frozenset[int]]] = []

    def step(i: int, cards: list[list[int]], cpu: list[int], mem: list[int], held: int, placed: frozenset[int]) -> None:
        if i == len(pods):
            out.append((held, placed))
            return
        p = pods[i]
        options: list[tuple[int, list[int]]] = []
        for n, node in enumerate(nodes):
            if p.cpu > cpu[n] or p.memory > mem[n] or (p.models and node.model not in p.models):
                continue
            if p.gpu_milli == MILLI:
                free = [c for c, left in enumerate(cards[n]) if left == MILLI]
                options += [(n, list(chosen)) for chosen in itertools.combinations(free, p.gpu_count)]
            elif p.gpu_milli > 0:
                options += [(n, [c]) for c, left in enumerate(cards[n]) if left >= p.gpu_milli]
        if not options:
            step(i + 1, cards, cpu, mem, held, placed)
        for n, chosen in options:
            new = [list(c) for c in cards]
            for c in chosen:
                new[n][c] -= p.gpu_milli
            cpu2, mem2 = list(cpu), list(mem)
            cpu2[n] -= p.cpu
            mem2[n] -= p.memory
            step(i + 1, new, cpu2, mem2, held + p.total_gpu_milli, placed | {i})

    step(0, [[MILLI] * n.gpu_count for n in nodes], [n.cpu for n in nodes], [n.memory for n in nodes], 0, frozenset())
    return out


def test_forced_pods_by_hand() -> None:
    """Two 1-GPU nodes, three 600m pods: the first two fit whatever the policy did (one card each),
    the third may not."""
    nodes = [NodeSpec(f"n{i}", 8000, 10, 1, "T4") for i in range(2)]
    assert forced_pods([_shared(600)] * 3, nodes) == [True, True, False]
    # CPU: each pod takes 5 of 8 cores on 2-card nodes; one pod can CPU-block one node and no node's
    # cards, so the second pod is forced, the third not (the first two may sit on different nodes).
    two = [NodeSpec(f"n{i}", 8000, 10, 2, "T4") for i in range(2)]
    assert forced_pods([_shared(100, cpu=5000)] * 3, two) == [True, True, False]
    # On 1-card nodes the first pod could block one node by its CPU or by its card, not both: it sits
    # on one node and serves one reason (the assignment LP), so the second pod is forced too. The
    # budgets alone, counted apart, would let it block both nodes and call the second pod free.
    assert forced_pods([_shared(100, cpu=5000)] * 3, nodes) == [True, True, False]


def test_forced_pods_count_the_milli_that_block_a_card() -> None:
    """Two 1-card nodes: two 50m pods touch both cards, but a card with 50m used still has 950m for
    an 810m pod, so every replay places the 810m pod (a card needs 191m used to refuse it). A 200m
    pod does block a card: after 200m, 200m the 810m pod may find no room."""
    nodes = [NodeSpec(f"n{i}", 8000, 10, 1, "T4") for i in range(2)]
    assert forced_pods([_shared(50), _shared(50), _shared(810)], nodes) == [True, True, True]
    assert forced_pods([_shared(200), _shared(200), _shared(810)], nodes) == [True, True, False]
    # Four 100m pods: 400m can block two cards only by 191m each on paper (2 × 191 = 382 ≤ 400), and a
    # policy can indeed put 100m + 100m on each card: the 810m pod is not forced.
    assert forced_pods([_shared(100)] * 4 + [_shared(810)], nodes)[-1] is False
    assert max(h for h, _ in _online_outcomes([_shared(100)] * 4 + [_shared(810)], nodes)) == 400 + 810
    assert min(h for h, _ in _online_outcomes([_shared(100)] * 4 + [_shared(810)], nodes)) == 400


def test_forced_pods_make_the_bound_tight_where_offline_is_loose() -> None:
    """One card: an 810m pod, then a whole GPU. Offline the whole GPU alone (1000) is best, but every
    replay places the 810m pod (it fits an empty cluster) and then refuses the whole GPU: 810."""
    pods, nodes = [_shared(810), _whole(1)], [NodeSpec("a", 8000, 10, 1, "T4")]
    assert max(h for h, _ in _online_outcomes(pods, nodes)) == 810
    assert max_packable_gpu_milli(pods, nodes) == pytest.approx(1000)
    assert card_pattern_bound(pods, nodes) == pytest.approx(1000)
    assert card_pattern_bound(pods, nodes, {_shared(810): 1}) == pytest.approx(810)
    (got,) = bound_curve(pods, nodes, [181])  # 1810 milli arrived on 1000: the one event at 181 %
    assert (got.allocation, got.method) == (81.0, "card-pattern LP")


def test_forced_pods_are_placed_by_every_replay_and_the_curve_bounds_them() -> None:
    """Random small clusters and sequences: every pod called forced is placed in every replay any
    policy can make, and the curve's bound at the last level is at least every replay's allocation."""
    rng = random.Random(11)
    for case in range(120):
        nodes = [
            NodeSpec(f"n{i}", rng.choice([3000, 4000, 8000]), 16, rng.choice([1, 2]), "T4")
            for i in range(rng.randint(1, 2 if case < 60 else 3))
        ]
        pods = []
        for _ in range(rng.randint(1, 6 if case < 60 else 5)):
            if rng.random() < 0.15:  # CPU-only pods block by CPU alone
                pods.append(PodShape(cpu=rng.choice([1000, 2500]), memory=0, gpu_milli=0, gpu_count=0))
            elif rng.random() < 0.6:
                milli = rng.choice([50, 100, 200, 400, 500, 600, 810])
                pods.append(_shared(milli, cpu=rng.choice([500, 2000, 3000])))
            else:
                pods.append(_whole(rng.choice([1, 2]), cpu=rng.choice([500, 2000])))
        outcomes = _online_outcomes(pods, nodes)
        forced = forced_pods(pods, nodes)
        for _held, placed in outcomes:
            assert all(i in placed for i, f in enumerate(forced) if f), (pods, nodes, forced, placed)
        total = sum(n.gpu_count for n in nodes) * MILLI
        level = round(sum(p.total_gpu_milli for p in pods) / total * 100)
        (got,) = bound_curve(pods, nodes, [level])
        assert got.allocation is not None
        assert max(h for h, _ in outcomes) / total * 100 <= got.allocation + 1e-6, (pods, nodes)
