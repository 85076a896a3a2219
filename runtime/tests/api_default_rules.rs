//! The library as an engine links it, on a GPU: every rule of the embedded default run once through
//! `Q6kMatrix::matmul` at a shape the rule wins, in both layouts (raw weights borrowed from device memory, as an
//! engine holds them; padded from host bytes), every output bit-identical to the CPU reference of the selected
//! variant's mode (all of them for small shapes, a seeded sample of 4096 plus the corners for large ones). Also:
//! raw rows that are not 16-byte aligned (K = 2816, 4352, 11008) at an odd-of-16 base, a borrowed registration
//! that allocates nothing, and a call captured in a CUDA graph after `reserve`.
//!
//! Outputs are poisoned before each call. Without a GPU each test says so (and fails under MMQGEN_REQUIRE_GPU=1).

use cudarc::driver::{CudaSlice, CudaStream};
use mmqgen::launch::POISON_BITS;
use mmqgen::reference::{
    digest_case_inputs, quantize_activations_for, reference_matmul, reference_output,
};
use mmqgen::{Layout, Mmq, MmqError, Q6kMatrix};
use std::sync::Arc;

fn gpu_or_skip(test: &str) -> Option<Mmq> {
    match Mmq::new(0) {
        Ok(mmq) => Some(mmq),
        Err(e) => {
            mmqgen::testing::skip_or_fail("MMQGEN_REQUIRE_GPU", test, &format!("no CUDA GPU: {e}"));
            None
        }
    }
}

/// Multiply-adds above which a shape is checked on a sample of its outputs instead of all of them.
const FULL_CHECK_WORK: u128 = 400_000_000;

/// Runs `matrix` on fresh activations and checks every output (or a sample) against the reference; returns
/// the variant's name.
fn run_and_check(
    matrix: &Q6kMatrix<'_>,
    raw: &[u8],
    n: usize,
    seed: u64,
    stream: &Arc<CudaStream>,
) -> String {
    let (m, k) = (matrix.m(), matrix.k());
    let (_, x) = digest_case_inputs(1, n, k, seed);
    let x_device = stream.clone_htod(&x).unwrap();
    let mut out: CudaSlice<f32> = stream
        .clone_htod(&vec![f32::from_bits(POISON_BITS); n * m])
        .unwrap();
    let desc = matrix
        .matmul(&x_device, &mut out, n, stream)
        .expect("matmul");
    let got = stream.clone_dtoh(&out).unwrap();
    let acts = quantize_activations_for(&x, n, k, desc.mode);
    let at = format!(
        "{} layout, m = {m}, n = {n}, K = {k}, variant {}",
        matrix.layout(),
        desc.name
    );
    if (m * n * k) as u128 <= FULL_CHECK_WORK {
        let want = reference_matmul(raw, m, n, k, &acts, desc.mode);
        let bad = (0..n * m)
            .filter(|&i| got[i].to_bits() != want[i].to_bits())
            .count();
        assert_eq!(bad, 0, "{at}: {bad} of {} outputs differ", n * m);
    } else {
        let mut state = seed | 1;
        let mut next = |below: usize| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % below as u64) as usize
        };
        let mut outputs: Vec<(usize, usize)> = (0..4096).map(|_| (next(n), next(m))).collect();
        outputs.extend([(0, 0), (0, m - 1), (n - 1, 0), (n - 1, m - 1)]);
        for (token, row) in outputs {
            let want = reference_output(raw, m, k, &acts, desc.mode, row, token);
            assert_eq!(
                got[token * m + row].to_bits(),
                want.to_bits(),
                "{at}: output (token {token}, row {row})"
            );
        }
    }
    desc.name.to_string()
}

