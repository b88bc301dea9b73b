//! A global allocator that counts this thread's allocations (tests run on several threads), to
//! check that decisions allocate nothing. A test binary installs it with
//! `#[global_allocator] static GLOBAL: CountingAlloc = CountingAlloc;`.

/// Counts allocations per thread, then allocates from the system allocator.
pub struct CountingAlloc;

thread_local! {
    static ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Allocations made by this thread so far.
pub fn allocations() -> usize {
    ALLOCATIONS.with(|n| n.get())
}

unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATIONS.with(|n| n.set(n.get() + 1));
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}
