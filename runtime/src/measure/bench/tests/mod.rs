//! The result model rendered from a fixture run, and one whole run on a GPU; `floor_rows`: the read floor's.

use super::*;
use crate::check::Shape;

mod floor_rows;

/// Twenty samples around `median` (also the decode step's tests' fixture).
pub(super) fn stats(median: f64) -> Stats {
    Stats {
        n: 20,
        median,
        p20: median * 0.99,
        p80: median * 1.01,
        min: median * 0.98,
        max: median * 1.05,
    }
}

fn variant(name: &str, median: Option<f64>) -> VariantResult {
    VariantResult {
        name: name.into(),
        canonical: format!("{name}_canonical"),
        parity: Some(ParitySummary {
            checked: 5000,
            quant_checked: 100,
            ..Default::default()
        }),
        total: median.map_or(
            Outcome::NotTimed("parity failed: 3 of 5000 differ".into()),
            |m| Outcome::Timed(stats(m)),
        ),
        quantizer: Outcome::Timed(stats(9.0)),
        launch_bound: 0,
        device_bytes: 14 << 20,
    }
}

fn baseline(name: &str, median: f64) -> BaselineResult {
    BaselineResult {
        name: name.into(),
        total: Outcome::Timed(stats(median)),
        rel_error: Some(1e-3),
        launch_bound: 0,
    }
}

fn report(shapes: Vec<ShapeResult>) -> BenchReport {
    BenchReport {
        info: RunInfo {
            gpu: "NVIDIA H200".into(),
            arch: "sm_90".into(),
            multiprocessors: 132,
            driver_cuda: "13.0".into(),
            driver_release: "580.159.04".into(),
            nvrtc: "13.0".into(),
            commit: "abc".into(),
            date: "2026-11-29T00:00:00Z".into(),
            l2_bytes: 60 << 20,
            l2_source: "device attribute".into(),
            spin_us: 200.0,
            copy: Some(crate::measure::bench::CopyRate {
                bytes: 512 << 20,
                median_us: 256.0,
                reps: 5,
            }),
        },
        config: BenchConfig::default(),
        builds: Vec::new(),
        cublas_note: None,
        floor_note: None,
        shapes,
        aborted: None,
    }
}

fn shape_result(shape: Shape, variants: Vec<VariantResult>, bf16_us: f64) -> ShapeResult {
    ShapeResult {
        shape,
        buffer_sets: 7,
        rotation_bytes: 200 << 20,
        variants,
        cublas_bf16: Some(baseline("cuBLAS bf16", bf16_us)),
        cublas_f16: Some(baseline("cuBLAS f16", bf16_us * 1.2)),
        read_floor: None,
        error: None,
        wall_s: 1.0,
    }
}

#[test]
fn the_table_has_ratios_anchors_and_failures() {
    let s = Shape::new(4096, 512, 14336);
    // cuBLAS bf16 at 200 µs is 301 TFLOPS: suspect against 659.
    let r = report(vec![shape_result(
        s,
        vec![
            variant("a", Some(400.0)),
            variant("b", None),
            variant("c", Some(218.0)),
        ],
        200.0,
    )]);
    let t = r.markdown_table();
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 2 + 5, "{t}");
    assert!(lines[0].starts_with("| m,n,k | variant | median µs |"));
    assert!(lines[2].contains("cuBLAS bf16 **SUSPECT**"), "{t}");
    assert!(lines[3].contains("| cuBLAS f16 |"), "{t}");
    // a: 400 µs; x cuBLAS bf16 = 0.50, x f16 = 0.60, llama.cpp 436 -> 1.09; quantizer 9.0; 14 MiB of
    // weights against the GGUF tensor's 48.2 MB.
    assert_eq!(
            lines[4],
            "| 4096,512,14336 | a | 400 | 396–404 | 20 | 150.3 | 0.50 | 0.60 | 436 | 1.09 | 9.0 | 14.0 MiB (0.30x) | 0.04 (1%) | — |"
        );
    assert!(
        lines[2].ends_with("| 112.0 MiB (2.44x) | 0.59 (14%) | — |"),
        "cuBLAS holds two bytes a weight: {t}"
    );
    assert!(lines[5].contains("| b | not timed: parity failed"), "{t}");
    assert!(lines[6].contains("| **c** | 218 |"), "best is bold: {t}");
    let notes = r.notes();
    assert!(
        notes.iter().any(|n| n.starts_with("SUSPECT BASELINE")),
        "{notes:?}"
    );
    assert!(notes.iter().any(|n| n.contains("variant 'b'")), "{notes:?}");

    // No anchor: dashes, and a note.
    let s2 = Shape::new(4096, 8, 4096);
    let r = report(vec![shape_result(s2, vec![variant("a", Some(20.0))], 10.0)]);
    let t = r.markdown_table();
    assert!(
        t.contains("| 4096,8,4096 | **a** | 20.0 | 19.8–20.2 | 20 |"),
        "{t}"
    );
    assert!(t.contains("| — | — | 9.0 |"), "{t}");
    assert!(r
        .notes()
        .iter()
        .any(|n| n.contains("no directly called bf16 figure for 4096,8,4096")));
    assert!(r.legend().contains("QUOTED"));
}

