#!/bin/sh
# ci-gate.sh: hold a CI job until a person approves a production deploy.
#
# Run it as the step just before the deploy. It asks the operator, through Answer Inbox,
# whether build N may go to production and how to roll it out, waits for the answer, and
# exits with a code the job can act on:
#
#   0  approved: go on with the deploy (the chosen rollout is printed, and passed to deploy())
#   1  refused: the operator answered "no", or declined the request (the reason is printed)
#   2  expired: nobody answered before the request expired (only with EXPIRE_SECONDS)
#   3  no answer within TIMEOUT seconds; the request stays pending in the inbox
#   4  anything else: invalid request, request withdrawn, answer-inbox missing or failing
#   5  stopped while waiting (the job was cancelled: SIGTERM or Ctrl-C); the request is
#      withdrawn, so nobody can approve a deploy that no longer waits
#
# Usage: ci-gate.sh [BUILD]
#
# Environment:
#   ANSWER_INBOX_DIR  the spool the operator's inbox watches. When the runner and the
#                     operator are on different machines, a directory both can reach.
#   TIMEOUT           how long the job waits for an answer, in seconds (default 1800).
#                     Keep it below the CI system's own job timeout, so this script, not
#                     the CI system, decides what a missing answer means.
#   EXPIRE_SECONDS    optional: the request expires after this many seconds if nobody
#                     answers (applied by a running inbox: the desktop app or
#                     `answer-inbox watch`). Set it below TIMEOUT to have the request
#                     closed as "expired" rather than left pending when the job gives up.
#   BUILD             the build to deploy when no argument is given; else the CI system's
#                     own number (GitLab CI_PIPELINE_IID, GitHub GITHUB_RUN_NUMBER,
#                     Jenkins BUILD_NUMBER).
#
# Needs `answer-inbox` on PATH, and python3 to read the answers out of the outcome JSON
# (with jq instead: `jq -r '.answers.deploy' "$outcome"`).
#
# The operator answers in the desktop app, or from a terminal:
#   answer-inbox answer ID --set deploy=yes --set rollout=canary
#   answer-inbox answer ID --decline 'not during the release freeze'

set -eu

build=${1:-${BUILD:-${CI_PIPELINE_IID:-${GITHUB_RUN_NUMBER:-${BUILD_NUMBER:-}}}}}
timeout=${TIMEOUT:-1800}
expire_seconds=${EXPIRE_SECONDS:-}

say() { printf 'ci-gate: %s\n' "$*"; }

if [ -z "$build" ]; then
  say "which build? Pass it as the first argument or set BUILD" >&2
  exit 4
fi
case $timeout in
  '' | *[!0-9.]*) say "TIMEOUT must be a number of seconds, not '$timeout'" >&2; exit 4 ;;
esac
case $expire_seconds in
  *[!0-9]*) say "EXPIRE_SECONDS must be a whole number of seconds, not '$expire_seconds'" >&2; exit 4 ;;
esac

# The deploy itself. Replace the echo with your real deploy command, or drop this function
# and let the job's next step deploy once this script has exited 0.
deploy() {
  say "deploying build $build to production (rollout: $1)"
}

# A JSON string literal for $1: values such as the build name come from the CI system, and
# a stray quote must not break the request. Control characters are dropped.
json_string() {
  printf '"%s"' "$(printf '%s' "$1" | tr -d '\000-\037' | sed 's/[\\"]/\\&/g')"
}

# One id per run, readable in the operator's list. Ids allow letters, digits, '.', '_' and
# '-' only, so anything else in the build name becomes '-'.
safe_build=$(printf '%s' "$build" | tr -c 'A-Za-z0-9._-' '-' | cut -c1-60)
request_id="deploy-build-$safe_build-$(date -u +%Y%m%dT%H%M%SZ)-$$"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
request=$work/request.json
outcome=$work/outcome.json

# Only set fields are written: the protocol wants a field left out rather than null.
expiry=
if [ -n "$expire_seconds" ]; then
  expiry="\"timeout_seconds\": $expire_seconds,"
