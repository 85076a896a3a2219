//! Sweeps: one description whose fields may hold lists, expanded to the cartesian product of its lists, each
//! point a variant of its own (issue 15). The `sweep!` macro and `[[sweep]]` TOML tables both come here, so a
//! sweep is expanded, named and judged the same wherever it is written.
//!
//! - Every field may be a list of values, `stages: [2, 3]`; a single value is fixed for every point. `archs`
//!   keeps its meaning: `archs: [sm_80, sm_90]` is *one* set of architectures; to sweep over sets, write a list
//!   of lists, `archs: [[sm_80], [sm_90]]`. `name` is never a list: it is the sweep's name and the prefix of
//!   every point's declared name.
//! - A point's declared name is the sweep name plus, for each field that varies (in canonical field order), a
//!   short tag and its value: `rf` with `stages: [2, 3]` and `tile_n: [64, 128]` gives `rf_t64_s2` ... Fields
//!   that do not vary are left out, so names stay short.
//! - A point the validator refuses is kept in [`Expansion::refused`] with its sentence: it never stops the
//!   sweep. Points that render identically (the same canonical name) are kept once; the others are listed in
//!   [`Expansion::duplicates`]. A point that renders like an earlier one but is declared for other
//!   architectures (or other `allow_spills`) is refused: a kernel is declared once, so the point kept could not
//!   stand for it.
//! - Problems with the sweep itself (no name, an unknown or repeated field, an empty list, a product over
//!   [`MAX_SWEEP_POINTS`], or over what is left of [`MAX_TOTAL_SWEEP_POINTS`] for all sweeps together) are a
//!   [`SweepError`].

use crate::description::{Totals, VariantDescription};
use crate::fields::{field, from_fields, FieldValue, FIELDS};
use crate::name::canonical_name;
use crate::validate::validate;
use mmqgen_formats::input::shown;

/// The most points a sweep may expand to (before validation), so that a typo such as a 1000-value list cannot
/// start hours of compiling.
pub const MAX_SWEEP_POINTS: usize = 10_000;

/// The most points all the sweeps a program reads may expand to together (their products, before validation),
/// so that many small sweeps cannot do what one large one may not: 1,000 sweeps of 10,000 points held 5.8 GB.
pub const MAX_TOTAL_SWEEP_POINTS: usize = 20_000;

/// The longest declared name a point gets from its values; a longer one becomes `<sweep>_p<index>`.
pub const MAX_POINT_NAME: usize = 128;

/// Why a sweep cannot be expanded at all. Each displays as one sentence.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SweepError {
    #[error("a sweep needs a name, the prefix of its points' names, such as `name: \"rf\"`")]
    NoName,
    #[error("a sweep's name must be one string such as \"rf\", not {0}")]
    BadName(String),
    #[error(
        "the sweep name \"{0}\" must be 1 to 64 characters of a-z, 0-9, _ and -, starting with a letter"
    )]
    NameChars(String),
    #[error("unknown field `{0}`: a sweep has the fields of a variant, {fields}", fields = FIELDS.join(", "))]
    UnknownField(String),
    #[error("field `{0}` is given twice; give each field once")]
    Repeated(String),
    #[error("field `{0}` has an empty list: a sweep needs at least one value per field")]
    EmptyList(String),
    #[error("field `{field}` lists {value} twice; give each value once")]
    RepeatedValue { field: String, value: String },
    #[error(
        "sweep `{name}` expands to {count} points, more than the {max} allowed: shorten its lists",
        max = MAX_SWEEP_POINTS
    )]
    TooLarge { name: String, count: String },
    #[error(
        "sweep `{name}` expands to {count} points, and only {left} of the {max} allowed over all sweeps together \
         are left after the sweeps before it: shorten their lists",
        max = MAX_TOTAL_SWEEP_POINTS
    )]
    OverTotal {
        name: String,
        count: usize,
        left: usize,
    },
}

/// A point of the product the validator accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepPoint {
    pub desc: VariantDescription,
    pub canonical: String,
}

