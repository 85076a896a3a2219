//! The selection policy: what the default may pick (`runtime/policy.toml`, embedded as [`DEFAULT_POLICY`]), apart
//! from which variant wins a shape, which is measured. The caps of docs/DESIGN.md D12 (device footprint) and D13
//! (activation-side accuracy), the engines allowed, and the token ranges where each mode may be picked. A config is
//! checked against a policy rule by rule ([`Policy::check`]), each violation one sentence.
//!
//! ```toml
//! footprint = 1.10             # device bytes over GGUF bytes, at most
//! activation_nmse = 1.5e-4     # the mode's added NMSE at 16 outlier channels per 4096, at most
//! engines = ["stream_ring"]    # the engines a rule may pick
//! [[mode]]                     # a mode picked only in this token range (for an arch and layout, if given)
//! mode = "int12_per256"
//! arch = "sm_90"
//! layout = "padded"
//! tokens = { min = 81 }
//! ```

use super::rule::{arch_from_str, parse_bounds};
use super::{Bounds, Config};
use crate::codegen::{Arch, Engine, Keyword, NumericsMode};
use crate::formats::input::shown;
use crate::gpu::weights::{device_footprint, gguf_bytes, Layout};

/// The default's policy, embedded in the binary.
pub const DEFAULT_POLICY: &str = include_str!("../../policy.toml");

/// The shapes (m, K) at which a pick's footprint is checked: the model matrices the default is measured on, and a
/// small one, where the scale planes' rounding to whole rows weighs most.
const FOOTPRINT_SHAPES: [(usize, usize); 4] =
    [(4096, 4096), (14336, 4096), (4096, 14336), (100, 256)];

/// Where a mode may be picked.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeRange {
    pub mode: NumericsMode,
    /// `None`: every architecture.
    pub arch: Option<Arch>,
    /// `None`: both layouts.
    pub layout: Option<Layout>,
    pub tokens: Bounds,
}

/// A selection policy ([`DEFAULT_POLICY`] for the embedded config).
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// Device bytes over GGUF bytes, at most.
    pub footprint: f64,
    /// The added activation-side NMSE of a pick's mode, at most.
    pub activation_nmse: f64,
    pub engines: Vec<Engine>,
    pub modes: Vec<ModeRange>,
}

/// A policy that cannot be read; one sentence each.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PolicyError {
    #[error("the policy is not valid TOML: {0}")]
    Toml(String),
    #[error("the policy's `{key}` {problem}")]
    Key { key: String, problem: String },
}

/// A rule of a config that the policy does not allow; one sentence each.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Violation {
    #[error("{rule} picks {variant}, engine {engine}, which the policy does not allow (engines: {allowed})")]
    Engine {
        rule: String,
        variant: String,
        engine: Engine,
        allowed: String,
    },
    #[error(
        "{rule} picks {variant}, which holds {bytes} bytes on the device for {m} x {k} ({layout} layout), over \
         {cap}x the GGUF's {gguf}"
    )]
    Footprint {
        rule: String,
        variant: String,
        bytes: usize,
        m: usize,
        k: usize,
        layout: Layout,
        cap: f64,
        gguf: usize,
    },
    #[error("{rule} picks {variant}, mode {mode}, which adds NMSE {nmse:.2e} at 16 outliers per 4096, over the cap {cap:.1e}")]
    Accuracy {
        rule: String,
        variant: String,
        mode: NumericsMode,
        nmse: f64,
        cap: f64,
    },
    #[error(
        "{rule} picks mode {mode} for n {tokens}, where the policy allows it only for n {allowed}"
    )]
    ModeRange {
        rule: String,
        mode: NumericsMode,
        tokens: Bounds,
        allowed: Bounds,
    },
}

fn key_error(key: &str, problem: impl Into<String>) -> PolicyError {
    PolicyError::Key {
        key: key.to_string(),
        problem: problem.into(),
    }
}

fn number(table: &toml::Table, key: &str) -> Result<f64, PolicyError> {
    match table.get(key) {
        Some(toml::Value::Float(f)) if *f > 0.0 => Ok(*f),
        Some(toml::Value::Integer(i)) if *i > 0 => Ok(*i as f64),
        Some(_) => Err(key_error(key, "must be a positive number")),
        None => Err(key_error(key, "is missing")),
    }
}

fn keyword<T: Keyword>(key: &str, value: &toml::Value) -> Result<T, PolicyError> {
    let word = value.as_str().unwrap_or("");
    T::VALUES
        .iter()
        .copied()
        .find(|v| v.keyword() == word)
        .ok_or_else(|| {
            key_error(
                key,
                format!(
                    "must be one of {}; got {}",
                    T::KEYWORDS.join(", "),
                    shown(&value.to_string())
                ),
            )
        })
}

