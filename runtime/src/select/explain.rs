//! `mmqgen explain`: every rule's verdict on a shape, and the winner.

use super::*;

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
    pub layout: Layout,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    /// 0-based index of the winning rule.
    pub chosen: Option<usize>,
    /// Declared and canonical name of the chosen variant.
    pub variant: Option<(String, String)>,
    pub rules: Vec<RuleVerdict>,
}

impl Explanation {
    /// The answer alone: the variant and the rule that chose it, with how it matched (or that none matched),
    /// without the other rules' verdicts.
    pub fn winner(&self) -> String {
        let mut s = self.headline();
        if let Some(r) = self
            .chosen
            .and_then(|i| self.rules.iter().find(|r| r.rule_index == i))
        {
            if let Verdict::Chosen { because } = &r.verdict {
                s += &format!("  {} [{}]: {because}\n", r.label, r.summary);
            }
        }
        s
    }

    /// The shape and its variant, and the rule that chose it.
    fn headline(&self) -> String {
        let shape = format!(
            "{}, {} weights, m = {}, n = {}, k = {}",
            self.arch, self.layout, self.m, self.n, self.k
        );
        match (self.chosen, &self.variant) {
            (Some(i), Some((name, canonical))) => format!(
                "{shape}: variant {name} ({canonical})\nchosen by {}: the first rule that matches (first match \
                 wins)\n",
                self.rules[i].label
            ),
            _ => format!("{shape}: no rule matches\n"),
        }
    }
}

impl fmt::Display for Explanation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.headline())?;
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

impl Config {
    /// Every rule's verdict on the shape, and the winner.
    pub fn explain(&self, arch: Arch, layout: Layout, m: u64, n: u64, k: u64) -> Explanation {
        self.explain_where(arch, layout, m, n, k, |_| None)
    }

    /// [`Config::explain`] for raw weights at `address`, as [`Config::select_raw_at`] picks: a rule whose variant
    /// reads raw blocks by tensor copies that cannot reach them from there is passed over, saying so.
    pub fn explain_raw_at(&self, arch: Arch, address: u64, m: u64, n: u64, k: u64) -> Explanation {
        self.explain_where(arch, Layout::Raw, m, n, k, |r| {
            (!super::tensor_copies_reach(&r.variant, address, m, k)).then(|| {
                format!(
                    "{} reads raw blocks by tensor copies, which do not reach them at {address:#x}",
                    r.variant.name
                )
            })
        })
    }

    /// Every rule's verdict, with `passed_over`'s reason (if any) added to a rule's mismatches.
    fn explain_where(
        &self,
        arch: Arch,
        layout: Layout,
        m: u64,
        n: u64,
        k: u64,
        passed_over: impl Fn(&Rule) -> Option<String>,
    ) -> Explanation {
        let mut chosen = None;
        let rules = self
            .rules
            .iter()
            .map(|r| {
                let mut reasons = r.mismatches(arch, layout, m, n, k);
                reasons.extend(passed_over(r));
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
            layout,
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
}
