#!/usr/bin/env bash
# checks.sh CASE BUILD_DIR: one example's CTest test (label "example"). Runs
# the example against a fresh local test tenancy (run-with-tenancy.sh; the
# case itself runs inside it, with the tenancy's environment) and checks what
# it printed, what it left behind and what it cleaned up. Exit 0 when every
# check holds; each failed check names itself on stderr.
# The helpers below are called through check(), which shellcheck cannot see:
# shellcheck disable=SC2317
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
case_=$1; build=$(cd "$2" && pwd)

if [ "${CHECKS_INSIDE:-}" != 1 ]; then
  extra=""
  if [ "$case_" = application_managed_sandbox_delete_fails ]; then
    # every DELETE of a sandbox fails with a status the client does not retry
    extra=$(mktemp "$build/faults.XXXXXX.yaml")
    printf 'faults:\n  rules:\n    - match: {method: DELETE, path: "/sandboxes/*"}\n      respond: 501\n' > "$extra"
  fi
  set +e
  CHECKS_INSIDE=1 TENANCY_EXTRA_YAML=$extra bash "$here/run-with-tenancy.sh" "$build" bash "$0" "$case_" "$build"
  st=$?
  set -e
  [ -z "$extra" ] || rm -f "$extra"
  exit "$st"
fi

ex=$build/examples
ocisbx=$build/ocisbx
tenancy=$(dirname "$OCI_CONFIG_FILE")
work=$(mktemp -d "$build/example-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
check() { # check DESCRIPTION COMMAND...: runs the command, records a failure
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what" >&2; failed=1; fi
}
has() { grep -qF -- "$2" "$1"; }
hasnt() { ! grep -qF -- "$2" "$1"; }
json_field() { sed -n "s/^[[:space:]]*\"$1\":[[:space:]]*\"\\([^\"]*\\)\".*/\\1/p" | head -n 1; }
run() { # run OUT ERR PROGRAM ARGS...: sets $status
  local out=$1 err=$2; shift 2
  set +e
  "$@" > "$out" 2> "$err"
  status=$?
  set -e
  echo "--- $(basename "$1") exited $status; stdout:"; cat "$out"
  echo "--- stderr:"; cat "$err"
}
sandbox_gone() { ! "$ocisbx" sandbox get --sandbox-id "$1" > /dev/null 2> "$work/get.err" && has "$work/get.err" 404; }
sandbox_running() { "$ocisbx" sandbox get --sandbox-id "$1" | grep -q '"lifecycleState": *"RUNNING"'; }
sandbox_stopped() { "$ocisbx" sandbox get --sandbox-id "$1" | grep -q '"lifecycleState": *"STOPPED"'; }
sandbox_of() { sed -n 's/.*oci-sandbox:[^/]*\/\(sbx-[a-z0-9]*\).*/\1/p' "$1" | head -n 1; }
records() { wc -l < "$1" | tr -d ' '; }

cd "$work"
case "$case_" in
hello_sandbox)
  run "$work/out" "$work/err" "$ex/hello_sandbox"
  check "exit status 0" [ "$status" = 0 ]
  check "the script's result came back" has "$work/out" 'hello from python 3.'
  check "three evidence records, chained" has "$work/out" '3 evidence records'
  check "the first record starts the chain" has "$work/out" '"prev_sha256":"0000000000000000000000000000000000000000000000000000000000000000"'
  check "extended" grep -q '^extended: expires 20' "$work/out"
  id=$(sandbox_of "$work/out")
  check "a sandbox id was printed" [ -n "$id" ]
  check "the sandbox is deleted" sandbox_gone "$id"
  ;;
agent_loop)
  run "$work/out" "$work/err" setsid -w "$ex/agent_loop" --approve-all
  ev=$work/agent_loop-evidence.jsonl
  check "exit status 0" [ "$status" = 0 ]
  check "the first test run fails" has "$work/out" 'FAILED (failures=1)'
  check "the first run's exit code reached the model" has "$work/out" '"exit_code":1,'
  check "the rerun passes" grep -q '"exit_code":0,.*Ran 2 tests.*OK' "$work/out"
  check "the absolute evidence path is printed" has "$work/out" "evidence file: $ev"
  check "the evidence file verifies" "$ocisbx" evidence verify "$ev"
  check "one record per tool call (7)" [ "$(records "$ev")" = 7 ]
  check "both execs held and approved" [ "$(grep -c '"decision":"approved"' "$ev")" = 2 ]
  id=$(sandbox_of "$work/out")
  check "the sandbox is deleted" sandbox_gone "$id"
  ;;