#[test]
fn every_rule_of_the_default_runs_bit_exactly_through_the_api() {
    let Some(mmq) = gpu_or_skip("every_rule_of_the_default_runs_bit_exactly_through_the_api")
    else {
        return;
    };
    let stream = mmq.gpu().context().new_stream().expect("a stream");
    let mut ran = Vec::new();
    for layout in Layout::ALL {
        let shapes = mmq.config().rule_shapes(mmq.arch(), layout);
        assert!(
            !shapes.is_empty(),
            "no rule of {} serves {layout}",
            mmq.arch()
        );
        for shape in shapes {
            // Each case as it starts, so that a run cut short by its time limit shows how far it got.
            eprintln!(
                "{layout} rule '{}' at {}x{}x{}",
                mmq.config().rules[shape.rule_index].name,
                shape.m,
                shape.n,
                shape.k
            );
            let (raw, _) = digest_case_inputs(shape.m, 1, shape.k, 7 + shape.rule_index as u64);
            let device_raw;
            let matrix = match layout {
                // As an engine holds them: GGUF blocks already on the GPU, borrowed in place.
                Layout::Raw => {
                    device_raw = stream.clone_htod(&raw).unwrap();
                    mmq.register_device(&device_raw, shape.m, shape.k)
                        .expect("borrowed registration")
                }
                Layout::Padded => mmq
                    .register(&raw, shape.m, shape.k, layout)
                    .expect("registration"),
            };
            let name = run_and_check(
                &matrix,
                &raw,
                shape.n,
                100 + shape.rule_index as u64,
                &stream,
            );
            let rule = &mmq.config().rules[shape.rule_index];
            assert_eq!(name, rule.variant.name, "rule '{}' at {shape:?}", rule.name);
            ran.push(format!(
                "{layout} {} {}x{}x{} {name}",
                rule.name, shape.m, shape.n, shape.k
            ));
        }
    }
    mmqgen::testing::visible(&format!(
        "ran {} rule shapes:\n  {}",
        ran.len(),
        ran.join("\n  ")
    ));
}

#[test]
fn borrowed_raw_rows_that_are_not_16_byte_aligned_run_bit_exactly() {
    let Some(mmq) = gpu_or_skip("borrowed_raw_rows_that_are_not_16_byte_aligned_run_bit_exactly")
    else {
        return;
    };
    let stream = mmq.gpu().context().new_stream().expect("a stream");
    // K = 4096 too, whose aligned rows the copy engine would read: a view of them gets the 16-bit readers instead.
    for (m, k) in [(333, 2816), (4097, 4352), (1000, 11008), (256, 4096)] {
        let (raw, _) = digest_case_inputs(m, 1, k, k as u64);
        // Two bytes in: the base is 2-byte but not 16-byte aligned, as a ggml view can be.
        let mut shifted = vec![0u8; 2];
        shifted.extend_from_slice(&raw);
        let device = stream.clone_htod(&shifted).unwrap();
        let view = device.slice(2..);
        let matrix = mmq
            .register_device(&view, m, k)
            .expect("borrowed registration");
        for n in [1, 2, 3, 4, 8, 16, 33, 64, 129] {
            let name = run_and_check(&matrix, &raw, n, (m * n) as u64, &stream);
            let desc = mmqgen::catalogue::all()
                .into_iter()
                .find(|d| d.name == name.as_str())
                .expect("a catalogue variant");
            assert!(
                mmqgen::codegen::launch::raw_rows_weights(&desc).is_none(),
                "{m}x{n}x{k}: {name} reads raw blocks by tensor copies, which cannot reach the view"
            );
        }
    }
}

