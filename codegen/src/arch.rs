//! The GPU architectures mmqgen generates code for, as families of features: which instructions each one has
//! (and whether a module that uses them must be compiled for the arch-specific `a` target), and its shared memory.
//! This is the one table; the validator, the renderer's choice of NVRTC target, the selection config, the library
//! and the CLI all read it.
//!
//! Sources. Instructions: the PTX ISA's target notes (PTX ISA 9.0, the CUDA 13.0 release), as NVIDIA's CCCL
//! `cuda::ptx` bindings list them per instruction (`SM_90`, `SM_90a`, `SM_100a`, ...), checked against what NVRTC
//! 13.0's ptxas accepts (the test `arch_table_matches_nvrtc` compiles a probe of every feature for every
//! architecture). Shared memory: the CUDA programming guide's compute capability sections (an SM's shared-memory
//! capacity, and the most one block may opt into; the 1 KiB between them is reserved per block). The
//! architectures are those NVRTC 13.0 compiles for (`nvrtcGetSupportedArchs`: 75, 80, 86, 87, 88, 89, 90, 100, 103,
//! 110, 120, 121) that GPUs people run q6_K models on have; sm_88 and sm_110 (Jetson Thor) are left out until
//! their shared-memory limits are checked against the guide.

use std::fmt;

/// A GPU architecture mmqgen generates code for (a compute capability).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Arch {
    Sm75,
    Sm80,
    Sm86,
    Sm87,
    Sm89,
    Sm90,
    Sm100,
    Sm103,
    Sm120,
    Sm121,
}

/// What one architecture is: the facts of [`ARCHS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchSpec {
    pub arch: Arch,
    /// `sm_86`: the keyword in descriptions and configs, and the plain NVRTC target.
    pub keyword: &'static str,
    /// `(8, 6)`.
    pub compute_capability: (u32, u32),
    /// The generation's name: `Ampere`.
    pub generation: &'static str,
    /// GPUs of this compute capability, for people: `RTX 3090, A10, A40, RTX A6000`.
    pub gpus: &'static str,
    /// Shared memory of one SM.
    pub shared_bytes_per_sm: u32,
    /// The most shared memory one block may opt into (the SM's, less the 1 KiB reserved per block, where the
    /// guide reserves it).
    pub max_shared_bytes_per_block: u32,
    /// Whether NVRTC has an arch-specific target for it (`sm_90a`): where arch-specific instructions live.
    pub arch_specific_target: bool,
}

const KIB: u32 = 1024;

