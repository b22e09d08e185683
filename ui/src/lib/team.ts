// Who answers a request whose rule assigns people (docs/TEAMS.md), in words, and whether
// this inbox's operator may answer it. Rust decides who counts (every inbox refuses an
// outcome or approval from anyone else); this only keeps the window from offering what
// would be refused. Pure, so it is unit-tested.

import type { TeamView } from './bindings/TeamView';

/** "alice, @ops" as the rule wrote it, or its accounts when it names groups only. */
function named(team: TeamView): string {
  return team.assign.join(', ');
}

/** Whether the operator here may answer now: an assignee, or taking it over where allowed. */
export function mayAnswer(team: TeamView | null, takingOver: boolean): boolean {
  if (!team) return true;
  // Nobody assigned exists and the rule escalates: every member may answer.
  if (team.nobody === 'escalate') return true;
  return team.mine || (team.takeover && takingOver);
}

/** A list row's badge: "yours", "assigned to bob"; null for an unassigned request. */
export function assignedBadge(team: TeamView | null): string | null {
  if (!team) return null;
  if (team.nobody) return `no assignee here (${team.nobody})`;
  return team.mine ? 'assigned to you' : `assigned to ${named(team)}`;
}

/** "1 of 2: approved by alice" for a request that needs several approvals; else null. */
export function approvalsText(team: TeamView | null): string | null {
  return team && team.approvals_needed > 1 ? team.progress : null;
}

/** The sentence at the top of a request: who answers it, and what this operator can do. */
export function teamSentence(team: TeamView): string {
  if (team.nobody) {
    const then = { escalate: 'it is escalated to every member', expire: 'it expires', hold: 'it is held' }[
      team.nobody
    ];
    return `Assigned to ${named(team)}, who ${team.assign.length === 1 ? 'does' : 'do'} not exist on this machine: ${then ?? team.nobody}.`;
  }
  if (team.mine) return `Assigned to ${named(team)}: you are one of them.`;
  return team.takeover
    ? `Assigned to ${named(team)}. You may take it over; that is recorded.`
    : `Assigned to ${named(team)}. Only they can answer it; your inbox shows it read-only.`;
}
