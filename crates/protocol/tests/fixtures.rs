//! Data-driven parsing tests: each `data/requests/<name>.json` is parsed with the file id
//! `<name>`, and the result (normalised request or problem list) must equal
//! `data/requests/<name>.out.json`. Set `UPDATE_FIXTURES=1` to write the expected files
//! after a deliberate change, then review the diff.

use std::path::{Path, PathBuf};

use inbox_protocol::parse_request;
use serde_json::{json, Value};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/requests")
}

fn result_of(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let stem = path.file_stem().unwrap().to_str().unwrap();
    match parse_request(&bytes, Some(stem)) {
        Ok(request) => json!({ "ok": request }),
        Err(problems) => json!({ "errors": problems }),
    }
}

#[test]
fn every_fixture_parses_as_recorded() {
    let update = std::env::var_os("UPDATE_FIXTURES").is_some();
    let mut inputs: Vec<PathBuf> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == "json")
                && !p.to_string_lossy().ends_with(".out.json")
        })
        .collect();
    inputs.sort();
    assert!(
        inputs.len() >= 10,
        "fixtures missing from {}",
        data_dir().display()
    );
    let mut failures = Vec::new();
    for input in inputs {
        let actual = result_of(&input);
        let expected_path = input.with_extension("out.json");
        if update {
            let text = serde_json::to_string_pretty(&actual).unwrap() + "\n";
            std::fs::write(&expected_path, text).unwrap();
            continue;
        }
        let expected: Value = match std::fs::read(&expected_path) {
            Ok(bytes) => serde_json::from_slice(&bytes).unwrap(),
            Err(_) => {
                failures.push(format!("{} has no .out.json", input.display()));
                continue;
            }
        };
        if actual != expected {
            failures.push(format!(
                "{}:\nexpected {}\nactual   {}",
                input.display(),
                serde_json::to_string_pretty(&expected).unwrap(),
                serde_json::to_string_pretty(&actual).unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
