//! Which variant runs for a shape: an ordered list of rules read from `mmqgen.toml`, first match wins.
//!
//! Rules are data, not code, so that tuning can rewrite them with provenance and a person can read, check
//! (`mmqgen config check`: gaps and dead rules) and question (`mmqgen explain`) the choice. A config may
//! declare its own `[[variant]]` tables; they go through the same validator, with the same sentences, as the
//! `variant!` macro. The default config is embedded ([`DEFAULT_CONFIG`]).
//!
//! ```toml
//! [[rule]]
//! name = "prefill-sm90"   # optional; "rule N" otherwise
//! arch = "sm_90"
//! tokens = { min = 129 }  # n; also [129, 4096] (inclusive) or 512 (exactly)
//! m = 4096                # optional, same forms; omitted = any m
//! k = [4096, 14336]       # optional, same forms; omitted = any K
//! variant = "fold_per32"  # declared or canonical name
//! ```

use crate::codegen::spec_file::{parse_toml, variants_from_toml, SpecError};
use crate::codegen::{canonical_name, Arch, NumericsMode, VariantDescription};
use crate::formats::input::shown;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

/// The default selection, embedded in the binary.
pub const DEFAULT_CONFIG: &str = include_str!("../mmqgen.toml");

/// `config check` looks for token-count gaps over `1..=CHECK_MAX_TOKENS`.
pub const CHECK_MAX_TOKENS: u64 = 65536;

const RULE_KEYS: [&str; 6] = ["name", "arch", "tokens", "m", "k", "variant"];

/// An inclusive range of a shape dimension; `max: None` is open-ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    pub min: u64,
    pub max: Option<u64>,
}

impl Bounds {
    /// Every value (an omitted `m` or `k`).
    pub const ANY: Bounds = Bounds { min: 1, max: None };

    pub fn contains(&self, value: u64) -> bool {
        value >= self.min && self.max.is_none_or(|max| value <= max)
    }
    pub fn is_any(&self) -> bool {
        *self == Bounds::ANY
    }
    /// Inclusive upper end, `u64::MAX` when open.
    fn hi(&self) -> u64 {
        self.max.unwrap_or(u64::MAX)
    }
    fn intersect(&self, other: &Bounds) -> Option<Bounds> {
        let min = self.min.max(other.min);
        let hi = self.hi().min(other.hi());
        (min <= hi).then_some(Bounds {
            min,
            max: (hi != u64::MAX).then_some(hi),
        })
    }
}

impl fmt::Display for Bounds {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.max {
            _ if self.is_any() => f.write_str("any"),
            Some(max) if max == self.min => write!(f, "{max}"),
            Some(max) => write!(f, "{}..={max}", self.min),
            None => write!(f, "{}..", self.min),
        }
    }
}

/// One `[[rule]]`, its variant resolved.
#[derive(Clone, Debug)]
pub struct Rule {
    /// 0-based position; sentences say `rule {index + 1}`.
    pub index: usize,
    /// The written name, or `rule N`.
    pub name: String,
    /// Whether `name` was written (it is then quoted in sentences).
    pub named: bool,
    pub arch: Arch,
    pub tokens: Bounds,
    pub m: Bounds,
    pub k: Bounds,
    /// The variant name as written in the rule.
    pub variant_name: String,
    pub variant: VariantDescription,
}

impl Rule {
    /// `rule 2 'decode'`, or `rule 2` when unnamed.
    pub fn label(&self) -> String {
        if self.named {
            format!("rule {} '{}'", self.index + 1, shown(&self.name))
        } else {
            format!("rule {}", self.index + 1)
        }
    }

    /// `sm_90, n 1..=16, k 14336 -> small_n_f32` (m and k only when limited).
    pub fn summary(&self) -> String {
        let mut s = format!("{}, n {}", self.arch, self.tokens);
        if !self.m.is_any() {
            s += &format!(", m {}", self.m);
        }
        if !self.k.is_any() {
            s += &format!(", k {}", self.k);
        }
        format!("{s} -> {}", self.variant.name)
    }

    /// Why the rule does not take the shape; empty when it does.
    pub fn mismatches(&self, arch: Arch, m: u64, n: u64, k: u64) -> Vec<String> {
        let mut why = Vec::new();
        if self.arch != arch {
            why.push(format!("arch is {}, not {arch}", self.arch));
        }
        if !self.tokens.contains(n) {
            why.push(format!("tokens {} does not contain n = {n}", self.tokens));
        }
        if !self.m.contains(m) {
            why.push(format!("m {} does not contain m = {m}", self.m));
        }
        if !self.k.contains(k) {
            why.push(format!("k {} does not contain k = {k}", self.k));
        }
        why
    }

    /// How the rule takes a shape it matches.
    fn agreement(&self, m: u64, n: u64, k: u64) -> String {
        let dim = |key: &str, var: &str, b: &Bounds, v: u64| {
            if b.is_any() {
                format!("{key} any")
            } else {
                format!("{key} {b} contains {var} = {v}")
            }
        };
        format!(
            "arch {}, {}, {}, {}",
            self.arch,
            dim("tokens", "n", &self.tokens, n),
            dim("m", "m", &self.m, m),
            dim("k", "k", &self.k, k)
        )
    }

    fn matches(&self, arch: Arch, m: u64, n: u64, k: u64) -> bool {
        self.arch == arch && self.tokens.contains(n) && self.m.contains(m) && self.k.contains(k)
    }

    /// The rule's shapes as a box `[tokens, m, k]`.
    fn dims(&self) -> [Bounds; 3] {
        [self.tokens, self.m, self.k]
    }
}

