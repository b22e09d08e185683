//! `stats [--since DURATION|DATE] [--json]`: who answers how fast. From the inbox's
//! database, the requests settled in a period, counted per source (`source.app`) and per
//! operator (the OS account that answered, declined or approved): how many, how they ended,
//! and the median and 90th percentile of the time from a request's placing to a person's
//! decision. What a request's team is (docs/TEAMS.md) decides whose expired requests they
//! were: an expired request counts against each of its assignees.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use chrono::{DateTime, Local, NaiveDate, SecondsFormat, TimeZone, Utc};
use inbox_engine::{RequestDetail, State};
use inbox_protocol::verify::OPERATOR_PREFIX;
use inbox_protocol::{DecidedBy, Outcome, OutcomeStatus};
use serde::Serialize;

use crate::args::{LocationArgs, StatsArgs};
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &StatsArgs) -> Result<u8> {
    let until = Utc::now();
    // A period that cannot be read fails before anything is opened.
    let since = period_start(&args.since, until)?;
    let mut engine = locations::open_engine(locations)?;
    // Outcomes other inboxes (a team's members) wrote while none of ours ran count too.
    engine.sync().context("cannot scan the spool")?;
    let settled = engine
        .queries()
        .settled_since(since)
        .context("cannot read the inbox's history")?;
    let stats = Stats::of(&settled);
    if args.json {
        output::json(&serde_json::json!({
            "since": since.to_rfc3339_opts(SecondsFormat::Millis, true),
            "until": until.to_rfc3339_opts(SecondsFormat::Millis, true),
            "sources": stats.sources.iter().map(|(app, tally)| {
                let mut row = serde_json::json!({ "app": app });
                row.as_object_mut().unwrap().extend(tally.json());
                row
            }).collect::<Vec<_>>(),
            "operators": stats.operators.iter().map(|(operator, tally)| {
                let mut row = serde_json::json!({ "operator": operator });
                let mut fields = tally.json();
                // Cancelling is the asker's: it is nobody's count of an operator.
                fields.remove("cancelled");
                row.as_object_mut().unwrap().extend(fields);
                row
            }).collect::<Vec<_>>(),
        }))?;
        return Ok(exit::OK);
    }
    output::stdout(&stats.text(since, until))?;
    Ok(exit::OK)
}

/// `--since`: a duration back from `now` (humantime: `7d`, `12h`, `2weeks`), a date (local
/// midnight) or an RFC 3339 time. Not in the future, and not `now` itself: an empty period
/// is a mistake, not a report of nothing.
fn period_start(text: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>> {
    let text = text.trim();
    let shown = render::line(text);
    let start = if let Ok(back) = humantime::parse_duration(text) {
        if back.is_zero() {
            bail!("--since {shown} is an empty period; give a duration such as 30d or 12h");
        }
        chrono::Duration::from_std(back)
            .ok()
            .and_then(|back| now.checked_sub_signed(back))
            .with_context(|| format!("--since {shown} reaches back further than dates go"))?
    } else if let Ok(at) = DateTime::parse_from_rfc3339(text) {
        at.with_timezone(&Utc)
    } else if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let midnight = day.and_hms_opt(0, 0, 0).expect("midnight exists");
        // A midnight the clocks skip (a DST change) has no local time: take the earliest.
        Local
            .from_local_datetime(&midnight)
            .earliest()
            .map(|at| at.with_timezone(&Utc))
            .with_context(|| format!("--since {shown}: that day has no local midnight"))?
    } else {
        bail!(
            "--since {shown} is neither a duration (30d, 12h, 90m, 2weeks) nor a date \
             (2026-11-01, or RFC 3339: 2026-11-01T09:00:00Z)"
        );
    };
    if start >= now {
        bail!(
            "--since {shown} is {}, which is not in the past; nothing can have been settled \
             since",
            render::local_time(start)
        );
    }
    Ok(start)
}

/// The counts of one source or one operator.
#[derive(Debug, Default, Serialize, PartialEq)]
struct Tally {
    count: usize,
    answered: usize,
    declined: usize,
    expired: usize,
    cancelled: usize,
    /// Milliseconds from placing to a person's decision, one per decision.
    #[serde(skip)]
    times: Vec<i64>,
}

impl Tally {
    /// The middle time (the mean of the two middle ones for an even number).
    fn median_ms(&self) -> Option<i64> {
        let times = self.sorted();
        let n = times.len();
        match n {
            0 => None,
            _ if n % 2 == 1 => Some(times[n / 2]),
            _ => Some((times[n / 2 - 1] + times[n / 2]) / 2),
        }
    }

