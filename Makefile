# Schema Design in a Schemaless Store — set-up and checks.
#
#   make lab      build .venv (Python >= 3.13 if one exists), copy new labs into work/, start JupyterLab there
#                 (WiredTiger, for lesson 04, is built in the background meanwhile)
#   make test     build .venv, run the test suite, then run every notebook
#   make e2e      run every lab and solution in JupyterLab in Chromium (browser test)
#   make prereqs  install the system packages the course uses (bubblewrap, swig, gcc, chromium), or say how
#   make help     list all targets
#
# Each target first installs the system packages it needs (course/setup/prereqs.py: as root with apt-get, or
# through sudo -n), or says what to run and what is lost without them; make test stops when bubblewrap is
# missing (its containment tests would prove nothing), make lab goes on.
#
# Variables you may set:
#   PYTHON=/path/to/python3.13   interpreter for .venv (else python3.14, python3.13,
#                                pyenv's 3.13+, else python3 >= 3.11 with mongomock)
#   PORT=8888                    first port JupyterLab tries (it moves on if busy)
#   LAB_ARGS=...                 extra arguments for `jupyter lab`, e.g. --no-browser
#   PYTEST_ARGS=...              extra arguments for every pytest run of `make test`
#   TEST_SUMMARY_FILE=FILE       `make test` appends one line per phase here (used by .ci/run)
#   COURSE_PREREQS=check         only look for the system packages, never install them

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.ONESHELL:
.DEFAULT_GOAL := help
MAKEFLAGS += --no-print-directory

VENV        := .venv
VENV_PYTHON := $(VENV)/bin/python
STAMP       := $(VENV)/.course-installed
PORT        ?= 8888
WORK        ?= work
LAB_ARGS    ?=
PYTEST_ARGS ?=
# The system prerequisites (standard library only, so any python3 runs it before .venv exists).
PREREQS     = "$$(command -v python3 || command -v python3.13 || echo python3)" -I course/setup/prereqs.py
# Which target's prerequisites the venv recipe installs, and how WiredTiger is built (set per target below).
PREREQS_FOR := venv
STORAGE     := foreground
NBVAL       := --nbval-lax --nbval-current-env --nbval-sanitize-with tests/nbval-sanitize.cfg --nbval-cell-timeout=900

export PIP_DISABLE_PIP_VERSION_CHECK := 1

.PHONY: help prereqs venv lab test e2e doctor release outputs clean not-a-handout

help: ## show this list
	@echo "Schema Design in a Schemaless Store"
	@echo
	@grep -E '^[a-z][a-z0-9-]*:.*## ' $(MAKEFILE_LIST) | sed -E 's/^([a-z0-9-]+):.*## (.*)/  make \1\t\2/' | expand -t 16
	@echo
	@echo "Start with 'make lab'. Set PYTHON=... to choose the interpreter for .venv."

prereqs: ## install the system packages the course uses, or say how (and what each is for)
	@$(PREREQS) --for all

