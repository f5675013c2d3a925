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

# the main job: the examples, then a comparison of configurations on two shared workloads (Spark
# on the first when Java is there; `herbrand compare` says in one line when it is not), one
# query and one proof. Tables and charts go to out/compare-*/.
COMPARE := $(BIN)/herbrand compare --index all --repeat 1

run: $(STAMP)
	@for program in $(EXAMPLES); do \
		echo "== $$program"; \
		$(BIN)/herbrand run $$program -F examples/facts -D out --summary --stats || exit 1; \
	done
	@echo "== herbrand compare: TC over dyre graph10000"
	$(COMPARE) --workload tc-graph10000 --backend 'local,parallel:2,spark:local[2]' -o out/compare-tc
	@echo "== herbrand compare: RDFS over LUBM(1)"
	$(COMPARE) --workload rdfs-lubm1 --backend local,parallel:2 -o out/compare-rdfs
	@echo "== herbrand query: what node 1 reaches, by magic sets"
	$(BIN)/herbrand query examples/reachability.dl -F examples/facts 'path(1, y)' --explain-plan
	@echo "== herbrand explain: why node 1 reaches node 4"
	$(BIN)/herbrand explain examples/reachability.dl -F examples/facts 'path(1, 4)'

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