/// What is wrong with one rule.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RuleProblem {
    #[error("a rule must be a table (`[[rule]]`)")]
    NotATable,
    #[error("unknown key `{key}`; a rule takes {}", RULE_KEYS.join(", "))]
    UnknownKey { key: String },
    #[error("`{key}` is missing; {hint}")]
    MissingKey {
        key: &'static str,
        hint: &'static str,
    },
    #[error("`{key}` must be a string such as \"{example}\"; got {got}")]
    NotAString {
        key: &'static str,
        example: &'static str,
        got: String,
    },
    #[error("`{key}` {reason}")]
    BadRange { key: String, reason: String },
    #[error("arch '{arch}' is not one mmqgen targets: {}", arch_list())]
    UnknownArch { arch: String },
    #[error("no variant named '{name}': known variants are {} (declared or canonical names)", known.join(", "))]
    UnknownVariant { name: String, known: Vec<String> },
    #[error("variant '{variant}' is not built for {arch} (its archs are {archs}); pick a variant that lists {arch}")]
    ArchNotSupported {
        variant: String,
        arch: Arch,
        archs: String,
    },
    #[error("the name '{name}' is already used by rule {first}; rule names must be unique")]
    DuplicateName { name: String, first: usize },
}

/// A config that cannot be used; one sentence each.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("the config is not valid TOML: {0}")]
    Toml(String),
    #[error("unknown top-level key `{0}`: a config holds [[rule]] and [[variant]] tables")]
    UnknownTopKey(String),
    #[error("`rule` must be an array of tables (`[[rule]]`), one per rule")]
    RuleShape,
    /// A `[[variant]]` table, with the validator's own sentence.
    #[error(transparent)]
    Variant(#[from] SpecError),
    /// A declared variant whose name (or canonical name) another variant already answers to.
    #[error("the config's {0}")]
    VariantNameTaken(NameClash),
    #[error("{rule}: {problem}")]
    Rule { rule: String, problem: RuleProblem },
}

/// The rule that chose a variant.
#[derive(Clone, Copy, Debug)]
pub struct Selection<'a> {
    pub variant: &'a VariantDescription,
    /// 0-based.
    pub rule_index: usize,
    pub rule_name: &'a str,
}

/// No rule takes the shape.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no rule matches {arch} with m = {m}, n = {n}, k = {k}; {rules}")]
pub struct SelectError {
    pub arch: Arch,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// `the config has no rules` or `the rules are: rule 1 'a' (sm_90, n 1..=16 -> x), ...`.
    pub rules: String,
}

/// One rule's part in a choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// The first rule that matches; `because` says how (`arch sm_90, tokens 129.. contains n = 512, m any, k any`).
    Chosen { because: String },
    /// Matches, but an earlier rule (0-based `winner`) matched first.
    Shadowed { winner: usize, because: String },
    /// Does not match, for these reasons (`tokens 1..=128 does not contain n = 512`).
    Rejected { reasons: Vec<String> },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleVerdict {
    pub rule_index: usize,
    pub label: String,
    pub summary: String,
    pub verdict: Verdict,
}

/// The chosen variant, if any, and every rule's verdict; `Display` writes it for `mmqgen explain`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Explanation {
    pub arch: Arch,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// 0-based index of the winning rule.
    pub chosen: Option<usize>,
    /// Declared and canonical name of the chosen variant.
    pub variant: Option<(String, String)>,
    pub rules: Vec<RuleVerdict>,
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape = format!(
            "{}, m = {}, n = {}, k = {}",
            self.arch, self.m, self.n, self.k
        );
        match (self.chosen, &self.variant) {
            (Some(i), Some((name, canonical))) => {
                writeln!(f, "{shape}: variant {name} ({canonical})")?;
                writeln!(
                    f,
                    "chosen by {}: the first rule that matches (first match wins)",
                    self.rules[i].label
                )?;
            }
            _ => writeln!(f, "{shape}: no rule matches")?,
        }
        for r in &self.rules {
            match &r.verdict {
                Verdict::Chosen { because } => {
                    writeln!(f, "  {} [{}]: chosen: {because}", r.label, r.summary)?
                }
                Verdict::Shadowed { winner, because } => writeln!(
                    f,
                    "  {} [{}]: matches too ({because}), but {} comes first (first match wins)",
                    r.label, r.summary, self.rules[*winner].label
                )?,
                Verdict::Rejected { reasons } => writeln!(
                    f,
                    "  {} [{}]: no: {}",
                    r.label,
                    r.summary,
                    reasons.join("; ")
                )?,
            }
        }
        Ok(())
    }
}

/// What `config check` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Finding {
    /// The config has no rules at all.
    NoRules,
    /// No rule without an m or K limit covers `from..=to` tokens on `arch`.
    Gap {
        arch: Arch,
        from: u64,
        to: u64,
        /// Some rule limited to certain m or K covers part of the gap.
        partly_limited: bool,
    },
    /// Earlier rules take every shape this rule covers: it never matches.
    DeadRule {
        rule: usize,
        label: String,
        by: Vec<String>,
    },
    /// A rule that admits no valid shape (K is a multiple of 256; m, n and K are at most [`MAX_SHAPE_DIM`]).
    NeverMatches {
        rule: usize,
        label: String,
        /// Why, e.g. `k 100 holds no multiple of 256, ...`.
        why: String,
    },
    /// Informational: so many m- or K-limited earlier rules overlap this rule that the exact dead-rule test
    /// was not run for it; it is counted as live.
    Unchecked { rule: usize, label: String },
    /// Informational: overlaps beyond the first `listed` are not listed.
    OverlapsCut { listed: usize },
    /// Informational: two live rules share shapes; the earlier wins there.
    Overlap {
        rule: usize,
        label: String,
        earlier: String,
        arch: Arch,
        shared: [Bounds; 3],
    },
    /// Informational: one architecture picks variants of different numerics modes, so the bits of a matmul
    /// depend on the shape (DECISIONS.md 3: bits follow the mode).
    ModeMix {
        arch: Arch,
        modes: Vec<(NumericsMode, Vec<String>)>,
    },
}

