//! Deliberate mutants: small, realistic bugs planted in the rendered CUDA of a declared variant, which GPU parity
//! must catch (`mmqgen parity --mutants`).
//!
//! Parity proves every variant bit-identical to the CPU reference; the mutants prove that parity would notice if
//! one were not. Each [`Mutant`] is a text substitution on its base variant's rendered source (`find` ->
//! `replace`, every occurrence), a shape and a weight layout. The suite plants it, compiles the mutated source
//! with NVRTC, runs it through the same case as any variant (in its own process, see `crate::cli::parity`) and
//! reads the row back as a [`Verdict`]: caught by wrong or unwritten outputs, caught because the kernel faulted,
//! or missed.
//!
//! A mutant whose `find` no longer occurs in the rendered source (a template changed) is an error, never a
//! silently unplanted bug: the host-side tests below plant every mutant into the current templates without a GPU.

use std::fmt;

use mmqgen_codegen::render::{render, RenderedVariant};
use mmqgen_codegen::VariantDescription;

use super::case::{ParityCase, Shape};
use super::row::{ParityRow, Status};
use crate::gpu::weights::Layout;

/// One deliberate bug: where it goes (a declared variant's rendered source), what it changes, and the parity
/// case that must catch it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mutant {
    /// The mutant's handle (`a-z 0-9 _`), given to `--mutant` on a parity child's command line.
    pub name: &'static str,
    /// The declared name of the variant whose rendered source the bug is planted in.
    pub base_variant: &'static str,
    /// One sentence: the bug it plants.
    pub what: &'static str,
    /// Text of the rendered source to change (every occurrence); it must occur at least once.
    pub find: &'static str,
    /// What each occurrence becomes.
    pub replace: &'static str,
    /// The parity case's shape (m, n, K).
    pub shape: Shape,
    /// The parity case's weight layout.
    pub layout: Layout,
}

/// The shape the mutants run on: the first default shape (every output compared, tail tiles in m and n).
pub const MUTANT_SHAPE: Shape = Shape::new(1000, 77, 2816);

