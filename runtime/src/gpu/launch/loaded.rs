//! A loaded variant: one CUDA module (the cubin NVRTC made from the rendered source) on one GPU, with the entry
//! points docs/KERNELS.md names and the launch contract codegen computed for it. Loading checks what the GPU can
//! run (threads, shared memory) and raises the dynamic shared memory limits; the calls are queued in
//! [`super::queue`].

use std::sync::Arc;

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::Ptx;
use mmqgen_codegen::launch::{KernelNames, LaunchContract, RawRowsWeights, SharedMemory};
use mmqgen_codegen::{canonical_name, VariantDescription};

use super::error::LaunchError;
use super::geometry::COMBINE_THREADS;
use crate::gpu::device::{guard, DeviceError, Gpu};
use crate::gpu::weights::Layout;

/// Which matmul entry point a call takes ([`LoadedVariant::matmul_kernel`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum MatmulEntry {
    /// Raw blocks the kernel copies itself, 16 bits at a time.
    Raw,
    Padded,
    /// Raw blocks the copy engine brings, through the map the entry point reads them by.
    RawRows(RawRowsWeights),
}

/// The entry-point names docs/KERNELS.md gives a variant's module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EntryPoints {
    /// `mmq_quantize_activations_g{G}` (`_i12` under `int12_per256`).
    pub quantize: String,
    /// `{canonical}_raw`.
    pub raw: String,
    /// `{canonical}_padded`.
    pub padded: String,
    /// `{canonical}_raw_rows`, for the `refill = tma` stage engines, the fragment rings, the rings of rows and the
    /// K-split rings of super-blocks (raw rows that start 16-byte aligned) and the rings of super-blocks over all of
    /// K (a raw tensor that starts 16-byte aligned).
    pub raw_rows: Option<String>,
    /// `{canonical}_combine`, only when `ksplit > 1`.
    pub combine: Option<String>,
}

impl EntryPoints {
    /// The entry points of `desc`'s module ([`LaunchContract::kernels`]).
    pub fn for_description(desc: &VariantDescription) -> EntryPoints {
        LaunchContract::of(desc).kernels.into()
    }

    /// The matmul entry point for a weight layout.
    pub fn matmul(&self, layout: Layout) -> &str {
        match layout {
            Layout::Raw => &self.raw,
            Layout::Padded => &self.padded,
        }
    }
}

impl From<KernelNames> for EntryPoints {
    fn from(names: KernelNames) -> EntryPoints {
        EntryPoints {
            quantize: names.quantize,
            raw: names.raw,
            padded: names.padded,
            raw_rows: names.raw_rows,
            combine: names.combine,
        }
    }
}

/// What the driver says about one loaded kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelInfo {
    pub name: String,
    pub registers: u32,
    /// Local memory per thread (spills and stack), bytes.
    pub local_bytes: u32,
    pub static_shared_bytes: u32,
    /// The most threads per block this kernel can launch with (register-limited).
    pub max_threads: u32,
    /// `90` for an sm_90 cubin.
    pub binary_version: u32,
}

fn kernel_info(func: &CudaFunction, name: &str) -> Result<KernelInfo, DeviceError> {
    let attr = |a: CUfunction_attribute_enum, what: &str| -> Result<u32, DeviceError> {
        func.get_attribute(a)
            .map(|v| v.max(0) as u32)
            .map_err(|e| DeviceError::cuda(format!("reading {what} of kernel {name}"), e))
    };
    use CUfunction_attribute_enum::*;
    Ok(KernelInfo {
        name: name.to_string(),
        registers: attr(CU_FUNC_ATTRIBUTE_NUM_REGS, "the register count")?,
        local_bytes: attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, "the local memory size")?,
        static_shared_bytes: attr(
            CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
            "the static shared memory size",
        )?,
        max_threads: attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "the thread limit")?,
        binary_version: attr(CU_FUNC_ATTRIBUTE_BINARY_VERSION, "the binary version")?,
    })
}

pub(super) struct Kernel {
    pub(super) func: CudaFunction,
    pub(super) info: KernelInfo,
}

