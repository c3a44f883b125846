"""The demo playbook: its content (pure data), how it is built and cached, and its writer."""
