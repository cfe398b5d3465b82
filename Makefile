# Inside the Model: one command to build the site, one to run every test, on a fresh machine.
#   make site    create .venv, install, build site/ (open site/index.html, or `make serve`)
#   make test    create .venv with test extras, install Chromium if missing, lint, run pytest
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin

# Byte-identical builds: timestamps come from the commit, not the clock.
export SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 315532800)
export NO_MKDOCS_2_WARNING := 1

.PHONY: site serve test lint bench chromium clean

$(BIN)/.site-deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(BIN)/.test-deps: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(BIN)/.site-deps

site: $(BIN)/.site-deps
	$(BIN)/mkdocs build

serve: $(BIN)/.site-deps
	$(BIN)/mkdocs serve

# Browser tests drive Debian's Chromium; Playwright's own browser download is never used.
chromium:
	@[ -n "$${ITM_CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 || { \
	  echo "Installing Debian's chromium for the browser tests"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

lint: $(BIN)/.test-deps
	$(BIN)/ruff check generator tests bench
	$(BIN)/ruff format --check generator tests bench
	$(BIN)/mypy

test: $(BIN)/.test-deps chromium lint
	$(BIN)/pytest

bench: $(BIN)/.test-deps
	$(BIN)/python bench/bench_build.py

clean:
	rm -rf site .site.staging .site.old .cache
