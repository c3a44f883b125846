"""Where in the diary an item a model proposed came from: the best-matching passage.

Words are compared with the package-wide tokenizer (`playbook.core.text.query_tokens`: the
recall tokens, stop words dropped), ties broken by rapidfuzz.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

from rapidfuzz import fuzz

from playbook.core.text import POLARITY_WORDS, query_tokens
from playbook.reflection.diaries import Diary, Passage

__all__ = ["match_offset"]

T = TypeVar("T")


def _tokens(text: str) -> set[str]:
    """Subject words: recall's tokens without stop words or polarity words."""
    return {t for t in query_tokens(text) if t not in POLARITY_WORDS}


def match_offset(item: object, diary: Diary) -> int | None:
    """The offset of the line that best matches an item's text; None if nothing does.

    The item's text is its ``content``, ``context`` and ``reason`` strings plus any
    ``bullet_id(s)``. The best passage shares the most distinct tokens with it (stop words
    aside); ties go to the higher rapidfuzz ``token_sort_ratio``, then to the earlier
    passage. Within a paragraph of several lines, the best line by the same measure (the
    paragraph's first line if none shares a word). None when the item is not an object,
    has no text, or shares no token with any passage. Fields of the item that claim an
    offset are ignored.
    """
    return best_offset(item, passage_index(diary))


def passage_index(diary: Diary) -> list[tuple[Passage, set[str]]]:
    return [(p, _tokens(p.text)) for p in diary.passages]


def best_offset(item: object, index: list[tuple[Passage, set[str]]]) -> int | None:
    if not isinstance(item, Mapping) or not index:
        return None
    text = " ".join(
        v for k in ("content", "context", "reason") if isinstance(v := item.get(k), str)
    )
    query = _tokens(text)
    ids = item.get("bullet_ids")
    for bullet_id in [item.get("bullet_id"), *(ids if isinstance(ids, list) else [])]:
        if isinstance(bullet_id, str) and bullet_id:
            query.add(bullet_id.lower())
    if not query:
        return None
    found = _best(query, text, ((p, tokens, p.text) for p, tokens in index))
    if found is None:
        return None
    lines = found.lines()
    if len({offset for offset, _ in lines}) < 2:  # one line, or a transcript record
        return found.offset
    best_line = _best(query, text, ((o, _tokens(line), line) for o, line in lines))
    return found.offset if best_line is None else best_line


def _best(query: set[str], text: str, candidates: Iterable[tuple[T, set[str], str]]) -> T | None:
    """The candidate sharing the most tokens with `query`, ties to the higher fuzzy ratio
    of `text` against the candidate's text, then to the first; None if none shares one."""
    best: tuple[int, float] = (0, 0.0)
    found: T | None = None
    for candidate, tokens, candidate_text in candidates:
        overlap = len(query & tokens)
        if overlap == 0 or overlap < best[0]:
            continue
        score = (overlap, fuzz.token_sort_ratio(text, candidate_text) if text else 0.0)
        if score > best:
            best, found = score, candidate
    return found
