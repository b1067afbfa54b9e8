# Sesame — the two set-up commands are `make run` and `make test`; both install what they lack.
SHELL := /bin/bash
.DEFAULT_GOAL := run

# Debian packages the build, the app and the tests need.
DEBIAN_PACKAGES := libgtk-3-dev libwebkit2gtk-4.1-dev libsecret-1-dev xvfb xauth dbus dbus-x11 gnome-keyring \
                   libsecret-tools pkg-config
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
SWIFT_BUILD_FLAGS ?=

.PHONY: deps build run test bench install clean

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

## build: build every product
build: deps
	swift build $(SWIFT_BUILD_FLAGS)

## run: build and run the app (today: the headless account commands on the bundled sample settings)
run: build
	swift run $(SWIFT_BUILD_FLAGS) sesame accounts

## test: build and pass every test, inside a private D-Bus session with an unlocked gnome-keyring
test: deps
	swift build --build-tests $(SWIFT_BUILD_FLAGS)
	scripts/test-session.sh swift test --skip-build $(SWIFT_BUILD_FLAGS)

clean:
	rm -rf .build
