# Two commands on a fresh machine with only python3: `make demo` and `make test`.
# Both install the tested set from requirements.lock (exact versions, with hashes), then
# motionkit itself without dependencies. pyproject.toml keeps ranges; `make lock` turns
# them into the lock again.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
LOCK := requirements.lock
LOCKED := $(VENV)/.locked
STAMP := $(VENV)/.installed

.PHONY: demo test lint audit bench lock docs test-latest test-oldest clean

# A new lock means a new environment: nothing from the old one lingers.
$(LOCKED): $(LOCK)
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r $(LOCK)
	$(BIN)/python -m pip check  # the lock is complete: every dependency of every package is in it
	touch $(LOCKED)

# every compiled extension's source (setup.py lists them; tests/test_compiled_extensions.py)
EXTENSION_SOURCES := $(shell find src/motionkit -name '*.c')

$(STAMP): $(LOCKED) pyproject.toml setup.py $(EXTENSION_SOURCES)
	find src -name '*.so' -delete  # a failed (optional) rebuild must not leave an old one
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: $(STAMP) audit
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy

# Known vulnerabilities in the locked environment (needs PyPI's JSON API or OSV; --strict
# fails where a package cannot be checked, rather than calling it clean). NOTES.md: findings.
audit: $(STAMP)
	$(BIN)/pip-audit --strict --skip-editable --progress-spinner off

# Every bench script writes its section to bench/out/; RESULTS.md is made from them.
bench: $(STAMP)
	rm -rf bench/out
	for script in bench/[!_]*.py; do $(BIN)/python $$script || exit 1; done
	$(BIN)/python bench/_results.py

# The documentation site into site/ (git-ignored); --strict: a broken link, anchor or API
# reference fails the build. NO_MKDOCS_2_WARNING silences Material's notice about MkDocs 2,
# which pyproject.toml's range (mkdocs<2) already keeps out.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# Every extra and the build requirements, for every Python the project supports.
lock: $(STAMP)
	$(BIN)/python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))' \
	  | $(BIN)/uv pip compile pyproject.toml - --all-extras --universal --python-version 3.10 \
	      --generate-hashes --quiet -o $(LOCK)

# Are the ranges in pyproject.toml true? The newest versions they allow, and the lowest
# direct ones. For maintainers; results in NOTES.md. CI stays on the lock.
test-latest:
	rm -rf .venv-latest && $(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet --upgrade pip
	.venv-latest/bin/python -m pip install --quiet -e '.[test,bench,geo,docs]'
	.venv-latest/bin/python -m pytest -q

test-oldest: $(STAMP)
	rm -rf .venv-oldest && $(BIN)/uv venv --quiet --python $(PYTHON) .venv-oldest
	$(BIN)/uv pip install --quiet --python .venv-oldest/bin/python --resolution lowest-direct \
	  -e '.[test,bench,geo,docs]'
	.venv-oldest/bin/python -m pytest -q

clean:
	rm -rf $(VENV) .venv-latest .venv-oldest demo-output bench/out build site .pytest_cache \
	  .mypy_cache .ruff_cache src/*.egg-info
	find src -name '*.so' -delete