impl Finding {
    /// Gaps, dead rules and an empty config fail `config check`; the rest is informational.
    pub fn is_problem(&self) -> bool {
        matches!(
            self,
            Finding::NoRules
                | Finding::Gap { .. }
                | Finding::DeadRule { .. }
                | Finding::NeverMatches { .. }
        )
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::NoRules => f.write_str("error: the config has no rules, so no shape can be served"),
            Finding::Gap {
                arch,
                from,
                to,
                partly_limited,
            } => {
                let range = if from == to {
                    format!("n = {from}")
                } else {
                    format!("n = {from}..={to}")
                };
                write!(
                    f,
                    "gap: no {arch} rule covers {range} for every m and k"
                )?;
                if *partly_limited {
                    f.write_str(" (rules limited to some m or k cover part of it, which is not enough)")?;
                }
                Ok(())
            }
            Finding::DeadRule { label, by, .. } => write!(
                f,
                "dead rule: {label} never matches: {} {} every shape it covers (first match wins)",
                join_and(by),
                if by.len() == 1 { "takes" } else { "take" }
            ),
            Finding::NeverMatches { label, why, .. } => {
                write!(f, "dead rule: {label} never matches a valid shape: {why}")
            }
            Finding::Unchecked { label, .. } => write!(
                f,
                "unchecked (informational): {label} overlaps more m- or K-limited earlier rules than the exact \
                 dead-rule test takes; it is counted as live"
            ),
            Finding::OverlapsCut { listed } => write!(
                f,
                "overlaps (informational): only the first {listed} overlaps are listed"
            ),
            Finding::Overlap {
                label,
                earlier,
                arch,
                shared,
                ..
            } => write!(
                f,
                "overlap (informational): {label} and {earlier} both cover {arch}, n {}, m {}, k {}; {earlier} wins there",
                shared[0], shared[1], shared[2]
            ),
            Finding::ModeMix { arch, modes } => {
                let parts: Vec<String> = modes
                    .iter()
                    .map(|(mode, rules)| format!("{mode} by {}", join_and(rules)))
                    .collect();
                write!(
                    f,
                    "numerics (informational): {arch} picks variants of different numerics modes ({}), so the same \
                     inputs give different bits at different shapes",
                    parts.join("; ")
                )
            }
        }
    }
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

fn arch_list() -> String {
    Arch::ALL.map(Arch::keyword).join(", ")
}

/// `sm_90` -> [`Arch::Sm90`]; `None` for an architecture mmqgen does not target.
pub fn arch_from_str(text: &str) -> Option<Arch> {
    Arch::ALL.into_iter().find(|a| a.keyword() == text)
}

fn type_name(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a datetime",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

const RANGE_FORMS: &str =
    "must be an integer, an inclusive [min, max] or a table { min = .., max = .. }";

fn parse_bound(key: &str, value: &toml::Value) -> Result<u64, RuleProblem> {
    let bad = |reason: String| RuleProblem::BadRange {
        key: key.to_string(),
        reason,
    };
    match value {
        toml::Value::Integer(i) if *i >= 1 => Ok(*i as u64),
        toml::Value::Integer(i) => Err(bad(format!("bounds must be at least 1; got {i}"))),
        other => Err(bad(format!(
            "bounds must be integers; got {}",
            type_name(other)
        ))),
    }
}

fn parse_bounds(key: &str, value: &toml::Value) -> Result<Bounds, RuleProblem> {
    let bad = |reason: String| RuleProblem::BadRange {
        key: key.to_string(),
        reason,
    };
    let (min, max) = match value {
        toml::Value::Integer(_) => {
            let v = parse_bound(key, value)?;
            (v, Some(v))
        }
        toml::Value::Array(items) => match items.as_slice() {
            [lo, hi] => (parse_bound(key, lo)?, Some(parse_bound(key, hi)?)),
            _ => {
                return Err(bad(format!(
                    "{RANGE_FORMS}; got an array of {} items (use {{ min = .. }} for an open end)",
                    items.len()
                )))
            }
        },
        toml::Value::Table(table) => {
            if let Some(unknown) = table.keys().find(|k| *k != "min" && *k != "max") {
                return Err(bad(format!(
                    "has an unknown key `{}`; a range table takes min and max",
                    shown(unknown)
                )));
            }
            if table.is_empty() {
                return Err(bad(
                    "is an empty table; give min, max or both (or leave m and k out for any value)"
                        .to_string(),
                ));
            }
            let min = table
                .get("min")
                .map(|v| parse_bound(key, v))
                .transpose()?
                .unwrap_or(1);
            let max = table.get("max").map(|v| parse_bound(key, v)).transpose()?;
            (min, max)
        }
        other => return Err(bad(format!("{RANGE_FORMS}; got {}", type_name(other)))),
    };
    if let Some(max) = max {
        if min > max {
            return Err(bad(format!(
                "is empty: its lower bound {min} is above its upper bound {max}"
            )));
        }
    }
    Ok(Bounds { min, max })
}

fn string_key<'t>(
    table: &'t toml::Table,
    key: &'static str,
    example: &'static str,
) -> Result<Option<&'t str>, RuleProblem> {
    match table.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(RuleProblem::NotAString {
            key,
            example,
            got: type_name(other).to_string(),
        }),
    }
}

