"""Worker processes for the load and crash tests (run in child processes, never by pytest)."""