    /// The 90th percentile, by nearest rank: the smallest time that at least 90 % of the
    /// decisions took no longer than.
    fn p90_ms(&self) -> Option<i64> {
        let times = self.sorted();
        let rank = (times.len() * 9).div_ceil(10);
        rank.checked_sub(1).map(|index| times[index])
    }

    fn sorted(&self) -> Vec<i64> {
        let mut times = self.times.clone();
        times.sort_unstable();
        times
    }

    fn json(&self) -> serde_json::Map<String, serde_json::Value> {
        let mut fields = match serde_json::to_value(self) {
            Ok(serde_json::Value::Object(fields)) => fields,
            _ => unreachable!("a tally is an object"),
        };
        fields.insert("median_ms".into(), self.median_ms().into());
        fields.insert("p90_ms".into(), self.p90_ms().into());
        fields
    }
}

/// Per source (`None`: requests that name no app) and per operator (an account).
#[derive(Debug, Default)]
struct Stats {
    sources: BTreeMap<Option<String>, Tally>,
    operators: BTreeMap<String, Tally>,
}

impl Stats {
    fn of(settled: &[RequestDetail]) -> Stats {
        let mut stats = Stats::default();
        for detail in settled {
            stats.add(detail);
        }
        stats
    }

    fn add(&mut self, detail: &RequestDetail) {
        let summary = &detail.summary;
        let source = self.sources.entry(summary.source.app.clone()).or_default();
        source.count += 1;
        match summary.state {
            State::Settled(OutcomeStatus::Answered | OutcomeStatus::Defaulted) => {
                source.answered += 1
            }
            State::Settled(OutcomeStatus::Declined) => source.declined += 1,
            State::Settled(OutcomeStatus::Expired) => source.expired += 1,
            State::Cancelled => source.cancelled += 1,
            State::Settled(OutcomeStatus::Rejected) | State::Pending => {}
        }
        if summary.state == State::Settled(OutcomeStatus::Expired) {
            // Whose it was to answer: each assignee of its team, when its rule assigned.
            let team = summary.judgement.as_ref().and_then(|j| j.team.as_ref());
            for assignee in team.map(|team| team.assignees.as_slice()).unwrap_or(&[]) {
                self.operators.entry(assignee.clone()).or_default().expired += 1;
            }
        }
        let Some(outcome) = detail.outcome.as_ref().filter(|o| is_persons(o)) else {
            return;
        };
        let placed_at = summary.placed_at;
        source.times.push(decision_ms(outcome, placed_at));
        let declined = outcome.status == OutcomeStatus::Declined;
        match outcome.approvals.as_deref() {
            // Each approver decided, at the time of their own approval.
            Some(approvals) if !approvals.is_empty() => {
                for approval in approvals {
                    let tally = self.operator(&approval.by);
                    tally.count += 1;
                    tally.answered += 1;
                    tally.times.push(since_placed(approval.at, placed_at));
                }
            }
            _ => {
                let tally = self.operator(&outcome.answered_by);
                tally.count += 1;
                if declined {
                    tally.declined += 1;
                } else {
                    tally.answered += 1;
                }
                tally.times.push(decision_ms(outcome, placed_at));
            }
        }
    }

    /// The tally of `operator:<account>` (or a bare account).
    fn operator(&mut self, by: &str) -> &mut Tally {
        let account = by.strip_prefix(OPERATOR_PREFIX).unwrap_or(by);
        self.operators.entry(account.to_owned()).or_default()
    }

    fn text(&self, since: DateTime<Utc>, until: DateTime<Utc>) -> String {
        let mut text = format!(
            "Settled since {} ({}): {}\n",
            render::local_time(since),
            period_length(until - since),
            render::count(self.sources.values().map(|t| t.count).sum(), "request")
        );
        if self.sources.is_empty() && self.operators.is_empty() {
            return text;
        }
        let sources = self.sources.iter().map(|(app, tally)| {
            let app = app.as_deref().map_or_else(|| "—".to_owned(), render::line);
            (app, tally)
        });
        text.push('\n');
        text.push_str(&table("SOURCE", sources, true));
        if self.operators.is_empty() {
            text.push_str("\nNo person answered in this period.\n");
            return text;
        }
        let operators = self
            .operators
            .iter()
            .map(|(operator, tally)| (render::line(operator), tally));
        text.push('\n');
        text.push_str(&table("OPERATOR", operators, false));
        text
    }
}

