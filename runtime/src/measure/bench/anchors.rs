//! Figures quoted from docs/DESIGN.md R4 (measured on our H200 on 2026-11-29; quoted, not measured here),
//! and the suspect-baseline rule that holds this run's cuBLAS bf16 figure against them.

use crate::check::Shape;

/// A cuBLAS bf16 figure more than this fraction below docs/DESIGN.md R4's directly called bf16 figure is suspect.
pub const SUSPECT_BELOW: f64 = 0.20;

/// llama.cpp's q6_K MMQ time (µs) by `(m, n, K)`: docs/DESIGN.md R4, first table (includes its activation
/// quantization).
pub const LLAMACPP_Q6K_US: [((usize, usize, usize), f64); 9] = [
    ((4096, 512, 4096), 128.0),
    ((4096, 512, 14336), 436.0),
    ((14336, 512, 4096), 463.0),
    ((4096, 2048, 4096), 500.0),
    ((4096, 2048, 14336), 1712.0),
    ((14336, 2048, 4096), 1667.0),
    ((4096, 4096, 4096), 1015.0),
    ((4096, 4096, 14336), 3362.0),
    ((14336, 4096, 4096), 3357.0),
];

/// A directly called bf16 GEMM (PyTorch on cuBLAS/cuBLASLt 13, bf16 in and out), TFLOPS by `(m, n, K)`:
/// docs/DESIGN.md R4, second table.
pub const BF16_DIRECT_TFLOPS: [((usize, usize, usize), f64); 8] = [
    ((4096, 512, 4096), 435.0),
    ((4096, 512, 14336), 659.0),
    ((14336, 512, 4096), 582.0),
    ((4096, 2048, 14336), 795.0),
    ((14336, 2048, 4096), 750.0),
    ((4096, 4096, 14336), 807.0),
    ((14336, 4096, 4096), 745.0),
    ((8192, 8192, 8192), 729.0),
];

pub(super) fn lookup(table: &[((usize, usize, usize), f64)], shape: Shape) -> Option<f64> {
    table
        .iter()
        .find(|(s, _)| *s == (shape.m, shape.n, shape.k))
        .map(|&(_, v)| v)
}

/// llama.cpp's q6_K time for `shape` (µs), where docs/DESIGN.md R4 has one.
pub fn llamacpp_anchor_us(shape: Shape) -> Option<f64> {
    lookup(&LLAMACPP_Q6K_US, shape)
}

/// The directly called bf16 GEMM figure for `shape` (TFLOPS), where docs/DESIGN.md R4 has one.
pub fn bf16_anchor_tflops(shape: Shape) -> Option<f64> {
    lookup(&BF16_DIRECT_TFLOPS, shape)
}

/// Whether this run's cuBLAS bf16 figure is believable next to docs/DESIGN.md R4's directly called one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum BaselineCheck {
    /// docs/DESIGN.md R4 has no directly called bf16 figure for the shape.
    NoAnchor,
    /// Within [`SUSPECT_BELOW`] of the anchor (or above it).
    Consistent { measured: f64, anchor: f64 },
    /// More than [`SUSPECT_BELOW`] below the anchor: the baseline (or the GPU's state) is suspect.
    Suspect { measured: f64, anchor: f64 },
}

/// The suspect-baseline rule: a cuBLAS bf16 figure (TFLOPS) more than 20% below the anchor is suspect.
pub fn check_bf16_baseline(shape: Shape, measured_tflops: f64) -> BaselineCheck {
    match bf16_anchor_tflops(shape) {
        None => BaselineCheck::NoAnchor,
        Some(anchor) => {
            if measured_tflops.is_finite() && measured_tflops >= anchor * (1.0 - SUSPECT_BELOW) {
                BaselineCheck::Consistent {
                    measured: measured_tflops,
                    anchor,
                }
            } else {
                BaselineCheck::Suspect {
                    measured: measured_tflops,
                    anchor,
                }
            }
        }
    }
}

