"""Reading untrusted YAML (and JSON) input with bounded time and memory.

Every file the CLI reads — a KubeSchedulerConfiguration, manifests — goes through here, so every
one gets the same guarantees: a FIFO, a device or a directory is refused before it is opened (it
could block forever), the size is capped, the bytes must be UTF-8 (the error names the offset and
line), nesting and alias expansion are bounded before anything is built (a "billion laughs"
document is refused, not expanded), and a duplicate mapping key is reported with its line, as
sigs.k8s.io/yaml's strict decoding does. The result holds only JSON types, as the API server's
YAML-to-JSON conversion would give: dates stay strings and mapping keys are strings.

The limits are generous for real input (kube-scheduler's own configuration is a few kB; a
manifest of 10,000 pods is a few MB) and documented in docs/concepts.md.
"""

from __future__ import annotations

import copy
import os
import stat
from dataclasses import dataclass
from typing import Any

import yaml
import yaml.constructor
import yaml.reader
import yaml.resolver

__all__ = [
    "MAX_ALIAS_EXPANSION",
    "MAX_DEPTH",
    "MAX_INPUT_BYTES",
    "InputProblem",
    "YAMLInputError",
    "load_yaml_documents",
    "read_text_file",
]

#: Largest input file read (64 MiB): the 10 MB the CLI promises to handle, with room to spare.
MAX_INPUT_BYTES = 64 * 1024 * 1024
#: Deepest nesting of mappings and sequences. Kubernetes objects nest about 15 levels deep.
MAX_DEPTH = 200
#: Most nodes that aliases may add beyond the document's own nodes (go-yaml refuses "excessive
#: aliasing" on a similar budget): alias use in real manifests is small, a billion laughs is not.
MAX_ALIAS_EXPANSION = 100_000


@dataclass(frozen=True)
class InputProblem:
    """One problem at a place in the input (line and column 1-based, 0 when unknown)."""

    message: str
    line: int = 0
    column: int = 0

    def where(self) -> str:
        if not self.line:
            return ""
        return f":{self.line}:{self.column}" if self.column else f":{self.line}"