/// Every architecture, oldest first.
pub const ARCHS: [ArchSpec; 10] = [
    ArchSpec {
        arch: Arch::Sm75,
        keyword: "sm_75",
        compute_capability: (7, 5),
        generation: "Turing",
        gpus: "T4, RTX 2080 Ti, Quadro RTX 8000",
        // Turing's carveout is 32 or 64 KiB, and a block may have all of it.
        shared_bytes_per_sm: 64 * KIB,
        max_shared_bytes_per_block: 64 * KIB,
        arch_specific_target: false,
    },
    ArchSpec {
        arch: Arch::Sm80,
        keyword: "sm_80",
        compute_capability: (8, 0),
        generation: "Ampere",
        gpus: "A100, A30",
        shared_bytes_per_sm: 164 * KIB,
        max_shared_bytes_per_block: 163 * KIB,
        arch_specific_target: false,
    },
    ArchSpec {
        arch: Arch::Sm86,
        keyword: "sm_86",
        compute_capability: (8, 6),
        generation: "Ampere",
        gpus: "RTX 3090, RTX 3080, A10, A40, RTX A6000",
        shared_bytes_per_sm: 100 * KIB,
        max_shared_bytes_per_block: 99 * KIB,
        arch_specific_target: false,
    },
    ArchSpec {
        arch: Arch::Sm87,
        keyword: "sm_87",
        compute_capability: (8, 7),
        generation: "Ampere",
        gpus: "Jetson AGX Orin, Jetson Orin Nano",
        shared_bytes_per_sm: 164 * KIB,
        max_shared_bytes_per_block: 163 * KIB,
        arch_specific_target: false,
    },
    ArchSpec {
        arch: Arch::Sm89,
        keyword: "sm_89",
        compute_capability: (8, 9),
        generation: "Ada",
        gpus: "RTX 4090, RTX 4080, L4, L40S, RTX 6000 Ada",
        shared_bytes_per_sm: 100 * KIB,
        max_shared_bytes_per_block: 99 * KIB,
        arch_specific_target: false,
    },
    ArchSpec {
        arch: Arch::Sm90,
        keyword: "sm_90",
        compute_capability: (9, 0),
        generation: "Hopper",
        gpus: "H100, H200, GH200",
        shared_bytes_per_sm: 228 * KIB,
        max_shared_bytes_per_block: 227 * KIB,
        arch_specific_target: true,
    },
    ArchSpec {
        arch: Arch::Sm100,
        keyword: "sm_100",
        compute_capability: (10, 0),
        generation: "Blackwell",
        gpus: "B200, GB200",
        shared_bytes_per_sm: 228 * KIB,
        max_shared_bytes_per_block: 227 * KIB,
        arch_specific_target: true,
    },
    ArchSpec {
        arch: Arch::Sm103,
        keyword: "sm_103",
        compute_capability: (10, 3),
        generation: "Blackwell",
        gpus: "B300, GB300",
        shared_bytes_per_sm: 228 * KIB,
        max_shared_bytes_per_block: 227 * KIB,
        arch_specific_target: true,
    },
    ArchSpec {
        arch: Arch::Sm120,
        keyword: "sm_120",
        compute_capability: (12, 0),
        generation: "Blackwell",
        gpus: "RTX 5090, RTX 5080, RTX PRO 6000 Blackwell",
        shared_bytes_per_sm: 100 * KIB,
        max_shared_bytes_per_block: 99 * KIB,
        arch_specific_target: true,
    },
    ArchSpec {
        arch: Arch::Sm121,
        keyword: "sm_121",
        compute_capability: (12, 1),
        generation: "Blackwell",
        gpus: "DGX Spark (GB10)",
        shared_bytes_per_sm: 100 * KIB,
        max_shared_bytes_per_block: 99 * KIB,
        arch_specific_target: true,
    },
];

/// An instruction family a module may use, as the PTX ISA names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Feature {
    /// `dp4a` (`__dp4a`): four int8 products summed into an int32.
    Dp4a,
    /// `cp.async` (4/8/16-byte global-to-shared copies, `commit_group`/`wait_group`, `cp.async.mbarrier.arrive`).
    CpAsync,
    /// `mma.sync.aligned.m16n8k16` on s8/u8 operands.
    MmaS8K16,
    /// `mma.sync.aligned.m16n8k32` on s8 operands.
    MmaS8K32,
    /// `ldmatrix.sync.aligned.m8n8`.
    Ldmatrix,
    /// mbarriers with transaction counts: `mbarrier.arrive.expect_tx`, `mbarrier.try_wait.parity`.
    MbarrierTx,
    /// Bulk copies: `cp.async.bulk` from global to shared memory, completing on an mbarrier.
    BulkCopy,
    /// Tensor copies (TMA): `cp.async.bulk.tensor`, completing on an mbarrier.
    TensorCopy,
    /// Thread-block clusters: `__cluster_dims__`, `barrier.cluster`, `mapa` (distributed shared memory).
    Clusters,
    /// Tensor copies multicast to the blocks of a cluster: `cp.async.bulk.tensor ... .multicast::cluster`.
    TensorCopyMulticast,
    /// Warpgroup MMA: `wgmma.mma_async` with `wgmma.fence`/`commit_group`/`wait_group`.
    Wgmma,
    /// `setmaxnreg`: warpgroups handing registers to each other.
    Setmaxnreg,
    /// Programmatic dependent launch: `griddepcontrol.wait` / `.launch_dependents`. The kernels use it only
    /// where the architecture has it (`#if __CUDA_ARCH__ >= 900`), so no variant needs it.
    GridDependencyControl,
}

