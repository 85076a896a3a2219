//! Running one parity case on the GPU: build, register, poison, launch, read back, compare.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::{CudaSlice, CudaStream};
use mmqgen_codegen::{Quantizer, VariantDescription};
use mmqgen_reference::digest;

use super::case::{ParityCase, ParityInputs, Shape, MIN_SAMPLED_OUTPUTS};
use super::compare::{
    compare_all, compare_quantized, compare_sampled, count_unwritten, sample_indices,
};
use super::gguf::{GgufTensorRef, GgufWeights};
use super::mutants::MutantError;
use super::row::{ParityRow, Status};
use crate::compile::build::{build_rendered, build_variant, BuildError};
use crate::gpu::device::{is_sticky_kernel_fault, synchronize, DeviceError, Gpu};
use crate::gpu::launch::{check_shape, LaunchError, LoadedVariant};
use crate::gpu::weights::{Layout, RegisteredWeights, WeightsError};
use crate::gpu::workspace::{poison_f32, read_prefix, Workspace};

/// The output of a variant already proven on the same inputs (same mode, shape and seed), to compare every
/// output with on sampled shapes.
#[derive(Clone, Debug, PartialEq)]
pub struct ProvenOutput {
    /// Its declared name (and layout), for the report.
    pub variant: String,
    /// `[n][m]`.
    pub output: Vec<f32>,
}

/// What a case produced: its row, and the GPU's output when the case ran to the end (to save as the proven
/// output for later variants).
#[derive(Clone, Debug)]
pub struct CaseOutcome {
    pub row: ParityRow,
    pub output: Option<Vec<f32>>,
}

/// Why a case could not run to the end. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum ParityError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error(transparent)]
    Mutant(#[from] MutantError),
    #[error("registering the {layout} weights failed: {source}")]
    Weights {
        layout: Layout,
        #[source]
        source: WeightsError,
    },
    #[error("{stage} failed: {source}{}", sticky_hint(source.driver_error()))]
    Launch {
        stage: String,
        #[source]
        source: Box<LaunchError>,
    },
    #[error("{source}{}", sticky_hint(source.driver_error()))]
    Device {
        #[source]
        source: DeviceError,
    },
    #[error(
        "{source_ref} is {rows} x {k} but the case's shape is {shape}, so the weights do not fit the case"
    )]
    GgufShape {
        source_ref: GgufTensorRef,
        rows: usize,
        k: usize,
        shape: Shape,
    },
    #[error(
        "the proven output of '{variant}' has {len} values but the shape {shape} has {expected} outputs, so it \
         is not an output for these inputs"
    )]
    ProvenLength {
        variant: String,
        len: usize,
        shape: Shape,
        expected: usize,
    },
}

fn sticky_hint(e: Option<cudarc::driver::DriverError>) -> &'static str {
    match e {
        Some(e) if is_sticky_kernel_fault(e) => {
            " (a fault inside a kernel: this process's CUDA context is unusable from here on)"
        }
        _ => "",
    }
}

impl ParityError {
    /// Whether a kernel faulted: a launch, synchronisation or read-back failed with an error that leaves the
    /// CUDA context unusable ([`is_sticky_kernel_fault`]). Building, loading and registering never count.
    pub fn is_kernel_fault(&self) -> bool {
        let code = match self {
            ParityError::Launch { source, .. } => source.driver_error(),
            ParityError::Device { source } => source.driver_error(),
            _ => None,
        };
        code.is_some_and(is_sticky_kernel_fault)
    }
}

impl From<DeviceError> for ParityError {
    fn from(source: DeviceError) -> ParityError {
        ParityError::Device { source }
    }
}

fn stage(stage: impl Into<String>) -> impl FnOnce(LaunchError) -> ParityError {
    let stage = stage.into();
    move |source| ParityError::Launch {
        stage,
        source: Box::new(source),
    }
}

/// Runs one parity case on `gpu`: build the variant (through the cubin cache when given; with the case's mutant
/// planted in its rendered source, and then never through the cache), register the seeded weights in the case's
/// layout, poison, run the quantizer, the matmul and the combine (synchronising after each, so a kernel fault is
/// attributed to its kernel), read back, and compare with the reference (and the proven output, when given).
/// Never panics on a GPU failure: it becomes a `Failed` row with a sentence (and `kernel_fault` when a kernel
/// faulted).
pub fn run_case(
    gpu: &Gpu,
    desc: &VariantDescription,
    case: &ParityCase,
    proven: Option<&ProvenOutput>,
    cubin_cache: Option<&Path>,
) -> CaseOutcome {
    run_case_with(gpu, desc, case, None, proven, cubin_cache)
}

