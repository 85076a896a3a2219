//! The tile scheduler: how a call's `m x n x K` maps to blocks (docs/KERNELS.md, "Entry points" and "The last
//! wave"), and what that mapping needs in the workspace. Pure arithmetic on the description's numbers, so that the
//! launcher only reads the grid and the integers it hands the kernel.

use crate::description::{VariantDescription, SEGMENT_SUPERBLOCKS, SUPERBLOCK_K};

/// K values per numerics segment (NUMERICS.md 4): 4 super-blocks of 256.
pub const SEGMENT_K: usize = (SEGMENT_SUPERBLOCKS * SUPERBLOCK_K) as usize;
/// CUDA's limit on `gridDim.y` and `gridDim.z`.
pub const MAX_GRID_YZ: u32 = 65_535;

/// Number of segments of K (`ceil(K / 1024)`), the `nseg` of the split-K segment buffer.
pub fn segment_count(k: usize) -> usize {
    k.div_ceil(SEGMENT_K)
}

/// How the tiles of a call map to blocks along K.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decomposition {
    /// One block a tile, all of K.
    Whole,
    /// `splits` blocks a tile, whole segments each (grid z); a combine kernel adds their partials in K order.
    SplitK { splits: u32 },
    /// Whole tiles, except those of a part-full last wave, which take up to `parts` blocks each (one row of
    /// blocks; the kernel takes `whole_tiles` and `tail_split`).
    LastWaveSplit { parts: u32 },
}

/// A variant's tile scheduler: its tile, its cluster and how K is decomposed. `Copy` and free of allocations, so
/// that a call may ask it about its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileSchedule {
    /// Weight rows of a tile (`nbj`).
    pub tile_rows: u32,
    /// Tokens of a tile (`tile_n`).
    pub tile_tokens: u32,
    /// Blocks of a thread-block cluster along the rows and along the tokens (1 x 1: none).
    pub cluster_rows: u32,
    pub cluster_tokens: u32,
    /// Blocks one SM holds at once (`blocks_per_sm`).
    pub blocks_per_sm: u32,
    pub decomposition: Decomposition,
}

/// A grid the scheduler asked for that CUDA or the kernels' `int`s cannot have; each displays as one sentence.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GridError {
    #[error(
        "{what} needs a grid of {blocks} blocks along {axis}, more than CUDA's limit of {limit}"
    )]
    Axis {
        what: String,
        axis: &'static str,
        blocks: u64,
        limit: u32,
    },
    #[error(
        "{what} = {value} does not fit the kernels' 32-bit int arithmetic (it must stay at or below 2147483647)"
    )]
    TooLarge { what: String, value: usize },
}

/// The blocks of one call: the grid, and for a last-wave split the two integers the kernel takes after its other
/// arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockGrid {
    pub grid: (u32, u32, u32),
    pub split: Option<TailSplit>,
}

/// What a call needs in the workspace beside the activations: f32 slots, and what they hold, for a refusal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkspaceDemand {
    pub slots: usize,
    /// What the slots hold (`segment partials`).
    pub holds: &'static str,
    /// The call that needs them, for a refusal (`a split-K matmul of m = 10, n = 3, K = 4096`).
    pub call: String,
    /// The variant a workspace must be made for (`this split-K variant`).
    pub made_for: String,
}

fn fits_i32(what: impl Into<String>, value: usize) -> Result<i32, GridError> {
    i32::try_from(value).map_err(|_| GridError::TooLarge {
        what: what.into(),
        value,
    })
}

/// The split-K segment buffer's length, `nseg * n * m`, checked against 32-bit indexing.
pub fn segment_len(m: usize, n: usize, k: usize) -> Result<usize, GridError> {
    let len = segment_count(k).saturating_mul(n).saturating_mul(m);
    fits_i32(
        format!(
            "the segment buffer's nseg * n * m (nseg = {}, n = {n}, m = {m})",
            segment_count(k)
        ),
        len,
    )?;
    Ok(len)
}

impl TileSchedule {
    /// The scheduler of `desc`.
    pub fn of(desc: &VariantDescription) -> TileSchedule {
        let decomposition = if desc.ksplit > 1 {
            Decomposition::SplitK {
                splits: desc.ksplit,
            }
        } else if desc.tail_parts > 1 {
            Decomposition::LastWaveSplit {
                parts: desc.tail_parts,
            }
        } else {
            Decomposition::Whole
        };
        TileSchedule {
            tile_rows: desc.nbj,
            tile_tokens: desc.tile_n,
            cluster_rows: desc.cluster_rows,
            cluster_tokens: desc.cluster_tokens,
            blocks_per_sm: desc.blocks_per_sm,
            decomposition,
        }
    }

