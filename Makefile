# Two-command set-up: `make run` opens the workbench on the demo workspace,
# `make test` runs the whole suite. Both create .venv on first use.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test demo lint bench bench-vs-onmt screenshots clean-venv gpu-wheels gpu-check

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

# the bench model's training speed against OpenNMT-py 3.5.1 on the same split, three
# alternating rounds, the ratios against issue 17's targets (needs ../shared/bench)
bench-vs-onmt: $(STAMP)
	$(PY) experiments/train_vs_onmt.py --rounds 3

# the README's pictures, from the demo workspace, at 1400 x 900 and 1280 x 720
screenshots: $(STAMP)
	$(PY) -m app.screenshots docs/screenshots
	@# the screens are lossless WebP (app/screenshots.py); the exported figure is a PNG,
	@# about a quarter smaller recompressed, and the repository has 45 MB in all
	@if command -v optipng >/dev/null; then optipng -quiet -o2 docs/screenshots/*.png; \
	else echo "optipng not found: the pictures are not recompressed (apt install optipng)"; fi

# On a CUDA machine: every training and inference path once on the GPU (core/tooling/
# device_check.py). The GPU image has Python 3.12 and torch but no package index: run
# `make gpu-wheels` here first and carry .whl-gpu (ignored by git) with the checkout.
GPU_PY ?= python3
GPU_WHEELS := sacremoses defusedxml platformdirs tomli-w pysbd regex click joblib tqdm

gpu-wheels:
	$(PYTHON) -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
	    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
	    --platform manylinux2014_x86_64 -d .whl-gpu $(GPU_WHEELS)

gpu-check:
	@if [ -d .whl-gpu ]; then $(GPU_PY) -m pip install -q --no-index --no-deps --upgrade \
	    --target /tmp/nmt-gpu-site .whl-gpu/*.whl; fi
	PYTHONPATH=/tmp/nmt-gpu-site $(GPU_PY) main.py device-check --device cuda

clean-venv:
	rm -rf $(VENV)
