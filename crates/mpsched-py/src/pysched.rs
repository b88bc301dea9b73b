//! Schedulers written in Python: a [`Scheduler`] that asks a Python object for each decision,
//! registered by name in the transport's plug-in table (`SchedSpec::register_plugin`), so
//! scenarios, `compare` and `mpsched.run` use it like a built-in.
//!
//! The simulator runs with the GIL released; each decision takes it back (`Python::attach`),
//! builds the view (crate::view) and calls the object's `get_send(view)` or
//! `get_retrans(view)`. An exception cannot cross the `Scheduler` trait: the first one is kept
//! ([`take_error`] raises it after the run) and the scheduler answers as `minrtt-norp` from then
//! on, so the run ends normally.

use std::sync::{Arc, Mutex};

use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBool;

use mpsched_transport::sched::{SchedView, Scheduler, SubflowSet, Verdict};
use mpsched_transport::{Instant, SchedSpec};

use crate::view::PySchedView;

// Named `mpsched._core.SchedulerError` (not `_core....`) so that it pickles: a compare worker
// sends it back to the parent.
create_exception!(
    mpsched._core,
    SchedulerError,
    PyRuntimeError,
    "A Python scheduler failed during a run (its exception is the cause)."
);

/// The first failure of a Python scheduler since the last [`take_error`].
static PENDING: Mutex<Option<PyErr>> = Mutex::new(None);

/// Interned scheduler names (`Scheduler::name` is `&'static str`): one leak per distinct name.
static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());

fn intern(name: &str) -> &'static str {
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == name) {
        return n;
    }
    let n: &'static str = Box::leak(name.to_string().into_boxed_str());
    names.push(n);
    n
}

fn keep_error(py: Python<'_>, name: &str, what: &str, e: PyErr) {
    let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
    if pending.is_none() {
        let err = SchedulerError::new_err(format!("scheduler {name:?}: {what}: {}", one_line(py, &e)));
        err.set_cause(py, Some(e));
        *pending = Some(err);
    }
}