    /// Blocks a GPU of `multiprocessors` SMs holds at once: a wave.
    pub fn resident_blocks(&self, multiprocessors: u32) -> u64 {
        multiprocessors as u64 * self.blocks_per_sm.max(1) as u64
    }

    /// Tiles of an `m x n` call.
    pub fn tiles(&self, m: usize, n: usize) -> u64 {
        (m.div_ceil(self.tile_rows.max(1) as usize) as u64)
            .saturating_mul(n.div_ceil(self.tile_tokens.max(1) as usize) as u64)
    }

    /// The matmul's blocks for `m x n x K` on a GPU that holds `resident` blocks at once: `(ceil(m / nbj),
    /// ceil(n / tile_n), ksplit)`, x and y rounded up to whole clusters (the blocks past m or n read zeros and
    /// write nothing); a last-wave split puts its whole tiles and the split ones' parts in one row.
    pub fn grid(
        &self,
        m: usize,
        n: usize,
        k: usize,
        resident: u64,
    ) -> Result<BlockGrid, GridError> {
        let (cluster_rows, cluster_tokens) = (
            self.cluster_rows.max(1) as u64,
            self.cluster_tokens.max(1) as u64,
        );
        let gx = (m.div_ceil(self.tile_rows.max(1) as usize) as u64).div_ceil(cluster_rows)
            * cluster_rows;
        let gy = (n.div_ceil(self.tile_tokens.max(1) as usize) as u64).div_ceil(cluster_tokens)
            * cluster_tokens;
        if gx > i32::MAX as u64 {
            return Err(GridError::Axis {
                what: format!("m = {m} weight rows in tiles of {}", self.tile_rows),
                axis: "x",
                blocks: gx,
                limit: i32::MAX as u32,
            });
        }
        if gy > MAX_GRID_YZ as u64 {
            return Err(GridError::Axis {
                what: format!("n = {n} tokens in tiles of {}", self.tile_tokens),
                axis: "y",
                blocks: gy,
                limit: MAX_GRID_YZ,
            });
        }
        let splits = match self.decomposition {
            Decomposition::SplitK { splits } => splits,
            _ => 1,
        };
        if splits as u64 > MAX_GRID_YZ as u64 {
            return Err(GridError::Axis {
                what: format!("ksplit = {splits}"),
                axis: "z",
                blocks: splits as u64,
                limit: MAX_GRID_YZ,
            });
        }
        match self.decomposition {
            Decomposition::LastWaveSplit { .. } => {
                let split = self.tail_split(m, n, k, resident);
                let blocks = fits_i32(
                    "the blocks of the whole and split tiles",
                    split.blocks as usize,
                )?;
                Ok(BlockGrid {
                    grid: (blocks as u32, 1, 1),
                    split: Some(split),
                })
            }
            _ => Ok(BlockGrid {
                grid: (gx as u32, gy as u32, splits.max(1)),
                split: None,
            }),
        }
    }

    /// How a call maps its tiles to blocks with a last-wave split of at most `parts` (1 for the other
    /// decompositions: every tile whole).
    pub fn tail_split(&self, m: usize, n: usize, k: usize, resident: u64) -> TailSplit {
        let parts = match self.decomposition {
            Decomposition::LastWaveSplit { parts } => parts,
            _ => 1,
        };
        TailSplit::of(self.tiles(m, n), parts, k, resident)
    }

    /// What a call of `m x n x K` needs in the workspace beside the activations.
    pub fn workspace_demand(
        &self,
        m: usize,
        n: usize,
        k: usize,
        resident: u64,
    ) -> Result<WorkspaceDemand, GridError> {
        match self.decomposition {
            Decomposition::Whole => Ok(WorkspaceDemand {
                slots: 0,
                holds: "slots",
                call: String::new(),
                made_for: String::new(),
            }),
            Decomposition::SplitK { .. } => Ok(WorkspaceDemand {
                slots: segment_len(m, n, k)?,
                holds: "segment partials",
                call: format!("a split-K matmul of m = {m}, n = {n}, K = {k}"),
                made_for: "this split-K variant".to_string(),
            }),
            Decomposition::LastWaveSplit { parts } => {
                let split = self.tail_split(m, n, k, resident);
                Ok(WorkspaceDemand {
                    slots: split.workspace_len(self, k),
                    holds: "slots for split tiles",
                    call: format!(
                        "this call, which splits {} tiles of {} x {} in {} parts over K = {k},",
                        split.split_tiles(),
                        self.tile_rows,
                        self.tile_tokens,
                        split.split
                    ),
                    made_for: format!("this variant (tail_parts = {parts})"),
                })
            }
        }
    }