agent_loop_local)
  mkdir "$work/ws"
  # as root, the local backend refuses an isolated workspace that root owns
  [ "$(id -u)" != 0 ] || chown 65534:65534 "$work/ws"
  run "$work/out" "$work/err" setsid -w "$ex/agent_loop" --approve-all --local-dir "$work/ws" --evidence "$work/local.jsonl"
  check "exit status 0" [ "$status" = 0 ]
  check "the local backend" has "$work/out" "workspace: local:$work/ws"
  check "the first test run fails" has "$work/out" 'FAILED (failures=1)'
  check "the fix is in the directory" has "$work/ws/calc/__init__.py" 'return sum(values) / len(values)'
  check "the evidence file verifies" "$ocisbx" evidence verify "$work/local.jsonl"
  check "one record per tool call (7)" [ "$(records "$work/local.jsonl")" = 7 ]
  ;;
agent_loop_refused)
  # no --approve-all and no terminal (setsid: no controlling tty): exec is refused
  run "$work/out" "$work/err" setsid -w "$ex/agent_loop" "$here/agent_loop_default.json"
  ev=$work/agent_loop-evidence.jsonl
  check "exit status 1" [ "$status" = 1 ]
  check "the gate says why" has "$work/out" 'no terminal to ask a person: refused'
  check "the model sees the denial" has "$work/out" '"code":"denied"'
  check "the model is told no one was asked" has "$work/out" 'no one could be asked: no terminal was available'
  check "the model is not told a person refused" hasnt "$work/out" 'refused by a person'
  check "the summary says no exec ran" has "$work/out" 'no exec ran'
  check "both execs refused in the evidence" [ "$(grep -c '"decision":"refused"' "$ev")" = 2 ]
  check "nothing ran" hasnt "$work/out" 'Ran 2 tests'
  check "the error names the last exec" has "$work/err" 'the last exec call did not pass'
  check "the sandbox is deleted" sandbox_gone "$(sandbox_of "$work/out")"
  ;;
agent_loop_interrupted)
  # Ctrl-C while a command runs: the command is canceled, the sandbox deleted
  echo '[{"say": "a long command", "tool": "exec", "arguments": {"command": "sleep 90", "timeout": 120}}]' > script.json
  setsid "$ex/agent_loop" --approve-all script.json > "$work/out" 2> "$work/err" &
  pid=$!
  for _ in $(seq 1 300); do grep -q 'approved by --approve-all' "$work/out" && break; sleep 0.1; done
  # then until the command has started in the sandbox
  running_sleep() {
    "$ocisbx" sandbox-command-collection list --sandbox-id "$(sandbox_of "$work/out")" > "$work/commands.json" 2>/dev/null &&
      grep -q 'sleep 90' "$work/commands.json" && grep -q '"timeStarted"' "$work/commands.json"
  }
  for _ in $(seq 1 300); do running_sleep && break; sleep 0.1; done
  t0=$(date +%s)
  kill -INT "$pid"
  set +e; wait "$pid"; status=$?; set -e
  echo "--- agent_loop exited $status after SIGINT; stdout:"; cat "$work/out"; echo "--- stderr:"; cat "$work/err"
  check "exit status 1" [ "$status" = 1 ]
  check "it ended soon after the signal" [ $(($(date +%s) - t0)) -lt 20 ]
  check "the command was canceled" has "$work/out" '"error":{"code"'
  check "the sandbox is deleted" sandbox_gone "$(sandbox_of "$work/out")"
  ;;
application_managed*)
  key="sk-test-$(openssl rand -hex 20)"
  export OPENAI_EXECUTOR_API_KEY=$key
  [ "$case_" != application_managed_session_delete_fails ] || export APPLICATION_MANAGED_FAIL_SESSION_DELETE=1
  # Oracle's defaults (profile Sandbox, PT30M, 120 s): the tenancy's profile is DEFAULT
  run "$work/nosandbox" "$work/nosandbox.err" env OCI_SANDBOX_PROFILE= "$ex/application_managed" --session-file "$work/s0.json"
  check "the default profile is Oracle's, Sandbox" has "$work/nosandbox.err" 'profile [Sandbox] not found'
  export OCI_SANDBOX_PROFILE=DEFAULT
  run "$work/out" "$work/err" "$ex/application_managed" --session-file "$work/session.json"
  check "the profile came from OCI_SANDBOX_PROFILE" has "$work/out" 'setting profile = DEFAULT (environment: OCI_SANDBOX_PROFILE)'
  check "the lifetime is Oracle's PT30M" has "$work/out" 'setting expiration = PT30M (default)'
  check "RUNNING is waited for 120 s" has "$work/out" 'setting ready_timeout = 120 (default)'
  check "STOPPED is waited for 60 s" has "$work/out" 'setting stop_timeout = 60 (default)'
  check "the region is the environment's" has "$work/out" 'setting region = us-chicago-1 (environment: OCI_SANDBOX_REGION)'
  id=$(sed -n 's/^sandbox: \(sbx-[a-z0-9]*\).*/\1/p' "$work/out" | head -n 1)
  check "a sandbox was created" [ -n "$id" ]
  check "the plan was read and printed" has "$work/out" 'Brief: Add a --json flag to the report command'
  check "the executor had its key" has "$work/out" "an executor key of ${#key} characters was present"
  check "the executor was stopped" has "$work/out" 'executor: stopped'
  for f in "$work/out" "$work/err" "$tenancy/emulator.log" "$tenancy/emulator.out"; do
    check "the key is not in $(basename "$f")" hasnt "$f" "$key"
  done
  case "$case_" in
  application_managed)
    check "exit status 0" [ "$status" = 0 ]
    check "the sandbox is deleted" sandbox_gone "$id"
    check "the session is deleted" [ ! -e "$work/session.json" ]
    ;;
  application_managed_sandbox_delete_fails)
    check "exit status non-zero" [ "$status" != 0 ]
    check "the error names the HTTP status" grep -q "delete sandbox $id: .*HTTP 501" "$work/err"
    check "the error names the request id" grep -q 'opc-request-id:\? [A-Za-z0-9]' "$work/err"
    check "the session is deleted all the same" [ ! -e "$work/session.json" ]
    check "the sandbox is still there, stopped (close stopped it; its delete failed)" sandbox_stopped "$id"
    "$ocisbx" sandbox get --sandbox-id "$id" > "$work/sandbox.json"
    check "the key is not in the sandbox's own environment" hasnt "$work/sandbox.json" "$key"
    check "nor its name (per command only)" hasnt "$work/sandbox.json" CODEX_API_KEY
    ;;
  application_managed_session_delete_fails)
    check "exit status non-zero" [ "$status" != 0 ]
    check "the error names the session" has "$work/err" 'delete session session-'
    check "the session file is left" [ -e "$work/session.json" ]
    check "the sandbox is deleted all the same" sandbox_gone "$id"
    ;;
  esac
  ;;
