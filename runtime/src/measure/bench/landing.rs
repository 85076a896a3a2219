//! The A/B landing rule: B replaces A only when it is at least 1.5% faster.

/// The seed's landing bar: B replaces A only if A's median time over B's is at least 1.015.
pub const LANDING_BAR: f64 = 0.015;

/// The seed's verdict on replacing A by B: B lands only if `median(A) / median(B) - 1 >= 1.5%`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbVerdict {
    pub a_us: f64,
    pub b_us: f64,
    /// `a_us / b_us - 1`: B's throughput gain over A.
    pub gain: f64,
    pub lands: bool,
}

/// The landing rule on two median times (µs). Exactly +1.5% lands.
pub fn ab_verdict(a_us: f64, b_us: f64) -> AbVerdict {
    let gain = a_us / b_us - 1.0;
    AbVerdict {
        a_us,
        b_us,
        gain,
        lands: gain.is_finite() && gain >= LANDING_BAR - 1e-12,
    }
}

/// The overall verdict over several shapes, weighting each shape by its time as a whole-prefill wall clock
/// does: the rule applied to the sums of A's and B's medians. `None` without pairs.
pub fn ab_overall(pairs: &[(f64, f64)]) -> Option<AbVerdict> {
    if pairs.is_empty() {
        return None;
    }
    let a: f64 = pairs.iter().map(|p| p.0).sum();
    let b: f64 = pairs.iter().map(|p| p.1).sum();
    Some(ab_verdict(a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_landing_rule_needs_one_and_a_half_percent() {
        let v = ab_verdict(100.0, 98.0);
        assert!(v.lands, "{v:?}");
        assert!((v.gain - 100.0 / 98.0 + 1.0).abs() < 1e-15);
        assert!(!ab_verdict(100.0, 99.0).lands, "+1.01% is under the bar");
        assert!(!ab_verdict(100.0, 101.0).lands, "a regression never lands");
        assert!(!ab_verdict(100.0, 100.0).lands);
        assert!(ab_verdict(101.5, 100.0).lands, "exactly +1.5% lands");
        assert!(!ab_verdict(101.49, 100.0).lands);
        assert!(!ab_verdict(100.0, 0.0).lands, "a zero time is no verdict");
        assert!(!ab_verdict(f64::NAN, 1.0).lands);

        // Overall: sums of medians, so the long shapes weigh most.
        let o = ab_overall(&[(1000.0, 970.0), (10.0, 12.0)]).unwrap();
        assert!(o.lands, "{o:?}");
        assert!((o.gain - (1010.0 / 982.0 - 1.0)).abs() < 1e-12);
        let o = ab_overall(&[(1000.0, 1000.0), (10.0, 5.0)]).unwrap();
        assert!(
            !o.lands,
            "a short shape's gain does not carry the wall: {o:?}"
        );
        assert_eq!(ab_overall(&[]), None);
    }
}
