#!/usr/bin/env python3
"""deploy_spec.py: a Planu-style tool that needs a person's decisions before it can act.

Called without answers, it does nothing yet and prints what it needs to know:

    $ ./deploy_spec.py SPEC-042
    {"status": "needs_input", "message": "...", "interactiveQuestions": [...]}

Called again with the answers (a JSON object keyed by question id, exactly the `answers`
of an Answer Inbox outcome), it does its job, here printing the deploy it would run:

    $ ./deploy_spec.py SPEC-042 --answers '{"target": "production", "ticket": "CHG-7"}'
    {"status": "done", "spec": "SPEC-042", "deployed": {...}, "message": "..."}

Answers left out take the question's default; a required question without an answer or a
default, or an answer of the wrong type, is an error (exit 2). Standard library only.
"""

import argparse
import json
import re
import sys

# The questions, in Planu's InteractiveQuestion shape: id, question, type (choice,
# multiChoice, text, confirm), options, default, required (true unless false).
def questions(spec):
    return [
        {
            "id": "target",
            "question": f"Where should {spec} be deployed?",
            "type": "choice",
            "options": ["staging", "production"],
            "default": "staging",
        },
        {
            "id": "components",
            "question": "Which components should be deployed?",
            "type": "multiChoice",
            "options": ["api", "worker", "frontend"],
            "default": ["api", "worker"],
        },
        {
            "id": "migrate",
            "question": "Run the database migrations first?",
            "type": "confirm",
            "default": False,
        },
        {
            # No default: the change ticket is what the audit log needs from a person.
            "id": "ticket",
            "question": "Which change ticket covers this deploy? (CHG-1234)",
            "type": "text",
            "pattern": "^CHG-[0-9]+$",
        },
        {
            "id": "note",
            "question": "Anything to add to the release notes?",
            "type": "text",
            "required": False,
        },
    ]


def check(question, value):
    """The problem with `value` as an answer to `question`, or None."""
    kind = question["type"]
    if kind == "confirm":
        return None if isinstance(value, bool) else "expected true or false"
    if kind == "choice":
        return None if value in question["options"] else f"expected one of {question['options']}"
    if kind == "multiChoice":
        if isinstance(value, list) and all(v in question["options"] for v in value):
            return None
        return f"expected a list of {question['options']}"
    if not isinstance(value, str):
        return "expected a string"
    if "pattern" in question and not re.search(question["pattern"], value):
        return f"expected text matching {question['pattern']}"
    return None


def resolve(spec, answers):
    """Every question's value (answer, else default), or the list of problems."""
    values, problems = {}, []
    for question in questions(spec):
        qid = question["id"]
        if qid in answers:
            value = answers[qid]
        elif "default" in question:
            value = question["default"]
        elif question.get("required", True):
            problems.append(f"{qid}: required, and not answered")
            continue
        else:
            continue
        problem = check(question, value)
        if problem:
            problems.append(f"{qid}: {problem}, got {json.dumps(value)}")
        else:
            values[qid] = value
    return values, problems


def main():
    parser = argparse.ArgumentParser(description="Deploy a spec, once someone has decided how.")
    parser.add_argument("spec", help="the spec to deploy, e.g. SPEC-042")
    parser.add_argument("--answers", help="the answers, as a JSON object keyed by question id")
    args = parser.parse_args()

    if args.answers is None:
        print(json.dumps({
            "status": "needs_input",
            "message": f"Deploying {args.spec} needs a few decisions first.",
            "interactiveQuestions": questions(args.spec),
        }, indent=2))
        return 0

    try:
        answers = json.loads(args.answers)
    except json.JSONDecodeError as error:
        answers, problems = None, [f"--answers is not JSON: {error}"]
    else:
        problems = [] if isinstance(answers, dict) else ["--answers must be a JSON object"]
    values = {}
    if not problems:
        values, problems = resolve(args.spec, answers)
    if problems:
        print(json.dumps({"status": "error", "errors": problems}, indent=2))
        return 2

    # The job itself. A real tool would deploy here; this one says what it would do.
    steps = ["run the database migrations"] if values["migrate"] else []
    steps.append(f"deploy {', '.join(values['components'])} to {values['target']}")
    message = f"{args.spec}: " + ", then ".join(steps) + f" (ticket {values['ticket']})"
    print(json.dumps({
        "status": "done",
        "spec": args.spec,
        "deployed": {
            "target": values["target"],
            "components": values["components"],
            "migrations": values["migrate"],
            "ticket": values["ticket"],
            "note": values.get("note"),
        },
        "message": message,
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