class YAMLInputError(ValueError):
    """The input cannot be read or parsed; ``problems`` lists every problem found."""

    def __init__(self, problems: list[InputProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(p.message for p in problems))


def read_text_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_INPUT_BYTES) -> str:
    """The file's text, refusing what is not a regular file, too large, or not UTF-8.

    ``stat`` before ``open``: opening a FIFO for reading blocks until a writer appears, so it must
    be refused without opening it. A regular file is read at most ``max_bytes + 1`` bytes."""
    try:
        st = os.stat(path)
    except OSError as err:
        raise YAMLInputError([InputProblem(_os_message(err))]) from None
    if stat.S_ISDIR(st.st_mode):
        raise YAMLInputError([InputProblem("is a directory, not a file")])
    if not stat.S_ISREG(st.st_mode):
        kind = "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(
            st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file"
        raise YAMLInputError([InputProblem(f"is {kind}, not a regular file")])
    if st.st_size > max_bytes:
        raise YAMLInputError([InputProblem(f"is {st.st_size} bytes, larger than the limit of {max_bytes} bytes")])
    try:
        with open(path, "rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as err:
        raise YAMLInputError([InputProblem(_os_message(err))]) from None
    if len(data) > max_bytes:
        raise YAMLInputError([InputProblem(f"is larger than the limit of {max_bytes} bytes")])
    return decode_utf8(data)


def decode_utf8(data: bytes) -> str:
    """Strict UTF-8 (a leading BOM is dropped, as YAML allows), naming the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        column = err.start - (data.rfind(b"\n", 0, err.start) + 1) + 1
        bad = data[err.start : err.start + 1].hex()
        raise YAMLInputError(
            [InputProblem(f"not valid UTF-8: byte 0x{bad} at offset {err.start}", line, column)]
        ) from None


def _os_message(err: OSError) -> str:
    return (err.strerror or str(err)).lower() if err.strerror else str(err)


# -- the loader ---------------------------------------------------------------------------------
# Why not yaml.safe_load: its composer recurses (libyaml's in C: a document nested a few hundred
# thousand levels deep overflows the C stack and kills the process), it expands aliases without a
# bound, keeps the last of duplicate keys, and builds dates and sets JSON does not have. Building
# Python values straight from the parser's event stream, in one iterative pass, fixes all four
# and is faster: on a 0.9 MB manifest of 3,000 pods, 1.7 s for CSafeLoader's load_all against
# about 1.1 s here (same machine, same load), because the slow part of PyYAML is its per-scalar
# resolver, which is memoised below.
try:
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML without libyaml
    from yaml import SafeLoader as _Parser  # type: ignore[assignment]

_TAG = "tag:yaml.org,2002:"
_RESOLVERS = yaml.resolver.Resolver.yaml_implicit_resolvers
_SCALARS = yaml.constructor.SafeConstructor()
_BUILDERS = {
    _TAG + "int": _SCALARS.construct_yaml_int,
    _TAG + "float": _SCALARS.construct_yaml_float,
    _TAG + "bool": _SCALARS.construct_yaml_bool,
    _TAG + "null": _SCALARS.construct_yaml_null,
}
#: Tags that build a plain string: JSON has no timestamps (the API server would see the text).
_STRING_TAGS = {None, "!", _TAG + "str", _TAG + "timestamp", _TAG + "value"}
_MERGE_TAG = _TAG + "merge"


def _implicit_tag(value: str) -> str | None:
    for tag, regexp in _RESOLVERS.get(value[:1] if value else "", ()):
        if regexp.match(value):
            return str(tag)
    return None


_NO_KEY: Any = object()


class _Frame:
    """A collection being built: a list, or a dict with its pending key and merge sources."""

    __slots__ = ("anchor", "anchor_start", "key", "key_event", "key_events", "merges", "start_event", "value")

    def __init__(self, value: dict[str, Any] | list[Any], anchor: str | None, anchor_start: int,
                 start_event: Any) -> None:
        self.value = value
        self.start_event = start_event
        self.anchor = anchor
        self.anchor_start = anchor_start
        self.key: Any = _NO_KEY
        self.key_event: Any = None
        #: The event of each key stored, in the dict's insertion order: the first line of a
        #: duplicate is found from its position, so no line is kept per key on the hot path.
        self.key_events: list[Any] = []
        self.merges: list[Any] = []


class _Builder:
    def __init__(self, max_depth: int, max_alias_expansion: int) -> None:
        self.max_depth = max_depth
        self.max_alias_expansion = max_alias_expansion
        self.stack: list[_Frame] = []
        self.anchors: dict[str, tuple[Any, int]] = {}
        self.nodes = 0  # nodes built, alias copies included
        self.expanded = 0  # nodes that alias copies added
        self.problems: list[InputProblem] = []
        self.root: Any = None
        self.cache: dict[str, Any] = {}

    # -- events -----------------------------------------------------------------------------
    def new_document(self) -> None:
        self.root, self.anchors = None, {}

    def scalar(self, event: Any) -> None:
        self.nodes += 1
        text: str = event.value
        tag = event.tag
        plain = tag is None and event.implicit[0]
        value: Any = text
        if plain:
            value = self.cache.get(text, _NO_KEY)
            if value is _NO_KEY:
                value = self.cache[text] = self._resolve(text, _implicit_tag(text), event)
        elif tag not in _STRING_TAGS:
            value = self._resolve(text, tag, event)
        if event.anchor:
            self.anchors[event.anchor] = (value, 1)
        self.emit(value, event, is_scalar=True, plain=plain, text=text)

    def _resolve(self, text: str, tag: str | None, event: Any) -> Any:
        if tag is None or tag in _STRING_TAGS or tag == _MERGE_TAG:
            return text
        build = _BUILDERS.get(tag)
        if build is None:
            self.fail(f"unsupported YAML tag {tag!r} (only JSON types are allowed)", event)
            return None
        try:
            return build(yaml.ScalarNode(tag, text))
        except (ValueError, yaml.YAMLError):
            kind = tag.removeprefix(_TAG)
            self.fail(f"{_short(text)} is not a valid {kind}", event)
            return None

    def start(self, event: Any, container: dict[str, Any] | list[Any]) -> None:
        self.nodes += 1
        if event.tag not in (None, "!", _TAG + "map", _TAG + "seq"):
            self.fail(f"unsupported YAML tag {event.tag!r} (only JSON types are allowed)", event)
        if len(self.stack) >= self.max_depth:
            raise _Stop(self.problem(f"nesting deeper than {self.max_depth} levels", event))
        self.stack.append(_Frame(container, event.anchor, self.nodes, event))

    def end(self, event: Any) -> None:
        frame = self.stack.pop()
        value = frame.value
        if frame.merges and isinstance(value, dict):
            for source in frame.merges:
                for k, v in source.items():
                    value.setdefault(k, v)
        if frame.anchor:
            self.anchors[frame.anchor] = (value, self.nodes - frame.anchor_start + 1)
        self.emit(value, frame.start_event, is_scalar=False, plain=False, text="")

    def alias(self, event: Any) -> None:
        found = self.anchors.get(event.anchor)
        if found is None:
            self.fail(f"unknown alias {event.anchor!r} (an alias must follow its anchor, and cannot be "
                      f"inside it)", event)
            self.emit(None, event, is_scalar=True, plain=False, text="")
            return
        value, size = found
        self.nodes += size
        self.expanded += size
        if self.expanded > self.max_alias_expansion:
            raise _Stop(self.problem(
                f"aliases expand to more than {self.max_alias_expansion} nodes (a document this size is "
                f"refused rather than expanded)", event))
        if isinstance(value, (dict, list)):
            value = copy.deepcopy(value)  # JSON has no shared references: each use is its own copy
        self.emit(value, event, is_scalar=isinstance(value, str), plain=False, text=value if isinstance(
            value, str) else "")

    def emit(self, value: Any, event: Any, *, is_scalar: bool, plain: bool, text: str) -> None:
        if not self.stack:
            self.root = value
            return
        top = self.stack[-1]
        container = top.value
        if type(container) is list:
            container.append(value)
            return
        key = top.key
        if key is _NO_KEY:
            if type(value) is str and not (plain and text == "<<"):
                top.key = value
            elif not is_scalar:
                self.fail("a mapping key must be a string, not a list or a mapping", event)
                top.key = None
            elif plain and text == "<<":
                top.key = _MERGE_KEY
            else:
                top.key = _key_text(value, text)
            top.key_event = event
            return
        top.key = _NO_KEY
        if key is None:
            return
        if key is _MERGE_KEY:
            sources = value if isinstance(value, list) else [value]
            if not all(isinstance(src, dict) for src in sources):
                self.fail("a merge key (<<) takes a mapping or a list of mappings", event)
                return
            top.merges.extend(sources)
            return
        if key in container:
            first = top.key_events[list(container).index(key)].start_mark
            self.problems.append(self.problem(f"duplicate key {key!r} (first at line {first.line + 1})",
                                              top.key_event))
            return
        container[key] = value
        top.key_events.append(top.key_event)

    # -- problems ---------------------------------------------------------------------------
    def problem(self, message: str, event: Any) -> InputProblem:
        mark = event.start_mark
        return InputProblem(message, mark.line + 1, mark.column + 1) if mark is not None else InputProblem(message)

    def fail(self, message: str, event: Any) -> None:
        self.problems.append(self.problem(message, event))


_MERGE_KEY: Any = object()


class _Stop(Exception):
    """A problem after which building the rest of the input is pointless (or unsafe)."""

    def __init__(self, problem: InputProblem) -> None:
        self.problem = problem


def _key_text(value: Any, text: str) -> str:
    """sigs.k8s.io/yaml turns a non-string key into its text (``1: x`` has key ``"1"``)."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return text


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")


def load_yaml_documents(text: str, *, max_depth: int = MAX_DEPTH,
                        max_alias_expansion: int = MAX_ALIAS_EXPANSION) -> list[Any]:
    """Every document of ``text`` as JSON values (``None`` for an empty document).

    Raises :class:`YAMLInputError` with the line and column of every problem found (a syntax
    error, a nesting or alias limit stop the reading at that point)."""
    parser = _Parser(text)
    docs: list[Any] = []
    b = _Builder(max_depth, max_alias_expansion)
    handlers: dict[type, Any] = {
        yaml.ScalarEvent: b.scalar,
        yaml.MappingStartEvent: lambda e: b.start(e, {}),
        yaml.SequenceStartEvent: lambda e: b.start(e, []),
        yaml.MappingEndEvent: b.end,
        yaml.SequenceEndEvent: b.end,
        yaml.AliasEvent: b.alias,
        yaml.DocumentStartEvent: lambda e: b.new_document(),
        yaml.DocumentEndEvent: lambda e: docs.append(b.root),
        yaml.StreamStartEvent: lambda e: None,
    }
    get_event = parser.get_event
    try:
        while True:
            event = get_event()
            if event is None or type(event) is yaml.StreamEndEvent:
                break
            handlers[type(event)](event)
    except _Stop as stop:
        b.problems.append(stop.problem)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "parse error"
        where = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
        if "maximum nesting depth" in problem:
            # libyaml >= 0.2.6 (PyYAML 6.0.4's wheels) has a nesting limit of its own, met while
            # scanning ahead of the events: the same problem as ours, in our words.
            b.problems.append(InputProblem(f"nesting deeper than {max_depth} levels", *where))
        else:
            b.problems.append(InputProblem(f"invalid YAML: {problem}", *where))
    except yaml.reader.ReaderError as err:
        b.problems.append(_reader_problem(err, text))
    except yaml.YAMLError as err:
        b.problems.append(InputProblem(f"invalid YAML: {' '.join(str(err).split())}"))
    finally:
        dispose = getattr(parser, "dispose", None)
        if dispose is not None:
            dispose()
    if b.problems:
        raise YAMLInputError(b.problems)
    return docs


def _reader_problem(err: yaml.reader.ReaderError, text: str) -> InputProblem:
    """A character YAML forbids (a control character, even in a comment): name it and its place."""
    pos = err.position
    line = text.count("\n", 0, pos) + 1
    column = pos - (text.rfind("\n", 0, pos) + 1) + 1
    ch = err.character
    code = f"#x{ch:04x}" if isinstance(ch, int) else repr(ch)
    return InputProblem(f"invalid YAML: character {code} is not allowed (control characters are not "
                        f"allowed, even in comments)", line, column)