/// A point of the product the validator refused, with its sentence(s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusedPoint {
    pub name: String,
    pub sentence: String,
}

/// A valid point that renders like an earlier one (the same canonical name), so it was not kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicatePoint {
    pub name: String,
    /// The declared name of the point kept in its place.
    pub same_as: String,
}

/// What a sweep expands to.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expansion {
    pub name: String,
    /// The size of the product: `points + refused + duplicates`.
    pub total: usize,
    pub points: Vec<SweepPoint>,
    pub refused: Vec<RefusedPoint>,
    pub duplicates: Vec<DuplicatePoint>,
}

impl Expansion {
    /// The points' descriptions, in expansion order.
    pub fn descriptions(&self) -> Vec<VariantDescription> {
        self.points.iter().map(|p| p.desc.clone()).collect()
    }

    /// `sweep rf: 120 points of a product of 144 (20 refused, 4 render like another point)`.
    pub fn summary(&self) -> String {
        format!(
            "sweep {}: {} point(s) of a product of {} ({} refused, {} render like another point)",
            self.name,
            self.points.len(),
            self.total,
            self.refused.len(),
            self.duplicates.len()
        )
    }
}

/// A value as it appears in a point's name: `128`, `burst`, `sm80sm90`, `true`.
fn value_text(value: &FieldValue) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase()
    };
    match value {
        FieldValue::Word(w) | FieldValue::Str(w) => {
            match Totals::ALL.iter().find(|t| t.keyword() == w) {
                Some(totals) => totals.short_keyword().into(),
                None if w.starts_with("sm_") => clean(w),
                None => w
                    .chars()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect::<String>()
                    .to_ascii_lowercase(),
            }
        }
        FieldValue::Int(i) if *i < 0 => format!("m{}", i.unsigned_abs()),
        FieldValue::Int(i) => i.to_string(),
        FieldValue::Bool(b) => b.to_string(),
        FieldValue::List(items) => items.iter().map(value_text).collect(),
    }
}

fn describe(value: &FieldValue) -> String {
    match value {
        FieldValue::Word(w) => shown(w),
        FieldValue::Str(s) => format!("\"{}\"", shown(s)),
        FieldValue::Int(i) => i.to_string(),
        FieldValue::Bool(b) => b.to_string(),
        FieldValue::List(items) => format!(
            "[{}]",
            items.iter().map(describe).collect::<Vec<_>>().join(", ")
        ),
    }
}

/// The values one field takes across the sweep: a list is an axis, anything else one value. For `archs`,
/// only a list of lists is an axis (a list of words is one set of architectures).
fn axis(field: &str, value: &FieldValue) -> Vec<FieldValue> {
    match value {
        FieldValue::List(items) if field != "archs" => items.clone(),
        FieldValue::List(items)
            if !items.is_empty() && items.iter().all(|i| matches!(i, FieldValue::List(_))) =>
        {
            items.clone()
        }
        single => vec![single.clone()],
    }
}

fn check_name(value: &FieldValue) -> Result<String, SweepError> {
    let name = match value {
        FieldValue::Str(s) | FieldValue::Word(s) => s.clone(),
        other => return Err(SweepError::BadName(describe(other))),
    };
    let ok = !name.is_empty()
        && name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if ok {
        Ok(name)
    } else {
        Err(SweepError::NameChars(shown(&name)))
    }
}

/// Expands a sweep written as `(field, value)` pairs (in the order written) to its points; see the module docs.
pub fn expand_sweep<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a FieldValue)>,
) -> Result<Expansion, SweepError> {
    expand_sweep_within(pairs, MAX_SWEEP_POINTS)
}