/// Every mutant the suite ships, in a stable order.
pub const MUTANTS: [Mutant; 13] = [
    Mutant {
        name: "swapped_fma_order",
        base_variant: "r41",
        what: "The f32_per16 chunk value rounds the odd sub-block's product first and fuses the even one, instead \
               of fma(dsc1, f(I16[2c+1]), mul(dsc0, f(I16[2c]))) as NUMERICS.md 5 writes it.",
        find: "__fmaf_rn(dsc.odd, __int2float_rn(sum_odd[o]), __fmul_rn(dsc.even, __int2float_rn(sum_even[o])))",
        replace: "__fmaf_rn(dsc.even, __int2float_rn(sum_even[o]), __fmul_rn(dsc.odd, __int2float_rn(sum_odd[o])))",
        shape: MUTANT_SHAPE,
        layout: Layout::Padded,
    },
    Mutant {
        name: "transposed_mma_fragment",
        base_variant: "llamacpp",
        what: "The m16n8k16 A fragment's two registers load their weight rows swapped (a[fm][0] row g+8, a[fm][1] \
               row g), so each row's sums land in the row 8 below or above it.",
        find: "a[fm][0] = *(const uint32*)rows;\n                    \
               a[fm][1] = *(const uint32*)(rows + 8 * SMEM_WEIGHTS_STRIDE);",
        replace: "a[fm][0] = *(const uint32*)(rows + 8 * SMEM_WEIGHTS_STRIDE);\n                    \
                  a[fm][1] = *(const uint32*)rows;",
        shape: MUTANT_SHAPE,
        layout: Layout::Padded,
    },
    Mutant {
        name: "wrong_narrow_byte_offset",
        base_variant: "dp4a_int_per32",
        what: "The narrow scale fetch reads the int8 scales one byte late (block offset 193 instead of 192), so \
               every sub-block gets its neighbour's scale and the last one reads the low byte of d.",
        find: "block[Q6K_SCALES + 2 * first_chunk + i]",
        replace: "block[Q6K_SCALES + 1 + 2 * first_chunk + i]",
        shape: MUTANT_SHAPE,
        layout: Layout::Raw,
    },
    Mutant {
        name: "off_by_one_token_edge",
        base_variant: "dp4a_int_per32",
        what: "The epilogue's token bound is one short (token + 1 < n), so the last token's outputs are never \
               written and keep the poison.",
        find: "if (row < m && token < n) {",
        replace: "if (row < m && token + 1 < n) {",
        shape: MUTANT_SHAPE,
        layout: Layout::Raw,
    },
    Mutant {
        name: "prefolded_low_pass_skipped",
        base_variant: "prefolded_per256",
        what: "The prefolded engine adds the low plane's pass to H instead of 64 H (the x64 between the two \
               m16n8k32 passes is dropped), so I256 = H + L instead of 64 H + L.",
        find: "superblock_sum[o] *= 64;",
        replace: "superblock_sum[o] *= 1;",
        shape: MUTANT_SHAPE,
        layout: Layout::Raw,
    },
    Mutant {
        name: "tma_weight_box_raw_stride",
        base_variant: "tma_128x128",
        what: "The copy engine's weight box steps 105 16-bit elements a super-block (a raw block's 210 bytes) \
               instead of a padded block's 112, so every super-block after the first is staged from the wrong \
               bytes.",
        find: "superblock * (Layout::BLOCK_BYTES / 2)",
        replace: "superblock * 105",
        shape: MUTANT_SHAPE,
        layout: Layout::Padded,
    },
    Mutant {
        name: "int12_cross_weight",
        base_variant: "wgmma_i12_128x64",
        what: "The 12-bit combine weighs the cross sum Y = sum (h vl + l vh) by 32 instead of 64, as a shift \
               miscounted by one would.",
        find: "(uint32)superblock_cross[o] * 64u",
        replace: "(uint32)superblock_cross[o] * 32u",
        shape: MUTANT_SHAPE,
        layout: Layout::Raw,
    },
    Mutant {
        name: "int12_token_box_column",
        base_variant: "wgmma_i12_128x64",
        what: "The copy engine's window box of tokens starts one chunk (32 16-bit elements) into each chunk pair, \
               so each pair stages its second chunk's planes where its first's belong and zeros after them.",
        find: "tensor_copy_3d(stage + SMEM_ACTIVATIONS_OFFSET, &maps.tokens, 0, token0,",
        replace: "tensor_copy_3d(stage + SMEM_ACTIVATIONS_OFFSET, &maps.tokens, 32, token0,",
        shape: MUTANT_SHAPE,
        layout: Layout::Padded,
    },
    Mutant {
        name: "producer_window_behind",
        base_variant: "wgmma_i12_128x64_producer",
        what: "The producer warpgroup refills a freed stage with the window before the one due there (window - 1), \
               so every stage after the first two holds the weights and tokens of the window it already ran.",
        find: "tma_load_stage<Layout>(*maps, shared + slot * STAGE_BYTES, stage_landed + slot, window, row0,",
        replace: "tma_load_stage<Layout>(*maps, shared + slot * STAGE_BYTES, stage_landed + slot, window - 1, row0,",
        shape: MUTANT_SHAPE,
        layout: Layout::Padded,
    },
    Mutant {
        name: "quotient_uncorrected",
        base_variant: "wgmma_i12_128x64",
        what: "The activation quantizer keeps its first estimate of x / d (x times the reciprocal) and drops the \
               fma that corrects it, so a quotient may be one ulp off div(x, d) and round to the other integer at \
               a tie.",
        find: "const float quotient = __fmaf_rn(divisor.reciprocal, __fmaf_rn(-divisor.scale, estimate, value), \
               estimate);",
        replace: "const float quotient = estimate;",
        shape: MUTANT_SHAPE,
        layout: Layout::Raw,
    },
    Mutant {
        name: "int12_ring_plane_weight",
        base_variant: "ring_i12_t1",
        what: "The int12 ring weighs the vh plane's sum of an odd sub-block by 32 instead of 64, so that sub-block's \
               sum is no longer the exact sum of (q6 - 32) * (64 vh + vl).",
        find: "sums.odd = 64 * high + low;",
        replace: "sums.odd = 32 * high + low;",
        shape: MUTANT_SHAPE,
        layout: Layout::Padded,
    },
    Mutant {
        name: "ring_box_slot_transposed",
        base_variant: "ring_t1_fused",
        what: "The ring reading raw blocks through the copy engine's boxes takes lane L's block from slot \
               4 (L / 8) + L % 8 instead of 4 (L % 8) + L / 8, where box L % 8 put it, so most lanes read another \
               block.",
        find: "slot = warp_slots(s) + (4 * (lane % 8) + lane / 8) * SLOT_BYTES;",
        replace: "slot = warp_slots(s) + (4 * (lane / 8) + lane % 8) * SLOT_BYTES;",
        shape: MUTANT_SHAPE,
        layout: Layout::Raw,
    },
    Mutant {
        name: "split_ring_row_shifted",
        base_variant: "ring_t1_ks4_fused",
        what: "The K-split ring reading raw rows through the copy engine's boxes of four rows takes item i's row as \
               the next one in its quad ((i + 1) % 4), where the box put another row's block, so three lanes in four \
               read another row's block.",
        find: "4 * (quad / block_superblocks) + item % 4",
        replace: "4 * (quad / block_superblocks) + (item + 1) % 4",
        // K a multiple of 2048, so that the copy engine reaches the rows (the shared shape's 2816 is not), and four
        // segments a row, a split each.
        shape: Shape::new(1000, 3, 4096),
        layout: Layout::Raw,
    },
];

