//! The inference-engine API end to end on a GPU: register once, call from two threads with their own streams,
//! several token counts (so the selection config switches variants), every output bit-identical to the CPU
//! reference of the selected variant's mode. Without a GPU it says so (and fails under MMQGEN_REQUIRE_GPU=1).

use mmqgen::reference::{digest_case_inputs, quantize_activations_for, reference_matmul};
use mmqgen::{Layout, Mmq};

fn gpu_or_skip(test: &str) -> Option<Mmq> {
    match Mmq::new(0) {
        Ok(mmq) => Some(mmq),
        Err(e) => {
            mmqgen::testing::skip_or_fail("MMQGEN_REQUIRE_GPU", test, &format!("no CUDA GPU: {e}"));
            None
        }
    }
}

#[test]
fn registered_matrix_serves_two_threads_bit_exactly() {
    let Some(mmq) = gpu_or_skip("registered_matrix_serves_two_threads_bit_exactly") else {
        return;
    };
    let (m, k) = (384, 2048);
    let (raw, _) = digest_case_inputs(m, 1, k, 5);
    for layout in [Layout::Raw, Layout::Padded] {
        let matrix = mmq.register(&raw, m, k, layout).expect("registration");
        std::thread::scope(|scope| {
            for (thread, sizes) in [[1usize, 17, 200], [8, 130, 3]].into_iter().enumerate() {
                let (mmq, matrix, raw) = (&mmq, &matrix, &raw);
                scope.spawn(move || {
                    let stream = mmq.gpu().context().new_stream().expect("a stream");
                    for n in sizes {
                        let (_, x) = digest_case_inputs(m, n, k, 100 + n as u64);
                        let x_device = stream.clone_htod(&x).unwrap();
                        let mut out = stream.alloc_zeros::<f32>(n * m).unwrap();
                        let desc = matrix.matmul(&x_device, &mut out, n, &stream).expect("matmul");
                        let got = stream.clone_dtoh(&out).unwrap();
                        let acts = quantize_activations_for(&x, n, k, desc.mode);
                        let want = reference_matmul(raw, m, n, k, &acts, desc.mode);
                        let bad = (0..n * m).filter(|&i| got[i].to_bits() != want[i].to_bits()).count();
                        assert_eq!(bad, 0, "thread {thread}, {layout:?}, n = {n}, variant {}: {bad} outputs differ", desc.name);
                    }
                });
            }
        });
    }
}

#[test]
fn bad_shapes_are_sentences() {
    let Some(mmq) = gpu_or_skip("bad_shapes_are_sentences") else {
        return;
    };
    let (raw, _) = digest_case_inputs(64, 1, 256, 1);
    let Err(error) = mmq.register(&raw, 64, 300, Layout::Raw) else {
        panic!("K = 300 must be refused");
    };
    assert!(error.to_string().contains("256"), "{error}");
    let matrix = mmq.register(&raw, 64, 256, Layout::Raw).unwrap();
    let stream = mmq.gpu().stream().clone();
    let x = stream.alloc_zeros::<f32>(256).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64).unwrap();
    let error = matrix
        .matmul(&x, &mut out, 0, &stream)
        .expect_err("n = 0 is refused");
    assert!(!error.to_string().is_empty());
}
