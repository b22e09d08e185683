//! Answer many alike: parallel runs of one pipeline often ask the same thing. Pending
//! requests whose questions are identical (the same [`inbox_protocol::fingerprint()`]) form a
//! group, which the operator answers once after seeing every request it will settle.
//!
//! Answering a group is still one answer per request: [`Engine::answer_alike`] (with the
//! engine's other operator writes) answers each member through [`Engine::answer`], bound
//! to the version (SHA-256) of that member the operator was shown, so each outcome is
//! checked against its own request, and a member that changed, was settled meanwhile or is
//! blocked is refused on its own while the others are answered. The version is what makes
//! the group safe: the fingerprint was computed from that version's questions, so no
//! member can be answered in a form the operator did not see listed.
//!
//! This module only finds the groups, from the read side; it does not import the engine.
//!
//! [`Engine::answer_alike`]: crate::Engine::answer_alike
//! [`Engine::answer`]: crate::Engine::answer

use std::collections::HashMap;

use inbox_protocol::fingerprint;

use crate::query::Queries;
use crate::store::{RequestSummary, StoreError};

/// Pending requests that ask the same questions.
#[derive(Debug, Clone)]
pub struct AlikeGroup {
    /// What they ask, as [`inbox_protocol::fingerprint()`] gives it.
    pub fingerprint: String,
    /// Oldest first (by when each file was placed, then by id).
    pub members: Vec<RequestSummary>,
}

/// Every group of two or more pending requests that ask the same questions and may be
/// answered now, ordered by their oldest member. A request alone in asking what it asks is
/// in no group.
///
/// Members are the requests of the pending list ([`Queries::pending`]) that are not blocked
/// and have no outcome waiting to be written ([`Queries::pending_requests`]).
pub fn alike_groups(queries: &Queries<'_>) -> Result<Vec<AlikeGroup>, StoreError> {
    let mut groups: Vec<AlikeGroup> = Vec::new();
    for (fingerprint, summary) in answerable(queries)? {
        match groups.iter_mut().find(|g| g.fingerprint == fingerprint) {
            Some(group) => group.members.push(summary),
            None => groups.push(AlikeGroup {
                fingerprint,
                members: vec![summary],
            }),
        }
    }
    groups.retain(|group| group.members.len() >= 2);
    Ok(groups)
}

/// The group of the pending request `id`: every request that may be answered now and asks
/// what it asks, itself included (alone when no other does). `None` when `id` is not a
/// pending request that may be answered now (unknown, settled, blocked, its outcome waiting
/// to be written); [`crate::Engine::answerable`] says which.
pub fn alike_of(queries: &Queries<'_>, id: &str) -> Result<Option<AlikeGroup>, StoreError> {
    let members = answerable(queries)?;
    let Some(fingerprint) = members
        .iter()
        .find(|(_, summary)| summary.id == id)
        .map(|(fingerprint, _)| fingerprint.clone())
    else {
        return Ok(None);
    };
    let members = members
        .into_iter()
        .filter(|(other, _)| *other == fingerprint)
        .map(|(_, summary)| summary)
        .collect();
    Ok(Some(AlikeGroup {
        fingerprint,
        members,
    }))
}

/// The pending requests that may be answered now, each with its fingerprint, oldest first.
fn answerable(queries: &Queries<'_>) -> Result<Vec<(String, RequestSummary)>, StoreError> {
    let fingerprints: HashMap<String, String> = queries
        .pending_requests()?
        .into_iter()
        .filter_map(|(request, _)| {
            let fingerprint = fingerprint(&request);
            request.id.map(|id| (id, fingerprint))
        })
        .collect();
    let mut members: Vec<(String, RequestSummary)> = queries
        .pending()?
        .into_iter()
        .filter(|summary| summary.blocked.is_none() && summary.unwritten.is_none())
        .filter_map(|summary| {
            let fingerprint = fingerprints.get(&summary.id)?.clone();
            Some((fingerprint, summary))
        })
        .collect();
    members.sort_by(|(_, a), (_, b)| a.placed_at.cmp(&b.placed_at).then_with(|| a.id.cmp(&b.id)));
    Ok(members)
}

