#!/bin/bash
# Commit messages as HACKING.md asks: a subject of at most 72 characters, a blank line, and a
# body that says why (a merge, or a fixup!/squash! commit meant to be folded away, needs none).
#
#   check-commits.sh --message FILE   one message: git's commit-msg hook (.githooks/commit-msg)
#   check-commits.sh [SINCE]          every commit after SINCE on this branch (`make lint`)
#
# SINCE is, in this order: the argument, $LINT_COMMITS_SINCE, where the branch left its upstream
# (when it has one and has left it), or the commit before the rule was made (every later commit
# of the repository's history keeps it).
set -euo pipefail
export LC_ALL=C.UTF-8   # lengths in characters, not bytes
cd "$(dirname "$0")/.."

readonly LIMIT=72
readonly RULE_BASE=422afcc627ceffa4c624fb7c725a34e9287938b2

# Prints what is wrong with the message on stdin, one line each; nothing when it is fine.
problems() {
    local -a lines=()
    local line
    while IFS= read -r line || [ -n "$line" ]; do
        # What git's editor shows and then drops: comments, and everything below the scissors.
        [[ "$line" == "# ------------------------ >8 ------------------------"* ]] && break
        [[ "$line" == "#"* ]] && continue
        lines+=("$line")
    done
    local subject="${lines[0]:-}"
    if [ -z "${subject//[[:space:]]/}" ]; then
        echo "the subject line is empty"
        return
    fi
    if [ "${#subject}" -gt "$LIMIT" ]; then
        echo "the subject is ${#subject} characters, more than $LIMIT: \"$subject\""
    fi
    [[ "$subject" == Merge\ * || "$subject" == fixup!* || "$subject" == squash!* ]] && return
    if [ "${#lines[@]}" -gt 1 ] && [ -n "${lines[1]//[[:space:]]/}" ]; then
        echo "the line after the subject is not blank (the subject is one line; the body follows a blank line)"
    fi
    local body=""
    for line in "${lines[@]:1}"; do body+="${line//[[:space:]]/}"; done
    if [ -z "$body" ]; then
        echo "there is no body: say why, after a blank line"
    fi
}

if [ "${1:-}" = "--message" ]; then
    found=$(problems < "${2:?check-commits.sh --message FILE}")
    if [ -n "$found" ]; then
        echo "The commit message needs work (HACKING.md, \"Habits\"):" >&2
        sed 's/^/  - /' <<< "$found" >&2
        echo "Your message is kept in ${2}." >&2
        exit 1
    fi
    exit 0
fi

since="${1:-${LINT_COMMITS_SINCE:-}}"
if [ -z "$since" ] && upstream=$(git rev-parse --verify --quiet '@{upstream}' 2>/dev/null); then
    base=$(git merge-base HEAD "$upstream")
    [ "$base" != "$(git rev-parse HEAD)" ] && since="$base"
fi
since="${since:-$RULE_BASE}"
if ! git rev-parse --verify --quiet "$since^{commit}" > /dev/null; then
    echo "check-commits.sh: $since is not in this clone (a shallow one?): commits not checked" >&2
    exit 0
fi

failed=0
count=0
for commit in $(git rev-list --no-merges "$since..HEAD"); do
    count=$((count + 1))
    found=$(git log -1 --format=%B "$commit" | problems)
    if [ -n "$found" ]; then
        echo "Commit $(git log -1 --format='%h' "$commit"):"
        sed 's/^/  - /' <<< "$found"
        failed=1
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "Commit messages that break the rule (HACKING.md, \"Habits\"): reword them (git rebase -i $since) before they land."
fi
exit "$failed"
