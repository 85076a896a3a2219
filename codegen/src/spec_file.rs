//! Descriptions loaded at run time from TOML (`[[variant]]` tables), through the same field parser and
//! validator as the `variant!` macro, so a file gets the macro's sentences.

use crate::description::VariantDescription;
use crate::fields::{from_fields, FieldError, FieldValue, FIELD_TABLE};
use crate::sweep::{expand_sweep_within, Expansion, SweepError, MAX_TOTAL_SWEEP_POINTS};
use crate::validate::validate;
use mmqgen_formats::input::{shown, shown_at};

/// A TOML problem: the file does not parse, or a variant in it is invalid.
#[derive(Debug, thiserror::Error)]
pub enum SpecError {
    /// The text is not TOML; the message names the line ([`parse_toml`]).
    #[error("the variant file is not valid TOML: {0}")]
    Toml(String),
    /// A top-level key other than `variant` and `sweep`.
    #[error(
        "unknown table or key `{0}`: a variant file holds only [[variant]] and [[sweep]] tables"
    )]
    UnknownTopKey(String),
    #[error("variant #{index} ({name}): field `{field}`: {message}", field = .error.field, message = .error.message)]
    Field {
        index: usize,
        name: String,
        error: FieldError,
    },
    #[error("`variant` must be an array of tables (`[[variant]]`), one per variant")]
    Shape,
    #[error("`sweep` must be an array of tables (`[[sweep]]`), one per sweep")]
    SweepShape,
    #[error("sweep #{index} ({name}): {error}")]
    Sweep {
        index: usize,
        name: String,
        error: SweepError,
    },
    /// Two sweeps of one file with one name: `--sweep NAME` could only ever take the first.
    #[error(
        "sweep #{index} ({name}): sweep #{first} has the same name; give each sweep its own name (it is the prefix \
         of its points' names and what --sweep takes)"
    )]
    DuplicateSweep {
        index: usize,
        name: String,
        first: usize,
    },
}

/// What a variant file declares: its `[[variant]]` tables and its `[[sweep]]` tables, expanded.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpecFile {
    pub variants: Vec<VariantDescription>,
    pub sweeps: Vec<Expansion>,
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

/// One table of an array of tables (`[[variant]]`, `[[sweep]]`): its 1-based position, its name as it may be
/// shown in a sentence, and its fields as written.
struct NamedTable {
    index: usize,
    name: String,
    values: Vec<(String, FieldValue)>,
}