/// Whether an architecture has a feature, and how a module that uses it must be compiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Support {
    /// The architecture lacks it.
    Absent,
    /// Available on the plain target (`sm_90`), and on every later one.
    Plain,
    /// Available only on the arch-specific target (`sm_90a`): a module that uses it is compiled for that target,
    /// whose code runs on this architecture only.
    ArchSpecific,
}

impl Feature {
    pub const ALL: [Feature; 13] = [
        Feature::Dp4a,
        Feature::CpAsync,
        Feature::MmaS8K16,
        Feature::MmaS8K32,
        Feature::Ldmatrix,
        Feature::MbarrierTx,
        Feature::BulkCopy,
        Feature::TensorCopy,
        Feature::Clusters,
        Feature::TensorCopyMulticast,
        Feature::Wgmma,
        Feature::Setmaxnreg,
        Feature::GridDependencyControl,
    ];

    /// What sentences call it: `bulk copies (cp.async.bulk)`.
    pub const fn description(self) -> &'static str {
        match self {
            Feature::Dp4a => "dp4a",
            Feature::CpAsync => "cp.async copies",
            Feature::MmaS8K16 => "int8 mma.sync m16n8k16",
            Feature::MmaS8K32 => "int8 mma.sync m16n8k32",
            Feature::Ldmatrix => "ldmatrix",
            Feature::MbarrierTx => "mbarriers with transaction counts (mbarrier.expect_tx)",
            Feature::BulkCopy => "bulk copies (cp.async.bulk)",
            Feature::TensorCopy => "tensor copies (TMA, cp.async.bulk.tensor)",
            Feature::Clusters => "thread-block clusters (barrier.cluster, mapa)",
            Feature::TensorCopyMulticast => {
                "tensor copies multicast to a cluster (.multicast::cluster)"
            }
            Feature::Wgmma => "wgmma (warpgroup MMA)",
            Feature::Setmaxnreg => "setmaxnreg",
            Feature::GridDependencyControl => "programmatic dependent launch (griddepcontrol)",
        }
    }

    /// The PTX (or CUDA intrinsic) spelling that only a module using the feature contains: how a test finds the
    /// features of a generated module in its source.
    pub const fn markers(self) -> &'static [&'static str] {
        match self {
            Feature::Dp4a => &["__dp4a("],
            Feature::CpAsync => &[
                "cp.async.ca.shared.global",
                "cp.async.cg.shared.global",
                "cp.async.commit_group",
                "cp.async.mbarrier.arrive",
            ],
            Feature::MmaS8K16 => &["mma.sync.aligned.m16n8k16"],
            Feature::MmaS8K32 => &["mma.sync.aligned.m16n8k32"],
            Feature::Ldmatrix => &["ldmatrix.sync"],
            Feature::MbarrierTx => &["mbarrier.arrive.expect_tx", "mbarrier.try_wait"],
            Feature::BulkCopy => &["cp.async.bulk.shared"],
            Feature::TensorCopy => &["cp.async.bulk.tensor"],
            Feature::Clusters => &["__cluster_dims__", "barrier.cluster", "mapa."],
            Feature::TensorCopyMulticast => &[".multicast::cluster"],
            Feature::Wgmma => &["wgmma."],
            Feature::Setmaxnreg => &["setmaxnreg."],
            Feature::GridDependencyControl => &["griddepcontrol."],
        }
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

impl fmt::Display for Feature {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.description())
    }
}

impl Arch {
    /// Every architecture, oldest first (the order of [`ARCHS`]).
    pub const ALL: [Arch; 10] = {
        let mut all = [Arch::Sm75; ARCHS.len()];
        let mut i = 0;
        while i < ARCHS.len() {
            all[i] = ARCHS[i].arch;
            i += 1;
        }
        all
    };

