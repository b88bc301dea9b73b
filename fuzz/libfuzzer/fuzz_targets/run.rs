//! cargo-fuzz wrapper of the `run` target (see mpsched_fuzz::Target::Run).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpsched_fuzz::Target;

fuzz_target!(|data: &[u8]| {
    // A broken promise (multi-line error, violated invariant) is a crash, like a panic.
    if let Err(what) = Target::Run.execute(data) {
        panic!("{what}");
    }
});
