"""Text helpers shared by curation and recall: tokens, normalization, similarity, polarity."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from typing import Any

from .policy import DEFAULT_POLICY

TOKEN_RE = re.compile(r"[a-z0-9]+(?:[._\-+]+[a-z0-9]+)*[+#]*")

# A rule is a prohibition when it *starts* with one (SPEC §5 "Polarity"): `AVOID:`, Never,
# Don't, Do not, Avoid, or Stop followed by a verb in -ing ("Stop using yarn"; "Stop the
# server first" is an instruction). A word further in ("... so lockfile changes do not break
# publishing", "... to stop at the first failure") says nothing about the rule's polarity.
PROHIBITION = (
    r"""^[\s"'`*_>#-]*(?:avoid\b|never\b|don['\u2019]?t\b|do\s+not\b|stop\s+[a-z]+ing\b)"""
)


@functools.cache
def _prohibition() -> re.Pattern[str]:
    """PROHIBITION, compiled on first use (2.5 million instructions, which a one-shot
    `playbook recall` or `mark` never needs)."""
    return re.compile(PROHIBITION, re.IGNORECASE)


# Words that set a rule's polarity. They are left out of duplicate detection so that
# "Always X" and "Never X" are recognised as the same subject with opposite polarity.
POLARITY_WORDS = frozenset(
    """
    never avoid don dont do not must mustn should shouldn always use using prefer stop no
    longer forbid forbidden disallow refrain ensure
    """.split()
)


def tokens(text: str) -> list[str]:
    """Lower-cased tokens of at least two characters, in order (duplicates kept)."""
    return [t for t in TOKEN_RE.findall(text.lower()) if len(t) >= 2]


def query_tokens(text: str, stop_words: Iterable[str] | None = None) -> list[str]:
    """Distinct query tokens in order of first appearance, stop words dropped (the default
    policy's `query_stop_words` and `query_stop_words_extra` unless given)."""
    stop = _default_stop_words() if stop_words is None else frozenset(stop_words)
    seen: dict[str, None] = {}
    for t in tokens(text):
        if t not in stop:
            seen.setdefault(t, None)
    return list(seen)


@functools.cache
def _default_stop_words() -> frozenset[str]:
    return DEFAULT_POLICY.stop_words()


def strip_avoid(text: str) -> str:
    return re.sub(r"^\s*avoid\s*:\s*", "", text, flags=re.IGNORECASE)


def core_tokens(text: str) -> frozenset[str]:
    """The subject of a rule: its tokens without polarity words or an `AVOID:` prefix."""
    return frozenset(t for t in tokens(strip_avoid(text)) if t not in POLARITY_WORDS)


def jaccard(a: frozenset[str] | set[str], b: frozenset[str] | set[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def normalize(text: str) -> str:
    """Case, punctuation and spacing folded away: the form blocked patterns are compared in."""
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.findall(r"[a-z0-9]+", text))


def is_negative(text: str, bullet_type: str = "rule") -> bool:
    """Polarity: an anti-pattern, or a rule that starts with a prohibition."""
    return bullet_type == "anti-pattern" or _prohibition().match(text) is not None


def content_hash(text: str) -> str:
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


_sha256: Any = None  # the SHA-256 constructor, found on first use


def sha256_hex(data: bytes) -> str:
    """`hashlib.sha256(data).hexdigest()` from Python's own SHA-256 module where there is
    one: `hashlib` loads OpenSSL first (about 3 ms of a `mark` or a prompt hook, for a few
    digests of a few bytes). The same digest either way."""
    global _sha256
    if _sha256 is None:
        for name in ("_sha256", "_sha2"):  # Python 3.11; 3.12 on (private: no stubs)
            try:
                _sha256 = __import__(name).sha256
                break
            except ImportError:
                pass
        else:  # a build without them: OpenSSL's
            from hashlib import sha256  # lazy: mark, recall, hook prompt, every typer command

            _sha256 = sha256
    return str(_sha256(data).hexdigest())


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 event`, `2 events`, `1,200 events` (`many` for an irregular plural)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"