    /// Its row of [`ARCHS`].
    pub const fn spec(self) -> &'static ArchSpec {
        &ARCHS[self as usize]
    }
    pub const fn keyword(self) -> &'static str {
        self.spec().keyword
    }
    /// Compute capability as (major, minor).
    pub const fn compute_capability(self) -> (u32, u32) {
        self.spec().compute_capability
    }
    /// Shared memory of one SM; each resident block also reserves 1 KiB of it.
    pub const fn shared_bytes_per_sm(self) -> u32 {
        self.spec().shared_bytes_per_sm
    }
    /// Largest shared memory one block may opt into.
    pub const fn max_shared_bytes_per_block(self) -> u32 {
        self.spec().max_shared_bytes_per_block
    }
    /// The architecture of compute capability `cc`, when mmqgen knows it.
    pub fn from_compute_capability(cc: (u32, u32)) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.compute_capability() == cc)
    }
    /// `sm_86` -> [`Arch::Sm86`].
    pub fn from_keyword(keyword: &str) -> Option<Arch> {
        Arch::ALL.into_iter().find(|a| a.keyword() == keyword)
    }

    /// Whether this architecture has `feature`, and on which target (the PTX ISA's target notes).
    pub const fn support(self, feature: Feature) -> Support {
        match feature {
            // dp4a: sm_61; ldmatrix: sm_75.
            Feature::Dp4a | Feature::Ldmatrix => Support::Plain,
            // cp.async and the int8 m16n8k16 / m16n8k32 mma.sync shapes: sm_80 (Turing has m8n8k16 only).
            Feature::CpAsync | Feature::MmaS8K16 | Feature::MmaS8K32 => self.plain_from((8, 0)),
            // mbarrier.expect_tx and try_wait, bulk and tensor copies, clusters, griddepcontrol: sm_90.
            Feature::MbarrierTx
            | Feature::BulkCopy
            | Feature::TensorCopy
            | Feature::Clusters
            | Feature::GridDependencyControl => self.plain_from((9, 0)),
            // The PTX ISA names sm_90a and the sm_100a family (sm_100a, sm_103a; sm_110a) for multicast; ptxas
            // accepts it elsewhere only with an advisory that it will be slow, and consumer Blackwell (sm_120,
            // sm_121) has no multicast.
            Feature::TensorCopyMulticast => match self {
                Arch::Sm90 | Arch::Sm100 | Arch::Sm103 => Support::ArchSpecific,
                _ => Support::Absent,
            },
            // wgmma: sm_90a only (Blackwell's tensor cores take tcgen05 or mma.sync instead).
            Feature::Wgmma => match self {
                Arch::Sm90 => Support::ArchSpecific,
                _ => Support::Absent,
            },
            // setmaxnreg: sm_90a, sm_100a, sm_103a, sm_120a, sm_121a.
            Feature::Setmaxnreg => {
                if self.spec().arch_specific_target {
                    Support::ArchSpecific
                } else {
                    Support::Absent
                }
            }
        }
    }

    /// [`Support::Plain`] from compute capability `first` on.
    const fn plain_from(self, first: (u32, u32)) -> Support {
        let cc = self.compute_capability();
        if cc.0 > first.0 || (cc.0 == first.0 && cc.1 >= first.1) {
            Support::Plain
        } else {
            Support::Absent
        }
    }

    /// Whether this architecture has `feature` at all.
    pub const fn has(self, feature: Feature) -> bool {
        !matches!(self.support(feature), Support::Absent)
    }

    /// The NVRTC target of a module using `features` on this architecture: the arch-specific `sm_90a` where one
    /// of them is arch-specific here, else the plain `sm_90`.
    pub fn nvrtc_target(self, features: FeatureSet) -> String {
        let arch_specific = features
            .iter()
            .any(|f| self.support(f) == Support::ArchSpecific);
        if arch_specific {
            format!("{}a", self.keyword())
        } else {
            self.keyword().to_string()
        }
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// Every architecture's keyword, for sentences: `sm_75, sm_80, ... and sm_121`.
pub fn supported_list() -> String {
    ArchSet::ALL.list()
}

/// The sentence for a GPU of compute capability `cc` that mmqgen does not know.
pub fn unknown_gpu_sentence(cc: (u32, u32)) -> String {
    format!(
        "this GPU has compute capability {}.{} (sm_{}{}), which mmqgen does not know: it generates code for {}",
        cc.0,
        cc.1,
        cc.0,
        cc.1,
        supported_list()
    )
}

/// A set of architectures, as bits so that it stays const-constructible.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArchSet(pub u16);

impl ArchSet {
    pub const EMPTY: ArchSet = ArchSet(0);
    /// Every architecture of the table.
    pub const ALL: ArchSet = {
        let mut set = ArchSet::EMPTY;
        let mut i = 0;
        while i < Arch::ALL.len() {
            set = set.with(Arch::ALL[i]);
            i += 1;
        }
        set
    };
    pub const fn with(self, arch: Arch) -> ArchSet {
        ArchSet(self.0 | arch.bit())
    }
    pub const fn contains(self, arch: Arch) -> bool {
        self.0 & arch.bit() != 0
    }
    pub fn iter(self) -> impl Iterator<Item = Arch> {
        Arch::ALL.into_iter().filter(move |a| self.contains(*a))
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    pub const fn union(self, other: ArchSet) -> ArchSet {
        ArchSet(self.0 | other.0)
    }
    pub const fn intersection(self, other: ArchSet) -> ArchSet {
        ArchSet(self.0 & other.0)
    }
    /// The architectures of `self` not in `other`.
    pub const fn without(self, other: ArchSet) -> ArchSet {
        ArchSet(self.0 & !other.0)
    }
    /// The architectures that have every feature of `features`.
    pub fn having(features: FeatureSet) -> ArchSet {
        Arch::ALL
            .into_iter()
            .filter(|a| features.iter().all(|f| a.has(f)))
            .fold(ArchSet::EMPTY, ArchSet::with)
    }
    /// `sm_80, sm_86 and sm_90`, or `sm_90` (each with its arch-specific target where `features` need it:
    /// `sm_90 (as sm_90a)`).
    pub fn list_for(self, features: FeatureSet) -> String {
        let names: Vec<String> = self
            .iter()
            .map(|a| {
                let target = a.nvrtc_target(features);
                if target == a.keyword() {
                    target
                } else {
                    format!("{} (as {target})", a.keyword())
                }
            })
            .collect();
        join_and(&names)
    }
    /// `sm_80, sm_86 and sm_90`.
    pub fn list(self) -> String {
        self.list_for(FeatureSet::EMPTY)
    }
}

fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

impl fmt::Display for ArchSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Arch::keyword).collect();
        write!(f, "[{}]", names.join(", "))
    }
}

