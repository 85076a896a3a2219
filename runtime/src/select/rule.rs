//! One `[[rule]]` table: its bounds, its keys, the sentences for a bad one.

use super::*;

pub(super) const RULE_KEYS: [&str; 8] = [
    "name",
    "arch",
    "layout",
    "tokens",
    "m",
    "k",
    "k_multiple",
    "variant",
];

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
    pub(super) fn hi(&self) -> u64 {
        self.max.unwrap_or(u64::MAX)
    }
    pub(super) fn intersect(&self, other: &Bounds) -> Option<Bounds> {
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
    /// The weight layout the rule is for; `None` (no `layout` key): both.
    pub layout: Option<Layout>,
    pub tokens: Bounds,
    pub m: Bounds,
    pub k: Bounds,
    /// Only K that are multiples of this (`k_multiple = 2048`: raw rows of eight blocks, 16-byte aligned, which the
    /// copy engine reaches); `None`: any K.
    pub k_multiple: Option<u64>,
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

    /// `sm_90, n 1..=16, k 14336 -> small_n_f32` (the layout, m and k only when limited).
    pub fn summary(&self) -> String {
        let mut s = self.arch.to_string();
        if let Some(layout) = self.layout {
            s += &format!(", {layout} layout");
        }
        s += &format!(", n {}", self.tokens);
        if !self.m.is_any() {
            s += &format!(", m {}", self.m);
        }
        if !self.k.is_any() {
            s += &format!(", k {}", self.k);
        }
        if let Some(q) = self.k_multiple {
            s += &format!(", k a multiple of {q}");
        }
        format!("{s} -> {}", self.variant.name)
    }

    /// Why the rule does not take the shape; empty when it does.
    pub fn mismatches(&self, arch: Arch, layout: Layout, m: u64, n: u64, k: u64) -> Vec<String> {
        let mut why = Vec::new();
        if self.arch != arch {
            why.push(format!("arch is {}, not {arch}", self.arch));
        }
        if !self.takes_layout(layout) {
            why.push(format!(
                "it is for the {} layout, not {layout}",
                self.layout.map_or("any", Layout::keyword)
            ));
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
        if !self.takes_k_multiple(k) {
            why.push(format!(
                "k = {k} is not a multiple of {}",
                self.k_multiple.unwrap_or(1)
            ));
        }
        why
    }

    /// How the rule takes a shape it matches.
    pub(super) fn agreement(&self, m: u64, n: u64, k: u64) -> String {
        let dim = |key: &str, var: &str, b: &Bounds, v: u64| {
            if b.is_any() {
                format!("{key} any")
            } else {
                format!("{key} {b} contains {var} = {v}")
            }
        };
        let layout = self
            .layout
            .map_or(String::new(), |l| format!(", layout {l}"));
        format!(
            "arch {}{layout}, {}, {}, {}",
            self.arch,
            dim("tokens", "n", &self.tokens, n),
            dim("m", "m", &self.m, m),
            dim("k", "k", &self.k, k)
        )
    }

    pub(super) fn matches(&self, arch: Arch, layout: Layout, m: u64, n: u64, k: u64) -> bool {
        self.arch == arch
            && self.takes_layout(layout)
            && self.tokens.contains(n)
            && self.m.contains(m)
            && self.k.contains(k)
            && self.takes_k_multiple(k)
    }

    /// Whether K is a multiple of the rule's `k_multiple` (always, without one).
    pub fn takes_k_multiple(&self, k: u64) -> bool {
        self.k_multiple.is_none_or(|q| k.is_multiple_of(q))
    }

    /// Whether the rule serves weights registered in `layout`.
    pub fn takes_layout(&self, layout: Layout) -> bool {
        self.layout.is_none_or(|l| l == layout)
    }

    /// The rule's shapes as a box `[tokens, m, k]`.
    pub(super) fn dims(&self) -> [Bounds; 3] {
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
    #[error(
        "layout '{layout}' is not a weight layout: it is raw or padded (or leave it out for both)"
    )]
    UnknownLayout { layout: String },
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
    #[error("`k_multiple` must be a multiple of 256 from 256 to 2^20, such as k_multiple = 2048; got {got}")]
    BadKMultiple { got: String },
}

pub(super) fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

pub(super) fn arch_list() -> String {
    Arch::ALL.map(Arch::keyword).join(", ")
}

/// `sm_90` -> [`Arch::Sm90`]; `None` for an architecture mmqgen does not target.
pub fn arch_from_str(text: &str) -> Option<Arch> {
    Arch::from_keyword(text)
}

pub(super) fn type_name(value: &toml::Value) -> &'static str {
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

pub(super) const RANGE_FORMS: &str =
    "must be an integer, an inclusive [min, max] or a table { min = .., max = .. }";

pub(super) fn parse_bound(key: &str, value: &toml::Value) -> Result<u64, RuleProblem> {
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

pub(super) fn parse_bounds(key: &str, value: &toml::Value) -> Result<Bounds, RuleProblem> {
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

pub(super) fn string_key<'t>(
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

pub(super) fn parse_rule(
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
    let layout = string_key(table, "layout", "padded")?
        .map(|text| {
            text.parse::<Layout>()
                .map_err(|_| RuleProblem::UnknownLayout {
                    layout: shown(text),
                })
        })
        .transpose()?;
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
    let k_multiple = table
        .get("k_multiple")
        .map(|v| match v.as_integer() {
            Some(q) if (256..=1 << 20).contains(&q) && q % 256 == 0 => Ok(q as u64),
            _ => Err(RuleProblem::BadKMultiple {
                got: shown(&v.to_string()),
            }),
        })
        .transpose()?;
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
        layout,
        tokens,
        m,
        k,
        k_multiple,
        variant_name: variant_name.to_string(),
        variant: variant.clone(),
    })
}
