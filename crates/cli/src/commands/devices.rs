//! `devices`: the browsers paired with `answer-inbox serve`, from the device store beside the
//! database, so a revoke here takes effect in a running server at its next request.

use anyhow::Result;
use chrono::{Local, Utc};
use inbox_web::{Device, DeviceStore};

use crate::args::{DevicesArgs, DevicesCommand, LocationArgs};
use crate::{locations, output};

pub fn run(location: &LocationArgs, args: &DevicesArgs) -> Result<u8> {
    let store = DeviceStore::open(&DeviceStore::path_beside(&locations::db_path(location)?))?;
    match args.command.as_ref().unwrap_or(&DevicesCommand::List) {
        DevicesCommand::List => {
            let devices = store.list()?;
            if args.json {
                output::json(&devices.iter().map(json).collect::<Vec<_>>())?;
                return Ok(0);
            }
            if devices.is_empty() {
                println!("no paired devices (`answer-inbox serve` prints a pairing link)");
            }
            for device in devices {
                println!("{}", line(&device));
            }
        }
        DevicesCommand::Pair => {
            let link = inbox_web::new_pairing_link(&store)?;
            if args.json {
                output::json(&serde_json::json!({ "link": link }))?;
            } else {
                println!("open: {link}");
            }
        }
        DevicesCommand::Rename { id, name } => {
            let device = store.rename(id, name)?;
            if args.json {
                output::json(&json(&device))?;
            } else {
                println!("{}", line(&device));
            }
        }
        DevicesCommand::Revoke { id } => {
            let device = store.revoke(id, Utc::now())?;
            if args.json {
                output::json(&json(&device))?;
            } else {
                println!("revoked {}", line(&device));
            }
        }
    }
    Ok(0)
}

/// A device for `--json`: its fields as they are stored, times in RFC 3339 UTC or null.
fn json(device: &Device) -> serde_json::Value {
    let when = |at: Option<chrono::DateTime<Utc>>| at.map(|at| at.to_rfc3339());
    serde_json::json!({
        "id": device.id,
        "name": device.name,
        "created_at": device.created_at.to_rfc3339(),
        "last_seen_at": when(device.last_seen_at),
        "revoked_at": when(device.revoked_at),
    })
}

/// `<id>  <name>  paired <when>, last seen <when>[, revoked <when>]`.
fn line(device: &Device) -> String {
    let when = |at: chrono::DateTime<Utc>| {
        at.with_timezone(&Local)
            .format("%Y-%m-%d %H:%M")
            .to_string()
    };
    let seen = device.last_seen_at.map_or_else(
        || "never used".to_owned(),
        |at| format!("last seen {}", when(at)),
    );
    let revoked = device
        .revoked_at
        .map(|at| format!(", revoked {}", when(at)))
        .unwrap_or_default();
    format!(
        "{}  {}  paired {}, {seen}{revoked}",
        device.id,
        inbox_protocol::text::one_line(&device.name),
        when(device.created_at)
    )
}
