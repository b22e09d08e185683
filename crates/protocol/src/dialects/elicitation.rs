//! MCP elicitation: the params of `elicitation/create` in form mode, `{"message": "...",
//! "requestedSchema": {"type": "object", "properties": {...}, "required": [...]}}`.
//!
//! Each property becomes one question, in the order written: boolean → confirm, string
//! enum (`enum`, `enum` + `enumNames`, `oneOf` of `{const, title}`) → choice, array of enum
//! (`items.enum`, `items.anyOf`) → multiChoice, string → text, number and integer → text that
//! must be a number (checked in [`crate::answers`] with the bounds). Only the keywords that
//! fit a property's type are allowed: anything else is refused with a problem that names the
//! property, rather than dropped, because the asker's server would refuse the answer later.
//! A schema without properties is one yes/no question: accept or decline.

use std::collections::HashSet;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::answers::{check_value, parse_number, INTEGER_PATTERN, NUMBER_PATTERN};
use crate::answers::{DATE_PATTERN, DATE_TIME_PATTERN, EMAIL_PATTERN, URI_PATTERN};
use crate::dialects::title_from;
use crate::id::is_valid_id;
use crate::limits::{MAX_ANSWER_CHARS, MAX_DESCRIPTION_CHARS, MAX_TITLE_CHARS};
use crate::model::{
    Choice, Dialect, ElicitField, ElicitValueType, Origin, Question, QuestionKind, QuestionType,
    Request, Rules, TextFormat, ELICIT_ACCEPT_ID,
};
use crate::ordered::Ordered;
use crate::outcome::{Outcome, OutcomeStatus, BY_EXPIRY};
use crate::problem::{pointer_token, Problem};
use crate::wire::{ElicitProperty, ElicitPropertyType, StringFormat, TitledValue};
use crate::wording::{check_pattern, default_message, positional_id, short};

pub(crate) fn normalise(
    value: &Value,
    bytes: &[u8],
    request: &mut Request,
    problems: &mut Vec<Problem>,
) {
    if value.get("mode").and_then(Value::as_str) == Some("url") {
        problems.push(Problem::new(
            "/mode",
            "URL-mode elicitation (sending the user to a web page) is not supported: the inbox \
             answers form-mode elicitation, a message with a requestedSchema",
        ));
    }
    let Some(schema) = value.get("requestedSchema") else {
        return; // The schema pass reported it.
    };
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    for (index, name) in required.iter().enumerate() {
        if !properties.contains_key(*name) {
            problems.push(Problem::new(
                format!("/requestedSchema/required/{index}"),
                format!(
                    "\"{}\" is required but is not one of the properties",
                    short(name)
                ),
            ));
        }
    }

    // A form's fields are asked top to bottom, as written; serde_json's map is sorted.
    let names: Vec<String> = Ordered::read(bytes)
        .and_then(|ordered| {
            let keys = ordered.pointer("/requestedSchema/properties")?.keys();
            Some(keys.into_iter().map(str::to_owned).collect())
        })
        .filter(|names: &Vec<String>| names.len() == properties.len())
        .unwrap_or_else(|| properties.keys().cloned().collect());
    let ids = question_ids(&names);

    let mut fields = Vec::new();
    for (name, id) in names.iter().zip(ids) {
        let at = format!("/requestedSchema/properties/{}", pointer_token(name));
        let Some(raw) = properties.get(name) else {
            continue;
        };
        // Structure problems were reported by the schema pass.
        let Ok(property) = ElicitProperty::deserialize(raw) else {
            continue;
        };
        let asked = Asked {
            name,
            id: &id,
            required: required.contains(&name.as_str()),
            at: &at,
        };
        if let Some((question, value_type)) = asked.question(&property, problems) {
            fields.push(ElicitField {
                property: name.clone(),
                question_id: question.id.clone(),
                value_type,
            });
            request.questions.push(question);
        }
    }
    if properties.is_empty() {
        request.questions.push(accept_question());
    }

    let message = value
        .get("message")
        .and_then(Value::as_str)
        .filter(|m| !m.trim().is_empty());
    if let (Some(message), Some(first)) = (message, request.questions.first_mut()) {
        let description = match first.description.take() {
            Some(own) => format!("{message}\n\n{own}"),
            None => message.to_owned(),
        };
        let chars = description.chars().count();
        if chars > MAX_DESCRIPTION_CHARS {
            problems.push(Problem::new(
                "/message",
                format!(
                    "the message and the first property's description are {chars} characters \
                     together, over the limit of {MAX_DESCRIPTION_CHARS}"
                ),
            ));
        }
        first.description = Some(description);
    }
    // The list needs a title; an elicitation's message is the best one it has.
    request.title = message.and_then(|m| title_from(m, MAX_TITLE_CHARS));
    request.origin = Some(Origin::Elicitation { fields });
}

