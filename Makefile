# aprs-cloud: the two commands a newcomer needs are `make run` and `make test`.
# Every install step lives here so a fresh Debian machine (or CI) needs nothing by hand.

SWIFT        ?= swift
DATA         ?= ./var
HTTP         ?= 127.0.0.1:8080
METRICS      ?= 127.0.0.1:9180
PYENV        := .build/pyenv
# The tests' own Python: the Web Push fake and the independent RFC 8291 checks need PyCA cryptography and
# http_ece (Tests/fakes/webpush_fake.py); every fake's tests run with it.
PYENV_TEST   := .build/pyenv-test
# Debian packages: C libraries the package links, and the real components tests start.
DEB_BUILD    := pkg-config libfcgi-dev libsqlite3-dev libssl-dev libcurl4-openssl-dev
DEB_RUN      := nginx spawn-fcgi curl sqlite3 openssl python3
DEB_BENCH    := wrk python3-venv libnghttp2-dev
PY_BENCH     := aprslib==0.7.2
PY_TEST      := cryptography==50.0.2 http_ece==1.2.1

.PHONY: all build release test run bench deps deps-bench deps-test format lint clean

all: build

# Install missing Debian packages (only possible as root; otherwise say what is missing).
# The push-provider fakes run on Node's built-in http2 module: install Debian's nodejs only
# where no node is on PATH.
deps:
	@./.ci/install-debs $(DEB_BUILD) $(DEB_RUN)
	@command -v node >/dev/null || ./.ci/install-debs nodejs

deps-bench: deps
	@./.ci/install-debs $(DEB_BENCH)
	@test -x $(PYENV)/bin/python || python3 -m venv $(PYENV)
	@$(PYENV)/bin/python -c 'import aprslib' 2>/dev/null || $(PYENV)/bin/pip install -q $(PY_BENCH)

# The test venv: made once, the packages installed only when an import fails (so running it again is a no-op).
deps-test: deps
	@./.ci/install-debs python3-venv
	@test -x $(PYENV_TEST)/bin/python || python3 -m venv $(PYENV_TEST)
	@$(PYENV_TEST)/bin/python -c 'import cryptography, http_ece' 2>/dev/null \
		|| $(PYENV_TEST)/bin/pip install -q $(PY_TEST)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Lint first (the tree stays clean), then the fakes' own tests (they prove the fakes behave like the
# real services), then every Swift test: unit, store, API, and the integration tests through real
# nginx, responder, listener.
test: deps-test lint
	PYTHONDONTWRITEBYTECODE=1 $(PYENV_TEST)/bin/python -m unittest discover -s Tests/fakes -p 'test_*.py'
	node --test Tests/fakes/test_push_fake.mjs
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

run: release
	.build/release/aprs-cloud up --http $(HTTP) --metrics $(METRICS) --data $(DATA)

bench: deps-bench release
	./Tests/bench/run $(PYENV)/bin/python

format:
	swift-format format --in-place --recursive Sources Tests Package.swift

# swift-format ships with the Swift toolchain; --strict turns every finding into a failure.
lint:
	swift-format lint --strict --parallel --recursive Sources Tests Package.swift

clean:
	rm -rf .build $(DATA)