/// A named set of architectures a description may declare instead of listing them: a generation and every
/// later one in the table, so that an architecture added later joins the variants declared for its family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArchFamily {
    /// `ampere_and_later`.
    pub keyword: &'static str,
    /// The first compute capability of the family.
    pub from: (u32, u32),
}

/// The families, oldest first.
pub const ARCH_FAMILIES: [ArchFamily; 5] = [
    ArchFamily {
        keyword: "turing_and_later",
        from: (7, 5),
    },
    ArchFamily {
        keyword: "ampere_and_later",
        from: (8, 0),
    },
    ArchFamily {
        keyword: "ada_and_later",
        from: (8, 9),
    },
    ArchFamily {
        keyword: "hopper_and_later",
        from: (9, 0),
    },
    ArchFamily {
        keyword: "blackwell_and_later",
        from: (10, 0),
    },
];

impl ArchFamily {
    /// The family called `keyword`.
    pub fn from_keyword(keyword: &str) -> Option<ArchFamily> {
        ARCH_FAMILIES.into_iter().find(|f| f.keyword == keyword)
    }
    /// Its architectures.
    pub fn archs(self) -> ArchSet {
        Arch::ALL
            .into_iter()
            .filter(|a| a.compute_capability() >= self.from)
            .fold(ArchSet::EMPTY, ArchSet::with)
    }
}

/// A set of features, as bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct FeatureSet(pub u16);

