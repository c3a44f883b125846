"""The workbench's panes: one interface (`base.Pane`), registered once (`registry.PANES`).

Kept empty so that walking the package's modules (as the layer tests do) loads no Textual.
"""
