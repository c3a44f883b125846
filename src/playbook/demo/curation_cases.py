"""What the demo gives the curator and the review queue beyond its rules: conflicting
proposals, near-duplicate rephrasings and blocked patterns (each refers to rules of
`content.RULES` by their exact text).

Pure data: no database, no Textual, no numpy.
"""

# One entry per line so the texts read (and diff) whole.
# ruff: noqa: E501

from typing import Final

#: word with the opposite polarity word (always/use vs never), so the curator adds it and flags
#: a conflict instead of folding it into a helpful vote.
CONFLICT_PAIRS: Final[tuple[tuple[str, str], ...]] = tuple(
    (existing, "Never " + existing.removeprefix("Always "))
    for existing in (
        "Always squash feature branch commits into a single commit when merging pull requests into main so release notes and git bisect stay readable",
        "Always mock external HTTP services in unit tests with recorded fixtures instead of calling the real staging endpoints from the test suite",
        "Always pin exact dependency versions in package.json for applications instead of caret ranges so installs are reproducible across machines",
        "Always run the full end-to-end browser test suite locally before pushing a frontend change to a shared branch",
        "Always run database migrations automatically during application startup in production deployments so schema and code versions stay in sync",
        "Always use an ORM query builder for application database access instead of writing raw SQL strings in the service layer",
    )
)

#: Groups of rephrasings of one idea, for the consolidation ("topics") view. ``group[0]`` is a
#: rule of :data:`RULES`; the others are extra bullets to add with the same category and tags.
#: They are close enough to be grouped but below the curator's fold threshold (token Jaccard
#: 0.85), so each survives as its own bullet until a human merges them.
NEAR_DUPLICATES: Final[tuple[tuple[str, ...], ...]] = (
    (
        "Run the full test suite before saying a change is done, not only the tests for the edited file",
        "Run the whole test suite before saying a change is done, not just the tests for the edited file",
        "Run the full test suite before reporting a change as done, not only the tests of the edited file",
    ),
    (
        "Read the first error in the CI log, not the last one; later failures are usually cascades",
        "Read the earliest error in the CI log, not the last one; the later failures are mostly cascades",
    ),
    (
        "Pin base images to a specific version tag or digest instead of `latest`",
        "Pin Docker base images to an exact version tag or a digest rather than `latest`",
    ),
    (
        "Reproduce the bug with a minimal command before changing any code",
        "Reproduce the bug with the smallest possible command before changing any code",
        "Reproduce the bug with a minimal command first, before editing any code",
    ),
    (
        "Make the smallest diff that solves the task and leave unrelated cleanups for a separate change",
        "Keep the diff as small as solving the task allows and leave unrelated cleanups for a separate change",
    ),
    (
        "Inject a clock into code that reads the current time so tests can pin it instead of sleeping",
        "Pass a clock into time-dependent code so tests can pin the current time instead of sleeping",
    ),
    (
        "Ask before running destructive commands such as `rm -rf`, `DROP`, force pushes or branch deletions",
        "Ask for confirmation before running destructive commands such as `rm -rf`, `DROP`, force pushes or deleting branches",
    ),
    (
        "Write a failing test that reproduces the bug before changing the code that fixes it",
        "Write a failing test that reproduces the bug first, then change the code that fixes it",
        "Write a failing test that demonstrates the bug before you change the code that fixes it",
    ),
)

#: ``(pattern, reason)``: proposals a human has blocked for good.
BLOCKED_PATTERNS: Final[tuple[tuple[str, str], ...]] = (
    (
        "Disable the failing test to get CI green",
        "Hides the regression the test caught; fix the code, or quarantine the test with a linked issue",
    ),
    (
        "Use --no-verify to skip pre-commit hooks",
        "The hooks run secret scanning and the formatters; fix what they report instead",
    ),
    (
        "Force push to main to clean up the history",
        "main is shared: never rewrite it, revert instead",
    ),
    (
        "Commit the .env file so deploys get their secrets",
        "Secrets live in the secret manager; a committed secret has to be rotated",
    ),
    (
        "Delete the lockfile and reinstall to fix dependency errors",
        "Silently upgrades every transitive dependency; regenerate the lockfile from the manifest",
    ),
    (
        "Run the migration by hand against the production database",
        "Production schema changes go through the deploy pipeline, after a verified backup",
    ),
)