/// Question ids: the property name when it is a valid id, else `q<position>` (made unique),
/// so `{"first name": ...}` still works. The reply maps back through [`ElicitField`].
fn question_ids(names: &[String]) -> Vec<String> {
    let mut taken: HashSet<String> = names.iter().filter(|n| is_valid_id(n)).cloned().collect();
    names
        .iter()
        .enumerate()
        .map(|(index, name)| {
            if is_valid_id(name) {
                return name.clone();
            }
            let base = positional_id(index);
            let mut id = base.clone();
            let mut n = 2;
            while taken.contains(&id) {
                id = format!("{base}-{n}");
                n += 1;
            }
            taken.insert(id.clone());
            id
        })
        .collect()
}

fn accept_question() -> Question {
    Question {
        id: ELICIT_ACCEPT_ID.to_owned(),
        kind: QuestionKind::Confirm,
        wire_type: QuestionType::Confirm,
        dialect: Dialect::Interactive,
        question: "Accept (yes) or decline (no)?".to_owned(),
        description: None,
        label: None,
        choices: Vec::new(),
        default: None,
        required: true,
        pattern: None,
        allow_custom: false,
        rules: Rules::default(),
    }
}

/// The shapes a property may have, as the operator will meet them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Text,
    Number,
    Integer,
    Boolean,
    Single,
    Multi,
}

impl Form {
    fn describe(self) -> &'static str {
        match self {
            Form::Text => "a string property",
            Form::Number => "a number property",
            Form::Integer => "an integer property",
            Form::Boolean => "a boolean property",
            Form::Single => "a single-select property (a string with enum or oneOf)",
            Form::Multi => "a multi-select property (an array)",
        }
    }

    /// The keywords (besides type, title, description and default) this shape takes.
    fn keywords(self) -> &'static [&'static str] {
        match self {
            Form::Text => &["minLength", "maxLength", "format", "pattern"],
            Form::Number | Form::Integer => &["minimum", "maximum"],
            Form::Boolean => &[],
            Form::Single => &["enum", "enumNames", "oneOf"],
            Form::Multi => &["items", "minItems", "maxItems"],
        }
    }
}

/// One property being turned into a question.
struct Asked<'a> {
    name: &'a str,
    id: &'a str,
    required: bool,
    /// The property's pointer.
    at: &'a str,
}

