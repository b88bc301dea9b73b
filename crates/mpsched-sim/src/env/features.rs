//! The observation's feature layout: defined once, in the transport
//! ([`mpsched_transport::observe::features`]), so that an env's observations and a policy
//! deployed in a sender ([`mpsched_transport::observe::Recorder`]) share it.

pub use mpsched_transport::observe::features::*;
