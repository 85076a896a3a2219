//! Shapes that exercise a config: for each rule, a small shape it wins (first match) in a layout, so that tests
//! and integrations can run every pick of a config at a shape the config really routes to it.

use super::*;

/// A shape a rule wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuleShape {
    /// 0-based rule position.
    pub rule_index: usize,
    pub m: usize,
    pub n: usize,
    pub k: usize,
}

impl RuleShape {
    /// Multiply-adds of the shape (what a CPU reference of it costs).
    pub fn work(&self) -> u128 {
        self.m as u128 * self.n as u128 * self.k as u128
    }
}

/// Weight rows a probe tries: the small and the model-sized ones, plus each rule's own bounds.
const PROBE_M: [u64; 6] = [96, 333, 1000, 4096, 8192, 14336];
/// K a probe tries (multiples of 256): one super-block, ragged ones (rows not 16-byte aligned raw), model sizes, and
/// one past every ring's reach (48128 at one token).
const PROBE_K: [u64; 8] = [256, 2816, 4096, 4352, 11008, 14336, 16384, 49152];

impl Config {
    /// For each rule of `arch` that serves `layout`, the cheapest shape (fewest multiply-adds) among a probe grid
    /// that the rule wins; rules no shape of the grid reaches (shadowed by earlier ones) are left out.
    pub fn rule_shapes(&self, arch: Arch, layout: Layout) -> Vec<RuleShape> {
        let mut shapes = Vec::new();
        for rule in self
            .rules
            .iter()
            .filter(|r| r.arch == arch && r.takes_layout(layout))
        {
            let ms = candidates(&rule.m, &PROBE_M, 1);
            // A rule for some K only (k_multiple) is probed at its own multiples too.
            let ks = candidates(&rule.k, &PROBE_K, rule.k_multiple.unwrap_or(256));
            let ns = candidates(&rule.tokens, &[1, 8, 64, 129, 512, 2048], 1);
            let (ks, ns) = (&ks, &ns);
            let best = ms
                .iter()
                .flat_map(|&m| {
                    ks.iter()
                        .flat_map(move |&k| ns.iter().map(move |&n| (m, n, k)))
                })
                .filter(|&(m, n, k)| {
                    self.select(arch, layout, m, n, k)
                        .is_ok_and(|s| s.rule_index == rule.index)
                })
                .min_by_key(|&(m, n, k)| m as u128 * n as u128 * k as u128);
            if let Some((m, n, k)) = best {
                shapes.push(RuleShape {
                    rule_index: rule.index,
                    m: m as usize,
                    n: n as usize,
                    k: k as usize,
                });
            }
        }
        shapes
    }

    /// Every token count at which the pick of `arch` may change: each rule's first and last n and the n after it.
    pub fn token_boundaries(&self, arch: Arch) -> Vec<u64> {
        let mut ns: Vec<u64> = self
            .rules
            .iter()
            .filter(|r| r.arch == arch)
            .flat_map(|r| {
                let mut ends = vec![r.tokens.min, r.tokens.min.saturating_sub(1)];
                if let Some(max) = r.tokens.max {
                    ends.extend([max, max + 1]);
                }
                ends
            })
            .filter(|&n| n >= 1)
            .collect();
        ns.sort_unstable();
        ns.dedup();
        ns
    }
}

/// Values of `bounds` to try: its own ends (rounded into multiples of `step`) and the probe values inside it.
fn candidates(bounds: &Bounds, probe: &[u64], step: u64) -> Vec<u64> {
    let mut values: Vec<u64> = probe.to_vec();
    values.push(bounds.min.div_ceil(step) * step);
    if let Some(max) = bounds.max {
        values.push(max / step * step);
    }
    values.retain(|&v| v >= 1 && bounds.contains(v));
    values.sort_unstable();
    values.dedup();
    values
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_of_the_embedded_default_wins_a_probe_shape() {
        let catalogue = crate::catalogue::all();
        let config = Config::embedded(&catalogue).unwrap();
        for arch in Arch::ALL {
            let mut won = std::collections::BTreeSet::new();
            for layout in Layout::ALL {
                for shape in config.rule_shapes(arch, layout) {
                    let pick = config
                        .select(arch, layout, shape.m as u64, shape.n as u64, shape.k as u64)
                        .unwrap();
                    assert_eq!(pick.rule_index, shape.rule_index, "{shape:?}");
                    won.insert(shape.rule_index);
                }
            }
            let rules: Vec<_> = config
                .rules
                .iter()
                .filter(|r| r.arch == arch)
                .map(|r| r.index)
                .collect();
            let missed: Vec<_> = rules.iter().filter(|i| !won.contains(i)).collect();
            assert!(
                missed.is_empty(),
                "{arch}: rules no probe shape reaches: {missed:?}"
            );
        }
    }

    #[test]
    fn token_boundaries_hold_each_rules_ends() {
        let catalogue = crate::catalogue::all();
        let config = Config::embedded(&catalogue).unwrap();
        let ns = config.token_boundaries(Arch::Sm90);
        for n in [1, 2, 3, 4, 5, 8, 9, 16, 17, 128, 129, 512, 513] {
            assert!(ns.contains(&n), "{n} missing from {ns:?}");
        }
    }
}