impl BaselineCheck {
    pub fn is_suspect(&self) -> bool {
        matches!(self, BaselineCheck::Suspect { .. })
    }

    /// One sentence about the check at `shape`.
    pub fn sentence(&self, shape: Shape) -> String {
        match *self {
            BaselineCheck::NoAnchor => format!(
                "cuBLAS bf16 at {shape}: docs/DESIGN.md R4 has no directly called bf16 figure for this \
                 shape, so the baseline is not checked"
            ),
            BaselineCheck::Consistent { measured, anchor } => format!(
                "cuBLAS bf16 at {shape}: {measured:.0} TFLOPS against the directly called {anchor:.0} of \
                 docs/DESIGN.md R4 ({:+.0}%)",
                (measured / anchor - 1.0) * 100.0
            ),
            BaselineCheck::Suspect { measured, anchor } => format!(
                "SUSPECT BASELINE: cuBLAS bf16 at {shape} reached {measured:.0} TFLOPS, more than {:.0}% below \
                 the {anchor:.0} TFLOPS a directly called bf16 GEMM reached on our H200 (docs/DESIGN.md R4); \
                 every 'x cuBLAS' ratio at this shape flatters the variants until this is explained (GPU \
                 clocks, another process, a wrong cuBLAS, a mis-set argument)",
                SUSPECT_BELOW * 100.0
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::bench::shapes::default_shapes;

    #[test]
    fn the_suspect_baseline_rule() {
        let s = Shape::new(4096, 512, 4096); // anchor 435 TFLOPS; 80% is 348.
        assert_eq!(
            check_bf16_baseline(s, 349.0),
            BaselineCheck::Consistent {
                measured: 349.0,
                anchor: 435.0
            }
        );
        assert!(check_bf16_baseline(s, 347.0).is_suspect());
        assert!(!check_bf16_baseline(s, 900.0).is_suspect());
        assert!(check_bf16_baseline(s, f64::NAN).is_suspect());
        let loud = check_bf16_baseline(s, 200.0).sentence(s);
        assert!(loud.starts_with("SUSPECT BASELINE"), "{loud}");
        assert!(loud.contains("435"), "{loud}");

        for (shape, anchor) in [
            ((4096, 512, 14336), 659.0),
            ((14336, 512, 4096), 582.0),
            ((4096, 2048, 14336), 795.0),
            ((14336, 2048, 4096), 750.0),
            ((4096, 4096, 14336), 807.0),
            ((14336, 4096, 4096), 745.0),
        ] {
            let s = Shape::new(shape.0, shape.1, shape.2);
            assert_eq!(bf16_anchor_tflops(s), Some(anchor));
            assert!(check_bf16_baseline(s, anchor * 0.79).is_suspect());
            assert!(!check_bf16_baseline(s, anchor * 0.81).is_suspect());
        }
        // No anchor: said so, never suspect.
        for s in [
            Shape::new(4096, 2048, 4096),
            Shape::new(4096, 4096, 4096),
            Shape::new(4096, 1, 4096),
        ] {
            assert_eq!(check_bf16_baseline(s, 1.0), BaselineCheck::NoAnchor);
            assert!(BaselineCheck::NoAnchor
                .sentence(s)
                .contains("no directly called bf16 figure"));
        }
    }

    #[test]
    fn llamacpp_anchors_follow_anchors_md() {
        let us: Vec<f64> = default_shapes()
            .into_iter()
            .filter_map(llamacpp_anchor_us)
            .collect();
        assert_eq!(
            us,
            vec![128.0, 436.0, 463.0, 500.0, 1712.0, 1667.0, 1015.0, 3362.0, 3357.0]
        );
        assert_eq!(llamacpp_anchor_us(Shape::new(14336, 512, 14336)), None);
        assert_eq!(llamacpp_anchor_us(Shape::new(4096, 1, 4096)), None);
    }
}
