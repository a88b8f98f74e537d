# Two entry points a fresh machine needs: `make run` and `make test` (each creates .venv itself).
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip

.PHONY: run test test-fast lint bench check clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

# Stamps re-install when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml | $(PY)
	$(PIP) install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(PY)
	$(PIP) install -q -e '.[test]'
	touch $@ $(VENV)/.installed

run: $(VENV)/.installed
	$(VENV)/bin/attend run

# The static gate (DESIGN.md, Layout; configured in pyproject.toml): ruff, mypy (strict, zero errors
# on src/), then the import-linter contracts (layers, forbidden imports, no cycles).
RUFF  = $(VENV)/bin/ruff check src tests benchmarks
MYPY  = $(VENV)/bin/mypy --any-exprs-report $(VENV)/typing
# The typing gate (issue 38): the share of typed expressions and the `# type: ignore`s, against the floors in
# pyproject.toml's [tool.attend.typing]; it reads the report mypy just wrote.
TYPING = $(PY) tests/typing_gate.py $(VENV)/typing
LAYERS = $(VENV)/bin/lint-imports
lint: $(VENV)/.installed-test
	$(RUFF)
	$(MYPY)
	$(TYPING)
	$(LAYERS)

# The suite runs on pytest-xdist workers; every test works in its own temporary home. It starts
# thousands of interpreters on attend's own source: they share compiled modules (__pycache__, as an
# installed package has them) even where the caller's environment says PYTHONDONTWRITEBYTECODE.
# Work stealing: a worker that runs out takes half of another's queue. xdist's default ("load") hands out
# fixed blocks up front, and the block of heavy tests kept one worker busy for four minutes after the other
# was done (7:12 -> 4:45 on an idle 2-core machine).
# Six workers on two cores: nearly half of the suite's test time is waiting on real processes (a daemon's
# next poll, a presence beat, a `for:` window), and the other workers compute meanwhile. On the idle
# 2-core machine: 2 workers 3:25, 3 workers 2:35, 4 workers 2:29, 6 workers 2:23 (the same 2,626 tests).
TEST_WORKERS ?= 6
PYTEST = env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal
# The suite's temporary folders (every test's home: its store, journal and peers folders; the plugin's build)
# are on a tmpfs where the machine has one (/dev/shm; TEST_TMP= for pytest's own under /tmp): the daemons
# and commands fsync every journal commit and peers message as they must, and on a disk each fsync waits for
# the disk, behind whatever else writes to it. A tmpfs makes the same calls with nothing to wait for; no test
# sees a difference (a SIGKILL keeps what was written either way). Measured on the shared machine (load
# 5-6, tests/peers and the store-damage and crash-point tests, 162 tests, 2 workers): 42.2 s -> 38.8 s wall,
# the tests' own time 70.8 s -> 61.5 s. The run's folder is removed after a passing run and named after a
# failing one (and removed when the run is interrupted).
TEST_TMP ?= $(firstword $(wildcard /dev/shm))
# Used only with this much room (KiB; a container's /dev/shm is often 64 MiB): a whole run holds a few hundred MB.
TEST_TMP_KB ?= 2097152
SUITE = tmp=$$( [ -n "$(TEST_TMP)" ] && [ "$$(df -Pk "$(TEST_TMP)" | awk 'NR == 2 {print $$4}')" -ge $(TEST_TMP_KB) ] \
	&& mktemp -d "$(TEST_TMP)/attend-test.XXXXXX" ); \
	if [ -n "$$tmp" ]; then trap 'rm -rf "$$tmp"; exit 130' INT TERM; echo "the tests' temporary folders: $$tmp/run"; fi; \
	$(PYTEST) $${tmp:+--basetemp=$$tmp/run}
SUITE_TMP_DONE = if [ -n "$$tmp" ]; then if [ $$suite -eq 0 ]; then rm -rf "$$tmp"; \
	else echo "make: the failing run's temporary folders: $$tmp/run"; fi; fi

# `make test`: the gate's quick checks first (ruff, the import contracts: about a second), then the whole
# suite with mypy running beside it (its cold start on a fresh clone is ~12 s of CPU, which the suite's
# waiting leaves room for); mypy's report follows the suite's. Either failing fails `make test`.
test: $(VENV)/.installed-test
	$(RUFF)
	$(LAYERS)
	@echo "$(MYPY) && $(TYPING) (beside the suite; their report follows it)"
	@echo "$(PYTEST)"
	@{ $(MYPY) && $(TYPING); } > $(VENV)/mypy.log 2>&1 & typing=$$!; \
	$(SUITE); suite=$$?; $(SUITE_TMP_DONE); \
	wait $$typing; typed=$$?; cat $(VENV)/mypy.log; \
	if [ $$typed -ne 0 ]; then echo "make test: mypy or the typing gate failed (above)"; fi; \
	exit $$(( suite != 0 || typed != 0 ))

# The inner loop: everything but the heavy tests (real daemons, real MCP servers, the plugin's virtualenv
# build, npm; tests/conftest.py marks them).
# Property tests draw a quarter of their examples here ("fast" profile, tests/conftest.py) unless
# HYPOTHESIS_PROFILE says otherwise; `make test` draws them all. Three workers on two cores: some ~40 s of
# these tests' time is waiting (the Textual pilot's idle checks after each key, real timeouts of real
# processes, file watchers), and a third worker computes meanwhile (the TUI, runner, wake and watch
# tests: 28-30 s -> 21-27 s wall on a loaded machine, 3 runs each). `make test-fast TEST_WORKERS=2` for two.
test-fast: export HYPOTHESIS_PROFILE ?= fast
test-fast: TEST_WORKERS = 3
test-fast: $(VENV)/.installed-test
	@echo "$(PYTEST) -m \"not heavy\""
	@$(SUITE) -m "not heavy"; suite=$$?; $(SUITE_TMP_DONE); exit $$suite

bench: $(VENV)/.installed-test
	$(PY) -m benchmarks

check: $(VENV)/.installed
	$(VENV)/bin/attend compile --check

clean:
	rm -rf $(VENV) build dist .pytest_cache
