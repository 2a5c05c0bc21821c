"""kube-scheduler's ``--feature-gates`` (v1.35, v1.36, v1.37): the gates it knows, and its parser's rules.

A kubeadm manifest may pass ``--feature-gates``; kubesched accepts exactly what kube-scheduler
of the selected release (v1.35.4 by default; v1.36.3, v1.37.2) accepts and refuses the rest with
kube-scheduler's messages. The flag is component-base's
(``compatibility.ComponentGlobalsRegistry``): repeatable, comma-separated ``[component:]key=value``
pairs where the only component is ``kube`` (and an empty prefix means ``kube``, but the two may not
be mixed); values are Go ``strconv.ParseBool`` booleans (``featuregate.Set``); unknown names, and
locked gates set away from their default, are errors; then gate dependencies are checked.

The gates (names, default, stage, lock, dependencies) are data, taken from each release's own
sources at its own emulation version (1.37 for v1.37.2) by ``scripts/extract_feature_gates.py``
into ``feature_gates_v1_35.json``, ``..._v1_36.json`` and ``..._v1_37.json`` (their ``_comment``
names the files). Releases differ in which gates exist (v1.37 dropped GangScheduling and
SchedulerQueueingHints), their defaults and locks, and in the wording of the GA/deprecated
warnings (component-base v0.36 made them structured log lines).

kubesched behaves as kube-scheduler of the selected release with every gate at its default. The
gates in :data:`HONOURED` change what it does (``OpportunisticBatching=false`` turns batching
off); the others set away from their default are accepted, kept on :class:`FeatureGates`, and
named by :meth:`FeatureGates.without_effect`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

__all__ = [
    "HONOURED",
    "OPPORTUNISTIC_BATCHING",
    "RELEASES",
    "FeatureGateError",
    "FeatureGates",
    "FeatureSpec",
    "known_feature_gates",
    "parse_feature_gates",
]

#: The only component whose gates kube-scheduler registers (``basecompatibility.DefaultKubeComponent``).
KUBE_COMPONENT = "kube"
#: featuregate's switches that set every gate of a stage not named explicitly.
ALL_ALPHA, ALL_BETA = "AllAlpha", "AllBeta"
#: upstream ``features.OpportunisticBatching`` (Beta, on in v1.35-v1.37): framework/batch.py.
OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
#: Gates whose value changes what kubesched does; the others are accepted and named as without
#: effect when set away from their default.
HONOURED: frozenset[str] = frozenset({OPPORTUNISTIC_BATCHING})

#: The releases whose gates are known (``feature_gates_v1_<minor>.json``), as ``--emulated-version``
#: spells them; the default keeps every caller on kubesched's default release.
RELEASES: tuple[str, ...] = ("1.35", "1.36", "1.37")
DEFAULT_RELEASE = "1.35"

_GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class FeatureGateError(ValueError):
    """``--feature-gates`` refused; ``errors`` holds one message per problem, upstream's wording."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


@dataclass(frozen=True)
class FeatureSpec:
    """One gate at its release's emulation version (featuregate's ``FeatureSpec``)."""

    default: bool
    #: ``ALPHA``, ``BETA``, ``""`` (GA) or ``DEPRECATED``, featuregate's prerelease strings.
    pre_release: str
    lock_to_default: bool = False


def _check_release(release: str) -> str:
    if release not in RELEASES:
        raise ValueError(f"unknown release {release!r} for feature gates: expected one of {', '.join(RELEASES)}")
    return release


@cache
def _data(release: str) -> dict[str, Any]:
    name = f"feature_gates_v1_{release.split('.')[1]}.json"
    text = resources.files(__package__).joinpath(name).read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


@cache
def _known(release: str) -> dict[str, FeatureSpec]:
    return {
        name: FeatureSpec(bool(s["default"]), str(s["preRelease"]), bool(s["lockToDefault"]))
        for name, s in _data(release)["gates"].items()
    }


def known_feature_gates(release: str = DEFAULT_RELEASE) -> dict[str, FeatureSpec]:
    """Every gate kube-scheduler of ``release`` ("1.35", "1.36" or "1.37") registers, by name,
    as it stands at that release's emulation version; any other release is a ValueError."""
    return dict(_known(_check_release(release)))


def _dependencies(release: str) -> dict[str, list[str]]:
    deps: dict[str, list[str]] = _data(release)["dependencies"]
    return deps


@dataclass
class FeatureGates:
    """The gates as set on the command line: ``explicit`` holds what the flag named (after
    AllAlpha/AllBeta expansion), every other gate is at its default."""

    explicit: dict[str, bool] = field(default_factory=dict)
    #: featuregate's warnings for GA and deprecated gates that were set.
    warnings: list[str] = field(default_factory=list)
    #: The keys as the flag named them, in order (AllAlpha, not the gates it expanded to).
    requested: dict[str, bool] = field(default_factory=dict)
    #: The release whose gates these are: defaults and names differ between releases.
    release: str = DEFAULT_RELEASE

    def enabled(self, name: str) -> bool:
        """featuregate's ``Enabled``; an unknown name is a programming error (KeyError)."""
        if name in self.explicit:
            return self.explicit[name]
        return _known(_check_release(self.release))[name].default

    def without_effect(self) -> list[str]:
        """``Name=value`` of each requested gate kubesched does not honour and that was set away
        from its default (set to its default, kubesched already behaves as asked)."""
        known = _known(_check_release(self.release))
        return [
            f"{name}={str(value).lower()}"
            for name, value in self.requested.items()
            if name not in HONOURED and value != known[name].default
        ]


