"""The demo's rules about writing, testing and shipping code: git, CI, testing, and the
languages (Python, TypeScript, Rust, Go). The first half of the rule table, in load order
(`content.RULES` reads this table, then `rules_systems.TABLE`).

Pure data: no database, no Textual, no numpy.
"""

# The rule table keeps one rule per line so it reads (and diffs) as a table.
# ruff: noqa: E501

from typing import Final

# profile | kind | scope ("global", "language:<lang>", "workspace:<repo>") | tags | content
# A content starting with "AVOID: " is an anti-pattern; every other line is a rule.
# The grammar is `vocabulary.parse_rules`'s.
TABLE: Final = r"""
[git]
proven      | workflow_rule | global                     | git,review                         | Run `git status` and `git diff --staged` before every commit to confirm only the intended files are staged
proven      | convention    | global                     | git,commits                        | Write commit messages that say why the change was made, not only which files changed
proven      | workflow_rule | global                     | git,commits                        | Keep each commit to one logical change so it can be reverted or bisected on its own
fading      | tooling       | global                     | git,bisect                         | Use `git bisect run` with the failing test command to find the commit that introduced a regression
contested   | convention    | global                     | git,rebase,review                  | Always squash feature branch commits into a single commit when merging pull requests into main so release notes and git bisect stay readable
candidate   | tooling       | global                     | git,worktree                       | Use `git worktree add` for a second branch instead of stashing half-finished work
established | pitfall       | global                     | git,lockfiles,merge                | Resolve lockfile merge conflicts by regenerating the lockfile from the merged manifest, not by hand-editing it
fading      | tooling       | global                     | git,history                        | Use `git log -S 'symbol'` to find the commit that added or removed a string
proven      | workflow_rule | global                     | git,safety                         | Ask before running `git reset --hard`, `git clean -fdx` or `git checkout -- .` because they destroy uncommitted work
proven      | pitfall       | global                     | git,push,safety                    | AVOID: Running `git push --force` on a shared branch; use `--force-with-lease` on your own branch instead
established | pitfall       | global                     | git,generated                      | AVOID: Committing with `git commit -am` in a repository with build outputs checked in; it stages regenerated artifacts too
harmful     | workflow_rule | global                     | git,staging                        | Use `git add -A` to stage everything before committing an agent session's changes
established | convention    | global                     | git,gitignore                      | Add editor, OS and virtualenv artifacts to `.gitignore` in the same commit that first produces them
candidate   | tooling       | global                     | git,blame                          | Use `git blame -w -C` to skip whitespace changes and follow moved lines when tracing why code exists
fading      | tooling       | global                     | git,hooks,pre-commit               | Run `pre-commit run --all-files` after changing the hook config, since hooks only check staged files by default
stale       | convention    | workspace:infra-terraform  | git,ci,branches                    | Use the `master` branch name in CI triggers for the infra repository
fading      | pitfall       | global                     | git,submodules                     | Run `git submodule update --init --recursive` after checkout when a build fails with missing vendored sources
established | pitfall       | global                     | git,secrets                        | AVOID: Rewriting history on `main` to remove a leaked secret without rotating the secret first
candidate   | convention    | global                     | git,commits,issues                 | Reference the issue number in the commit body rather than the subject line so subjects stay short
contested   | pitfall       | global                     | git,review                         | AVOID: Amending a commit that has already been pushed and reviewed; add a fixup commit instead
fading      | technique     | global                     | git,reflog,recovery                | Recover a branch deleted by mistake with `git reflog` before assuming the work is lost
candidate   | workflow_rule | global                     | git,conflicts                      | Run the tests after resolving merge conflicts, even when every conflict looked trivial
candidate   | pitfall       | global                     | git,rebase,conflicts               | AVOID: Resolving a rebase conflict by taking `--theirs` for a whole file without reading both sides
fading      | pitfall       | global                     | git,lfs,binaries                   | AVOID: Committing large binary files directly; use Git LFS or an artifact store
[ci]
proven      | workflow_rule | global                     | ci,pytest,flaky                    | Run `pytest -x --lf` locally after a failing CI job before re-running the whole suite
proven      | workflow_rule | global                     | ci,logs                            | Read the first error in the CI log, not the last one; later failures are usually cascades
proven      | tooling       | global                     | ci,cache                           | Key CI dependency caches on the lockfile hash so a dependency change invalidates the cache
established | convention    | global                     | ci,versions                        | Pin the exact Node and Python versions in CI to the ones in `.nvmrc` and `.python-version`
established | tooling       | global                     | ci,github-actions,supply-chain     | Pin third-party GitHub Actions to a full commit SHA rather than a mutable tag
established | tooling       | global                     | ci,npm,release                     | Pin npm to 11 in release jobs so lockfile format changes do not break publishing
proven      | workflow_rule | global                     | ci,reproduce,docker                | Reproduce a CI-only failure in the same container image locally before changing code
proven      | pitfall       | global                     | ci,flaky                           | AVOID: Re-running a failed CI job repeatedly hoping it passes; capture the failure and look for the race
harmful     | workflow_rule | global                     | ci,docker,postgres                 | Use `sleep 10` in CI scripts to wait for the database container to be ready
fading      | tooling       | global                     | ci,matrix                          | Set `fail-fast: false` on test matrices so one failing Python version does not hide the others
established | convention    | global                     | ci,artifacts                       | Upload test reports and logs as artifacts on failure so the next session can read them without re-running
candidate   | tooling       | global                     | ci,github-actions                  | Use a `concurrency` group with `cancel-in-progress` on pull-request workflows to stop superseded runs
stale       | tooling       | global                     | ci,github-actions,versioning       | Use `actions/checkout@v2` with `fetch-depth: 0` so tags are available for versioning
candidate   | pitfall       | global                     | ci,timezone                        | Set `TZ=UTC` in CI so date-dependent tests behave the same as on developer machines
contested   | workflow_rule | global                     | ci,e2e,merge                       | Make every CI job required for merge, including the slow end-to-end suite
established | pitfall       | global                     | ci,cache,node                      | AVOID: Caching `node_modules` directly in CI; cache the package manager store instead
proven      | workflow_rule | global                     | ci,release,packaging               | Run the release job's build step in dry-run mode on pull requests so packaging breaks before tagging
fading      | pitfall       | global                     | ci,secrets,forks                   | Remember that secrets are not available to workflows triggered from forks, so gate those steps on the repository
candidate   | tooling       | global                     | ci,act                             | Use `act` only for syntax checks of workflows; it does not reproduce GitHub-hosted runner images faithfully
fading      | convention    | global                     | ci,timeouts                        | Set an explicit `timeout-minutes` on every CI job so a hung test fails in minutes, not hours
established | workflow_rule | global                     | ci,github-actions                  | AVOID: Editing workflow YAML directly on `main` to test a CI change; iterate on a branch with `workflow_dispatch`
established | tooling       | global                     | ci,shell,lint                      | Run `shellcheck` on CI shell scripts, since most CI script bugs are unquoted variables
candidate   | pitfall       | global                     | ci,shell                           | Start CI shell steps with `set -euo pipefail` so a failing command in a pipeline fails the step
contested   | convention    | global                     | ci,runners,images                  | AVOID: Running CI on `ubuntu-latest`; name the exact runner image so upgrades are deliberate
candidate   | pitfall       | global                     | ci,github-actions                  | AVOID: Marking a CI step `continue-on-error: true` to turn its check green
[testing]
proven      | workflow_rule | global                     | testing,pytest,done                | Run the full test suite before saying a change is done, not only the tests for the edited file
proven      | workflow_rule | global                     | testing,regression                 | Write a failing test that reproduces the bug before changing the code that fixes it
established | tooling       | global                     | testing,pytest                     | Use `pytest -k name -vv` to run and inspect one test instead of the whole module while iterating
established | technique     | global                     | testing,flaky,pytest               | Run a suspected flaky test in a loop with `pytest-repeat` (`--count 50`) to measure its failure rate before fixing it
established | technique     | global                     | testing,flaky,ordering             | Use `pytest -p randomly` with a fixed `--randomly-seed` to expose tests that depend on execution order
proven      | convention    | global                     | testing,fixtures,pytest            | Use the `tmp_path` fixture instead of writing test files into the repository or `/tmp` by hand
proven      | pitfall       | global                     | testing,time,clock                 | Inject a clock into code that reads the current time so tests can pin it instead of sleeping
fading      | convention    | global                     | testing,fixtures                   | Keep fixtures in the nearest `conftest.py` that needs them rather than one global conftest
established | pitfall       | global                     | testing,exceptions                 | AVOID: Asserting on the exact text of exception messages from third-party libraries; assert on the exception type
proven      | workflow_rule | global                     | testing,ci,honesty                 | AVOID: Deleting or skipping a failing test to make a change pass; fix the code or ask
harmful     | workflow_rule | global                     | testing,flaky,ci                   | Wrap flaky tests with `@pytest.mark.flaky(reruns=5)` so CI stays green
harmful     | workflow_rule | global                     | testing,async,flaky                | Increase test timeouts to 60 seconds whenever an async test is flaky
contested   | convention    | global                     | testing,mocks,http                 | Always mock external HTTP services in unit tests with recorded fixtures instead of calling the real staging endpoints from the test suite
candidate   | tooling       | global                     | testing,hypothesis,property        | Use Hypothesis for parsers and serializers; a round-trip property finds edge cases that examples miss
established | pitfall       | global                     | testing,env,monkeypatch            | Set and remove environment variables with `monkeypatch.setenv` and `delenv` instead of mutating `os.environ` in tests
fading      | tooling       | global                     | testing,coverage                   | Run `coverage report --skip-covered` after the tests to find untested branches in the changed module
established | technique     | global                     | testing,snapshots                  | Review snapshot test diffs line by line before accepting them with `--snapshot-update`
proven      | pitfall       | global                     | testing,sleep,flaky                | AVOID: Using `time.sleep` in tests to wait for background work; wait on an event or poll with a deadline
candidate   | convention    | global                     | testing,parametrize                | Give `pytest.mark.parametrize` cases readable `ids` so a failure names the case that broke
established | pitfall       | global                     | testing,xdist,isolation            | Make tests safe for `pytest -n auto` by never sharing files, ports or databases between workers
fading      | technique     | global                     | testing,network                    | Block real network access in tests with `pytest-socket` so an accidental HTTP call fails loudly
contested   | convention    | global                     | testing,coverage,review            | Require 90% line coverage on every pull request
stale       | tooling       | workspace:legacy-worker    | testing,setuptools                 | Run the test suite through `python setup.py test` in the legacy worker package
established | technique     | language:python            | testing,asyncio                    | Mark async tests with `pytest.mark.asyncio` or set `asyncio_mode = auto` instead of calling `asyncio.run` inside tests
candidate   | pitfall       | global                     | testing,fixtures,scope             | Check fixture scope when a test passes alone but fails in the suite; a module-scoped fixture may carry state
candidate   | pitfall       | global                     | testing,design                     | AVOID: Testing private helpers directly when the public function already covers them; it freezes the implementation
harmful     | workflow_rule | language:python            | testing,time,conftest              | Mock `datetime.now` globally in the root conftest so every test sees the same time
candidate   | tooling       | global                     | testing,pytest,markers             | Register custom pytest markers in the config and run with `--strict-markers` so a typo does not silently skip tests
fading      | pitfall       | global                     | testing,state,isolation            | AVOID: Sharing mutable module-level state between tests; build fresh objects in fixtures
candidate   | pitfall       | global                     | testing,assertions                 | AVOID: Writing tests that still pass when the code under test is deleted; watch each new test fail first
[python]
proven      | workflow_rule | language:python            | python,venv                        | Call the project's virtualenv interpreter explicitly (`.venv/bin/python -m pytest`) instead of whatever `python` is on PATH
fading      | convention    | language:python            | python,packaging                   | Declare dependencies in `pyproject.toml` and keep `requirements.txt` only as a generated lock, if at all
established | tooling       | language:python            | python,ruff,lint                   | Run `ruff check --fix` and `ruff format` on changed files before committing Python changes
proven      | pitfall       | language:python            | python,packaging,imports           | Use the `src/` layout so tests import the installed package rather than the working-directory copy
established | pitfall       | language:python            | python,defaults                    | Default mutable arguments to `None` and create the list or dict inside the function
proven      | pitfall       | language:python            | python,exceptions                  | AVOID: Bare `except:` or `except Exception: pass`; catch the specific exception and log or re-raise it
established | convention    | language:python            | python,typing                      | Add type hints to every new public function and run the type checker on the changed files
candidate   | tooling       | language:python            | python,uv,venv                     | Use `uv sync` to create a reproducible environment from the lockfile at the start of a session
established | pitfall       | language:python            | python,packaging,wheel             | Include non-Python files such as templates and `py.typed` in package data, then check the built wheel contains them
fading      | tooling       | language:python            | python,pypi,release                | Run `twine check dist/*` before uploading to catch README rendering errors on PyPI
established | workflow_rule | language:python            | python,pip,venv                    | AVOID: Running `pip install` into the system interpreter during a session; install into the project venv
harmful     | workflow_rule | language:python            | python,typing,mypy                 | Add `# type: ignore` to silence type errors introduced by a refactor
harmful     | workflow_rule | language:python            | python,warnings,ci                 | Set `PYTHONWARNINGS=ignore` in CI to keep the logs readable
stale       | tooling       | language:python            | python,setuptools                  | Use `python setup.py develop` for editable installs of internal packages
stale       | tooling       | workspace:data-monorepo    | python,pip,ci                      | Pin `pip<23.1` in CI images to avoid resolver backtracking on the monorepo
established | convention    | language:python            | python,pathlib                     | Use `pathlib.Path` instead of string concatenation for file paths
established | pitfall       | language:python            | python,datetime,utc                | Use aware UTC datetimes (`datetime.now(UTC)`) and convert to local time only for display
candidate   | convention    | language:python            | python,dataclasses                 | Prefer frozen dataclasses for value objects so accidental mutation fails at the call site
contested   | convention    | language:python            | python,typing,imports              | Put `from __future__ import annotations` at the top of every module
established | pitfall       | language:python            | python,subprocess                  | Pass `check=True` to `subprocess.run` so a failing command raises instead of continuing silently
fading      | pitfall       | language:python            | python,asyncio                     | Keep a reference to tasks created with `asyncio.create_task`, otherwise they can be garbage-collected mid-flight
candidate   | tooling       | language:python            | python,startup,imports             | Use `python -X importtime` to find slow imports when CLI startup is sluggish
candidate   | convention    | language:python            | python,logging                     | Use `logging.getLogger(__name__)` in library code and leave handler configuration to the application
established | pitfall       | language:python            | python,dependencies                | AVOID: Editing files under `site-packages` to patch a dependency; pin a fixed version or vendor the patch
fading      | pitfall       | language:python            | python,pydantic,migration          | Run `bump-pydantic` and read the migration guide before moving a codebase from pydantic v1 to v2
stale       | tooling       | workspace:analytics-etl    | python,black,format                | Run `black --target-version py37` on the analytics package before committing
fading      | pitfall       | language:python            | python,encoding,windows            | Pass `encoding="utf-8"` to `open()` explicitly; the default encoding differs on Windows
candidate   | pitfall       | language:python            | python,syntax                      | Check `requires-python` in `pyproject.toml` before using syntax like `match` or `except*`
stale       | tooling       | language:python            | python,pre-commit,lint             | Run `flake8`, `isort` and `black` as three separate pre-commit hooks
candidate   | pitfall       | language:python            | python,imports,cycles              | Break circular imports by moving the shared types into their own module, not by importing inside functions
fading      | pitfall       | language:python            | python,imports,stdlib              | AVOID: Naming local modules after the standard library, such as `types.py`, `logging.py` or `queue.py`
candidate   | pitfall       | language:python            | python,shell,subprocess            | AVOID: Using `os.system` in new code; call `subprocess.run` with an argument list
stale       | tooling       | language:python            | python,pipenv                      | Use `pipenv lock --pre` when the resolver fails on pre-release dependencies
[typescript]
proven      | tooling       | language:typescript        | typescript,tsc                     | Run `tsc --noEmit` after edits even when the bundler builds, because bundlers often skip type checking
established | convention    | language:typescript        | typescript,strict                  | Keep `strict: true` in tsconfig and fix the errors rather than loosening compiler flags
proven      | tooling       | global                     | npm,ci,lockfile                    | Use `npm ci` in CI instead of `npm install` so the lockfile is respected exactly
established | tooling       | global                     | pnpm,monorepo                      | Run `pnpm --filter <package>` to build or test one workspace package instead of the whole monorepo
candidate   | pitfall       | global                     | pnpm,corepack,lockfile             | Use the pnpm version from the `packageManager` field via corepack; a different pnpm rewrites the lockfile
proven      | pitfall       | language:typescript        | typescript,types                   | AVOID: Using `any` to silence a type error; use `unknown` and narrow it
harmful     | workflow_rule | global                     | npm,audit,security                 | Run `npm audit fix --force` to clear audit warnings before a release
harmful     | workflow_rule | language:typescript        | typescript,strict,migration        | Turn off `strict` in tsconfig temporarily while migrating a JavaScript file to TypeScript
established | pitfall       | global                     | node,esm,modules                   | Check `"type": "module"` in package.json before mixing `require` and `import`; ESM and CJS mismatches fail only at runtime
candidate   | convention    | language:typescript        | typescript,validation,zod          | Validate external JSON at the boundary with zod or a type guard instead of casting with `as`
fading      | tooling       | global                     | node,nvm                           | Run `nvm use` to match `.nvmrc` before installing dependencies
stale       | tooling       | workspace:web-dashboard    | node,ci                            | Use Node 16 in the CI matrix for the dashboard build
stale       | tooling       | workspace:admin-frontend   | typescript,lint,tslint             | Lint with `tslint` using the rules in `tslint.json` in the admin frontend
stale       | tooling       | workspace:legacy-web       | yarn,ci                            | Run `yarn install --frozen-lockfile` in CI for the legacy web app
contested   | convention    | language:typescript        | typescript,enums                   | Prefer string union types over TypeScript `enum` declarations
established | pitfall       | language:typescript        | typescript,promises,eslint         | Await or return every promise in async functions and enable `no-floating-promises` to catch the rest
established | pitfall       | global                     | npm,lockfile                       | AVOID: Deleting `package-lock.json` to fix an install error; it silently upgrades every transitive dependency
candidate   | tooling       | language:typescript        | typescript,vitest                  | Run `vitest run` instead of `vitest` in agent sessions, since watch mode never exits
established | pitfall       | global                     | node,config,env                    | Read environment variables once in a config module and validate them instead of scattering `process.env` lookups
fading      | pitfall       | language:typescript        | typescript,paths,bundler           | Configure path aliases in both `tsconfig.json` and the bundler or test runner; `tsc` does not rewrite them
proven      | convention    | global                     | npm,scripts                        | Check the `package.json` scripts for the project's real test and lint commands before guessing them
candidate   | pitfall       | global                     | node,engines                       | Set `engines.node` in package.json together with `engine-strict` so installs fail on unsupported Node versions
stale       | tooling       | workspace:design-system    | npm,peer-deps                      | Add `--legacy-peer-deps` when npm refuses to install the design system
candidate   | workflow_rule | global                     | npm,publishing                     | AVOID: Publishing a package without checking the `npm pack --dry-run` file list for missing or leaked files
established | pitfall       | global                     | javascript,dates                   | Parse dates from ISO 8601 strings; `new Date('2024/01/02')` is local time while `new Date('2024-01-02')` is UTC
contested   | convention    | global                     | npm,dependencies,versions          | Always pin exact dependency versions in package.json for applications instead of caret ranges so installs are reproducible across machines
fading      | pitfall       | language:typescript        | typescript,null-safety             | AVOID: Non-null assertions (`!`) on values that come from the network or the DOM
contested   | convention    | language:typescript        | typescript,imports,build           | AVOID: Barrel `index.ts` files that re-export a whole package; they slow builds and create import cycles
harmful     | workflow_rule | global                     | node,nvm,engines                   | Bump the Node version in `.nvmrc` whenever a dependency prints an engines warning
stale       | convention    | workspace:api-gateway      | typescript,decorators              | Enable `experimentalDecorators` for the class-validator DTOs in the api-gateway service
[rust]
proven      | tooling       | language:rust              | rust,clippy                        | Run `cargo clippy --all-targets -- -D warnings` before claiming a Rust change is done
established | tooling       | language:rust              | rust,cargo                         | Use `cargo check` while iterating and `cargo test` before committing; check is much faster
fading      | convention    | language:rust              | rust,errors                        | Use `thiserror` for library error types and `anyhow` in binaries
harmful     | workflow_rule | language:rust              | rust,errors,unwrap                 | Use `unwrap()` in new code and replace it with proper error handling later
established | pitfall       | language:rust              | rust,features                      | Test with `--no-default-features` and `--all-features` when a crate has feature flags
established | pitfall       | language:rust              | rust,borrowck                      | AVOID: Adding `.clone()` calls to get past the borrow checker without understanding which borrows conflict
candidate   | tooling       | language:rust              | rust,nextest                       | Use `cargo nextest run` for faster test runs and clearer per-test output
fading      | convention    | language:rust              | rust,lockfile                      | Commit `Cargo.lock` for binaries and applications so CI builds the same dependency versions
stale       | tooling       | language:rust              | rust,nightly,async                 | Use `cargo +nightly` to get `async fn` in traits
candidate   | tooling       | language:rust              | rust,fmt,ci                        | Run `cargo fmt --check` in CI and `cargo fmt` locally before pushing
contested   | convention    | language:rust              | rust,unsafe                        | Forbid `unsafe` at the crate root with `#![forbid(unsafe_code)]` in application crates
established | pitfall       | language:rust              | rust,async,tokio                   | Drop a `std::sync::Mutex` guard before any `.await`, or switch to `tokio::sync::Mutex`
candidate   | pitfall       | language:rust              | rust,msrv                          | Check the crate's `rust-version` before using newly stabilized standard library APIs
fading      | technique     | language:rust              | rust,debugging,panics              | Set `RUST_BACKTRACE=1` when a test panics in CI to get the panic location
established | pitfall       | language:rust              | rust,async,blocking                | AVOID: Blocking calls such as `std::fs` or `reqwest::blocking` inside async tasks; use `spawn_blocking`
established | convention    | language:rust              | rust,tests                         | Put unit tests in a `#[cfg(test)] mod tests` next to the code and integration tests under `tests/`
proven      | workflow_rule | language:rust              | rust,compiler,errors               | Read the whole compiler error including the `help:` lines, since rustc usually suggests the fix
candidate   | pitfall       | language:rust              | rust,refcell                       | AVOID: Holding a `RefCell` borrow across a call that might borrow the same cell again
[go]
proven      | tooling       | global                     | go,vet,tests                       | Run `go vet ./...` and `go test ./...` before committing Go changes
proven      | tooling       | global                     | go,race,concurrency                | Run `go test -race` on packages that start goroutines; data races rarely show up otherwise
established | convention    | global                     | go,errors                          | Wrap errors with `fmt.Errorf("...: %w", err)` so callers can use `errors.Is` and `errors.As`
candidate   | pitfall       | global                     | go,loops,versions                  | Check the Go version in `go.mod` before relying on per-iteration loop variables from Go 1.22
established | pitfall       | global                     | go,errors                          | AVOID: Discarding errors with `_ =` on calls that can fail, such as `Close` on a file that was written
stale       | tooling       | global                     | go,lint                            | Install `golint` in CI to enforce Go style
stale       | tooling       | global                     | go,io                              | Use `ioutil.ReadFile` and `ioutil.WriteFile` in small Go tools
candidate   | tooling       | global                     | go,modules                         | Run `go mod tidy` after adding or removing imports and commit both `go.mod` and `go.sum`
established | convention    | global                     | go,context                         | Pass `context.Context` as the first parameter and honour its cancellation in long operations
fading      | tooling       | global                     | go,lint,golangci                   | Run `golangci-lint run` with the repository's config instead of invoking individual linters
contested   | convention    | global                     | go,panics                          | Panic on programmer errors in internal packages instead of returning an error
candidate   | pitfall       | global                     | go,http,timeouts                   | Set timeouts on `http.Client` and `http.Server`; the zero-value defaults never time out
established | technique     | global                     | go,tests                           | Write table-driven tests with `t.Run` subtests so a failure names the case
harmful     | workflow_rule | global                     | go,modules,upgrades                | Run `go get -u ./...` to fix a build error caused by one dependency
fading      | pitfall       | global                     | go,channels                        | Close a channel only from the sending side and never more than once
fading      | pitfall       | global                     | go,goroutines,leaks                | AVOID: Starting goroutines with no way to stop them; tie each one to a context or a done channel
"""
