//! The field table and field by field parsing of a description, shared by the `variant!` macro and the TOML
//! loader so that both speak the same sentences. A front end turns its syntax into [`FieldValue`]s; this module
//! applies them.
//!
//! [`FIELD_TABLE`] is the one list of the fields: [`FIELDS`], [`set_field`], the header lines
//! ([`description_lines`]), the TOML a config carries, the sweep tags and the macro's expansion come from it,
//! and the defaults from [`VariantDescription::DEFAULTS`] and each engine's ([`crate::engine::fill_defaults`]).
//! A new value of an enum field touches the enum (its `ALL` and `keyword`) and the templates that use it; a new
//! field, the struct, `DEFAULTS`, one table entry, and the canonical name where it changes the source.

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

fn keyword_value<T: Keyword>(field: &str, value: &FieldValue) -> Result<T, FieldError> {
    let w = word(field, value, T::KEYWORDS)?;
    let at = T::KEYWORDS.iter().position(|k| *k == w).unwrap_or(0);
    Ok(T::VALUES[at])
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

/// A list of architectures and families (`[sm_80, sm_90]`, `[ampere_and_later]`) as one set; an architecture
/// named twice, directly or through a family, is refused.
fn arch_set(field: &str, value: &FieldValue) -> Result<ArchSet, FieldError> {
    let items = match value {
        FieldValue::List(items) => items.as_slice(),
        single => std::slice::from_ref(single),
    };
    let mut set = ArchSet::EMPTY;
    for item in items {
        let (named, what) = match item {
            FieldValue::Word(w) | FieldValue::Str(w) => match (
                Arch::from_keyword(w),
                crate::arch::ArchFamily::from_keyword(w),
            ) {
                (Some(arch), _) => (ArchSet::EMPTY.with(arch), None),
                (None, Some(family)) => (family.archs(), Some(family.keyword)),
                (None, None) => return Err(unknown_arch(field, item)),
            },
            other => return Err(unknown_arch(field, other)),
        };
        if let Some(twice) = set.intersection(named).iter().next() {
            let through = what.map_or(String::new(), |family| format!(" (through {family})"));
            return Err(err(field, format!("{field} lists {twice} twice{through}")));
        }
        set = set.union(named);
    }
    Ok(set)
}

fn unknown_arch(field: &str, value: &FieldValue) -> FieldError {
    err(
        field,
        format!(
            "{field} must list architectures ({}) or families of them ({}); got {}",
            <Arch as Keyword>::KEYWORDS.join(", "),
            crate::arch::ARCH_FAMILIES.map(|f| f.keyword).join(", "),
            describe(value)
        ),
    )
}

fn name(field: &str, value: &FieldValue) -> Result<Cow<'static, str>, FieldError> {
    match value {
        FieldValue::Str(s) | FieldValue::Word(s) => Ok(Cow::Owned(s.clone())),
        other => Err(err(
            field,
            format!(
                "{field} must be a string such as \"r56\"; got {}",
                describe(other)
            ),
        )),
    }
}

fn unroll(field: &str, value: &FieldValue) -> Result<u32, FieldError> {
    match value {
        FieldValue::Word(w) | FieldValue::Str(w) if w == "full" => Ok(0),
        other => int(field, other),
    }
}

fn flag(field: &str, value: &FieldValue) -> Result<bool, FieldError> {
    match value {
        FieldValue::Bool(b) => Ok(*b),
        other => Err(err(
            field,
            format!("{field} must be true or false; got {}", describe(other)),
        )),
    }
}

/// What a field holds, with its legal values where they are a closed set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// A string (the declared name).
    Text,
    /// A non-negative integer; the validator says which ones fit.
    Count,
    /// One keyword of an enum ([`Keyword`]).
    Keyword {
        type_name: &'static str,
        keywords: &'static [&'static str],
    },
    /// A cp.async width: `off`, 4, 8 or 16.
    CpAsync,
    /// `full` or a number of chunks.
    Unroll,
    /// A list of architecture keywords.
    Archs { keywords: &'static [&'static str] },
    /// `true` or `false`.
    Flag,
}

