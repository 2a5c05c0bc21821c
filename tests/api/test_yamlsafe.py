"""The bounded YAML reader every CLI input goes through (kubesched.api.yamlsafe).

Expectations are PyYAML's safe_load where it is right for JSON values (tag resolution of YAML 1.1
as sigs.k8s.io/yaml's go-yaml v2 does it) and the documented limits where it is not."""

from __future__ import annotations

import os
import resource
from pathlib import Path

import pytest

from kubesched.api.yamlsafe import (
    MAX_ALIAS_EXPANSION,
    MAX_DEPTH,
    YAMLInputError,
    load_yaml_documents,
    read_text_file,
)


def problems(text: str) -> list[tuple[str, int, int]]:
    with pytest.raises(YAMLInputError) as info:
        load_yaml_documents(text)
    return [(p.message, p.line, p.column) for p in info.value.problems]


def test_scalars_resolve_as_yaml_1_1_and_dates_stay_strings() -> None:
    text = (
        "a: 99999999999999999999\nb: 0x1F\nc: 1_000\nd: yes\ne: ~\nf: '1'\ng: !!str 5\nh: !!int '7'\n"
        "j: 1.5e3\nk: .inf\nm: 017\no: '2026-01-01'\np: 2026-01-01T00:00:00Z\nq:\n1: one\ntrue: t\n"
    )
    assert load_yaml_documents(text) == [{
        "a": 99999999999999999999, "b": 31, "c": 1000, "d": True, "e": None, "f": "1", "g": "5", "h": 7,
        # "1.5e3" has no dot: YAML 1.1 reads it as a string, as go-yaml v2 does.
        "j": "1.5e3", "k": float("inf"), "m": 15, "o": "2026-01-01", "p": "2026-01-01T00:00:00Z", "q": None,
        "1": "one", "true": "t",
    }]


def test_documents_empty_and_multiple() -> None:
    assert load_yaml_documents("") == []
    assert load_yaml_documents("---\n---\na: 1\n") == [None, {"a": 1}]
    assert load_yaml_documents('{"kind": "Pod", "x": [1, 2]}') == [{"kind": "Pod", "x": [1, 2]}]


def test_duplicate_keys_are_reported_with_both_lines() -> None:
    assert problems("a: 1\nb: 2\na: 3\nb: 4\n") == [
        ("duplicate key 'a' (first at line 1)", 3, 1),
        ("duplicate key 'b' (first at line 2)", 4, 1),
    ]


def test_merge_keys_and_aliases_are_copies() -> None:
    docs = load_yaml_documents("a: &x {b: 1}\nc:\n  <<: *x\n  b: 2\nd: [*x, *x]\n")
    assert docs == [{"a": {"b": 1}, "c": {"b": 2}, "d": [{"b": 1}, {"b": 1}]}]
    d = docs[0]
    d["d"][0]["b"] = 9  # JSON values: no reference shared between two uses of an anchor
    assert d["a"] == {"b": 1} and d["d"][1] == {"b": 1}


@pytest.mark.parametrize("text", ["a: \x01\n", "# a comment \x07\na: 1\n", "a: b\x1b[31m\n"])
def test_control_characters_even_in_comments(text: str) -> None:
    [(message, line, column)] = problems(text)
    assert "is not allowed" in message and line == 1 and column > 0


def test_key_that_is_a_collection() -> None:
    assert problems("[/]: 1\n") == [("a mapping key must be a string, not a list or a mapping", 1, 1)]


def test_unsupported_tags() -> None:
    assert problems("a: !!binary aGVsbG8=\n")[0][0].startswith("unsupported YAML tag 'tag:yaml.org,2002:binary'")
    assert problems("a: !!set {x}\n")[0][0].startswith("unsupported YAML tag")
    assert problems("a: !custom x\n")[0][0] == "unsupported YAML tag '!custom' (only JSON types are allowed)"


def test_syntax_error_has_its_line() -> None:
    [(message, line, _)] = problems("a: [1,\n")
    assert message.startswith("invalid YAML: ") and line == 2


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 3000, 300_000])
def test_deep_nesting_is_refused_without_recursion(depth: int) -> None:
    # 300,000 levels overflow the C stack in libyaml's composer (the process dies): refused first.
    [(message, _, _)] = problems("x: " + "[" * depth + "]" * depth)
    assert message == f"nesting deeper than {MAX_DEPTH} levels"


def test_nesting_at_the_limit_is_accepted() -> None:
    depth = MAX_DEPTH - 1  # the document's own mapping is one level
    doc = load_yaml_documents("x: " + "[" * depth + "]" * depth)[0]
    for _ in range(depth):
        doc = doc["x"] if isinstance(doc, dict) else doc[0] if doc else doc
    assert doc == []


def billion_laughs(levels: int) -> str:
    lines = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, levels):
        refs = ", ".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    return "\n".join(lines) + "\n"


def test_billion_laughs_is_refused_in_bounded_memory() -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    [(message, line, _)] = problems(billion_laughs(10))  # 9**10 = 3.5e9 strings if expanded
    assert message.startswith(f"aliases expand to more than {MAX_ALIAS_EXPANSION} nodes")
    assert line > 1
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 200 * 1024


def test_small_alias_use_is_accepted() -> None:
    # 9**4 = 6561 copies of a scalar, well within the budget
    docs = load_yaml_documents(billion_laughs(4))
    flat: list[object] = [docs[0]["a3"]]
    count = 0
    while flat:
        x = flat.pop()
        if isinstance(x, list):
            flat.extend(x)
        else:
            count += 1
    assert count == 9**4


def test_unknown_and_recursive_alias() -> None:
    assert problems("a: *nope\n")[0][0].startswith("unknown alias 'nope'")
    assert problems("a: &a\n  b: *a\n")[0][0].startswith("unknown alias 'a'")


def test_huge_integer_is_a_problem_not_a_crash() -> None:
    [(message, line, column)] = problems("a: " + "9" * 5000 + "\n")
    assert message.endswith("is not a valid int") and (line, column) == (1, 4)


# -- read_text_file ------------------------------------------------------------------------------
def read_problem(path: str | Path) -> str:
    with pytest.raises(YAMLInputError) as info:
        read_text_file(path)
    [p] = info.value.problems
    return p.message + p.where()


def test_regular_file_utf8_with_bom(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes("\ufeffa: ü\n".encode())
    assert read_text_file(f) == "a: ü\n"


def test_non_utf8_names_offset_and_line(tmp_path: Path) -> None:
    f = tmp_path / "a.yaml"
    f.write_bytes(b"a: 1\nb: \xff\xfe\n")
    assert read_problem(f) == "not valid UTF-8: byte 0xff at offset 8:2:4"


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    assert read_problem(fifo) == "is a FIFO, not a regular file"


def test_device_directory_missing_and_too_large(tmp_path: Path) -> None:
    assert read_problem("/dev/null") == "is a device, not a regular file"
    assert read_problem(tmp_path) == "is a directory, not a file"
    assert read_problem(tmp_path / "missing.yaml") == "no such file or directory"
    big = tmp_path / "big.yaml"
    big.write_bytes(b"a: 1\n" * 300)
    with pytest.raises(YAMLInputError) as info:
        read_text_file(big, max_bytes=1000)
    assert info.value.problems[0].message == "is 1500 bytes, larger than the limit of 1000 bytes"
