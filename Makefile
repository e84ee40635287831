# `make demo`: offline end-to-end run; `make test`: lint + full test suite.
# Both create or reuse .venv/ at the repo root and install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# CPU build of PyTorch (lies on disk on the project machines); GPU users install their own torch first.
TORCH_CPU ?= torch==2.13.0

.PHONY: demo test lint install install-dev clean

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.torch: | $(PY)
	@$(PY) -c "import torch" 2>/dev/null || $(PIP) install --quiet $(TORCH_CPU)
	@touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(PIP) install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.torch
	$(PIP) install --quiet -e '.[dev,space]'
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

demo: $(VENV)/.installed
	HF_HUB_OFFLINE=1 $(VENV)/bin/lsplits demo --out out/demo-likelihood

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check lsplits builders metrics spaces tests benchmarks

test: lint
	HF_HUB_OFFLINE=1 $(VENV)/bin/pytest -q

clean:
	rm -rf $(VENV) out
