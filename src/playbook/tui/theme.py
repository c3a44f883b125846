"""The workbench's palette, as data: deep ink background, soft blue primary, amber accent.

The only Python file with colour codes (Textual themes are Python objects). Every style
the workbench draws is named in `text.tcss` with these colours as `$variables`; the
colours it names beyond Textual's own (`$primary`, `$accent`, `$success`, ...) are
`VARIABLES`, which every theme gets (`Workbench.get_theme_variable_defaults`) and the
playbook theme sets.
"""

from __future__ import annotations

from textual.theme import Theme

VARIABLES = {
    "pb-muted": "#565f89",  # ids of retired rows, ages, hints
    "pb-soft": "#a9b1d6",  # a rule's type, the footer's descriptions
    "pb-cyan": "#7dcfff",  # established rules, sessions and sources, helpful deltas
    "pb-orange": "#ff9e64",  # stale
    "pb-candidate": "#8fb8e8",  # candidate rules
}

PLAYBOOK_THEME = Theme(
    name="playbook",
    primary="#7aa2f7",
    secondary="#bb9af7",
    accent="#e0af68",
    foreground="#c0caf5",
    background="#11131c",
    surface="#171a26",
    panel="#20243a",
    success="#9ece6a",
    warning="#e0af68",
    error="#f7768e",
    dark=True,
    variables={
        **VARIABLES,
        "footer-key-foreground": "#e0af68",
        "footer-background": "#171a26",
        "footer-description-foreground": "#a9b1d6",
        "block-cursor-background": "#7aa2f7 35%",
        "block-cursor-foreground": "#c0caf5",
        "block-cursor-text-style": "none",
        "input-selection-background": "#7aa2f7 35%",
        "border": "#3b4261",
        "border-blurred": "#2a2f45",
    },
)
