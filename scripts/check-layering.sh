#!/usr/bin/env bash
# The layering rules of HACKING.md ("Who may import whom"), each as a grep that must print
# nothing. This file is their source: HACKING.md says what they mean and sends readers here.
# Prints every offending line under the rule it breaks and exits 1; prints nothing and exits 0
# when all hold. `make lint` runs it. Run from anywhere: it works from the repository's root.
set -uo pipefail
cd "$(dirname "$0")/.."

failed=0

# rule "N. DESCRIPTION" COMMAND: runs COMMAND (a pipeline in a string); any line it prints breaks
# rule N of HACKING.md's list.
rule() {
    local description=$1 command=$2 found
    found=$(bash -c "set -o pipefail; $command" 2>&1 || true)
    if [ -n "$found" ]; then
        failed=1
        printf 'Layering rule broken: %s\n%s\n\n' "$description" "$found" >&2
    fi
}

# Drops comment lines (`//`, `///`) from `grep -n` output, so a doc comment may name what it forbids.
code_only="grep -vE '^[^:]+:[0-9]+:[[:space:]]*//'"

rule "1. raw pointers, Unmanaged and @convention(c) appear only in SesameGtk/Interop/" \
    "grep -rnE 'Unsafe[A-Za-z]*Pointer|OpaquePointer|Unmanaged|@convention' Sources --include=*.swift \
        | grep -v '^Sources/SesameGtk/Interop/'"

rule "2. only SesameGtk/Interop/ imports CGtkWebKit" \
    "grep -rln 'import CGtkWebKit' Sources Tests Demo Benchmarks | grep -v '^Sources/SesameGtk/Interop/'"

rule "3. SesameCore imports neither SesameGtk, SesameSamples nor CGtkWebKit, and never mentions the main actor" \
    "grep -rlnE 'import (SesameGtk|SesameSamples|CGtkWebKit)|MainActor' Sources/SesameCore"

rule "4. the emulator (library and executable) and SesameTestSupport never import SesameCore or SesameCoreTestSupport" \
    "grep -rlnE 'import (SesameCore|SesameCoreTestSupport)\\b' Sources/IdentityEmulator Sources/identity-emulator Tests/SesameTestSupport"

rule "5. SesameSamples imports neither CGtkWebKit nor SesameGtk" \
    "grep -rlnE 'import (CGtkWebKit|SesameGtk)' Sources/SesameSamples"

rule "6. GTK, GDK, GLib, WebKit, ATK, Pango and cairo functions are called only from SesameGtk/Interop/" \
    "grep -rnE '\\b(gtk|gdk|webkit|g|atk|pango|cairo)_[a-z0-9_]+\\(' Sources --include=*.swift \
        | grep -v '^Sources/SesameGtk/Interop/' | $code_only"

rule "7. GObject reference counts change only in Interop/GObjectReference.swift (its owners, withNewObject, referenceForC)" \
    "grep -rnE '\\bg_(object_(ref|unref|ref_sink)|clear_object)\\b' Sources --include=*.swift \
        | grep -v '^Sources/SesameGtk/Interop/GObjectReference.swift:' | $code_only"

rule "8. SesameGtk's public API shows no C type" \
    "grep -rn 'public' Sources/SesameGtk --include=*.swift | grep -E 'UnsafeMutable|OpaquePointer|Gtk[A-Z][a-z]+|WebKitWeb|GError' \
        | $code_only"

# The emulator does not import SesameCore, so its one rename (StateFile) is its own; the tests
# play other programs with raw calls on purpose.
rule "9. file system calls and errno only in SesameCore/Support/Posix.swift, in every module over the Core" \
    "grep -rnE '(^|[^.[:alnum:]_])(openat|creat|flock|fcntl|lockf|strerror|fchmod|chmod|fsync|fdatasync|rename|renameat|unlink|unlinkat|lstat|fstat|inotify_[a-z0-9_]+)\\(|(^|[^.[:alnum:]_])open\\([^)]*\\bO_[A-Z]|\\berrno\\b' \
        Sources/SesameCore Sources/SesameKeyring Sources/SesameSamples Sources/SesameGtk Sources/sesame Demo Benchmarks/sesame-bench \
        --include=*.swift | grep -v '^Sources/SesameCore/Support/Posix.swift:' | $code_only"

exit $failed
