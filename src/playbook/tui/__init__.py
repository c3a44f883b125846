"""The curation workbench (Textual). Import `playbook.tui.app.Workbench` to run it.

This package is the only part of Playbook that imports Textual; nothing in the core
imports it (a test checks).
"""