/// [`expand_sweep`] for a sweep that may take at most `left` points (what [`MAX_TOTAL_SWEEP_POINTS`] leaves
/// after the sweeps read before it); the product is checked before anything is expanded.
pub fn expand_sweep_within<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a FieldValue)>,
    left: usize,
) -> Result<Expansion, SweepError> {
    let mut name = None;
    let mut axes: Vec<(&'static str, Vec<FieldValue>)> = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (field, value) in pairs {
        let Some(&known) = FIELDS.iter().find(|f| **f == field) else {
            return Err(SweepError::UnknownField(shown(field)));
        };
        if seen.contains(&known) {
            return Err(SweepError::Repeated(known.to_string()));
        }
        seen.push(known);
        if known == "name" {
            name = Some(check_name(value)?);
            continue;
        }
        let values = axis(known, value);
        if values.is_empty() {
            return Err(SweepError::EmptyList(known.to_string()));
        }
        for (i, v) in values.iter().enumerate() {
            if values[..i].contains(v) {
                return Err(SweepError::RepeatedValue {
                    field: known.to_string(),
                    value: describe(v),
                });
            }
        }
        axes.push((known, values));
    }
    let name = name.ok_or(SweepError::NoName)?;
    // Canonical field order, so that names do not depend on the order the fields were written in.
    axes.sort_by_key(|(f, _)| FIELDS.iter().position(|k| k == f));
    let mut total: u128 = 1;
    for (_, values) in &axes {
        total = total.saturating_mul(values.len() as u128);
    }
    if total > MAX_SWEEP_POINTS as u128 {
        return Err(SweepError::TooLarge {
            name,
            count: total.to_string(),
        });
    }
    let total = total as usize;
    if total > left {
        return Err(SweepError::OverTotal {
            name,
            count: total,
            left,
        });
    }
    let mut expansion = Expansion {
        name: name.clone(),
        total,
        ..Expansion::default()
    };
    // Index of the kept point per canonical name, for de-duplication.
    let mut kept: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut index = vec![0usize; axes.len()];
    for point in 0..total {
        let mut point_name = name.clone();
        for ((field_name, values), &i) in axes.iter().zip(&index) {
            if values.len() > 1 {
                point_name.push('_');
                point_name.push_str(field(field_name).map_or("", |f| f.sweep_tag));
                point_name.push_str(&value_text(&values[i]));
            }
        }
        if point_name.len() > MAX_POINT_NAME {
            point_name = format!("{name}_p{point}");
        }
        let name_value = FieldValue::Str(point_name.clone());
        let fields = std::iter::once(("name", &name_value)).chain(
            axes.iter()
                .zip(&index)
                .map(|((field, values), &i)| (*field, &values[i])),
        );
        let judged = from_fields(fields).and_then(|desc| validate(&desc).map(|()| desc));
        match judged {
            Ok(desc) => {
                let canonical = canonical_name(&desc);
                match kept.get(&canonical) {
                    Some(&at) => {
                        let same = &expansion.points[at].desc;
                        match declared_differently(&desc, same) {
                            None => expansion.duplicates.push(DuplicatePoint {
                                name: point_name,
                                same_as: same.name.to_string(),
                            }),
                            Some(sentence) => expansion.refused.push(RefusedPoint {
                                name: point_name,
                                sentence,
                            }),
                        }
                    }
                    None => {
                        kept.insert(canonical.clone(), expansion.points.len());
                        expansion.points.push(SweepPoint { desc, canonical });
                    }
                }
            }
            Err(errors) => expansion.refused.push(RefusedPoint {
                name: point_name,
                sentence: errors
                    .iter()
                    .map(|e| format!("{}: {}", e.field, e.message))
                    .collect::<Vec<_>>()
                    .join("; "),
            }),
        }
        // The next index, the last field fastest.
        for d in (0..axes.len()).rev() {
            index[d] += 1;
            if index[d] < axes[d].1.len() {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(expansion)
}

/// Why `point`, which renders like `known` (the same kernel), cannot stand for it or be stood for by it: it is
/// declared for other architectures or with another `allow_spills`. `None` when only the names differ.
pub fn declared_differently(
    point: &VariantDescription,
    known: &VariantDescription,
) -> Option<String> {
    let what = if point.archs != known.archs {
        format!(
            "is declared for {} and {} for {}",
            point.archs,
            shown(&known.name),
            known.archs
        )
    } else if point.allow_spills != known.allow_spills {
        format!(
            "has allow_spills = {} and {} has {}",
            point.allow_spills,
            shown(&known.name),
            known.allow_spills
        )
    } else {
        return None;
    };
    Some(format!(
        "it renders like {} (the same kernel) but {what}, and a kernel is declared once: give the architectures as \
         one set (archs = [\"sm_80\", \"sm_90\"]) or change a field",
        shown(&known.name)
    ))
}

/// A refused point as the `sweep!` macro leaves it in a `const`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticRefused {
    pub name: &'static str,
    pub sentence: &'static str,
}

/// A sweep expanded at compile time by `sweep!`: every valid point as a `VariantDescription`, and what was
/// refused or de-duplicated, so that a program can report it ([`StaticSweep::expansion`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticSweep {
    pub name: &'static str,
    pub total: usize,
    pub points: &'static [VariantDescription],
    pub refused: &'static [StaticRefused],
    /// `(point, the point kept in its place)`.
    pub duplicates: &'static [(&'static str, &'static str)],
}

impl StaticSweep {
    /// No points: what a `sweep!` with errors stands for, after its compile errors.
    pub const EMPTY: StaticSweep = StaticSweep {
        name: "",
        total: 0,
        points: &[],
        refused: &[],
        duplicates: &[],
    };

    /// The same expansion as [`expand_sweep`] gives for the same fields.
    pub fn expansion(&self) -> Expansion {
        Expansion {
            name: self.name.to_string(),
            total: self.total,
            points: self
                .points
                .iter()
                .map(|d| SweepPoint {
                    desc: d.clone(),
                    canonical: canonical_name(d),
                })
                .collect(),
            refused: self
                .refused
                .iter()
                .map(|r| RefusedPoint {
                    name: r.name.to_string(),
                    sentence: r.sentence.to_string(),
                })
                .collect(),
            duplicates: self
                .duplicates
                .iter()
                .map(|(name, same_as)| DuplicatePoint {
                    name: name.to_string(),
                    same_as: same_as.to_string(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::description::{Engine, Refill};

    fn w(s: &str) -> FieldValue {
        FieldValue::Word(s.into())
    }
    fn i(v: i64) -> FieldValue {
        FieldValue::Int(v)
    }
    fn l(v: Vec<FieldValue>) -> FieldValue {
        FieldValue::List(v)
    }
    fn s(v: &str) -> FieldValue {
        FieldValue::Str(v.into())
    }

    fn regfold(extra: Vec<(&'static str, FieldValue)>) -> Vec<(&'static str, FieldValue)> {
        let mut f = vec![
            ("name", s("rf")),
            ("engine", w("mma_k32_regfold")),
            ("mode", w("int_per32")),
            ("kdr", i(8)),
            ("scale_fetch", w("narrow")),
            ("expand", w("uint4")),
            ("cp_async_activations", i(16)),
            ("archs", l(vec![w("sm_90")])),
        ];
        f.extend(extra);
        f
    }

    fn run(pairs: &[(&'static str, FieldValue)]) -> Result<Expansion, SweepError> {
        expand_sweep(pairs.iter().map(|(k, v)| (*k, v)))
    }

    #[test]
    fn the_product_is_expanded_and_named_by_what_varies() {
        let e = run(&regfold(vec![
            ("stages", l(vec![i(2), i(3)])),
            ("tile_n", l(vec![i(64), i(128)])),
            ("nbj", i(128)),
            ("warps_m", i(4)),
        ]))
        .unwrap();
        assert_eq!(e.total, 4);
        let names: Vec<&str> = e.points.iter().map(|p| p.desc.name.as_ref()).collect();
        // Canonical field order (tile_n before stages), the last field fastest.
        assert_eq!(
            names,
            ["rf_t64_s2", "rf_t64_s3", "rf_t128_s2", "rf_t128_s3"]
        );
        assert!(e.refused.is_empty() && e.duplicates.is_empty(), "{e:?}");
        for p in &e.points {
            assert_eq!(p.desc.engine, Engine::MmaK32Regfold);
            assert_eq!(p.canonical, canonical_name(&p.desc));
        }
        assert_eq!(e.points[3].desc.stages, 3);
        assert_eq!(e.points[3].desc.tile_n, 128);
    }

    #[test]
    fn refused_points_are_listed_with_their_sentence_and_never_stop_the_sweep() {
        // stages 1 without... regfold needs stages >= 2; kdr 3 is refused everywhere.
        let e = run(&regfold(vec![("stages", l(vec![i(1), i(2)]))])).unwrap();
        assert_eq!(e.total, 2);
        assert_eq!(e.points.len() + e.refused.len(), 2);
        assert_eq!(e.refused.len(), 1, "{e:?}");
        assert_eq!(e.refused[0].name, "rf_s1");
        assert!(e.refused[0].sentence.starts_with("stages: "), "{e:?}");
        let all_bad = run(&regfold(vec![("kdr", l(vec![i(3), i(5)]))]));
        // `kdr` is given twice (regfold() sets it): a sweep-level error.
        assert_eq!(all_bad, Err(SweepError::Repeated("kdr".into())));
    }

    #[test]
    fn identical_renderings_are_kept_once() {
        // Two architecture sets render the same source: one point, one duplicate.
        let mut f = regfold(vec![]);
        f.retain(|(k, _)| *k != "archs");
        f.push((
            "archs",
            l(vec![l(vec![w("sm_90")]), l(vec![w("sm_80"), w("sm_90")])]),
        ));
        f.push(("stages", i(2)));
        let e = run(&f).unwrap();
        assert_eq!(e.total, 2);
        // sm_80 is refused for regfold or de-duplicated; either way one point remains.
        assert_eq!(e.points.len(), 1, "{e:?}");
        assert_eq!(e.points[0].desc.name, "rf_sm90");
        assert_eq!(e.refused.len() + e.duplicates.len(), 1);

        // blocks_per_sm 1 and refill burst are the defaults: writing them changes nothing.
        let e = run(&regfold(vec![
            ("refill", l(vec![w("burst")])),
            ("stages", l(vec![i(2)])),
        ]))
        .unwrap();
        assert_eq!(e.points.len(), 1);
        assert_eq!(e.points[0].desc.name, "rf", "one-value lists do not vary");
        assert_eq!(e.points[0].desc.refill, Refill::Burst);
    }

    /// A point that renders like an earlier one but for other architectures cannot be that point (it would
    /// never be compiled for its own): it is refused with a sentence saying how to sweep both.
    #[test]
    fn the_same_kernel_for_other_archs_is_refused_not_dropped() {
        let pairs = vec![
            ("name", s("mk")),
            ("engine", w("mma_k16")),
            ("mode", w("f32_per16")),
            ("kdr", i(2)),
            ("nbj", i(64)),
            ("tile_n", i(64)),
            ("warps_m", i(2)),
            ("warps_n", i(2)),
            ("archs", l(vec![l(vec![w("sm_80")]), l(vec![w("sm_90")])])),
        ];
        let e = run(&pairs).unwrap();
        assert_eq!((e.total, e.points.len()), (2, 1), "{e:?}");
        assert!(e.duplicates.is_empty(), "{e:?}");
        assert_eq!(e.refused.len(), 1, "{e:?}");
        assert_eq!(e.refused[0].name, "mk_sm90");
        assert!(
            e.refused[0].sentence.contains(
                "renders like mk_sm80 (the same kernel) but is declared for [sm_90] and mk_sm80 for [sm_80]"
            ),
            "{}",
            e.refused[0].sentence
        );
    }

    /// Many sweeps may not together do what one may not: each takes its product from what the sweeps before it
    /// left, and is refused before it is expanded when it does not fit.
    #[test]
    fn sweeps_together_are_capped() {
        let many = |n: i64| l((1..=n).map(i).collect());
        let pairs = [("name", s("big")), ("nbj", many(100)), ("tile_n", many(50))];
        let e = expand_sweep_within(pairs.iter().map(|(k, v)| (*k, v)), 5000).unwrap();
        assert_eq!(e.total, 5000);
        match expand_sweep_within(pairs.iter().map(|(k, v)| (*k, v)), 4999) {
            Err(SweepError::OverTotal { count, left, .. }) => {
                assert_eq!((count, left), (5000, 4999))
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_list_of_words_for_archs_is_one_set() {
        let e = run(&regfold(vec![("stages", i(2))])).unwrap();
        assert_eq!(e.total, 1);
        assert_eq!(e.points[0].desc.name, "rf");
    }

    #[test]
    fn sweep_level_errors() {
        let no_name: Vec<(&str, FieldValue)> = vec![("stages", l(vec![i(2)]))];
        assert_eq!(run(&no_name), Err(SweepError::NoName));
        assert_eq!(
            run(&[("name", l(vec![s("a")]))]),
            Err(SweepError::BadName("[\"a\"]".into()))
        );
        assert!(matches!(
            run(&[("name", s("Bad Name"))]),
            Err(SweepError::NameChars(_))
        ));
        assert_eq!(
            run(&[("name", s("x")), ("wat", i(1))]),
            Err(SweepError::UnknownField("wat".into()))
        );
        assert_eq!(
            run(&[("name", s("x")), ("stages", l(vec![]))]),
            Err(SweepError::EmptyList("stages".into()))
        );
        assert_eq!(
            run(&[("name", s("x")), ("stages", l(vec![i(2), i(2)]))]),
            Err(SweepError::RepeatedValue {
                field: "stages".into(),
                value: "2".into()
            })
        );
        let e = run(&[("name", s("x"))]).unwrap();
        assert_eq!((e.total, e.points.len()), (1, 1), "{e:?}");
        for err in [
            SweepError::NoName,
            SweepError::UnknownField("wat".into()),
            SweepError::TooLarge {
                name: "x".into(),
                count: "12".into(),
            },
        ] {
            let text = err.to_string();
            assert!(!text.contains('\n') && !text.is_empty(), "{text}");
        }
    }

    #[test]
    fn the_product_is_capped_before_anything_is_expanded() {
        let many = |n: i64| l((1..=n).map(i).collect());
        let pairs = vec![
            ("name", s("big")),
            ("nbj", many(100)),
            ("tile_n", many(100)),
            ("warps_m", many(2)),
        ];
        match run(&pairs) {
            Err(SweepError::TooLarge { count, .. }) => assert_eq!(count, "20000"),
            other => panic!("{other:?}"),
        }
        let at_cap = vec![
            ("name", s("cap")),
            ("nbj", many(100)),
            ("tile_n", many(100)),
        ];
        let e = run(&at_cap).unwrap();
        assert_eq!(e.total, MAX_SWEEP_POINTS);
        assert_eq!(
            e.points.len() + e.refused.len() + e.duplicates.len(),
            e.total
        );
    }

    #[test]
    fn long_names_fall_back_to_an_index() {
        let long = "a".repeat(64);
        let e = run(&[
            ("name", s(&long)),
            ("engine", l(vec![w("mma_k16"), w("dp4a")])),
            ("mode", l(vec![w("int_per32"), w("f32_per16")])),
            ("scale_fetch", l(vec![w("narrow"), w("wide")])),
            ("expand", l(vec![w("uint4"), w("u32")])),
            ("kdr", l(vec![i(1), i(2)])),
            ("nbj", l(vec![i(64), i(128)])),
            ("tile_n", l(vec![i(32), i(64)])),
            ("warps_m", l(vec![i(2), i(4)])),
            ("cp_async_activations", l(vec![w("off"), i(16)])),
            ("totals", l(vec![w("registers"), w("shared")])),
            ("blocks_per_sm", l(vec![i(1), i(2)])),
        ])
        .unwrap();
        let all: Vec<&str> = e
            .points
            .iter()
            .map(|p| p.desc.name.as_ref())
            .chain(e.refused.iter().map(|r| r.name.as_str()))
            .collect();
        assert!(
            all.iter().all(|n| n.len() <= MAX_POINT_NAME),
            "{:?}",
            all.first()
        );
        assert!(all.iter().any(|n| n.ends_with("_p0")), "{:?}", all.first());
    }
}
