"""One pass over a YAML playbook with libyaml, handing each bullet over as soon as it ends.

`yaml.safe_load` builds a node for every value (with two source marks each), then a Python
object for every node: on a 10k-rule playbook (14 MB) that is 7-28 s and 470 MB, and it keeps
the whole document alive until the end. This reader takes libyaml's event stream
(`CSafeLoader`, or PyYAML's own parser when libyaml is missing) and builds plain values
straight from the events, with PyYAML's safe resolution of plain scalars (YAML 1.1, as
`safe_load`: unquoted timestamps become datetimes, `true`/`yes` booleans...). The items of the
top-level `bullets` list are not kept: each is handed to a callback when it ends, so memory
holds one bullet at a time. It is about five times faster than `safe_load`.

Only the safe tags are accepted (null, bool, int, float, binary, timestamp, str, seq, map);
anything else, such as `!!python/object`, is refused. Aliases give the same object again
(never a copy), so the reader cannot be made to expand them; the caller's walk budget
bounds what a walk over shared objects can cost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import yaml
from yaml import events as ev
from yaml.nodes import ScalarNode

from ...core.collector import paused
from .records import CassImportError

OnItem = Callable[[int, Any, dict[Any, Any]], None]  # (index, value, the top mapping so far)
OnProgress = Callable[[int, int], None]  # (characters read, characters in all)

MAX_DEPTH = 200
_T = "tag:yaml.org,2002:"
_STR = _T + "str"
_TIMESTAMP = _T + "timestamp"
_SCALAR_TAGS = frozenset(_T + t for t in ("null", "bool", "int", "float", "binary", "timestamp"))
_MAP_TAGS = frozenset({None, "!", _T + "map"})
_SEQ_TAGS = frozenset({None, "!", _T + "seq"})
_NO_KEY = object()


class StreamResult:
    """The document with the streamed list left empty, and what the reader saw."""

    __slots__ = ("doc", "items", "saw_alias")

    def __init__(self, doc: Any, items: int, saw_alias: bool) -> None:
        self.doc = doc
        self.items = items  # how many items of the streamed list were handed over
        self.saw_alias = saw_alias


def stream_document(
    data: bytes | str,
    stream_key: str,
    on_item: OnItem,
    *,
    progress: OnProgress | None = None,
    every: int = 1000,
) -> StreamResult:
    """Read one YAML document; the items of the top-level mapping's `stream_key` list go to
    `on_item` as they end instead of into the document. Raises CassImportError."""
    loader_class = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    loader = loader_class(data)
    total = len(data)
    # The reader makes millions of small objects and no cycles: the cyclic collector would
    # only walk them again and again (a third of the time at 10k rules).
    try:
        with paused():
            return _run(loader, stream_key, on_item, progress, every, total)
    except yaml.YAMLError as exc:
        text = str(exc).strip()
        first = text.splitlines()[0] if text else type(exc).__name__
        if "utf-8" in text.lower() or "unicode" in text.lower():
            raise CassImportError(f"not UTF-8 text ({first})") from None
        raise CassImportError(f"not valid YAML: {first}") from None
    except (ValueError, TypeError, OverflowError) as exc:
        if isinstance(exc, CassImportError):
            raise
        # SafeConstructor raises these for values it recognises but cannot build,
        # e.g. the timestamp 2024-13-45 or an out-of-range date.
        raise CassImportError(f"the YAML has a value that cannot be read: {exc}") from None
    finally:
        loader.dispose()


def _run(
    loader: Any,
    stream_key: str,
    on_item: OnItem,
    progress: OnProgress | None,
    every: int,
    total: int,
) -> StreamResult:
    get = loader.get_event
    resolvers = loader.yaml_implicit_resolvers
    constructors = loader.yaml_constructors
    # A plain scalar is text unless it starts like a number, null, bool or timestamp; and
    # the same words (keys, mostly) come back all the time.
    starts = frozenset(resolvers)
    plain_text: set[str] = set()
    constants: dict[str, Any] = {}  # ... and the same few numbers, booleans and nulls
    anchors: dict[str, Any] = {}
    # One frame per open collection: [container, pending key, streamed?]
    stack: list[list[Any]] = []
    top: dict[Any, Any] | None = None
    doc: Any = None
    documents = 0
    items = 0
    saw_alias = False
    scalar_event, alias_event = ev.ScalarEvent, ev.AliasEvent
    map_start, seq_start = ev.MappingStartEvent, ev.SequenceStartEvent
    map_end, seq_end = ev.MappingEndEvent, ev.SequenceEndEvent

    while True:
        event = get()
        cls = event.__class__
        if cls is scalar_event:
            value = event.value
            if event.tag is not None or not event.implicit[0]:
                value = _scalar(loader, event, resolvers, constructors)
            elif value[:1] in starts and value not in plain_text:
                known = constants.get(value, _NO_KEY)
                if known is not _NO_KEY:
                    value = known
                else:
                    value = _scalar(loader, event, resolvers, constructors)
                    if len(event.value) < 32 and len(plain_text) + len(constants) < 100_000:
                        if value is event.value:
                            plain_text.add(value)
                        elif value is None or value.__class__ in (bool, int, float):
                            constants[event.value] = value
            if event.anchor is not None:
                anchors[event.anchor] = value
        elif cls is map_start or cls is seq_start:
            allowed = _MAP_TAGS if cls is map_start else _SEQ_TAGS
            if event.tag not in allowed:
                raise CassImportError(f"the YAML tag {event.tag!r} is not supported")
            if len(stack) >= MAX_DEPTH:
                raise CassImportError(f"the YAML is nested more than {MAX_DEPTH} levels deep")
            container: Any = {} if cls is map_start else []
            if not stack and cls is map_start:
                top = container
            if event.anchor is not None:
                anchors[event.anchor] = container
            streamed = (
                cls is seq_start
                and len(stack) == 1
                and stack[0][0] is top
                and stack[0][1] == stream_key
            )
            stack.append([container, _NO_KEY, streamed])
            continue
        elif cls is map_end or cls is seq_end:
            value = stack.pop()[0]
            if stack and stack[-1][2]:  # an item of the streamed list has ended
                on_item(items, value, top if top is not None else {})
                items += 1
                if progress is not None and items % every == 0:
                    progress(event.end_mark.index, total)
                continue
        elif cls is alias_event:
            saw_alias = True
            if event.anchor not in anchors:
                raise CassImportError(f"not valid YAML: found undefined alias {event.anchor!r}")
            value = anchors[event.anchor]
        elif cls is ev.DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise CassImportError("the file holds more than one YAML document")
            continue
        elif cls is ev.StreamEndEvent:
            break
        else:  # stream start, document end
            continue

        if not stack:
            doc = value
            continue
        frame = stack[-1]
        container = frame[0]
        if frame[2]:  # a scalar or alias item of the streamed list
            on_item(items, value, top if top is not None else {})
            items += 1
        elif container.__class__ is dict:
            if frame[1] is _NO_KEY:
                if value.__class__ is dict or value.__class__ is list:
                    raise CassImportError(
                        "not valid YAML for a playbook: a mapping key is a list or a mapping"
                    )
                frame[1] = value
            else:
                container[frame[1]] = value
                frame[1] = _NO_KEY
        else:
            container.append(value)
    if progress is not None:
        progress(total, total)
    return StreamResult(doc, items, saw_alias)


def _scalar(loader: Any, event: Any, resolvers: Any, constructors: Any) -> Any:
    value = event.value
    tag = event.tag
    if tag is None:
        if not event.implicit[0]:  # quoted, literal or folded: text
            return value
        for rtag, regexp in resolvers.get(value[:1], ()):
            if regexp.match(value):
                tag = rtag
                break
        else:
            return value
        if tag not in _SCALAR_TAGS:  # '<<' (merge) and '=' (value) are plain text here
            return value
    elif tag == "!" or tag == _STR:
        return value
    elif tag not in _SCALAR_TAGS:
        raise CassImportError(f"the YAML tag {tag!r} is not supported")
    if tag == _TIMESTAMP and len(value) > 10:
        try:  # the C parser of ISO 8601, fifty times faster; PyYAML's when it declines
            return datetime.fromisoformat(value)
        except ValueError:
            pass
    return constructors[tag](loader, ScalarNode(tag, value, style=event.style))
