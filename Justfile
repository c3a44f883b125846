# Convenience recipes; the README's plain commands need nothing but Python 3.11 and pip.

venv := ".venv/bin"

# Set up the virtualenv with the dev extras
setup:
    python3 -m venv .venv
    {{venv}}/python -m pip install --quiet -e '.[dev,mcp]'

# The workbench on a freshly built demo playbook
demo: setup
    {{venv}}/playbook demo

# The test suite (what CI runs)
test: setup
    {{venv}}/python -m pytest

# The long variants too (load, crash and fuzz suites at full size)
test-long: setup
    {{venv}}/python -m pytest -m "slow or not slow"

# Lint and format check
lint:
    {{venv}}/ruff check src tests bench scripts
    {{venv}}/ruff format --check src tests bench scripts

# Speed figures
bench:
    {{venv}}/python bench/curate.py
    {{venv}}/python bench/recall.py
    {{venv}}/python bench/cli.py
