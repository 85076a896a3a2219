// A sweep as a `const`: the product of its lists, refused points reported at run time, never at build time.
use mmqgen_codegen::sweep::StaticSweep;
use mmqgen_codegen::{canonical_name, validate, Engine};

const RF: StaticSweep = mmqgen_macros::sweep! {
    name: "rf", engine: mma_k32_regfold, mode: int_per32, kdr: 8, scale_fetch: narrow, expand: uint4,
    cp_async_activations: 16, archs: [sm_90], nbj: 128, warps_m: 4,
    stages: [1, 2, 3], tile_n: [64, 128],
};

fn main() {
    // 3 x 2 points; stages 1 is refused for the regfold engine.
    assert_eq!(RF.total, 6);
    let names: Vec<&str> = RF.points.iter().map(|p| p.name.as_ref()).collect();
    assert_eq!(names, ["rf_t64_s2", "rf_t64_s3", "rf_t128_s2", "rf_t128_s3"]);
    assert_eq!(RF.refused.len(), 2);
    assert_eq!(RF.refused[0].name, "rf_t64_s1");
    assert!(RF.refused[0].sentence.starts_with("stages: "), "{}", RF.refused[0].sentence);
    for p in RF.points {
        assert_eq!(p.engine, Engine::MmaK32Regfold);
        assert!(validate(p).is_ok());
    }
    let e = RF.expansion();
    assert_eq!(e.points[0].canonical, canonical_name(&RF.points[0]));
    // Usable outside a const too.
    let local = mmqgen_macros::sweep! { name: "x", stages: [1] };
    assert_eq!(local.points.len(), 1);
}
