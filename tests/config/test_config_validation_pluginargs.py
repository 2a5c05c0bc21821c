"""Per-plugin args validation with field paths.

Ported from pkg/scheduler/apis/config/validation/validation_pluginargs_test.go; the tables
live in data/validation_pluginargs.yaml. A row with ``release`` is that release's (where the
checks changed, v1.35.4's and v1.36+'s rows both); the others hold in every release.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import pytest
import yaml

import kubesched.config.plugin_args as plugin_args
from kubesched.config.args import decode_into, validate_args
from kubesched.config.errors import FieldError
from kubesched.config.plugin_args import NodeResourcesFitArgs, ScoringStrategy
from kubesched.config.releases import RELEASES, parse_emulated_version

CASES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "data" / "validation_pluginargs.yaml").read_text()
)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['type']}: {c['name']}" for c in CASES])
def test_validate_plugin_args(case: dict[str, Any]) -> None:
    # StorageCapacityScoring is on from v1.37 (the release stands for the gate, as kube_features.go has it).
    scoring = case.get("gates", {}).get("StorageCapacityScoring")
    cls = getattr(plugin_args, case["type"])
    decode_errors: list[FieldError] = []
    args = decode_into(cls, case["args"], "", decode_errors)
    assert decode_errors == []
    release = parse_emulated_version(case.get("release", "1.37" if scoring else str(RELEASES[0])))
    got = [e.path for e in validate_args(args, "", release)]
    assert sorted(got) == sorted(case["want"])


_DEFAULT_STRATEGY = ScoringStrategy(
    type="LeastAllocated",
    resources=[plugin_args.ResourceSpec("cpu", 1), plugin_args.ResourceSpec("memory", 1)],
)

# TestValidateFitArgs: (ignoredResources, ignoredResourceGroups, substring of the expected error)
FIT_ARGS_MESSAGES: list[tuple[str, list[str], list[str], str | None]] = [
    (
        "IgnoredResources: too long value",
        ["longvalue" + "a" * 64],
        [],
        "name part must be no more than 63 characters",
    ),
    ("IgnoredResources: name is empty", ["example.com/"], [], "name part must be non-empty"),
    (
        "IgnoredResources: name has too many slash",
        ["example.com/aaa/bbb"],
        [],
        "a qualified name must consist of alphanumeric characters",
    ),
    ("IgnoredResources: valid args", ["example.com"], [], None),
    ("IgnoredResourceGroups: valid args", [], ["example.com"], None),
    ("IgnoredResourceGroups: illegal args", [], ["example.com/"], "name part must be non-empty"),
    (
        "IgnoredResourceGroups: name is too long",
        [],
        ["a" * 64],
        "name part must be no more than 63 characters",
    ),
    (
        "IgnoredResourceGroups: name cannot be contain slash",
        [],
        ["example.com/aa"],
        "resource group name can't contain '/'",
    ),
]


@pytest.mark.parametrize(
    ("name", "resources", "groups", "expect"), FIT_ARGS_MESSAGES, ids=[c[0] for c in FIT_ARGS_MESSAGES]
)
def test_fit_args_messages(name: str, resources: list[str], groups: list[str], expect: str | None) -> None:
    args = NodeResourcesFitArgs(
        ignored_resources=resources, ignored_resource_groups=groups, scoring_strategy=_DEFAULT_STRATEGY
    )
    errors = validate_args(args, "args")
    if expect is None:
        assert errors == []
    else:
        assert errors, name
        assert any(expect in e.message for e in errors), errors
        prefix = "args.ignoredResources[0]" if resources else "args.ignoredResourceGroups[0]"
        assert all(e.path == prefix for e in errors)


def test_resource_weight_message_names_resource() -> None:
    args = NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            type="MostAllocated", resources=[plugin_args.ResourceSpec("nvidia.com/gpu", 101)]
        )
    )
    (err,) = validate_args(args, "args")
    assert str(err) == (
        "args.scoringStrategy.resources[0].weight: "
        "resource weight of nvidia.com/gpu not in valid range (0, 100], got 101"
    )


def test_qualified_name_alphabet() -> None:
    """IsQualifiedName accepts alphanumerics with '-', '_', '.' inside, and an optional prefix."""
    from kubesched.config.names import is_qualified_name

    assert is_qualified_name("example.com/My_Name-1.x") == []
    assert is_qualified_name("a") == []
    for bad_char in "!@#$%^&*() ":
        assert is_qualified_name(f"a{bad_char}b"), bad_char
    assert is_qualified_name("-a") and is_qualified_name("a-")
    assert is_qualified_name("Example.com/a"), "prefix must be a lowercase DNS subdomain"
    assert is_qualified_name(string.ascii_lowercase * 10 + "/a"), "prefix longer than 253"