/// Where a field shows in the header comment of the generated source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeaderLine {
    /// Not shown: the field does not shape the source (the name, the architectures, allow_spills).
    Hidden,
    /// A line of its own, `field = value`.
    Own,
    /// One line with the next field, `field x next = value x next value` (the warp grid).
    WithNext,
    /// Shown on the previous field's line.
    WithPrevious,
}

/// A field's value as the `variant!` expansion writes it in Rust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RustLiteral {
    /// The declared name: `Cow::Borrowed("...")`.
    Name(String),
    U32(u32),
    Bool(bool),
    /// An enum value: `<type_name>::<value>`, both as Rust spells them ([`FieldEnum`]).
    Enum {
        type_name: &'static str,
        value: String,
    },
    /// An [`ArchSet`]'s bits.
    ArchBits(u16),
}

/// One field of a description: the single declaration that the field list, the parser of written values
/// (macro and TOML), the header comment and the macro's expansion are derived from. The defaults live in
/// [`VariantDescription::DEFAULTS`]; the canonical name keeps its own order ([`crate::name`]).
#[derive(Clone, Copy)]
pub struct Field {
    /// The name as written in `variant!` and TOML.
    pub name: &'static str,
    pub kind: FieldKind,
    pub header: HeaderLine,
    /// The short tag a varying field adds to a sweep point's name before its value (`stages` = 3 gives `s3`);
    /// empty for fields whose values are self-describing words (engine, mode, ...).
    pub sweep_tag: &'static str,
    /// Stores a written value in a description, or says what is allowed.
    pub set: fn(&mut VariantDescription, &FieldValue) -> Result<(), FieldError>,
    /// The field of a description, written as `variant!` and TOML take it (`set` reads it back).
    pub written: fn(&VariantDescription) -> FieldValue,
    /// The field of a description as a Rust literal, for the `variant!` expansion.
    pub literal: fn(&VariantDescription) -> RustLiteral,
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Field")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("header", &self.header)
            .field("sweep_tag", &self.sweep_tag)
            .finish_non_exhaustive()
    }
}

fn keyword_written<T: Keyword>(value: &T) -> FieldValue {
    FieldValue::Word(value.keyword().to_string())
}

fn enum_literal<T: FieldEnum>(value: &T) -> RustLiteral {
    RustLiteral::Enum {
        type_name: T::TYPE_NAME,
        value: value.rust_name(),
    }
}

fn count_written(value: &u32) -> FieldValue {
    FieldValue::Int(i64::from(*value))
}

fn count_literal(value: &u32) -> RustLiteral {
    RustLiteral::U32(*value)
}

/// An unroll count as written: 0 is `full`.
fn unroll_written(value: &u32) -> FieldValue {
    match value {
        0 => FieldValue::Word("full".to_string()),
        n => count_written(n),
    }
}

fn cp_async_written(value: &CpAsync) -> FieldValue {
    match value {
        CpAsync::Off => FieldValue::Word("off".to_string()),
        on => FieldValue::Int(i64::from(on.bytes())),
    }
}

/// One table entry; `$parse(field, value)` gives the field's typed value, `$written` and `$literal` take it.
macro_rules! field {
    ($name:ident, $kind:expr, $header:expr, $tag:expr, $parse:expr, $written:expr, $literal:expr) => {
        Field {
            name: stringify!($name),
            kind: $kind,
            header: $header,
            sweep_tag: $tag,
            set: |desc, value| {
                desc.$name = ($parse)(stringify!($name), value)?;
                Ok(())
            },
            written: |desc| ($written)(&desc.$name),
            literal: |desc| ($literal)(&desc.$name),
        }
    };
}

macro_rules! count_field {
    ($name:ident, $tag:expr, $header:expr) => {
        field!(
            $name,
            FieldKind::Count,
            $header,
            $tag,
            int,
            count_written,
            count_literal
        )
    };
    ($name:ident, $tag:expr) => {
        count_field!($name, $tag, HeaderLine::Own)
    };
}

