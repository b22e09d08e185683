//! `schema request|outcome`: the JSON Schemas generated from the protocol's types.

use anyhow::Result;
use inbox_protocol::schema::{outcome_schema, request_schema, to_pretty_text};

use crate::args::{SchemaArgs, SchemaKind};
use crate::{exit, output};

pub fn run(args: &SchemaArgs) -> Result<u8> {
    let schema = match args.which {
        SchemaKind::Request => request_schema(),
        SchemaKind::Outcome => outcome_schema(),
    };
    output::stdout(&to_pretty_text(&schema))?;
    Ok(exit::OK)
}