/// A variant's CUDA module, loaded on one GPU, with its entry points and its launch contract.
pub struct LoadedVariant {
    pub(super) desc: VariantDescription,
    /// How to launch it: grid, block, shared memory, workspace and the ordered arguments, from codegen.
    pub(super) contract: LaunchContract,
    pub(super) canonical: String,
    entry: EntryPoints,
    pub(super) ctx: Arc<CudaContext>,
    _module: Arc<CudaModule>,
    pub(super) quantize: Kernel,
    raw: Kernel,
    padded: Kernel,
    /// The entry for raw blocks the copy engine can reach, where the module has one.
    raw_rows: Option<Kernel>,
    pub(super) combine: Option<Kernel>,
    pub(super) dynamic_shared: u32,
    gpu_name: String,
    ordinal: usize,
    /// Whether the matmul and the combine are queued as programmatic dependents of the kernel before them (PDL,
    /// sm_90 and later, where every kernel of the module waits for its predecessor with `griddepcontrol.wait`).
    pub(super) programmatic: bool,
    /// Blocks the GPU holds at once (its SMs times `blocks_per_sm`): what a last-wave split splits the last wave
    /// by.
    pub(super) resident_blocks: u64,
}

impl std::fmt::Debug for LoadedVariant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoadedVariant")
            .field("name", &self.desc.name)
            .field("canonical", &self.canonical)
            .field("entry", &self.entry)
            .field("dynamic_shared", &self.dynamic_shared)
            .finish_non_exhaustive()
    }
}

fn load_hint(e: DriverError) -> String {
    use cudarc::driver::sys::CUresult::*;
    match e.0 {
        CUDA_ERROR_NO_BINARY_FOR_GPU => {
            " (the cubin was compiled for another architecture than this GPU's)".to_string()
        }
        CUDA_ERROR_UNSUPPORTED_PTX_VERSION | CUDA_ERROR_INVALID_PTX => {
            " (the cubin is newer than this driver: compile with NVRTC 13.0 for driver 580)"
                .to_string()
        }
        CUDA_ERROR_INVALID_IMAGE | CUDA_ERROR_INVALID_SOURCE => {
            " (the bytes are not a valid cubin for this driver)".to_string()
        }
        _ => String::new(),
    }
}

impl LoadedVariant {
    /// Loads `cubin` (compiled from `desc`'s rendered source for this GPU's architecture) and finds the entry
    /// points docs/KERNELS.md names; raises the matmul kernels' dynamic shared memory limit when the layout needs
    /// more than 48 KiB, and refuses a variant this GPU cannot launch.
    pub fn load(
        gpu: &Gpu,
        desc: &VariantDescription,
        cubin: &[u8],
    ) -> Result<LoadedVariant, LaunchError> {
        let contract = LaunchContract::of(desc);
        let dynamic_shared = contract.dynamic_shared_bytes();
        Self::load_with(gpu, desc, cubin, contract.kernels.into(), dynamic_shared)
    }