impl FeatureSet {
    pub const EMPTY: FeatureSet = FeatureSet(0);
    pub const fn with(self, feature: Feature) -> FeatureSet {
        FeatureSet(self.0 | feature.bit())
    }
    pub const fn union(self, other: FeatureSet) -> FeatureSet {
        FeatureSet(self.0 | other.0)
    }
    pub const fn contains(self, feature: Feature) -> bool {
        self.0 & feature.bit() != 0
    }
    pub fn iter(self) -> impl Iterator<Item = Feature> {
        Feature::ALL.into_iter().filter(move |f| self.contains(*f))
    }
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl FromIterator<Feature> for FeatureSet {
    fn from_iter<I: IntoIterator<Item = Feature>>(iter: I) -> FeatureSet {
        iter.into_iter().fold(FeatureSet::EMPTY, FeatureSet::with)
    }
}

impl fmt::Display for FeatureSet {
    /// `bulk copies (cp.async.bulk) and mbarriers with transaction counts (mbarrier.expect_tx)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<String> = self.iter().map(|x| x.description().to_string()).collect();
        f.write_str(&join_and(&names))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_in_order_and_each_row_is_its_arch() {
        for (at, spec) in ARCHS.iter().enumerate() {
            assert_eq!(spec.arch as usize, at, "{}", spec.keyword);
            assert_eq!(Arch::ALL[at], spec.arch);
            let (major, minor) = spec.compute_capability;
            assert_eq!(spec.keyword, format!("sm_{major}{minor}"));
            assert_eq!(Arch::from_keyword(spec.keyword), Some(spec.arch));
            assert_eq!(
                Arch::from_compute_capability(spec.compute_capability),
                Some(spec.arch)
            );
        }
        assert!(ARCHS
            .windows(2)
            .all(|w| w[0].compute_capability < w[1].compute_capability));
        assert_eq!(Arch::from_compute_capability((7, 0)), None);
        assert_eq!(Arch::from_keyword("sm_88"), None);
    }

    #[test]
    fn shared_memory_follows_the_guide() {
        let kib = |a: Arch| {
            (
                a.shared_bytes_per_sm() / 1024,
                a.max_shared_bytes_per_block() / 1024,
            )
        };
        assert_eq!(kib(Arch::Sm75), (64, 64));
        for a in [Arch::Sm80, Arch::Sm87] {
            assert_eq!(kib(a), (164, 163), "{a}");
        }
        for a in [Arch::Sm86, Arch::Sm89, Arch::Sm120, Arch::Sm121] {
            assert_eq!(kib(a), (100, 99), "{a}");
        }
        for a in [Arch::Sm90, Arch::Sm100, Arch::Sm103] {
            assert_eq!(kib(a), (228, 227), "{a}");
        }
        for spec in &ARCHS {
            assert!(spec.max_shared_bytes_per_block <= spec.shared_bytes_per_sm);
        }
    }

    /// The architectures that have `feature`, as keywords.
    fn having(feature: Feature) -> Vec<&'static str> {
        Arch::ALL
            .into_iter()
            .filter(|a| a.has(feature))
            .map(Arch::keyword)
            .collect()
    }

    #[test]
    fn features_follow_the_ptx_isa() {
        const ALL: [&str; 10] = [
            "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90", "sm_100", "sm_103", "sm_120",
            "sm_121",
        ];
        assert_eq!(having(Feature::Dp4a), ALL);
        assert_eq!(having(Feature::Ldmatrix), ALL);
        for f in [Feature::CpAsync, Feature::MmaS8K16, Feature::MmaS8K32] {
            assert_eq!(having(f), ALL[1..], "{f}");
        }
        for f in [
            Feature::MbarrierTx,
            Feature::BulkCopy,
            Feature::TensorCopy,
            Feature::Clusters,
            Feature::GridDependencyControl,
        ] {
            assert_eq!(having(f), ALL[5..], "{f}");
        }
        assert_eq!(having(Feature::Wgmma), ["sm_90"]);
        assert_eq!(
            having(Feature::TensorCopyMulticast),
            ["sm_90", "sm_100", "sm_103"]
        );
        assert_eq!(having(Feature::Setmaxnreg), ALL[5..]);
        // Where they exist, these three are arch-specific; nothing else is.
        for arch in Arch::ALL {
            for feature in Feature::ALL {
                let specific = matches!(
                    feature,
                    Feature::Wgmma | Feature::Setmaxnreg | Feature::TensorCopyMulticast
                );
                match arch.support(feature) {
                    Support::ArchSpecific => {
                        assert!(specific, "{arch} {feature}");
                        assert!(arch.spec().arch_specific_target, "{arch} has no `a` target");
                    }
                    Support::Plain => assert!(!specific, "{arch} {feature}"),
                    Support::Absent => {}
                }
            }
        }
    }

