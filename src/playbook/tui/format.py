"""How bullet facts look on screen: one place for colours, labels and inert text.

Bullet content is untrusted (agents and models write it): it is always wrapped in
`rich.text.Text` (never parsed as markup) after `inert()` turned control, escape and bidi
characters into visible escapes.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from datetime import datetime

from rich.cells import cell_len
from rich.columns import Columns
from rich.style import Style
from rich.text import Text
from rich.theme import Theme

from ..core.inert import inert
from ..core.terms import DELTA_TYPES

# The styles the workbench draws Rich text with, by name. Each is a component class of the
# app, styled in text.tcss with the theme's variables (`.pb--muted { color: $pb-muted; }`);
# the app gives them to its console as a Rich theme (`rich_theme`), so `Text(style=MUTED)`
# takes its colour from the theme in use. No colour is written here.
MUTED = "pb--muted"
MUTED_BOLD = "pb--muted-bold"
MUTED_ITALIC = "pb--muted-italic"
GOOD = "pb--good"
BAD = "pb--bad"
BAD_BOLD = "pb--bad-bold"
BAD_BADGE = "pb--bad-badge"  # STALE on a proposal whose target moved
ACCENT = "pb--accent"
ACCENT_BOLD = "pb--accent-bold"
ID = "pb--id"  # a bullet's id
ID_BOLD = "pb--id-bold"
TAGS = "pb--tags"
SOURCE = "pb--source"  # a session, a diary, where a rule came from
STALE = "pb--stale"
MOVED = "pb--moved"  # then and now: moved most in score
DIFF_DELETED = "diff--deleted"  # words a rewrite takes out
DIFF_INSERTED = "diff--inserted"  # and puts in
MATURITY_STYLE = {m: f"maturity--{m}" for m in ("candidate", "established", "proven", "deprecated")}
MATURITY_GLYPH = {"candidate": "○", "established": "◐", "proven": "●", "deprecated": "✕"}
TYPE_LABEL = {"rule": "rule", "anti-pattern": "avoid"}
TYPE_STYLE = {"rule": "type--rule", "anti-pattern": "type--anti-pattern"}
DELTA_STYLE = {t: f"delta--{t}" for t in DELTA_TYPES}  # each styled in text.tcss
STYLE_NAMES = (
    MUTED,
    MUTED_BOLD,
    MUTED_ITALIC,
    GOOD,
    BAD,
    BAD_BOLD,
    BAD_BADGE,
    ACCENT,
    ACCENT_BOLD,
    ID,
    ID_BOLD,
    TAGS,
    SOURCE,
    STALE,
    MOVED,
    DIFF_DELETED,
    DIFF_INSERTED,
    *MATURITY_STYLE.values(),
    *TYPE_STYLE.values(),
    *DELTA_STYLE.values(),
)


def rich_theme(style_of: Callable[[str], Style]) -> Theme:
    """Every name of `STYLE_NAMES` as a Rich style (`style_of`: the app's component style)."""
    return Theme({name: style_of(name) for name in STYLE_NAMES})


def untrusted(text: str | None, *, one_line: bool = False, style: str | Style = "") -> Text:
    """Agent-written text, shown exactly as text: no markup, no escapes acted on."""
    return Text(inert(text or "", one_line=one_line), style=style)


def bold(text: Text) -> Text:
    """`text` in bold on top of its named style (a style name takes no "bold" before it)."""
    text.stylize("bold")
    return text


def flow(items: list[Text], gap: int = 3) -> Columns:
    """Short items (a label and its number) side by side as far as the width allows, then
    on the next line: an item is never broken ("harm" on one line, "0.00" on the next)."""
    return Columns(items, padding=(0, gap))


def fit(forms: list[str], width: int) -> str:
    """The first of `forms` (longest first) that fits in `width` cells, else the last."""
    return next((f for f in forms if cell_len(f) <= width), forms[-1])


def maturity(m: str, *, glyph: bool = True) -> Text:
    label = f"{MATURITY_GLYPH.get(m, ' ')} {m}" if glyph else m
    return Text(label, style=MATURITY_STYLE.get(m, ""))


def bullet_type(t: str) -> Text:
    return Text(TYPE_LABEL.get(t, t), style=TYPE_STYLE.get(t, ""))


def score(value: float, *, signed: bool = True) -> Text:
    if abs(value) < 0.005:
        return Text("0.00", style=MUTED)
    text = f"{value:+z.2f}" if signed else f"{value:.2f}"
    return Text(text, style=GOOD if value > 0 else BAD)


def amount(value: float, colour: str) -> Text:
    if value < 0.005:
        return Text("·", style=MUTED)
    return Text(f"{value:.1f}", style=colour)


_KEYWORD = re.compile(r"[A-Z][A-Z _-]{1,20}:")


def reflow(text: str) -> str:
    """Join hard-wrapped lines of prose so a narrow panel wraps them itself; lists, headings,
    quotes and code blocks keep their lines."""
    out: list[str] = []
    fenced = False
    for line in text.strip().splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            out.append(line)
            continue
        structural = (
            fenced
            or not stripped
            or stripped[0] in "-*#>|["
            or _KEYWORD.match(stripped) is not None
            or stripped[:2].rstrip(".)").isdigit()
            or line.startswith("    ")
        )
        if structural or not out or not out[-1].strip() or out[-1].lstrip()[:1] in "#|`":
            out.append(line)
        else:
            out[-1] = out[-1].rstrip() + " " + stripped
    return "\n".join(out)


def tags(raw: str | list[str]) -> str:
    items = json.loads(raw) if isinstance(raw, str) else raw
    return " ".join(f"#{t}" for t in items)


def short_delta(
    delta: dict[str, object], content_of: Callable[[str], str | None] | None = None
) -> str:
    """A proposal in a few words: what it would do (with the target's text when known)."""
    kind = str(delta.get("type", "?"))
    if isinstance(delta.get("content"), str):  # a delta that writes a rule: its text
        return str(delta["content"])
    target = str(delta.get("bullet_id", ""))
    about = content_of(target) if content_of else None
    about = f" {about}" if about else ""
    if kind in ("helpful", "harmful"):
        why = delta.get("reason") or ""
        return f"{target}{f' ({why})' if why else ''}{about}"
    if kind == "deprecate":
        return f"{target}{about}  because: {delta.get('reason', '')}"
    return json.dumps(delta)


def format_age(then: datetime, now: datetime) -> str:
    """'3d ago', '5h ago', '2mo ago': compact, for tables."""
    seconds = (now - then).total_seconds()
    if seconds < 0:
        return "soon"
    minutes = seconds / 60
    if minutes < 1:
        return "now"
    if minutes < 60:
        return f"{int(minutes)}m ago"
    hours = minutes / 60
    if hours < 24:
        return f"{int(hours)}h ago"
    days = hours / 24
    if days < 60:
        return f"{int(days)}d ago"
    months = days / 30.44
    if months < 24:
        return f"{math.floor(months)}mo ago"
    return f"{days / 365.25:.1f}y ago"


def moment(when: datetime) -> str:
    """A time-travel moment: the date alone at midnight UTC, else the date and the time."""
    if (when.hour, when.minute, when.second) == (0, 0, 0):
        return f"{when:%Y-%m-%d}"
    return f"{when:%Y-%m-%d %H:%M}"
