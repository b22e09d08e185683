//! The requests `ask_operator_start` placed, for `ask_operator_wait` to check their outcomes
//! by, as `inbox_client` checks an outcome it waits for: against the request as placed (its
//! SHA-256 and its questions).
//!
//! The server keeps each request it places in memory, by id. A host may restart the server
//! between the two calls (or start another for the next session), so an id it does not
//! know is looked up in `questions/`: while the request is pending its file is there, and
//! it is taken if `ask_operator` placed it (its `source.tool` says so).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use inbox_client::Spool;
use inbox_protocol::{Expiry, Request};
use inbox_spool::{Area, ReadError};

use super::origin::TOOL;

/// One placed request.
#[derive(Debug)]
pub struct Placed {
    /// The request as placed; its `sha256` is that of the placed bytes.
    pub request: Request,
    /// What the server did otherwise than the call asked, said again with the outcome.
    pub notices: Vec<String>,
    /// When it was placed (the file's time after a restart), from which its
    /// `timeout_seconds` runs.
    pub placed_at: SystemTime,
}

impl Placed {
    /// When a wait stops waiting for an inbox to expire the request and withdraws it:
    /// `grace` past its expiry. `None` when it does not expire.
    pub fn give_up_at(&self, grace: Duration) -> Option<SystemTime> {
        let expires = match self.request.expiry? {
            Expiry::After { seconds } => self.placed_at + Duration::from_secs(seconds),
            Expiry::At(at) => SystemTime::from(at),
        };
        Some(expires + grace)
    }
}

/// The requests this server placed, by id. Cheap to clone.
#[derive(Debug, Clone, Default)]
pub struct PlacedRequests {
    by_id: Arc<Mutex<HashMap<String, Arc<Placed>>>>,
}

impl PlacedRequests {
    /// Remembers a request just placed.
    pub fn remember(&self, request: Request, notices: Vec<String>) {
        let id = request.id.clone().expect("a prepared request has its id");
        let placed = Placed {
            request,
            notices,
            placed_at: SystemTime::now(),
        };
        self.lock().insert(id, Arc::new(placed));
    }

    /// The request `id`: the one this server placed, else the one `ask_operator` placed
    /// that is still pending in `spool`'s `questions/`. The error says why there is none.
    pub fn recall(&self, spool: &Spool, id: &str) -> Result<Arc<Placed>, String> {
        if let Some(placed) = self.lock().get(id) {
            return Ok(placed.clone());
        }
        if !inbox_protocol::is_valid_id(id) {
            return Err(format!(
                "\"{id}\" is not a request id: use the request_id that ask_operator_start \
                 returned"
            ));
        }
        let unknown = || {
            format!(
                "no request \"{id}\" was placed with ask_operator_start: this server did not \
                 place it and it is not pending in the spool {} (a mistyped id, or a request \
                 already settled and cleared away). Use the request_id ask_operator_start \
                 returned, or ask again.",
                spool.root().display()
            )
        };
        let bytes = match spool.read(Area::Questions, id) {
            Ok(bytes) => bytes,
            Err(ReadError::Missing) => return Err(unknown()),
            Err(error) => return Err(format!("cannot read request \"{id}\": {error}")),
        };
        let request = inbox_protocol::parse_request(&bytes, Some(id))
            .ok()
            .filter(|request| request.source.tool.as_deref() == Some(TOOL))
            .ok_or_else(unknown)?;
        let placed_at = std::fs::metadata(spool.path(Area::Questions, id))
            .and_then(|meta| meta.modified())
            .unwrap_or_else(|_| SystemTime::now());
        let placed = Arc::new(Placed {
            request,
            notices: Vec::new(),
            placed_at,
        });
        Ok(self.lock().entry(id.to_owned()).or_insert(placed).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Placed>>> {
        // The map is only ever inserted into; a panic elsewhere leaves it whole.
        self.by_id
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