#[test]
fn json_lines_are_self_contained_objects() {
    let s = Shape::new(4096, 512, 4096);
    let r = report(vec![shape_result(
        s,
        vec![variant("a\"q", Some(100.0)), variant("b", None)],
        30.0,
    )]);
    let lines = r.json_lines();
    assert_eq!(lines.len(), 4);
    for l in &lines {
        assert!(
            l.starts_with("{\"mmqgen_bench\":1,") && l.ends_with('}'),
            "{l}"
        );
        assert!(l.contains("\"gpu\":\"NVIDIA H200\""), "{l}");
        assert!(l.contains("\"driver\":\"580.159.04\""), "{l}");
        assert!(l.contains("\"nvrtc\":\"13.0\""), "{l}");
        assert!(l.contains("\"commit\":\"abc\""), "{l}");
        assert!(l.contains("\"date\":\"2026-11-29T00:00:00Z\""), "{l}");
        assert_eq!(l.matches('{').count(), l.matches('}').count(), "{l}");
    }
    assert!(
        lines[0].contains("\"kind\":\"cublas_bf16\"") && lines[0].contains("\"suspect\":false")
    );
    assert!(lines[2].contains("\"variant\":\"a\\\"q\""), "{}", lines[2]);
    let v: serde_json::Value = serde_json::from_str(&lines[2]).unwrap();
    assert_eq!(v["median_us"], 100.0, "{v}");
    assert_eq!(v["x_cublas_bf16"], 0.3, "{v}");
    assert_eq!(v["llamacpp_quoted_us"], 128.0, "{v}");
    // Timed calls are `samples`; `n` stays the shape's token count.
    assert_eq!(
        (v["n"].as_u64(), v["samples"].as_u64()),
        (Some(512), Some(20))
    );
    // 14 MiB of weights in 100 µs against a 512 MiB copy (1 GiB moved) in 256 µs.
    let tb_s = (14 << 20) as f64 / 100e-6 / 1e12;
    assert_eq!(v["weight_bytes"], 14 << 20);
    assert!(
        (v["weight_tb_s"].as_f64().unwrap() - tb_s).abs() < 1e-9,
        "{v}"
    );
    let copy = 2.0 * (512 << 20) as f64 / 256e-6 / 1e12;
    assert!(
        (v["copy_tb_s"].as_f64().unwrap() - copy).abs() < 1e-9,
        "{v}"
    );
    assert!(
        (v["pct_of_copy"].as_f64().unwrap() - 100.0 * tb_s / copy).abs() < 1e-9,
        "{v}"
    );
    // A baseline reads m*K*2 bytes; a contestant not timed has a key with no rate.
    let b: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(b["weight_bytes"], 2 * 4096 * 4096);
    let nt: serde_json::Value = serde_json::from_str(&lines[3]).unwrap();
    assert!(
        nt["weight_tb_s"].is_null() && nt.get("weight_tb_s").is_some(),
        "{nt}"
    );
    assert!(nt.get("median_us").is_none(), "{nt}");
    assert!(
        lines[3].contains("\"status\":\"not_timed\""),
        "{}",
        lines[3]
    );
}