/// Every mutant the suite ships.
pub fn all() -> &'static [Mutant] {
    &MUTANTS
}

/// The shipped mutant called `name`, or a sentence naming them all.
pub fn find(name: &str) -> Result<&'static Mutant, MutantError> {
    MUTANTS
        .iter()
        .find(|m| m.name == name)
        .ok_or_else(|| MutantError::Unknown {
            name: name.to_string(),
            known: MUTANTS.map(|m| m.name).join(", "),
        })
}

/// Why a mutant could not be planted. Each variant displays as one sentence.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MutantError {
    #[error("no mutant named '{name}': the mutants are {known}")]
    Unknown { name: String, known: String },
    #[error(
        "mutant '{mutant}' plants its bug in variant '{base}', but the variant list has no variant of that \
         declared name"
    )]
    MissingBase { mutant: String, base: String },
    #[error("rendering variant '{variant}' to plant mutant '{mutant}' failed: {message}")]
    Render {
        mutant: String,
        variant: String,
        message: String,
    },
    #[error(
        "mutant '{mutant}' cannot be planted: the text `{find}` does not occur in the source it was given (the \
         rendered source of '{base}' no longer contains it: a template changed, so update the mutant in \
         runtime/src/check/mutants.rs)"
    )]
    NotFound {
        mutant: String,
        base: String,
        /// The first line of `find`, trimmed.
        find: String,
    },
    #[error("mutant '{mutant}' changes nothing: its replacement is the text it replaces")]
    Unchanged { mutant: String },
}

impl Mutant {
    /// The source with every occurrence of `find` replaced; an error when there is none (or the replacement
    /// changes nothing).
    pub fn apply(&self, source: &str) -> Result<String, MutantError> {
        self.apply_counted(source).map(|(mutated, _)| mutated)
    }

    /// [`Self::apply`], with how many occurrences were replaced.
    pub fn apply_counted(&self, source: &str) -> Result<(String, usize), MutantError> {
        if self.find == self.replace {
            return Err(MutantError::Unchanged {
                mutant: self.name.to_string(),
            });
        }
        let sites = if self.find.is_empty() {
            0
        } else {
            source.matches(self.find).count()
        };
        if sites == 0 {
            return Err(MutantError::NotFound {
                mutant: self.name.to_string(),
                base: self.base_variant.to_string(),
                find: self
                    .find
                    .lines()
                    .next()
                    .unwrap_or_default()
                    .trim()
                    .to_string(),
            });
        }
        Ok((source.replace(self.find, self.replace), sites))
    }

