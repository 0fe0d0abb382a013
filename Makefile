# Two commands on a fresh machine with only python3: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml setup.py src/motionkit/formats/parc/_pickle_scan.c | $(BIN)/python
	find src -name '*.so' -delete  # a failed (optional) rebuild must not leave an old one
	$(BIN)/python -m pip install --quiet -e '.[test,bench,geo]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py

test: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy
	$(BIN)/python -m pytest -q

lint: $(STAMP)
	$(BIN)/ruff check src tests bench examples
	$(BIN)/mypy

bench: $(STAMP)
	for script in bench/*.py; do $(BIN)/python $$script || exit 1; done

clean:
	rm -rf $(VENV) demo-output bench/out build .pytest_cache .mypy_cache .ruff_cache src/*.egg-info
	find src -name '*.so' -delete