#[test]
fn json_rows_read_back_as_written() {
    let s = Shape::new(4096, 512, 4096);
    let mut r = report(vec![
        shape_result(s, vec![variant("a", Some(100.0)), variant("b", None)], 30.0),
        ShapeResult {
            error: Some("the shape cannot be run".into()),
            ..ShapeResult::empty(Shape::new(1, 1, 256))
        },
    ]);
    r.shapes[0].cublas_f16.as_mut().unwrap().rel_error = None;
    let rows = r.json_rows();
    assert_eq!(rows.len(), 5);
    for (row, line) in rows.iter().zip(r.json_lines()) {
        // serde_json's default float parser may miss the last bit, so the row is compared through the parsed
        // value: every key (null ones included) comes back, with the value the parser read.
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let back: BenchRow = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), value, "{line}");
        assert_eq!(
            (&back.kind, &back.variant, back.samples),
            (&row.kind, &row.variant, row.samples)
        );
    }
    assert!(r.json_lines()[1].contains("\"rel_error\":null"));
    assert_eq!(rows[4].kind, "shape");
    assert_eq!(rows[4].status, "not_measured");
    // Without a copy rate, the share is null and the markdown shows the TB/s alone.
    r.info.copy = None;
    let line = &r.json_lines()[2];
    assert!(
        line.contains("\"pct_of_copy\":null") && line.contains("\"copy_tb_s\":null"),
        "{line}"
    );
    assert!(r.legend().contains("not measured in this run"));
}

#[test]
fn the_table_shows_weight_bandwidth_against_the_copy() {
    let s = Shape::new(4096, 512, 4096);
    let r = report(vec![shape_result(s, vec![variant("a", Some(100.0))], 30.0)]);
    let table = r.markdown_table();
    assert!(
        table
            .lines()
            .next()
            .unwrap()
            .ends_with("| weights TB/s (% of copy) | x read floor |"),
        "{table}"
    );
    let copy = 2.0 * (512 << 20) as f64 / 256e-6 / 1e12;
    let cell = |bytes: usize, us: f64| {
        let tb_s = bytes as f64 / (us * 1e-6) / 1e12;
        format!("| {tb_s:.2} ({:.0}%) | — |", 100.0 * tb_s / copy)
    };
    // The variant reads its 14 MiB footprint in 100 µs; cuBLAS bf16 reads m*K*2 bytes in 30 µs.
    let row = table.lines().find(|l| l.contains("| **a** |")).unwrap();
    assert!(row.ends_with(&cell(14 << 20, 100.0)), "{row}");
    let row = table.lines().find(|l| l.contains("| cuBLAS bf16")).unwrap();
    assert!(row.ends_with(&cell(2 * 4096 * 4096, 30.0)), "{row}");
    assert_eq!(cell(2 * 4096 * 4096, 30.0), "| 1.12 (27%) | — |");
    assert!(r.legend().contains("copy at 4.19 TB/s"), "{}", r.legend());
}

#[test]
fn prefill_sums_the_best_medians() {
    let mut shapes = Vec::new();
    for (i, (_, m, k)) in LLAMA3_8B_LAYER.iter().enumerate() {
        let s = Shape::new(*m, 512, *k);
        if shapes.iter().any(|r: &ShapeResult| r.shape == s) {
            continue;
        }
        let base = 100.0 * (i + 1) as f64;
        shapes.push(shape_result(
            s,
            vec![
                variant("slow", Some(base * 2.0)),
                variant("fast", Some(base)),
            ],
            base / 2.0,
        ));
    }
    let r = report(shapes);
    let p = r.prefill(512, None);
    // q 100, k 200, v = k's shape 200, o = q's shape 100, gate 500, up = gate 500, down 700.
    assert_eq!(
        p.layer_us,
        Some(100.0 + 200.0 + 200.0 + 100.0 + 500.0 + 500.0 + 700.0)
    );
    assert!(p
        .matmuls
        .iter()
        .all(|m| m.variant.as_deref() == Some("fast")));
    assert_eq!(p.cublas_layer_us, Some(1150.0));
    assert!((p.tokens_per_s().unwrap() - 512.0 / 2300e-6).abs() < 1e-6);
    let only = r.prefill(512, Some("slow"));
    assert_eq!(only.layer_us, Some(4600.0));
    assert!(
        r.prefill(2048, None).layer_us.is_none(),
        "2048 was not measured"
    );
    assert!(
        p.markdown().contains("| **layer** | | | 2300 | 1150 |"),
        "{}",
        p.markdown()
    );
}

