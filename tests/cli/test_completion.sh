#!/usr/bin/env bash
# completion_scripts: the generated completion scripts at work. bash: the
# function _ocisbx called with COMP_WORDS/COMP_CWORD as bash's completion
# calls it; zsh: _ocisbx with words/CURRENT and compadd/_files stubbed;
# fish: `complete -C` on the script. Also: `ocisbx completion SHELL` prints
# the file the build installs.
#   test_completion.sh BUILD_DIR
set -euo pipefail
build=$1
share=$build/share
fails=0
check() { # what got want...: every wanted word is among what came back
  local what=$1 got=$2; shift 2
  for w in "$@"; do
    case " $got " in *" $w "*) ;; *) echo "FAIL $what: no '$w' in: $got"; fails=$((fails + 1)) ;; esac
  done
}
check_not() {
  local what=$1 got=$2; shift 2
  for w in "$@"; do
    case " $got " in *" $w "*) echo "FAIL $what: '$w' should not be in: $got"; fails=$((fails + 1)) ;; esac
  done
}

for shell in bash zsh fish; do
  f=$share/ocisbx.bash; [ $shell = zsh ] && f=$share/_ocisbx; [ $shell = fish ] && f=$share/ocisbx.fish
  "$build/ocisbx" completion $shell | cmp - "$f" || { echo "FAIL ocisbx completion $shell differs from $f"; fails=$((fails + 1)); }
done

# ---- bash ----
bash_complete() { # the words; the last one is the one being completed
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _ocisbx
           printf "%s " "${COMPREPLY[@]}"' _ "$share/ocisbx.bash" "$@"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dir one" && touch "$tmp/file.txt"
check "bash: commands" "$(bash_complete ocisbx '')" sandbox sandbox-command exec cp harness completion generative-ai-sandbox
check "bash: subcommands" "$(bash_complete ocisbx sandbox cr)" create create-from-snapshot
check_not "bash: hidden alias" "$(bash_complete ocisbx sandbox '')" list
check "bash: options" "$(bash_complete ocisbx sandbox create --)" --project-id --shape --wait-for-state --profile --debug
check "bash: --shape" "$(bash_complete ocisbx sandbox create --shape '')" SMALL MEDIUM LARGE
check "bash: --shape=" "$(bash_complete ocisbx sandbox create --shape = M)" MEDIUM
check "bash: states" "$(bash_complete ocisbx --profile P sandbox create --wait-for-state RUNNING --wait-for-state '')" \
  CREATING RUNNING FAILED DELETED
check "bash: snapshot states" "$(bash_complete ocisbx sandbox-snapshot create --wait-for-state '')" ACTIVE
check "bash: command states" "$(bash_complete ocisbx sandbox-command get --wait-for-state '')" FINISHED_NO_EXIT_CODE
check "bash: --output" "$(bash_complete ocisbx sandbox get --output '')" json table
check "bash: --auth" "$(bash_complete ocisbx --auth '')" api_key security_token instance_principal resource_principal
check "bash: full path" "$(bash_complete ocisbx generative-ai-sandbox sandbox-command-e)" sandbox-command-event
check_not "bash: full path, OCI groups only" "$(bash_complete ocisbx generative-ai-sandbox '')" exec
check "bash: full path verbs" "$(bash_complete ocisbx generative-ai-sandbox sandbox-command-event '')" run-and-stream stream
check "bash: exec" "$(bash_complete ocisbx exec --)" --sandbox-id --local-dir --timeout --secret-env --cwd
check "bash: --network" "$(bash_complete ocisbx exec --network '')" allow deny
check "bash: --local-dir" "$(bash_complete ocisbx exec --local-dir "$tmp/d")" "$tmp/dir one"
check_not "bash: --local-dir (directories only)" "$(bash_complete ocisbx exec --local-dir "$tmp/f")" "$tmp/file.txt"
check "bash: --config-file" "$(bash_complete ocisbx --config-file "$tmp/f")" "$tmp/file.txt"
check "bash: cp takes files" "$(bash_complete ocisbx cp "$tmp/f")" "$tmp/file.txt"
check "bash: harness" "$(bash_complete ocisbx harness '')" tools prompt call
check "bash: harness tools --format" "$(bash_complete ocisbx harness tools --format '')" ours openai anthropic
check "bash: the alias group" "$(bash_complete ocisbx command '')" run events output
check "bash: an option value is not a subcommand" "$(bash_complete ocisbx --profile sandbox sandbox g)" get
[ -z "$(bash_complete ocisbx sandbox get --sandbox-id '' | tr -d ' ')" ] || { echo "FAIL bash: a free value offers nothing"; fails=$((fails + 1)); }

# ---- zsh ----
zsh_complete() {
  zsh -f -c 'compdef() { :; }
             compadd() { [[ $1 == -- ]] && shift; reply+=("$@"); }
             _files() { reply+=("<files${1:+ $1}>"); }
             compset() { :; }
             source "$1"; shift; words=("$@"); CURRENT=$#; reply=(); _ocisbx; print -r -- "${(j: :)reply}"' \
    _ "$share/_ocisbx" "$@"
}
zsh -n "$share/_ocisbx" || { echo "FAIL zsh -n"; fails=$((fails + 1)); }
check "zsh: commands" "$(zsh_complete ocisbx '')" sandbox exec generative-ai-sandbox
check "zsh: subcommands" "$(zsh_complete ocisbx sandbox cr)" create create-from-snapshot
check "zsh: --shape" "$(zsh_complete ocisbx sandbox create --shape '')" SMALL MEDIUM LARGE
check "zsh: options" "$(zsh_complete ocisbx exec --)" --local-dir --secret-env --profile
check "zsh: --local-dir" "$(zsh_complete ocisbx exec --local-dir '')" "<files" "-/>"
check "zsh: full path" "$(zsh_complete ocisbx generative-ai-sandbox sandbox-file '')" read write

# ---- fish ----
fish_complete() { fish -c "source '$share/ocisbx.fish'; complete -C '$*'" | cut -f1 | tr '\n' ' '; }
fish --no-execute "$share/ocisbx.fish" || { echo "FAIL fish --no-execute"; fails=$((fails + 1)); }
check "fish: commands" "$(fish_complete 'ocisbx sa')" sandbox sandbox-command-event
check "fish: subcommands" "$(fish_complete 'ocisbx sandbox cr')" create create-from-snapshot
check "fish: --shape" "$(fish_complete 'ocisbx sandbox create --shape ')" SMALL MEDIUM LARGE
check "fish: options" "$(fish_complete 'ocisbx --profile x sandbox get --')" --sandbox-id --output --profile
check "fish: --output" "$(fish_complete 'ocisbx sandbox get --output ')" json table
check "fish: full path" "$(fish_complete 'ocisbx generative-ai-sandbox sandbox-command r')" run run-and-wait
check "fish: exec" "$(fish_complete 'ocisbx exec --network ')" allow deny

if [ "$fails" -gt 0 ]; then echo "completion_scripts: $fails failed"; exit 1; fi
echo "completion_scripts: ok"