fn parse_rule(
    index: usize,
    value: &toml::Value,
    known: &[VariantDescription],
    names: &VariantNames,
) -> Result<Rule, RuleProblem> {
    let table = value.as_table().ok_or(RuleProblem::NotATable)?;
    if let Some(key) = table.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
        return Err(RuleProblem::UnknownKey { key: shown(key) });
    }
    let arch_text = string_key(table, "arch", "sm_90")?.ok_or(RuleProblem::MissingKey {
        key: "arch",
        hint: "every rule names an architecture, such as arch = \"sm_90\"",
    })?;
    let arch = arch_from_str(arch_text).ok_or_else(|| RuleProblem::UnknownArch {
        arch: shown(arch_text),
    })?;
    let tokens = table
        .get("tokens")
        .ok_or(RuleProblem::MissingKey {
            key: "tokens",
            hint: "every rule gives its token counts n, such as tokens = [1, 16] or tokens = { min = 129 }",
        })
        .and_then(|v| parse_bounds("tokens", v))?;
    let m = table
        .get("m")
        .map(|v| parse_bounds("m", v))
        .transpose()?
        .unwrap_or(Bounds::ANY);
    let k = table
        .get("k")
        .map(|v| parse_bounds("k", v))
        .transpose()?
        .unwrap_or(Bounds::ANY);
    let variant_name =
        string_key(table, "variant", "fold_per32")?.ok_or(RuleProblem::MissingKey {
            key: "variant",
            hint: "every rule names the variant it selects, such as variant = \"fold_per32\"",
        })?;
    let variant =
        names
            .get(variant_name)
            .map(|i| &known[i])
            .ok_or_else(|| RuleProblem::UnknownVariant {
                name: shown(variant_name),
                known: listed(known.iter().map(|v| v.name.to_string()), known.len()),
            })?;
    if !variant.archs.contains(arch) {
        return Err(RuleProblem::ArchNotSupported {
            variant: shown(variant_name),
            arch,
            archs: variant.archs.to_string(),
        });
    }
    let written = string_key(table, "name", "decode-sm90")?;
    Ok(Rule {
        index,
        name: written.map_or_else(|| format!("rule {}", index + 1), str::to_string),
        named: written.is_some(),
        arch,
        tokens,
        m,
        k,
        variant_name: variant_name.to_string(),
        variant: variant.clone(),
    })
}

/// Names in a list shown in a sentence: the first [`NAMES_LISTED`], then how many more.
const NAMES_LISTED: usize = 40;

fn listed(names: impl Iterator<Item = String>, count: usize) -> Vec<String> {
    let mut out: Vec<String> = names.take(NAMES_LISTED).map(|n| shown(&n)).collect();
    if count > NAMES_LISTED {
        out.push(format!("and {} more", count - NAMES_LISTED));
    }
    out
}

/// A variant whose declared or canonical name another variant already answers to; lookups by that name would
/// return the other one, so it is refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NameClash {
    /// Its declared name is another variant's declared or canonical name.
    #[error("variant '{name}' is already taken (by {by}); pick another name")]
    Name { name: String, by: String },
    /// It renders the same kernel as another variant, whose canonical name is already taken.
    #[error(
        "variant '{name}' is the same kernel as variant '{other}' (canonical name {canonical}), which is already \
         declared; declare each kernel once"
    )]
    Canonical {
        name: String,
        other: String,
        canonical: String,
    },
}

/// Every declared and canonical name of a list of variants, for lookups in constant time and for refusing a
/// variant whose names are taken (DECISIONS.md 7: names are unique across declared and canonical names).
#[derive(Clone, Debug, Default)]
pub struct VariantNames {
    /// name -> (index, whether it is the declared name).
    map: HashMap<String, (usize, bool)>,
}

impl VariantNames {
    /// The names of `list`, which is trusted as given (the catalogue); later variants are added with
    /// [`VariantNames::add`]. On a name shared inside `list`, the first variant keeps it, as `find` does.
    pub fn new(list: &[VariantDescription]) -> VariantNames {
        let mut names = VariantNames::default();
        for (i, v) in list.iter().enumerate() {
            names.map.entry(v.name.to_string()).or_insert((i, true));
        }
        for (i, v) in list.iter().enumerate() {
            names.map.entry(canonical_name(v)).or_insert((i, false));
        }
        names
    }

    /// Adds `v` as variant `index` of `list` (its index once pushed), or says which of its names is taken.
    pub fn add(
        &mut self,
        v: &VariantDescription,
        index: usize,
        list: &[VariantDescription],
    ) -> Result<(), NameClash> {
        let canonical = canonical_name(v);
        if let Some(&(owner, declared)) = self.map.get(v.name.as_ref()) {
            let other = &list[owner];
            return Err(NameClash::Name {
                name: shown(&v.name),
                by: if declared {
                    canonical_name(other)
                } else {
                    format!("the canonical name of variant '{}'", shown(&other.name))
                },
            });
        }
        if let Some(&(owner, _)) = self.map.get(&canonical) {
            return Err(NameClash::Canonical {
                name: shown(&v.name),
                other: shown(&list[owner].name),
                canonical,
            });
        }
        self.map.insert(v.name.to_string(), (index, true));
        self.map.entry(canonical).or_insert((index, false));
        Ok(())
    }

