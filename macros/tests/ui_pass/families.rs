// A variant declared for a family is declared for every architecture of it, the later ones included.
use mmqgen_codegen::{Arch, ArchSet, VariantDescription};

const STREAM: VariantDescription = mmqgen_macros::variant! {
    name: "stream", engine: stream_dp4a, mode: int_per32, kdr: 8, nbj: 8, tile_n: 1, warps_m: 4, warps_n: 1,
    scale_fetch: narrow, expand: uint4, archs: [turing_and_later],
};

const RING: VariantDescription = mmqgen_macros::variant! {
    name: "ring", engine: stream_ring, mode: int_per32, kdr: 8, nbj: 32, tile_n: 1, warps_m: 8, warps_n: 1,
    scale_fetch: narrow, expand: uint4, stages: 1, archs: [hopper_and_later],
};

const MIXED: VariantDescription = mmqgen_macros::variant! {
    name: "mixed", archs: [sm_75, ampere_and_later],
};

fn main() {
    assert_eq!(STREAM.archs, ArchSet::ALL);
    assert_eq!(
        RING.archs.iter().collect::<Vec<_>>(),
        [Arch::Sm90, Arch::Sm100, Arch::Sm103, Arch::Sm120, Arch::Sm121]
    );
    assert_eq!(MIXED.archs, ArchSet::ALL);
    for v in [&STREAM, &RING, &MIXED] {
        assert_eq!(mmqgen_codegen::validate(v), Ok(()), "{}", v.name);
    }
}
