# setrl: the two commands a newcomer needs (see README), plus their parts.
VENV ?= .venv
VERL_VENV ?= .venv-verl
PY := $(VENV)/bin/python
VERL_PY := $(VERL_VENV)/bin/python

.PHONY: install install-verl test test-core test-verl study bench

$(VENV)/.installed: pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0          # CPU torch first, or pip pulls multi-GB CUDA wheels
	$(PY) -m pip install -q -c constraints.txt -e ".[test]"
	touch $@

# verl's CPU-level integration tests run in their own venv: verl's v1 trainer chain needs packaging<26.
$(VERL_VENV)/.installed: pyproject.toml constraints-verl.txt
	python3 -m venv $(VERL_VENV)
	$(VERL_PY) -m pip install -q --upgrade pip
	$(VERL_PY) -m pip install -q torch==2.13.0
	$(VERL_PY) -m pip install -q -c constraints-verl.txt -e ".[test,verl]"
	touch $@

install: $(VENV)/.installed
install-verl: $(VERL_VENV)/.installed

test: test-core test-verl

test-core: install
	$(PY) -m pytest

test-verl: install-verl
	SETRL_REQUIRE_VERL=1 $(VERL_PY) -m pytest tests/verl -m verl

study: install
	bash scripts/study.sh tiny

bench: install
	$(PY) benchmarks/advantages.py
	$(PY) benchmarks/sandbox.py
	$(PY) benchmarks/judge.py
	$(PY) benchmarks/train_step.py
	$(PY) benchmarks/study.py --profiles smoke
