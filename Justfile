# Convenience recipes; the README's plain commands need nothing but Python 3.11 and pip.
# `just` itself comes with the dev extra: after the README's test command, run
# `.venv/bin/just RECIPE` (or put .venv/bin on PATH).

venv := ".venv/bin"

# List the recipes
default:
    @{{just_executable()}} --list

# Set up the virtualenv with the dev extras
setup:
    python3 -m venv .venv
    {{venv}}/python -m pip install --quiet -e '.[dev,mcp]'

# The workbench on a freshly built demo playbook
demo: setup
    {{venv}}/playbook demo

# SVG and PNG screenshots of every workbench pane, from the demo (PNG: rsvg-convert, fonts-firacode)
screenshots: setup
    {{venv}}/python scripts/export_screenshots.py --out screenshots

# The test suite (what CI runs; parallel workers, see pyproject.toml)
test: setup
    {{venv}}/python -m pytest

# The long variants too (load, crash and fuzz suites at full size)
test-long: setup
    {{venv}}/python -m pytest -m "slow or not slow"

# Lint and format check
lint: setup
    {{venv}}/ruff check src tests bench scripts
    {{venv}}/ruff format --check src tests bench scripts

# The type checker (pyproject.toml's [tool.mypy]: strict on core/ and store/), as CI runs it
typecheck: setup
    {{venv}}/mypy

# Every bench script, then one table: figure, value, target, pass/miss (bench/run.py)
bench *SCRIPTS: setup
    {{venv}}/python bench/run.py {{SCRIPTS}}

# Build (once) the worlds `just bench team-year` measures: a team's year on SQLite and PostgreSQL
bench-worlds: setup
    {{venv}}/python bench/team_year.py --build
