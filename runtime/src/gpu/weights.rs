//! Weights registered on the GPU: one q6_K matrix (m rows of K) in one layout, plus the scale planes the
//! variants that fetch scales from a plane read (docs/KERNELS.md, docs/DESIGN.md D2).
//!
//! Two ways in:
//! - from host bytes: registration validates the weights with the reference's `check_weights` (K a multiple of
//!   256, `m` whole rows, every block's `d` finite), builds the layout's bytes with the reference's own layout
//!   functions (so the GPU reads exactly what the CPU reference was checked against) and uploads them once;
//! - borrowed: GGUF blocks an engine already holds on the GPU are used where they are, in the raw layout, with no
//!   copy and no read-back ([`RegisteredWeights::borrow_raw`]); only their shape, length and alignment can be
//!   checked, and nothing is allocated for them.
//!
//! Nothing is allocated per matmul afterwards.

use std::fmt;
use std::str::FromStr;

use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, DevicePtr, SyncOnDrop};
use mmqgen_codegen::{NumericsMode, ScaleFetch, VariantDescription};
use mmqgen_reference::registration::{
    check_weights, f32_per16_plane, fold_planes, int_plane, plane_rows, raw_to_padded,
    RegistrationError, INT_PLANE_ROW_BYTES, PADDED_BLOCK_BYTES,
};
use sha2::{Digest, Sha256};
use std::sync::Arc;

use crate::gpu::buffer::DeviceRef;
use crate::gpu::device::{DeviceError, Gpu};

/// Bytes of one GGUF q6_K block (the raw layout's block).
pub const RAW_BLOCK_BYTES: usize = mmqgen_formats::BLOCK_BYTES;

/// How the weight bytes sit in device memory (docs/DESIGN.md D2). A registration choice, not a variant field:
/// every variant has one entry point per layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Layout {
    /// GGUF rows of 210-byte blocks, 2-byte aligned.
    Raw,
    /// 224-byte blocks (210 + 14 zero bytes), 16-byte aligned.
    Padded,
}

impl Layout {
    pub const ALL: [Layout; 2] = [Layout::Raw, Layout::Padded];

    pub const fn keyword(self) -> &'static str {
        match self {
            Layout::Raw => "raw",
            Layout::Padded => "padded",
        }
    }

    pub const fn block_bytes(self) -> usize {
        match self {
            Layout::Raw => RAW_BLOCK_BYTES,
            Layout::Padded => PADDED_BLOCK_BYTES,
        }
    }

    /// An m x K matrix's bytes in this layout: m rows of K/256 blocks.
    pub const fn matrix_bytes(self, m: usize, k: usize) -> usize {
        m * (k / 256) * self.block_bytes()
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

impl FromStr for Layout {
    type Err = String;
    fn from_str(s: &str) -> Result<Layout, String> {
        match s {
            "raw" => Ok(Layout::Raw),
            "padded" => Ok(Layout::Padded),
            other => Err(format!(
                "'{other}' is not a weight layout: the layouts are raw and padded"
            )),
        }
    }
}

/// Which precomputed scale plane a numerics mode's `plane` fetch reads (docs/KERNELS.md, scale planes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PlaneKind {
    /// `float2 [K/32][plane_rows]` of `mul(d, sc)` pairs (`f32_per16`).
    F32Per16,
    /// Per super-block `f32 d [plane_rows]` then `int8 sc [plane_rows][16]` (`int_per32`, `int_per256`).
    Int,
    /// The weights folded at registration, `h` then `l` per row and super-block (engine `mma_k32_prefolded`).
    Folded,
}

impl PlaneKind {
    pub const fn for_mode(mode: NumericsMode) -> PlaneKind {
        match mode {
            NumericsMode::F32Per16 => PlaneKind::F32Per16,
            NumericsMode::IntPer32 | NumericsMode::IntPer256 | NumericsMode::Int12Per256 => {
                PlaneKind::Int
            }
        }
    }

