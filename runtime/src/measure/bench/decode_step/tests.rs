//! The decode step's configuration, its refusal on a small GPU, and its report rendered from a fixture.

use super::*;
use crate::measure::bench::tests::stats;
use crate::measure::bench::{CopyRate, Outcome, RunInfo};

fn step(tokens: usize, graph_us: f64, direct_us: f64) -> StepResult {
    StepResult {
        tokens,
        graph: Outcome::Timed(stats(graph_us)),
        direct: Outcome::Timed(stats(direct_us)),
        direct_enqueue_us: Some(1500.0),
        direct_launch_bound: 20,
        graph_launch_bound: 0,
        graph_nodes: Some(448),
        bits: Some(BitCheck {
            compared: tokens * 32 * 43_008,
            mismatches: 0,
            first_bad: None,
        }),
        picks: vec![
            ("q, o".into(), 4096, 4096, "ring_t1_fused".into()),
            ("k, v".into(), 1024, 4096, "ring_t1_fused".into()),
            ("gate, up".into(), 14336, 4096, "ring_t1_tall_fused".into()),
            ("down".into(), 4096, 14336, "ring_t1_ks4_fused".into()),
        ],
        error: None,
    }
}

fn report(steps: Vec<StepResult>) -> DecodeStepReport {
    let calls = step_calls(LLAMA3_8B_LAYERS);
    DecodeStepReport {
        info: RunInfo {
            gpu: "NVIDIA H100 80GB HBM3".into(),
            arch: "sm_90".into(),
            multiprocessors: 132,
            driver_cuda: "13.0".into(),
            driver_release: "580.65.06".into(),
            nvrtc: "13.0".into(),
            commit: "abc".into(),
            date: "2026-12-08T00:00:00Z".into(),
            l2_bytes: 50 << 20,
            l2_source: "device attribute".into(),
            spin_us: 200.0,
            // 1 GiB moved in 357 µs: 3.01 TB/s.
            copy: Some(CopyRate {
                bytes: 512 << 20,
                median_us: 357.0,
                reps: 5,
            }),
        },
        layout: Layout::Padded,
        config: "the embedded default".into(),
        layers: LLAMA3_8B_LAYERS,
        calls: calls.len(),
        weight_bytes: layout_bytes(&calls, Layout::Padded),
        gguf_bytes: step_gguf_bytes(&calls),
        warmup: 3,
        repeats: 20,
        steps,
        aborted: None,
    }
}

#[test]
fn configs_are_checked_with_sentences() {
    assert_eq!(DecodeStepConfig::default().check().ok(), Some(()));
    let with = |f: &dyn Fn(&mut DecodeStepConfig)| {
        let mut c = DecodeStepConfig::default();
        f(&mut c);
        c.check().unwrap_err().to_string()
    };
    assert!(with(&|c| c.tokens.clear()).contains("at least one"));
    assert!(with(&|c| c.tokens = vec![1, 0]).contains("1 to 256"));
    assert!(with(&|c| c.repeats = 0).contains("at least one timed step"));
    assert!(with(&|c| c.layers = 0).contains("no step"));
    let c = DecodeStepConfig {
        tokens: vec![1, 8, 32],
        ..DecodeStepConfig::default()
    };
    assert_eq!(
        c.to_string(),
        "32 layers, tokens 1,8,32, padded layout, 3 warm-up + 20 timed steps"
    );
}

#[test]
fn a_small_gpu_is_refused_in_one_sentence() {
    let e = DecodeStepError::TooLittleMemory {
        gpu: "NVIDIA RTX A2000".into(),
        need: 6_700_000_000,
        weights: 6_110_000_000,
        free: 5_500_000_000,
        total: 6_000_000_000,
    };
    assert_eq!(
        e.to_string(),
        "the decode step needs 6.70 GB of device memory (6.11 GB of weights, each matmul its own so that none \
         stays in L2) but the NVIDIA RTX A2000 has 5.50 GB free of 6.00 GB, so it was not run"
    );
}

