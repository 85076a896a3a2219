//! The read floor in the table, the picks table, the JSON rows and the notes.

use super::*;

fn floor(medians: &[Option<f64>]) -> FloorResult {
    FloorResult {
        bytes: 14_680_064,
        geometries: FLOOR_GEOMETRIES
            .iter()
            .zip(medians)
            .map(|(&g, m)| {
                (
                    g,
                    m.map_or(Outcome::NotTimed("the reader faulted".into()), |m| {
                        Outcome::Timed(stats(m))
                    }),
                )
            })
            .collect(),
        launch_bound: 0,
    }
}

#[test]
fn decode_rows_give_their_ratio_to_the_read_floor() {
    let shape = Shape::new(4096, 1, 4096);
    let mut s = shape_result(
        shape,
        vec![variant("ring", Some(9.0)), variant("other", Some(12.0))],
        15.0,
    );
    // The second geometry is the fastest: 7.5 µs.
    s.read_floor = Some(floor(&[Some(8.0), Some(7.5), Some(9.0), None]));
    let r = report(vec![s.clone()]);
    assert_eq!(r.shapes[0].floor_us(), Some(7.5));
    assert!(r.is_clean(), "a geometry that failed is not the floor");

    let table = r.markdown_table();
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.contains(&format!("| {name} |")))
            .unwrap_or_else(|| panic!("no row {name}: {table}"))
            .to_string()
    };
    assert!(row("**ring**").ends_with("| 1.20 |"), "{table}");
    assert!(row("other").ends_with("| 1.60 |"), "{table}");
    assert!(row("cuBLAS bf16").ends_with("| 2.00 |"), "{table}");
    // 14.68 MB in 7.5 µs is 1.96 TB/s, 47% of the 4.19 TB/s copy.
    assert_eq!(
        row("read floor (256 threads x 2/SM)"),
        "| 4096,1,4096 | read floor (256 threads x 2/SM) | 7.5 | 7.4–7.6 | 20 | — | — | — | — | — | — | \
         14.0 MiB (1.07x) | 1.96 (47%) | 1.00 |"
    );
    let columns = |l: &str| l.matches('|').count();
    assert!(table.lines().all(|l| columns(l) == 15), "{table}");
    assert!(r
        .legend()
        .contains("'x read floor' = this time / the floor's"));

    let picks = r.picks_table(&[(shape, Ok("ring".to_string()))]);
    assert_eq!(
        picks.lines().nth(2).unwrap(),
        "| 4096,1,4096 | ring | 9.0 | 1.67 | — | — | 7.5 | 1.20 |"
    );

    let rows = r.json_rows();
    let ring = rows
        .iter()
        .find(|r| r.variant.as_deref() == Some("ring"))
        .unwrap();
    assert_eq!(ring.read_floor_us, Some(Some(7.5)));
    assert!((ring.x_read_floor.unwrap().unwrap() - 1.2).abs() < 1e-12);
    let f = rows.iter().find(|r| r.kind == "read_floor").unwrap();
    assert_eq!(
        (f.median_us, f.floor_geometry.as_deref(), f.weight_bytes),
        (Some(7.5), Some("256 threads x 2/SM"), Some(14_680_064))
    );
    assert_eq!((f.tflops, f.x_cublas_bf16), (None, None));
    for (row, line) in rows.iter().zip(r.json_lines()) {
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        let back: BenchRow = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&back).unwrap(), value, "{line}");
        assert_eq!(&back.kind, &row.kind);
    }

    // A floor that could not be timed: said in a note and in its row, no ratios, and the run is not clean.
    let mut failed = s;
    failed.read_floor = Some(floor(&[None, None]));
    let r = report(vec![failed]);
    assert!(!r.is_clean());
    assert!(
        r.notes()
            .iter()
            .any(|n| n == "the read floor at 4096,1,4096: not timed: the reader faulted"),
        "{:?}",
        r.notes()
    );
    let table = r.markdown_table();
    assert!(
        table.contains("| read floor | not timed: the reader faulted |"),
        "{table}"
    );
    assert!(table.lines().all(|l| columns(l) == 15), "{table}");
    let rows = r.json_rows();
    assert!(
        rows.iter().all(|r| r.read_floor_us == Some(None)),
        "{rows:?}"
    );
    let f = rows.iter().find(|r| r.kind == "read_floor").unwrap();
    assert_eq!(f.status, "not_timed");
}
