"""multiPoint expansion, precedence, ordering and Score weights.

Ported from pkg/scheduler/framework/runtime/framework_test.go (``TestNewFrameworkMultiPointExpansion``,
``TestNewFrameworkErrors``, ``TestInitFrameworkWithScorePlugins``) as data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from fw_fakes import fake

from kubesched.config.types import PluginRef, Plugins, PluginSet, Profile
from kubesched.framework.registry import Registry
from kubesched.framework.runtime import Framework, FrameworkError


def _noop(*a: Any) -> None:
    return None


def _prefilter(*a: Any) -> tuple[None, None]:
    return None, None


def _score(*a: Any) -> tuple[int, None]:
    return 0, None


def _permit(*a: Any) -> tuple[None, float]:
    return None, 0


# upstream's TestPlugin implements every point but PreEnqueue.
TEST_PLUGIN = fake(
    "test-plugin",
    less=lambda a, b: False, pre_filter=_prefilter, filter=_noop, post_filter=lambda *a: (None, None),
    pre_score=_noop, score=_score, reserve=_noop, unreserve=_noop, permit=_permit, pre_bind=_noop,
    bind=_noop, post_bind=_noop,
)
SCORE_PLUGIN_1 = fake("score-plugin-1", pre_score=_noop, score=_score)
SCORE_PLUGIN_2 = fake("score-plugin-2", pre_score=_noop, score=_score)
SCORE_WITH_NORMALIZE_1 = fake("score-with-normalize-plugin-1", score=_score, normalize_score=_noop)
QUEUE_SORT = fake("no-op-queue-sort-plugin", less=lambda a, b: False)
BIND = fake("bind-plugin", bind=_noop)
DUPLICATE = fake("duplicate-plugin", pre_filter=_prefilter)
NOT_SCORE = fake("plugin-not-implementing-score")

REGISTRY = Registry()
for _p in (TEST_PLUGIN, SCORE_PLUGIN_1, SCORE_PLUGIN_2, SCORE_WITH_NORMALIZE_1, QUEUE_SORT, BIND, DUPLICATE,
           NOT_SCORE):
    REGISTRY.register(_p.name, _p)  # type: ignore[attr-defined]

TP, S1, S2, SN1 = "test-plugin", "score-plugin-1", "score-plugin-2", "score-with-normalize-plugin-1"
QS, BP = "no-op-queue-sort-plugin", "bind-plugin"

#: What test-plugin alone expands to (every point it implements but Score, whose weight varies).
ALL_TP = {p: [TP] for p in ("queue_sort", "pre_filter", "filter", "post_filter", "pre_score", "reserve",
                            "permit", "pre_bind", "bind", "post_bind")}


def _set(*refs: str | tuple[str, int], disabled: tuple[str, ...] = ()) -> PluginSet:
    enabled = [PluginRef(r) if isinstance(r, str) else PluginRef(r[0], r[1]) for r in refs]
    return PluginSet(enabled, [PluginRef(d) for d in disabled])


@dataclass
class Case:
    name: str
    plugins: dict[str, PluginSet]
    #: point -> plugin names in order (points not listed must be empty).
    want: dict[str, list[str]] = field(default_factory=dict)
    #: Score plugin -> weight.
    weights: dict[str, int] = field(default_factory=dict)
    want_err: str = ""


CASES = [
    Case("plugin expansion", {"multi_point": _set((TP, 5))},
         {**ALL_TP, "score": [TP]}, {TP: 5}),
    Case("disable MultiPoint plugin at some extension points",
         {"multi_point": _set(TP), "pre_score": _set(disabled=(TP,)), "score": _set(disabled=(TP,))},
         {k: v for k, v in ALL_TP.items() if k != "pre_score"}),
    Case("Multiple MultiPoint plugins", {"multi_point": _set(TP, S1)},
         {**ALL_TP, "pre_score": [TP, S1], "score": [TP, S1]}, {TP: 1, S1: 1}),
    Case("disable MultiPoint extension",
         {"multi_point": _set(TP, S1), "pre_score": _set(disabled=("*",))},
         {**{k: v for k, v in ALL_TP.items() if k != "pre_score"}, "score": [TP, S1]}, {TP: 1, S1: 1}),
    Case("Reorder MultiPoint plugins (specified extension takes precedence)",
         {"multi_point": _set(SN1, TP, S1), "score": _set(S1, TP)},
         {**ALL_TP, "pre_score": [TP, S1], "score": [S1, TP, SN1]}, {S1: 1, TP: 1, SN1: 1}),
    Case("Reorder MultiPoint plugins (specified extension only takes precedence when it exists in MultiPoint)",
         {"multi_point": _set(TP, S1), "score": _set(SN1, S1, TP)},
         {**ALL_TP, "pre_score": [TP, S1], "score": [S1, TP, SN1]}, {S1: 1, TP: 1, SN1: 1}),
    Case("Override MultiPoint plugins weights",
         {"multi_point": _set(TP, S1), "score": _set((S1, 5), (TP, 3))},
         {**ALL_TP, "pre_score": [TP, S1], "score": [S1, TP]}, {S1: 5, TP: 3}),
    Case("disable and enable MultiPoint plugins with '*'",
         {"multi_point": _set(QS, BP, S1, disabled=("*",))},
         {"queue_sort": [QS], "pre_score": [S1], "score": [S1], "bind": [BP]}, {S1: 1}),
    Case("disable and enable MultiPoint plugin by name",
         {"multi_point": _set(BP, QS, S1, disabled=(S1,))},
         {"queue_sort": [QS], "pre_score": [S1], "score": [S1], "bind": [BP]}, {S1: 1}),
    Case("Expect 'already registered' error", {"multi_point": _set(TP, TP)}, want_err="already registered"),
    Case("Override MultiPoint plugins weights and avoid a plugin being loaded multiple times",
         {"multi_point": _set(TP, S1), "score": _set((S1, 5), (S2, 5), (TP, 3))},
         {**ALL_TP, "pre_score": [TP, S1], "score": [S1, TP, S2]}, {S1: 5, TP: 3, S2: 5}),
]


def _framework(plugins: dict[str, PluginSet]) -> Framework:
    return Framework(Profile(plugins=Plugins(**plugins)), REGISTRY, handle=None)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_multi_point_expansion(case: Case) -> None:
    if case.want_err:
        with pytest.raises(FrameworkError, match=case.want_err):
            _framework(case.plugins)
        return
    fw = _framework(case.plugins)
    got = {point: [p.name for p in plugins] for point, plugins in fw.points.items() if plugins}
    assert got == case.want
    assert fw.score_weights == case.weights


def _with_sort_and_bind(**points: PluginSet) -> dict[str, PluginSet]:
    return {"queue_sort": _set(QS), "bind": _set(BP), **points}


@pytest.mark.parametrize(("name", "plugins", "want_err"), [
    ("enabled Score plugin doesn't exist in registry", _with_sort_and_bind(score=_set("notExist")),
     "not registered"),
    ("enabled Score plugin doesn't extend the ScorePlugin interface",
     _with_sort_and_bind(score=_set("plugin-not-implementing-score")), "does not extend Score plugin"),
    ("duplicate plugin name", _with_sort_and_bind(pre_filter=_set("duplicate-plugin", "duplicate-plugin")),
     "already registered"),
    ("no QueueSort plugin", {"bind": _set(BP)}, "exactly one QueueSort"),
    ("two QueueSort plugins", {"queue_sort": _set(QS, TP), "bind": _set(BP)}, "exactly one QueueSort"),
    ("no Bind plugin", {"queue_sort": _set(QS)}, "at least one Bind"),
], ids=lambda x: x if isinstance(x, str) else "")
def test_framework_construction_errors(name: str, plugins: dict[str, PluginSet], want_err: str) -> None:
    with pytest.raises(FrameworkError, match=want_err):
        _framework(plugins)


@pytest.mark.parametrize("plugins", [
    _with_sort_and_bind(),
    _with_sort_and_bind(score=_set(S1)),
    _with_sort_and_bind(score=_set(SN1)),
])
def test_framework_with_score_plugins_builds(plugins: dict[str, PluginSet]) -> None:
    fw = _framework(plugins)
    assert fw.has_score_plugins() == bool(plugins.get("score"))


def test_weight_zero_counts_as_one_and_overflow_is_refused() -> None:
    fw = _framework(_with_sort_and_bind(score=_set((S1, 0))))
    assert fw.score_weights == {S1: 1}
    # MaxTotalScore = MaxInt64: weights x 100 must not overflow it.
    huge = (2**63 - 1) // 100 + 1
    with pytest.raises(FrameworkError, match="could overflow"):
        _framework(_with_sort_and_bind(score=_set((S1, huge))))