#[test]
fn the_report_gives_tokens_per_second_and_the_share_of_the_copy() {
    let r = report(vec![step(1, 2400.0, 3000.0), step(8, 2800.0, 3400.0)]);
    assert!(r.is_clean());
    let rate = r.rate(8, &r.steps[1].graph).unwrap();
    // 6.11 GB in 2800 µs is 2.18 TB/s, 73% of 3.01 TB/s; 8 tokens in 2.8 ms are 2857 tokens/s.
    assert!((rate.tokens_per_s - 8.0 / 2800e-6).abs() < 1e-6);
    assert!((rate.weight_tb_s - r.weight_bytes as f64 / 2800e-6 / 1e12).abs() < 1e-12);
    let copy = 2.0 * (512u64 << 20) as f64 / 357e-6 / 1e12;
    assert!((rate.pct_of_copy.unwrap() - 100.0 * rate.weight_tb_s / copy).abs() < 1e-9);

    let md = r.markdown();
    assert!(md.contains("224 q6_K matmuls (32 layers"), "{md}");
    assert!(
        md.contains("6.11 GB on the device in the padded layout, 5.73 GB as GGUF"),
        "{md}"
    );
    assert!(
        md.contains("| 1 | 2400 (2376–2424) | 417 | 2.54 (85%) | 3000 (2970–3030) | 333 | 2.04 (68%) | yes (1376256 outputs) |"),
        "{md}"
    );
    assert!(
        md.contains("| tokens | q, o (4096 x 4096) | k, v (1024 x 4096) | gate, up (14336 x 4096) | down (4096 x 14336) |"),
        "{md}"
    );
    assert!(md.contains("| 8 | `ring_t1_fused` |"), "{md}");
    assert!(
        md.contains("direct step(s) took longer to enqueue (1500 µs, median)"),
        "{md}"
    );

    let lines = r.json_lines();
    assert_eq!(lines.len(), 2);
    let v: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(v["kind"], "decode_step");
    assert_eq!(
        (v["tokens"].as_u64(), v["calls"].as_u64()),
        (Some(1), Some(224))
    );
    assert_eq!(v["weight_bytes"].as_u64(), Some(r.weight_bytes as u64));
    assert_eq!(v["graph"]["median"], 2400.0);
    assert_eq!(v["direct"]["median"], 3000.0);
    assert_eq!(v["bits_identical"], true);
    assert_eq!(v["picks"][2]["variant"], "ring_t1_tall_fused");
    assert!(
        (v["pct_of_copy"].as_f64().unwrap() - 84.6).abs() < 0.1,
        "{v}"
    );
    assert!(v["error"].is_null());
}

#[test]
fn differing_bits_and_failures_are_said_and_unclean() {
    let mut bad = step(1, 2400.0, 3000.0);
    bad.bits = Some(BitCheck {
        compared: 100,
        mismatches: 3,
        first_bad: Some("layer 4 up token 0 row 7: direct 0x3f800000, replay 0x00000000".into()),
    });
    let mut failed = step(8, 0.0, 0.0);
    failed.graph = Outcome::NotTimed("not run".into());
    failed.bits = None;
    failed.error = Some("capturing the step: layer 0 q: refused".into());
    let r = report(vec![bad, failed]);
    assert!(!r.is_clean());
    let notes = r.notes();
    assert!(
        notes.iter().any(|n| n.starts_with(
            "1 token(s): the graph replay's outputs differ from the direct calls' at 3 of 100 (first: layer 4 up"
        )),
        "{notes:?}"
    );
    assert!(notes
        .iter()
        .any(|n| n == "8 token(s): capturing the step: layer 0 q: refused"));
    let md = r.markdown();
    assert!(md.contains("| **NO**: 3 of 100 differ |"), "{md}");
    assert!(md.contains("| 8 | not timed | — | — |"), "{md}");
    let v: serde_json::Value = serde_json::from_str(&r.json_lines()[1]).unwrap();
    assert!(v["graph"].is_null() && v["tokens_per_s"].is_null(), "{v}");
    assert_eq!(v["error"], "capturing the step: layer 0 q: refused");
    assert!(!report(Vec::new()).is_clean(), "nothing run is not clean");
}

/// On a GPU: one layer's step at 1 and 3 tokens, both layouts, end to end: the replay gives the direct calls'
/// bits and both are timed.
#[test]
fn one_layer_steps_on_the_gpu() {
    let mmq = match crate::Mmq::new(0) {
        Ok(mmq) => mmq,
        Err(e) => {
            crate::testing::skip_or_fail(
                "MMQGEN_REQUIRE_GPU",
                "decode_step::one_layer_steps_on_the_gpu",
                &format!("no CUDA GPU: {e}"),
            );
            return;
        }
    };
    for layout in Layout::ALL {
        let cfg = DecodeStepConfig {
            tokens: vec![1, 3],
            layout,
            warmup: 1,
            repeats: 3,
            layers: 1,
            ..DecodeStepConfig::default()
        };
        let mut lines = Vec::new();
        let r = run_decode_step(&mmq, "the embedded default", &cfg, &mut |l: &str| {
            lines.push(l.to_string())
        })
        .unwrap_or_else(|e| panic!("{layout}: {e}"));
        eprintln!("{}\n{}", lines.join("\n"), r.markdown());
        assert!(r.is_clean(), "{layout}: {:?}", r.notes());
        assert_eq!(r.calls, 7);
        for s in &r.steps {
            let bits = s.bits.as_ref().unwrap();
            assert_eq!(bits.compared, s.tokens * 43_008);
            assert_eq!(s.picks.len(), 4);
            assert!(s.graph_nodes.is_some_and(|n| n >= 7), "{s:?}");
        }
    }
}