    /// The index of the variant answering to `name` (declared or canonical).
    pub fn get(&self, name: &str) -> Option<usize> {
        self.map.get(name).map(|&(i, _)| i)
    }
}

/// A parsed, validated selection config.
#[derive(Clone, Debug)]
pub struct Config {
    /// In order; the first that matches wins.
    pub rules: Vec<Rule>,
    /// The `[[variant]]` tables the config declares itself.
    pub variants: Vec<VariantDescription>,
}

impl Config {
    /// Parses a config; rule variants are looked up in `catalogue` (the catalogue plus `--variants` extras)
    /// and in the config's own `[[variant]]` tables.
    pub fn parse(text: &str, catalogue: &[VariantDescription]) -> Result<Config, ConfigError> {
        let doc = parse_toml(text).map_err(ConfigError::Toml)?;
        if let Some(key) = doc.keys().find(|k| *k != "rule" && *k != "variant") {
            return Err(ConfigError::UnknownTopKey(shown(key)));
        }
        let declared = variants_from_toml(&doc)?;
        let mut names = VariantNames::new(catalogue);
        let mut known = catalogue.to_vec();
        for v in &declared {
            names
                .add(v, known.len(), &known)
                .map_err(ConfigError::VariantNameTaken)?;
            known.push(v.clone());
        }
        let raw_rules = match doc.get("rule") {
            None => &[][..],
            Some(toml::Value::Array(items)) => items.as_slice(),
            Some(_) => return Err(ConfigError::RuleShape),
        };
        let mut rules: Vec<Rule> = Vec::with_capacity(raw_rules.len());
        let mut rule_names: HashMap<String, usize> = HashMap::new();
        for (index, raw) in raw_rules.iter().enumerate() {
            let label = || match raw.get("name").and_then(|n| n.as_str()) {
                Some(name) => format!("rule {} '{}'", index + 1, shown(name)),
                None => format!("rule {}", index + 1),
            };
            let rule =
                parse_rule(index, raw, &known, &names).map_err(|problem| ConfigError::Rule {
                    rule: label(),
                    problem,
                })?;
            if rule.named {
                if let Some(&first) = rule_names.get(rule.name.as_str()) {
                    return Err(ConfigError::Rule {
                        rule: label(),
                        problem: RuleProblem::DuplicateName {
                            name: shown(&rule.name),
                            first: first + 1,
                        },
                    });
                }
                rule_names.insert(rule.name.clone(), index);
            }
            rules.push(rule);
        }
        Ok(Config {
            rules,
            variants: declared,
        })
    }

    /// The embedded [`DEFAULT_CONFIG`], against `catalogue`.
    pub fn embedded(catalogue: &[VariantDescription]) -> Result<Config, ConfigError> {
        Config::parse(DEFAULT_CONFIG, catalogue)
    }

    /// The variants of every rule that can take some token count at this architecture, m and K: what a
    /// registration must build planes for.
    pub fn variants_for(&self, arch: Arch, m: u64, k: u64) -> Vec<&VariantDescription> {
        self.rules
            .iter()
            .filter(|r| r.arch == arch && r.m.contains(m) && r.k.contains(k))
            .map(|r| &r.variant)
            .collect()
    }

