#!/bin/sh
# resolve.sh: a workspace path's symlinks resolved inside the workspace,
# printed as hex; out of the workspace: exit 93.
# shellcheck source=assert.sh
. "${0%/*}/assert.sh"

hex() { printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n'; }

W="$T/work space"
mkdir -p "$W/.git" "$W/secrets" "$W/a b/c" "$W/-n"
: >"$W/.git/config"
ln -s .git "$W/gitlink"
ln -s secrets "$W/seclink"
ln -s "a b" "$W/spaced"
ln -s spaced/c "$W/chain"            # a link to a path through a link
ln -s "$W/secrets" "$W/absolute"     # an absolute target inside
ln -s missing/file "$W/dangling"
ln -s / "$W/root"
ln -s ../.. "$W/a b/up"
nl='
'
mkdir "$W/new${nl}line${nl}"

# expect PATH RESOLVED WHAT
expect() {
    run resolve "$W" "$1"
    expect_rc 0 "$3"
    expect_out "$(hex "$2")" "$3"
}

expect "" "" "the root"
expect "a b/c" "a b/c" "a plain path with a space"
expect "gitlink/config" ".git/config" "a link to a directory"
expect "seclink/key" "secrets/key" "a link, the file missing"
expect "chain/x" "a b/c/x" "a chain of links"
expect "absolute/k" "secrets/k" "an absolute link inside"
expect "dangling" "missing/file" "a dangling link"
expect "-n" "-n" "a leading dash"
expect "new${nl}line${nl}" "new${nl}line${nl}" "newlines, a final one too"
expect "nothing/here" "nothing/here" "nothing exists"

run resolve "$W" "root/etc/passwd"
expect_rc 93 "a link to /"
run resolve "$W" "a b/up/x"
expect_rc 93 "a link out through .."

# the root given through a link resolves as well
ln -s "work space" "$T/wslink"
run resolve "$T/wslink" "gitlink"
expect_rc 0 "the root through a link"
expect_out "$(hex ".git")" "the root through a link"