def _go_quote(s: str) -> str:
    """Go's ``strconv.Quote`` for the common cases (what ParseBool's error shows)."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}.get(ch, f"\\x{ord(ch):02x}"))
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _parse_bool(key: str, value: str) -> bool:
    if value in _GO_TRUE:
        return True
    if value in _GO_FALSE:
        return False
    raise FeatureGateError(
        [f"invalid value of {key}={value}, err: strconv.ParseBool: parsing {_go_quote(value)}: invalid syntax"]
    )


def _by_component(values: Iterable[str]) -> dict[str, list[str]]:
    """cliflag's ColonSeparatedMultimapStringString (empty key allowed): ``[component:]pair``."""
    out: dict[str, list[str]] = {}
    for value in values:
        for pair in value.split(","):
            if not pair:
                continue
            component, sep, rest = pair.partition(":")
            key, val = (component.strip(), rest.strip()) if sep else ("", pair.strip())
            out.setdefault(key, []).append(val)
    return out


def _key_values(joined: str) -> dict[str, bool]:
    """featuregate's ``Set``: ``key=bool`` pairs, the last value of a key wins."""
    m: dict[str, bool] = {}
    for s in joined.split(","):
        if not s:
            continue
        key, sep, value = s.partition("=")
        key = key.strip()
        if not sep:
            raise FeatureGateError([f"missing bool value for {key}"])
        m[key] = _parse_bool(key, value.strip())
    return m


def parse_feature_gates(values: Iterable[str], release: str = DEFAULT_RELEASE) -> FeatureGates:
    """The ``--feature-gates`` flag values (it may be repeated), checked as kube-scheduler of
    ``release`` ("1.35", "1.36" or "1.37"; anything else is a ValueError) checks them; raises
    :class:`FeatureGateError`. Where upstream's order depends on Go's map iteration, this takes
    the order of the command line (one of upstream's orders)."""
    _check_release(release)
    by_component = _by_component(values)
    if "" in by_component and KUBE_COMPONENT in by_component:
        raise FeatureGateError(
            ["set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use"]
        )
    for component in by_component:
        if component not in ("", KUBE_COMPONENT):
            raise FeatureGateError([f"component not registered: {component}"])
    pairs = by_component.get("", []) + by_component.get(KUBE_COMPONENT, [])
    requested = _key_values(",".join(pairs))
    return _set_from_map(requested, _known(release), _dependencies(release), release)


def _stage_warning(stage: str, key: str, text: str, release: str) -> str:
    """featuregate's warning for setting a GA or deprecated gate: a printf line up to component-base
    v0.35, a structured (klog key/value) line from v0.36 on (feature_gate.go, unsafeSetFromMap)."""
    adjective = "deprecated" if stage == "DEPRECATED" else "GA"
    if release == "1.35":
        return f"Setting {adjective} feature gate {key}={text}. It will be removed in a future release."
    return (
        f'"Warning: setting {adjective} feature gate. It will be removed in a future release." '
        f"featureGate={_go_quote(key)} value={text}"
    )


def _set_from_map(
    requested: dict[str, bool],
    known: Mapping[str, FeatureSpec],
    dependencies: Mapping[str, list[str]],
    release: str = DEFAULT_RELEASE,
) -> FeatureGates:
    """featuregate's ``unsafeSetFromMap``: the first unknown name stops the check, locked gates are
    collected, AllAlpha/AllBeta fill in the gates of their stage not named, then dependencies."""
    errors: list[str] = []
    warnings: list[str] = []
    enabled: dict[str, bool] = {}
    for key, value in requested.items():
        spec = known.get(key)
        if spec is None:  # upstream stops here, with what it found so far
            raise FeatureGateError([*errors, f"unrecognized feature gate: {key}"])
        text = str(value).lower()
        if spec.lock_to_default and spec.default != value:
            errors.append(f"cannot set feature gate {key} to {text}, feature is locked to {str(spec.default).lower()}")
            continue
        if key in (ALL_ALPHA, ALL_BETA):
            stage = "ALPHA" if key == ALL_ALPHA else "BETA"
            for name, other in known.items():
                if name not in (ALL_ALPHA, ALL_BETA) and other.pre_release == stage:
                    enabled.setdefault(name, value)
        elif spec.pre_release in ("DEPRECATED", ""):
            warnings.append(_stage_warning(spec.pre_release, key, text, release))
        enabled[key] = value
    if errors:
        raise FeatureGateError(errors)

    def is_enabled(name: str) -> bool:
        return enabled[name] if name in enabled else known[name].default

    for feature in sorted(dependencies):
        if not is_enabled(feature):
            continue
        disabled = [dep for dep in dependencies[feature] if not is_enabled(dep)]
        if disabled:
            errors.append(f"{feature} is enabled, but depends on features that are disabled: [{' '.join(disabled)}]")
    if errors:
        raise FeatureGateError(errors)
    return FeatureGates(explicit=enabled, warnings=warnings, requested=dict(requested), release=release)