    /// The first rule that takes the shape.
    pub fn select(&self, arch: Arch, m: u64, n: u64, k: u64) -> Result<Selection<'_>, SelectError> {
        self.rules
            .iter()
            .find(|r| r.matches(arch, m, n, k))
            .map(|r| Selection {
                variant: &r.variant,
                rule_index: r.index,
                rule_name: &r.name,
            })
            .ok_or_else(|| SelectError {
                arch,
                m,
                n,
                k,
                rules: if self.rules.is_empty() {
                    "the config has no rules".to_string()
                } else {
                    let list: Vec<String> = self
                        .rules
                        .iter()
                        .map(|r| format!("{} ({})", r.label(), r.summary()))
                        .collect();
                    format!("the rules are: {}", list.join(", "))
                },
            })
    }

    /// Every rule's verdict on the shape, and the winner.
    pub fn explain(&self, arch: Arch, m: u64, n: u64, k: u64) -> Explanation {
        let mut chosen = None;
        let rules = self
            .rules
            .iter()
            .map(|r| {
                let reasons = r.mismatches(arch, m, n, k);
                let verdict = match chosen {
                    _ if !reasons.is_empty() => Verdict::Rejected { reasons },
                    Some(winner) => Verdict::Shadowed {
                        winner,
                        because: r.agreement(m, n, k),
                    },
                    None => {
                        chosen = Some(r.index);
                        Verdict::Chosen {
                            because: r.agreement(m, n, k),
                        }
                    }
                };
                RuleVerdict {
                    rule_index: r.index,
                    label: r.label(),
                    summary: r.summary(),
                    verdict,
                }
            })
            .collect();
        Explanation {
            arch,
            m,
            n,
            k,
            chosen,
            variant: chosen.map(|i| {
                let v = &self.rules[i].variant;
                (v.name.to_string(), canonical_name(v))
            }),
            rules,
        }
    }

    /// Gaps (for every architecture mmqgen targets, not only those the config names), rules that can never
    /// match a valid shape, dead rules, overlaps and numerics-mode mixes, in that order.
    ///
    /// The work grows about linearly with the rule count: covered token ranges are kept merged, earlier rules
    /// are found through an index by token range, and the exact test for a rule that only a mix of m- or
    /// K-limited rules could cover is bounded ([`Finding::Unchecked`] says when a rule exceeded it).
    pub fn check(&self) -> Vec<Finding> {
        if self.rules.is_empty() {
            return vec![Finding::NoRules];
        }
        let boxes: Vec<Result<Box3, String>> = self.rules.iter().map(Box3::of).collect();
        let mut findings = Vec::new();
        for arch in Arch::ALL {
            findings.extend(self.gaps(arch, &boxes));
        }
        for (rule, b) in self.rules.iter().zip(&boxes) {
            if let Err(why) = b {
                findings.push(Finding::NeverMatches {
                    rule: rule.index,
                    label: rule.label(),
                    why: why.clone(),
                });
            }
        }
        let mut per_arch: HashMap<Arch, ArchRules> = HashMap::new();
        let mut cells_left = CELL_BUDGET;
        let mut live = vec![false; self.rules.len()];
        let mut overlaps = Vec::new();
        let mut overlaps_cut = false;
        for (rule, b) in self.rules.iter().zip(&boxes) {
            let Ok(b) = b else { continue };
            let arch = per_arch.entry(rule.arch).or_default();
            match arch.verdict(b, &mut cells_left) {
                Coverage::Covered => findings.push(Finding::DeadRule {
                    rule: rule.index,
                    label: rule.label(),
                    by: arch.some_earlier(b, |i| self.rules[i].label()),
                }),
                Coverage::Unknown => {
                    findings.push(Finding::Unchecked {
                        rule: rule.index,
                        label: rule.label(),
                    });
                    live[rule.index] = true;
                }
                Coverage::Open => live[rule.index] = true,
            }
            if live[rule.index] && !overlaps_cut {
                let (mut earlier, complete) = arch.earlier_overlapping(b, OVERLAP_WALK);
                earlier.retain(|&i| live[i]);
                earlier.sort_unstable();
                for i in earlier {
                    if overlaps.len() == MAX_OVERLAPS {
                        overlaps_cut = true;
                        break;
                    }
                    let e = &self.rules[i];
                    if let Some(shared) = intersect(&rule.dims(), &e.dims()) {
                        overlaps.push(Finding::Overlap {
                            rule: rule.index,
                            label: rule.label(),
                            earlier: e.label(),
                            arch: rule.arch,
                            shared,
                        });
                    }
                }
                overlaps_cut |= !complete;
            }
            arch.insert(rule.index, b);
        }
        findings.extend(overlaps);
        if overlaps_cut {
            findings.push(Finding::OverlapsCut {
                listed: MAX_OVERLAPS,
            });
        }
        for arch in Arch::ALL {
            let mut modes: Vec<(NumericsMode, Vec<String>, usize)> = Vec::new();
            for rule in self
                .rules
                .iter()
                .filter(|r| r.arch == arch && live[r.index])
            {
                match modes
                    .iter_mut()
                    .find(|(mode, _, _)| *mode == rule.variant.mode)
                {
                    Some((_, labels, count)) => {
                        *count += 1;
                        if labels.len() < NAMES_LISTED {
                            labels.push(rule.label());
                        }
                    }
                    None => modes.push((rule.variant.mode, vec![rule.label()], 1)),
                }
            }
            if modes.len() > 1 {
                let modes = modes
                    .into_iter()
                    .map(|(mode, mut labels, count)| {
                        if count > labels.len() {
                            labels.push(format!("{} more rules", count - labels.len()));
                        }
                        (mode, labels)
                    })
                    .collect();
                findings.push(Finding::ModeMix { arch, modes });
            }
        }
        findings
    }

    /// Token ranges in `1..=CHECK_MAX_TOKENS` that no rule of `arch` covering every valid m and K serves.
    fn gaps(&self, arch: Arch, boxes: &[Result<Box3, String>]) -> Vec<Finding> {
        let of_arch = || {
            self.rules
                .iter()
                .zip(boxes)
                .filter(move |(r, _)| r.arch == arch)
                .filter_map(|(_, b)| b.as_ref().ok())
        };
        let mut covered: Vec<(u64, u64)> = of_arch()
            .filter(|b| b.is_full())
            .map(|b| (b.lo[0], b.hi[0]))
            .collect();
        covered.sort_unstable();
        // Every rule's token range, sorted, with the running maximum of their ends: does any rule touch a gap?
        let mut any: Vec<(u64, u64)> = of_arch().map(|b| (b.lo[0], b.hi[0])).collect();
        any.sort_unstable();
        let mut reach = Vec::with_capacity(any.len());
        let mut max_hi = 0;
        for &(_, hi) in &any {
            max_hi = max_hi.max(hi);
            reach.push(max_hi);
        }
        let touched = |from: u64, to: u64| {
            let p = any.partition_point(|&(lo, _)| lo <= to);
            p > 0 && reach[p - 1] >= from
        };
        let mut gaps = Vec::new();
        let mut next = 1u64; // the smallest n not yet known to be covered
        for (lo, hi) in covered {
            if next > CHECK_MAX_TOKENS {
                break;
            }
            if lo > next {
                gaps.push((next, (lo - 1).min(CHECK_MAX_TOKENS)));
            }
            next = next.max(hi.saturating_add(1));
        }
        if next <= CHECK_MAX_TOKENS {
            gaps.push((next, CHECK_MAX_TOKENS));
        }
        gaps.into_iter()
            .filter(|(from, _)| *from <= CHECK_MAX_TOKENS)
            .map(|(from, to)| Finding::Gap {
                arch,
                from,
                to,
                partly_limited: touched(from, to),
            })
            .collect()
    }
}