impl NamedTable {
    fn fields(&self) -> impl Iterator<Item = (&str, &FieldValue)> {
        self.values.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// The tables under `key`, or none; `not_tables` when `key` holds something else than an array of tables.
fn named_tables(
    doc: &toml::Table,
    key: &str,
    not_tables: SpecError,
) -> Result<Vec<NamedTable>, SpecError> {
    let Some(list) = doc.get(key) else {
        return Ok(Vec::new());
    };
    let Some(tables) = list.as_array() else {
        return Err(not_tables);
    };
    let mut out = Vec::new();
    for (index, table) in tables.iter().enumerate() {
        let Some(table) = table.as_table() else {
            return Err(not_tables);
        };
        let name = shown(
            table
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("unnamed"),
        );
        let values = table
            .iter()
            .map(|(k, v)| (k.clone(), to_field_value(v)))
            .collect();
        out.push(NamedTable {
            index: index + 1,
            name,
            values,
        });
    }
    Ok(out)
}

/// Parses the `[[variant]]` tables of an already-parsed TOML document; other keys are left to the caller.
pub fn variants_from_toml(doc: &toml::Table) -> Result<Vec<VariantDescription>, SpecError> {
    let mut out = Vec::new();
    for table in named_tables(doc, "variant", SpecError::Shape)? {
        let first_error = |mut errors: Vec<FieldError>| SpecError::Field {
            index: table.index,
            name: table.name.clone(),
            error: errors.remove(0),
        };
        let desc = from_fields(table.fields()).map_err(first_error)?;
        validate(&desc).map_err(first_error)?;
        out.push(desc);
    }
    Ok(out)
}

/// Expands the `[[sweep]]` tables of an already-parsed TOML document ([`crate::sweep`]): a sweep's refused
/// points are part of its expansion, never an error; a sweep that cannot be expanded at all is.
pub fn sweeps_from_toml(doc: &toml::Table) -> Result<Vec<Expansion>, SpecError> {
    sweeps_from_toml_within(doc, MAX_TOTAL_SWEEP_POINTS)
}

/// [`sweeps_from_toml`] with at most `left` points over all its sweeps together (what
/// [`MAX_TOTAL_SWEEP_POINTS`] leaves after the files read before), each sweep's product checked before it is
/// expanded; two sweeps of one name are refused.
pub fn sweeps_from_toml_within(
    doc: &toml::Table,
    mut left: usize,
) -> Result<Vec<Expansion>, SpecError> {
    let mut out: Vec<Expansion> = Vec::new();
    for table in named_tables(doc, "sweep", SpecError::SweepShape)? {
        let expansion =
            expand_sweep_within(table.fields(), left).map_err(|error| SpecError::Sweep {
                index: table.index,
                name: table.name.clone(),
                error,
            })?;
        if let Some(first) = out.iter().position(|e| e.name == expansion.name) {
            return Err(SpecError::DuplicateSweep {
                index: table.index,
                name: table.name.clone(),
                first: first + 1,
            });
        }
        left -= expansion.total;
        out.push(expansion);
    }
    Ok(out)
}

/// Parses TOML text holding `[[variant]]` and `[[sweep]]` tables and nothing else.
pub fn spec_from_toml_str(text: &str) -> Result<SpecFile, SpecError> {
    spec_from_toml_str_within(text, MAX_TOTAL_SWEEP_POINTS)
}

/// [`spec_from_toml_str`] with at most `left` sweep points over the file ([`sweeps_from_toml_within`]).
pub fn spec_from_toml_str_within(text: &str, left: usize) -> Result<SpecFile, SpecError> {
    let doc = parse_toml(text).map_err(SpecError::Toml)?;
    if let Some(key) = doc.keys().find(|k| *k != "variant" && *k != "sweep") {
        return Err(SpecError::UnknownTopKey(shown(key)));
    }
    Ok(SpecFile {
        variants: variants_from_toml(&doc)?,
        sweeps: sweeps_from_toml_within(&doc, left)?,
    })
}

/// Parses TOML text holding `[[variant]]` and `[[sweep]]` tables and nothing else: the variants, then every
/// sweep's valid points ([`spec_from_toml_str`] keeps the sweeps apart, with what they refused).
pub fn variants_from_toml_str(text: &str) -> Result<Vec<VariantDescription>, SpecError> {
    let spec = spec_from_toml_str(text)?;
    let mut out = spec.variants;
    for sweep in spec.sweeps {
        out.extend(sweep.descriptions());
    }
    Ok(out)
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

/// `desc` as a `[[variant]]` table that [`variants_from_toml_str`] reads back to the same description (every
/// field of the field table written out), so that a config can carry the variants it selects (`mmqgen tune`
/// does, for sweep points).
pub fn variant_toml(desc: &VariantDescription) -> String {
    let mut table = String::from("[[variant]]\n");
    for field in &FIELD_TABLE {
        table += &format!("{} = {}\n", field.name, toml_value(&(field.written)(desc)));
    }
    table
}

/// A written value as TOML: words and strings as strings, lists as arrays.
fn toml_value(value: &FieldValue) -> toml::Value {
    match value {
        FieldValue::Word(text) | FieldValue::Str(text) => toml::Value::String(text.clone()),
        FieldValue::Int(i) => toml::Value::Integer(*i),
        FieldValue::Bool(b) => toml::Value::Boolean(*b),
        FieldValue::List(items) => toml::Value::Array(items.iter().map(toml_value).collect()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWEEP: &str = r#"
        [[variant]]
        name = "one"

        [[sweep]]
        name = "rf"
        engine = "mma_k32_regfold"
        mode = "int_per32"
        kdr = 8
        scale_fetch = "narrow"
        expand = "uint4"
        cp_async_activations = 16
        archs = ["sm_90"]
        nbj = 128
        warps_m = 4
        stages = [1, 2, 3]
        tile_n = [64, 128]
    "#;

    #[test]
    fn a_file_holds_variants_and_sweeps() {
        let spec = spec_from_toml_str(SWEEP).unwrap();
        assert_eq!(spec.variants.len(), 1);
        assert_eq!(spec.sweeps.len(), 1);
        let e = &spec.sweeps[0];
        assert_eq!((e.total, e.points.len(), e.refused.len()), (6, 4, 2));
        assert_eq!(e.points[0].desc.name, "rf_t64_s2");
        let all = variants_from_toml_str(SWEEP).unwrap();
        assert_eq!(all.len(), 5);
    }

    #[test]
    fn sweep_errors_name_the_sweep() {
        let e = spec_from_toml_str("[[sweep]]\nname = \"s\"\nstages = []\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "sweep #1 (s): field `stages` has an empty list: a sweep needs at least one value per field"
        );
        let e = spec_from_toml_str("sweep = 1").unwrap_err();
        assert!(matches!(e, SpecError::SweepShape), "{e}");
        let e = spec_from_toml_str("[[other]]\n").unwrap_err();
        assert!(e.to_string().contains("[[variant]] and [[sweep]]"), "{e}");
    }

    /// Two sweeps of one name in a file: `--sweep` could only take the first, so the file is refused. Many
    /// sweeps together are held to one cap, checked before each is expanded.
    #[test]
    fn sweeps_have_their_own_names_and_one_cap_together() {
        let two =
            "[[sweep]]\nname = \"rf\"\nkdr = [2, 4]\n[[sweep]]\nname = \"rf\"\nkdr = [2, 4]\n";
        let e = spec_from_toml_str(two).unwrap_err();
        assert!(
            matches!(
                e,
                SpecError::DuplicateSweep {
                    index: 2,
                    first: 1,
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("sweep #1 has the same name"), "{e}");

        // 1,000 sweeps of 10,000 points each (a 136 KB file) once expanded to 10 M points.
        let mut many = String::new();
        for n in 0..1000 {
            many += &format!(
                "[[sweep]]\nname = \"s{n}\"\nnbj = [{}]\ntile_n = [{}]\n",
                (1..=100)
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
                (1..=100)
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
        let t = std::time::Instant::now();
        let e = spec_from_toml_str(&many).unwrap_err();
        assert!(
            matches!(
                &e,
                SpecError::Sweep {
                    index: 3,
                    error: SweepError::OverTotal { .. },
                    ..
                }
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("over all sweeps together"), "{e}");
        assert!(t.elapsed() < std::time::Duration::from_secs(20));
        let e = spec_from_toml_str_within(SWEEP, 5).unwrap_err();
        assert!(
            matches!(
                &e,
                SpecError::Sweep {
                    error: SweepError::OverTotal { left: 5, .. },
                    ..
                }
            ),
            "{e:?}"
        );
    }

    #[test]
    fn variant_toml_reads_back_to_the_same_description() {
        let spec = spec_from_toml_str(SWEEP).unwrap();
        let mut unrolled = spec.sweeps[0].descriptions()[0].clone();
        unrolled.chunk_unroll = 2;
        let descriptions = spec.sweeps[0].descriptions();
        for desc in descriptions.iter().chain(&spec.variants).chain([&unrolled]) {
            let back = variants_from_toml_str(&variant_toml(desc)).unwrap();
            assert_eq!(back, std::slice::from_ref(desc));
        }
    }
}