    /// The most f32 slots any call up to `max_m x max_n x max_k` needs beside the activations, on a GPU that holds
    /// `resident` blocks at once.
    pub fn max_workspace_slots(
        &self,
        max_m: usize,
        max_n: usize,
        max_k: usize,
        resident: u64,
    ) -> Result<usize, GridError> {
        match self.decomposition {
            Decomposition::Whole => Ok(0),
            Decomposition::SplitK { .. } => segment_len(max_m, max_n, max_k),
            Decomposition::LastWaveSplit { .. } => {
                // A split tile count is at most half a wave (two parts or more fit in one) and at most the tiles
                // there are; at least one slot, so that the workspace has the buffer.
                let most = self.tiles(max_m, max_n).min(resident / 2) as usize;
                Ok(if most == 0 {
                    1
                } else {
                    self.split_tiles_len(most, max_k).max(1)
                })
            }
        }
    }

    /// The wave whose split tiles' counters a poisoned workspace must keep at zero: `resident` for a last-wave
    /// split, else 0 ([`counter_slots_to_zero`]).
    pub fn counter_wave(&self, resident: u64) -> u64 {
        match self.decomposition {
            Decomposition::LastWaveSplit { .. } => resident,
            _ => 0,
        }
    }

    /// f32 slots of `split_tiles` split tiles: their counters, then every segment's sums of each (the tile's
    /// outputs for each segment of K).
    fn split_tiles_len(&self, split_tiles: usize, k: usize) -> usize {
        let parts = match self.decomposition {
            Decomposition::LastWaveSplit { parts } => parts,
            _ => 1,
        };
        TailSplit::counter_slots(split_tiles, parts)
            + split_tiles
                .saturating_mul(segment_count(k))
                .saturating_mul(self.tile_rows as usize * self.tile_tokens as usize)
    }
}

/// The workspace's first slots that must read zero when a call starts, for variants whose largest
/// [`TileSchedule::counter_wave`] is `wave`: the counters of at most half a wave of split tiles, at the most parts
/// any variant takes.
pub fn counter_slots_to_zero(wave: u64) -> usize {
    TailSplit::counter_slots((wave / 2) as usize, crate::validate::MAX_TAIL_PARTS)
}

/// How a call of a variant with a last-wave split maps its tiles to blocks (docs/KERNELS.md, "The last wave"):
/// the first `whole_tiles` tiles take a block each, and the tiles after them, which would leave the last wave of
/// `resident` blocks part-full, `split` blocks each, with whole segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TailSplit {
    pub whole_tiles: u64,
    /// Blocks each of the other tiles takes (1: every tile is whole).
    pub split: u64,
    /// Blocks of the launch.
    pub blocks: u64,
}

impl TailSplit {
    /// The split of `tiles` tiles over K on a GPU that holds `resident` blocks at once: the last wave's tiles take
    /// as many parts as fit in a wave, at most `parts` and the segment count.
    pub fn of(tiles: u64, parts: u32, k: usize, resident: u64) -> TailSplit {
        let tail = tiles % resident.max(1);
        let superblocks = (k / SUPERBLOCK_K as usize) as u64;
        // No tail (tiles fill every wave): no split. Otherwise at least a segment's super-blocks a part, so that a
        // part that continues a segment finds its head long published (docs/KERNELS.md), in parts of
        // ceil(superblocks / most): as many as that makes.
        let split = resident.checked_div(tail).map_or(1, |fit| {
            let most = (parts.max(1) as u64)
                .min(fit)
                .min(superblocks / SEGMENT_SUPERBLOCKS as u64)
                .max(1);
            superblocks.div_ceil(superblocks.div_ceil(most))
        });
        if split == 1 {
            return TailSplit {
                whole_tiles: tiles,
                split: 1,
                blocks: tiles,
            };
        }
        TailSplit {
            whole_tiles: tiles - tail,
            split,
            blocks: tiles - tail + tail * split,
        }
    }

    /// Tiles split into parts.
    pub fn split_tiles(&self) -> u64 {
        (self.blocks - self.whole_tiles) / self.split
    }

    /// f32 slots the split tiles need in the workspace.
    pub fn workspace_len(&self, schedule: &TileSchedule, k: usize) -> usize {
        if self.split == 1 {
            return 0;
        }
        schedule.split_tiles_len(self.split_tiles() as usize, k)
    }

