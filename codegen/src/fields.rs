//! Field by field parsing of a description, shared by the `variant!` macro and the TOML loader so that both
//! speak the same sentences. A front end turns its syntax into [`FieldValue`]s; this module applies them.

use crate::description::*;
use mmqgen_formats::input::shown;
use std::borrow::Cow;

/// A field's value as written, before its meaning is checked.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    /// A bare word such as `mma_k16` or `off` (TOML writes it as a string).
    Word(String),
    Int(i64),
    Str(String),
    Bool(bool),
    List(Vec<FieldValue>),
}

/// The fields a description has, in canonical order.
pub const FIELDS: [&str; 21] = [
    "name",
    "engine",
    "mode",
    "kdr",
    "nbj",
    "tile_n",
    "warps_m",
    "warps_n",
    "ksplit",
    "scale_fetch",
    "expand",
    "cp_async_activations",
    "cp_async_plane",
    "stages",
    "accumulator_sets",
    "totals",
    "refill",
    "blocks_per_sm",
    "chunk_unroll",
    "archs",
    "allow_spills",
];

/// A problem with one field: which field, and one sentence saying what is allowed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

fn err(field: &str, message: String) -> FieldError {
    FieldError {
        field: field.to_string(),
        message,
    }
}

fn describe(value: &FieldValue) -> String {
    match value {
        FieldValue::Word(w) => format!("`{}`", shown(w)),
        FieldValue::Int(i) => i.to_string(),
        FieldValue::Str(s) => format!("\"{}\"", shown(s)),
        FieldValue::Bool(b) => b.to_string(),
        FieldValue::List(_) => "a list".to_string(),
    }
}

fn word<'v>(field: &str, value: &'v FieldValue, allowed: &[&str]) -> Result<&'v str, FieldError> {
    match value {
        FieldValue::Word(w) | FieldValue::Str(w) if allowed.contains(&w.as_str()) => Ok(w),
        other => Err(err(
            field,
            format!(
                "{field} must be one of {}; got {}",
                allowed.join(", "),
                describe(other)
            ),
        )),
    }
}

fn int(field: &str, value: &FieldValue) -> Result<u32, FieldError> {
    match value {
        FieldValue::Int(i) if (0..=u32::MAX as i64).contains(i) => Ok(*i as u32),
        FieldValue::Int(i) => Err(err(
            field,
            format!(
                "{field} = {i} is out of range: it must be an integer from 0 to {}",
                u32::MAX
            ),
        )),
        other => Err(err(
            field,
            format!(
                "{field} must be a non-negative integer; got {}",
                describe(other)
            ),
        )),
    }
}

fn keyword_of<T: Copy>(
    field: &str,
    value: &FieldValue,
    all: &[T],
    key: fn(T) -> &'static str,
) -> Result<T, FieldError> {
    let names: Vec<&str> = all.iter().map(|v| key(*v)).collect();
    let w = word(field, value, &names)?;
    Ok(all[names.iter().position(|n| *n == w).unwrap_or(0)])
}

fn cp_async(field: &str, value: &FieldValue) -> Result<CpAsync, FieldError> {
    let parsed = match value {
        FieldValue::Word(w) | FieldValue::Str(w) if w == "off" => Some(CpAsync::Off),
        FieldValue::Int(i) if [4, 8, 16].contains(i) => CpAsync::from_bytes(*i as u32),
        _ => None,
    };
    parsed.ok_or_else(|| {
        err(
            field,
            format!(
                "{field} must be off, 4, 8 or 16 (cp.async copies 4, 8 or 16 bytes); got {}",
                describe(value)
            ),
        )
    })
}

fn arch_set(field: &str, value: &FieldValue) -> Result<ArchSet, FieldError> {
    let items = match value {
        FieldValue::List(items) => items.as_slice(),
        single => std::slice::from_ref(single),
    };
    let mut set = ArchSet::EMPTY;
    for item in items {
        let arch = keyword_of(field, item, &Arch::ALL, Arch::keyword)?;
        if set.contains(arch) {
            return Err(err(field, format!("{field} lists {arch} twice")));
        }
        set = set.with(arch);
    }
    Ok(set)
}

