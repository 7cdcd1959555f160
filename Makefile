# setrl: the two commands a newcomer needs (see README).
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: install test study bench

$(VENV)/.installed: pyproject.toml constraints.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0          # CPU torch first, or pip pulls CUDA wheels
	$(PY) -m pip install -q -c constraints.txt -e ".[test]"
	touch $@

install: $(VENV)/.installed

test: install
	$(PY) -m pytest

study: install
	bash scripts/study.sh tiny

bench: install
	$(PY) benchmarks/advantages.py
	$(PY) benchmarks/sandbox.py