fi
job_url=${CI_JOB_URL:-${BUILD_URL:-}}
url=
if [ -n "$job_url" ]; then
  url=", \"url\": $(json_string "$job_url")"
fi

# "deploy" has no default on purpose: if the request expires, nobody said yes, and the
# outcome is "expired" (exit 11 from ask), never a silent approval. "rollout" has one, so
# the operator may skip it.
cat >"$request" <<JSON
{
  "inbox": 1,
  "id": "$request_id",
  "title": $(json_string "Deploy build $build to production?"),
  "source": {"app": "ci", "tool": "ci-gate.sh",
             "run": $(json_string "build $build"),
             "host": $(json_string "$(hostname 2>/dev/null || echo unknown)")$url},
  "priority": "high",
  $expiry
  "questions": [
    {"id": "deploy", "type": "confirm",
     "question": $(json_string "Deploy build $build to production?")},
    {"id": "rollout", "type": "choice", "required": false,
     "question": "How should it roll out?",
     "options": ["canary", "all at once"], "default": "canary"}
  ],
  "confirm_title": "Release this build?",
  "confirm_description": "The CI job is waiting and deploys as soon as you answer yes."
}
JSON

say "asking for approval of build $build (request $request_id, waiting up to ${timeout}s)"

# Standard output of `ask --wait` is the outcome JSON alone; its exit code is the status.
# It runs in the background so that a stop (the CI system cancelling the job) is handled at
# once: `wait` returns on a trapped signal, where a foreground command would be waited out.
# `|| status=$?` keeps `set -e` from ending the script on a non-zero status.
# The trap is set first, so a stop at any moment is handled. `ask` is stopped (and waited
# for, so it is not placing the request any more) before the request is withdrawn.
status=0
asking=
stopped() {
  if [ -n "$asking" ]; then
    kill "$asking" 2>/dev/null || true
    wait "$asking" 2>/dev/null || true
  fi
  withdrawn=0
  answer-inbox cancel "$request_id" >/dev/null 2>&1 || withdrawn=$?
  case $withdrawn in
    0) say "stopped while waiting; request $request_id withdrawn; not deploying" ;;
    # The operator's decision stands, but this job no longer waits for it.
    3) say "stopped while waiting; request $request_id was already settled; not deploying" ;;
    *) say "stopped before request $request_id was placed; not deploying" ;;
  esac
  exit 5
}
trap stopped INT TERM
answer-inbox ask --wait --timeout "$timeout" "$request" >"$outcome" &
asking=$!
wait "$asking" || status=$?
trap - INT TERM

# Prints one field of the outcome: a string as it is, anything else as JSON (true, false).
# `answers.deploy` reads a nested field; a missing field prints nothing.
field() {
  python3 - "$outcome" "$1" <<'PY'
import json, sys
value = json.load(open(sys.argv[1], encoding="utf-8"))
for key in sys.argv[2].split("."):
    value = value.get(key) if isinstance(value, dict) else None
if value is not None:
    print(value if isinstance(value, str) else json.dumps(value))
PY
}

case $status in
  0)
    # Answered (or defaulted). "No" is an answer too, so read it.
    if [ "$(field answers.deploy)" = true ]; then
      rollout=$(field answers.rollout)
      say "approved by $(field answered_by)"
      deploy "${rollout:-canary}"
      exit 0
    fi
    say "not approved: $(field answered_by) answered no"
    exit 1
    ;;
  10)
    say "declined by $(field answered_by): $(field reason)"
    exit 1
    ;;
  11)
    say "the request expired before anyone answered; not deploying"
    exit 2
    ;;
  124)
    # Left pending on purpose: the operator still sees it, and the answer stays on record.
    # Add `answer-inbox cancel "$request_id"` here if a late answer must not be possible.
    say "no answer within ${timeout}s; request $request_id stays pending; failing the job"
    exit 3
    ;;
  12)
    say "the inbox rejected the request (a bug in this script):"
    cat "$outcome"
    exit 4
    ;;
  13)
    say "request $request_id was withdrawn (answer-inbox cancel); not deploying"
    exit 4
    ;;
  *)
    say "answer-inbox failed (exit $status); not deploying"
    exit 4
    ;;
esac
