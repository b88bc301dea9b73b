# mpsched developer tasks. `make demo` and `make test` set everything up on first use:
# a virtualenv in $(VENV), then the Rust extension built into it with maturin (rebuilt
# whenever a file under crates/ or python/mpsched, Cargo.toml, Cargo.lock or pyproject.toml
# changes).

VENV ?= .venv
PY = $(VENV)/bin/python
PYTHON3 ?= python3

# Everything the installed package is built from.
BUILD_INPUTS := $(shell find crates python/mpsched -type f \
                  -not -path '*/__pycache__/*' -not -name '*.so' 2>/dev/null) \
                Cargo.toml $(wildcard Cargo.lock) pyproject.toml

.PHONY: dev demo test docs fuzz bench clean distclean

## dev: virtualenv + `maturin develop --release` with the extras `make demo` and `make test`
## need (plot: figures; rl: envs, training, the EdAR policy; test: pytest, ruff, SB3). The
## extension is the product build of scripts/pgo.sh: profile-guided (a training run of shipped
## scenarios first, ~1.5 min per source change; outputs identical); MPSCHED_PGO=0 skips that.
dev: .stamp-build

$(VENV)/bin/maturin:
	test -x $(PY) || $(PYTHON3) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q -U pip 'maturin>=1.5,<2'

.stamp-build: $(VENV)/bin/maturin $(BUILD_INPUTS)
	VIRTUAL_ENV=$(abspath $(VENV)) scripts/pgo.sh exec \
	    $(abspath $(VENV))/bin/maturin develop --release --extras plot,rl,test
	touch $@

## demo: compare four schedulers and the shipped EdAR policy over three seeds on the EdAR
## handoff scenario, then plot and report (results, figures and report.md in out/demo)
demo: dev
	@# out/demo held a single `mpsched run` before; a compare directory replaces it.
	@if [ -f out/demo/summary.json ]; then rm -rf out/demo; fi
	$(VENV)/bin/mpsched compare scenarios/edar-handoff.toml \
	    --scheduler minrtt,blest,ecf,redundant,edar --seeds 1-3 --out out/demo
	$(VENV)/bin/mpsched plot out/demo
	$(VENV)/bin/mpsched report out/demo

## test: Rust tests (release), then the Python tests
test: dev
	cargo test --release --workspace --exclude mpsched-py
	cargo build --release -p mpsched-emu  # the link emulator of the kernel-engine tests
	$(PY) -m pytest -q

## docs: the documentation site from docs/ into out/site (MkDocs, pinned in the `test` extra;
## --strict: a broken link fails); the test suite builds it too (python/tests/test_docs.py)
docs: dev
	$(PY) -m mkdocs build --strict --site-dir out/site

## fuzz: the long fuzzing run: FUZZ_INPUTS (10,000) seeded inputs per target (scenario
## resolver, short runs with output invariants, trace parser, policy loader, segment handling),
## with debug assertions and overflow checks; prints the counts, keeps crashing inputs in
## fuzz/crashes (replay: `cargo run --profile fuzz -p mpsched-fuzz -- --target T --replay FILE`);
## then as many mutated scenarios and random scenario dicts through `mpsched.run`
FUZZ_INPUTS ?= 10000
fuzz: dev
	cargo run --profile fuzz -p mpsched-fuzz -- --target all --inputs $(FUZZ_INPUTS)
	$(PY) -m pytest -q python/tests/test_fuzz_scenarios.py --fuzz-inputs $(FUZZ_INPUTS)

## bench: simulator speed on the built-in benchmarks
bench: dev
	$(VENV)/bin/mpsched bench

## clean: outputs, stamps, caches and the in-tree extension module
clean:
	rm -rf out .stamp-build .pytest_cache
	rm -f python/mpsched/_core*.so python/mpsched/_core*.pyd
	find python -name __pycache__ -type d -prune -exec rm -rf {} +

## distclean: clean, plus the virtualenv and Cargo's target directory
distclean: clean
	rm -rf $(VENV) target
