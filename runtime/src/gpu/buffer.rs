//! Device memory a call reads or writes, as its kernels take it: an address and how many elements live there.
//!
//! The launcher works on these, so that one path serves memory mmqgen allocated (cudarc slices) and memory an
//! engine owns and lends for one call or for a registration's lifetime (a raw pointer from ggml, a candle
//! slice). Making one from a raw address is the single `unsafe` step: its contract is written on
//! [`DeviceRef::from_raw`]; everything after it is checked against the lengths it carries.

use std::marker::PhantomData;

use cudarc::driver::sys::CUdeviceptr;

/// `len` elements of `T` at device address `addr`, on the GPU of the context the call runs in.
#[derive(Debug)]
pub struct DeviceRef<T> {
    addr: CUdeviceptr,
    len: usize,
    _element: PhantomData<*const T>,
}

// A plain address and a length: copying one copies no memory.
impl<T> Clone for DeviceRef<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for DeviceRef<T> {}

// SAFETY: an address and a length; what may be done through them is the contract of `from_raw`, which does not
// depend on the thread that holds them.
unsafe impl<T> Send for DeviceRef<T> {}
unsafe impl<T> Sync for DeviceRef<T> {}

impl<T> DeviceRef<T> {
    /// # Safety
    /// `addr` must be device memory of the GPU (and context) the call runs on, holding at least `len` elements of
    /// `T`, valid for the whole time a kernel queued with it may run; memory a call reads must not be written by
    /// anything else until the work queued on the call's stream is done, and memory it writes must not be read
    /// or written by anything else in that time.
    pub unsafe fn from_raw(addr: CUdeviceptr, len: usize) -> DeviceRef<T> {
        DeviceRef {
            addr,
            len,
            _element: PhantomData,
        }
    }

    pub fn addr(&self) -> CUdeviceptr {
        self.addr
    }

    /// Elements of `T` (not bytes).
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether the address is a multiple of `bytes`.
    pub fn is_aligned_to(&self, bytes: u64) -> bool {
        self.addr.is_multiple_of(bytes)
    }
}