connect_extend)
  "$ocisbx" sandbox create --project-id "$OCI_SANDBOX_PROJECT_ID" --display-name connect-extend \
    --expires-in-minutes 20 --wait-for-state RUNNING > "$work/created.json"
  id=$(json_field id < "$work/created.json")
  before=$(json_field timeExpires < "$work/created.json")
  run "$work/out" "$work/err" "$ex/connect_extend" "$id" PT30M
  check "exit status 0" [ "$status" = 0 ]
  check "connected to it" has "$work/out" "connected: oci-sandbox:"
  check "the command ran in it" has "$work/out" 'hello from Linux in /workspace'
  check "the sandbox is still RUNNING" sandbox_running "$id"
  after=$("$ocisbx" sandbox get --sandbox-id "$id" | json_field timeExpires)
  check "its expiry moved later ($before -> $after)" [ "$(date -d "$after" +%s)" -gt "$(date -d "$before" +%s)" ]
  "$ocisbx" sandbox delete --sandbox-id "$id" --wait-for-state DELETED > /dev/null
  check "deleted by the test" sandbox_gone "$id"
  ;;
engine_libuv)
  run "$work/out" "$work/err" "$ex/engine_libuv" --count 4
  check "exit status 0" [ "$status" = 0 ]
  check "driven by libuv" has "$work/out" 'driven by libuv ('
  check "four sandboxes created, ran and closed" has "$work/out" 'summary: 4 of 4 sandboxes created, ran and closed'
  for i in 0 1 2 3; do
    check "sandbox $i's own output and exit code" has "$work/out" "result $i: exit $((i % 3)), output \"hello from sandbox $i\""
  done
  check "descriptors were watched through uv_poll_t" grep -Eq 'watched at most, [1-9][0-9]* descriptor events' "$work/out"
  ids=$(sed -n 's/^created: *[0-9]* \(sbx-[a-z0-9]*\).*/\1/p' "$work/out")
  check "four sandbox ids printed" [ "$(echo "$ids" | grep -c sbx-)" = 4 ]
  for id in $ids; do check "$id is deleted" sandbox_gone "$id"; done
  ;;
engine_libuv_same_results)
  run "$work/uv" "$work/uv.err" "$ex/engine_libuv" --count 6
  check "libuv: exit status 0" [ "$status" = 0 ]
  run "$work/own" "$work/own.err" "$ex/engine_libuv" --count 6 --own-loop
  check "own loop: exit status 0" [ "$status" = 0 ]
  grep '^result ' "$work/uv" > "$work/uv.results" || true
  grep '^result ' "$work/own" > "$work/own.results" || true
  check "six results each" [ "$(records "$work/uv.results")" = 6 ] && [ "$(records "$work/own.results")" = 6 ]
  check "the same results from libuv and from the engine's own loop" cmp "$work/uv.results" "$work/own.results"
  check "the project has no sandbox left" [ "$("$ocisbx" sandbox list --project-id "$OCI_SANDBOX_PROJECT_ID" --all \
    | grep -c '"lifecycleState": *"\(RUNNING\|CREATING\|STOPPING\|STOPPED\)"')" = 0 ]
  ;;
*)
  echo "checks.sh: unknown case $case_" >&2
  exit 2
  ;;
esac
exit "$failed"
