//! cargo-fuzz wrapper of the `scenario` target (see mpsched_fuzz::Target::Scenario).
#![no_main]

use libfuzzer_sys::fuzz_target;
use mpsched_fuzz::Target;

fuzz_target!(|data: &[u8]| {
    // A broken promise (multi-line error, violated invariant) is a crash, like a panic.
    if let Err(what) = Target::Scenario.execute(data) {
        panic!("{what}");
    }
});
