# Sesame — the two set-up commands are `make run` and `make test`; both install what they lack.
SHELL := /bin/bash
.DEFAULT_GOAL := run

# Debian packages the build, the app and the tests need.
DEBIAN_PACKAGES := libgtk-3-dev libwebkit2gtk-4.1-dev libsecret-1-dev xvfb xauth dbus dbus-x11 gnome-keyring gcr \
                   libsecret-tools pkg-config gettext desktop-file-utils webkit2gtk-driver \
                   python3 python3-venv python3-gi python3-pydbus gir1.2-atspi-2.0 at-spi2-core \
                   tinyproxy-bin socat iproute2 ca-certificates gsettings-desktop-schemas dconf-service \
                   dconf-gsettings-backend glib-networking glib-networking-services libproxy1-plugin-webkit \
                   fonts-wqy-microhei dpkg-dev binutils lintian appstream mmdebstrap bubblewrap \
                   dovecot-imapd dovecot-submissiond isync libsasl2-modules-kdexoauth2 msmtp curl openssl \
                   libubsan1 libfido2-1 libcurl4 libtss2-dev swtpm x11-utils oathtool zbar-tools librsvg2-bin python3-qrcode
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_BUILD_FLAGS ?=
# CI (CI=true, .ci/run) builds the tests without debug information: 23 s less of a fresh clone's
# 4-minute build on two cores. A crash's backtrace there names functions, without lines.
ifneq ($(CI),)
SWIFT_BUILD_FLAGS += -debug-info-format none
endif
# Every target imports only what Package.swift says it depends on.
IMPORT_CHECK := --explicit-target-dependency-import-check error
# The sources the formatter and the linter look at.
SWIFT_SOURCES := Sources Tests Demo Benchmarks Package.swift
# From PyPI for the tests: Microsoft's MSAL for Python (the emulator's wire tests sign in with
# it; with msal-extensions it refreshes on a cache Sesame shares; with its broker extra it signs in
# through Sesame as the desktop's identity broker), Selenium (the WebDriver client
# that drives `sesame --automation-mode` and the test's default browser) and oidc-provider-mock
# (an OpenID provider this project did not write), in a virtual environment over Debian's Python,
# whose python3-gi reads the app's accessibility tree (AT-SPI) and the keyring (libsecret).
MSAL_VERSION := 1.39.0
# MSAL's broker extra on Linux: Microsoft's pymsalruntime (MSALRuntime, which speaks to the
# desktop's identity broker over D-Bus; it also needs libubsan1, libfido2-1, libcurl4, WebKitGTK
# and libsecret from Debian), pinned to what the broker's notes were measured with.
PYMSALRUNTIME_VERSION := 0.20.7
# msal-extensions, MSAL's persistence layer (azure-cli's, azure-identity's): the tests share a
# cache with it. Without its optional portalocker it locks by creating `<cache>.lockfile`
# exclusively; with it, it also flocks that file: both are tested (portalocker < 4, its extra's pin).
MSAL_EXTENSIONS_VERSION := 1.3.1
PORTALOCKER_VERSION := 3.2.0
SELENIUM_VERSION := 4.51.0
# The Azure SDK's broker credential (azure-identity-broker, over azure-identity): the tests keep its
# AuthenticationRecord and sign in silently from it, through Sesame as the broker.
AZURE_IDENTITY_BROKER_VERSION := 1.3.0
AZURE_IDENTITY_VERSION := 1.25.3
# A third-party OpenID Connect provider (authlib-based) for the tests of "any OpenID provider".
OIDC_PROVIDER_MOCK_VERSION := 0.3.4
TEST_VENV := .build/test-venv
# ROADtools' roadtx (MIT): an independent implementation of device registration and the Primary
# Refresh Token that works against the real Entra ID; the emulator must serve it unchanged. In a
# virtual environment of its own (its selenium-wire and pinned libraries stay out of MSAL's).
ROADTX_VERSION := 1.22.1
ROADLIB_VERSION := 1.7.0
ROADTX_VENV := .build/roadtx-venv
ROADTX_VENV_STAMP := $(ROADTX_VENV)/.roadtx-$(ROADTX_VERSION)-roadlib-$(ROADLIB_VERSION)
# WebAuthn from the outside: Yubico's python-fido2 under soft-webauthn (a software authenticator at
# the WebAuthn API level) registers and signs in with a passkey through the emulator's pages, and
# Duo's py_webauthn verifies both as a relying party: neither was written here. soft-webauthn needs
# fido2 1.x; Duo's webauthn 2.7 resolves beside it.
SOFT_WEBAUTHN_VERSION := 0.1.4
FIDO2_VERSION := 1.1.3
DUO_WEBAUTHN_VERSION := 2.7.1
WEBAUTHN_VENV := .build/webauthn-venv
WEBAUTHN_VENV_STAMP := $(WEBAUTHN_VENV)/.soft-webauthn-$(SOFT_WEBAUTHN_VERSION)-fido2-$(FIDO2_VERSION)-webauthn-$(DUO_WEBAUTHN_VERSION)
TEST_VENV_STAMP := $(TEST_VENV)/.debian-python-msal-$(MSAL_VERSION)-pymsalruntime-$(PYMSALRUNTIME_VERSION)-extensions-$(MSAL_EXTENSIONS_VERSION)-portalocker-$(PORTALOCKER_VERSION)-selenium-$(SELENIUM_VERSION)-oidc-$(OIDC_PROVIDER_MOCK_VERSION)-azure-$(AZURE_IDENTITY_BROKER_VERSION)