#[test]
fn ab_report_per_shape_and_overall() {
    let s1 = Shape::new(4096, 512, 4096);
    let s2 = Shape::new(4096, 2048, 4096);
    let r = report(vec![
        shape_result(
            s1,
            vec![variant("A", Some(100.0)), variant("B", Some(97.0))],
            80.0,
        ),
        shape_result(
            s2,
            vec![variant("A", Some(400.0)), variant("B", Some(399.0))],
            300.0,
        ),
    ]);
    let ab = r.ab("A", "B");
    assert!(ab.shapes[0].1.as_ref().unwrap().lands);
    assert!(!ab.shapes[1].1.as_ref().unwrap().lands);
    let overall = ab.overall.unwrap();
    assert!(!overall.lands, "500 -> 496 is +0.8%");
    let text = ab.text();
    assert!(
        text.contains("4096,512,4096: A 100 µs, B 97.0 µs: +3.09% -> LANDS"),
        "{text}"
    );
    assert!(
        text.contains("overall (sum of medians over 2 shape(s))"),
        "{text}"
    );
    assert!(text.contains("B does not land"), "{text}");

    // B failing parity at a shape: no verdict there, and B cannot land overall.
    let r = report(vec![
        shape_result(
            s1,
            vec![variant("A", Some(100.0)), variant("B", Some(90.0))],
            80.0,
        ),
        shape_result(
            s2,
            vec![variant("A", Some(400.0)), variant("B", None)],
            300.0,
        ),
    ]);
    let ab = r.ab("A", "B");
    assert_eq!(ab.missing, 1);
    assert!(!ab.overall.unwrap().lands);
    assert!(ab
        .text()
        .contains("no verdict: B was not timed: parity failed"));
}

/// On a GPU: two variants and both baselines at one small-n shape, end to end, with few repeats.
#[test]
fn bench_runs_on_the_gpu() {
    let Some(gpu) = crate::testing::gpu_or_skip("bench::bench_runs_on_the_gpu") else {
        return;
    };
    let descs = vec![crate::catalogue::R41, crate::catalogue::FOLD_PER256];
    let cfg = BenchConfig {
        shapes: vec![Shape::new(4096, 8, 4096)],
        warmup: 1,
        repeats: 5,
        ..BenchConfig::default()
    };
    let mut lines = Vec::new();
    let report = run_bench(&gpu, &descs, &cfg, &mut |l: &str| lines.push(l.to_string()))
        .unwrap_or_else(|e| panic!("bench failed to start: {e}"));
    let table = report.markdown_table();
    eprintln!(
        "{}\n{}\n{}",
        lines.join("\n"),
        report.notes().join("\n"),
        table
    );
    assert!(report.aborted.is_none(), "{:?}", report.aborted);
    assert!(report.info.l2_bytes > 0 && report.info.spin_us > 0.0);
    let s = &report.shapes[0];
    assert_eq!(s.error, None);
    assert!(s.buffer_sets >= MIN_BUFFER_SETS);
    for v in &s.variants {
        let st = v
            .total
            .stats()
            .unwrap_or_else(|| panic!("variant {} not timed: {:?}", v.name, v.total));
        assert_eq!(st.n, 5);
        assert!(st.median > 0.0 && st.p20 <= st.median && st.median <= st.p80);
        assert!(v
            .quantizer
            .median()
            .is_some_and(|q| q > 0.0 && q < st.median));
        assert!(v.parity.as_ref().is_some_and(|p| p.passed()));
    }
    match &report.cublas_note {
        // cuBLAS present: both baselines ran, their outputs matched the CPU product, and they were timed.
        None => {
            for b in [&s.cublas_bf16, &s.cublas_f16] {
                let b = b.as_ref().expect("a baseline row");
                assert!(b.rel_error.is_some_and(|e| e < 1e-2), "{b:?}");
                assert!(b.total.median().is_some_and(|t| t > 0.0), "{b:?}");
            }
        }
        Some(note) => eprintln!("SKIPPED cuBLAS part: {note}"),
    }
    let baselines = usize::from(s.cublas_bf16.is_some()) + usize::from(s.cublas_f16.is_some());
    // n = 8 is a decode shape: the read floor was timed there, each geometry after reading every byte.
    let f = s
        .read_floor
        .as_ref()
        .expect("the read floor at a decode shape");
    let best = f
        .best()
        .unwrap_or_else(|| panic!("the floor was not timed: {f:?}"));
    assert!(best.1.median > 0.0 && best.1.n == 5);
    assert!(s
        .variants
        .iter()
        .all(|v| v.total.median().is_some_and(|t| t > best.1.median)));
    assert_eq!(report.json_lines().len(), baselines + descs.len() + 1);
}