/// One table of tallies, a row each, headed by `what` (`SOURCE`, `OPERATOR`); the
/// CANCELLED column only where cancelling counts (a source's: it is the asker's doing).
fn table<'a>(
    what: &str,
    rows: impl Iterator<Item = (String, &'a Tally)>,
    cancelled: bool,
) -> String {
    let time = |ms: Option<i64>| ms.map_or_else(|| "—".to_owned(), short_duration);
    let mut header = vec![what, "COUNT", "ANSWERED", "DECLINED", "EXPIRED"];
    if cancelled {
        header.push("CANCELLED");
    }
    header.extend(["MEDIAN", "P90"]);
    let mut table = vec![header.into_iter().map(str::to_owned).collect::<Vec<_>>()];
    for (name, tally) in rows {
        let mut cells = vec![
            name,
            tally.count.to_string(),
            tally.answered.to_string(),
            tally.declined.to_string(),
            tally.expired.to_string(),
        ];
        if cancelled {
            cells.push(tally.cancelled.to_string());
        }
        cells.extend([time(tally.median_ms()), time(tally.p90_ms())]);
        table.push(cells);
    }
    render::align(&table)
}

/// `30days`, `12h`, `1day 2h`: to the minute, to the hour from a day on.
fn period_length(length: chrono::TimeDelta) -> String {
    let secs = u64::try_from(length.num_seconds()).unwrap_or(0);
    let unit = if secs >= 86_400 { 3600 } else { 60 };
    let rounded = (secs + unit / 2) / unit * unit;
    humantime::format_duration(std::time::Duration::from_secs(rounded)).to_string()
}

/// A person's answer or decline (not a policy's defaults or expiry).
fn is_persons(outcome: &Outcome) -> bool {
    outcome.decider() == Some(DecidedBy::Person)
        && matches!(
            outcome.status,
            OutcomeStatus::Answered | OutcomeStatus::Declined
        )
}

/// From placing to the decision: the outcome's own `decision_ms`, else its time.
fn decision_ms(outcome: &Outcome, placed_at: DateTime<Utc>) -> i64 {
    outcome
        .decision_ms
        .and_then(|ms| i64::try_from(ms).ok())
        .unwrap_or_else(|| since_placed(outcome.answered_at, placed_at))
}

/// Never negative: a file's mtime can be a little ahead of the clock that decided.
fn since_placed(at: DateTime<Utc>, placed_at: DateTime<Utc>) -> i64 {
    (at - placed_at).num_milliseconds().max(0)
}

/// `850ms`, `42s`, `5m 3s`, `2h 10m 4s`: whole seconds from a second on.
fn short_duration(ms: i64) -> String {
    let ms = u64::try_from(ms).unwrap_or(0);
    if ms < 1000 {
        return format!("{ms}ms");
    }
    let secs = (ms + 500) / 1000;
    humantime::format_duration(std::time::Duration::from_secs(secs)).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(times: &[i64]) -> Tally {
        Tally {
            times: times.to_vec(),
            ..Tally::default()
        }
    }

    #[test]
    fn median_and_p90_by_their_definitions() {
        assert_eq!(tally(&[]).median_ms(), None);
        assert_eq!(tally(&[]).p90_ms(), None);
        assert_eq!(tally(&[7]).median_ms(), Some(7));
        assert_eq!(tally(&[7]).p90_ms(), Some(7));
        assert_eq!(tally(&[30, 10, 20]).median_ms(), Some(20));
        assert_eq!(tally(&[40, 10, 30, 20]).median_ms(), Some(25));
        let ten: Vec<i64> = (1..=10).rev().collect();
        assert_eq!(tally(&ten).p90_ms(), Some(9));
        let eleven: Vec<i64> = (1..=11).collect();
        assert_eq!(tally(&eleven).p90_ms(), Some(10));
    }

    #[test]
    fn a_period_is_a_duration_or_a_date_in_the_past() {
        let now = Utc::now();
        let week = period_start("7d", now).unwrap();
        assert_eq!((now - week).num_days(), 7);
        let at = period_start("2020-01-02T03:04:05Z", now).unwrap();
        assert_eq!(at.to_rfc3339(), "2020-01-02T03:04:05+00:00");
        let day = period_start("2020-01-02", now).unwrap();
        assert_eq!(
            day.with_timezone(&Local).date_naive().to_string(),
            "2020-01-02"
        );
        for bad in ["lastweek", "7 parsecs", "2020-13-01", ""] {
            let error = period_start(bad, now).unwrap_err().to_string();
            assert!(error.contains("neither a duration"), "{bad}: {error}");
        }
        let error = period_start("0s", now).unwrap_err().to_string();
        assert!(error.contains("empty period"), "{error}");
        let error = period_start("2999-01-01", now).unwrap_err().to_string();
        assert!(error.contains("not in the past"), "{error}");
    }

    #[test]
    fn durations_read_short() {
        assert_eq!(short_duration(850), "850ms");
        assert_eq!(short_duration(42_400), "42s");
        assert_eq!(short_duration(303_000), "5m 3s");
        assert_eq!(period_length(chrono::TimeDelta::days(30)), "30days");
        assert_eq!(period_length(chrono::TimeDelta::seconds(3599)), "1h");
    }
}
