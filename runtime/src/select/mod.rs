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
//! layout = "padded"       # optional: the weight layout ("raw" or "padded"); omitted = both
//! tokens = { min = 129 }  # n; also [129, 4096] (inclusive) or 512 (exactly)
//! m = 4096                # optional, same forms; omitted = any m
//! k = [4096, 14336]       # optional, same forms; omitted = any K
//! k_multiple = 2048       # optional: only K that are multiples of it (raw rows the copy engine reaches)
//! variant = "fold_per32"  # declared or canonical name
//! ```
//!
//! One module per job: `rule` reads a rule, `names` keeps variant names unique, `explain` says why a shape got
//! its variant, `check` finds gaps, dead rules and overlaps, `policy` says what a pick must keep (the caps of
//! docs/DESIGN.md D12 and D13, the engines, where each mode may run); `default_promise` holds the default to them.

use crate::codegen::spec_file::{parse_toml, variants_from_toml, SpecError};
use crate::codegen::{canonical_name, Arch, NumericsMode, VariantDescription};
use crate::formats::input::shown;
use crate::gpu::weights::Layout;
use std::collections::{BTreeMap, HashMap};
use std::fmt;

mod check;
#[cfg(test)]
mod default_promise;
mod explain;
mod names;
pub mod policy;
mod probe;
mod rule;

pub use check::{Finding, MAX_SHAPE_DIM};
pub use explain::{Explanation, RuleVerdict, Verdict};
use names::{listed, NAMES_LISTED};
pub use names::{NameClash, VariantNames};
pub use policy::{Policy, PolicyError, Violation, DEFAULT_POLICY};
pub use probe::RuleShape;
pub use rule::{arch_from_str, Bounds, Rule, RuleProblem};
use rule::{join_and, parse_rule};

/// The default selection, embedded in the binary.
pub const DEFAULT_CONFIG: &str = include_str!("../../mmqgen.toml");

/// A batch-invariant selection for sm_90, embedded beside the default and not the default (unmeasured): every rule
/// picks a variant of mode `int12_per256`, so a token's output bits do not depend on the other tokens of its call
/// (docs/DESIGN.md D16). `Mmq::batch_invariant` opens a GPU with it.
pub const BATCH_INVARIANT_CONFIG: &str = include_str!("../../batch_invariant.toml");

/// `config check` looks for token-count gaps over `1..=CHECK_MAX_TOKENS`.
pub const CHECK_MAX_TOKENS: u64 = 65536;

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
#[error("no rule matches {arch} with {layout} weights, m = {m}, n = {n}, k = {k}; {rules}")]
pub struct SelectError {
    pub arch: Arch,
    pub layout: Layout,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// `the config has no rules` or `the rules are: rule 1 'a' (sm_90, n 1..=16 -> x), ...`.
    pub rules: String,
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
            // The same description under the same name as a variant known from outside the config is that
            // variant, not a clash: a config `mmqgen tune` wrote declares the sweep points it picked, and is
            // read beside the sweep's file. (Declared twice in the config itself, it is still refused.)
            if names
                .get(&v.name)
                .is_some_and(|i| i < catalogue.len() && known[i] == *v)
            {
                continue;
            }
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

    /// The embedded [`BATCH_INVARIANT_CONFIG`] (one numerics mode at every token count on sm_90), against
    /// `catalogue`.
    pub fn batch_invariant(catalogue: &[VariantDescription]) -> Result<Config, ConfigError> {
        Config::parse(BATCH_INVARIANT_CONFIG, catalogue)
    }

    /// The variants of every rule that can take some token count at this architecture, layout, m and K: what
    /// a registration must build planes for.
    pub fn variants_for(
        &self,
        arch: Arch,
        layout: Layout,
        m: u64,
        k: u64,
    ) -> Vec<&VariantDescription> {
        self.rules
            .iter()
            .filter(|r| {
                r.arch == arch
                    && r.takes_layout(layout)
                    && r.m.contains(m)
                    && r.k.contains(k)
                    && r.takes_k_multiple(k)
            })
            .map(|r| &r.variant)
            .collect()
    }

    /// The first rule that takes the shape.
    pub fn select(
        &self,
        arch: Arch,
        layout: Layout,
        m: u64,
        n: u64,
        k: u64,
    ) -> Result<Selection<'_>, SelectError> {
        self.select_first(arch, layout, m, n, k, |_| true)
    }

    /// The first rule that takes the shape for raw weights at `address`, passing over the rules whose variant reads
    /// raw blocks by tensor copies (its `raw_rows` entry point) where the copy engine cannot reach them from there
    /// (a base that is not 16-byte aligned: a view into a tensor, say; docs/KERNELS.md): such a variant would copy
    /// them 16 bits at a time, which the streaming engines and `llamacpp` of the later rules do faster (docs/PERF.md).
    /// Without a later rule that takes the shape, the first one.
    pub fn select_raw_at(
        &self,
        arch: Arch,
        address: u64,
        m: u64,
        n: u64,
        k: u64,
    ) -> Result<Selection<'_>, SelectError> {
        self.select_first(arch, Layout::Raw, m, n, k, |r| {
            tensor_copies_reach(&r.variant, address, m, k)
        })
        .or_else(|_| self.select(arch, Layout::Raw, m, n, k))
    }

    /// The first rule that takes the shape and passes `keep`.
    fn select_first(
        &self,
        arch: Arch,
        layout: Layout,
        m: u64,
        n: u64,
        k: u64,
        keep: impl Fn(&Rule) -> bool,
    ) -> Result<Selection<'_>, SelectError> {
        self.rules
            .iter()
            .find(|r| r.matches(arch, layout, m, n, k) && keep(r))
            .map(|r| Selection {
                variant: &r.variant,
                rule_index: r.index,
                rule_name: &r.name,
            })
            .ok_or_else(|| SelectError {
                arch,
                layout,
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
}

/// Whether `desc` reads `m x k` raw blocks at `address` without tensor copies that cannot reach them: it has no
/// `raw_rows` entry point, or its map reaches them there ([`Config::select_raw_at`]).
fn tensor_copies_reach(desc: &VariantDescription, address: u64, m: u64, k: u64) -> bool {
    crate::codegen::launch::raw_rows_weights(desc).is_none_or(|map| map.reaches(address, m, k))
}