    pub const fn keyword(self) -> &'static str {
        match self {
            PlaneKind::F32Per16 => "f32_per16",
            PlaneKind::Int => "int",
            PlaneKind::Folded => "folded",
        }
    }

    /// Bytes of the plane for `m` rows of K.
    pub fn bytes(self, m: usize, k: usize) -> usize {
        let rows = plane_rows(m);
        match self {
            PlaneKind::F32Per16 => k / 32 * rows * 8,
            PlaneKind::Int => k / 256 * rows * INT_PLANE_ROW_BYTES,
            PlaneKind::Folded => m * 2 * k,
        }
    }
}

impl fmt::Display for PlaneKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.keyword())
    }
}

/// Why weights could not be registered. Each variant displays as one sentence.
#[derive(Debug, thiserror::Error)]
pub enum WeightsError {
    /// The reference's `check_weights` refused them (length, K, a non-finite `d`).
    #[error("the weights cannot be registered: {0}")]
    Invalid(#[from] RegistrationError),

    /// The matrix is too large for the kernels' 32-bit indices.
    #[error(
        "the weights are m = {m} rows of K = {k}, which is {bytes} bytes in the {layout} layout; the kernels \
         index with 32-bit ints, so a registered matrix must stay below 2^31 bytes and m, K below 2^31"
    )]
    TooLarge {
        m: usize,
        k: usize,
        layout: Layout,
        bytes: usize,
    },

    /// A scale plane was asked for with bytes that are not the registered matrix.
    #[error(
        "the {plane} scale plane was asked for with different weight bytes than the ones registered \
         (m = {m}, K = {k}); register the new weights instead"
    )]
    NotTheRegisteredWeights {
        plane: PlaneKind,
        m: usize,
        k: usize,
    },

    /// Borrowed weights shorter than the shape asked for.
    #[error(
        "the borrowed weights are {len} bytes, but m = {m} rows of K = {k} in 210-byte q6_K blocks need \
         {needed} bytes"
    )]
    BorrowedTooShort {
        len: usize,
        m: usize,
        k: usize,
        needed: usize,
    },

    /// Borrowed weights at an odd address: the raw layout's fields are read 16 bits at a time.
    #[error(
        "the borrowed weights start at address {addr:#x}, which is odd; GGUF q6_K blocks must start at an even \
         address (ggml's tensors are 128-byte aligned)"
    )]
    BorrowedMisaligned { addr: u64 },

    /// A shape no matrix has.
    #[error("m = {m} rows of K = {k} is not a matrix that can be registered: m and K must be at least 1 and 256")]
    EmptyShape { m: usize, k: usize },

    /// A plane asked of borrowed weights: planes are built from host bytes, which a borrowed registration has not.
    #[error(
        "the {plane} scale plane cannot be built for borrowed weights (they are never read back to the host); \
         select variants that read the q6_K blocks themselves (scale_fetch narrow or wide) for raw registrations"
    )]
    BorrowedPlane { plane: PlaneKind },

    /// Uploading failed.
    #[error(transparent)]
    Device(#[from] DeviceError),
}

/// The planes `desc` reads besides the layout's bytes.
pub fn planes_read(desc: &VariantDescription) -> Vec<PlaneKind> {
    let mut planes = Vec::new();
    if desc.scale_fetch == ScaleFetch::Plane {
        planes.push(PlaneKind::for_mode(desc.mode));
    }
    if desc.engine.is_prefolded() {
        planes.push(PlaneKind::Folded);
    }
    planes
}

/// Bytes of one plane of an m x K matrix on the device (docs/KERNELS.md).
pub fn plane_bytes(kind: PlaneKind, m: usize, k: usize) -> usize {
    match kind {
        PlaneKind::F32Per16 => k / 32 * plane_rows(m) * 8,
        PlaneKind::Int => k / 256 * plane_rows(m) * INT_PLANE_ROW_BYTES,
        PlaneKind::Folded => m * 2 * k,
    }
}

/// The matrix's bytes in a GGUF file: m rows of K/256 blocks of 210 bytes.
pub fn gguf_bytes(m: usize, k: usize) -> usize {
    Layout::Raw.matrix_bytes(m, k)
}