/// Applies one field to `desc`. Unknown fields get a sentence listing the known ones.
pub fn set_field(
    desc: &mut VariantDescription,
    field: &str,
    value: &FieldValue,
) -> Result<(), FieldError> {
    match field {
        "name" => match value {
            FieldValue::Str(s) | FieldValue::Word(s) => desc.name = Cow::Owned(s.clone()),
            other => {
                return Err(err(
                    field,
                    format!(
                        "name must be a string such as \"r56\"; got {}",
                        describe(other)
                    ),
                ))
            }
        },
        "engine" => desc.engine = keyword_of(field, value, &Engine::ALL, Engine::keyword)?,
        "mode" => desc.mode = keyword_of(field, value, &NumericsMode::ALL, NumericsMode::keyword)?,
        "kdr" => desc.kdr = int(field, value)?,
        "nbj" => desc.nbj = int(field, value)?,
        "tile_n" => desc.tile_n = int(field, value)?,
        "warps_m" => desc.warps_m = int(field, value)?,
        "warps_n" => desc.warps_n = int(field, value)?,
        "ksplit" => desc.ksplit = int(field, value)?,
        "scale_fetch" => {
            desc.scale_fetch = keyword_of(field, value, &ScaleFetch::ALL, ScaleFetch::keyword)?
        }
        "expand" => {
            desc.expand = keyword_of(field, value, &ExpandWidth::ALL, ExpandWidth::keyword)?
        }
        "cp_async_activations" => desc.cp_async_activations = cp_async(field, value)?,
        "cp_async_plane" => desc.cp_async_plane = cp_async(field, value)?,
        "stages" => desc.stages = int(field, value)?,
        "accumulator_sets" => desc.accumulator_sets = int(field, value)?,
        "totals" => desc.totals = keyword_of(field, value, &Totals::ALL, Totals::keyword)?,
        "refill" => desc.refill = keyword_of(field, value, &Refill::ALL, Refill::keyword)?,
        "blocks_per_sm" => desc.blocks_per_sm = int(field, value)?,
        "chunk_unroll" => {
            desc.chunk_unroll = match value {
                FieldValue::Word(w) | FieldValue::Str(w) if w == "full" => 0,
                other => int(field, other)?,
            }
        }
        "archs" => desc.archs = arch_set(field, value)?,
        "allow_spills" => match value {
            FieldValue::Bool(b) => desc.allow_spills = *b,
            other => {
                return Err(err(
                    field,
                    format!(
                        "allow_spills must be true or false; got {}",
                        describe(other)
                    ),
                ))
            }
        },
        unknown => {
            return Err(err(
                &shown(unknown),
                format!(
                    "unknown field `{}`: a variant has the fields {}",
                    shown(unknown),
                    FIELDS.join(", ")
                ),
            ))
        }
    }
    Ok(())
}

/// Builds a description from `(field, value)` pairs in the order written: defaults for what is omitted,
/// an error for a repeated field. Returns every field error, not just the first.
pub fn from_fields<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a FieldValue)>,
) -> Result<VariantDescription, Vec<FieldError>> {
    let mut desc = VariantDescription::DEFAULTS;
    let mut seen: Vec<&str> = Vec::new();
    let mut errors = Vec::new();
    for (field, value) in pairs {
        if seen.contains(&field) {
            errors.push(err(
                &shown(field),
                format!(
                    "field `{}` is given twice; give each field once",
                    shown(field)
                ),
            ));
            continue;
        }
        seen.push(field);
        if let Err(e) = set_field(&mut desc, field, value) {
            errors.push(e);
        }
    }
    if !seen.contains(&"name") && errors.is_empty() {
        errors.push(err(
            "name",
            "a variant needs a name, such as `name: \"r56\"`".to_string(),
        ));
    }
    if errors.is_empty() {
        Ok(desc)
    } else {
        Err(errors)
    }
}
