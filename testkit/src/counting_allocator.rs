//! The counting global allocator, the one place of `unsafe` code in the workspace: it
//! forwards every call to `System` unchanged, and counts allocations (and reallocations)
//! while counting is on, for the calling thread ([`on_this_thread`]) or for every thread
//! of the process ([`ProcessWide`]).
//!
//! A binary counts with it once it declares it as its global allocator, as `rtde-core`'s
//! `zero_alloc` test and the drivers benchmark do:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOCATOR: CountingAllocator = CountingAllocator;
//! ```
//!
//! Counting in a binary that did not declare it panics, rather than count nothing and let
//! a test of "no allocation" pass for the wrong reason.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

static PROCESS_COUNTING: AtomicBool = AtomicBool::new(false);
static PROCESS_ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static THREAD_COUNTING: Cell<bool> = const { Cell::new(false) };
    static THREAD_ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

/// Counts, then forwards to `System`.
#[derive(Debug)]
pub struct CountingAllocator;

impl CountingAllocator {
    fn count() {
        if PROCESS_COUNTING.load(Ordering::Relaxed) {
            PROCESS_ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        }
        // `try_with`: allocations during thread teardown are not ours to count.
        let _ = THREAD_COUNTING.try_with(|on| {
            if on.get() {
                let _ = THREAD_ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
            }
        });
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        Self::count();
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        Self::count();
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// Panics unless this binary's global allocator is a [`CountingAllocator`].
fn ensure_installed() {
    THREAD_ALLOCATIONS.with(|n| n.set(0));
    THREAD_COUNTING.with(|on| on.set(true));
    drop(std::hint::black_box(Box::new(0u64)));
    THREAD_COUNTING.with(|on| on.set(false));
    assert!(
        THREAD_ALLOCATIONS.with(Cell::get) > 0,
        "this binary counts nothing: declare `#[global_allocator] static ALLOCATOR: \
         CountingAllocator = CountingAllocator;`"
    );
}

/// The heap allocations `f` makes on this thread.
///
/// # Panics
/// When this binary's global allocator is not a [`CountingAllocator`].
pub fn on_this_thread<R>(f: impl FnOnce() -> R) -> (u64, R) {
    ensure_installed();
    THREAD_ALLOCATIONS.with(|n| n.set(0));
    THREAD_COUNTING.with(|on| on.set(true));
    let result = f();
    THREAD_COUNTING.with(|on| on.set(false));
    (THREAD_ALLOCATIONS.with(Cell::get), result)
}

/// Counting every thread's allocations, from [`ProcessWide::start`] to
/// [`ProcessWide::stop`]; one at a time.
#[derive(Debug)]
pub struct ProcessWide(());

impl ProcessWide {
    /// Starts counting.
    ///
    /// # Panics
    /// When this binary's global allocator is not a [`CountingAllocator`].
    #[must_use]
    pub fn start() -> Self {
        ensure_installed();
        PROCESS_ALLOCATIONS.store(0, Ordering::Relaxed);
        PROCESS_COUNTING.store(true, Ordering::Relaxed);
        ProcessWide(())
    }

    /// The allocations since `start`.
    pub fn stop(self) -> u64 {
        PROCESS_COUNTING.store(false, Ordering::Relaxed);
        PROCESS_ALLOCATIONS.load(Ordering::Relaxed)
    }
}
