"""Interoperability with other playbook formats (cass-memory import)."""
