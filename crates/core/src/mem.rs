//! Memory for real runs: aligned, first-touched buffers of f64 (or f32) and transparent huge pages
//! (`madvise`, the `AnonHugePages` count). Ground floor: it imports nothing from the crate.
//!
//! Buffers start on a 2 MiB boundary so their cache-set mapping matches the simulator's
//! placement (buffer k at (k+1)·2^32) for every cache whose set span (sets × line) is ≤ 2 MiB.

use std::alloc::{self, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use thiserror::Error;

/// The alignment of every buffer: one x86-64 huge page.
pub const BUFFER_ALIGN: usize = 2 << 20;

#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum BufferError {
    #[error("a buffer of {elements} elements does not fit in the address space")]
    TooLarge { elements: usize },
    #[error("could not allocate {bytes} bytes (2 MiB aligned)")]
    AllocationFailed { bytes: usize },
    #[error(
        "a buffer cannot start {shift} B past a 2 MiB boundary: the shift must be a multiple of \
         the element size ({element} B) below 2 MiB"
    )]
    BadShift { shift: usize, element: usize },
}

/// An element type a buffer may hold: a plain number whose all-zero bit pattern is 0.
///
/// Sealed, because [`AlignedBuffer::zeroed`] hands out zeroed memory as `T`, which is only
/// sound for types where every zero byte pattern is a valid value.
pub trait Plain: Copy + Send + Sync + Default + 'static + sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

impl Plain for f64 {}
impl Plain for f32 {}

/// A zero-initialised buffer of `T` (f64 unless named) starting on a 2 MiB boundary (or a
/// chosen shift past one), optionally backed by transparent huge pages.
pub struct AlignedBuffer<T: Plain = f64> {
    /// The first element: the allocation's start plus the buffer's shift.
    ptr: NonNull<T>,
    len: usize,
    /// The allocation's start, which `layout` describes (what `dealloc` is given).
    base: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuffer owns its allocation exclusively, like a Box<[T]>, and T is Send.
unsafe impl<T: Plain> Send for AlignedBuffer<T> {}
// SAFETY: shared references only give out &[T], and T is Sync.
unsafe impl<T: Plain> Sync for AlignedBuffer<T> {}

impl<T: Plain> AlignedBuffer<T> {
    /// Allocates `len` zeroed elements (at least one page is reserved even for `len == 0`).
    pub fn zeroed(len: usize, huge_pages: bool) -> Result<Self, BufferError> {
        Self::zeroed_shifted(len, huge_pages, 0)
    }

    /// As [`AlignedBuffer::zeroed`], the first element `shift` bytes past the 2 MiB boundary:
    /// how a controlled experiment moves one buffer against another (64 B: another line and
    /// set; 4 KiB: another page offset, the 4K-aliasing distance) without changing anything else.
    pub fn zeroed_shifted(len: usize, huge_pages: bool, shift: usize) -> Result<Self, BufferError> {
        let element = size_of::<T>();
        if shift >= BUFFER_ALIGN || !shift.is_multiple_of(element) {
            return Err(BufferError::BadShift { shift, element });
        }
        let bytes = len
            .checked_mul(element)
            .and_then(|b| b.checked_add(shift))
            .ok_or(BufferError::TooLarge { elements: len })?;
        let layout = Layout::from_size_align(bytes.max(BUFFER_ALIGN), BUFFER_ALIGN)
            .map_err(|_| BufferError::TooLarge { elements: len })?;
        // Huge pages must be requested before the first write: zeroing touches every page, and
        // pages already faulted in as 4 KiB stay 4 KiB (until khugepaged, much later).
        let raw = if huge_pages {
            alloc_advised_zeroed(layout)
        } else {
            alloc_zeroed_aligned(layout)
        };
        let base = NonNull::new(raw).ok_or(BufferError::AllocationFailed { bytes })?;
        // SAFETY: shift + len·size_of::<T>() ≤ layout.size(), so the shifted start stays within
        // (or one past the end of) the allocation; shift is a multiple of T's size and the base
        // is 2 MiB aligned, so the start is aligned for T.
        let ptr = unsafe { base.add(shift) }.cast::<T>();
        let mut buffer = Self {
            ptr,
            len,
            base,
            layout,
        };
        buffer.first_touch();
        Ok(buffer)
    }

    /// Writes every page once so page faults happen now, not inside a timed region.
    fn first_touch(&mut self) {
        let per_page = (4096 / size_of::<T>()).max(1);
        for chunk in self.chunks_mut(per_page) {
            chunk[0] = T::default();
        }
    }