/// What registering an m x K matrix in `layout` for `variants` costs on the device (docs/DESIGN.md D12): the
/// layout's bytes plus every plane one of them reads, each once.
pub fn device_footprint<'v>(
    variants: impl IntoIterator<Item = &'v VariantDescription>,
    m: usize,
    k: usize,
    layout: Layout,
) -> usize {
    let mut planes: Vec<PlaneKind> = variants.into_iter().flat_map(planes_read).collect();
    planes.sort_by_key(|p| *p as u8);
    planes.dedup();
    layout.matrix_bytes(m, k) + planes.iter().map(|p| plane_bytes(*p, m, k)).sum::<usize>()
}

/// Where a registration's layout bytes live.
#[derive(Debug)]
enum LayoutBytes {
    /// Built and uploaded by mmqgen from host bytes: `m * K/256 * layout.block_bytes()`.
    Owned(CudaSlice<u8>),
    /// An engine's GGUF blocks, used in place (raw layout); at least `m * K/256 * 210` bytes.
    Borrowed(DeviceRef<u8>),
}

/// One q6_K matrix (m rows of K) on the GPU in one [`Layout`], with the scale planes asked for.
#[derive(Debug)]
pub struct RegisteredWeights {
    layout: Layout,
    m: usize,
    k: usize,
    stream: Arc<CudaStream>,
    bytes: LayoutBytes,
    f32_plane: Option<CudaSlice<u8>>,
    int_plane: Option<CudaSlice<u8>>,
    folded_plane: Option<CudaSlice<u8>>,
    /// SHA-256 of the raw bytes, so that a plane added later is built from the same matrix; `None` when borrowed.
    fingerprint: Option<[u8; 32]>,
}

fn fingerprint(raw: &[u8]) -> [u8; 32] {
    Sha256::digest(raw).into()
}

fn upload(
    stream: &Arc<CudaStream>,
    bytes: &[u8],
    what: String,
) -> Result<CudaSlice<u8>, DeviceError> {
    stream
        .clone_htod(bytes)
        .map_err(|e| DeviceError::cuda(format!("uploading {what} ({} bytes)", bytes.len()), e))
}

impl RegisteredWeights {
    /// Checks `raw` (GGUF rows: `m` rows of `K / 256` 210-byte blocks), builds `layout`'s bytes and uploads them
    /// on the GPU's stream. Add scale planes with [`Self::add_plane`] or use [`Self::register_for`].
    pub fn register(
        gpu: &Gpu,
        raw: &[u8],
        m: usize,
        k: usize,
        layout: Layout,
    ) -> Result<RegisteredWeights, WeightsError> {
        Self::register_on(gpu.stream(), raw, m, k, layout)
    }

    /// [`Self::register`], plus the scale plane `desc` reads when its scale fetch is `plane`.
    pub fn register_for(
        gpu: &Gpu,
        raw: &[u8],
        m: usize,
        k: usize,
        layout: Layout,
        desc: &VariantDescription,
    ) -> Result<RegisteredWeights, WeightsError> {
        let mut w = Self::register(gpu, raw, m, k, layout)?;
        for plane in planes_read(desc) {
            w.add_plane_kind(raw, plane)?;
        }
        Ok(w)
    }

    /// [`Self::register`] on a given stream.
    pub fn register_on(
        stream: &Arc<CudaStream>,
        raw: &[u8],
        m: usize,
        k: usize,
        layout: Layout,
    ) -> Result<RegisteredWeights, WeightsError> {
        check_weights(raw, m, k)?;
        check_index_range(m, k, layout)?;
        let device_bytes = layout.matrix_bytes(m, k);
        let bytes = match layout {
            Layout::Raw => upload(stream, raw, format!("the raw weights (m = {m}, K = {k})"))?,
            Layout::Padded => upload(
                stream,
                &raw_to_padded(raw, m, k),
                format!("the padded weights (m = {m}, K = {k})"),
            )?,
        };
        debug_assert_eq!(bytes.len(), device_bytes);
        Ok(RegisteredWeights {
            layout,
            m,
            k,
            stream: stream.clone(),
            bytes: LayoutBytes::Owned(bytes),
            f32_plane: None,
            int_plane: None,
            folded_plane: None,
            fingerprint: Some(fingerprint(raw)),
        })
    }

