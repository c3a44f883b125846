"""What a file to import looks like, told from its first bytes, and how big it may be.

Sniffing reads only the head of the file (no parse), so a file in the wrong format is
refused at once with the name of the format it looks like, and the size cap is checked
before anything is parsed.
"""

from __future__ import annotations

import re

# Files larger than this are refused before they are read; `--max-size` raises it. A
# cass-memory playbook of 100k rules is about 145 MB.
DEFAULT_MAX_BYTES = 512 * 1024 * 1024

PLAYBOOK_JSON = "playbook-json"
PLAYBOOK_YAML = "playbook-yaml"
CASS_PLAYBOOK = "cass-playbook"
CASS_BLOCKED_LOG = "cass-blocked-log"
CASS_DIARY = "cass-diary"
OTHER_JSON = "json"
OTHER_YAML = "yaml"
EMPTY = "empty"

NAMES = {
    PLAYBOOK_JSON: "a Playbook export in JSON",
    PLAYBOOK_YAML: "a Playbook export in YAML",
    CASS_PLAYBOOK: "a cass-memory playbook.yaml",
    CASS_BLOCKED_LOG: "a cass-memory blocked.log",
    CASS_DIARY: "a cass-memory diary",
    OTHER_JSON: "JSON that is not a Playbook export",
    OTHER_YAML: "YAML (or text) that is neither a Playbook export nor a cass-memory playbook",
    EMPTY: "an empty file",
}
# The --format that reads each kind.
FORMAT_FOR = {
    PLAYBOOK_JSON: "json",
    PLAYBOOK_YAML: "yaml",
    CASS_PLAYBOOK: "cass",
    CASS_BLOCKED_LOG: "cass",
    CASS_DIARY: "cass",
}

_HEAD = 64 * 1024
_JSON_FORMAT = re.compile(rb'"format"\s*:\s*"playbook-export"')
_YAML_FORMAT = re.compile(rb"^format:\s*['\"]?playbook-export\b", re.MULTILINE)
_CASS_KEYS = re.compile(rb"^(?:schema_version|bullets|deprecatedPatterns):", re.MULTILINE)
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*", re.IGNORECASE)


def sniff(data: bytes) -> str:
    """The kind of file `data` looks like (one of the constants above). Nothing but white
    space is `EMPTY`: what cass-memory leaves as a `blocked.log` when nothing was
    forgotten (`load` decides from the name and `--format` what an empty file is)."""
    from .cass.blocked_log import looks_like_blocked_log  # lazy: a cycle via interop.cass
    from .cass.diary import looks_like_diary  # lazy: a cycle via interop.cass

    head = data[:_HEAD].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head and not data[_HEAD:].strip():
        return EMPTY
    if head.startswith(b"{"):
        if looks_like_blocked_log(head):
            return CASS_BLOCKED_LOG
        if _JSON_FORMAT.search(head):
            return PLAYBOOK_JSON
        return CASS_DIARY if looks_like_diary(head) else OTHER_JSON
    if head.startswith(b"["):
        return OTHER_JSON
    if _YAML_FORMAT.search(head):
        return PLAYBOOK_YAML
    if _CASS_KEYS.search(head):
        return CASS_PLAYBOOK
    return OTHER_YAML


def parse_size(text: str) -> int:
    """Bytes from '512M', '1.5G', '200MB', '1GiB' or a plain number of bytes."""
    match = _SIZE.fullmatch(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (for example 512M or 2G)")
    number, unit = float(match.group(1)), match.group(2).lower()
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}[unit]
    return int(number * scale)


def show_size(n: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def too_large(size: int, cap: int) -> str:
    """The one-line refusal for a file over the cap."""
    return (
        f"the file is {show_size(size)}, over the {show_size(cap)} import cap "
        f"(raise it with --max-size, e.g. --max-size {show_size(size * 2).replace(' ', '')})"
    )