/// A loop's unroll count: `full` (0) or a number, parsed and written alike for every such field.
macro_rules! unroll_field {
    ($name:ident, $tag:expr) => {
        field!(
            $name,
            FieldKind::Unroll,
            HeaderLine::Own,
            $tag,
            unroll,
            unroll_written,
            count_literal
        )
    };
}

macro_rules! keyword_field {
    ($name:ident: $enum:ty) => {
        keyword_field!($name: $enum, "")
    };
    ($name:ident: $enum:ty, $tag:expr) => {
        field!(
            $name,
            FieldKind::Keyword {
                type_name: <$enum as FieldEnum>::TYPE_NAME,
                keywords: <$enum as Keyword>::KEYWORDS,
            },
            HeaderLine::Own,
            $tag,
            keyword_value::<$enum>,
            keyword_written::<$enum>,
            enum_literal::<$enum>
        )
    };
}

macro_rules! cp_async_field {
    ($name:ident, $tag:expr) => {
        field!(
            $name,
            FieldKind::CpAsync,
            HeaderLine::Own,
            $tag,
            cp_async,
            cp_async_written,
            enum_literal::<CpAsync>
        )
    };
}

/// The number of fields a description has.
pub const FIELD_COUNT: usize = 31;

/// Every field of a description, in canonical order (the order of the header and of the expansion).
pub const FIELD_TABLE: [Field; FIELD_COUNT] = [
    field!(
        name,
        FieldKind::Text,
        HeaderLine::Hidden,
        "",
        name,
        |n: &Cow<'static, str>| FieldValue::Str(n.to_string()),
        |n: &Cow<'static, str>| RustLiteral::Name(n.to_string())
    ),
    keyword_field!(engine: Engine),
    keyword_field!(mode: NumericsMode),
    count_field!(kdr, "kdr"),
    count_field!(nbj, "j"),
    count_field!(tile_n, "t"),
    count_field!(warps_m, "wm", HeaderLine::WithNext),
    count_field!(warps_n, "wn", HeaderLine::WithPrevious),
    count_field!(ksplit, "ks"),
    keyword_field!(scale_fetch: ScaleFetch),
    keyword_field!(expand: ExpandWidth),
    cp_async_field!(cp_async_activations, "cpa"),
    cp_async_field!(cp_async_plane, "cpp"),
    count_field!(stages, "s"),
    count_field!(accumulator_sets, "acc"),
    keyword_field!(totals: Totals, "tot"),
    keyword_field!(segment: Segment, "seg"),
    keyword_field!(refill: Refill),
    keyword_field!(quantizer: Quantizer, "q"),
    count_field!(blocks_per_sm, "b"),
    unroll_field!(chunk_unroll, "u"),
    unroll_field!(token_unroll, "tu"),
    keyword_field!(ring_lanes: RingLanes, "lanes"),
    count_field!(warps_k, "wk"),
    count_field!(cluster_rows, "cr", HeaderLine::WithNext),
    count_field!(cluster_tokens, "ct", HeaderLine::WithPrevious),
    count_field!(fold_warps, "fw"),
    keyword_field!(producer: Producer, "p"),
    count_field!(tail_parts, "tp"),
    field!(
        archs,
        FieldKind::Archs {
            keywords: <Arch as Keyword>::KEYWORDS,
        },
        HeaderLine::Hidden,
        "",
        arch_set,
        |set: &ArchSet| FieldValue::List(set.iter().map(|a| keyword_written(&a)).collect()),
        |set: &ArchSet| RustLiteral::ArchBits(set.0)
    ),
    field!(
        allow_spills,
        FieldKind::Flag,
        HeaderLine::Hidden,
        "spill",
        flag,
        |b: &bool| FieldValue::Bool(*b),
        |b: &bool| RustLiteral::Bool(*b)
    ),
];

/// The fields' names, in canonical order.
pub const FIELDS: [&str; FIELD_COUNT] = {
    let mut names = [""; FIELD_COUNT];
    let mut i = 0;
    while i < FIELD_COUNT {
        names[i] = FIELD_TABLE[i].name;
        i += 1;
    }
    names
};

/// The table entry of field `name`.
pub fn field(name: &str) -> Option<&'static Field> {
    FIELD_TABLE.iter().find(|f| f.name == name)
}

