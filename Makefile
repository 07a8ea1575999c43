# einc developer entry points. `make test` is what CI runs (.ci/run).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO ?= examples/basics/matmul.ein
TARGET ?= llvm-cpu

.PHONY: venv test demo bench

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -e '.[test]'
	touch $@

test: venv
	$(PY) -m pytest -q tests

# Build $(DEMO) and run it on random inputs written to build/inputs (outputs in build/outputs).
demo: venv
	$(PY) tools/demo.py $(DEMO) --target $(TARGET) --build-dir build

bench: venv
	@if [ -d benchmarks ]; then $(PY) -m pytest -q benchmarks; else echo "no benchmarks/ yet"; fi
