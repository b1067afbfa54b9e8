#!/bin/bash
# Sesame's translatable strings, as gettext's own xgettext extracts them: every L("…") under
# Sources/, written as a .pot file to stdout. `make po` writes it to Resources/po/sesame.pot and
# merges it into each language; TranslationCatalogTests compares the catalogs with it.
#
# Swift's string literals read as Objective-C's (escapes, concatenation across lines), and
# xgettext flags each string with %@, %d or %1$@ as objc-format: msgfmt then checks that every
# translation takes the same arguments. Multi-line string literals ("""), which never hold an
# L("…"), read as unterminated strings: those warnings are dropped, any other is shown.
set -euo pipefail
cd "$(dirname "$0")/.."

mapfile -t files < <(grep -rlE '(^|[^A-Za-z0-9_.])L\(' Sources --include='*.swift' | LC_ALL=C sort)
if [ "${#files[@]}" -eq 0 ]; then
    echo "extract-strings.sh: no L(\"…\") under $(pwd)/Sources" >&2
    exit 1
fi

cat <<'HEADER'
# The window's UI text. English is the source language; msgids are the English text.
# Made by scripts/extract-strings.sh (`make po`): change the sources, not this file.
msgid ""
msgstr ""
"Project-Id-Version: sesame\n"
"MIME-Version: 1.0\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Content-Transfer-Encoding: 8bit\n"

HEADER
# xgettext's own header (its placeholders) is the first block: this one replaces it.
LC_ALL=C.UTF-8 xgettext --language=ObjectiveC --keyword=L --from-code=UTF-8 --no-location --no-wrap \
    --output=- "${files[@]}" 2> >(grep -v 'warning: unterminated string literal' >&2) | sed '1,/^$/d'
