//! The shapes a run times (the defaults, one Llama-3-8B layer for `--prefill`), and how many buffer
//! sets keep every timed call reading cold weights.

use crate::check::Shape;

/// The L2 size used when the device attribute cannot be read (the H200's 60 MB, counted as MiB).
pub const FALLBACK_L2_BYTES: usize = 60 << 20;
/// The buffer sets one contestant cycles through must hold more than this many L2s.
pub const ROTATION_L2_MULTIPLE: usize = 3;
/// At least this many buffer sets, however large one set is.
pub const MIN_BUFFER_SETS: usize = 3;
/// At most this many buffer sets (tiny shapes would otherwise need hundreds; the report says when the cap
/// leaves the rotation under three L2s).
pub const MAX_BUFFER_SETS: usize = 64;

/// The default shapes, by token count: `n` in {1, 8, 32, 128} at m = K = 4096, then every
/// `m` in {4096, 14336}, `n` in {512, 2048, 4096}, `K` in {4096, 14336}.
pub fn default_shapes() -> Vec<Shape> {
    let mut shapes: Vec<Shape> = [1, 8, 32, 128]
        .into_iter()
        .map(|n| Shape::new(4096, n, 4096))
        .collect();
    for n in [512, 2048, 4096] {
        for m in [4096, 14336] {
            for k in [4096, 14336] {
                shapes.push(Shape::new(m, n, k));
            }
        }
    }
    shapes
}

/// One Llama-3-8B layer's matmuls as `(name, m, K)`: q, k, v, o, gate, up, down.
pub const LLAMA3_8B_LAYER: [(&str, usize, usize); 7] = [
    ("q", 4096, 4096),
    ("k", 1024, 4096),
    ("v", 1024, 4096),
    ("o", 4096, 4096),
    ("gate", 14336, 4096),
    ("up", 14336, 4096),
    ("down", 4096, 14336),
];

/// Prompt lengths `--prefill` reports.
pub const PREFILL_TOKENS: [usize; 2] = [512, 2048];

/// The distinct shapes `--prefill` needs.
pub fn prefill_shapes() -> Vec<Shape> {
    let mut shapes = Vec::new();
    for n in PREFILL_TOKENS {
        for (_, m, k) in LLAMA3_8B_LAYER {
            shapes.push(Shape::new(m, n, k));
        }
    }
    dedup_shapes(shapes)
}

/// `shapes` without repeats, first occurrence kept.
pub fn dedup_shapes(shapes: Vec<Shape>) -> Vec<Shape> {
    let mut seen = std::collections::HashSet::new();
    shapes.into_iter().filter(|s| seen.insert(*s)).collect()
}

/// How many buffer sets make the sets of the contestant with the smallest set (`smallest_set_bytes`) hold
/// more than [`ROTATION_L2_MULTIPLE`] L2s: at least [`MIN_BUFFER_SETS`], at most [`MAX_BUFFER_SETS`].
pub fn buffer_sets(l2_bytes: usize, smallest_set_bytes: usize) -> usize {
    let need = ROTATION_L2_MULTIPLE * l2_bytes + 1;
    need.div_ceil(smallest_set_bytes.max(1))
        .clamp(MIN_BUFFER_SETS, MAX_BUFFER_SETS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_prefill_shapes() {
        let d = default_shapes();
        assert_eq!(d.len(), 16);
        assert_eq!(
            &d[..4],
            &[
                Shape::new(4096, 1, 4096),
                Shape::new(4096, 8, 4096),
                Shape::new(4096, 32, 4096),
                Shape::new(4096, 128, 4096)
            ]
        );
        for m in [4096, 14336] {
            for n in [512, 2048, 4096] {
                for k in [4096, 14336] {
                    assert!(d.contains(&Shape::new(m, n, k)), "{m},{n},{k}");
                }
            }
        }
        assert_eq!(dedup_shapes(d.clone()), d);
        let p = prefill_shapes();
        assert_eq!(
            p,
            vec![
                Shape::new(4096, 512, 4096),
                Shape::new(1024, 512, 4096),
                Shape::new(14336, 512, 4096),
                Shape::new(4096, 512, 14336),
                Shape::new(4096, 2048, 4096),
                Shape::new(1024, 2048, 4096),
                Shape::new(14336, 2048, 4096),
                Shape::new(4096, 2048, 14336),
            ]
        );
        let both = dedup_shapes(d.iter().chain(&p).copied().collect());
        assert_eq!(both.len(), 18, "only the two k/v shapes are new");
    }

    #[test]
    fn buffer_sets_exceed_three_l2() {
        let l2 = 60 << 20;
        // 30 MiB sets: 6 of them are exactly 180 MiB, which is not more than 3 L2.
        assert_eq!(buffer_sets(l2, 30 << 20), 7);
        assert_eq!(buffer_sets(l2, 100 << 20), 3, "never fewer than three");
        assert_eq!(buffer_sets(l2, 1 << 30), 3);
        assert_eq!(buffer_sets(l2, 1024), MAX_BUFFER_SETS, "capped");
        for bytes in [(13 << 20) + 7, 33 << 20, 61 << 20] {
            let s = buffer_sets(l2, bytes);
            assert!(s * bytes > 3 * l2 && (s - 1) * bytes <= 3 * l2 || s == MIN_BUFFER_SETS);
        }
    }
}
