#!/bin/sh
# run-with-inbox.sh: run a Planu-style tool, and let a person answer its questions through
# Answer Inbox.
#
# A Planu-style tool that cannot go on alone prints
#   {"status": "needs_input", "interactiveQuestions": [...]}
# and expects to be called again with `--answers '<JSON object keyed by question id>'`.
# This driver does that loop once:
#
#   1. runs the tool with the given arguments;
#   2. if it needs input, hands its response to `answer-inbox ask --wait` unchanged (the
#      inbox accepts the interactiveQuestions shape as a request) and waits for the
#      operator;
#   3. takes the `answers` object from the outcome and runs the tool again with
#      `--answers`, printing its final output.
#
# Usage: run-with-inbox.sh [TOOL ARGUMENTS...]     e.g.  run-with-inbox.sh SPEC-042
#
# Environment:
#   TOOL              the tool to run (default: deploy_spec.py beside this script)
#   TIMEOUT           seconds to wait for the operator (default 3600)
#   ANSWER_INBOX_DIR  the spool the operator's inbox watches
#
# Standard output is the tool's own output and nothing else, so the result can be piped
# on. Exit status: the tool's, once it has run with the answers (or 0 when it needed no
# input); else that of `answer-inbox ask --wait`: 10 declined, 11 expired, 12 rejected,
# 13 withdrawn, 124 no answer within TIMEOUT (the request stays pending).
#
# Needs `answer-inbox` on PATH and python3 (for the JSON; jq would do as well).

set -eu

here=$(cd "$(dirname "$0")" && pwd)
tool=${TOOL:-$here/deploy_spec.py}
timeout=${TIMEOUT:-3600}

say() { printf 'run-with-inbox: %s\n' "$*" >&2; }

# Prints one top-level field of the JSON object on standard input: a string as it is,
# anything else as compact JSON.
field() {
  python3 -c '
import json, sys
value = json.load(sys.stdin).get(sys.argv[1])
if value is not None:
    print(value if isinstance(value, str) else json.dumps(value, separators=(",", ":")))
' "$1"
}

response=$("$tool" "$@")
if [ "$(printf '%s' "$response" | field status)" != needs_input ]; then
  # Nothing to ask: the tool has already done its job.
  printf '%s\n' "$response"
  exit 0
fi

say "$(printf '%s' "$response" | field message)"
say "asking the operator through Answer Inbox (waiting up to ${timeout}s)"
status=0
outcome=$(printf '%s' "$response" | answer-inbox ask --wait --timeout "$timeout" -) || status=$?

case $status in
  0) ;;
  10) say "declined by $(printf '%s' "$outcome" | field answered_by): $(printf '%s' "$outcome" | field reason)" ;;
  11) say "the request expired before anyone answered" ;;
  124) say "no answer within ${timeout}s; the request stays pending" ;;
  *) say "no answers (answer-inbox exited $status)" ;;
esac
if [ "$status" -ne 0 ]; then
  exit "$status"
fi

answers=$(printf '%s' "$outcome" | field answers)
say "answered by $(printf '%s' "$outcome" | field answered_by); running the tool again"
exec "$tool" "$@" --answers "$answers"