/// The largest m, n or K that [`crate::gpu::launch::check_shape`] accepts on its own (it also bounds products);
/// `config check` treats a rule that admits no shape within these as one that can never match.
pub const MAX_SHAPE_DIM: u64 = i32::MAX as u64;
/// K comes in super-blocks of 256.
const SUPER_BLOCK: u64 = 256;
/// How many overlaps `config check` lists.
const MAX_OVERLAPS: usize = 200;
/// How many earlier rules a search for overlaps visits per rule.
const OVERLAP_WALK: usize = 4096;
/// How many earlier rules the exact dead-rule test takes for one rule.
const EXACT_RULES: usize = 64;
/// Cells the exact dead-rule tests may visit over the whole check.
const CELL_BUDGET: u64 = 50_000_000;

/// A rule's shapes within what [`crate::gpu::launch::check_shape`] accepts: inclusive `[lo, hi]` of n, m and K in
/// super-blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Box3 {
    lo: [u64; 3],
    hi: [u64; 3],
}

impl Box3 {
    const DOMAIN: Box3 = Box3 {
        lo: [1, 1, 1],
        hi: [MAX_SHAPE_DIM, MAX_SHAPE_DIM, MAX_SHAPE_DIM / SUPER_BLOCK],
    };

    /// The rule's box, or why it holds no valid shape.
    fn of(rule: &Rule) -> Result<Box3, String> {
        let mut b = Box3::DOMAIN;
        for (d, (key, bounds)) in [("tokens", rule.tokens), ("m", rule.m), ("k", rule.k)]
            .into_iter()
            .enumerate()
        {
            let (mut lo, mut hi) = (bounds.min, bounds.hi());
            if d == 2 {
                if lo.div_ceil(SUPER_BLOCK) > hi / SUPER_BLOCK {
                    return Err(format!(
                        "k {bounds} holds no multiple of 256, and K is always one (q6_K super-blocks)"
                    ));
                }
                (lo, hi) = (lo.div_ceil(SUPER_BLOCK), hi / SUPER_BLOCK);
            }
            if lo > b.hi[d] {
                return Err(format!(
                    "{key} {bounds} lies above {MAX_SHAPE_DIM}, the largest {} a matmul accepts",
                    if d == 0 {
                        "n"
                    } else if d == 1 {
                        "m"
                    } else {
                        "K"
                    }
                ));
            }
            b.lo[d] = lo.max(b.lo[d]);
            b.hi[d] = hi.min(b.hi[d]);
        }
        Ok(b)
    }

    /// Whether m and K are unlimited (within valid shapes).
    fn is_full(&self) -> bool {
        (1..3).all(|d| self.lo[d] == Box3::DOMAIN.lo[d] && self.hi[d] == Box3::DOMAIN.hi[d])
    }

    fn overlaps(&self, other: &Box3) -> bool {
        (0..3).all(|d| self.lo[d] <= other.hi[d] && other.lo[d] <= self.hi[d])
    }
}

/// How earlier rules cover a rule's box.
enum Coverage {
    Covered,
    Open,
    /// The exact test would take more than its bounds.
    Unknown,
}

/// The rules of one architecture seen so far, indexed for the dead-rule and overlap tests.
#[derive(Default)]
struct ArchRules {
    /// Merged, disjoint token ranges of the rules without m or K limits: `lo -> hi`.
    full: BTreeMap<u64, u64>,
    /// Every rule by `(token lo, index)`, with its box.
    all: BTreeMap<(u64, usize), Box3>,
    /// The longest token range in `all`, to stop searches early.
    all_span: u64,
    /// The rules with m or K limits, the same way.
    partial: BTreeMap<(u64, usize), Box3>,
    partial_span: u64,
}

impl ArchRules {
    fn insert(&mut self, index: usize, b: &Box3) {
        let span = b.hi[0] - b.lo[0];
        self.all.insert((b.lo[0], index), *b);
        self.all_span = self.all_span.max(span);
        if !b.is_full() {
            self.partial.insert((b.lo[0], index), *b);
            self.partial_span = self.partial_span.max(span);
            return;
        }
        // Merge [lo, hi] with the ranges it touches.
        let (mut lo, mut hi) = (b.lo[0], b.hi[0]);
        if let Some((&l, &h)) = self.full.range(..=lo).next_back() {
            if h.saturating_add(1) >= lo {
                lo = l;
                hi = hi.max(h);
            }
        }
        let touching: Vec<u64> = self
            .full
            .range(lo..=hi.saturating_add(1))
            .map(|(&l, _)| l)
            .collect();
        for l in touching {
            if let Some(h) = self.full.remove(&l) {
                hi = hi.max(h);
            }
        }
        self.full.insert(lo, hi);
    }

    /// Whether the full rules' merged ranges hold every n of `lo..=hi`.
    fn full_covers(&self, lo: u64, hi: u64) -> bool {
        self.full
            .range(..=lo)
            .next_back()
            .is_some_and(|(_, &h)| h >= hi)
    }

    /// Earlier rules in `map` whose boxes meet `b`, visiting at most `walk` entries; and whether the search
    /// was complete.
    fn search(
        map: &BTreeMap<(u64, usize), Box3>,
        span: u64,
        b: &Box3,
        walk: usize,
    ) -> (Vec<(usize, Box3)>, bool) {
        let mut found = Vec::new();
        for (steps, (&(lo, i), other)) in map.range(..=(b.hi[0], usize::MAX)).rev().enumerate() {
            if lo.saturating_add(span) < b.lo[0] {
                return (found, true);
            }
            if steps == walk {
                return (found, false);
            }
            if other.overlaps(b) {
                found.push((i, *other));
            }
        }
        (found, true)
    }