    /// The base variant in `variants`, by declared name.
    pub fn base<'a>(
        &self,
        variants: &'a [VariantDescription],
    ) -> Result<&'a VariantDescription, MutantError> {
        variants
            .iter()
            .find(|v| v.name == self.base_variant)
            .ok_or_else(|| MutantError::MissingBase {
                mutant: self.name.to_string(),
                base: self.base_variant.to_string(),
            })
    }

    /// Renders `desc` (normally the base variant) and plants the bug in its source; returns the mutated
    /// rendering (entry points and shared memory unchanged) and how many places changed.
    pub fn render(
        &self,
        desc: &VariantDescription,
    ) -> Result<(RenderedVariant, usize), MutantError> {
        let mut rendered = render(desc).map_err(|e| MutantError::Render {
            mutant: self.name.to_string(),
            variant: desc.name.to_string(),
            message: e.to_string(),
        })?;
        let (source, sites) = self.apply_counted(&rendered.source)?;
        rendered.source = source;
        Ok((rendered, sites))
    }

    /// The parity case that must catch this mutant.
    pub fn case(&self, seed: u64) -> ParityCase {
        ParityCase {
            shape: self.shape,
            layout: self.layout,
            seed,
            mutant: Some(self.name.to_string()),
        }
    }
}

/// What parity made of a mutant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Parity found outputs (or quantized activations) that differ from the reference or were never written.
    CaughtMismatch {
        /// Outputs that differ from the CPU reference (or a proven output), unwritten ones included.
        mismatches: usize,
        /// Outputs that still hold the poison.
        unwritten: usize,
        /// Quantized activations (quants and scales) that differ.
        activations: usize,
    },
    /// A kernel faulted (the driver reported an error that ends the context): parity failed the case.
    CaughtFault { error: String },
    /// Parity passed the mutated kernel: the suite has a hole.
    Missed,
    /// The GPU's architecture is not among the base variant's: nothing ran.
    Skipped { reason: String },
    /// The mutant could not be tried: it did not plant or compile, or the case's process died.
    Failed { error: String },
}

impl Verdict {
    /// The verdict a parity row implies for the mutant it ran.
    pub fn from_row(row: &ParityRow) -> Verdict {
        let error = || {
            row.error
                .clone()
                .unwrap_or_else(|| "no reason given".into())
        };
        match row.status {
            Status::Mismatch => Verdict::CaughtMismatch {
                mismatches: row.mismatches + row.proven_mismatches,
                unwritten: row.unwritten,
                activations: row.quant_mismatches,
            },
            Status::Pass => Verdict::Missed,
            Status::Skipped => Verdict::Skipped { reason: error() },
            Status::Failed if row.kernel_fault => Verdict::CaughtFault { error: error() },
            Status::Failed => Verdict::Failed { error: error() },
        }
    }

    pub fn is_caught(&self) -> bool {
        matches!(
            self,
            Verdict::CaughtMismatch { .. } | Verdict::CaughtFault { .. }
        )
    }

    /// Whether the verdict fails a mutant run (missed, or not tried).
    pub fn is_bad(&self) -> bool {
        matches!(self, Verdict::Missed | Verdict::Failed { .. })
    }