    /// The buffer's start address (for reports and alignment checks).
    pub fn address(&self) -> usize {
        self.ptr.as_ptr() as usize
    }
}

/// Allocates zeroed memory for `layout` (non-zero size).
fn alloc_zeroed_aligned(layout: Layout) -> *mut u8 {
    // SAFETY: layout has non-zero size (at least BUFFER_ALIGN bytes) and a valid alignment.
    unsafe { alloc::alloc_zeroed(layout) }
}

/// Allocates `layout` (non-zero size), asks for huge pages, then zeroes it.
fn alloc_advised_zeroed(layout: Layout) -> *mut u8 {
    // SAFETY: layout has non-zero size (at least BUFFER_ALIGN bytes) and a valid alignment.
    let raw = unsafe { alloc::alloc(layout) };
    if !raw.is_null() {
        advise_huge_pages(raw, layout.size());
        // SAFETY: raw is valid for layout.size() bytes of writes (just allocated, not null).
        unsafe { std::ptr::write_bytes(raw, 0, layout.size()) };
    }
    raw
}

/// Asks the kernel for transparent huge pages on `[ptr, ptr+len)`; a refusal is not an error
/// (whether pages were granted is read back from /proc/self/smaps by the harness).
fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: madvise only reads the range's mapping metadata; the range is our allocation.
        let _ = unsafe { libc::madvise(ptr.cast(), len, libc::MADV_HUGEPAGE) };
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Bytes of anonymous memory the process has on transparent huge pages (`AnonHugePages` in
/// /proc/self/smaps_rollup): whether `--huge-pages` was granted. Process-wide, not per buffer.
pub fn anon_huge_pages_bytes() -> Result<u64, HugePagesUnknown> {
    let text = std::fs::read_to_string(SMAPS_ROLLUP).map_err(HugePagesUnknown::Unreadable)?;
    parse_anon_huge_pages(&text).ok_or(HugePagesUnknown::NoLine)
}

const SMAPS_ROLLUP: &str = "/proc/self/smaps_rollup";

/// Why [`anon_huge_pages_bytes`] cannot tell.
#[derive(Debug, Error)]
pub enum HugePagesUnknown {
    #[error("cannot read {SMAPS_ROLLUP}: {0}")]
    Unreadable(std::io::Error),
    #[error("no AnonHugePages line in {SMAPS_ROLLUP}")]
    NoLine,
}

/// The `AnonHugePages:  N kB` figure of an smaps(-rollup) text, in bytes.
fn parse_anon_huge_pages(text: &str) -> Option<u64> {
    text.lines()
        .find_map(|line| line.strip_prefix("AnonHugePages:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|kb| kb.trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

impl<T: Plain> Deref for AlignedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: ptr is valid for len initialised (zeroed) Ts for the buffer's lifetime; an
        // all-zero T is a valid value (T: Plain is sealed to such types), and the alignment
        // (2 MiB) exceeds T's.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Plain> DerefMut for AlignedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and &mut self guarantees exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Plain> Drop for AlignedBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: base was allocated with exactly this layout by the global allocator
        // (`alloc_zeroed`, or `alloc` then zeroed: `alloc_advised_zeroed`).
        unsafe { alloc::dealloc(self.base.as_ptr(), self.layout) }
    }
}

impl<T: Plain> std::fmt::Debug for AlignedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AlignedBuffer")
            .field("len", &self.len)
            .field("address", &self.address())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shifted_buffer_starts_its_shift_past_the_boundary() {
        for (shift, len) in [(64, 10), (4096, 1000), (8, 0), ((2 << 20) - 8, 3)] {
            let mut b = AlignedBuffer::<f64>::zeroed_shifted(len, false, shift).unwrap();
            assert_eq!(b.address() % BUFFER_ALIGN, shift);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0.0));
            b.iter_mut().for_each(|x| *x = 1.0);
        }
        // (shift, why it is refused)
        for shift in [4, 2 << 20, 12] {
            assert!(matches!(
                AlignedBuffer::<f64>::zeroed_shifted(1, false, shift),
                Err(BufferError::BadShift { .. })
            ));
        }
        assert!(AlignedBuffer::<f32>::zeroed_shifted(1, false, 4).is_ok());
    }

    #[test]
    fn buffers_are_2mib_aligned_and_zeroed() {
        for len in [0, 1, 1000, 300_000] {
            let b = AlignedBuffer::<f64>::zeroed(len, false).unwrap();
            assert_eq!(b.address() % BUFFER_ALIGN, 0);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0.0));
            let f = AlignedBuffer::<f32>::zeroed(len, false).unwrap();
            assert_eq!(f.address() % BUFFER_ALIGN, 0);
            assert_eq!(f.len(), len);
            assert!(f.iter().all(|&x| x == 0.0));
        }
    }

    #[test]
    fn anon_huge_pages_are_parsed_from_smaps() {
        let text = "Rss:  100 kB\nAnonHugePages:   4096 kB\nShared_Hugetlb: 0 kB\n";
        assert_eq!(parse_anon_huge_pages(text), Some(4 << 20));
        assert_eq!(parse_anon_huge_pages("Rss: 1 kB\n"), None);
        #[cfg(target_os = "linux")]
        assert!(anon_huge_pages_bytes().is_ok());
    }

    #[test]
    fn absurd_sizes_are_errors_not_panics() {
        assert!(matches!(
            AlignedBuffer::<f64>::zeroed(usize::MAX / 2, false),
            Err(BufferError::TooLarge { .. })
        ));
    }
}
