//! The network types of the policy runtime. A policy file's `"algorithm"` names one; adding a
//! type is one file (the type and its [`Network`] impl) plus one line in the `networks!` table
//! at the bottom (docs/extending.md, "Add a policy network type").

use mpsched_transport::observe::ActionKind;

use crate::checkpoint::Checkpoint;
use crate::drl_cc::DrlCcNet;
use crate::edar::EdarNet;
use crate::net::Net;
use crate::pdaa3c::Pdaa3cNet;
use crate::spec::Layout;
use crate::PolicyError;

/// What a network type says about its policies when their description does not: EdAR is a
/// mode policy over its own history that starts redundant.
#[derive(Clone, Copy, Debug, Default)]
pub struct Defaults {
    /// The action kind.
    pub action: Option<ActionKind>,
    /// Frames per observation.
    pub history: Option<usize>,
    /// Mode in force before the first decision.
    pub initial_mode: Option<u8>,
}

/// A trained network the runtime can run: built from a read policy file, then asked for one
/// action vector per decision without allocating.
pub trait Network: Sized + Clone + Send + Sync + 'static {
    /// Builds the network of `ck` (its `"algorithm"` is this type's), checking every tensor.
    fn from_checkpoint(ck: Checkpoint) -> Result<Self, PolicyError>;
    /// What policies of this type default to.
    fn defaults(&self) -> Defaults {
        Defaults::default()
    }
    /// Checks that the network can read observations of `layout` (one-line message without
    /// the file name).
    fn check_layout(&self, layout: &Layout) -> Result<(), String>;
    /// Whether the network reads observation index `k` (a policy deployed in a sender must
    /// not read what only the receiver or a model knows). Conservative: `true` when unsure.
    fn reads_input(&self, k: usize, layout: &Layout) -> bool;
    /// Length of the network's output for observations of `layout`, when fixed (checked
    /// against the action's length).
    fn output_len(&self, _layout: &Layout) -> Option<usize> {
        None
    }
    /// The action vector for one observation (`action.len()` = the action kind's length).
    fn act(&mut self, obs: &[f32], layout: &Layout, action: &mut [f32]);
}

impl Network for EdarNet {
    fn from_checkpoint(ck: Checkpoint) -> Result<Self, PolicyError> {
        EdarNet::from_checkpoint(ck)
    }
    fn defaults(&self) -> Defaults {
        // edar.txt §IV-B: redundant "at the beginning of a connection", one mode per interval.
        Defaults { action: Some(ActionKind::Mode), history: Some(self.history), initial_mode: Some(1) }
    }
    fn check_layout(&self, layout: &Layout) -> Result<(), String> {
        let Layout::Sched(layout) = layout else {
            return Err("an EdAR network schedules one connection: not a host policy (obs.env)".into());
        };
        if layout.history != self.history {
            return Err(format!(
                "the network reads {} intervals of history, the policy says {}",
                self.history, layout.history
            ));
        }
        Ok(())
    }
    fn reads_input(&self, k: usize, layout: &Layout) -> bool {
        match layout {
            Layout::Sched(l) => self.reads(k, l),
            Layout::Host(_) => true,
        }
    }
    fn act(&mut self, obs: &[f32], layout: &Layout, action: &mut [f32]) {
        if let Layout::Sched(l) = layout {
            action[0] = f32::from(EdarNet::act(self, obs, l.max_paths));
        }
    }
}

/// A boxed network: [`AnyNet`] holds each type boxed, one pointer wide.
impl<T: Network> Network for Box<T> {
    fn from_checkpoint(ck: Checkpoint) -> Result<Self, PolicyError> {
        T::from_checkpoint(ck).map(Box::new)
    }
    fn defaults(&self) -> Defaults {
        (**self).defaults()
    }
    fn check_layout(&self, layout: &Layout) -> Result<(), String> {
        (**self).check_layout(layout)
    }
    fn reads_input(&self, k: usize, layout: &Layout) -> bool {
        (**self).reads_input(k, layout)
    }
    fn output_len(&self, layout: &Layout) -> Option<usize> {
        (**self).output_len(layout)
    }
    fn act(&mut self, obs: &[f32], layout: &Layout, action: &mut [f32]) {
        (**self).act(obs, layout, action)
    }
}

