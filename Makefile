# The two set-up commands of the README: `make run` and `make test`. Both create .venv and
# install herbrand with all its extras first; nothing needs installing by hand.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXAMPLES := $(wildcard examples/*.dl)

.PHONY: run test bench lint clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e '.[all]'
	$(BIN)/python -m herbrand.evaluators.native.compiled
	touch $(STAMP)

run: $(STAMP)
	@for program in $(EXAMPLES); do \
		echo "== $$program"; \
		$(BIN)/herbrand run $$program -F examples/facts -D out --summary --stats || exit 1; \
	done

test: $(STAMP)
	$(BIN)/python -m pytest -q --benchmark-disable -p no:cacheprovider

bench: $(STAMP)
	mkdir -p bench/results
	$(BIN)/python -m pytest bench -q --benchmark-only --benchmark-json=bench/results/latest.json
	$(BIN)/herbrand bench report bench/results/latest.json -o bench/results/latest.md
	@echo "report: bench/results/latest.md"

lint: $(STAMP)
	$(BIN)/ruff check herbrand tests bench

clean:
	rm -rf $(VENV) bench/results .pytest_cache