    /// The sentence behind a fault, a skip or a failure.
    pub fn error(&self) -> Option<&str> {
        match self {
            Verdict::CaughtFault { error } | Verdict::Failed { error } => Some(error),
            Verdict::Skipped { reason } => Some(reason),
            Verdict::CaughtMismatch { .. } | Verdict::Missed => None,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Verdict::CaughtMismatch {
                mismatches,
                unwritten,
                activations,
            } => {
                write!(f, "CAUGHT: mismatches={mismatches} unwritten={unwritten}")?;
                if *activations > 0 {
                    write!(f, " activations={activations}")?;
                }
                Ok(())
            }
            Verdict::CaughtFault { .. } => f.write_str("CAUGHT: the kernel faulted"),
            Verdict::Missed => f.write_str("MISSED"),
            Verdict::Skipped { .. } => f.write_str("skipped"),
            Verdict::Failed { .. } => f.write_str("FAILED"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalogue;
    use crate::gpu::launch::check_shape;
    use mmqgen_codegen::ScaleFetch;

    #[test]
    fn mutants_are_well_formed() {
        let variants = catalogue::all();
        for (i, m) in MUTANTS.iter().enumerate() {
            assert!(
                m.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
                "{}",
                m.name
            );
            assert!(
                MUTANTS[..i].iter().all(|o| o.name != m.name),
                "two mutants are called {}",
                m.name
            );
            assert!(m.base(&variants).is_ok(), "{}", m.base_variant);
            assert!(
                m.what.ends_with('.') && !m.what.contains('\n') && !m.what.contains("  "),
                "{}: `what` must be one sentence: {:?}",
                m.name,
                m.what
            );
            assert!(!m.find.is_empty() && m.find != m.replace, "{}", m.name);
            check_shape(m.shape.m, m.shape.n, m.shape.k).unwrap();
            assert!(
                m.shape.compares_every_output(),
                "{}: every output is compared",
                m.name
            );
            assert_eq!(find(m.name), Ok(m));
        }
        // The narrow-arm mutant needs the narrow arm and the raw layout (the brief's case).
        let narrow = find("wrong_narrow_byte_offset").unwrap();
        assert_eq!(
            narrow.base(&variants).unwrap().scale_fetch,
            ScaleFetch::Narrow
        );
        assert_eq!(narrow.layout, Layout::Raw);
        assert_eq!(
            find("reversed").unwrap_err().to_string(),
            "no mutant named 'reversed': the mutants are swapped_fma_order, transposed_mma_fragment, \
             wrong_narrow_byte_offset, off_by_one_token_edge, prefolded_low_pass_skipped, \
             tma_weight_box_raw_stride, int12_cross_weight, int12_token_box_column, producer_window_behind, \
             quotient_uncorrected, int12_ring_plane_weight, ring_box_slot_transposed, split_ring_row_shifted"
        );
    }

    /// Runs without a GPU or NVRTC (CI): a template change that removes a mutant's text fails here, loudly.
    #[test]
    fn every_mutant_plants_into_its_base_variants_current_source() {
        let variants = catalogue::all();
        for m in all() {
            let desc = m.base(&variants).unwrap();
            let original = render(desc).unwrap();
            let (mutated, sites) = m.render(desc).unwrap_or_else(|e| panic!("{}: {e}", m.name));
            assert!(sites >= 1, "{}", m.name);
            assert_ne!(mutated.source, original.source, "{}", m.name);
            assert!(
                !mutated.source.contains(m.find),
                "{}: every occurrence replaced",
                m.name
            );
            assert_eq!(
                mutated.source.matches(m.replace).count(),
                sites,
                "{}",
                m.name
            );
            // Only the source changes: the launcher's view of the module is the base variant's.
            assert_eq!(mutated.canonical, original.canonical);
            assert_eq!(mutated.kernels, original.kernels);
            assert_eq!(
                (
                    mutated.shared_bytes,
                    mutated.dynamic_shared,
                    mutated.threads
                ),
                (
                    original.shared_bytes,
                    original.dynamic_shared,
                    original.threads
                )
            );
            assert_eq!(
                m.apply(&original.source).unwrap(),
                mutated.source,
                "{}",
                m.name
            );
        }
    }

    #[test]
    fn a_mutant_that_cannot_be_planted_says_so() {
        let m = find("transposed_mma_fragment").unwrap();
        let e = m.apply("__global__ void k() {}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "mutant 'transposed_mma_fragment' cannot be planted: the text `a[fm][0] = *(const uint32*)rows;` \
             does not occur in the source it was given (the rendered source of 'llamacpp' no longer contains \
             it: a template changed, so update the mutant in runtime/src/check/mutants.rs)"
        );
        // Planting it in a variant without the mma_k16 engine finds nothing either.
        let dp4a = m
            .render(&catalogue::DP4A_INT_PER32)
            .unwrap_err()
            .to_string();
        assert!(dp4a.contains("cannot be planted"), "{dp4a}");
        // Every occurrence is replaced, and counted.
        let twice = "x; if (row < m && token < n) { } if (row < m && token < n) { }";
        let (out, sites) = find("off_by_one_token_edge")
            .unwrap()
            .apply_counted(twice)
            .unwrap();
        assert_eq!(sites, 2);
        assert_eq!(
            out,
            "x; if (row < m && token + 1 < n) { } if (row < m && token + 1 < n) { }"
        );
        let same = Mutant {
            replace: m.find,
            ..*m
        };
        assert_eq!(
            same.apply("anything").unwrap_err().to_string(),
            "mutant 'transposed_mma_fragment' changes nothing: its replacement is the text it replaces"
        );
        assert_eq!(
            m.base(&[]).unwrap_err().to_string(),
            "mutant 'transposed_mma_fragment' plants its bug in variant 'llamacpp', but the variant list has no \
             variant of that declared name"
        );
    }

    #[test]
    fn verdicts_follow_the_row() {
        let desc = catalogue::DP4A_INT_PER32;
        let m = find("off_by_one_token_edge").unwrap();
        let case = m.case(1);
        assert_eq!(case.mutant.as_deref(), Some("off_by_one_token_edge"));
        let mut row = ParityRow::new(&desc, &case);
        assert_eq!(row.mutant.as_deref(), Some("off_by_one_token_edge"));
        row.status = Status::Mismatch;
        row.mismatches = 1000;
        row.unwritten = 1000;
        let v = Verdict::from_row(&row);
        assert!(v.is_caught() && !v.is_bad());
        assert_eq!(v.to_string(), "CAUGHT: mismatches=1000 unwritten=1000");
        row.quant_mismatches = 3;
        assert_eq!(
            Verdict::from_row(&row).to_string(),
            "CAUGHT: mismatches=1000 unwritten=1000 activations=3"
        );
        row.status = Status::Pass;
        let v = Verdict::from_row(&row);
        assert_eq!((v.to_string(), v.is_bad()), ("MISSED".into(), true));
        row.status = Status::Failed;
        row.error =
            Some("waiting for the matmul x failed with CUDA_ERROR_ILLEGAL_ADDRESS (...)".into());
        let v = Verdict::from_row(&row);
        assert_eq!(v.to_string(), "FAILED");
        assert!(v.is_bad() && !v.is_caught());
        row.kernel_fault = true;
        let v = Verdict::from_row(&row);
        assert_eq!(v.to_string(), "CAUGHT: the kernel faulted");
        assert!(v.is_caught() && !v.is_bad());
        assert!(v.error().unwrap().contains("ILLEGAL_ADDRESS"));
        row.status = Status::Skipped;
        let v = Verdict::from_row(&row);
        assert!(!v.is_caught() && !v.is_bad());
    }

    /// The mutated sources are still valid CUDA: each compiles with NVRTC for every architecture its base
    /// variant declares (skips visibly without NVRTC; fails with `MMQGEN_REQUIRE_NVRTC=1`).
    #[test]
    fn mutated_sources_compile_with_nvrtc() {
        if !crate::testing::nvrtc_or_skip("mutants::mutated_sources_compile_with_nvrtc") {
            return;
        }
        let variants = catalogue::all();
        // One thread per mutant: NVRTC compiles independent programs concurrently.
        let failures: Vec<String> = std::thread::scope(|scope| {
            let handles: Vec<_> = all()
                .iter()
                .map(|m| {
                    let desc = m.base(&variants).unwrap();
                    scope.spawn(move || {
                        let (mutated, _) = m.render(desc).unwrap();
                        let program = format!("{}-{}.cu", mutated.canonical, m.name);
                        desc.archs
                            .iter()
                            .filter_map(|arch| {
                                crate::compile::compile_cubin(
                                    &mutated.source,
                                    &program,
                                    &mutated.nvrtc_arch(arch),
                                    false,
                                )
                                .err()
                                .map(|e| {
                                    format!(
                                        "mutant {} in {} for {}: {e}",
                                        m.name,
                                        desc.name,
                                        arch.keyword()
                                    )
                                })
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap())
                .collect()
        });
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }
}