#[test]
fn warm_weights_is_said_in_the_legend_and_rows_and_silences_the_rotation_note() {
    let shape = Shape::new(4096, 1, 4096);
    let mut one_set = shape_result(shape, vec![variant("a", Some(11.0))], 15.0);
    one_set.buffer_sets = 1;
    one_set.rotation_bytes = 14 << 20;

    // Cold (the default): one small set is a rotation under three L2s, which the notes flag.
    let cold = report(vec![one_set.clone()]);
    assert!(
        cold.legend().contains("every call reads cold weights"),
        "{}",
        cold.legend()
    );
    assert!(
        cold.notes()
            .iter()
            .any(|n| n.contains("may read warm inputs")),
        "{:?}",
        cold.notes()
    );
    assert!(cold.json_rows().iter().all(|r| !r.warm_weights));

    // Warm: asked for, so said plainly and not flagged.
    let mut warm = report(vec![one_set]);
    warm.config.warm_weights = true;
    assert!(
        warm.legend().contains("--warm-weights"),
        "{}",
        warm.legend()
    );
    assert!(
        !warm
            .notes()
            .iter()
            .any(|n| n.contains("may read warm inputs")),
        "{:?}",
        warm.notes()
    );
    assert!(warm.json_rows().iter().all(|r| r.warm_weights));
}

#[test]
fn the_picks_table_gives_each_shapes_pick_against_the_baselines() {
    let decode = Shape::new(4096, 1, 4096);
    let prefill = Shape::new(4096, 512, 14336);
    let r = report(vec![
        shape_result(
            decode,
            vec![variant("ring", Some(10.0)), variant("other", Some(12.0))],
            15.0,
        ),
        shape_result(prefill, vec![variant("a", Some(400.0))], 200.0),
    ]);
    let picks = vec![
        (decode, Ok("ring".to_string())),
        (prefill, Ok("a".to_string())),
        (Shape::new(64, 1, 256), Err("no rule matches".to_string())),
    ];
    let t = r.picks_table(&picks);
    let lines: Vec<&str> = t.lines().collect();
    assert_eq!(lines.len(), 5, "{t}");
    assert_eq!(
        lines[2],
        "| 4096,1,4096 | ring | 10.0 | 1.50 | — | — | — | — |"
    );
    assert_eq!(
        lines[3],
        "| 4096,512,14336 | a | 400 | 0.50 | 436 | 1.09 | — | — |"
    );
    assert_eq!(
        lines[4],
        "| 64,1,256 | none: no rule matches | — | — | — | — | — | — |"
    );
}

#[test]
fn a_refused_shape_is_reported_and_leaves_the_run_clean() {
    let shape = Shape {
        m: 4096,
        n: 4,
        k: 14336,
    };
    let mut refused = variant("ring_t4", Some(1.0));
    refused.total = Outcome::Refused(
        "variant 'ring_t4' needs 233344 bytes of shared memory per block at K = 14336".into(),
    );
    let r = report(vec![shape_result(
        shape,
        vec![variant("tma_128x128", Some(40.0)), refused],
        33.0,
    )]);
    assert!(r.is_clean(), "a refusal is not a failure");
    let table = r.markdown_table();
    assert!(
        table.contains("| ring_t4 | cannot take this shape: variant 'ring_t4' needs 233344"),
        "{table}"
    );
    assert!(
        r.notes()
            .iter()
            .any(|n| n.contains("ring_t4' at 4096,4,14336: cannot take this shape")),
        "{:?}",
        r.notes()
    );
    let json = r.json_lines().join("\n");
    assert!(json.contains("\"status\":\"refused\""), "{json}");
    // A parity failure still fails the run.
    let failed = report(vec![shape_result(
        shape,
        vec![variant("tma_128x128", None)],
        33.0,
    )]);
    assert!(!failed.is_clean());
}
