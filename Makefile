# einc developer entry points. `make test` is what CI runs (.ci/run).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO ?= examples/basics/matmul.ein
TARGET ?= llvm-cpu
MNIST ?= ../shared/data/mnist

.PHONY: venv test test-full demo demo-random bench bench-build bench-named golden fuzz

venv: $(VENV)/.installed

# The exact versions of constraints.txt; pyproject.toml has the ranges einc supports.
$(VENV)/.installed: pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c constraints.txt -e '.[test]'
	touch $@

# The test files run in TEST_JOBS processes (pytest-xdist; `auto`: one per core, 0: none): one
# process keeps about one core busy (docs/DECISIONS.md). A file runs whole in one process, so a
# module-scoped fixture still builds its program once.
# `make test` is the fast tier (what CI runs); `make test-full` adds the tests marked `full`
# and the draw tests' full counts (tests/tiers.py).
TEST_JOBS ?= auto
test: venv
	bash tools/setup_vulkan.sh
	$(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile tests

test-full: venv
	bash tools/setup_vulkan.sh
	EINC_TESTS=full $(PY) -m pytest -q -n $(TEST_JOBS) --dist loadfile tests

# The MNIST CNN of examples/mnist, built once and run on the trained weights and ten digits in
# ../shared/data/mnist (read in place). `make demo-random DEMO=file.ein` runs any example on
# random inputs that fit its signature instead.
demo: venv
	@mkdir -p build
	$(PY) -m einc build examples/mnist/cnn.ein -o build/cnn.vmfb --target $(TARGET) --output digit --output logits
	$(PY) -m einc run build/cnn.vmfb --out build/outputs \
	    --input X=$(MNIST)/samples.npy --input W1=$(MNIST)/conv1_w.npy --input b1=$(MNIST)/conv1_b.npy \
	    --input W2=$(MNIST)/conv2_w.npy --input b2=$(MNIST)/conv2_b.npy \
	    --input Wf=$(MNIST)/fc_w.npy --input bf=$(MNIST)/fc_b.npy
	@echo "true labels:      $$($(PY) -c 'import numpy; print(numpy.load("$(MNIST)/labels.npy"))')"

demo-random: venv
	$(PY) tools/demo.py $(DEMO) --target $(TARGET) --build-dir build

# Rewrite the examples' goldens (examples/**/<stem>.golden.npz and .golden.txt) and data files
# from the NumPy references in tests/examples/references.py; never from einc's own results.
golden: venv
	$(PY) tools/golden.py

# Benchmarks (benchmarks/run.py): recurrences against a NumPy/Python loop and JAX lax.scan, dense
# programs (matmul, the MNIST CNN, a convolution layer, an MLP) against NumPy and JAX jit;
# benchmarks/transformers.py: DeiT-tiny and the Whisper-tiny encoder, with build time and memory.
# `make bench DEVICE=vulkan` runs einc's side through Vulkan (lavapipe without a GPU).
# JAX is the `bench` extra of pyproject.toml, at the versions of constraints.txt.
DEVICE ?=
bench: venv
	$(PY) -m pip install -q -c constraints.txt jax jaxlib
	$(if $(filter vulkan,$(DEVICE)),bash tools/setup_vulkan.sh)
	$(PY) benchmarks/run.py $(if $(DEVICE),--device $(DEVICE))
	$(PY) benchmarks/transformers.py

# Each dense form with its batch and image sizes named against --dim, on one core (issue 19).
bench-named: venv
	$(PY) benchmarks/named_dims.py

# Build time per definition of a chain of 100, 1,000 and 2,000 definitions (should stay flat).
bench-build: venv
	$(PY) benchmarks/build_time.py

# The fuzzers (fuzz/, registered in fuzz/campaigns.py): generated programs against their NumPy
# meaning on llvm-cpu and vulkan-spirv, mutants of real programs through the front end,
# mutants of `einc run`, and generated dense programs (matmuls, convolutions, poolings) against
# NumPy on the three targets, and standard-library calls against their ONNX meaning. `make fuzz`
# runs each campaign's full size (2,000 programs, 5,000 and 2,000 mutants, 600 dense programs,
# 1,000 stdlib calls); `make fuzz N=100` runs N cases of each;
# FUZZ_ARGS="--only dense" picks.
SEED ?= 1
fuzz: venv
	bash tools/setup_vulkan.sh
	$(PY) -m fuzz --seed $(SEED) $(if $(N),--n $(N)) $(FUZZ_ARGS)