    /// [`Self::load`] with the entry points and dynamic shared memory given (what the renderer reports).
    pub fn load_with(
        gpu: &Gpu,
        desc: &VariantDescription,
        cubin: &[u8],
        entry: EntryPoints,
        dynamic_shared: u32,
    ) -> Result<LoadedVariant, LaunchError> {
        let variant = desc.name.to_string();
        if cubin.len() < 4 || &cubin[..4] != b"\x7fELF" {
            return Err(LaunchError::NotACubin {
                variant,
                len: cubin.len(),
            });
        }
        let contract = LaunchContract::of(desc);
        let canonical = canonical_name(desc);
        let info = gpu.info();
        let ctx = gpu.context().clone();
        let module = guard("loading a cubin", || {
            ctx.load_module(Ptx::from_binary(cubin.to_vec()))
                .map_err(|e| DeviceError::cuda("cuModuleLoadData", e))
        })
        .map_err(|e| match e.driver_error() {
            Some(source) => LaunchError::Load {
                variant: variant.clone(),
                canonical: canonical.clone(),
                ordinal: info.ordinal,
                arch: info.arch.clone(),
                hint: load_hint(source),
                source,
            },
            None => LaunchError::Device(e),
        })?;

        let find = |name: &str| -> Result<Kernel, LaunchError> {
            if name.contains('\0') {
                return Err(LaunchError::MissingKernel {
                    variant: variant.clone(),
                    kernel: name.escape_default().to_string(),
                });
            }
            let func = module.load_function(name).map_err(|e| {
                if e.0 == cudarc::driver::sys::CUresult::CUDA_ERROR_NOT_FOUND {
                    LaunchError::MissingKernel {
                        variant: variant.clone(),
                        kernel: name.to_string(),
                    }
                } else {
                    DeviceError::cuda(format!("finding kernel {name} in the module"), e).into()
                }
            })?;
            let info = kernel_info(&func, name)?;
            Ok(Kernel { func, info })
        };
        let quantize = find(&entry.quantize)?;
        let raw = find(&entry.raw)?;
        let padded = find(&entry.padded)?;
        let raw_rows = entry.raw_rows.as_deref().map(find).transpose()?;
        let combine = entry.combine.as_deref().map(find).transpose()?;
        if let (Some(kernel), None) = (&contract.kernels.combine, &combine) {
            return Err(LaunchError::MissingKernel {
                variant,
                kernel: kernel.clone(),
            });
        }

        // Threads: the matmul block, the quantizer's 32 and the combine's 256 must all be launchable.
        let mut checks: Vec<(&Kernel, u32)> = vec![
            (&raw, contract.threads),
            (&padded, contract.threads),
            (&quantize, 32),
        ];
        if let Some(r) = &raw_rows {
            checks.push((r, contract.threads));
        }
        if let Some(c) = &combine {
            checks.push((c, COMBINE_THREADS));
        }
        for (k, threads) in checks {
            if threads > k.info.max_threads {
                return Err(LaunchError::TooManyThreads {
                    variant,
                    kernel: k.info.name.clone(),
                    threads,
                    max: k.info.max_threads,
                    regs: k.info.registers,
                });
            }
        }

        // Shared memory: static + dynamic within the opt-in limit; raise the attribute above 48 KiB. Where it grows
        // with K, the limit is raised as far as the GPU allows, and each call asks for its own.
        let dynamic_shared = if contract.shared == SharedMemory::GrowsWithK {
            let static_bytes = raw
                .info
                .static_shared_bytes
                .max(padded.info.static_shared_bytes);
            info.max_shared_per_block_optin
                .saturating_sub(static_bytes)
                .max(dynamic_shared)
        } else {
            dynamic_shared
        };
        for k in [Some(&raw), Some(&padded), raw_rows.as_ref()]
            .into_iter()
            .flatten()
        {
            let total = k.info.static_shared_bytes as u64 + dynamic_shared as u64;
            if total > info.max_shared_per_block_optin as u64 {
                return Err(LaunchError::SharedMemory {
                    variant,
                    kernel: k.info.name.clone(),
                    dynamic: dynamic_shared,
                    static_bytes: k.info.static_shared_bytes,
                    limit: info.max_shared_per_block_optin,
                    ordinal: info.ordinal,
                    gpu: info.name.clone(),
                });
            }
            if dynamic_shared > 0 {
                ctx.bind_to_thread()
                    .map_err(|e| DeviceError::cuda("binding the context to this thread", e))?;
                k.func
                    .set_attribute(
                        CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                        dynamic_shared as i32,
                    )
                    .map_err(|e| {
                        DeviceError::cuda(
                            format!(
                                "raising the dynamic shared memory limit of {} to {dynamic_shared} bytes",
                                k.info.name
                            ),
                            e,
                        )
                    })?;
            }
        }
        ctx.bind_to_thread()
            .map_err(|e| DeviceError::cuda("binding the context to this thread", e))?;
        // The quantizer asks for the SM's whole carveout as shared memory, so that a matmul queued early (PDL)
        // finds the SMs that run it already configured for the matmul's shared memory. Without it, the matmul's
        // blocks piled up, up to 1.7x slower (docs/PERF.md, decode logs 10 and 29): presumably they could start
        // only on SMs the quantizer had left, since an SM changes its carveout only when it drains. The other
        // kernels keep the driver's choice: the whole carveout for every kernel took L1 from the rings (log 31).
        // Only sm_90 queues early; the carveout is a preference, so a driver that refuses it costs speed, not bits.
        let programmatic = info.compute_capability.0 >= 9;
        if programmatic {
            let _ = quantize.func.set_attribute(
                CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                100,
            );
        }

        let resident_blocks = contract.schedule.resident_blocks(info.multiprocessors);
        Ok(LoadedVariant {
            desc: desc.clone(),
            contract,
            canonical,
            entry,
            ctx,
            _module: module,
            quantize,
            raw,
            padded,
            raw_rows,
            combine,
            dynamic_shared,
            gpu_name: info.name.clone(),
            ordinal: info.ordinal,
            programmatic,
            resident_blocks,
        })
    }

