"""GoRand against numbers printed by Go's own math/rand (go1.26.8 linux/amd64).

Reference program (run outside the repo): ``r := rand.New(rand.NewSource(seed))`` then the calls named
in each test, printing the results with ``fmt``; the FGD sequence test seeds 42, discards one Int63 and
shuffles 0..8151 as pkg/simulator/simulator.go SortClusterPods does. The seed-1 pair is the check quoted
in ../shared/reference/fgd-method.md §2.
"""

from __future__ import annotations

import pytest

from kubesched.gorand import GoRand

INT63_BY_SEED = {
    1: [5577006791947779410, 8674665223082153551, 6129484611666145821, 4037200794235010051,
        3916589616287113937],
    42: [3440579354231278675, 608747136543856411, 5571782338101878760, 1926012586526624009,
         404153945743547657],
    0: [8717895732742165505, 2259404117704393152, 6050128673802995827, 501233450539197794,
        3390393562759376202],
    -7: [747107023976529931, 7084732931963018726, 6995717851144434728, 814608651260322299,
         2783162703872624372],
    # seed mod (2^31 - 1) == 0 maps to the same fixed seed as 0
    2147483647: [8717895732742165505, 2259404117704393152, 6050128673802995827, 501233450539197794,
                 3390393562759376202],
    1 << 40: [5470237361722394362, 6322525149314491254, 1177463506020107830, 1565541666764780662,
              7675952003761928004],
}


@pytest.mark.parametrize(("seed", "expected"), INT63_BY_SEED.items())
def test_int63_stream_matches_go(seed: int, expected: list[int]) -> None:
    r = GoRand(seed)
    assert [r.Int63() for _ in expected] == expected


@pytest.mark.parametrize(("seed", "first"), [(-2147483647, 8717895732742165505),
                                             (-4294967294, 8717895732742165505),
                                             (-1, 3644962268338389676)])
def test_negative_seeds_reduce_like_go(seed: int, first: int) -> None:
    assert GoRand(seed).Int63() == first


def test_derived_draws_continue_one_stream_like_go() -> None:
    r = GoRand(42)
    assert [r.Int31n(10) for _ in range(10)] == [5, 7, 8, 0, 3, 5, 7, 6, 8, 3]
    assert [r.Intn(1000003) for _ in range(5)] == [747192, 24563, 705487, 356048, 948377]
    assert [r.Intn(1 << 30) for _ in range(3)] == [1001164653, 456052228, 463654777]
    assert [r.Float64() for _ in range(3)] == [0.94167121455231184, 0.97078061863731702,
                                               0.11933179676373298]
    assert [r.Int31() for _ in range(3)] == [730502934, 615445444, 487741275]
    assert [r.Uint32() for _ in range(3)] == [2802733088, 180293723, 3980526004]
    assert [r.Int63n(10**15) for _ in range(3)] == [686371618757660, 513341729910236, 31852228291041]


def test_perm_then_shuffle_then_int63_like_go() -> None:
    r = GoRand(7)
    assert r.Perm(12) == [10, 11, 5, 3, 1, 6, 9, 8, 4, 7, 2, 0]
    assert r.shuffled(list(range(20))) == [9, 7, 12, 6, 4, 17, 5, 10, 0, 8, 18, 14, 1, 15, 13, 11, 3,
                                            19, 16, 2]
    assert r.Int63() == 3207874882000232046


def test_register_wraps_over_a_long_stream() -> None:
    r = GoRand(123)
    for _ in range(99_999):
        r.Int63()
    assert r.Int63() == 4552650033905515130


def test_fgd_pod_shuffle_sequence() -> None:
    r = GoRand(42)
    r.Int63()
    order = r.shuffled(list(range(8152)))
    assert order[:10] == [255, 1685, 6784, 4463, 602, 1564, 3882, 7257, 6545, 1541]
    assert [r.Intn(8152) for _ in range(5)] == [3888, 5689, 2936, 788, 5416]


def test_int_is_one_int63_draw() -> None:
    a, b = GoRand(5), GoRand(5)
    assert a.Int() == b.Int63()


@pytest.mark.parametrize("call", ["Intn", "Int31n", "Int63n"])
def test_non_positive_bounds_are_rejected(call: str) -> None:
    with pytest.raises(ValueError):
        getattr(GoRand(1), call)(0)


def test_shuffle_rejects_negative_length() -> None:
    with pytest.raises(ValueError):
        GoRand(1).Shuffle(-1, lambda i, j: None)
