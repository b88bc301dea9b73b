//! A panic of the simulator core never reaches Python as a `PanicException` (a BaseException
//! that `except Exception` misses) nor prints a backtrace: the entry points that read or run a
//! scenario catch it and raise [`ScenarioError`] with one line naming the source, the panic's
//! message and where it happened (a bug to report, triggered by that scenario).

use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

use pyo3::PyErr;

use crate::ScenarioError;

thread_local! {
    /// `file:line` of the last panic on this thread, recorded by the hook.
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs (once) a panic hook that records the location instead of printing: the message
/// travels in the raised error. `MPSCHED_PANIC_TRACE=1` keeps the default report as well.
pub(crate) fn install_hook() {
    HOOK.call_once(|| {
        let default = std::panic::take_hook();
        let trace = std::env::var_os("MPSCHED_PANIC_TRACE").is_some_and(|v| v == "1");
        std::panic::set_hook(Box::new(move |info| {
            let at = info.location().map(|l| format!("{}:{}", l.file(), l.line()));
            LOCATION.with(|c| *c.borrow_mut() = at);
            if trace {
                default(info);
            }
        }));
    });
}

/// Runs `f`; a panic becomes a one-line ScenarioError about `source`.
pub(crate) fn guard<T>(source: &str, f: impl FnOnce() -> Result<T, PyErr>) -> Result<T, PyErr> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let at = LOCATION.with(|c| c.borrow_mut().take()).map(|l| format!(" at {l}")).unwrap_or_default();
            let msg = msg.split_whitespace().collect::<Vec<_>>().join(" ");
            Err(ScenarioError::new_err(format!(
                "{source}: the simulator failed on this scenario (internal error{at}: {msg}; please report it)"
            )))
        }
    }
}

/// For tests: a panic inside [`guard`], as a core bug would raise.
#[pyo3::pyfunction]
#[pyo3(name = "_panic_for_test")]
pub(crate) fn panic_for_test(source: &str, message: &str) -> Result<(), PyErr> {
    guard(source, || panic!("{message}"))
}