/// A value as a person writes it in `variant!` (a list as `[a, b]`); the header shows fields this way.
pub fn written_text(value: &FieldValue) -> String {
    match value {
        FieldValue::Word(w) | FieldValue::Str(w) => w.clone(),
        FieldValue::Int(i) => i.to_string(),
        FieldValue::Bool(b) => b.to_string(),
        FieldValue::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(written_text)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// The lines of the generated header that record the description: the table's fields that shape the source,
/// in table order, as `field = value` with the values aligned.
pub fn description_lines(desc: &VariantDescription) -> Vec<String> {
    let line = |label: &str, value: &str| format!("{label:<20} = {value}");
    let shown = |field: &Field| written_text(&(field.written)(desc));
    let mut lines = Vec::new();
    for (at, field) in FIELD_TABLE.iter().enumerate() {
        match field.header {
            HeaderLine::Hidden | HeaderLine::WithPrevious => {}
            HeaderLine::Own => lines.push(line(field.name, &shown(field))),
            HeaderLine::WithNext => {
                let next = FIELD_TABLE.get(at + 1).unwrap_or(field);
                lines.push(line(
                    &format!("{} x {}", field.name, next.name),
                    &format!("{} x {}", shown(field), shown(next)),
                ));
            }
        }
    }
    lines
}

/// Applies one field to `desc`. Unknown fields get a sentence listing the known ones.
pub fn set_field(
    desc: &mut VariantDescription,
    field_name: &str,
    value: &FieldValue,
) -> Result<(), FieldError> {
    match field(field_name) {
        Some(field) => (field.set)(desc, value),
        None => Err(err(
            &shown(field_name),
            format!(
                "unknown field `{}`: a variant has the fields {}",
                shown(field_name),
                FIELDS.join(", ")
            ),
        )),
    }
}

/// Builds a description from `(field, value)` pairs in the order written: defaults for what is omitted (the
/// engine's, [`crate::engine::fill_defaults`], where the global one is a value the engine refuses), an error for a
/// repeated field. Returns every field error, not just the first.
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
    // The fields not written take their engine's defaults where the global one is a value the engine refuses.
    crate::engine::fill_defaults(&mut desc, &|field| seen.contains(&field));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A description with every field away from its default, so that a field written into the wrong place
    /// shows.
    fn away_from_defaults() -> VariantDescription {
        VariantDescription {
            name: Cow::Borrowed("away"),
            engine: Engine::MmaK32Prefolded,
            mode: NumericsMode::IntPer256,
            kdr: 8,
            nbj: 128,
            tile_n: 64,
            warps_m: 4,
            warps_n: 1,
            ksplit: 2,
            scale_fetch: ScaleFetch::Plane,
            expand: ExpandWidth::Uint4,
            cp_async_activations: CpAsync::B16,
            cp_async_plane: CpAsync::B8,
            stages: 3,
            accumulator_sets: 2,
            totals: Totals::Shared,
            segment: Segment::Shared,
            refill: Refill::Spread,
            quantizer: Quantizer::Fused,
            blocks_per_sm: 2,
            chunk_unroll: 4,
            token_unroll: 1,
            ring_lanes: RingLanes::Rows,
            warps_k: 2,
            cluster_rows: 2,
            cluster_tokens: 2,
            fold_warps: 4,
            producer: Producer::Warpgroup,
            tail_parts: 2,
            archs: ArchSet::EMPTY.with(Arch::Sm80).with(Arch::Sm90),
            allow_spills: true,
        }
    }

    #[test]
    fn every_field_round_trips_through_its_written_value() {
        let defaults = VariantDescription::DEFAULTS;
        let away = away_from_defaults();
        for field in &FIELD_TABLE {
            let mut desc = defaults.clone();
            set_field(&mut desc, field.name, &(field.written)(&defaults))
                .unwrap_or_else(|e| panic!("{}: {e}", field.name));
            assert_eq!(desc, defaults, "{}", field.name);
            // Writing another description's value changes this field and no other.
            let mut desc = away.clone();
            set_field(&mut desc, field.name, &(field.written)(&defaults)).unwrap();
            assert_ne!(desc, away, "{} wrote nothing", field.name);
            set_field(&mut desc, field.name, &(field.written)(&away)).unwrap();
            assert_eq!(desc, away, "{} wrote another field", field.name);
        }
    }

    #[test]
    fn field_names_are_the_table_in_order_and_unique() {
        for (at, field) in FIELD_TABLE.iter().enumerate() {
            assert_eq!(FIELDS[at], field.name);
            assert_eq!(FIELDS.iter().filter(|f| **f == field.name).count(), 1);
        }
    }

    #[test]
    fn header_lines_come_from_the_table_in_order() {
        let lines = description_lines(&VariantDescription::DEFAULTS);
        let shown: Vec<&str> = FIELD_TABLE
            .iter()
            .filter(|f| matches!(f.header, HeaderLine::Own | HeaderLine::WithNext))
            .map(|f| f.name)
            .collect();
        assert_eq!(lines.len(), shown.len());
        for (line, name) in lines.iter().zip(shown) {
            assert!(line.starts_with(name), "{line} is not {name}'s line");
        }
        assert_eq!(
            lines,
            [
                "engine               = dp4a",
                "mode                 = int_per32",
                "kdr                  = 2",
                "nbj                  = 64",
                "tile_n               = 32",
                "warps_m x warps_n    = 2 x 2",
                "ksplit               = 1",
                "scale_fetch          = narrow",
                "expand               = u32",
                "cp_async_activations = off",
                "cp_async_plane       = off",
                "stages               = 1",
                "accumulator_sets     = 1",
                "totals               = registers",
                "segment              = registers",
                "refill               = burst",
                "quantizer            = separate",
                "blocks_per_sm        = 1",
                "chunk_unroll         = full",
                "token_unroll         = full",
                "ring_lanes           = superblocks",
                "warps_k              = 1",
                "cluster_rows x cluster_tokens = 1 x 1",
                "fold_warps           = 0",
                "producer             = none",
                "tail_parts           = 1",
            ]
        );
    }

    #[test]
    fn archs_take_architectures_and_families() {
        let archs = |items: &[&str]| {
            let mut desc = VariantDescription::DEFAULTS;
            let list = FieldValue::List(
                items
                    .iter()
                    .map(|w| FieldValue::Word(w.to_string()))
                    .collect(),
            );
            set_field(&mut desc, "archs", &list).map(|()| desc.archs)
        };
        assert_eq!(
            archs(&["sm_75", "ampere_and_later"]),
            Ok(crate::arch::ArchSet::ALL)
        );
        assert_eq!(
            archs(&["blackwell_and_later"]).unwrap().to_string(),
            "[sm_100, sm_103, sm_120, sm_121]"
        );
        assert_eq!(
            archs(&["sm_100", "blackwell_and_later"])
                .unwrap_err()
                .message,
            "archs lists sm_100 twice (through blackwell_and_later)"
        );
        assert_eq!(
            archs(&["sm_80", "sm_80"]).unwrap_err().message,
            "archs lists sm_80 twice"
        );
        assert!(archs(&["sm_70"])
            .unwrap_err()
            .message
            .starts_with("archs must list architectures (sm_75, sm_80,"));
    }

    #[test]
    fn keyword_fields_list_every_value_of_their_enum() {
        let keywords = |name: &str| match field(name).map(|f| f.kind) {
            Some(FieldKind::Keyword { keywords, .. }) => keywords,
            other => panic!("{name} is {other:?}"),
        };
        assert_eq!(keywords("engine").len(), Engine::ALL.len());
        assert_eq!(keywords("refill"), ["burst", "spread", "tma"]);
        assert_eq!(keywords("totals"), ["registers", "shared", "output"]);
        assert_eq!(keywords("segment"), ["registers", "shared"]);
        let mut desc = VariantDescription::DEFAULTS;
        let e = set_field(&mut desc, "totals", &FieldValue::Word("wat".into())).unwrap_err();
        assert_eq!(
            e.message,
            "totals must be one of registers, shared, output; got `wat`"
        );
    }
}
