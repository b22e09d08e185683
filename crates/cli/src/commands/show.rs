//! `show ID [--json]`: one request, its questions, its outcome and its history.

use anyhow::{bail, Context, Result};
use chrono::Utc;

use crate::args::{LocationArgs, ShowArgs};
use crate::{exit, locations, output, render};

pub fn run(locations: &LocationArgs, args: &ShowArgs) -> Result<u8> {
    let id = args.id.as_str();
    super::ensure_valid_id(id)?;
    let mut engine = locations::open_engine(locations)?;
    engine.sync().context("cannot scan the spool")?;
    let store = engine.queries();
    let Some(detail) = store
        .detail(id)
        .with_context(|| format!("cannot read request \"{id}\""))?
    else {
        bail!(
            "no request \"{id}\" in the spool {} (nor in the inbox's history)",
            engine.spool().root().display()
        );
    };
    let events = store
        .events_of(id)
        .with_context(|| format!("cannot read the history of \"{id}\""))?;
    if args.json {
        let mut value = serde_json::to_value(&detail).context("cannot serialise the request")?;
        if let Some(object) = value.as_object_mut() {
            object.insert(
                "events".to_owned(),
                serde_json::to_value(&events).context("cannot serialise the history")?,
            );
        }
        output::json(&value)?;
    } else {
        output::stdout(&render::detail(&detail, &events, Utc::now()))?;
    }
    Ok(exit::OK)
}