# The release build of what `make install` installs, `make deb` packages and `make bench` measures:
# no debug information (perf's profiles need only the symbols). SwiftPM links each program with
# Swift's runtime and FoundationEssentials in it (--static-swift-stdlib: no libswift*.so needed);
# packaging/link-programs.sh then links the same objects again as RELEASE_PROGRAMS, a prefix's
# tree in which the programs share one copy of them, libsesame.so. Why: docs/INSTALL.md.
RELEASE_BUILD_FLAGS := -c release -debug-info-format none --static-swift-stdlib
RELEASE_BIN := .build/release
RELEASE_PROGRAMS := .build/release-programs
# Sesame's version is written in one place, Sources/SesameSystem/SesameVersion.swift.
VERSION := $(shell sed -n 's/^ *public static let current = "\(.*\)"$$/\1/p' Sources/SesameSystem/SesameVersion.swift)
PACKAGE_DIR := .build/package
DEB := $(PACKAGE_DIR)/sesame_$(VERSION)_$(shell dpkg --print-architecture).deb

.PHONY: deps build run test test-e2e test-package fuzz lint format bench demo emulator release install deb deb-unchecked po hooks help translations clean

## deps: install the Debian packages that are missing (apt-get update once, then non-interactive installs)
deps:
	@missing=""; \
	for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

## build: build every product (and compile the translations into .build/locale)
build: deps hooks translations
	swift build $(IMPORT_CHECK) $(SWIFT_BUILD_FLAGS)

