//! Every field of a description reaches the generated code: changing any one field to another legal value
//! changes the kernel body (the header, which records the description, is left out of the comparison). The
//! two fields that must not change the source (architectures, allow_spills) are checked to leave it alone,
//! and canonical names are checked to tell apart any two descriptions that render differently (a change of any one
//! field among them).

use mmqgen::codegen::fields::{set_field, FieldValue};
use mmqgen::codegen::render::render;
use mmqgen::codegen::{canonical_name, validate, VariantDescription};
use std::collections::HashMap;

/// The source after the header comment block.
fn body(source: &str) -> String {
    source
        .lines()
        .skip_while(|line| line.starts_with("//") || line.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

fn with(base: &VariantDescription, changes: &[(&str, FieldValue)]) -> VariantDescription {
    let mut desc = base.clone();
    for (field, value) in changes {
        set_field(&mut desc, field, value).expect("a known field and a well-formed value");
    }
    desc
}

fn word(w: &str) -> FieldValue {
    FieldValue::Word(w.to_string())
}

/// For each field, a change (with whatever companion changes keep the description legal).
fn field_changes() -> Vec<(&'static str, Vec<(&'static str, FieldValue)>)> {
    use FieldValue::Int;
    vec![
        ("engine", vec![("engine", word("mma_k16"))]),
        ("mode", vec![("mode", word("f32_per16"))]),
        ("kdr", vec![("kdr", Int(4))]),
        ("nbj", vec![("nbj", Int(128))]),
        ("tile_n", vec![("tile_n", Int(64))]),
        ("warps_m", vec![("warps_m", Int(4))]),
        ("warps_n", vec![("warps_n", Int(1))]),
        ("ksplit", vec![("ksplit", Int(2))]),
        ("scale_fetch", vec![("scale_fetch", word("wide"))]),
        ("expand", vec![("expand", word("uint4"))]),
        (
            "cp_async_activations",
            vec![("cp_async_activations", Int(16))],
        ),
        (
            "cp_async_plane",
            vec![("scale_fetch", word("plane")), ("cp_async_plane", Int(4))],
        ),
        (
            "stages",
            vec![("cp_async_activations", Int(16)), ("stages", Int(3))],
        ),
        (
            "accumulator_sets",
            vec![
                ("engine", word("mma_k32_prefolded")),
                ("mode", word("int_per256")),
                ("kdr", Int(8)),
                ("scale_fetch", word("plane")),
                ("accumulator_sets", Int(2)),
            ],
        ),
        ("totals", vec![("totals", word("shared"))]),
        ("totals", vec![("totals", word("output"))]),
        ("segment", vec![("segment", word("shared"))]),
        ("blocks_per_sm", vec![("blocks_per_sm", Int(2))]),
        (
            "chunk_unroll",
            vec![
                ("engine", word("mma_k32_regfold")),
                ("mode", word("int_per32")),
                ("kdr", Int(8)),
                ("nbj", Int(64)),
                ("tile_n", Int(64)),
                ("warps_m", Int(4)),
                ("warps_n", Int(1)),
                ("expand", word("uint4")),
                ("cp_async_activations", Int(16)),
                ("stages", Int(2)),
                ("chunk_unroll", Int(2)),
            ],
        ),
        (
            "refill",
            vec![
                ("engine", word("mma_k32_prefolded")),
                ("mode", word("int_per256")),
                ("kdr", Int(8)),
                ("scale_fetch", word("plane")),
                ("cp_async_plane", Int(16)),
                ("stages", Int(2)),
                ("refill", word("spread")),
            ],
        ),
        (
            "quantizer",
            on_ring(1, 8, &[("stages", Int(2)), ("quantizer", word("fused"))]),
        ),
        ("token_unroll", on_ring(4, 16, &[("token_unroll", Int(1))])),
        (
            "ring_lanes",
            on_ring(4, 16, &[("ring_lanes", word("rows"))]),
        ),
        (
            "warps_k",
            on_ring(
                8,
                2,
                &[
                    ("stages", Int(2)),
                    ("refill", word("tma")),
                    ("ring_lanes", word("fragments")),
                    ("warps_k", Int(2)),
                ],
            ),
        ),
        ("cluster_rows", on_int12_engine(&[("cluster_rows", Int(2))])),
        (
            "cluster_tokens",
            on_int12_engine(&[("cluster_tokens", Int(2))]),
        ),
        ("fold_warps", on_int12_engine(&[("fold_warps", Int(4))])),
        (
            "producer",
            on_int12_engine(&[("producer", word("warpgroup"))]),
        ),
        ("tail_parts", on_int12_engine(&[("tail_parts", Int(2))])),
    ]
}

/// The declared int12 engine's description (`wgmma_k32_regfold`, `int12_per256`, 128 x 64, `refill = tma`), then
/// `changes`: the fields only it takes.
fn on_int12_engine(changes: &[(&'static str, FieldValue)]) -> Vec<(&'static str, FieldValue)> {
    use FieldValue::Int;
    let mut engine = vec![
        ("engine", word("wgmma_k32_regfold")),
        ("mode", word("int12_per256")),
        ("kdr", Int(8)),
        ("nbj", Int(128)),
        ("tile_n", Int(64)),
        ("warps_m", Int(8)),
        ("warps_n", Int(1)),
        ("scale_fetch", word("narrow")),
        ("expand", word("uint4")),
        ("stages", Int(2)),
        ("refill", word("tma")),
        ("archs", FieldValue::List(vec![word("sm_90")])),
    ];
    engine.extend_from_slice(changes);
    engine
}

/// A legal `stream_ring` description of 32 rows, `tile_n` tokens and `warps_m` warps, then `changes`: the fields
/// only that engine takes.
fn on_ring(
    tile_n: i64,
    warps_m: i64,
    changes: &[(&'static str, FieldValue)],
) -> Vec<(&'static str, FieldValue)> {
    use FieldValue::Int;
    let mut ring = vec![
        ("engine", word("stream_ring")),
        ("kdr", Int(8)),
        ("nbj", Int(32)),
        ("tile_n", Int(tile_n)),
        ("warps_m", Int(warps_m)),
        ("warps_n", Int(1)),
        ("expand", word("uint4")),
        ("archs", FieldValue::List(vec![word("sm_90")])),
    ];
    ring.extend(changes.iter().cloned());
    ring
}

/// The catalogue's dp4a variant, declared for sm_80 and sm_90 only: the base the other engines are swapped into
/// (it is declared for Turing too, which has none of their mma shapes).
fn dp4a_on_ampere_and_hopper() -> VariantDescription {
    with(
        &mmqgen::catalogue::DP4A_INT_PER32,
        &[(
            "archs",
            FieldValue::List(vec![word("sm_80"), word("sm_90")]),
        )],
    )
}

#[test]
fn every_field_but_name_archs_and_allow_spills_is_covered() {
    let covered: Vec<&str> = field_changes().iter().map(|(field, _)| *field).collect();
    for field in mmqgen::codegen::fields::FIELDS {
        if !["name", "archs", "allow_spills"].contains(&field) {
            assert!(
                covered.contains(&field),
                "field `{field}` has no change in field_changes()"
            );
        }
    }
}

#[test]
fn each_field_changes_the_kernel_body() {
    let base = dp4a_on_ampere_and_hopper();
    let base_body = body(&render(&base).unwrap().source);
    for (field, changes) in field_changes() {
        let changed = with(&base, &changes);
        validate(&changed)
            .unwrap_or_else(|e| panic!("changing {field} made an invalid description: {e:?}"));
        let changed_body = body(&render(&changed).unwrap().source);
        // Companion changes alone must not explain the difference: compare against the companions applied.
        let companions: Vec<(&str, FieldValue)> = changes
            .iter()
            .filter(|(f, _)| *f != field)
            .cloned()
            .collect();
        let reference_desc = with(&base, &companions);
        let reference = body(&render(&reference_desc).unwrap().source);
        assert_ne!(
            changed_body, reference,
            "field `{field}` did not change the generated kernel body"
        );
        assert_ne!(
            canonical_name(&changed),
            canonical_name(&reference_desc),
            "field `{field}` changed the kernel but not its canonical name"
        );
        assert_ne!(
            changed_body, base_body,
            "field `{field}` did not change the generated kernel body"
        );
    }
}

#[test]
fn arch_list_and_allow_spills_leave_the_source_alone() {
    let base = mmqgen::catalogue::R56;
    let source = render(&base).unwrap().source;
    let only_sm90 = with(&base, &[("archs", FieldValue::List(vec![word("sm_90")]))]);
    let spilling = with(&base, &[("allow_spills", FieldValue::Bool(true))]);
    assert_eq!(render(&only_sm90).unwrap().source, source);
    assert_eq!(render(&spilling).unwrap().source, source);
    assert_eq!(canonical_name(&only_sm90), canonical_name(&base));
}

#[test]
fn descriptions_that_render_differently_have_different_canonical_names() {
    // A grid over the fields, legal combinations only.
    let mut by_name: HashMap<String, String> = HashMap::new();
    let mut rendered = 0;
    for engine in [
        "dp4a",
        "mma_k16",
        "mma_k32_fold",
        "mma_k32_prefolded",
        "wgmma_k32_prefolded",
    ] {
        for mode in ["f32_per16", "int_per32", "int_per256"] {
            for fetch in ["narrow", "wide", "plane"] {
                for (kdr, cpa, stages) in [(1, 0, 1), (2, 16, 2), (8, 8, 1)] {
                    let desc = with(
                        &dp4a_on_ampere_and_hopper(),
                        &[
                            ("engine", word(engine)),
                            ("mode", word(mode)),
                            ("scale_fetch", word(fetch)),
                            ("kdr", FieldValue::Int(kdr)),
                            (
                                "cp_async_activations",
                                if cpa == 0 {
                                    word("off")
                                } else {
                                    FieldValue::Int(cpa)
                                },
                            ),
                            ("stages", FieldValue::Int(stages)),
                        ],
                    );
                    if validate(&desc).is_err() {
                        continue;
                    }
                    let source = render(&desc).unwrap().source;
                    rendered += 1;
                    if let Some(previous) = by_name.insert(canonical_name(&desc), source.clone()) {
                        assert_eq!(
                            previous,
                            source,
                            "two different sources share {}",
                            canonical_name(&desc)
                        );
                    }
                }
            }
        }
    }
    assert!(
        rendered > 40,
        "the grid should cover many legal descriptions, got {rendered}"
    );
}
