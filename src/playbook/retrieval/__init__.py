"""Recall (SPEC §6): `recall()`, how candidates are ranked, and semantic recall's vectors."""