    /// Registers `m` GGUF rows of `K / 256` q6_K blocks that already live on the GPU, in the raw layout, without
    /// copying them or reading them back: calls read `weights` in place. Checks the shape, the length (at least
    /// `m * K/256 * 210` bytes; ggml pads some tensors at the end) and the alignment (an even address); the
    /// blocks' `d` cannot be checked without reading them, so a `d` that is not finite gives unspecified output.
    ///
    /// # Safety
    /// `weights` must be device memory of `stream`'s context holding the blocks, and stay valid and unchanged for
    /// as long as the returned registration (or any work queued with it) is used.
    pub unsafe fn borrow_raw(
        stream: &Arc<CudaStream>,
        weights: DeviceRef<u8>,
        m: usize,
        k: usize,
    ) -> Result<RegisteredWeights, WeightsError> {
        check_borrowed(weights, m, k)?;
        Ok(RegisteredWeights {
            layout: Layout::Raw,
            m,
            k,
            stream: stream.clone(),
            bytes: LayoutBytes::Borrowed(weights),
            f32_plane: None,
            int_plane: None,
            folded_plane: None,
            fingerprint: None,
        })
    }

    /// Builds and uploads the scale plane `mode` reads (a no-op when it is there already). `raw` must be the
    /// registered matrix's bytes.
    pub fn add_plane(&mut self, raw: &[u8], mode: NumericsMode) -> Result<(), WeightsError> {
        self.add_plane_kind(raw, PlaneKind::for_mode(mode))
    }

    /// Builds and uploads the plane of `kind` (a no-op when it is there already).
    pub fn add_plane_kind(&mut self, raw: &[u8], kind: PlaneKind) -> Result<(), WeightsError> {
        if self.plane(kind).is_some() {
            return Ok(());
        }
        let Some(registered) = self.fingerprint else {
            return Err(WeightsError::BorrowedPlane { plane: kind });
        };
        if raw.len() != self.m * (self.k / 256) * RAW_BLOCK_BYTES || fingerprint(raw) != registered
        {
            return Err(WeightsError::NotTheRegisteredWeights {
                plane: kind,
                m: self.m,
                k: self.k,
            });
        }
        let (m, k) = (self.m, self.k);
        let what = format!("the {kind} scale plane (m = {m}, K = {k})");
        match kind {
            PlaneKind::F32Per16 => {
                self.f32_plane = Some(upload(&self.stream, &f32_per16_plane(raw, m, k), what)?)
            }
            PlaneKind::Int => {
                self.int_plane = Some(upload(&self.stream, &int_plane(raw, m, k), what)?)
            }
            PlaneKind::Folded => {
                self.folded_plane = Some(upload(&self.stream, &fold_planes(raw, m, k), what)?)
            }
        }
        Ok(())
    }

    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Weight rows.
    pub fn m(&self) -> usize {
        self.m
    }

    /// Values per row.
    pub fn k(&self) -> usize {
        self.k
    }

    /// The layout's bytes when mmqgen uploaded them (`None` for a borrowed registration).
    pub fn owned_bytes(&self) -> Option<&CudaSlice<u8>> {
        match &self.bytes {
            LayoutBytes::Owned(bytes) => Some(bytes),
            LayoutBytes::Borrowed(_) => None,
        }
    }

    /// Whether the layout's bytes are an engine's, used in place.
    pub fn is_borrowed(&self) -> bool {
        matches!(self.bytes, LayoutBytes::Borrowed(_))
    }

    /// The device address of borrowed bytes (an engine's, where it put them), or none for mmqgen's own copy (whose
    /// base is always 256-byte aligned).
    pub fn borrowed_address(&self) -> Option<u64> {
        match &self.bytes {
            LayoutBytes::Owned(_) => None,
            LayoutBytes::Borrowed(weights) => Some(weights.addr()),
        }
    }

