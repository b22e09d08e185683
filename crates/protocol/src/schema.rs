//! JSON Schemas generated from the wire types, and the validators built from them.
//!
//! The committed files under `schemas/` are these schemas, pretty-printed; a test fails when
//! they drift from the types. The parser validates each request against the schema of its
//! shape (not the `anyOf` of all of them), so an error names the real problem instead of
//! "not valid under any of the schemas".

use std::sync::OnceLock;

use jsonschema::Validator;
use serde_json::Value;

use crate::outcome::Outcome;
use crate::shape::Shape;
use crate::wire::{
    AskUserQuestion, Elicitation, Envelope, HitlRequest, HumanInterrupt, HumanInterruptList,
    InteractiveQuestions, QuestionList, RequestFile,
};

/// The schema of a request file (all its shapes).
pub fn request_schema() -> Value {
    schema_for::<RequestFile>()
}

/// The schema of an outcome file.
pub fn outcome_schema() -> Value {
    schema_for::<Outcome>()
}

/// A schema as the text committed under `schemas/`: pretty JSON and a final newline.
pub fn to_pretty_text(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).expect("a schema is plain JSON");
    text.push('\n');
    text
}

/// Draft 2020-12, with optional fields simply optional: not also `null`. Allowing `null`
/// would wrap every optional enum in an `anyOf`, and a wrong value would then be reported as
/// "not valid under any of the schemas" instead of "not one of ...".
fn schema_for<T: schemars::JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = serde_json::to_value(generator.into_root_schema_for::<T>())
        .expect("a schema is plain JSON");
    strip_null(&mut schema);
    schema
}

/// Removes the `null` alternative schemars adds for every `Option` (`"type": [T, "null"]` or
/// `"anyOf": [T, {"type": "null"}]`). An absent field means "not given"; `null` is not a value
/// the protocol uses.
fn strip_null(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if let Some(Value::Array(types)) = map.get_mut("type") {
                types.retain(|t| t != "null");
                if types.len() == 1 {
                    let only = types.remove(0);
                    map.insert("type".to_owned(), only);
                }
            }
            if let Some(Value::Array(alternatives)) = map.get("anyOf") {
                let non_null: Vec<&Value> = alternatives
                    .iter()
                    .filter(|a| a.get("type") != Some(&Value::from("null")))
                    .collect();
                if non_null.len() == 1 && alternatives.len() == 2 {
                    let only = non_null[0].clone();
                    map.remove("anyOf");
                    if let Value::Object(inner) = only {
                        map.extend(inner);
                    }
                }
            }
            if let Some(Value::Array(values)) = map.get_mut("enum") {
                values.retain(|v| !v.is_null());
            }
            map.values_mut().for_each(strip_null);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_null),
        _ => {}
    }
}

/// Validators for the request shapes, built once.
pub(crate) struct ShapeValidators {
    envelope: Validator,
    interactive: Validator,
    questions: Validator,
    elicitation: Validator,
    ask_user_question: Validator,
    human_interrupt: Validator,
    human_interrupt_list: Validator,
    langchain_hitl: Validator,
}

impl ShapeValidators {
    pub(crate) fn of(&self, shape: Shape) -> &Validator {
        match shape {
            Shape::Envelope => &self.envelope,
            Shape::Interactive => &self.interactive,
            Shape::Questions => &self.questions,
            Shape::Elicitation => &self.elicitation,
            Shape::AskUserQuestion => &self.ask_user_question,
            Shape::HumanInterrupt => &self.human_interrupt,
            Shape::HumanInterruptList => &self.human_interrupt_list,
            Shape::LangChainHitl => &self.langchain_hitl,
        }
    }
}

pub(crate) fn shape_validators() -> &'static ShapeValidators {
    static VALIDATORS: OnceLock<ShapeValidators> = OnceLock::new();
    VALIDATORS.get_or_init(|| ShapeValidators {
        envelope: build(schema_for::<Envelope>()),
        interactive: build(schema_for::<InteractiveQuestions>()),
        questions: build(schema_for::<QuestionList>()),
        elicitation: build(schema_for::<Elicitation>()),
        ask_user_question: build(schema_for::<AskUserQuestion>()),
        human_interrupt: build(schema_for::<HumanInterrupt>()),
        human_interrupt_list: build(schema_for::<HumanInterruptList>()),
        langchain_hitl: build(schema_for::<HitlRequest>()),
    })
}

fn build(schema: Value) -> Validator {
    jsonschema::options()
        // `expires_at` is a date-time: check it here so it is reported with the rest.
        .should_validate_formats(true)
        .build(&schema)
        .expect("schemas generated from our own types compile")
}
