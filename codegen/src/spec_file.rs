//! Descriptions loaded at run time from TOML (`[[variant]]` tables), through the same field parser and
//! validator as the `variant!` macro, so a file gets the macro's sentences.

use crate::description::VariantDescription;
use crate::fields::{from_fields, FieldError, FieldValue};
use crate::validate::validate;

/// A TOML problem: the file does not parse, or a variant in it is invalid.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    #[error("the variant file is not valid TOML: {0}")]
    Toml(String),
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
        let name = table
            .get("name")
            .and_then(|v| v.as_str())
            .unwrap_or("unnamed")
            .to_string();
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

/// Parses TOML text holding `[[variant]]` tables.
pub fn variants_from_toml_str(text: &str) -> Result<Vec<VariantDescription>, SpecError> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| SpecError::Toml(e.message().to_string()))?;
    variants_from_toml(&doc)
}
