//! cargo-fuzz wrapper of the `trace` target (see mpsched_fuzz::Target::Trace).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpsched_fuzz::Target;

fuzz_target!(|data: &[u8]| {
    // A broken promise (multi-line error, violated invariant) is a crash, like a panic.
    if let Err(what) = Target::Trace.execute(data) {
        panic!("{what}");
    }
});
