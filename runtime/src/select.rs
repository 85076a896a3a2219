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

use crate::catalogue::find;
use crate::codegen::spec_file::{variants_from_toml, SpecError};
use crate::codegen::{canonical_name, Arch, NumericsMode, VariantDescription};
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
            format!("rule {} '{}'", self.index + 1, self.name)
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
    #[error("the config's variant '{name}' is already taken (by {canonical}); pick another name")]
    VariantNameTaken { name: String, canonical: String },
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
            Finding::NoRules | Finding::Gap { .. } | Finding::DeadRule { .. }
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
                    "has an unknown key `{unknown}`; a range table takes min and max"
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
) -> Result<Rule, RuleProblem> {
    let table = value.as_table().ok_or(RuleProblem::NotATable)?;
    if let Some(key) = table.keys().find(|k| !RULE_KEYS.contains(&k.as_str())) {
        return Err(RuleProblem::UnknownKey { key: key.clone() });
    }
    let arch_text = string_key(table, "arch", "sm_90")?.ok_or(RuleProblem::MissingKey {
        key: "arch",
        hint: "every rule names an architecture, such as arch = \"sm_90\"",
    })?;
    let arch = arch_from_str(arch_text).ok_or_else(|| RuleProblem::UnknownArch {
        arch: arch_text.to_string(),
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
    let variant = find(known, variant_name).ok_or_else(|| RuleProblem::UnknownVariant {
        name: variant_name.to_string(),
        known: known.iter().map(|v| v.name.to_string()).collect(),
    })?;
    if !variant.archs.contains(arch) {
        return Err(RuleProblem::ArchNotSupported {
            variant: variant_name.to_string(),
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
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| {
            let line = e
                .span()
                .map(|span| format!(" (line {})", text[..span.start].matches('\n').count() + 1))
                .unwrap_or_default();
            ConfigError::Toml(format!("{}{line}", e.message().trim()))
        })?;
        if let Some(key) = doc.keys().find(|k| *k != "rule" && *k != "variant") {
            return Err(ConfigError::UnknownTopKey(key.clone()));
        }
        let declared = variants_from_toml(&doc)?;
        let mut known = catalogue.to_vec();
        for v in &declared {
            if let Some(clash) = known.iter().find(|k| k.name == v.name) {
                return Err(ConfigError::VariantNameTaken {
                    name: v.name.to_string(),
                    canonical: canonical_name(clash),
                });
            }
            known.push(v.clone());
        }
        let raw_rules = match doc.get("rule") {
            None => &[][..],
            Some(toml::Value::Array(items)) => items.as_slice(),
            Some(_) => return Err(ConfigError::RuleShape),
        };
        let mut rules: Vec<Rule> = Vec::with_capacity(raw_rules.len());
        for (index, raw) in raw_rules.iter().enumerate() {
            let label = || match raw.get("name").and_then(|n| n.as_str()) {
                Some(name) => format!("rule {} '{name}'", index + 1),
                None => format!("rule {}", index + 1),
            };
            let rule = parse_rule(index, raw, &known).map_err(|problem| ConfigError::Rule {
                rule: label(),
                problem,
            })?;
            if let Some(first) = rules
                .iter()
                .find(|r| r.named && rule.named && r.name == rule.name)
            {
                return Err(ConfigError::Rule {
                    rule: label(),
                    problem: RuleProblem::DuplicateName {
                        name: rule.name.clone(),
                        first: first.index + 1,
                    },
                });
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

    /// Gaps, dead rules, overlaps and numerics-mode mixes, per architecture, in that order.
    pub fn check(&self) -> Vec<Finding> {
        if self.rules.is_empty() {
            return vec![Finding::NoRules];
        }
        let mut archs: Vec<Arch> = self.rules.iter().map(|r| r.arch).collect();
        archs.sort();
        archs.dedup();
        let mut findings = Vec::new();
        for &arch in &archs {
            findings.extend(self.gaps(arch));
        }
        let dead: Vec<bool> = self.rules.iter().map(|r| self.is_dead(r)).collect();
        for rule in &self.rules {
            if dead[rule.index] {
                findings.push(Finding::DeadRule {
                    rule: rule.index,
                    label: rule.label(),
                    by: self.earlier_overlapping(rule).map(Rule::label).collect(),
                });
            }
        }
        for rule in self.rules.iter().filter(|r| !dead[r.index]) {
            for earlier in self.earlier_overlapping(rule).filter(|e| !dead[e.index]) {
                if let Some(shared) = intersect(&rule.dims(), &earlier.dims()) {
                    findings.push(Finding::Overlap {
                        rule: rule.index,
                        label: rule.label(),
                        earlier: earlier.label(),
                        arch: rule.arch,
                        shared,
                    });
                }
            }
        }
        for &arch in &archs {
            let mut modes: Vec<(NumericsMode, Vec<String>)> = Vec::new();
            for rule in self
                .rules
                .iter()
                .filter(|r| r.arch == arch && !dead[r.index])
            {
                match modes
                    .iter_mut()
                    .find(|(mode, _)| *mode == rule.variant.mode)
                {
                    Some((_, labels)) => labels.push(rule.label()),
                    None => modes.push((rule.variant.mode, vec![rule.label()])),
                }
            }
            if modes.len() > 1 {
                findings.push(Finding::ModeMix { arch, modes });
            }
        }
        findings
    }

    /// Token ranges in `1..=CHECK_MAX_TOKENS` that no rule of `arch` without an m or K limit covers.
    fn gaps(&self, arch: Arch) -> Vec<Finding> {
        let mut covered: Vec<(u64, u64)> = self
            .rules
            .iter()
            .filter(|r| r.arch == arch && r.m.is_any() && r.k.is_any())
            .map(|r| (r.tokens.min, r.tokens.hi()))
            .collect();
        covered.sort();
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
            .map(|(from, to)| {
                let gap = Bounds {
                    min: from,
                    max: Some(to),
                };
                Finding::Gap {
                    arch,
                    from,
                    to,
                    partly_limited: self
                        .rules
                        .iter()
                        .any(|r| r.arch == arch && r.tokens.intersect(&gap).is_some()),
                }
            })
            .collect()
    }

    fn earlier_overlapping<'s>(&'s self, rule: &'s Rule) -> impl Iterator<Item = &'s Rule> + 's {
        self.rules[..rule.index]
            .iter()
            .filter(move |e| e.arch == rule.arch && intersect(&rule.dims(), &e.dims()).is_some())
    }

    /// Whether the union of earlier rules of the same arch covers the rule's whole box. The box is cut
    /// into cells at every earlier rule's edges; each cell is inside or outside each earlier box as a whole,
    /// so testing one corner per cell is exact.
    fn is_dead(&self, rule: &Rule) -> bool {
        let earlier: Vec<[Bounds; 3]> = self.earlier_overlapping(rule).map(Rule::dims).collect();
        if earlier.is_empty() {
            return false;
        }
        let own = rule.dims();
        // Half-open cell edges per dimension, in u128 so that an open end (u64::MAX) + 1 fits.
        let edges: Vec<Vec<u128>> = (0..3)
            .map(|d| {
                let (lo, end) = (own[d].min as u128, own[d].hi() as u128 + 1);
                let mut cuts = vec![lo, end];
                for e in &earlier {
                    for cut in [e[d].min as u128, e[d].hi() as u128 + 1] {
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
        // Each cell is named by its lower corner: every cut but the last.
        let starts: Vec<&[u128]> = edges.iter().map(|e| &e[..e.len() - 1]).collect();
        for &n in starts[0] {
            for &m in starts[1] {
                for &k in starts[2] {
                    let inside = |b: &[Bounds; 3]| {
                        [n, m, k]
                            .iter()
                            .zip(b)
                            .all(|(&v, r)| v >= r.min as u128 && v <= r.hi() as u128)
                    };
                    if !earlier.iter().any(inside) {
                        return false;
                    }
                }
            }
        }
        true
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
    use crate::weights::{device_footprint, gguf_bytes, Layout};

    #[test]
    fn the_default_selects_only_compact_accurate_variants() {
        let config = Config::embedded(&crate::catalogue::all()).expect("the embedded config parses");
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
