// The brief's example as a `const`, with the defaults the expansion fills in (ksplit, allow_spills).
use mmqgen_codegen::{ArchSet, CpAsync, Engine, ExpandWidth, NumericsMode, ScaleFetch, VariantDescription};

pub const R56: VariantDescription = mmqgen_macros::variant! {
    name: "r56", engine: mma_k16, mode: f32_per16, kdr: 2, nbj: 64, tile_n: 64,
    warps_m: 2, warps_n: 2, scale_fetch: plane, expand: uint4,
    cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
};

// Only `name` given: everything else is `VariantDescription::DEFAULTS`.
const MINIMAL: VariantDescription = mmqgen_macros::variant! { name: "minimal" };

// Usable where only constants are: a `static` and an array length.
static R56_STATIC: VariantDescription = R56;
const _: [(); 64] = [(); R56.nbj as usize];

fn main() {
    assert_eq!(R56.name, "r56");
    assert_eq!(R56.engine, Engine::MmaK16);
    assert_eq!(R56.mode, NumericsMode::F32Per16);
    assert_eq!((R56.kdr, R56.nbj, R56.tile_n), (2, 64, 64));
    assert_eq!((R56.warps_m, R56.warps_n, R56.ksplit), (2, 2, 1));
    assert_eq!(R56.scale_fetch, ScaleFetch::Plane);
    assert_eq!(R56.expand, ExpandWidth::Uint4);
    assert_eq!(R56.cp_async_activations, CpAsync::B16);
    assert_eq!(R56.cp_async_plane, CpAsync::B16);
    assert_eq!(R56.stages, 2);
    assert_eq!(R56.archs, ArchSet::EMPTY.with(mmqgen_codegen::Arch::Sm80).with(mmqgen_codegen::Arch::Sm90));
    assert!(!R56.allow_spills);
    assert_eq!(R56_STATIC, R56);
    assert_eq!(mmqgen_codegen::validate(&R56), Ok(()));

    let defaults = VariantDescription { name: "minimal".into(), ..VariantDescription::DEFAULTS };
    assert_eq!(MINIMAL, defaults);
}