    /// The counters' slots for `split_tiles` tiles of a variant of `parts`: the first of the workspace, `parts` a
    /// tile (its arrivals, then a flag for each cut), rounded up to 32 (the kernel's `split_segment_sums` starts
    /// the sums after them).
    pub fn counter_slots(split_tiles: usize, parts: u32) -> usize {
        (split_tiles * parts as usize).div_ceil(32) * 32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::launch::tests::desc;

    #[test]
    fn the_last_wave_splits_only_where_its_parts_fit_one_wave() {
        let d = TileSchedule::of(&VariantDescription {
            nbj: 128,
            tile_n: 96,
            tail_parts: 3,
            ..desc()
        });
        // 4096 x 2048: 32 x 22 = 704 tiles, 5 waves of 132 and 44 more, which take 3 parts each (of 6, 6 and 4
        // super-blocks); three counters a split tile, then its four segments' sums.
        let s = d.tail_split(4096, 2048, 4096, 132);
        assert_eq!((s.whole_tiles, s.split, s.blocks), (660, 3, 660 + 132));
        assert_eq!(s.split_tiles(), 44);
        assert_eq!(s.workspace_len(&d, 4096), 160 + 44 * 4 * 128 * 96);
        assert_eq!(d.tail_split(4096, 2048, 14336, 132).split, 3);
        // 4096^3: 56 tiles past 10 waves fit two parts each; a part has at least a segment's super-blocks, so
        // K = 1024 does not split, and K = 2048 or 2816 (8 or 11 super-blocks) splits in two, not three.
        assert_eq!(d.tail_split(4096, 4096, 4096, 132).split, 2);
        assert_eq!(d.tail_split(4096, 4096, 1024, 132).split, 1);
        assert_eq!(d.tail_split(4096, 2048, 2048, 132).split, 2);
        assert_eq!(d.tail_split(4096, 2048, 2816, 132).split, 2);
        // 14336 x 2048: 88 tiles past 18 waves: two parts do not fit a wave.
        let whole = d.tail_split(14336, 2048, 4096, 132);
        assert_eq!(
            (whole.split, whole.blocks, whole.workspace_len(&d, 4096)),
            (1, 2464, 0)
        );
        // Fewer tiles than a wave: all of them split, as far as tail_parts allows.
        let small = d.tail_split(333, 9, 4352, 132);
        assert_eq!((small.whole_tiles, small.split, small.blocks), (0, 3, 9));
        // The workspace for any call up to a shape covers every call up to it.
        let most = d.max_workspace_slots(4096, 4096, 14336, 132).unwrap();
        for (m, n, k) in [
            (4096, 2048, 4096),
            (4096, 4096, 14336),
            (333, 9, 4352),
            (4096, 100, 14336),
        ] {
            let demand = d.workspace_demand(m, n, k, 132).unwrap();
            assert!(demand.slots <= most, "{m}x{n}x{k}");
            assert_eq!(
                demand.slots,
                d.tail_split(m, n, k, 132).workspace_len(&d, k)
            );
        }
        // The grid is one row of the whole tiles and the split ones' parts, which the kernel is told.
        let g = d.grid(4096, 2048, 4096, 132).unwrap();
        assert_eq!((g.grid, g.split), ((792, 1, 1), Some(s)));
        // tail_parts = 1 never splits.
        let one = TileSchedule::of(&VariantDescription {
            nbj: 128,
            tile_n: 96,
            ..desc()
        });
        assert_eq!(one.tail_split(4096, 2048, 4096, 132).split, 1);
        assert_eq!(one.grid(4096, 2048, 4096, 132).unwrap().split, None);
        assert_eq!(one.max_workspace_slots(4096, 4096, 14336, 132), Ok(0));
    }

    #[test]
    fn launch_geometry_follows_kernels_md() {
        let d = TileSchedule::of(&desc());
        let c = d.grid(4097, 513, 4096, 132).unwrap();
        assert_eq!((c.grid, c.split), ((65, 17, 1), None));
        let split = TileSchedule::of(&VariantDescription {
            ksplit: 3,
            ..desc()
        });
        assert_eq!(split.grid(64, 1, 4096, 132).unwrap().grid, (1, 1, 3));
        // A cluster of 2 x 2 takes whole pairs of row and token tiles: 65 tiles of 64 rows round up to 66, 17 of
        // 32 tokens to 18.
        let pair = TileSchedule::of(&VariantDescription {
            cluster_rows: 2,
            cluster_tokens: 2,
            ..desc()
        });
        assert_eq!(pair.grid(4097, 513, 4096, 132).unwrap().grid, (66, 18, 1));
        assert_eq!(
            TileSchedule::of(&VariantDescription { tile_n: 1, ..desc() })
                .grid(64, 65_536, 256, 132)
                .unwrap_err()
                .to_string(),
            "n = 65536 tokens in tiles of 1 needs a grid of 65536 blocks along y, more than CUDA's limit of 65535"
        );
        assert_eq!(segment_count(256), 1);
        assert_eq!(segment_count(1024), 1);
        assert_eq!(segment_count(1280), 2);
        assert_eq!(segment_count(2816), 3);
        assert_eq!(segment_len(1000, 77, 2816), Ok(3 * 77 * 1000));
        assert_eq!(
            split.workspace_demand(1000, 77, 2816, 132).unwrap().slots,
            3 * 77 * 1000
        );
        assert_eq!(
            split.max_workspace_slots(1000, 77, 2816, 132),
            Ok(3 * 77 * 1000)
        );
    }
}