    /// The context the weights live in.
    pub fn context(&self) -> &Arc<CudaContext> {
        self.stream.context()
    }

    /// The layout's bytes as a kernel takes them, for work queued on `stream` (which waits for the upload of
    /// owned bytes when cudarc tracks their events; keep the guard until the launch is queued).
    pub fn layout_ptr<'a>(
        &'a self,
        stream: &'a CudaStream,
    ) -> (CUdeviceptr, Option<SyncOnDrop<'a>>) {
        match &self.bytes {
            LayoutBytes::Owned(bytes) => {
                let (ptr, guard) = bytes.device_ptr(stream);
                (ptr, Some(guard))
            }
            LayoutBytes::Borrowed(weights) => (weights.addr(), None),
        }
    }

    /// The plane of `kind`, when it was added.
    pub fn plane(&self, kind: PlaneKind) -> Option<&CudaSlice<u8>> {
        match kind {
            PlaneKind::F32Per16 => self.f32_plane.as_ref(),
            PlaneKind::Int => self.int_plane.as_ref(),
            PlaneKind::Folded => self.folded_plane.as_ref(),
        }
    }

    /// The plane `mode` reads, when it was added.
    pub fn plane_for(&self, mode: NumericsMode) -> Option<&CudaSlice<u8>> {
        self.plane(PlaneKind::for_mode(mode))
    }

    /// Device bytes the matrix's calls read: the layout's bytes (borrowed ones too) plus the planes.
    pub fn device_bytes(&self) -> usize {
        self.layout.matrix_bytes(self.m, self.k) + self.plane_bytes()
    }

    /// Device bytes mmqgen allocated for this registration: everything for host bytes, only the planes (none
    /// today) for borrowed weights.
    pub fn allocated_bytes(&self) -> usize {
        match &self.bytes {
            LayoutBytes::Owned(bytes) => bytes.len() + self.plane_bytes(),
            LayoutBytes::Borrowed(_) => self.plane_bytes(),
        }
    }

    fn plane_bytes(&self) -> usize {
        self.f32_plane.as_ref().map_or(0, |p| p.len())
            + self.int_plane.as_ref().map_or(0, |p| p.len())
            + self.folded_plane.as_ref().map_or(0, |p| p.len())
    }
}

/// The kernels index with 32-bit ints: a registered matrix stays below 2^31 bytes, m and K below 2^31.
fn check_index_range(m: usize, k: usize, layout: Layout) -> Result<(), WeightsError> {
    let limit = i32::MAX as usize;
    let bytes = m
        .checked_mul(k / 256)
        .and_then(|b| b.checked_mul(layout.block_bytes()))
        .unwrap_or(usize::MAX);
    if m > limit || k > limit || bytes > limit {
        return Err(WeightsError::TooLarge {
            m,
            k,
            layout,
            bytes,
        });
    }
    Ok(())
}