impl Asked<'_> {
    fn problem(&self, keyword: &str, message: String) -> Problem {
        let at = if keyword.is_empty() {
            self.at.to_owned()
        } else {
            format!("{}/{keyword}", self.at)
        };
        Problem::new(at, format!("property \"{}\": {message}", short(self.name)))
    }

    fn question(
        &self,
        property: &ElicitProperty,
        problems: &mut Vec<Problem>,
    ) -> Option<(Question, ElicitValueType)> {
        let before = problems.len();
        let form = match property.kind {
            ElicitPropertyType::String
                if property.values.is_some() || property.one_of.is_some() =>
            {
                Form::Single
            }
            ElicitPropertyType::String => Form::Text,
            ElicitPropertyType::Number => Form::Number,
            ElicitPropertyType::Integer => Form::Integer,
            ElicitPropertyType::Boolean => Form::Boolean,
            ElicitPropertyType::Array => Form::Multi,
        };
        let present = [
            ("minLength", property.min_length.is_some()),
            ("maxLength", property.max_length.is_some()),
            ("format", property.format.is_some()),
            ("pattern", property.pattern.is_some()),
            ("minimum", property.minimum.is_some()),
            ("maximum", property.maximum.is_some()),
            ("enum", property.values.is_some()),
            ("enumNames", property.value_names.is_some()),
            ("oneOf", property.one_of.is_some()),
            ("items", property.items.is_some()),
            ("minItems", property.min_items.is_some()),
            ("maxItems", property.max_items.is_some()),
        ];
        for (keyword, given) in present {
            if given && !form.keywords().contains(&keyword) {
                problems.push(self.problem(
                    keyword,
                    format!("\"{keyword}\" does not apply to {}", form.describe()),
                ));
            }
        }

        let question_text = property
            .title
            .clone()
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| self.name.to_owned());
        // A form field's title is its header: whole on the tab when it is short, rather than
        // cut to its first three words ("Reachable from the").
        let label = Some(question_text.trim().to_owned())
            .filter(|title| title.chars().count() <= MAX_WHOLE_TITLE_LABEL_CHARS);
        let mut question = Question {
            id: self.id.to_owned(),
            kind: QuestionKind::Text,
            wire_type: QuestionType::Text,
            dialect: Dialect::Interactive,
            question: question_text,
            description: property.description.clone(),
            label,
            choices: Vec::new(),
            default: None,
            required: self.required,
            pattern: None,
            // The asker's server accepts only its own values.
            allow_custom: false,
            rules: Rules::default(),
        };
        let value_type = match form {
            Form::Text => {
                self.text(property, &mut question, problems);
                ElicitValueType::String
            }
            Form::Number | Form::Integer => {
                self.number(property, form == Form::Integer, &mut question, problems);
                if form == Form::Integer {
                    ElicitValueType::Integer
                } else {
                    ElicitValueType::Number
                }
            }
            Form::Boolean => {
                (question.kind, question.wire_type) =
                    (QuestionKind::Confirm, QuestionType::Confirm);
                ElicitValueType::Boolean
            }
            Form::Single => {
                (question.kind, question.wire_type) = (QuestionKind::Choice, QuestionType::Choice);
                question.choices = self.single_choices(property, problems);
                ElicitValueType::Enum
            }
            Form::Multi => {
                (question.kind, question.wire_type) =
                    (QuestionKind::MultiChoice, QuestionType::MultiChoice);
                question.choices = self.multi_choices(property, problems);
                question.rules.min_items = property.min_items;
                question.rules.max_items = property.max_items;
                if let (Some(min), Some(max)) = (property.min_items, property.max_items) {
                    if min > max {
                        problems.push(self.problem(
                            "minItems",
                            format!("minItems {min} is more than maxItems {max}"),
                        ));
                    }
                }
                ElicitValueType::EnumArray
            }
        };

        // Numbers are asked as text, so their default is written as text too.
        let default = match (&property.default, form) {
            (Some(Value::Number(n)), Form::Number | Form::Integer) => {
                // JSON Schema counts 2.0 as an integer; it is asked (and answered) as "2".
                let whole = n
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 2f64.powi(53))
                    .map(|f| f as i64);
                match (form, n.is_i64() || n.is_u64(), whole) {
                    (Form::Integer, false, Some(whole)) => Some(Value::String(whole.to_string())),
                    (Form::Integer, false, None) => {
                        problems.push(
                            self.problem(
                                "default",
                                format!("the default {n} is not a whole number"),
                            ),
                        );
                        None
                    }
                    _ => Some(Value::String(n.to_string())),
                }
            }
            (Some(other), Form::Number | Form::Integer) => {
                problems.push(self.problem(
                    "default",
                    format!("the default of a number must be a number, not {other}"),
                ));
                None
            }
            (default, _) => default.clone(),
        };
        // Checked even when the property has other problems, so the asker sees them all.
        if let Some(default) = default {
            match check_value(&question, &default) {
                Ok((value, _custom)) => question.default = Some(value),
                Err(message) => problems.push(self.problem("default", default_message(message))),
            }
        }
        (problems.len() == before).then_some((question, value_type))
    }

    fn text(
        &self,
        property: &ElicitProperty,
        question: &mut Question,
        problems: &mut Vec<Problem>,
    ) {
        let rules = &mut question.rules;
        rules.min_length = property.min_length;
        rules.max_length = property.max_length;
        // A maxLength over the inbox's own limit is moot; a minLength over it can never be met.
        if let Some(min) = property.min_length.filter(|&l| l > MAX_ANSWER_CHARS as u64) {
            problems.push(self.problem(
                "minLength",
                format!(
                    "minLength {min} is over the inbox's limit of {MAX_ANSWER_CHARS} characters \
                     per answer, so no answer could meet it"
                ),
            ));
        }
        if let (Some(min), Some(max)) = (property.min_length, property.max_length) {
            if min > max {
                problems.push(self.problem(
                    "minLength",
                    format!("minLength {min} is more than maxLength {max}"),
                ));
            }
        }
        let (format, hint) = match property.format {
            None => (None, None),
            Some(StringFormat::Email) => (Some(TextFormat::Email), Some(EMAIL_PATTERN)),
            Some(StringFormat::Uri) => (Some(TextFormat::Uri), Some(URI_PATTERN)),
            Some(StringFormat::Date) => (Some(TextFormat::Date), Some(DATE_PATTERN)),
            Some(StringFormat::DateTime) => (Some(TextFormat::DateTime), Some(DATE_TIME_PATTERN)),
        };
        rules.format = format;
        question.pattern = match &property.pattern {
            Some(pattern) => {
                check_pattern(pattern, &format!("{}/pattern", self.at), problems);
                Some(pattern.clone())
            }
            None => hint.map(str::to_owned),
        };
    }

    fn number(
        &self,
        property: &ElicitProperty,
        integer: bool,
        question: &mut Question,
        problems: &mut Vec<Problem>,
    ) {
        question.pattern = Some(
            if integer {
                INTEGER_PATTERN
            } else {
                NUMBER_PATTERN
            }
            .to_owned(),
        );
        question.rules.format = Some(if integer {
            TextFormat::Integer
        } else {
            TextFormat::Number
        });
        question.rules.minimum = property.minimum;
        question.rules.maximum = property.maximum;
        if let (Some(min), Some(max)) = (property.minimum, property.maximum) {
            if min > max {
                problems.push(self.problem(
                    "minimum",
                    format!("minimum {min} is more than maximum {max}"),
                ));
            }
        }
    }

    fn single_choices(
        &self,
        property: &ElicitProperty,
        problems: &mut Vec<Problem>,
    ) -> Vec<Choice> {
        match (&property.values, &property.one_of) {
            (Some(_), Some(_)) => {
                problems.push(self.problem(
                    "",
                    "give the values as enum or as oneOf, not both".to_owned(),
                ));
                Vec::new()
            }
            (Some(values), None) => {
                let names = property.value_names.as_deref();
                if let Some(names) = names.filter(|n| n.len() != values.len()) {
                    problems.push(self.problem(
                        "enumNames",
                        format!(
                            "enumNames and enum differ in length ({} and {}); give one name \
                             per value",
                            names.len(),
                            values.len()
                        ),
                    ));
                }
                let labels = names.filter(|n| n.len() == values.len());
                let choices = values
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Choice {
                        id: v.clone(),
                        label: labels.map_or_else(|| v.clone(), |l| l[i].clone()),
                        description: None,
                    })
                    .collect();
                self.unique(choices, "enum", problems)
            }
            (None, Some(titled)) => {
                if property.value_names.is_some() {
                    problems.push(self.problem(
                        "enumNames",
                        "enumNames names the values of enum; with oneOf, give each value a title"
                            .to_owned(),
                    ));
                }
                self.unique(titled_choices(titled), "oneOf", problems)
            }
            // Not reached: a string property without either is Form::Text.
            (None, None) => Vec::new(),
        }
    }

    fn multi_choices(&self, property: &ElicitProperty, problems: &mut Vec<Problem>) -> Vec<Choice> {
        let items = property.items.as_ref();
        match (
            items.and_then(|i| i.values.as_ref()),
            items.and_then(|i| i.any_of.as_ref()),
        ) {
            (Some(_), Some(_)) => {
                problems.push(self.problem(
                    "items",
                    "give the values as items.enum or as items.anyOf, not both".to_owned(),
                ));
                Vec::new()
            }
            (Some(values), None) => {
                let choices = values
                    .iter()
                    .map(|v| Choice {
                        id: v.clone(),
                        label: v.clone(),
                        description: None,
                    })
                    .collect();
                self.unique(choices, "items/enum", problems)
            }
            (None, Some(titled)) => self.unique(titled_choices(titled), "items/anyOf", problems),
            (None, None) => {
                problems.push(self.problem(
                    if items.is_some() { "items" } else { "" },
                    "an array property is a multi-select and needs items with enum (values) or \
                     anyOf ([{\"const\", \"title\"}]); other arrays are not supported"
                        .to_owned(),
                ));
                Vec::new()
            }
        }
    }

    /// Choice values are the reply's values, so each may appear once.
    fn unique(&self, choices: Vec<Choice>, at: &str, problems: &mut Vec<Problem>) -> Vec<Choice> {
        let mut seen = HashSet::new();
        for (index, choice) in choices.iter().enumerate() {
            if !seen.insert(choice.id.as_str()) {
                problems.push(self.problem(
                    &format!("{at}/{index}"),
                    format!("the value \"{}\" appears more than once", short(&choice.id)),
                ));
            }
        }
        crate::labels::check_choice_labels(
            choices
                .iter()
                .enumerate()
                .map(|(index, choice)| crate::labels::LabelAt {
                    pointer: format!("{}/{at}/{index}", self.at),
                    id: &choice.id,
                    label: &choice.label,
                }),
            problems,
        );
        choices
    }
}