/// [`run_case`] with the weights of a GGUF tensor instead of seeded blocks when `gguf` is given (its rows and K
/// must be the case's m and K; the activations stay seeded). The row records the tensor.
pub fn run_case_with(
    gpu: &Gpu,
    desc: &VariantDescription,
    case: &ParityCase,
    gguf: Option<&GgufWeights>,
    proven: Option<&ProvenOutput>,
    cubin_cache: Option<&Path>,
) -> CaseOutcome {
    let start = Instant::now();
    let mut row = ParityRow::new(desc, case);
    row.gguf = gguf.map(|g| g.source.clone());
    if let Err(e) = gpu.check_variant_arch(desc) {
        row.status = Status::Skipped;
        row.error = Some(e.to_string());
        return CaseOutcome { row, output: None };
    }
    let output = match run_case_inner(gpu, desc, case, gguf, proven, cubin_cache, &mut row) {
        Ok(output) => {
            row.status = row.status_from_counts();
            Some(output)
        }
        Err(e) => {
            row.status = Status::Failed;
            row.kernel_fault = e.is_kernel_fault();
            row.error = Some(e.to_string());
            None
        }
    };
    row.wall_ms = start.elapsed().as_secs_f64() * 1e3;
    CaseOutcome { row, output }
}

fn run_case_inner(
    gpu: &Gpu,
    desc: &VariantDescription,
    case: &ParityCase,
    gguf: Option<&GgufWeights>,
    proven: Option<&ProvenOutput>,
    cubin_cache: Option<&Path>,
    row: &mut ParityRow,
) -> Result<Vec<f32>, ParityError> {
    let shape = case.shape;
    let Shape { m, n, k } = shape;
    check_shape(m, n, k).map_err(|e| stage(format!("checking the shape {shape}"))(e.into()))?;
    if let Some(g) = gguf {
        if (g.rows, g.k) != (m, k) {
            return Err(ParityError::GgufShape {
                source_ref: g.source.clone(),
                rows: g.rows,
                k: g.k,
                shape,
            });
        }
    }
    if let Some(p) = proven {
        if p.output.len() != shape.outputs() {
            return Err(ParityError::ProvenLength {
                variant: p.variant.clone(),
                len: p.output.len(),
                shape,
                expected: shape.outputs(),
            });
        }
    }
    let (variant, _build) = match &case.mutant {
        None => build_variant(gpu, desc, cubin_cache)?,
        Some(name) => {
            // A mutant is built once and compiled fresh: its source differs from the variant's, and the cache key
            // (which hashes the source) would never hit anyway.
            let (rendered, _sites) = crate::check::mutants::find(name)?.render(desc)?;
            build_rendered(gpu, desc, rendered, None)?
        }
    };
    let stream = gpu.stream();
    let inputs = match gguf {
        Some(g) => ParityInputs::with_weights(g.raw.clone(), shape, case.seed, desc.mode),
        None => ParityInputs::generate(shape, case.seed, desc.mode),
    };
    let weights = RegisteredWeights::register_for(gpu, &inputs.raw, m, k, case.layout, desc)
        .map_err(|source| ParityError::Weights {
            layout: case.layout,
            source,
        })?;
    let mut ws =
        Workspace::new(gpu, &variant, m, n, k).map_err(stage("allocating the workspace"))?;
    ws.poison(stream)
        .map_err(stage("poisoning the workspace"))?;
    let x = stream.clone_htod(&inputs.x).map_err(|e| {
        DeviceError::cuda(
            format!("uploading the activations ({} values)", inputs.x.len()),
            e,
        )
    })?;
    let mut out = stream.alloc_zeros::<f32>(shape.outputs()).map_err(|e| {
        DeviceError::cuda(
            format!("allocating the output ({} values)", shape.outputs()),
            e,
        )
    })?;
    poison_f32(stream, &mut out, "the output")?;
    synchronize(stream, "the uploads")?;

    let entry = variant.entry_points().clone();
    let kernels_start = Instant::now();
    let matmul_name = entry.matmul(case.layout).to_string();
    if desc.quantizer == Quantizer::Fused {
        // One kernel quantizes and multiplies; it leaves the quantized activations in the workspace.
        variant
            .matmul(&weights, &x, &mut out, n, stream, &mut ws)
            .map_err(stage(format!(
                "launching the matmul {matmul_name}, which quantizes its activations itself"
            )))?;
        synchronize(stream, &format!("the matmul {matmul_name}"))?;
    } else {
        queue_separately(&variant, case, &weights, &x, &mut out, &mut ws, stream)?;
    }
    row.kernels_ms = kernels_start.elapsed().as_secs_f64() * 1e3;

    let got_acts = ws
        .read_quantized(stream)
        .map_err(stage("reading the quantized activations back"))?;
    let got = read_prefix(stream, &out, shape.outputs(), "output")
        .map_err(stage("reading the output back"))?;

    let q = compare_quantized(&got_acts, &inputs.acts);
    row.quant_checked = q.checked;
    row.quant_mismatches = q.mismatches;
    row.quant_first_bad = q.first_bad;

    row.unwritten = count_unwritten(&got).0;
    row.digest = Some(digest(&got));
    let c = if shape.compares_every_output() {
        compare_all(&got, &inputs.reference(shape), m)
    } else {
        let indices = sample_indices(m, n, case.seed, MIN_SAMPLED_OUTPUTS);
        compare_sampled(&got, m, &indices, |t, j| inputs.reference_at(shape, t, j))
    };
    row.checked = c.checked;
    row.mismatches = c.mismatches;
    row.first_bad = c.first_bad;
    if let Some(p) = proven {
        let c = compare_all(&got, &p.output, m);
        row.proven_by = Some(p.variant.clone());
        row.proven_checked = c.checked;
        row.proven_mismatches = c.mismatches;
        row.proven_first_bad = c.first_bad;
    }
    Ok(got)
}