## po: Resources/po/sesame.pot from the sources' L("…") (xgettext: scripts/extract-strings.sh), then
## merged into each language's .po (msgmerge): translate what it leaves empty or fuzzy
po: deps
	scripts/extract-strings.sh > Resources/po/sesame.pot
	@for po in Resources/po/*.po; do \
	  msgmerge --quiet --update --backup=none --no-wrap "$$po" Resources/po/sesame.pot; \
	  printf '%s: ' "$$po"; msgfmt --check --statistics -o /dev/null "$$po"; \
	done

## help: every target, with what it does (these comments)
help:
	@sed -n 's/^## \([a-z-]*\): /\1\t/p' $(MAKEFILE_LIST) | awk -F'\t' '{ printf "  make %-13s %s\n", $$1, $$2 }'

## hooks: git's commit-msg hook (.githooks/), so a commit message breaks no rule of `make lint`
hooks:
	@if [ -d .git ] && [ -z "$$(git config core.hooksPath)" ]; then git config core.hooksPath .githooks; fi

## translations: Resources/po/*.po → .build/locale/<lang>/LC_MESSAGES/sesame.mo
translations: deps
	@for po in Resources/po/*.po; do \
	  lang=$$(basename "$$po" .po); mkdir -p ".build/locale/$$lang/LC_MESSAGES"; \
	  msgfmt --check-format -o ".build/locale/$$lang/LC_MESSAGES/sesame.mo" "$$po"; \
	done

## run: the app on the embedded demo (`sesame --demo`: the identity emulator on a free port, which
## stops with the app); ARGS adds options, e.g. `make run ARGS=--sample=tasks`
run: build
	WEBKIT_DISABLE_COMPOSITING_MODE=$${WEBKIT_DISABLE_COMPOSITING_MODE-1} "$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)/sesame" --demo $(ARGS)

## test: lint, build with no compiler warning in Sesame's code, pass every test in a private D-Bus
## session with an unlocked gnome-keyring; then the Debian package on a clean Debian 12 root (test-package)
test: deps hooks translations lint
	@# The tests' Python (pip, mostly waiting on PyPI) is set up while the debug build compiles; a
	@# compiler warning in Sesame's own code fails it (scripts/check-warnings.sh).
	@mkdir -p .build
	@$(MAKE) --no-print-directory $(TEST_VENV_STAMP) $(ROADTX_VENV_STAMP) $(WEBAUTHN_VENV_STAMP) > .build/test-venv.log 2>&1 & venv=$$!; \
	swift build --build-tests $(IMPORT_CHECK) $(SWIFT_BUILD_FLAGS) 2>&1 | tee .build/debug-build.log; built=$${PIPESTATUS[0]}; \
	[ $$built -ne 0 ] || scripts/check-warnings.sh .build/debug-build.log || built=1; \
	wait $$venv; ready=$$?; [ $$ready -eq 0 ] || { cat .build/test-venv.log; echo "test: the tests' Python could not be set up"; }; \
	[ $$built -eq 0 ] && [ $$ready -eq 0 ]
	@# The tests, with the release build for test-package meanwhile (scripts/run-tests.sh); the
	@# output is kept in .build/test-output.log, and on a failure what failed is printed last.
	@# (Building the package there too, 37 s, left a PAC file's proxy lookup timing out under
	@# the load: it is built after the tests.)
	SESAME_TEST_PYTHON=$(CURDIR)/$(TEST_VENV)/bin/python SESAME_TEST_ROADTX=$(CURDIR)/$(ROADTX_VENV)/bin/roadtx \
	  SESAME_TEST_WEBAUTHN_PYTHON=$(CURDIR)/$(WEBAUTHN_VENV)/bin/python scripts/run-tests.sh \
	  "$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)" .build/test-output.log $(MAKE) --no-print-directory release
	@# The release build just ended: the package's install does not run it again (15 s).
	$(MAKE) --no-print-directory test-package RELEASE_BUILT=1

## test-package: `make deb`, then the package in a clean Debian 12 root (mmdebstrap, cached in
## .build/package/root): apt-get install ./sesame_*.deb, --version, man, a whole sign-in through the
## installed window under Xvfb, and a purge that leaves nothing (packaging/test/test-package.sh).
## It needs root (chroot, mounts, namespaces), as CI has; without root it says so and is skipped.
test-package:
	@if [ "$$(id -u)" != 0 ]; then \
	  echo "test-package: SKIPPED: the clean-root test needs root (chroot, mounts, namespaces); run: sudo make test-package"; \
	else \
	  $(MAKE) --no-print-directory deb-unchecked || exit 1; \
	  packaging/check-deb.sh $(PACKAGE_DIR)/stage $(DEB) > $(PACKAGE_DIR)/check-deb.log 2>&1 & checks=$$!; \
	  packaging/test/test-package.sh $(DEB) $(VERSION); tested=$$?; \
	  wait $$checks; checked=$$?; cat $(PACKAGE_DIR)/check-deb.log; \
	  [ $$tested -eq 0 ] && [ $$checked -eq 0 ]; \
	fi

## test-e2e: the end-to-end flows REPEAT times in a row (default 1), each failure reported with its
## run, flow and step; e.g. `make test-e2e REPEAT=20`
REPEAT ?= 1
test-e2e: deps translations $(TEST_VENV_STAMP)
	swift build --build-tests $(IMPORT_CHECK) $(SWIFT_BUILD_FLAGS)
	SESAME_TEST_PYTHON=$(CURDIR)/$(TEST_VENV)/bin/python scripts/test-session.sh scripts/repeat-e2e.sh $(REPEAT)

## fuzz: the seeded structured fuzzer over every parser of outside input, FUZZ_SECONDS per
## target (default 600; `make test` gives each 2), from FUZZ_SEED; a crashing input is left in
## .build/fuzz/<target>.current
FUZZ_SECONDS ?= 600
FUZZ_SEED ?= 1
fuzz: deps
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	FUZZ_SECONDS=$(FUZZ_SECONDS) FUZZ_SEED=$(FUZZ_SEED) swift test --skip-build $(SWIFT_BUILD_FLAGS) --filter StructuredFuzzTests

## lint: the toolchain's swift-format with .swift-format (4 spaces, 140 columns), strict; then
## HACKING.md's layering rules (scripts/check-layering.sh prints each line that breaks one) and
## its commit messages for the commits on this branch (scripts/check-commits.sh)
lint:
	swift format lint --strict --recursive $(SWIFT_SOURCES)
	scripts/check-layering.sh
	scripts/check-commits.sh

## format: rewrite the sources as `make lint` wants them
format:
	swift format format --in-place --recursive $(SWIFT_SOURCES)

## the tests' Python: Debian's (for python3-gi and AT-SPI) with MSAL and Selenium from PyPI
$(TEST_VENV_STAMP): | deps
	rm -rf $(TEST_VENV)
	/usr/bin/python3 -m venv --system-site-packages $(TEST_VENV)
	$(TEST_VENV)/bin/pip install -q --disable-pip-version-check --ignore-installed "msal[broker]==$(MSAL_VERSION)" \
	  "pymsalruntime==$(PYMSALRUNTIME_VERSION)" "msal-extensions==$(MSAL_EXTENSIONS_VERSION)" "portalocker==$(PORTALOCKER_VERSION)" \
	  "selenium==$(SELENIUM_VERSION)" "oidc-provider-mock==$(OIDC_PROVIDER_MOCK_VERSION)" \
	  "azure-identity-broker==$(AZURE_IDENTITY_BROKER_VERSION)" "azure-identity==$(AZURE_IDENTITY_VERSION)"
	@touch $@

## roadtx, pinned, unchanged, for the device registration and PRT tests
$(ROADTX_VENV_STAMP): | deps
	rm -rf $(ROADTX_VENV)
	/usr/bin/python3 -m venv $(ROADTX_VENV)
	$(ROADTX_VENV)/bin/pip install -q --disable-pip-version-check "roadtx==$(ROADTX_VERSION)" "roadlib==$(ROADLIB_VERSION)"
	@touch $@

## soft-webauthn, python-fido2 and Duo's webauthn, pinned, for the passkey interop test
$(WEBAUTHN_VENV_STAMP): | deps
	rm -rf $(WEBAUTHN_VENV)
	/usr/bin/python3 -m venv $(WEBAUTHN_VENV)
	$(WEBAUTHN_VENV)/bin/pip install -q --disable-pip-version-check "soft-webauthn==$(SOFT_WEBAUTHN_VERSION)" \
	  "fido2==$(FIDO2_VERSION)" "webauthn==$(DUO_WEBAUTHN_VERSION)"
	@touch $@

## demo: the whole tutorial flow played by itself on a virtual display: numbered screenshots and
## an animated image in demo/ (no display and no network needed)
DEMO_DIR ?= demo
demo: build
	@command -v convert >/dev/null || { $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends imagemagick; }
	swift build $(SWIFT_BUILD_FLAGS) --product sesame-tour
	WEBKIT_DISABLE_COMPOSITING_MODE=1 xvfb-run -a -s "-screen 0 1280x800x24" "$$(swift build $(SWIFT_BUILD_FLAGS) --show-bin-path)/sesame-tour" "$(DEMO_DIR)"
	convert -delay 180 -loop 0 "$(DEMO_DIR)"/[0-9]*.png -resize 800x -colors 96 "$(DEMO_DIR)/sesame-flow.gif"
	@echo "Screenshots and $(DEMO_DIR)/sesame-flow.gif written."

## emulator: run the identity emulator on port 8400 with one-time codes shown on its pages
emulator: build
	swift run $(SWIFT_BUILD_FLAGS) identity-emulator --port 8400 --demo

## bench: release builds, then every wait a user feels as a ratio against its baseline, measured
## side by side (bench/bench.py); prints a table and writes bench/results.json
BENCH_PACKAGES := xdotool curl libjson-glib-dev libsoup-3.0-dev gnome-online-accounts
# The release build (RELEASE_BUILD_FLAGS), as installed and packaged. One `swift build` for every
# product: the build system keeps both cores busy across products (one invocation per product left
# a core idle at each one's last module and link).
BENCH_BUILD_FLAGS := $(RELEASE_BUILD_FLAGS)

bench: deps $(TEST_VENV_STAMP)
	@missing=""; \
	for p in $(BENCH_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "Installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi
	swift build $(BENCH_BUILD_FLAGS)
	packaging/link-programs.sh $(RELEASE_BIN) $(RELEASE_PROGRAMS)
	scripts/test-session.sh $(TEST_VENV)/bin/python bench/bench.py $(RELEASE_BIN) $(RELEASE_PROGRAMS) bench/results.json

## release: the programs as installed and packaged (RELEASE_BUILD_FLAGS, then
## packaging/link-programs.sh into RELEASE_PROGRAMS), and their man pages and bash/zsh/fish
## completions generated from their parsers (packaging/generate-docs.sh)
release: deps
	@# Every product in one `swift build`, as `make bench` builds them (the demo's and the
	@# benchmarks' too): from no release objects, 12 min 22 s and 23.8 CPU-minutes with the
	@# linking below, against 14 min 41 s and 24.7 for the five packaged products one at a time
	@# (each waited on its own last module and link; the build system overlaps them).
	swift build $(RELEASE_BUILD_FLAGS)
	packaging/link-programs.sh $(RELEASE_BIN) $(RELEASE_PROGRAMS)
	packaging/generate-docs.sh $(RELEASE_PROGRAMS)/bin $(PACKAGE_DIR)/generated

## install: the app and the emulator, their data (settings, translations), desktop entry, AppStream
## metainfo, icons (full-colour and symbolic), man pages, shell completions, git's credential
## helper and the D-Bus activation file under PREFIX
PREFIX ?= /usr/local
# zsh's folder for completions a package installs, or for those installed locally.
ZSH_COMPLETIONS := $(if $(filter /usr,$(PREFIX)),vendor-completions,site-functions)
# RELEASE_BUILT=1: the release programs and their manual were just made (make test).
install: $(if $(RELEASE_BUILT),,release)
	install -d "$(DESTDIR)$(PREFIX)/bin" "$(DESTDIR)$(PREFIX)/share/sesame/settings" \
	  "$(DESTDIR)$(PREFIX)/share/applications" "$(DESTDIR)$(PREFIX)/share/metainfo" \
	  "$(DESTDIR)$(PREFIX)/share/icons/hicolor/scalable/apps" "$(DESTDIR)$(PREFIX)/share/icons/hicolor/symbolic/apps" \
	  "$(DESTDIR)$(PREFIX)/share/man/man1" "$(DESTDIR)$(PREFIX)/share/bash-completion/completions" \
	  "$(DESTDIR)$(PREFIX)/share/zsh/$(ZSH_COMPLETIONS)" "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d" \
	  "$(DESTDIR)$(PREFIX)/share/dbus-1/services" "$(DESTDIR)$(PREFIX)/libexec/sesame" "$(DESTDIR)$(PREFIX)/share/sesame/dbus-1" \
	  "$(DESTDIR)$(PREFIX)/lib/sesame"
	install -m 755 $(RELEASE_PROGRAMS)/bin/sesame $(RELEASE_PROGRAMS)/bin/identity-emulator \
	  $(RELEASE_PROGRAMS)/bin/git-credential-sesame "$(DESTDIR)$(PREFIX)/bin/"
	@# The window, and the service D-Bus activation starts (through `sesame --service`): no GTK,
	@# no WebKit. What they share with `sesame` and the emulator: Swift's runtime and Sesame.
	install -m 755 $(RELEASE_PROGRAMS)/libexec/sesame/sesame-window $(RELEASE_PROGRAMS)/libexec/sesame/sesame-service \
	  "$(DESTDIR)$(PREFIX)/libexec/sesame/"
	install -m 644 $(RELEASE_PROGRAMS)/lib/sesame/libsesame.so.0 "$(DESTDIR)$(PREFIX)/lib/sesame/"
	install -m 644 Resources/settings/*.plist "$(DESTDIR)$(PREFIX)/share/sesame/settings/"
	install -m 644 Resources/desktop/org.sesame.Sesame.desktop "$(DESTDIR)$(PREFIX)/share/applications/"
	install -m 644 Resources/desktop/org.sesame.Sesame.metainfo.xml "$(DESTDIR)$(PREFIX)/share/metainfo/"
	install -m 644 Resources/icons/org.sesame.Sesame.svg "$(DESTDIR)$(PREFIX)/share/icons/hicolor/scalable/apps/"
	install -m 644 Resources/icons/org.sesame.Sesame-symbolic.svg "$(DESTDIR)$(PREFIX)/share/icons/hicolor/symbolic/apps/"
	install -m 644 $(PACKAGE_DIR)/generated/man/*.1.gz "$(DESTDIR)$(PREFIX)/share/man/man1/"
	install -m 644 $(PACKAGE_DIR)/generated/bash/* "$(DESTDIR)$(PREFIX)/share/bash-completion/completions/"
	install -m 644 $(PACKAGE_DIR)/generated/zsh/* "$(DESTDIR)$(PREFIX)/share/zsh/$(ZSH_COMPLETIONS)/"
	install -m 644 $(PACKAGE_DIR)/generated/fish/* "$(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/"
	@# D-Bus activation: a call to org.sesame.Sesame with no Sesame running starts `sesame --service`.
	sed 's|@bindir@|$(PREFIX)/bin|' Resources/dbus/org.sesame.Sesame.service.in \
	  > "$(DESTDIR)$(PREFIX)/share/dbus-1/services/org.sesame.Sesame.service"
	@# The identity broker's name, for the user to choose (docs/BROKER.md): not active as installed.
	sed 's|@bindir@|$(PREFIX)/bin|' Resources/dbus/com.microsoft.identity.broker1.service.in \
	  > "$(DESTDIR)$(PREFIX)/share/sesame/dbus-1/com.microsoft.identity.broker1.service"
	@for po in Resources/po/*.po; do \
	  lang=$$(basename "$$po" .po); \
	  install -d "$(DESTDIR)$(PREFIX)/share/locale/$$lang/LC_MESSAGES"; \
	  msgfmt -o "$(DESTDIR)$(PREFIX)/share/locale/$$lang/LC_MESSAGES/sesame.mo" "$$po"; \
	done
	@echo "Installed under $(DESTDIR)$(PREFIX)"

## deb: the Debian package $(DEB): what `make install PREFIX=/usr` installs, with Depends computed
## by dpkg-shlibdeps; checked by appstreamcli, desktop-file-validate and lintian (packaging/build-deb.sh)
deb: deb-unchecked
	packaging/check-deb.sh $(PACKAGE_DIR)/stage $(DEB)

# The package without its checks (appstreamcli, desktop-file-validate, lintian): test-package
# runs them beside the clean-root test.
deb-unchecked: deps
	rm -rf $(PACKAGE_DIR)/stage
	$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(PACKAGE_DIR)/stage PREFIX=/usr
	packaging/build-deb.sh $(PACKAGE_DIR)/stage $(VERSION) $(DEB)

clean:
	rm -rf .build
