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

# The platform modules: SesameGIO (GLib, GIO) below SesameGtk (GTK, WebKit), and SesameTPM (the
# TPM, through tpm2-tss). Their Interop/ folders are the only homes of C calls, pointers and Unmanaged.
interop="^Sources/(SesameGIO|SesameGtk|SesameTPM)/Interop/"

rule "1. raw pointers, Unmanaged and @convention(c) appear only in the platform modules' Interop/ folders" \
    "grep -rnE 'Unsafe[A-Za-z]*Pointer|OpaquePointer|Unmanaged|@convention' Sources --include=*.swift \
        | grep -vE '$interop'"

rule "2. only SesameGtk/Interop/ imports CGtkWebKit, only SesameGIO/Interop/ CGio, only SesameTPM/Interop/ CTPM" \
    "{ grep -rln 'import CGtkWebKit' Sources Tests Demo Benchmarks | grep -v '^Sources/SesameGtk/Interop/'; \
       grep -rln 'import CGio' Sources Tests Demo Benchmarks | grep -v '^Sources/SesameGIO/Interop/'; \
       grep -rln 'import CTPM' Sources Tests Demo Benchmarks | grep -v '^Sources/SesameTPM/Interop/'; }"

rule "3. SesameSystem imports nothing of Sesame's; SesameCore only SesameSystem, no C module, and never mentions the main actor" \
    "{ grep -rlnE '^[^/]*import (Sesame|C[A-Z])' Sources/SesameSystem; \
       grep -rlnE '^[^/]*import (SesameGtk|SesameGIO|SesameService|SesameSamples|SesameWindowModel|SesameTPM|SesameKeyring|SesameGit|CGtkWebKit|CGio)|MainActor' Sources/SesameCore; }"

rule "4. the emulator (library and executable) and SesameTestSupport never import SesameCore or SesameCoreTestSupport" \
    "grep -rlnE '^[^/]*import (SesameCore|SesameCoreTestSupport)\\b' Sources/IdentityEmulator Sources/identity-emulator Tests/SesameTestSupport"

rule "5. SesameSamples and SesameWindowModel import neither GTK nor WebKit, the window model not the samples; SesameGIO, SesameService, SesameCommandLine and sesame-service import none of them; the command line (sesame) neither GTK nor the samples; git's helper only SesameGit, SesameGIO and SesameSystem" \
    "{ grep -rlnE '^[^/]*import (CGtkWebKit|SesameGtk)' Sources/SesameSamples Sources/SesameWindowModel; \
       grep -rlnE '^[^/]*import SesameSamples' Sources/SesameWindowModel; \
       grep -rlnE '^[^/]*import (CGtkWebKit|SesameGtk|SesameSamples|SesameWindowModel)' Sources/SesameGIO Sources/SesameService \
           Sources/SesameCommandLine Sources/sesame-service; \
       grep -rlnE '^[^/]*import (CGtkWebKit|SesameGtk|SesameSamples)' Sources/sesame; \
       grep -rlnE '^[^/]*import (SesameCore|SesameService)' Sources/SesameGIO; \
       grep -rnE '^[^/]*import Sesame' Sources/SesameGit Sources/git-credential-sesame | grep -vE 'import (SesameGit|SesameGIO|SesameSystem)\$'; }"

rule "6. GTK, GDK, GLib, WebKit, ATK, Pango and cairo functions are called only from the platform modules' Interop/ folders, GTK's only from SesameGtk's" \
    "{ grep -rnE '\\b(gtk|gdk|webkit|g|atk|pango|cairo)_[a-z0-9_]+\\(' Sources --include=*.swift | grep -vE '$interop' | $code_only; \
       grep -rnE '\\b(gtk|gdk|webkit|atk|pango|cairo)_[a-z0-9_]+\\(' Sources/SesameGIO --include=*.swift | $code_only; }"

rule "7. GObject reference counts change only in SesameGIO/Interop/GObjectReference.swift (its owners, withNewObject, referenceForC)" \
    "grep -rnE '\\bg_(object_(ref|unref|ref_sink)|clear_object)\\b' Sources --include=*.swift \
        | grep -v '^Sources/SesameGIO/Interop/GObjectReference.swift:' | $code_only"