# Build (or re-use) .venv.  Re-installs only when pyproject.toml or the venv's
# Python changed since the last install (a hash kept in $(STAMP)).  First the system
# prerequisites of the target that asked for .venv; then, once the course is installed,
# WiredTiger (course/setup/storage_build.py: built once per machine, its wheel kept in ~/.cache/course).
venv: ## create .venv (Python >= 3.13 preferred) and install the course
	@$(PREREQS) --for $(PREREQS_FOR)
	is_313() { "$$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13) else 1)' >/dev/null 2>&1; }
	runs() { "$$1" -c 'import sys' >/dev/null 2>&1; }
	find_313() {
	  local candidate
	  if [ -n "$${PYTHON:-}" ]; then
	    if is_313 "$$PYTHON"; then echo "$$PYTHON"; return 0; fi
	    echo "note: PYTHON=$$PYTHON is not a working Python >= 3.13; looking for another" >&2
	  fi
	  for candidate in python3.14 python3.13; do
	    if command -v "$$candidate" >/dev/null 2>&1 && is_313 "$$candidate"; then command -v "$$candidate"; return 0; fi
	  done
	  if command -v pyenv >/dev/null 2>&1; then
	    local root; root="$$(pyenv root 2>/dev/null || true)"
	    if [ -n "$$root" ]; then
	      for candidate in $$(ls -d "$$root"/versions/3.1[3-9]* 2>/dev/null | sort -rV); do
	        if [ -x "$$candidate/bin/python" ] && is_313 "$$candidate/bin/python"; then echo "$$candidate/bin/python"; return 0; fi
	      done
	    fi
	  fi
	  return 1
	}
	if [ -x $(VENV_PYTHON) ] && runs $(VENV_PYTHON) && is_313 $(VENV_PYTHON); then
	  : # an existing Python >= 3.13 venv: keep it
	elif chosen="$$(find_313)"; then
	  if [ -e $(VENV) ]; then echo "Replacing $(VENV): its Python is missing or older than 3.13"; rm -rf $(VENV); fi
	  echo "Creating $(VENV) with $$chosen ($$("$$chosen" -c 'import platform; print(platform.python_version())'))"
	  "$$chosen" -m venv $(VENV)
	else
	  echo "*** No Python >= 3.13 found (tried \$$PYTHON, python3.14, python3.13, pyenv versions 3.13+)."
	  echo "*** Falling back to python3: the course will run on mongomock, which cannot check"
	  echo "*** everything (validation, pipelines, transactions...). 'make doctor' shows what is missing."
	  echo "*** Install Python 3.13 and run 'make clean lab' for the full course."
	  if [ -x $(VENV_PYTHON) ] && runs $(VENV_PYTHON); then
	    : # keep the existing fallback venv
	  else
	    fallback="$$(command -v python3 || true)"
	    if [ -z "$$fallback" ] || ! "$$fallback" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)'; then
	      echo "*** python3 is missing or older than 3.11: install Python 3.13 (or at least 3.11) first." >&2
	      exit 1
	    fi
	    rm -rf $(VENV)
	    echo "Creating $(VENV) with $$fallback ($$("$$fallback" -c 'import platform; print(platform.python_version())'))"
	    "$$fallback" -m venv $(VENV)
	  fi
	fi
	want="$$($(VENV_PYTHON) -c 'import hashlib, sys; print(hashlib.sha256(open("pyproject.toml", "rb").read()).hexdigest(), sys.version.split()[0])')"
	if [ -f $(STAMP) ] && [ "$$(cat $(STAMP))" = "$$want" ]; then
	  echo "$(VENV) is up to date (Python $$($(VENV_PYTHON) -c 'import platform; print(platform.python_version())'))"
	else
	  echo "Installing the course into $(VENV) (pip install -e '.[lab,test]'; a few minutes the first time)"
	  start=$$SECONDS
	  $(VENV_PYTHON) -m pip install --quiet -e '.[lab,test]'
	  echo "$$want" > $(STAMP)
	  echo "Installed in $$((SECONDS - start)) s"
	fi
	# WiredTiger (MongoDB's storage engine) for lesson 04's storage figures, from source: it needs swig and a
	# C compiler; without them lesson 04 shows the seed's figures, labelled.
	case "$(STORAGE)" in
	  background) $(VENV_PYTHON) -m course.setup.storage_build --background ;;
	  foreground) $(VENV_PYTHON) -m course.setup.storage_build || true ;;
	  *) : ;;
	esac

# Per-target settings of the venv recipe: what each target needs installed, and whether it waits for WiredTiger.
lab: PREREQS_FOR := lab
lab: STORAGE := background
test: PREREQS_FOR := test
e2e: PREREQS_FOR := e2e
doctor release: STORAGE := skip

lab: venv ## start JupyterLab on your work/ folder (127.0.0.1 only, with a login token)
	@echo
	echo "Starting JupyterLab on $(WORK)/ (your copies of the labs), listening on 127.0.0.1 only (port $(PORT) or the next free one)."
	echo "Open the URL with '?token=...' that JupyterLab prints below. Stop it with Ctrl-C."
	echo
	root_flag=""
	if [ "$$(id -u)" -eq 0 ]; then root_flag=--allow-root; echo "(running as root, e.g. in a container: passing --allow-root)"; fi
	# The venv's own kernelspec comes first, so notebooks run on the venv's Python even when
	# a user-level "python3" kernel exists elsewhere.
	export JUPYTER_PATH="$(CURDIR)/$(VENV)/share/jupyter$${JUPYTER_PATH:+:$$JUPYTER_PATH}"
	# Your answers live in work/ (git-ignored): labs are copied there once and never overwritten,
	# so a git pull of the course never touches them and make test keeps testing labs/.
	$(VENV)/bin/course work --labs labs --into $(WORK)
	# No news or update checks (they call out to the internet): JupyterLab's settings overrides.
	mkdir -p $(VENV)/share/jupyter/lab/settings
	cp course/lab/jupyterlab-overrides.json $(VENV)/share/jupyter/lab/settings/overrides.json
	# A spare kernel, started and warmed ahead, is handed to the next lab opened (course/lab/spare_kernels.py).
	exec $(VENV)/bin/jupyter lab --ServerApp.ip=127.0.0.1 --ServerApp.port=$(PORT) \
	  --ServerApp.port_retries=50 --ServerApp.root_dir=$(WORK) \
	  --ServerApp.kernel_manager_class=course.lab.spare_kernels.SpareKernelManager $$root_flag $(LAB_ARGS)

# Phases run one after another; all run even if one fails, then make fails.
# nbval over an empty notebook directory is skipped (a note says so); when the
# directory holds notebooks, any non-zero pytest exit (5 included) fails.
# A learners' hand-out (course release --to) has no tests/ and no solutions/: say so before building anything.
not-a-handout:
	@if [ -f .course-handout ]; then
	  echo "make test: this is a learners' hand-out (it has .course-handout): the course's test suite is not in it."
	  echo "Run 'make lab' and each exercise's check() instead (README.md, 'How exercises work')."
	  exit 2
	fi