/// What can be checked of borrowed raw weights without reading them: the shape, the length, the alignment.
pub fn check_borrowed(weights: DeviceRef<u8>, m: usize, k: usize) -> Result<(), WeightsError> {
    if m == 0 || k < 256 {
        return Err(WeightsError::EmptyShape { m, k });
    }
    if !k.is_multiple_of(256) {
        return Err(RegistrationError::KNotMultiple { k }.into());
    }
    check_index_range(m, k, Layout::Raw)?;
    let needed = Layout::Raw.matrix_bytes(m, k);
    if weights.len() < needed {
        return Err(WeightsError::BorrowedTooShort {
            len: weights.len(),
            m,
            k,
            needed,
        });
    }
    if !weights.is_aligned_to(2) {
        return Err(WeightsError::BorrowedMisaligned {
            addr: weights.addr(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_parse_and_print() {
        for l in Layout::ALL {
            assert_eq!(l.keyword().parse::<Layout>(), Ok(l));
            assert_eq!(l.to_string(), l.keyword());
        }
        assert_eq!(
            "aligned".parse::<Layout>().unwrap_err(),
            "'aligned' is not a weight layout: the layouts are raw and padded"
        );
        assert_eq!(Layout::Raw.block_bytes(), 210);
        assert_eq!(Layout::Padded.block_bytes(), 224);
    }

    #[test]
    fn plane_sizes_follow_kernels_md() {
        // m = 37 -> plane_rows 48; K = 768 -> 24 chunks of 32, 3 super-blocks.
        assert_eq!(PlaneKind::F32Per16.bytes(37, 768), 24 * 48 * 8);
        assert_eq!(PlaneKind::Int.bytes(37, 768), 3 * 48 * 20);
        assert_eq!(
            PlaneKind::for_mode(NumericsMode::F32Per16),
            PlaneKind::F32Per16
        );
        assert_eq!(PlaneKind::for_mode(NumericsMode::IntPer32), PlaneKind::Int);
        assert_eq!(PlaneKind::for_mode(NumericsMode::IntPer256), PlaneKind::Int);
        let raw = mmqgen_reference::data::random_blocks(37, 768, 1);
        assert_eq!(
            f32_per16_plane(&raw, 37, 768).len(),
            PlaneKind::F32Per16.bytes(37, 768)
        );
        assert_eq!(
            int_plane(&raw, 37, 768).len(),
            PlaneKind::Int.bytes(37, 768)
        );
    }

    #[test]
    fn borrowed_weights_are_checked_without_reading_them() {
        // SAFETY: the addresses are only compared and printed, never dereferenced.
        let at = |addr: u64, len: usize| unsafe { DeviceRef::<u8>::from_raw(addr, len) };
        let (m, k) = (4096, 2816);
        let needed = m * 11 * 210;
        assert!(check_borrowed(at(0x7f00_0000_0080, needed), m, k).is_ok());
        // ggml pads some tensors at the end: more bytes are fine, and 2-byte alignment is enough.
        assert!(check_borrowed(at(0x7f00_0000_0082, needed + 210), m, k).is_ok());
        let cases: [(DeviceRef<u8>, usize, usize, &str); 6] = [
            (at(0x1000, needed - 1), m, k, "need 946176"),
            (at(0x1001, needed), m, k, "odd"),
            (at(0x1000, needed), m, 2800, "multiple of 256"),
            (at(0x1000, needed), 0, k, "at least 1 and 256"),
            (at(0x1000, needed), m, 0, "at least 1 and 256"),
            (at(0x1000, usize::MAX), 1 << 31, 256, "32-bit"),
        ];
        for (weights, m, k, expected) in cases {
            let e = check_borrowed(weights, m, k).unwrap_err().to_string();
            assert!(e.contains(expected), "m = {m}, K = {k}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn registration_refuses_bad_weights_before_touching_the_gpu() {
        let Some(gpu) = crate::testing::gpu_or_skip("weights::registration") else {
            return;
        };
        let raw = mmqgen_reference::data::random_blocks(3, 512, 1);
        let e = RegisteredWeights::register(&gpu, &raw[..420], 3, 512, Layout::Raw).unwrap_err();
        assert!(matches!(e, WeightsError::Invalid(_)), "{e}");
        let mut w = RegisteredWeights::register(&gpu, &raw, 3, 512, Layout::Padded).unwrap();
        assert_eq!(w.owned_bytes().unwrap().len(), 3 * 2 * 224);
        w.add_plane(&raw, NumericsMode::IntPer32).unwrap();
        assert_eq!(
            w.plane(PlaneKind::Int).unwrap().len(),
            PlaneKind::Int.bytes(3, 512)
        );
        let other = mmqgen_reference::data::random_blocks(3, 512, 2);
        let e = w.add_plane(&other, NumericsMode::F32Per16).unwrap_err();
        assert!(
            matches!(e, WeightsError::NotTheRegisteredWeights { .. }),
            "{e}"
        );
        let back = gpu.stream().clone_dtoh(w.owned_bytes().unwrap()).unwrap();
        assert_eq!(back, raw_to_padded(&raw, 3, 512));
    }
}
