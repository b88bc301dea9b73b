//! cargo-fuzz wrapper of the `segment` target (see mpsched_fuzz::Target::Segment).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpsched_fuzz::Target;

fuzz_target!(|data: &[u8]| {
    // A broken promise (multi-line error, violated invariant) is a crash, like a panic.
    if let Err(what) = Target::Segment.execute(data) {
        panic!("{what}");
    }
});
