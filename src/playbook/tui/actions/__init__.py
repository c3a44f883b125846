"""Workbench actions: the table (`table.ACTIONS`), what an action is (`spec`), and the rule
that says which apply to the selected thing (`rule.why_not`).

A new view adds its actions to the table; panes take their key bindings from it
(`rule.bindings_for`), and the app opens the dialog each one asks for (`tui.dialogs`).
(Nothing is imported here, so that walking the package imports no Textual.)
"""
