# Two-command set-up: `make run` opens the workbench on the demo workspace,
# `make test` runs the whole suite. Both create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test demo lint bench screenshots clean-venv

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

run: $(STAMP)
	$(PY) main.py gui --demo

test: $(STAMP)
	@$(PY) -c "from core.train.device import machine_summary; print(machine_summary())"
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -q

demo: $(STAMP)
	$(PY) main.py demo

lint: $(STAMP)
	$(PY) -m ruff check core app tests main.py

bench: $(STAMP)
	$(PY) main.py bench train

# the README's pictures, from the demo workspace, at 1400 x 900 and 1280 x 720
screenshots: $(STAMP)
	$(PY) -m app.screenshots docs/screenshots

clean-venv:
	rm -rf $(VENV)