impl Network for Net {
    fn from_checkpoint(ck: Checkpoint) -> Result<Self, PolicyError> {
        Net::from_checkpoint(ck)
    }
    fn check_layout(&self, layout: &Layout) -> Result<(), String> {
        if self.input_len() != layout.size() {
            let what = match layout {
                Layout::Sched(l) => format!("{} subflow slots and {} frames", l.max_paths, l.history),
                Layout::Host(l) => {
                    format!("{} flow slots of {} subflows and {} frames", l.max_flows, l.max_subflows, l.history)
                }
            };
            return Err(format!(
                "the network reads {} values, an observation of {what} has {}",
                self.input_len(),
                layout.size()
            ));
        }
        Ok(())
    }
    fn reads_input(&self, k: usize, _layout: &Layout) -> bool {
        self.reads_input(k)
    }
    fn output_len(&self, _layout: &Layout) -> Option<usize> {
        Some(self.output_len())
    }
    fn act(&mut self, obs: &[f32], _layout: &Layout, action: &mut [f32]) {
        let out = self.forward(obs);
        let n = action.len().min(out.len());
        action[..n].copy_from_slice(&out[..n]);
    }
}

/// Generates [`AnyNet`] (one variant per network type, static dispatch) and the lookup by the
/// policy file's `"algorithm"`.
macro_rules! networks {
    ($($(#[doc = $doc:literal])* $variant:ident($ty:ty) $name:literal;)+) => {
        /// Any network type of the runtime.
        #[derive(Clone)]
        pub enum AnyNet {
            $($(#[doc = $doc])* $variant($ty),)+
        }

        /// The registered network types' names (a policy file's `"algorithm"`).
        pub const NETWORK_TYPES: &[&str] = &[$($name),+];

        impl AnyNet {
            /// Builds the network a read policy file describes.
            pub fn from_checkpoint(ck: Checkpoint) -> Result<AnyNet, PolicyError> {
                ck.check_format()?;
                match ck.algorithm()? {
                    $($name => Ok(AnyNet::$variant(<$ty as Network>::from_checkpoint(ck)?)),)+
                    other => Err(PolicyError(format!(
                        "{}: algorithm: expected one of {:?}, got {other:?}", ck.desc_path.display(), NETWORK_TYPES
                    ))),
                }
            }
            /// See [`Network::defaults`].
            pub fn defaults(&self) -> Defaults {
                match self { $(AnyNet::$variant(n) => n.defaults(),)+ }
            }
            /// See [`Network::check_layout`].
            pub fn check_layout(&self, layout: &Layout) -> Result<(), String> {
                match self { $(AnyNet::$variant(n) => n.check_layout(layout),)+ }
            }
            /// See [`Network::reads_input`].
            pub fn reads_input(&self, k: usize, layout: &Layout) -> bool {
                match self { $(AnyNet::$variant(n) => Network::reads_input(n, k, layout),)+ }
            }
            /// See [`Network::output_len`].
            pub fn output_len(&self, layout: &Layout) -> Option<usize> {
                match self { $(AnyNet::$variant(n) => n.output_len(layout),)+ }
            }
            /// See [`Network::act`].
            #[inline]
            pub fn act(&mut self, obs: &[f32], layout: &Layout, action: &mut [f32]) {
                match self { $(AnyNet::$variant(n) => Network::act(n, obs, layout, action),)+ }
            }
        }
    };
}

networks! {
    /// EdAR's Q-network (edar.txt §IV-C): LSTMs over each subflow's series and across subflows.
    Edar(Box<EdarNet>) "edar";
    /// A generic stack of layers with an actor head (`mpsched.policies.export`, `export_sb3`).
    Net(Box<Net>) "net";
    /// DRL-CC's actor (drl-cc.txt §III-B/C): an LSTM over the host's flows, then the target flow.
    DrlCc(Box<DrlCcNet>) "drl_cc";
    /// PDAA3C's actor (pdaa3c.txt §2.2–2.3): subflows ranked by the quality Q, then a choice of rank.
    Pdaa3c(Box<Pdaa3cNet>) "pdaa3c";
}
