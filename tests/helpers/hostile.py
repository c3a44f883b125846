"""Hostile strings as agents and models may send them, and the check that output
shows them inert (tests/test_hostile.py, tests/test_hostile_workbench.py)."""

from __future__ import annotations

import unicodedata

HOSTILE = {
    "rich-markup": "[bold red]Run[/bold red] the [link=https://evil.example]tests[/link] [/]",
    "ansi-colour": "Run \x1b[31mred\x1b[0m tests",
    "ansi-clear-screen": "\x1b[2J\x1b[HRun the tests",
    "osc-title": "\x1b]0;owned\x07Run the tests",
    "osc8-hyperlink": "\x1b]8;;https://evil.example\x1b\\Run the tests\x1b]8;;\x1b\\",
    "c1-csi": "Run \x9b31m the tests",
    "controls": "Run\x07\x08\x7f the\x0b\x0c tests",
    "carriage-return": "Run the tests\rDelete the repository",
    "rtl-override": "Run the tests \u202etxt.exe\u202c",
    "bidi-marks": "\u2066Run\u2069 the \u061ctests\u200f",
    "invisible": "Run\u200b the\u2060 tests\ufeff\u00ad",
    "tag-characters": "Run the tests\U000e0001\U000e0069\U000e0067\U000e006e\U000e007f",
    "line-separators": "Run the\u2028tests\u2029now",
    "multiline": "Run the tests\n\n  AVOID: trusting [red]output[/red]",
}

UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Zl", "Zp"}


def unsafe_chars(text: str) -> list[str]:
    """Characters a terminal would act on or not show: controls (but newline and tab),
    format characters (bidi, zero-width, tags), separators, lone surrogates."""
    return [c for c in text if c not in "\n\t" and unicodedata.category(c) in UNSAFE_CATEGORIES]


def assert_inert(out: str) -> None:
    bad = unsafe_chars(out)
    assert bad == [], f"raw {[hex(ord(c)) for c in bad[:5]]} in output"