/// The quantizer, the matmul entry point and the combine, each launched and waited for on its own, so that a
/// fault names its kernel.
fn queue_separately(
    variant: &LoadedVariant,
    case: &ParityCase,
    weights: &RegisteredWeights,
    x: &CudaSlice<f32>,
    out: &mut CudaSlice<f32>,
    ws: &mut Workspace,
    stream: &Arc<CudaStream>,
) -> Result<(), ParityError> {
    let Shape { m, n, k } = case.shape;
    let entry = variant.entry_points();
    variant
        .quantize_activations(x, n, k, stream, ws)
        .map_err(stage(format!(
            "launching the activation quantizer {}",
            entry.quantize
        )))?;
    synchronize(
        stream,
        &format!("the activation quantizer {}", entry.quantize),
    )?;
    let matmul_name = entry.matmul(case.layout);
    variant
        .matmul_entry(weights, out, n, stream, ws)
        .map_err(stage(format!("launching the matmul {matmul_name}")))?;
    synchronize(stream, &format!("the matmul {matmul_name}"))?;
    if variant.description().ksplit > 1 {
        let name = entry.combine.clone().unwrap_or_default();
        variant
            .combine(m, n, k, out, stream, ws)
            .map_err(stage(format!("launching the combine {name}")))?;
        synchronize(stream, &format!("the combine {name}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::case::Shape;
    use super::*;

    /// The GPU end of parity: every default-catalogue-like variant on a small shape, both layouts. Skips
    /// visibly without a GPU (fails with `MMQGEN_REQUIRE_GPU=1`).
    #[test]
    fn gpu_parity_small_shape() {
        let Some(gpu) = crate::testing::gpu_or_skip("parity::gpu_parity_small_shape") else {
            return;
        };
        if !crate::compile::nvrtc_available() {
            assert!(
                !std::env::var("MMQGEN_REQUIRE_GPU").is_ok_and(|v| v == "1"),
                "MMQGEN_REQUIRE_GPU=1 but NVRTC is not installed"
            );
            eprintln!("SKIPPED: NVRTC not found (parity::gpu_parity_small_shape)");
            return;
        }
        let desc = VariantDescription {
            name: "parity-test".into(),
            ..VariantDescription::DEFAULTS
        };
        for layout in Layout::ALL {
            let case = ParityCase {
                shape: Shape::new(130, 33, 1280),
                layout,
                seed: 1,
                mutant: None,
            };
            let outcome = run_case(&gpu, &desc, &case, None, None);
            let row = &outcome.row;
            assert_eq!(row.status, Status::Pass, "{row:?}");
            assert_eq!(row.checked, 130 * 33);
            assert!(row.quant_checked > 0);
            // The output is its own proven output.
            let proven = ProvenOutput {
                variant: "self".into(),
                output: outcome.output.unwrap(),
            };
            let again = run_case(&gpu, &desc, &case, Some(&proven), None);
            assert_eq!(again.row.status, Status::Pass, "{:?}", again.row);
            assert_eq!(again.row.proven_checked, 130 * 33);
        }
    }
}