    pub fn description(&self) -> &VariantDescription {
        &self.desc
    }

    /// The declared name.
    pub fn name(&self) -> &str {
        &self.desc.name
    }

    pub fn canonical(&self) -> &str {
        &self.canonical
    }

    pub fn entry_points(&self) -> &EntryPoints {
        &self.entry
    }

    /// How it is launched ([`LaunchContract`]).
    pub fn contract(&self) -> &LaunchContract {
        &self.contract
    }

    /// Dynamic shared memory of each matmul launch (0 when the kernel's shared memory is static); for the ring
    /// engine, whose launches size it from K ([`Self::call_shared_bytes`]), the most a launch may ask for.
    pub fn dynamic_shared_bytes(&self) -> u32 {
        self.dynamic_shared
    }

    /// Activation group size G.
    pub fn group(&self) -> u32 {
        self.contract.activations.group
    }

    /// What the driver says about each kernel: quantizer, raw, padded, then combine when there is one.
    pub fn kernels(&self) -> Vec<&KernelInfo> {
        let mut v = vec![&self.quantize.info, &self.raw.info, &self.padded.info];
        if let Some(c) = &self.combine {
            v.push(&c.info);
        }
        v
    }

    pub(super) fn same_context(
        &self,
        what: &'static str,
        ctx: &Arc<CudaContext>,
    ) -> Result<(), LaunchError> {
        if **ctx == *self.ctx {
            Ok(())
        } else {
            Err(LaunchError::WrongContext {
                variant: self.desc.name.to_string(),
                what,
            })
        }
    }

    /// The matmul entry point for `m x k` weights of `layout` at `weights`: raw blocks that the copy engine can
    /// reach take the `raw_rows` entry where the module has one ([`RawRowsWeights`]: rows of a multiple of 2048 for
    /// the stage engines' row map and a ring of rows' runs; a 16-byte aligned base and blocks a multiple of eight
    /// for a ring of super-blocks').
    pub(super) fn matmul_kernel(
        &self,
        layout: Layout,
        weights: u64,
        m: usize,
        k: usize,
    ) -> (&Kernel, MatmulEntry) {
        match (layout, &self.raw_rows, self.contract.raw_rows) {
            (Layout::Padded, _, _) => (&self.padded, MatmulEntry::Padded),
            (Layout::Raw, Some(raw_rows), Some(map))
                if map.reaches(weights, m as u64, k as u64) =>
            {
                (raw_rows, MatmulEntry::RawRows(map))
            }
            (Layout::Raw, _, _) => (&self.raw, MatmulEntry::Raw),
        }
    }

    /// One line for logs.
    pub fn summary(&self) -> String {
        let kernels: Vec<String> = self
            .kernels()
            .iter()
            .map(|k| {
                format!(
                    "{} ({} regs, {} B local, {} B static smem)",
                    k.name, k.registers, k.local_bytes, k.static_shared_bytes
                )
            })
            .collect();
        format!(
            "variant '{}' ({}) on GPU {} ({}): {} B dynamic smem; {}",
            self.desc.name,
            self.canonical,
            self.ordinal,
            self.gpu_name,
            self.dynamic_shared,
            kernels.join(", ")
        )
    }
}