fn one_line(py: Python<'_>, e: &PyErr) -> String {
    let text = format!("{}: {}", e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default(), e.value(py));
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Raises the kept failure of a Python scheduler, if any (call after a run or a step).
pub fn take_error() -> PyResult<()> {
    match PENDING.lock().unwrap_or_else(|e| e.into_inner()).take() {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// Flags a Python scheduler declares at registration (the `Scheduler` trait's flag methods).
#[derive(Clone, Copy, Debug, Default)]
struct Flags {
    redundant: bool,
    opportunistic: bool,
    penalize_all: bool,
}

/// One connection's Python scheduler.
struct PyScheduler {
    name: &'static str,
    flags: Flags,
    /// The instance's methods; None after a failure.
    methods: Option<Methods>,
}

/// A Python scheduler's methods: `get_send`, and if it has them `get_retrans` (else
/// `get_send`), `seed` and `on_hol_event`.
struct Methods {
    get_send: Py<PyAny>,
    get_retrans: Option<Py<PyAny>>,
    seed: Option<Py<PyAny>>,
    on_hol_event: Option<Py<PyAny>>,
}

fn method(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Option<Py<PyAny>>> {
    match obj.getattr(name) {
        Ok(m) if m.is_callable() => Ok(Some(m.unbind())),
        Ok(m) if m.is_none() => Ok(None),
        Ok(_) => Err(PyValueError::new_err(format!("{name}: expected a method"))),
        Err(_) => Ok(None),
    }
}

impl PyScheduler {
    /// Calls `make()` and looks up the instance's methods.
    fn build(py: Python<'_>, name: &'static str, flags: Flags, make: &Py<PyAny>) -> Self {
        let methods = (|| -> PyResult<Methods> {
            let obj = make.call0(py)?.into_bound(py);
            let get_send = method(&obj, "get_send")?
                .ok_or_else(|| PyValueError::new_err("expected an object with a get_send(view) method"))?;
            Ok(Methods {
                get_send,
                get_retrans: method(&obj, "get_retrans")?,
                seed: method(&obj, "seed")?,
                on_hol_event: method(&obj, "on_hol_event")?,
            })
        })();
        let methods = methods.map_err(|e| keep_error(py, name, "creating it", e)).ok();
        PyScheduler { name, flags, methods }
    }

    fn ask(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet, retrans: bool) -> Verdict {
        let Some(m) = &self.methods else { return v.send_min_rtt(out) };
        let what = if retrans && m.get_retrans.is_some() { "get_retrans" } else { "get_send" };
        let f = if retrans { m.get_retrans.as_ref().unwrap_or(&m.get_send) } else { &m.get_send };
        let answer = Python::attach(|py| {
            let r = PySchedView::new(py, now, v).and_then(|view| f.call1(py, (view,))).and_then(|r| {
                let r = r.bind(py);
                if r.is_none() {
                    return Ok(None);
                }
                match r.extract::<usize>() {
                    Ok(i) if i < v.subflows.len() && !r.is_instance_of::<PyBool>() => Ok(Some(i)),
                    _ => Err(PyValueError::new_err(format!(
                        "returned {}, expected a subflow index below {} or None",
                        r.repr().map(|s| s.to_string()).unwrap_or_default(),
                        v.subflows.len()
                    ))),
                }
            });
            r.map_err(|e| keep_error(py, self.name, what, e))
        });
        match answer {
            Ok(Some(i)) => {
                out.insert(i);
                Verdict::Send
            }
            Ok(None) => Verdict::Wait,
            Err(()) => {
                self.methods = None;
                v.send_min_rtt(out)
            }
        }
    }
}

impl PyScheduler {
    /// Calls an optional method that answers nothing (`seed`, `on_hol_event`).
    fn notify<A>(&mut self, what: &str, pick: impl Fn(&Methods) -> Option<&Py<PyAny>>, args: A)
    where
        A: for<'py> pyo3::call::PyCallArgs<'py>,
    {
        let Some(f) = self.methods.as_ref().and_then(pick) else { return };
        let failed = Python::attach(|py| f.call1(py, args).map_err(|e| keep_error(py, self.name, what, e)).is_err());
        if failed {
            self.methods = None;
        }
    }
}

impl Scheduler for PyScheduler {
    fn name(&self) -> &'static str {
        self.name
    }
    fn get_send(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.ask(now, v, out, false)
    }
    fn get_retrans(&mut self, now: Instant, v: &SchedView, out: &mut SubflowSet) -> Verdict {
        self.ask(now, v, out, true)
    }
    fn redundant(&self) -> bool {
        self.flags.redundant
    }
    fn opportunistic_retransmission(&self) -> bool {
        self.flags.opportunistic
    }
    fn penalize_all_carriers(&self) -> bool {
        self.flags.penalize_all
    }
    fn on_hol_event(&mut self) {
        self.notify("on_hol_event", |m| m.on_hol_event.as_ref(), ());
    }
    fn seed(&mut self, seed: u64) {
        self.notify("seed", |m| m.seed.as_ref(), (seed,));
    }
}

/// Registers a Python scheduler as `name`: `make()` returns one scheduler object per connection,
/// with `get_send(view)` and optionally `get_retrans(view)`, `seed(seed)` and `on_hol_event()`.
/// A built-in's name
/// or alias raises ValueError.
#[pyfunction]
#[pyo3(signature = (name, make, redundant = false, opportunistic_retransmission = false, penalize_all_carriers = false))]
pub fn register_scheduler(
    name: &str,
    make: Py<PyAny>,
    redundant: bool,
    opportunistic_retransmission: bool,
    penalize_all_carriers: bool,
) -> PyResult<()> {
    let flags = Flags { redundant, opportunistic: opportunistic_retransmission, penalize_all: penalize_all_carriers };
    mpsched_transport::plugin::check_name(name).map_err(PyValueError::new_err)?;
    let label = intern(name);
    let make = Arc::new(make);
    let factory = move || -> Box<dyn Scheduler + Send + Sync> {
        Box::new(Python::attach(|py| PyScheduler::build(py, label, flags, &make)))
    };
    SchedSpec::register_plugin(name, Arc::new(factory)).map_err(PyValueError::new_err)
}

/// Removes the Python scheduler `name`; False if there was none.
#[pyfunction]
pub fn unregister_scheduler(name: &str) -> bool {
    SchedSpec::unregister_plugin(name)
}

/// The names of the registered plug-in schedulers, sorted.
#[pyfunction]
pub fn scheduler_plugins() -> Vec<String> {
    SchedSpec::plugin_names()
}