impl Policy {
    /// Reads a policy (the format in the module's documentation).
    pub fn parse(text: &str) -> Result<Policy, PolicyError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| PolicyError::Toml(e.message().to_string()))?;
        for key in table.keys() {
            if !matches!(
                key.as_str(),
                "footprint" | "activation_nmse" | "engines" | "mode"
            ) {
                return Err(key_error(
                    key,
                    "is not a policy key: a policy has footprint, activation_nmse, engines and [[mode]] tables",
                ));
            }
        }
        let engines = match table.get("engines") {
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(|item| keyword::<Engine>("engines", item))
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(key_error("engines", "must be a list of engines")),
        };
        let modes = match table.get("mode") {
            None => Vec::new(),
            Some(toml::Value::Array(items)) => items
                .iter()
                .map(mode_range)
                .collect::<Result<Vec<_>, _>>()?,
            Some(_) => return Err(key_error("mode", "must be an array of tables ([[mode]])")),
        };
        Ok(Policy {
            footprint: number(&table, "footprint")?,
            activation_nmse: number(&table, "activation_nmse")?,
            engines,
            modes,
        })
    }

    /// The embedded [`DEFAULT_POLICY`].
    pub fn embedded() -> Policy {
        Policy::parse(DEFAULT_POLICY).expect("the embedded policy parses (tests/select.rs)")
    }

    /// Every way `config`'s rules leave the policy, rule by rule.
    pub fn check(&self, config: &Config) -> Vec<Violation> {
        let mut violations = Vec::new();
        let mut nmse: Vec<(NumericsMode, f64)> = Vec::new();
        for rule in &config.rules {
            let (label, variant) = (rule.label(), &rule.variant);
            if !self.engines.contains(&variant.engine) {
                violations.push(Violation::Engine {
                    rule: label.clone(),
                    variant: variant.name.to_string(),
                    engine: variant.engine,
                    allowed: self
                        .engines
                        .iter()
                        .map(|e| e.keyword())
                        .collect::<Vec<_>>()
                        .join(", "),
                });
            }
            let layouts: Vec<Layout> = rule.layout.map_or(Layout::ALL.to_vec(), |l| vec![l]);
            for &(m, k) in &FOOTPRINT_SHAPES {
                for &layout in &layouts {
                    let bytes = device_footprint([variant], m, k, layout);
                    if bytes as f64 > self.footprint * gguf_bytes(m, k) as f64 {
                        violations.push(Violation::Footprint {
                            rule: label.clone(),
                            variant: variant.name.to_string(),
                            bytes,
                            m,
                            k,
                            layout,
                            cap: self.footprint,
                            gguf: gguf_bytes(m, k),
                        });
                    }
                }
            }
            let mode_nmse = match nmse.iter().find(|(mode, _)| *mode == variant.mode) {
                Some((_, value)) => *value,
                None => {
                    let value = crate::reference::default_cap_nmse(variant.mode);
                    nmse.push((variant.mode, value));
                    value
                }
            };
            if mode_nmse > self.activation_nmse {
                violations.push(Violation::Accuracy {
                    rule: label.clone(),
                    variant: variant.name.to_string(),
                    mode: variant.mode,
                    nmse: mode_nmse,
                    cap: self.activation_nmse,
                });
            }
            for range in &self.modes {
                let applies = range.mode == variant.mode
                    && range.arch.is_none_or(|a| a == rule.arch)
                    && (range.layout.is_none()
                        || rule.layout.is_none_or(|l| Some(l) == range.layout));
                let within = rule.tokens.min >= range.tokens.min
                    && range
                        .tokens
                        .max
                        .is_none_or(|max| rule.tokens.max.is_some_and(|hi| hi <= max));
                if applies && !within {
                    violations.push(Violation::ModeRange {
                        rule: label.clone(),
                        mode: variant.mode,
                        tokens: rule.tokens,
                        allowed: range.tokens,
                    });
                }
            }
        }
        violations
    }
}

fn mode_range(item: &toml::Value) -> Result<ModeRange, PolicyError> {
    let table = item
        .as_table()
        .ok_or_else(|| key_error("mode", "must be an array of tables ([[mode]])"))?;
    for key in table.keys() {
        if !matches!(key.as_str(), "mode" | "arch" | "layout" | "tokens") {
            return Err(key_error(
                &format!("mode.{key}"),
                "is not a key of a [[mode]]: it has mode, arch, layout and tokens",
            ));
        }
    }
    let mode = keyword::<NumericsMode>(
        "mode.mode",
        table
            .get("mode")
            .ok_or_else(|| key_error("mode.mode", "is missing"))?,
    )?;
    let arch = match table.get("arch") {
        None => None,
        Some(value) => Some(value.as_str().and_then(arch_from_str).ok_or_else(|| {
            key_error(
                "mode.arch",
                "must be an architecture mmqgen targets, such as \"sm_90\"",
            )
        })?),
    };
    let layout = match table.get("layout").map(|v| v.as_str()) {
        None => None,
        Some(Some("raw")) => Some(Layout::Raw),
        Some(Some("padded")) => Some(Layout::Padded),
        Some(_) => return Err(key_error("mode.layout", "must be raw or padded")),
    };
    let tokens = match table.get("tokens") {
        Some(value) => parse_bounds("tokens", value)
            .map_err(|problem| key_error("mode.tokens", problem.to_string()))?,
        None => return Err(key_error("mode.tokens", "is missing")),
    };
    Ok(ModeRange {
        mode,
        arch,
        layout,
        tokens,
    })
}