#[cfg(test)]
mod tests {
    use inbox_protocol::Surface;
    use inbox_spool::{Area, Spool};
    use serde_json::json;

    use super::*;
    use crate::store::Store;
    use crate::{Engine, SettleError};

    struct Fixture {
        _dir: tempfile::TempDir,
        spool: Spool,
        engine: Engine,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let spool = Spool::open(dir.path().join("spool")).unwrap();
            let store = Store::open(&dir.path().join("inbox.sqlite3")).unwrap();
            let engine = Engine::new(spool.clone(), store).unwrap();
            Fixture {
                _dir: dir,
                spool,
                engine,
            }
        }

        /// Places a request asking `question` (yes or no), titled after its run.
        fn place(&self, id: &str, question: &str) {
            let body = json!({"inbox": 1, "id": id, "title": format!("Deploy ({id})"),
                "source": {"run": id},
                "questions": [{"id": "go", "question": question, "type": "confirm"}]});
            self.spool
                .place_request(id, body.to_string().as_bytes())
                .unwrap();
        }

        fn version(&self, id: &str) -> String {
            inbox_protocol::sha256_hex(&self.spool.read(Area::Questions, id).unwrap())
        }
    }

    fn ids(group: &AlikeGroup) -> Vec<&str> {
        group.members.iter().map(|m| m.id.as_str()).collect()
    }

    #[test]
    fn requests_asking_the_same_are_grouped_and_a_lone_one_is_not() {
        let mut fx = Fixture::new();
        for id in ["run-a", "run-b", "run-c"] {
            fx.place(id, "Ship it?");
        }
        fx.place("other", "Delete it?");
        fx.engine.sync().unwrap();

        let groups = alike_groups(&fx.engine.queries()).unwrap();
        assert_eq!(groups.len(), 1, "{groups:?}");
        let mut members = ids(&groups[0]);
        members.sort_unstable();
        assert_eq!(members, ["run-a", "run-b", "run-c"]);
        assert!(groups[0]
            .members
            .windows(2)
            .all(|pair| (pair[0].placed_at, &pair[0].id) <= (pair[1].placed_at, &pair[1].id)));

        let of_b = alike_of(&fx.engine.queries(), "run-b").unwrap().unwrap();
        assert_eq!(ids(&of_b), ids(&groups[0]));
        assert_eq!(of_b.fingerprint, groups[0].fingerprint);
        let lone = alike_of(&fx.engine.queries(), "other").unwrap().unwrap();
        assert_eq!(ids(&lone), ["other"]);
        assert!(alike_of(&fx.engine.queries(), "nobody").unwrap().is_none());
    }

    #[test]
    fn one_refused_member_does_not_stop_the_others() {
        let mut fx = Fixture::new();
        for id in ["run-a", "run-b", "run-c"] {
            fx.place(id, "Ship it?");
        }
        fx.engine.sync().unwrap();
        let group = alike_of(&fx.engine.queries(), "run-a").unwrap().unwrap();
        let shown: Vec<(String, String)> = group
            .members
            .iter()
            .map(|m| (m.id.clone(), fx.version(&m.id)))
            .collect();
        // run-b is settled elsewhere after the operator was shown the group.
        let answers = json!({"go": true}).as_object().unwrap().clone();
        fx.engine
            .answer("run-b", &answers, None, Surface::Cli)
            .unwrap();

        let results = fx.engine.answer_alike(&shown, &answers, Surface::Cli);
        assert_eq!(results.len(), 3);
        for (id, result) in &results {
            match (id.as_str(), result) {
                ("run-b", Err(SettleError::AlreadySettled(_))) => {}
                ("run-a" | "run-c", Ok(outcome)) => {
                    assert_eq!(
                        outcome.request_sha256.as_deref(),
                        Some(fx.version(id).as_str())
                    );
                }
                other => panic!("unexpected result {other:?}"),
            }
        }
        // Settled members leave the group; nothing is left to group.
        assert!(alike_groups(&fx.engine.queries()).unwrap().is_empty());
    }
}