#[test]
fn a_borrowed_registration_allocates_nothing_and_refuses_bad_input() {
    let Some(mmq) = gpu_or_skip("a_borrowed_registration_allocates_nothing_and_refuses_bad_input")
    else {
        return;
    };
    let stream = mmq.gpu().stream().clone();
    let (m, k) = (14336, 4096);
    let (raw, _) = digest_case_inputs(m, 1, k, 3);
    let device = stream.clone_htod(&raw).unwrap();
    stream.synchronize().unwrap();
    let (free_before, _) = cudarc::driver::result::mem_get_info().unwrap();
    let matrix = mmq
        .register_device(&device, m, k)
        .expect("borrowed registration");
    let (free_after, _) = cudarc::driver::result::mem_get_info().unwrap();
    assert_eq!(matrix.allocated_bytes(), 0);
    assert_eq!(matrix.device_bytes(), matrix.gguf_bytes());
    assert_eq!(
        free_before, free_after,
        "registration allocated device memory"
    );
    mmqgen::testing::visible(&format!(
        "borrowed 14336 x 4096: {} GGUF bytes, {} allocated, cuMemGetInfo free {} -> {}",
        matrix.gguf_bytes(),
        matrix.allocated_bytes(),
        free_before,
        free_after
    ));
    let short = device.slice(..raw.len() - 1);
    let e = mmq
        .register_device(&short, m, k)
        .err()
        .expect("too few bytes are refused");
    assert!(e.to_string().contains("need"), "{e}");
    let odd = device.slice(1..);
    let e = mmq
        .register_device(&odd, 1, 256)
        .err()
        .expect("an odd address is refused");
    assert!(e.to_string().contains("odd"), "{e}");
    let e = mmq
        .register_device(&device, m, 4000)
        .err()
        .expect("K = 4000 is refused");
    assert!(e.to_string().contains("256"), "{e}");
}

#[test]
fn a_reserved_call_is_captured_in_a_graph_and_replays_the_same_bits() {
    let Some(mmq) = gpu_or_skip("a_reserved_call_is_captured_in_a_graph_and_replays_the_same_bits")
    else {
        return;
    };
    use cudarc::driver::sys::CUstreamCaptureMode;
    let stream = mmq.gpu().context().new_stream().expect("a stream");
    let (m, k) = (4096, 4096);
    let (raw, _) = digest_case_inputs(m, 1, k, 11);
    let device = stream.clone_htod(&raw).unwrap();
    let matrix = mmq.register_device(&device, m, k).unwrap();
    let padded = mmq.register(&raw, m, k, Layout::Padded).unwrap();
    for (matrix, n) in [(&matrix, 1), (&matrix, 8), (&padded, 1), (&padded, 300)] {
        let (_, x) = digest_case_inputs(1, n, k, 5);
        let x_device = stream.clone_htod(&x).unwrap();
        let mut direct = stream.alloc_zeros::<f32>(n * m).unwrap();
        let mut replayed: CudaSlice<f32> = stream
            .clone_htod(&vec![f32::from_bits(POISON_BITS); n * m])
            .unwrap();
        // A fresh stream has no workspace: capturing before reserve is refused, and nothing is queued.
        let capturing = mmq.gpu().context().new_stream().unwrap();
        let x_capt = capturing.clone_htod(&x).unwrap();
        let mut out_capt = capturing.alloc_zeros::<f32>(n * m).unwrap();
        capturing.synchronize().unwrap();
        capturing
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .unwrap();
        let refused = matrix.matmul(&x_capt, &mut out_capt, n, &capturing);
        let _ = capturing.end_capture(cudarc::driver::sys::CUgraphInstantiate_flags(0));
        assert!(
            matches!(refused, Err(MmqError::WouldAllocateWhileCapturing { .. })),
            "{refused:?}"
        );

        mmq.reserve(&stream, m, 512, k).unwrap();
        matrix.matmul(&x_device, &mut direct, n, &stream).unwrap();
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
            .unwrap();
        matrix
            .matmul(&x_device, &mut replayed, n, &stream)
            .expect("a reserved call under capture");
        let graph = stream
            .end_capture(cudarc::driver::sys::CUgraphInstantiate_flags(0))
            .unwrap()
            .expect("a graph");
        graph.launch().unwrap();
        graph.launch().unwrap();
        let (a, b) = (
            stream.clone_dtoh(&direct).unwrap(),
            stream.clone_dtoh(&replayed).unwrap(),
        );
        let bad = (0..n * m)
            .filter(|&i| a[i].to_bits() != b[i].to_bits())
            .count();
        assert_eq!(
            bad,
            0,
            "{} n = {n}: the graph's outputs differ from a direct call's",
            matrix.layout()
        );
    }
}
