pub const R56_KDR4: VariantDescription = variant! {
    name: "r56_kdr4", engine: mma_k16, mode: f32_per16, kdr: 4, nbj: 64, tile_n: 64,
    warps_m: 2, warps_n: 2, scale_fetch: plane, expand: uint4,
    cp_async_activations: 16, cp_async_plane: 16, stages: 2, archs: [sm_80, sm_90],
};
