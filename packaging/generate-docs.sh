#!/usr/bin/env bash
# The man pages and the bash, zsh and fish completions of `sesame` and `identity-emulator`,
# generated from their own parsers (swift-argument-parser), never written by hand.
#
#     packaging/generate-docs.sh BIN_DIR OUT_DIR
#
# OUT_DIR/man/PROGRAM.1.gz, OUT_DIR/bash/PROGRAM, OUT_DIR/zsh/_PROGRAM, OUT_DIR/fish/PROGRAM.fish.
#
# The man pages come from the argument parser's own generate-manual tool, the one its
# `swift package plugin generate-manual` runs. The plugin runs here (offline too), but it first
# builds every product of the package (tests excepted) in its own build parameters — release
# without --static-swift-stdlib and -debug-info-format none, so a second full release build of
# about ten minutes. Built here as a product of the package's dependency, in the debug build
# (`make test` has compiled the argument parser there already: a few seconds), the tool reads
# each program's `--experimental-dump-help`, as under the plugin.
# The completions are the programs' own `--generate-completion-script`. git-credential-sesame has
# no parser (git calls it with one word): its page is written by hand, packaging/man/, dated here.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=$1
out=$2
maintainer=$(sed -n 's/^Maintainer: *//p' packaging/debian/control)
# The pages' date: the last commit's, so that the same sources give the same pages.
date=$(git log -1 --format=%cs 2>/dev/null || date -u +%F)

swift build --product generate-manual >/dev/null
generate_manual="$(swift build --show-bin-path)/generate-manual"

rm -rf "$out"
mkdir -p "$out/man" "$out/bash" "$out/zsh" "$out/fish"
for program in sesame identity-emulator; do
  "$generate_manual" "$bin/$program" --date "$date" --authors "$maintainer" --output-directory "$out/man"
  gzip -9n "$out/man/$program.1"
  # bash-completion sources the script: a #! line would only mislead (lintian says so).
  "$bin/$program" --generate-completion-script bash | sed '1{/^#!/d}' >"$out/bash/$program"
  "$bin/$program" --generate-completion-script zsh >"$out/zsh/_$program"
  "$bin/$program" --generate-completion-script fish >"$out/fish/$program.fish"
done
for page in packaging/man/*.1; do
  sed "s/@DATE@/$date/" "$page" | gzip -9n >"$out/man/$(basename "$page").gz"
done
