//! Launch geometry: the grid, block and shared memory of each kernel of a module, the matmul's from its launch
//! contract's tile scheduler (docs/KERNELS.md).

use cudarc::driver::LaunchConfig;
use mmqgen_codegen::launch::{LaunchContract, TailSplit, MAX_GRID_YZ};

use super::error::ShapeError;

pub use mmqgen_codegen::launch::{COMBINE_THREADS, QUANTIZER_WARPS};

/// The quantizer launch: one warp per 256 values of a token, [`QUANTIZER_WARPS`] per block, a row of blocks per
/// token.
pub fn quantizer_config(n: usize, k: usize, group: u32) -> Result<LaunchConfig, ShapeError> {
    if group == 0 || !k.is_multiple_of(256) || !k.is_multiple_of(group as usize) {
        return Err(ShapeError::KNotMultiple { k });
    }
    if n as u64 > MAX_GRID_YZ as u64 {
        return Err(ShapeError::Grid {
            what: format!("quantizing n = {n} tokens"),
            axis: "y",
            blocks: n as u64,
            limit: MAX_GRID_YZ,
        });
    }
    // One warp per 256 values of a token (K is a multiple of 256 for every mode), QUANTIZER_WARPS per block.
    Ok(LaunchConfig {
        grid_dim: ((k / 256).div_ceil(QUANTIZER_WARPS) as u32, n as u32, 1),
        block_dim: (32 * QUANTIZER_WARPS as u32, 1, 1),
        shared_mem_bytes: 0,
    })
}

/// The matmul launch of `contract` for `m x n x K` on a GPU that holds `resident` of its blocks at once: the tile
/// scheduler's grid, the contract's block, `dynamic_shared` bytes; and the last-wave split the kernel is told, if
/// its scheduler splits.
pub fn matmul_config(
    contract: &LaunchContract,
    m: usize,
    n: usize,
    k: usize,
    resident: u64,
    dynamic_shared: u32,
) -> Result<(LaunchConfig, Option<TailSplit>), ShapeError> {
    let blocks = contract.schedule.grid(m, n, k, resident)?;
    Ok((
        LaunchConfig {
            grid_dim: blocks.grid,
            block_dim: (contract.threads, 1, 1),
            shared_mem_bytes: dynamic_shared,
        },
        blocks.split,
    ))
}

/// The combine launch: `grid = ceil(n * m / 256)`, 256 threads.
pub fn combine_config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n * m).div_ceil(COMBINE_THREADS as usize) as u32, 1, 1),
        block_dim: (COMBINE_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mmqgen_codegen::VariantDescription;

    fn desc() -> VariantDescription {
        VariantDescription {
            name: "t".into(),
            nbj: 64,
            tile_n: 32,
            warps_m: 2,
            warps_n: 2,
            ..VariantDescription::DEFAULTS
        }
    }

    #[test]
    fn launch_geometry_follows_kernels_md() {
        let d = LaunchContract::of(&desc());
        let (c, split) = matmul_config(&d, 4097, 513, 4096, 132, 0).unwrap();
        assert_eq!(c.grid_dim, (65, 17, 1));
        assert_eq!(c.block_dim, (128, 1, 1));
        assert_eq!(c.shared_mem_bytes, 0);
        assert_eq!(split, None);
        let split = LaunchContract::of(&VariantDescription {
            ksplit: 3,
            ..desc()
        });
        let (c, _) = matmul_config(&split, 64, 1, 4096, 132, 60_000).unwrap();
        assert_eq!((c.grid_dim, c.shared_mem_bytes), ((1, 1, 3), 60_000));
        assert_eq!(
            matmul_config(
                &LaunchContract::of(&VariantDescription { tile_n: 1, ..desc() }),
                64,
                65_536,
                256,
                132,
                0
            )
            .unwrap_err()
            .to_string(),
            "n = 65536 tokens in tiles of 1 needs a grid of 65536 blocks along y, more than CUDA's limit of 65535"
        );

        // One warp per 256 values whatever the group: 11 spans of 256 in 2 blocks of 8 warps (3 spare warps).
        let q = quantizer_config(77, 2816, 32).unwrap();
        assert_eq!((q.grid_dim, q.block_dim), ((2, 77, 1), (256, 1, 1)));
        let q = quantizer_config(77, 2816, 256).unwrap();
        assert_eq!((q.grid_dim, q.block_dim), ((2, 77, 1), (256, 1, 1)));
        assert_eq!(
            quantizer_config(70_000, 256, 32).unwrap_err().to_string(),
            "quantizing n = 70000 tokens needs a grid of 70000 blocks along y, more than CUDA's limit of 65535"
        );

        let c = combine_config(1000, 77);
        assert_eq!((c.grid_dim, c.block_dim), ((301, 1, 1), (256, 1, 1)));
    }
}
