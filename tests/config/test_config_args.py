"""Generic typed-args decoding (strict, like kube-scheduler's decoding of ``<Plugin>Args``).

Upstream behaviour pinned: staging/src/k8s.io/kube-scheduler/config/v1/types.go
(``decodeNestedObjects``: strict decoding, unknown fields are errors) followed by defaulting
and validation. The args types below are test fixtures, not upstream ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from kubesched.config import FieldError, decode_args, describe_args


@dataclass
class Band:
    low: int
    high: int = 100


@dataclass
class WindowArgs:
    window_start: str
    window_end: str
    bandwidth_threshold: int = 0
    ratio: float = 0.5
    enabled: bool = True
    mode: Literal["Fast", "Slow"] = "Fast"
    tags: list[str] = field(default_factory=list)
    limits: dict[str, int] = field(default_factory=dict)
    band: Band | None = None
    bands: list[Band] = field(default_factory=list)
    extra: Any = None
    grace: float = field(default=30.0, metadata={"duration": True})
    gpu_ids: list[int] = field(default_factory=list, metadata={"key": "gpuIDs"})

    def validate(self) -> list[tuple[str, str]]:
        errs: list[tuple[str, str]] = []
        if self.window_start >= self.window_end:
            errs.append(("windowEnd", "must be after windowStart"))
        for i, b in enumerate(self.bands):
            if b.low > b.high:
                errs.append((f"bands[{i}].low", "must not exceed high"))
        return errs


GOOD = {"windowStart": "01:00", "windowEnd": "05:00"}


def test_decode_defaults_and_values() -> None:
    args, errors = decode_args(
        WindowArgs,
        {
            **GOOD,
            "bandwidthThreshold": 7,
            "ratio": 1,
            "enabled": False,
            "mode": "Slow",
            "tags": ["a"],
            "limits": {"x": 1},
            "band": {"low": 3},
            "bands": [{"low": 1, "high": 2}],
            "extra": {"k": [1]},
            "grace": "1m30s",
            "gpuIDs": [0, 1],
        },
        "args",
    )
    assert errors == []
    assert args == WindowArgs(
        window_start="01:00",
        window_end="05:00",
        bandwidth_threshold=7,
        ratio=1.0,
        enabled=False,
        mode="Slow",
        tags=["a"],
        limits={"x": 1},
        band=Band(3, 100),
        bands=[Band(1, 2)],
        extra={"k": [1]},
        grace=90.0,
        gpu_ids=[0, 1],
    )
    assert isinstance(args.ratio, float)


def test_null_means_default() -> None:
    args, errors = decode_args(WindowArgs, {**GOOD, "bandwidthThreshold": None, "grace": None}, "args")
    assert errors == []
    assert args is not None and (args.bandwidth_threshold, args.grace) == (0, 30.0)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({**GOOD, "windowstart": "x"}, ["args.windowstart: unknown field"]),
        ({**GOOD, "bandwidthThreshold": "7"}, ['args.bandwidthThreshold: must be int, got "7"']),
        ({**GOOD, "bandwidthThreshold": True}, ["args.bandwidthThreshold: must be int, got true"]),
        ({**GOOD, "bandwidthThreshold": 1.5}, ["args.bandwidthThreshold: must be int, got 1.5"]),
        ({**GOOD, "enabled": "yes"}, ['args.enabled: must be bool, got "yes"']),
        ({**GOOD, "mode": "Medium"}, ['args.mode: must be one of "Fast", "Slow", got "Medium"']),
        ({**GOOD, "tags": "a"}, ['args.tags: must be list[str], got "a"']),
        ({**GOOD, "tags": ["a", 2]}, ["args.tags[1]: must be str, got 2"]),
        ({**GOOD, "limits": {"x": "1"}}, ['args.limits.x: must be int, got "1"']),
        ({**GOOD, "band": {"low": 1, "hgh": 2}}, ["args.band.hgh: unknown field"]),
        ({**GOOD, "band": {}}, ["args.band.low: required field is missing"]),
        ({**GOOD, "bands": [{"low": 1}, {"low": "x"}]}, ['args.bands[1].low: must be int, got "x"']),
        ({**GOOD, "grace": 30}, ['args.grace: must be a duration string such as "1m30s", got 30']),
        ({"windowStart": "01:00"}, ["args.windowEnd: required field is missing"]),
    ],
)
def test_decode_errors(raw: dict[str, Any], expected: list[str]) -> None:
    args, errors = decode_args(WindowArgs, raw, "args")
    assert args is None
    assert [str(e) for e in errors] == expected


def test_bad_duration_message() -> None:
    _, errors = decode_args(WindowArgs, {**GOOD, "grace": "30 seconds"}, "p.args")
    (err,) = errors
    assert err.path == "p.args.grace" and "duration" in err.message


def test_all_errors_collected() -> None:
    _, errors = decode_args(WindowArgs, {"windowStart": 1, "bogus": 1, "tags": [1, 2]}, "a")
    assert sorted(e.path for e in errors) == sorted(
        ["a.bogus", "a.windowStart", "a.windowEnd", "a.tags[0]", "a.tags[1]"]
    )


def test_validate_hook_paths_are_prefixed() -> None:
    args, errors = decode_args(
        WindowArgs,
        {"windowStart": "05:00", "windowEnd": "01:00", "bands": [{"low": 9, "high": 2}]},
        "profiles[0].pluginConfig[1].args",
    )
    assert args is None
    assert errors == [
        FieldError("profiles[0].pluginConfig[1].args.windowEnd", "must be after windowStart"),
        FieldError("profiles[0].pluginConfig[1].args.bands[0].low", "must not exceed high"),
    ]


@dataclass
class HookedArgs:
    weight: int = 0
    calls: list[str] = field(default_factory=list)

    def set_defaults(self) -> None:
        self.calls.append("set_defaults")
        if self.weight == 0:
            self.weight = 1

    def validate(self) -> list[FieldError]:
        self.calls.append("validate")
        return [FieldError("", "whole object is wrong")] if self.weight > 10 else []


def test_set_defaults_runs_before_validate() -> None:
    args, errors = decode_args(HookedArgs, {}, "args")
    assert errors == [] and args is not None
    assert (args.weight, args.calls) == (1, ["set_defaults", "validate"])
    args, errors = decode_args(HookedArgs, {"weight": 11}, "args")
    assert args is None and errors == [FieldError("args", "whole object is wrong")]


def test_none_raw_gives_defaults_and_type_meta_is_accepted() -> None:
    assert decode_args(HookedArgs, None, "a")[0] == HookedArgs(1, ["set_defaults", "validate"])
    args, errors = decode_args(
        Band, {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "BandArgs", "low": 1}, "a"
    )
    assert (args, errors) == (Band(1, 100), [])


def test_non_mapping_raw() -> None:
    args, errors = decode_args(Band, [1, 2], "args")  # type: ignore[arg-type]
    assert args is None
    assert errors == [FieldError("args", "must be a mapping {low: int, high: int = 100}, got [1, 2]")]


def test_describe_args() -> None:
    assert describe_args(Band) == "{low: int, high: int = 100}"
    assert describe_args(WindowArgs) == (
        "{windowStart: str, windowEnd: str, bandwidthThreshold: int = 0, ratio: float = 0.5, "
        "enabled: bool = true, "
        'mode: "Fast" | "Slow" = "Fast", tags: list[str] = [], limits: dict[str, int] = {}, '
        "band: {low: int, high: int = 100} | None = null, bands: list[{low: int, high: int = 100}] = [], "
        "extra: any = null, grace: duration = 30s, gpuIDs: list[int] = []}"
    )
