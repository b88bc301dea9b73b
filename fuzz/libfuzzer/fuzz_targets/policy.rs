//! cargo-fuzz wrapper of the `policy` target (see mpsched_fuzz::Target::Policy).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpsched_fuzz::Target;

fuzz_target!(|data: &[u8]| {
    // A broken promise (multi-line error, violated invariant) is a crash, like a panic.
    if let Err(what) = Target::Policy.execute(data) {
        panic!("{what}");
    }
});
