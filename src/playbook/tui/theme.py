"""The workbench's theme: deep ink background, soft blue primary, amber accent."""

from __future__ import annotations

from textual.theme import Theme

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