    #[test]
    fn a_feature_an_architecture_has_stays_in_every_later_one_but_the_arch_specific_ones() {
        for feature in Feature::ALL {
            for pair in Arch::ALL.windows(2) {
                if pair[0].support(feature) == Support::Plain {
                    assert_eq!(pair[1].support(feature), Support::Plain, "{feature}");
                }
            }
        }
    }

    #[test]
    fn the_target_is_arch_specific_exactly_where_a_used_feature_is() {
        let wgmma = FeatureSet::EMPTY
            .with(Feature::Wgmma)
            .with(Feature::TensorCopy);
        assert_eq!(Arch::Sm90.nvrtc_target(wgmma), "sm_90a");
        let ring = FeatureSet::EMPTY
            .with(Feature::BulkCopy)
            .with(Feature::MbarrierTx);
        for arch in Arch::ALL {
            assert_eq!(arch.nvrtc_target(ring), arch.keyword());
            assert_eq!(arch.nvrtc_target(FeatureSet::EMPTY), arch.keyword());
        }
        let producer = FeatureSet::EMPTY.with(Feature::Setmaxnreg);
        assert_eq!(Arch::Sm120.nvrtc_target(producer), "sm_120a");
        assert_eq!(Arch::Sm100.nvrtc_target(producer), "sm_100a");
    }

    #[test]
    fn families_are_a_generation_and_every_later_one() {
        let keywords = |f: &str| {
            ArchFamily::from_keyword(f)
                .unwrap()
                .archs()
                .iter()
                .map(Arch::keyword)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            ArchFamily::from_keyword("turing_and_later")
                .unwrap()
                .archs(),
            ArchSet::ALL
        );
        assert_eq!(keywords("ampere_and_later").first(), Some(&"sm_80"));
        assert_eq!(keywords("ampere_and_later").len(), 9);
        assert_eq!(
            keywords("ada_and_later"),
            ["sm_89", "sm_90", "sm_100", "sm_103", "sm_120", "sm_121"]
        );
        assert_eq!(
            keywords("blackwell_and_later"),
            ["sm_100", "sm_103", "sm_120", "sm_121"]
        );
        assert_eq!(ArchFamily::from_keyword("sm_90"), None);
        // No family shares a name with an architecture.
        for family in ARCH_FAMILIES {
            assert_eq!(Arch::from_keyword(family.keyword), None);
        }
    }

    #[test]
    fn sentences_list_the_architectures() {
        assert_eq!(
            supported_list(),
            "sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, sm_120 and sm_121"
        );
        assert_eq!(
            ArchSet::having(FeatureSet::EMPTY.with(Feature::Wgmma))
                .list_for(FeatureSet::EMPTY.with(Feature::Wgmma)),
            "sm_90 (as sm_90a)"
        );
        assert_eq!(
            unknown_gpu_sentence((7, 0)),
            "this GPU has compute capability 7.0 (sm_70), which mmqgen does not know: it generates code for \
             sm_75, sm_80, sm_86, sm_87, sm_89, sm_90, sm_100, sm_103, sm_120 and sm_121"
        );
        let ring = FeatureSet::EMPTY
            .with(Feature::BulkCopy)
            .with(Feature::MbarrierTx);
        assert_eq!(
            ring.to_string(),
            "mbarriers with transaction counts (mbarrier.expect_tx) and bulk copies (cp.async.bulk)"
        );
        assert_eq!(
            ArchSet::EMPTY.with(Arch::Sm80).with(Arch::Sm90).to_string(),
            "[sm_80, sm_90]"
        );
    }
}