fn titled_choices(titled: &[TitledValue]) -> Vec<Choice> {
    titled
        .iter()
        .map(|t| Choice {
            id: t.value.clone(),
            label: t.title.clone().unwrap_or_else(|| t.value.clone()),
            description: None,
        })
        .collect()
}

/// The longest property title used whole as a question's tab label.
const MAX_WHOLE_TITLE_LABEL_CHARS: usize = 32;

/// MCP's ElicitResult: `accept` with the content typed as the schema says, `decline` when
/// the operator declined, `cancel` when time ran out (nobody decided), even when expiry or a
/// rule's delay filled every question from its default: MCP's `accept` means a person
/// submitted the form.
pub(crate) fn reply(fields: &[ElicitField], outcome: &Outcome) -> Value {
    use crate::outcome::Trigger;
    match outcome.status {
        OutcomeStatus::Defaulted
            if outcome.answered_by == BY_EXPIRY
                || matches!(outcome.trigger, Some(Trigger::Expiry | Trigger::Delay)) =>
        {
            json!({"action": "cancel"})
        }
        OutcomeStatus::Answered | OutcomeStatus::Defaulted => {
            if fields.is_empty() && outcome.answers.get(ELICIT_ACCEPT_ID) == Some(&json!(false)) {
                return json!({"action": "decline"});
            }
            let mut content = Map::new();
            for field in fields {
                if let Some(value) = outcome.answers.get(&field.question_id) {
                    content.insert(field.property.clone(), typed(field.value_type, value));
                }
            }
            json!({"action": "accept", "content": content})
        }
        OutcomeStatus::Declined => json!({"action": "decline"}),
        OutcomeStatus::Expired | OutcomeStatus::Rejected => json!({"action": "cancel"}),
    }
}

/// Numbers were asked as text; the asker's schema wants JSON numbers. A value that does not
/// parse (only possible in an outcome some other writer made) is passed on as it is.
fn typed(value_type: ElicitValueType, value: &Value) -> Value {
    match (value_type, value) {
        (ElicitValueType::Number | ElicitValueType::Integer, Value::String(text)) => {
            parse_number(text, value_type == ElicitValueType::Integer)
                .map_or_else(|_| value.clone(), Value::Number)
        }
        _ => value.clone(),
    }
}