rule "8. the platform modules' public API shows no C type" \
    "grep -rn 'public' Sources/SesameGtk Sources/SesameGIO Sources/SesameTPM --include=*.swift | grep -E 'UnsafeMutable|OpaquePointer|Gtk[A-Z][a-z]+|WebKitWeb|GError|GVariant|GDBus' \
        | $code_only"

# The emulator does not import SesameCore, so its one rename (StateFile) is its own; the tests
# play other programs with raw calls on purpose.
rule "9. file system calls and errno only in SesameSystem/Posix.swift, in every module over it" \
    "grep -rnE '(^|[^.[:alnum:]_])(openat|creat|flock|fcntl|lockf|strerror|fchmod|chmod|fsync|fdatasync|rename|renameat|unlink|unlinkat|lstat|fstat|inotify_[a-z0-9_]+)\\(|(^|[^.[:alnum:]_])open\\([^)]*\\bO_[A-Z]|\\berrno\\b' \
        Sources/SesameCore Sources/SesameKeyring Sources/SesameService Sources/SesameSamples Sources/SesameWindowModel Sources/SesameTPM Sources/SesameGtk Sources/sesame \
        Sources/SesameGit Sources/git-credential-sesame Demo Benchmarks/sesame-bench \
        --include=*.swift | grep -v '^Sources/SesameSystem/Posix.swift:' | $code_only"

rule "10. no type over 350 lines counted across its extensions (AccountStore, the emulator's IdentityState and SignInController 250)" \
    "scripts/type-sizes.py"

# What SesameSamples holds: the samples' view models and the model they share, nothing of the
# window's (that is SesameWindowModel) and nothing every program needs (that is SesameSystem).
samples="AppModel DirectorySearch MeConsole NetworkStatus PageStatus RetrySchedule Sample SampleSession TaskList"
rule "12. SesameSamples holds the samples only ($samples); gettext only in SesameWindowModel/Localization.swift" \
    "{ for file in Sources/SesameSamples/*.swift; do name=\$(basename \"\$file\" .swift); \
         case \" $samples \" in *\" \$name \"*) ;; *) echo \"\$file: not a sample's (the window's model, or below everything?)\";; esac; done; \
       grep -rln 'import CLibIntl' Sources Tests Demo Benchmarks | grep -v '^Sources/SesameWindowModel/Localization.swift'; }"

# A test waits on the event itself (Eventually, a pipe, a trace line); a fixed sleep is for a real
# clock a test cannot move (Dovecot's, MSAL's) or a server's pace, and says so where it sleeps.
rule "11. every sleep in a test says why, in a comment on its line or the one before" \
    "find Tests -path Tests/ThirdParty -prune -o -type f \\( -name '*.swift' -o -name '*.py' \\) -print0 \
        | xargs -0 awk 'FNR == 1 { previous = \"\" }
            /(^|[^A-Za-z_])(Task\\.sleep|Thread\\.sleep|usleep|time\\.sleep)\\(/ && \$0 !~ /(\\/\\/|#)/ && previous !~ /^[[:space:]]*(\\/\\/|#)/ {
                print FILENAME \":\" FNR \": \" \$0 }
            { previous = \$0 }'"

# State with one owner (ARCHITECTURE.md): the account store's flows take their inputs and its
# AccountStoreContext, never the store itself; the store's own fields are private to its file.
rule "13. no flow reaches into the account store: no \`isolated AccountStore\`, its stored properties private" \
    "{ grep -rn 'isolated AccountStore' Sources --include=*.swift | $code_only; \
       awk '/^public actor AccountStore/ { inside = 1; next } inside && /^}/ { exit }
            inside && /^    (var|let|public var|public let|nonisolated let|public nonisolated let) / { print FILENAME \":\" FNR \": \" \$0 }' \
            Sources/SesameCore/Accounts/AccountStore.swift; }"

exit $failed