    fn earlier_overlapping(&self, b: &Box3, walk: usize) -> (Vec<usize>, bool) {
        let (found, complete) = Self::search(&self.all, self.all_span, b, walk);
        (found.into_iter().map(|(i, _)| i).collect(), complete)
    }

    /// A few earlier rules that take part of `b`, for a sentence.
    fn some_earlier(&self, b: &Box3, label: impl Fn(usize) -> String) -> Vec<String> {
        let (mut found, complete) = self.earlier_overlapping(b, NAMES_LISTED);
        found.sort_unstable();
        let mut by: Vec<String> = found.into_iter().map(label).collect();
        if !complete || by.is_empty() {
            by.push("other earlier rules".to_string());
        }
        by
    }

    /// Whether earlier rules take every shape of `b`. The full rules decide most cases through their merged
    /// ranges; otherwise the box is cut into cells at every overlapping earlier rule's edges (each cell is then
    /// inside or outside each earlier box as a whole, so testing one corner per cell is exact).
    fn verdict(&self, b: &Box3, cells_left: &mut u64) -> Coverage {
        if self.full_covers(b.lo[0], b.hi[0]) {
            return Coverage::Covered;
        }
        let (partial, complete) = Self::search(&self.partial, self.partial_span, b, EXACT_RULES);
        if partial.is_empty() && complete {
            return Coverage::Open;
        }
        if !complete {
            return Coverage::Unknown;
        }
        let mut earlier: Vec<Box3> = partial.into_iter().map(|(_, e)| e).collect();
        for (&lo, &hi) in self.full.range(..=b.hi[0]).rev() {
            if hi < b.lo[0] {
                break;
            }
            if earlier.len() > 2 * EXACT_RULES {
                return Coverage::Unknown;
            }
            earlier.push(Box3 {
                lo: [lo, Box3::DOMAIN.lo[1], Box3::DOMAIN.lo[2]],
                hi: [hi, Box3::DOMAIN.hi[1], Box3::DOMAIN.hi[2]],
            });
        }
        let edges: Vec<Vec<u128>> = (0..3)
            .map(|d| {
                let (lo, end) = (b.lo[d] as u128, b.hi[d] as u128 + 1);
                let mut cuts = vec![lo, end];
                for e in &earlier {
                    for cut in [e.lo[d] as u128, e.hi[d] as u128 + 1] {
                        if cut > lo && cut < end {
                            cuts.push(cut);
                        }
                    }
                }
                cuts.sort_unstable();
                cuts.dedup();
                cuts
            })
            .collect();
        let cells: u64 = edges.iter().map(|e| e.len() as u64 - 1).product();
        if cells > *cells_left {
            return Coverage::Unknown;
        }
        *cells_left -= cells;
        let starts: Vec<&[u128]> = edges.iter().map(|e| &e[..e.len() - 1]).collect();
        for &n in starts[0] {
            for &m in starts[1] {
                for &k in starts[2] {
                    let inside = |e: &Box3| {
                        [n, m, k]
                            .iter()
                            .enumerate()
                            .all(|(d, &v)| v >= e.lo[d] as u128 && v <= e.hi[d] as u128)
                    };
                    if !earlier.iter().any(inside) {
                        return Coverage::Open;
                    }
                }
            }
        }
        Coverage::Covered
    }
}

fn intersect(a: &[Bounds; 3], b: &[Bounds; 3]) -> Option<[Bounds; 3]> {
    Some([
        a[0].intersect(&b[0])?,
        a[1].intersect(&b[1])?,
        a[2].intersect(&b[2])?,
    ])
}

/// The embedded default keeps q6_K's promise (DECISIONS.md 12 and 13): every variant it can pick reads at most
/// 1.10x the GGUF bytes on the device and quantizes activations per 32.
#[cfg(test)]
mod default_promise {
    use super::*;
    use crate::gpu::weights::{device_footprint, gguf_bytes, Layout};

    #[test]
    fn the_default_selects_only_compact_accurate_variants() {
        let config =
            Config::embedded(&crate::catalogue::all()).expect("the embedded config parses");
        assert!(!config.rules.is_empty());
        for rule in &config.rules {
            let v = &rule.variant;
            for (m, k) in [(4096, 4096), (14336, 4096), (4096, 14336), (100, 256)] {
                for layout in [Layout::Raw, Layout::Padded] {
                    let device = device_footprint([v], m, k, layout);
                    assert!(
                        device as f64 <= 1.10 * gguf_bytes(m, k) as f64,
                        "rule {} picks {}: {device} bytes on the device for {m} x {k}, over 1.10x GGUF",
                        rule.name,
                        v.name
                    );
                }
            }
            assert_eq!(
                v.mode.activation_group(),
                32,
                "rule {} picks {} with activation groups of {}",
                rule.name,
                v.name,
                v.mode.activation_group()
            );
        }
    }

    #[test]
    fn an_expanded_variant_costs_what_it_reads() {
        let spread = crate::catalogue::PREFOLDED_SPREAD;
        let (m, k) = (4096, 4096);
        let device = device_footprint([&spread], m, k, Layout::Padded);
        // Padded blocks (224 per 256 weights) + the folded planes (2 bytes per weight) + the int scale plane.
        assert!(device > 2 * m * k);
        assert!(device as f64 > 3.0 * gguf_bytes(m, k) as f64);
    }
}