test: not-a-handout venv ## run the tests, then every solution and lab notebook
	@logs="$$(mktemp -d)"; trap 'rm -rf "$$logs"' EXIT
	failed=()
	report=()
	phase() {  # phase NAME ENV-ASSIGNMENTS... -- PYTEST-ARGUMENTS...
	  local name="$$1"; shift
	  local -a envs=()
	  while [ "$$1" != "--" ]; do envs+=("$$1"); shift; done; shift
	  echo
	  echo "=== phase $$name: pytest $$*"
	  local start=$$SECONDS status=0
	  env "$${envs[@]}" $(VENV)/bin/python -m pytest "$$@" $(PYTEST_ARGS) 2>&1 | tee "$$logs/$$name.log" || status=$$?
	  local seconds=$$((SECONDS - start)) verdict=passed
	  [ $$status -eq 0 ] || { verdict="FAILED (exit $$status)"; failed+=("$$name"); }
	  local summary; summary="$$(grep -E '^=+ .* in [0-9.]+s.* =+$$' "$$logs/$$name.log" | tail -n 1 || true)"
	  [ -n "$$summary" ] || summary="$$(tail -n 1 "$$logs/$$name.log")"
	  echo "=== phase $$name: $$verdict in $$seconds s"
	  report+=("$$(printf '%-16s %-18s %5s s   %s' "$$name" "$$verdict" "$$seconds" "$$summary")")
	  [ -z "$${TEST_SUMMARY_FILE:-}" ] || printf '%-16s %-18s %5s s   %s\n' "$$name" "$$verdict" "$$seconds" "$$summary" >> "$$TEST_SUMMARY_FILE"
	}
	notebooks() {  # notebooks NAME DIR STATUS
	  if [ -z "$$(find "$$2" -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' -print -quit 2>/dev/null)" ]; then
	    echo; echo "=== phase $$1: no notebooks in $$2/ yet, skipped"
	    report+=("$$(printf '%-16s %-18s' "$$1" "skipped (none)")")
	    [ -z "$${TEST_SUMMARY_FILE:-}" ] || printf '%-16s %-18s\n' "$$1" "skipped (none)" >> "$$TEST_SUMMARY_FILE"
	    return 0
	  fi
	  phase "$$1" COURSE_EXPECT_STATUS="$$3" -- $(NBVAL) "$$2/"
	}
	# The grader's containment tests fail (never skip) without the sandbox (tests/conftest.py).
	export COURSE_REQUIRE_SANDBOX=1
	echo "Python: $$($(VENV_PYTHON) -c 'import platform; print(platform.python_version())');" \
	  "backend: $$($(VENV_PYTHON) -c 'from course.store.backends import open_backend; print(open_backend().description)' 2>&1 | tail -n 1)"
	echo; echo "=== phase imports: lint-imports (the package's layers, [tool.importlinter] in pyproject.toml)"
	verdict=passed; $(VENV)/bin/lint-imports --no-cache || { verdict=FAILED; failed+=(imports); }
	report+=("$$(printf '%-16s %-18s' imports "$$verdict")")
	[ -z "$${TEST_SUMMARY_FILE:-}" ] || printf '%-16s %-18s\n' imports "$$verdict" >> "$$TEST_SUMMARY_FILE"
	phase tests -- tests/
	notebooks solutions solutions correct
	notebooks labs labs not_attempted
	echo
	echo "=== make test summary (phase, verdict, duration, pytest's last line)"
	printf '  %s\n' "$${report[@]}"
	if [ $${#failed[@]} -gt 0 ]; then echo "FAILED phases: $${failed[*]}"; exit 1; fi
	echo "All phases passed."

# Browser end-to-end test: one JupyterLab (127.0.0.1, token) from .venv, every notebook run
# through Run > Run All Cells in Chromium; screenshots in tests/e2e/artifacts/.  Needs
# Chromium from the system: the venv step installs it (make prereqs), or stops saying how.
e2e: venv ## run every lab and solution in JupyterLab in Chromium (screenshots in tests/e2e/artifacts)
	@$(VENV_PYTHON) -c 'import playwright' 2>/dev/null || $(VENV_PYTHON) -m pip install --quiet -e '.[e2e]'
	$(VENV_PYTHON) -m pytest -m e2e tests/e2e $(PYTEST_ARGS)

doctor: venv ## show the Python, backend, system prerequisites and what the course can check
	@$(VENV)/bin/course doctor

release: venv ## regenerate labs/ from solutions/ (solutions are the single source)
	@$(VENV)/bin/course release

outputs: venv ## re-execute solutions/ in place so their saved outputs are current
	@for notebook in solutions/[0-9][0-9]-*.ipynb; do
	  echo "executing $$notebook"
	  COURSE_EXPECT_STATUS=correct $(VENV)/bin/jupyter nbconvert --log-level=WARN --to notebook \
	    --execute --inplace --ExecutePreprocessor.timeout=900 "$$notebook"
	done

clean: ## remove .venv, .venv-311 and caches (nothing else)
	@rm -rf $(VENV) .venv-311 .pytest_cache *.egg-info
	find . -path ./.git -prune -o -name __pycache__ -type d -print0 | xargs -0 rm -rf
	echo "Removed .venv, .venv-311, *.egg-info and __pycache__ directories."
