//! Descriptions loaded at run time from TOML (`[[variant]]` tables), through the same field parser and
//! validator as the `variant!` macro, so a file gets the macro's sentences.

use crate::description::VariantDescription;
use crate::fields::{from_fields, FieldError, FieldValue};
use crate::validate::validate;
use mmqgen_formats::input::{shown, shown_at};

/// A TOML problem: the file does not parse, or a variant in it is invalid.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The text is not TOML; the message names the line ([`parse_toml`]).
    #[error("the variant file is not valid TOML: {0}")]
    Toml(String),
    /// A top-level key other than `variant`.
    #[error("unknown table or key `{0}`: a variant file holds only [[variant]] tables")]
    UnknownTopKey(String),
    #[error("variant #{index} ({name}): field `{field}`: {message}", field = .error.field, message = .error.message)]
    Field {
        index: usize,
        name: String,
        error: FieldError,
    },
    #[error("`variant` must be an array of tables (`[[variant]]`), one per variant")]
    Shape,
}

fn to_field_value(value: &toml::Value) -> FieldValue {
    match value {
        toml::Value::String(s) => FieldValue::Str(s.clone()),
        toml::Value::Integer(i) => FieldValue::Int(*i),
        toml::Value::Boolean(b) => FieldValue::Bool(*b),
        toml::Value::Array(items) => FieldValue::List(items.iter().map(to_field_value).collect()),
        other => FieldValue::Str(other.to_string()),
    }
}

/// Parses the `[[variant]]` tables of an already-parsed TOML document; other keys are left to the caller.
pub fn variants_from_toml(doc: &toml::Table) -> Result<Vec<VariantDescription>, SpecError> {
    let Some(list) = doc.get("variant") else {
        return Ok(Vec::new());
    };
    let tables = list.as_array().ok_or(SpecError::Shape)?;
    let mut out = Vec::new();
    for (index, table) in tables.iter().enumerate() {
        let table = table.as_table().ok_or(SpecError::Shape)?;
        let name = shown(
            table
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("unnamed"),
        );
        let values: Vec<(String, FieldValue)> = table
            .iter()
            .map(|(k, v)| (k.clone(), to_field_value(v)))
            .collect();
        let first_error = |mut errors: Vec<FieldError>| SpecError::Field {
            index: index + 1,
            name: name.clone(),
            error: errors.remove(0),
        };
        let desc = from_fields(values.iter().map(|(k, v)| (k.as_str(), v))).map_err(first_error)?;
        validate(&desc).map_err(first_error)?;
        out.push(desc);
    }
    Ok(out)
}

/// Parses TOML text holding `[[variant]]` tables and nothing else.
pub fn variants_from_toml_str(text: &str) -> Result<Vec<VariantDescription>, SpecError> {
    let doc = parse_toml(text).map_err(SpecError::Toml)?;
    if let Some(key) = doc.keys().find(|k| *k != "variant") {
        return Err(SpecError::UnknownTopKey(shown(key)));
    }
    variants_from_toml(&doc)
}

/// Parses a TOML document, or says why not in one line that names the line at fault: the one way variant files
/// and selection configs report TOML errors.
pub fn parse_toml(text: &str) -> Result<toml::Table, String> {
    text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .and_then(|span| text.get(..span.start))
            .map(|before| format!(" (line {})", before.matches('\n').count() + 1))
            .unwrap_or_default();
        format!(
            "{}{line}",
            shown_at(&e.message().trim().replace('\n', "; "), TOML_MESSAGE_CHARS)
        )
    })
}

/// How much of the TOML parser's own message a sentence shows (it may quote the input).
const TOML_MESSAGE_CHARS: usize = 160;
